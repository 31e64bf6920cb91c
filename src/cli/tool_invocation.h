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
#include "runtime/builtin_runtime.h"
#include "runtime/tool_runtime.h"
#include "runtime/stdio_runtime.h"
#include "runtime/vfs_runtime.h"

namespace toolvfs {

// The directory of the project named by a --project URI ("fs:DIR" or a bare
// directory), or nullopt for stores that have none (memory:, null:). The
// URI must be one OpenProject() accepted.
std::optional<std::string> ProjectDirectory(std::string_view project_uri);

// A loaded tool configuration and where it came from.
struct LoadedConfig {
  Config config;
  std::string path;       // as shown in messages ("toolvfs.toml", "/p/toolvfs.toml")
  std::string directory;  // absolute directory of the file: configured tools run there
};

// `--config FILE` if given, else toolvfs.toml in the project directory (the
// current directory for stores without one).
std::string ConfigPath(const CommonOptions& common);

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
  std::map<std::string, std::string> environment;
  std::optional<std::string> config_project_path;
  SandboxMode sandbox_mode = SandboxMode::kRequire;  // --sandbox
  // TOOLVFS_TEST_HIDE_SANDBOX=landlock,seccomp (a test seam, docs/sandbox.md).
  std::vector<std::string> sandbox_hidden_for_testing;

  // Points `options` at the services (which must outlive the runtime).
  void ConfigureRuntime(VfsRuntimeOptions& options) const;
  // The sandbox settings for a stdio runtime (it asks nobody and audits
  // nothing: its tool touches only what the sandbox lets it).
  void ConfigureRuntime(StdioRuntimeOptions& options) const;
  // The policy services of a builtin runtime (in process: no sandbox).
  void ConfigureRuntime(BuiltinRuntimeOptions& options) const;
};

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

// The value of --args: inline JSON, "@FILE" (read the file) or "@-" (read
// standard input). Returns the object as compact JSON text ("{}" for an
// empty value). InvalidArgument, naming where the text came from, for text
// that is not JSON or not a JSON object; the read error for an unreadable
// file.
Result<std::string> ReadArgumentsJson(std::string_view value);

// --answer ID=VALUE entries as a JSON object of strings, {"ID":"VALUE",...}.
// InvalidArgument for an entry without '=', an empty ID, or an ID given
// twice.
Result<std::string> AnswersToJson(const std::vector<std::string>& answers);

// How run and exec print and exit.
struct InvocationOutput {
  bool json = false;  // --json: one object on stdout
};

// Runs `call` of `tool` on `runtime` with SIGINT and SIGTERM turned into a
// cancel request for the duration of the run (a second signal only cancels
// again; the previous handlers are restored afterwards), prints the outcome
// and returns the exit code (SPEC.md §10): 0 completed, 1 the tool reported
// an error or failed, 2 the tool could not be started, 3 needs input,
// 124 timeout, 130 cancelled.
int InvokeTool(ToolRuntime& runtime, const ToolCall& call, const ToolConfig& tool,
               const InvocationOutput& output);

}  // namespace toolvfs
