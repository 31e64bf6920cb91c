// The toolvfs subcommands: what each one declares and how main() runs it.
//
// main.cc builds the CLI11 parser from the table returned by Commands()
// (commands.cc), adds the common options of SPEC.md §10 to the root and to
// every command, parses, then calls Run() on the selected command. A
// command is a thin front end: it reaches project files only through a
// ProjectFiles store opened with OpenProject().
#pragma once

#include <memory>
#include <span>
#include <string>

namespace CLI {
class App;
}

namespace toolvfs {

// Exit codes shared by every command (SPEC.md §10). grep uses kNoResult
// for "no match", like ripgrep; run and exec use the rest (docs/cli.md).
enum ExitCode : int {
  kExitOk = 0,
  kExitNoResult = 1,
  kExitToolError = 1,   // run/exec: the tool reported an error or failed
  kExitUsage = 2,       // usage, config or any other error the user must fix
  kExitNeedsInput = 3,  // run/exec: the tool asks a question that was not answered
  kExitSandbox = 4,     // the OS sandbox cannot be enforced (--sandbox=require)
  kExitUnavailable = 69,  // the store's server is down or unreachable; try again (EX_UNAVAILABLE)
  kExitTimeout = 124,   // run/exec: idle or total timeout (like timeout(1))
  kExitCancelled = 130, // run/exec: cancelled by Ctrl+C or SIGTERM (128 + SIGINT)
};

// Options every command accepts, parsed once into one place.
struct CommonOptions {
  std::string project = ".";          // --project DIR|URI; default: the current directory
  std::string config;                 // --config FILE; default: toolvfs.toml in the project directory
  bool no_interaction = false;        // --no-interaction; takes effect with the inquirer
  std::string sandbox = "require";    // --sandbox require|best-effort; takes effect with the sandbox
  std::string audit_path;             // --audit PATH; takes effect with the audit log
  bool no_audit = false;              // --no-audit
  std::string log_level = "warn";     // --log-level error|warn|info|debug
};

// The common options, as bits: which of them a command reads.
enum CommonOption : unsigned {
  kOptionProject = 1u << 0,      // --project
  kOptionConfig = 1u << 1,       // --config
  kOptionInteraction = 1u << 2,  // --no-interaction
  kOptionSandbox = 1u << 3,      // --sandbox
  kOptionAudit = 1u << 4,        // --audit, --no-audit
  kOptionLogLevel = 1u << 5,     // --log-level
  kAllCommonOptions = (1u << 6) - 1,
};

// Declares the common options on `app`, bound to `options`. Called for
// the root and for every command, so they may appear before or after the
// command name. Every one is accepted everywhere (a harness may pass the
// same ones to every command), but only those in `shown` are in the
// command's --help: the others have no effect on it.
void AddCommonOptions(CLI::App& app, CommonOptions& options, unsigned shown = kAllCommonOptions);

class Command {
 public:
  virtual ~Command() = default;

  // Declares the command's own options and positionals on `app` (the
  // command's CLI11 subcommand), bound to members of this object.
  virtual void AddOptions(CLI::App& app) = 0;

  // The common options this command reads (CommonOption bits); the rest
  // are hidden from its --help.
  virtual unsigned UsedCommonOptions() const { return kAllCommonOptions; }

  // Runs the command after a successful parse and returns the exit code.
  // Prints its own output and errors (see ReportError); never throws.
  virtual int Run(const CommonOptions& common) = 0;
};

struct CommandInfo {
  const char* name;
  const char* summary;  // one line for `toolvfs --help`
  std::unique_ptr<Command> (*create)();
};

// Every command, in the order `toolvfs --help` lists them.
std::span<const CommandInfo> Commands();

std::unique_ptr<Command> NewGrepCommand();
std::unique_ptr<Command> NewDoctorCommand();
std::unique_ptr<Command> NewRunCommand();
std::unique_ptr<Command> NewExecCommand();
std::unique_ptr<Command> NewToolsCommand();
std::unique_ptr<Command> NewCheckCommand();
std::unique_ptr<Command> NewAuditCommand();
std::unique_ptr<Command> NewWorkspaceCommand();
std::unique_ptr<Command> NewVfsdCommand();
std::unique_ptr<Command> NewMcpCommand();

}  // namespace toolvfs
