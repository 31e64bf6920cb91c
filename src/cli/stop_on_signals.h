// Ending a long-running server (`toolvfs mcp`, over stdio or HTTP) on
// SIGINT or SIGTERM the way its clients end it: the running calls get
// their grace, tool processes are cancelled, workspaces and audit logs are
// closed, and the exit code is 0. The default action (death by the
// signal, exit 143) would skip all of that: a materialized copy's
// sync-back, a session workspace's removal.
#pragma once

#include <signal.h>

#include <atomic>
#include <functional>
#include <thread>

namespace toolvfs {

// For its lifetime SIGINT and SIGTERM are taken by a thread of its own,
// which calls `stop` once, at the first of them; and SIGPIPE is ignored
// (a client that hangs up must be a failed write, not the end of the
// server). Construct it before the server starts any thread: the signals
// are blocked in the constructing thread, and only threads started after
// that inherit the mask; a thread started before would take the signal's
// default action. Restores the mask and SIGPIPE's action when destroyed.
class StopOnSignals {
 public:
  explicit StopOnSignals(std::function<void()> stop);
  ~StopOnSignals();
  StopOnSignals(const StopOnSignals&) = delete;
  StopOnSignals& operator=(const StopOnSignals&) = delete;

 private:
  sigset_t signals_{};
  sigset_t previous_mask_{};
  struct sigaction previous_pipe_ {};
  std::atomic<bool> done_{false};
  std::thread waiter_;
};

}  // namespace toolvfs
