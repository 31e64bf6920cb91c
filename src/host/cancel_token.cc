#include "host/cancel_token.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cstdint>

namespace toolvfs {

CancelToken::CancelToken() : event_fd_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}

void CancelToken::Cancel() noexcept {
  cancelled_.store(true, std::memory_order_release);
  if (event_fd_.get() >= 0) {
    const uint64_t one = 1;
    // Only write(2): async-signal-safe. A full counter (EAGAIN) still leaves
    // the fd readable, which is all a poller needs.
    [[maybe_unused]] ssize_t written = write(event_fd_.get(), &one, sizeof one);
  }
}

void CancelToken::RequestKill() noexcept {
  kill_requested_.store(true, std::memory_order_release);
  Cancel();
}

}  // namespace toolvfs
