// What `toolvfs run` and `toolvfs exec` share: finding and loading the tool
// configuration, reading --args and --answer, running one tool call with
// Ctrl+C turned into a cancel request, and printing the Outcome with the
// exit codes of SPEC.md §10. docs/cli.md is the reference for the behaviour.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/command.h"
#include "config/config.h"
#include "core/status.h"
#include "policy/audit.h"
#include "policy/inquirer.h"
#include "runtime/answers.h"
#include "runtime/builtin_runtime.h"
#include "runtime/mcp_runtime.h"
#include "runtime/tool_runtime.h"
#include "runtime/stdio_runtime.h"
#include "runtime/vfs_runtime.h"

namespace toolvfs {

// The directory of the project named by a --project URI ("fs:DIR" or a bare
// directory), or nullopt for stores that have none (memory:, null:, sqlite:). The
// URI must be one OpenProject() accepted.
std::optional<std::string> ProjectDirectory(std::string_view project_uri);

// The audit log the common options ask for: --audit PATH, else
// .toolvfs/audit.jsonl below the project directory (no link followed), or
// none (null) with --no-audit or a store without a directory. An error says
// how to put the log elsewhere or turn it off.
Result<std::unique_ptr<AuditSink>> OpenAuditSink(const CommonOptions& common);

// A loaded tool configuration and where it came from.
struct LoadedConfig {
  Config config;
  std::string path;       // as shown in messages ("toolvfs.toml", "/p/toolvfs.toml")
  std::string directory;  // absolute directory of the file: configured tools run there
};

// `--config FILE` if given, else toolvfs.toml in the project directory (the
// current directory for stores without one).
std::string ConfigPath(const CommonOptions& common);

// `status`, the failure to read the config file, with a hint when the
// file is the default one and missing: how to create or name one.
Status WithMissingConfigHint(const CommonOptions& common, const Status& status);

// Loads `--config FILE` if given, else toolvfs.toml in the project directory
// (the current directory for stores without one). Every error is one line
// that names the file; a missing default file also says how to provide one.
Result<LoadedConfig> LoadToolConfig(const CommonOptions& common);

// Prints the config's warnings on stderr ("toolvfs: warning: FILE:L:C: ..."),
// unless --log-level error.
void ReportConfigWarnings(const LoadedConfig& loaded, const CommonOptions& common);

// What a run needs besides the tool and the store, owned by the command for
// as long as the runtime uses it: the inquirer (--no-interaction), the audit
// sink (--audit, --no-audit), the host environment for ${VAR} and
// process.run, and where the config file lies in the project.
struct RunServices {
  std::unique_ptr<Inquirer> inquirer;  // null: uncovered requests are denied
  std::unique_ptr<AuditSink> audit;    // null: --no-audit
  // Shows vfs tools' own progress and log lines (tool_report_display.h).
  std::unique_ptr<ToolReportSink> reports;
  std::map<std::string, std::string> environment;
  std::optional<std::string> config_project_path;
  SandboxMode sandbox_mode = SandboxMode::kRequire;  // --sandbox
  // TOOLVFS_TEST_HIDE_SANDBOX=landlock,seccomp (a test seam, docs/sandbox.md).
  std::vector<std::string> sandbox_hidden_for_testing;

