// The interface every tool runtime implements (SPEC.md §6.1): vfs (this
// issue), stdio, builtin and mcp (later issues). A runtime holds its own
// dependencies (project store, policy, ...) from construction and turns one
// tool call into an Outcome.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
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
  // An embedded resource holding bytes: {"type":"resource","resource":
  // {"uri","mimeType","blob"}} with `base64` as the blob; `text` is the
  // line people read in its place.
  static ContentBlock Blob(std::string_view uri, std::string_view mime_type, std::string_view base64,
                           std::string text);
};

// The `error` notification of a tool (RFD 009 ToolError), or an error of the
// run itself (timeout, crash, protocol) in the same shape.
struct ToolError {
  std::string message;
  std::vector<std::string> trace;
  bool transient = false;
};

// How a question wants to be answered (RFD 009 AnswerType).
enum class AnswerType { kBoolean, kText, kSelect };

// A question the tool asks (SPEC.md §4.6), as ParseQuestion (answers.h)
// read it; `json` is the question as the tool sent it (compact).
struct ToolQuestion {
  std::string id;
  std::string text;
  AnswerType answer_type = AnswerType::kText;
  std::vector<std::string> options;    // kSelect: the choices, at least one
  std::optional<std::string> default_answer;  // `default`, as text ("true" for a boolean)
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
  // Requests of the run the policy refused (vfs and builtin runtimes; a
  // stdio tool meets its denials in the kernel, unseen). An error outcome
  // with denials is reported as a policy denial (docs/cli.md, error.kind).
  uint64_t denied_requests = 0;
};

class StatefulRun;

class ToolRuntime {
 public:
  virtual ~ToolRuntime() = default;

  // Runs `call` of `tool`. Returns an error Status only when the run could
  // not start (bad config, the program cannot be started); everything that
  // happens once the tool runs is an Outcome. Cancelling `cancel` ends the
  // run as SPEC.md §4.4 says (cancel, grace, SIGTERM, SIGKILL).
  virtual Result<Outcome> Execute(const ToolCall& call, const ToolConfig& tool,
                                  CancelToken& cancel) = 0;

  // Starts `call` of a `stateful = true` tool and returns the handle of the
  // live run (stateful_tool.h): the caller fetches its state, applies input
  // and aborts it. `cancel` works as for Execute and must outlive the run.
  // Runtimes without stateful tools (all but vfs) return InvalidArgument.
  virtual Result<std::unique_ptr<StatefulRun>> Start(const ToolCall& call, const ToolConfig& tool,
                                                     CancelToken& cancel);

  // The parameters (name -> schema, as a config's `parameters`) that
  // Execute checks a call of `tool` against, for front ends that check
  // first to tell mistakes apart. Default: the tool's configured ones.
  virtual const ConfigValue::Object& Parameters(const ToolConfig& tool) const { return tool.parameters; }
};

}  // namespace toolvfs
