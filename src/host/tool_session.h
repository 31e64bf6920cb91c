// The host side of one vfs tool run (SPEC.md §4): an epoll loop over the
// tool's stdin, stdout and stderr pipes, its pidfd, the cancel token and the
// workers' completion eventfd.
//
// What the loop guarantees:
// - It never blocks on the tool. All pipes are non-blocking; answers wait
//   in a queue until the tool's stdin has room. A tool that stops reading
//   its stdin cannot stall the host: once the queue holds more than two
//   maximal answers (at least 64 MiB) the loop stops reading the tool's
//   stdout (the tool then blocks on its own write) and the idle timeout
//   ends the run.
// - Requests are served in arrival order, answered in any order: inline
//   methods on the loop thread, `may_block` ones (grep) on worker threads,
//   so a slow grep never holds up a small read.
// - Every line gets the answer SPEC.md §4.1 prescribes; three protocol
//   errors in a row (lines that are not a JSON-RPC 2.0 object) stop the
//   tool. Blank lines neither count nor reset the count. A line over the
//   message limit is one protocol error however long it is: its rest is
//   read and dropped (memory stays bounded), and a line that never ends
//   is stopped by the idle timeout, since its bytes are no line.
// - An answer longer than the answer limit (AnswerLimitBytes, larger than
//   the message limit so that every fs.read within the limits fits) is
//   replaced by a -32602 error naming the limit.
// - Every request answered gets exactly one audit record, written at one
//   place (AnswerRequest) whatever answered it: a handler, the loop itself
//   (unknown method, id in use), or a cancel (recorded when its worker is
//   done).
// - When it returns, the tool's process group has been killed and reaped
//   and no worker is running.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "host/cancel_token.h"
#include "host/methods.h"
#include "host/tool_reports.h"
#include "policy/audit.h"
#include "protocol/jsonrpc.h"
#include "sandbox/launcher.h"

namespace toolvfs {

inline constexpr size_t kStderrTailBytes = size_t{64} << 10;

// How SessionResult::message quotes the last line of the tool's stderr
// ("...without sending a result; stderr ends with: ValueError: x"), so a
// front end that prints the whole tail can drop the repeat.
inline constexpr std::string_view kStderrEndsWith = "; stderr ends with: ";

// How many bytes of the first stdout line that is not protocol JSON the
// end message quotes: enough to recognise a stray print().
inline constexpr size_t kQuotedStrayOutputBytes = 80;

struct SessionLimits {
  std::chrono::milliseconds total_timeout{600'000};
  std::chrono::milliseconds idle_timeout{60'000};  // no line from the tool
  std::chrono::milliseconds cancel_grace{5'000};   // cancel → SIGTERM → SIGKILL
  // The longest line the tool may send (max_message_mb). The host's answers
  // have their own, larger limit derived from it: AnswerLimitBytes.
  size_t max_message_bytes = size_t{10} << 20;
};

// Bytes of an answer besides its content and what it echoes from the
// request: `{"jsonrpc":"2.0","id":…,"result":{"content":"…","size":…,
// "encoding":"base64"}}` is under 100 of them.
inline constexpr size_t kAnswerEnvelopeBytes = size_t{4} << 10;

// The longest answer line the host sends to a tool whose requests are
// limited to `max_message_bytes`. An fs.read returns at most
// max_message_bytes bytes (MethodContext::max_read_bytes), and its answer
// must fit whatever those bytes are: text of control characters escapes to
// six bytes per byte (\u0001), base64 needs four per three. The id is
// echoed as the request spelled it, so it is shorter than one request.
// Hence six message limits for the content, one for the id, and the
// envelope: 70 MiB + 4 KiB for the default 10 MiB. fs.grep stops its
// answer there (MethodContext::max_answer_bytes); any other larger answer
// is refused with an error naming this limit.
constexpr size_t AnswerLimitBytes(size_t max_message_bytes) {
  return 7 * max_message_bytes + kAnswerEnvelopeBytes;
}

// Reaches a running session from other threads (stateful tools, SPEC.md
// §4.6): host notifications for the tool (`apply`) and the request to stop.
// Thread-safe; the session wakes up on fd().
class SessionControl {
 public:
  SessionControl();
  SessionControl(const SessionControl&) = delete;
  SessionControl& operator=(const SessionControl&) = delete;

  // Queues one serialized notification line for the tool's stdin.
  void Send(std::string line);
  // Ends the run like cancellation: `cancel`, the grace, SIGTERM, SIGKILL.
  void Abort();

  // For the session loop.
  int fd() const { return event_.get(); }
  std::vector<std::string> TakeLines();
  bool abort_requested() const { return abort_.load(); }

 private:
  void Wake();
  std::mutex mutex_;
  std::vector<std::string> lines_;
  std::atomic<bool> abort_{false};
  UniqueFd event_;
};

struct SessionSetup {
  std::string tool_name;  // for messages and audit records
  WireMessage init;       // sent first (BuildInitNotification)
  SessionLimits limits;
  unsigned worker_threads = 4;
  // Receives exactly one record per request the session answers, refused
  // ones included (SPEC.md §3.4, request_audit.h); null: no audit. Not
  // owned.
  AuditSink* audit = nullptr;
  std::string call_id;  // the run, in audit records
  // Stateful tools: called on the loop thread with the params of every
  // well-formed `state` notification ({type: running|waiting|stopped, ...},
  // compact JSON). `stopped` is then final like `result` (its `result`, or
  // else its `content`, becomes the result's content), and while the last
  // state is `waiting` the idle timeout does not run (the tool waits for
  // the caller). Empty: `state` is ignored (one-shot tools).
  std::function<void(const std::string& params_json)> on_state;
  // Stateful tools: apply and abort from other threads; null: none.
  SessionControl* control = nullptr;
  // Receives the tool's own `progress` and `log` notifications, checked
  // and bounded by `report_limits` (tool_reports.h), on the loop thread;
  // null: they are checked and dropped. Not owned.
  ToolReportSink* reports = nullptr;
  ToolReportLimits report_limits;
};

struct SessionResult {
  enum class End {
    kResult,          // the tool sent `result`; final_params_json holds its params
    kToolError,       // the tool sent `error`; final_params_json holds its params
    kExited,          // exited (or closed stdout) without a final notification
    kSignaled,        // killed by a signal before a final notification
    kIdleTimeout,     // silent for limits.idle_timeout
    kTotalTimeout,    // ran longer than limits.total_timeout
    kCancelled,       // the cancel token fired
    kProtocolErrors,  // three protocol errors in a row
    kHostError,       // the loop itself failed (epoll, reading a pipe)
  };
  End end = End::kHostError;
  std::string final_params_json;  // kResult, kToolError: compact JSON object
  // How the tool process ended, when it was reaped (always, except kHostError
  // where reaping itself may have failed).
  std::optional<ExitStatus> exit_status;
  std::string stderr_tail;  // last kStderrTailBytes of stderr, valid UTF-8
  // A one-line description of the end for anything but kResult/kToolError,
  // e.g. "Tool 'lint' exited with status 3 without sending a result".
  std::string message;
  uint64_t requests = 0;         // requests received
  uint64_t protocol_errors = 0;  // protocol errors, in total
  uint64_t denied_requests = 0;  // requests answered "access denied" (-32001)
};

// Runs the session with `child` (just launched, pipes still open) until the
// tool ends. Sends setup.init first. Never throws.
SessionResult RunToolSession(ChildProcess& child, const SessionSetup& setup,
                             const MethodContext& context, CancelToken& cancel);

}  // namespace toolvfs
