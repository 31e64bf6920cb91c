// A cancellation request shared between whoever wants a tool run to stop
// (Ctrl+C in the CLI, an embedder, a session ending) and the run itself.
//
// Cancel() is async-signal-safe: it sets an atomic flag and writes to an
// eventfd, so a SIGINT handler may call it, and a poll loop can wait on
// fd() together with the tool's pipes. The eventfd is made by the first
// fd() call, not with the token: most tokens (one per MCP call, most of
// them a read) are only ever checked through the flag, and two syscalls
// per token were a measurable part of a call (bench/mcp_bench). Once
// cancelled, a token stays cancelled. Thread-safe.
#pragma once

#include <atomic>

#include "core/status.h"

namespace toolvfs {

class CancelToken {
 public:
  CancelToken() = default;
  ~CancelToken();
  CancelToken(const CancelToken&) = delete;
  CancelToken& operator=(const CancelToken&) = delete;

  void Cancel() noexcept;
  bool cancelled() const noexcept { return cancelled_.load(std::memory_order_acquire); }

  // Cancels, and asks for the tool to be stopped at once (SIGKILL) instead
  // of after its grace period: the user's second Ctrl+C. Async-signal-safe
  // like Cancel; the eventfd is written again, so an edge-triggered poller
  // wakes once more.
  void RequestKill() noexcept;
  bool kill_requested() const noexcept { return kill_requested_.load(std::memory_order_acquire); }
  // The flag itself, for code that polls one (RequestScope::set_cancel_flag).
  const std::atomic<bool>& flag() const noexcept { return cancelled_; }

  // Readable (EPOLLIN) once Cancel() was called, also when that was before
  // this first call made it. Never read from it: it stays readable so
  // every poller sees it. -1 when it cannot be made (the process is out of
  // fds); the token then still works through the flag (pollers see no
  // event). Not async-signal-safe.
  int fd() const noexcept;

 private:
  std::atomic<bool> cancelled_{false};
  std::atomic<bool> kill_requested_{false};
  mutable std::atomic<int> event_fd_{-1};
};

}  // namespace toolvfs
