// The builtin runtime (SPEC.md §6.4, docs/runtimes.md): tools that run in
// the host process and act on the ProjectFiles store under the calling
// tool's policy, inquiry and audit, like a vfs tool's requests do. No
// process, no sandbox: the policy is the only boundary, so every file a
// builtin touches goes through the same decision point (AccessGate).
//
// One core: each builtin is one fs.* request (host/methods.h) built from
// its checked arguments and served by the vfs host's own handler, so
// policy decisions, sensitive paths, the walks below a deleted or moved
// directory and grep's per-file filter are the protocol's, not a copy.
// Each request gets one audit record, refused ones included, as in a vfs
// session (request_audit.h).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config_value.h"
#include "policy/audit.h"
#include "policy/file_policy.h"
#include "policy/inquirer.h"
#include "policy/tool_policy.h"
#include "project/project_files.h"
#include "runtime/tool_runtime.h"

namespace toolvfs {

// One builtin tool as it is listed and validated: the schema is declared
// once and used for both (ValidateArguments, `toolvfs tools`, MCP).
struct BuiltinToolInfo {
  std::string name;
  std::string description;
  ConfigValue::Object parameters;  // name -> schema, as a config's `parameters`
  std::string method;              // the fs.* method that does the work; snapshot.* for the snapshot tools
};

// Every builtin tool, sorted by name.
const std::vector<BuiltinToolInfo>& BuiltinTools();

// The builtin named `name`, or null.
const BuiltinToolInfo* FindBuiltinTool(std::string_view name);

struct BuiltinRuntimeOptions {
  // Asked about requests the policy does not cover, on the caller's thread;
  // null: such requests are denied (non-interactive). Not owned.
  Inquirer* inquirer = nullptr;
  // Receives one audit record per decided file access; null: none. Not owned.
  AuditSink* audit = nullptr;
  // The project path of the toolvfs.toml in use (a sensitive path).
  std::optional<std::string> config_project_path;
  // The session the calls are meant for (`run --session ID`): on a session
  // workspace a call for another session is refused and changes nothing;
  // on any other project a session id is an error. Absent: no check.
  std::optional<std::string> session_id;
  // The project is a session workspace (SessionWorkspace::IsSession, asked
  // once by whoever opens the project): list_directory, read_file,
  // write_file and delete_file run the session suite. Decided by the
  // caller, not per call, so a generic builtin costs no extra store call.
  bool session_workspace = false;
  // The policy of a tool built once by the caller, with
  // config_project_path (PrebuiltToolPolicy); otherwise each call builds it.
  PrebuiltToolPolicy prebuilt_policy;
};

class BuiltinRuntime final : public ToolRuntime {
 public:
  // `project` must outlive the runtime.
  BuiltinRuntime(ProjectFiles& project, BuiltinRuntimeOptions options);

  // Runs the builtin named by the tool's config name under the tool's
  // policy (ToolPolicy::ForTool), on the caller's thread. An unknown
  // builtin fails to start (InvalidArgument naming the known ones); so do
  // arguments that do not fit the builtin's schema. Everything after that
  // is an Outcome: a denied, missing or unreadable path is is_error with
  // the host's one-line message. Content (docs/runtimes.md): read_file a
  // text block with the file's text, or a resource block with a `blob`
  // (base64) for content that is not UTF-8; write_file, delete_file and
  // move_file a one-line text; list_directory, file_info and grep_files
  // the JSON result of fs.list_dir, fs.metadata and fs.grep as text.
  // Cancelling `cancel` ends a question on the screen and stops a grep
  // between files; the outcome is then kCancelled.
  //
  // On a session workspace (docs/sessions.md) list_directory, read_file,
  // write_file and delete_file are the session tools instead: the session
  // suite's schemas and rules (session/session_tools.h), the same policy
  // decision on the path, and one audit record per call (method
  // "session.<tool>", ":<mode>" for writes; target the path; bytes_out the
  // result's size). Their content is the session tool's JSON result.
  Result<Outcome> Execute(const ToolCall& call, const ToolConfig& tool, CancelToken& cancel) override;

  // The builtin's own schema: the session tool's on a session workspace
  // (options.session_workspace), else the generic builtin's.
  const ConfigValue::Object& Parameters(const ToolConfig& tool) const override;

 private:
  // What a call judged by ExecuteJudged is about.
  struct JudgedCall {
    std::string method;      // the audit record's method
    std::string path;        // judged for `access`; "" = the project root
    FileAccess access = FileAccess::kRead;
    // Whether the paths handed to the WriteCheck get their own decision
    // when the policy is silent on them (asked about, or denied under
    // --no-interaction), rather than going with the call's.
    bool writes_need_own_decision = false;
  };
  // Judges paths a call is about to write besides its own: a denial of any
  // one is the error (naming it); an uncovered one goes with the call's own
  // decision, as for fs.delete below a directory, unless
  // writes_need_own_decision: then the uncovered ones are put to the user
  // in one question (AccessGate::AuthorizeAll).
  using WriteCheck = std::function<Status(const std::vector<std::string>& paths)>;

  Result<Outcome> ExecuteSessionTool(const ToolCall& call, const ToolConfig& tool, CancelToken& cancel);
  Result<Outcome> ExecuteSnapshotTool(const ToolCall& call, const ToolConfig& tool, CancelToken& cancel);
  // One call of a tool that is not one fs.* request: `judge` fills in what
  // the call touches (its error is the outcome), the policy judges it
  // through the gate (questions included), then `act` runs, given a
  // WriteCheck for the paths it is about to write; one audit record either
  // way.
  Result<Outcome> ExecuteJudged(const ToolCall& call, const ToolConfig& tool, CancelToken& cancel,
                                const std::string& scope_method, const std::function<Status(JudgedCall&)>& judge,
                                const std::function<Result<std::string>(const WriteCheck&)>& act);

  ProjectFiles& project_;
  BuiltinRuntimeOptions options_;
};

}  // namespace toolvfs
