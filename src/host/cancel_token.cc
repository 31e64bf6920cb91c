#include "host/cancel_token.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cstdint>

namespace toolvfs {

namespace {

void Signal(int fd) noexcept {
  const uint64_t one = 1;
  // Only write(2): async-signal-safe. A full counter (EAGAIN) still leaves
  // the fd readable, which is all a poller needs.
  [[maybe_unused]] ssize_t written = write(fd, &one, sizeof one);
}

}  // namespace

CancelToken::~CancelToken() {
  if (const int fd = event_fd_.load(); fd >= 0) close(fd);
}

int CancelToken::fd() const noexcept {
  if (const int fd = event_fd_.load(); fd >= 0) return fd;
  const int made = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (made < 0) return -1;
  int expected = -1;
  if (!event_fd_.compare_exchange_strong(expected, made)) {
    close(made);  // another thread made one first
    return expected;
  }
  // Cancel stores the flag, then looks for the fd; here the fd is stored,
  // then the flag looked at (both sequentially consistent): a Cancel that
  // found no fd is seen here, so the fd is readable either way.
  if (cancelled_.load()) Signal(made);
  return made;
}

void CancelToken::Cancel() noexcept {
  cancelled_.store(true);
  if (const int fd = event_fd_.load(); fd >= 0) Signal(fd);
}

void CancelToken::RequestKill() noexcept {
  kill_requested_.store(true, std::memory_order_release);
  Cancel();
}

}  // namespace toolvfs