  // The sandbox settings every runtime that starts processes shares.
  ConfinementOptions Confinement() const;
  // Points `options` at the services (which must outlive the runtime).
  void ConfigureRuntime(VfsRuntimeOptions& options) const;
  // The sandbox settings for a stdio runtime (it asks nobody and audits
  // nothing: its tool touches only what the sandbox lets it).
  void ConfigureRuntime(StdioRuntimeOptions& options) const;
  // The policy services of a builtin runtime (in process: no sandbox).
  void ConfigureRuntime(BuiltinRuntimeOptions& options) const;
  // The sandbox settings and the environment of MCP servers.
  void ConfigureRuntime(McpRuntimeOptions& options) const;
};

// The sandbox mechanisms TOOLVFS_TEST_HIDE_SANDBOX (comma-separated) hides,
// for tests (docs/sandbox.md): what runs, `doctor` and `check` treat as
// missing.
std::vector<std::string> HiddenSandboxMechanismsForTesting();

// The terminal inquirer when a terminal is there and --no-interaction is not
// given; the audit log at --audit PATH or .toolvfs/audit.jsonl in the
// project directory (none for stores without a directory unless --audit,
// none with --no-audit);
// `config_path`: the config file in use, if any. Fails with a one-line
// error when the audit log cannot be opened.
Result<RunServices> PrepareRunServices(const CommonOptions& common,
                                       std::optional<std::string> config_path);

// The project path of the config file `config_path` when it lies inside the
// project directory of --project (a sensitive path for every tool).
std::optional<std::string> ConfigPathInProject(const CommonOptions& common, const std::string& config_path);

// The help of --answer, for run and exec alike.
inline constexpr const char* kAnswerOptionHelp =
    "Answer the tool's question ID with VALUE (repeatable; typed by the question: true/false/yes/no, text, or "
    "one of its options)";

// The value of --args: inline JSON, "@FILE" (read the file) or "@-" (read
// standard input). Returns the object as compact JSON text ("{}" for an
// empty value). InvalidArgument, naming where the text came from, for text
// that is not JSON or not a JSON object; the read error for an unreadable
// file.
Result<std::string> ReadArgumentsJson(std::string_view value);

// A run that ends without an outcome of the tool (an unknown tool,
// arguments that do not fit its parameters, a tool that cannot start), as
// a harness needs it: `kind` is machine-readable, one of the error kinds
// docs/cli.md lists ("unknown_tool", "unknown_argument", ...).
struct InvocationError {
  std::string kind;
  std::string message;                    // one line, as on stderr
  std::string argument;                   // the argument concerned (dotted path), or empty
  std::vector<std::string> did_you_mean;  // close names (unknown_tool, unknown_argument)
};

// Reports `error` as "toolvfs: WHAT: MESSAGE" on stderr and, when `json`,
// as {"status":"error","content":[],"error":{"kind","message",...}} on
// stdout. Returns `exit_code`.
int ReportInvocationError(bool json, int exit_code, std::string_view what, const InvocationError& error);

// The names among `candidates` within two edits of `name` (and closer than
// their length), closest first, at most three.
std::vector<std::string> ClosestNames(std::string_view name, const std::vector<std::string>& candidates);

// How run and exec answer the tool's questions, print and exit.
struct InvocationOutput {
  bool json = false;  // --json: one object on stdout
  // --answer ID=VALUE by question id (ParseAnswerFlags, runtime/answers.h),
  // typed by the question's answer_type when it is asked.
  std::map<std::string, std::string, std::less<>> answers;
  // Questions no --answer or questions.ID.answer answers are asked on the
  // terminal: true unless --no-interaction (and only when there is one).
  bool interactive = false;
  // Receives the run's start and end records (kRunStartMethod,
  // kRunEndMethod); null: none (--no-audit). Not owned.
  AuditSink* audit = nullptr;
  RuntimeKind runtime = RuntimeKind::kVfs;  // named in the start record
};

// Runs `call` of `tool` on `runtime` with SIGINT and SIGTERM turned into a
// cancel request for the duration of the run (a second signal only cancels
// again; the previous handlers are restored afterwards), prints the outcome
// and returns the exit code (SPEC.md §10): 0 completed, 1 the tool reported
// an error or failed, 2 the tool could not be started or an answer does not
// fit its question, 3 a question nobody answered, 124 timeout, 130
// cancelled. The arguments are checked against the tool's parameters (a
// builtin's own) before the tool starts; with output.json, every end,
// these failures included, is one JSON object on stdout whose `error`
// has a `kind` (docs/cli.md).
//
// Questions go through one answering chain for every runtime (SPEC.md
// §4.6): output.answers, then tool.question_answers, then the terminal. A
// needs_input outcome runs the tool again with the typed answer added to
// call.answers_json (at most kMaxAnswerRounds times); a `stateful = true`
// tool is started with runtime.Start and gets each answer as `apply
// {input}` while it stays alive. An unanswered question ends the run (the
// tool is aborted) with exit 3 and the question listed on stderr.
int InvokeTool(ToolRuntime& runtime, const ToolCall& call, const ToolConfig& tool,
               const InvocationOutput& output);

// InvokeTool with `runtime` working on `project`: on a session workspace, a
// tool that may change it past the session layer runs through
// SessionQuotaRuntime, so the session's quota is counted after the run
// (docs/sessions.md, "Quota").
int InvokeToolOnProject(ToolRuntime& runtime, ProjectFiles& project, const ToolCall& call, const ToolConfig& tool,
                        const InvocationOutput& output);

}  // namespace toolvfs
