// The interface every tool runtime implements (SPEC.md §6.1): vfs (this
// issue), stdio, builtin and mcp (later issues). A runtime holds its own
// dependencies (project store, policy, ...) from construction and turns one
// tool call into an Outcome.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "core/status.h"
#include "host/cancel_token.h"

namespace toolvfs {

// One call of a configured tool. JSON members are compact JSON text of an
// object ("{}" when empty), passed to the tool as they are.
struct ToolCall {
  std::string name;
  // Identifies the run in audit records; empty: the runtime makes one up
  // (NewCallId).
  std::string id;
  std::string arguments_json = "{}";
  std::string answers_json = "{}";  // question id -> typed answer (SPEC.md §4.6)
};

// "c-<unix ms>-<8 hex digits>": unique enough to tell runs apart in one
// audit log, sortable by start time.
std::string NewCallId();

// One typed content block of a result (RFD 058): `text` or `resource`.
// `json` is the block as the tool sent it (compact), for --json output and
// for front ends that pass blocks on; `text` is what a person reads: the
// text of a text block, a resource's text, or "[resource URI]".
struct ContentBlock {
  std::string type;  // "text" | "resource"
  std::string text;
  std::string json;

  static ContentBlock Text(std::string text);
};

// The `error` notification of a tool (RFD 009 ToolError), or an error of the
// run itself (timeout, crash, protocol) in the same shape.
struct ToolError {
  std::string message;
  std::vector<std::string> trace;
  bool transient = false;
};

// A question the tool asks (SPEC.md §4.6); the raw JSON of the question.
struct ToolQuestion {
  std::string id;
  std::string text;
  std::string json;
};

struct Outcome {
  enum class Kind {
    kCompleted,   // the tool finished: content, and is_error if it failed
    kNeedsInput,  // the tool asks `question`
    kCancelled,   // the run was cancelled before the tool finished
  };
  Kind kind = Kind::kCompleted;
  std::vector<ContentBlock> content;
  bool is_error = false;
  // Set when is_error: the tool's own error, or why the run failed.
  std::optional<ToolError> error;
  // Why the run ended abnormally, for exit codes: kOk when the tool sent its
  // final notification; kTimeout (idle or total timeout); kCancelled;
  // kInternal for a crash, an exit without result, or a protocol breach.
  StatusCode failure = StatusCode::kOk;
  std::optional<ToolQuestion> question;
  // The last 64 KiB of the tool's stderr (valid UTF-8), for diagnostics.
  std::string stderr_tail;
};

class ToolRuntime {
 public:
  virtual ~ToolRuntime() = default;

  // Runs `call` of `tool`. Returns an error Status only when the run could
  // not start (bad config, the program cannot be started); everything that
  // happens once the tool runs is an Outcome. Cancelling `cancel` ends the
  // run as SPEC.md §4.4 says (cancel, grace, SIGTERM, SIGKILL).
  virtual Result<Outcome> Execute(const ToolCall& call, const ToolConfig& tool,
                                  CancelToken& cancel) = 0;
};

}  // namespace toolvfs
