// `toolvfs exec -- PROGRAM [ARGS...]`: a program run once as an ad-hoc vfs
// tool (or stdio tool with --runtime stdio), without a config: named after
// the program, default limits, working directory the caller's (a stdio
// tool's: the project directory).
#include <CLI/CLI.hpp>
#include <filesystem>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include "cli/command.h"
#include "cli/project_opening.h"
#include "cli/terminal.h"
#include "cli/tool_invocation.h"
#include "config/config.h"
#include "config/url_check.h"
#include "core/text.h"
#include "project/path.h"
#include "project/project_files.h"
#include "runtime/stdio_runtime.h"
#include "runtime/vfs_runtime.h"

namespace toolvfs {
namespace {

// Interpreters whose first non-option argument is the program that runs:
// an ad-hoc tool is named after that script, not after `python3`.
bool IsInterpreter(std::string_view name) {
  constexpr std::string_view kInterpreters[] = {"python", "pypy", "node", "bash", "sh", "dash", "zsh",
                                                "perl", "ruby", "php", "lua", "Rscript", "tclsh"};
  for (std::string_view interpreter : kInterpreters) {
    if (!name.starts_with(interpreter)) continue;
    // python3, python3.11, lua5.4: a version may follow the name.
    std::string_view version = name.substr(interpreter.size());
    if (version.find_first_not_of("0123456789.") == std::string_view::npos) return true;
  }
  return false;
}

std::string FileNameOf(const std::string& path) {
  std::string name = std::filesystem::path(path).filename().string();
  return name.empty() ? path : name;
}

// The ad-hoc tool's name: the script's file name for an interpreter
// (`python3 tools/rename_symbol.py` is `rename_symbol.py`, `python3 -m
// pkg.tool` is `pkg.tool`), else the program's file name.
std::string AdHocToolName(const std::vector<std::string>& command) {
  const std::string program = FileNameOf(command.front());
  if (!IsInterpreter(program)) return program;
  for (size_t index = 1; index < command.size(); ++index) {
    const std::string& argument = command[index];
    if (argument == "-m" && index + 1 < command.size()) return command[index + 1];
    // -c CODE and -e CODE: inline code, no file to name the tool after.
    if (argument == "-c" || argument == "-e") return program;
    if (argument.empty() || argument.starts_with('-')) continue;
    return FileNameOf(argument);
  }
  return program;
}

class ExecCommand final : public Command {
 public:
  void AddOptions(CLI::App& app) override {
    app_ = &app;
    app.add_option("PROGRAM", command_, "The program, then its arguments (all of them its own)")
        ->required()
        ->type_name("");
    // Everything from the first positional on belongs to the program, so
    // `toolvfs exec python3 tool.py --json` passes --json to tool.py.
    app.positionals_at_end();
    app.add_option("--runtime", runtime_, "vfs (default) or stdio")
        ->type_name("RUNTIME")
        ->check(CLI::IsMember({"vfs", "stdio"}));
    app.add_option("--args", arguments_,
                   "The tool's arguments: a JSON object, @FILE to read it from a file, @- from stdin")
        ->type_name("JSON|@FILE");
    app.add_option("--answer", answers_, kAnswerOptionHelp)
        ->type_name("ID=VALUE")
        ->allow_extra_args(false);
    app.add_flag("--json", json_,
                 "Print one JSON object: {\"status\",\"content\",\"error\"?,\"question\"?}");
    app.add_option("--allow-read", allow_read_,
                   "Project path the tool may read (repeatable; default: the whole project)")
        ->type_name("PATH")
        ->allow_extra_args(false);
    app.add_option("--allow-write", allow_write_,
                   "Project path the tool may read and write (repeatable)")
        ->type_name("PATH")
        ->allow_extra_args(false);
    app.add_option("--allow-net", allow_net_,
                   "URL prefix the tool may reach with http.* (repeatable)")
        ->type_name("URL")
        ->allow_extra_args(false);
    app.add_option("--allow-cmd", allow_cmd_,
                   "Program the tool may start with process.run, any arguments (repeatable)")
        ->type_name("PROG")
        ->allow_extra_args(false);
    app.footer(
        "Options go before PROGRAM (or before --); everything after PROGRAM is passed to it.\n"
        "The tool runs in the current directory, named after its script (python3 tools/x.py is "
        "x.py) or else PROGRAM's file name, with the default limits.\n"
        "Example: toolvfs exec --allow-write todo.txt -- python3 tools/todo.py\n"
        "Exit codes: 0 completed, 1 the tool reported an error or failed, 2 usage error or the "
        "program could not start, 3 needs input, 4 the OS sandbox cannot be enforced, 69 the store's "
        "server is unavailable (try again), 124 timeout, 130 cancelled.");
  }

  unsigned UsedCommonOptions() const override { return kOptionProject | kOptionInteraction | kOptionSandbox | kOptionAudit | kOptionLogLevel; }

  int Run(const CommonOptions& common) override {
    if (command_.empty() || command_.front().empty()) {
      return ReportError("exec", "PROGRAM is empty (see toolvfs exec --help)");
    }
    if (int code = CheckAllowOptions(); code != kExitOk) return code;
    if (common.log_level != "error") WarnOfOwnOptionsAfterProgram();

    Result<std::unique_ptr<ProjectFiles>> store = OpenCommandProject(common.project, ProjectUse::kWrite);
    if (!store.ok()) return ReportStatus("--project", store.status());

    ToolCall call;
    if (arguments_) {
      Result<std::string> arguments = ReadArgumentsJson(*arguments_);
      if (!arguments.ok()) {
        return ReportInvocationError(json_, kExitUsage, "--args",
                                     {.kind = "invalid_arguments", .message = arguments.status().message()});
      }
      call.arguments_json = std::move(arguments).value();
    }

    std::error_code error;
    std::filesystem::path cwd = std::filesystem::current_path(error);
    if (error) return ReportError("exec", "Cannot get the current directory: " + error.message());

    ToolConfig tool;
    tool.name = AdHocToolName(command_);
    tool.ad_hoc = true;
    const bool stdio = runtime_ == "stdio";
    tool.runtime = stdio ? RuntimeKind::kStdio : RuntimeKind::kVfs;
    tool.command = CommandSpec{.program = command_.front(),
                               .args = std::vector<std::string>(command_.begin() + 1, command_.end())};
    // With --runtime stdio, `{{ ... }}` in PROGRAM or ARGS are templates
    // (docs/runtimes.md): `'{{ tool.arguments | tojson }}'` passes --args.
    call.name = tool.name;

    if (HasAllowOptions()) {
      tool.has_sandbox_table = true;
      tool.sandbox = AllowOptionsPolicy();
    }

    Result<RunServices> services = PrepareRunServices(common, std::nullopt);
    if (!services.ok()) return ReportError("exec", services.status().message());
    auto answers = ParseAnswerFlags(answers_);  // typed when the tool asks (runtime/answers.h)
    if (!answers.ok()) return ReportError("--answer", answers.status().message());
    const InvocationOutput output{.json = json_,
                                  .answers = std::move(answers).value(),
                                  .interactive = !common.no_interaction,
                                  .audit = services->audit.get(),
                                  .runtime = *tool.runtime};
    if (stdio) {
      StdioRuntimeOptions options;
      services->ConfigureRuntime(options);
      StdioRuntime runtime(**store, std::move(options));
      return InvokeToolOnProject(runtime, **store, call, tool, output);
    }
    VfsRuntimeOptions options;
    options.working_directory = cwd.string();
    services->ConfigureRuntime(options);
    VfsRuntime vfs(**store, std::move(options));
    return InvokeToolOnProject(vfs, **store, call, tool, output);
  }

 private:
  // Words after PROGRAM are the program's, options included (like env and
  // timeout); one that is also an option of exec (`... count.py --args
  // '{...}'`) was most likely meant for exec, which then silently ran
  // without it. Said on stderr; what runs does not change.
  void WarnOfOwnOptionsAfterProgram() const {
    std::string misplaced;
    for (size_t index = 1; index < command_.size(); ++index) {
      const std::string& word = command_[index];
      if (!word.starts_with("--") || word == "--" || word == "--help") continue;
      const std::string name = word.substr(0, word.find('='));
      if (app_ == nullptr || app_->get_option_no_throw(name) == nullptr) continue;
      if (!misplaced.empty()) misplaced += ", ";
      misplaced += Quote(name);
    }
    if (misplaced.empty()) return;
    ReportNote("warning", misplaced + " after PROGRAM " + Quote(command_.front()) +
                              " went to the program, not to exec; exec's own options go before PROGRAM "
                              "(toolvfs exec [OPTIONS] [--] PROGRAM [ARGS...])");
  }

  bool HasAllowOptions() const {
    return !allow_read_.empty() || !allow_write_.empty() || !allow_net_.empty() || !allow_cmd_.empty();
  }

  // The policy the --allow-* flags describe (docs/cli.md): the paths of
  // --allow-read readable (the whole project when none is given), those of
  // --allow-write readable and writable, the URL prefixes of --allow-net,
  // the programs of --allow-cmd with any arguments. Validated beforehand by
  // CheckAllowOptions.
  SandboxConfig AllowOptionsPolicy() const {
    SandboxConfig sandbox;
    if (allow_read_.empty()) sandbox.filesystem_allow.push_back("");
    for (const auto* paths : {&allow_read_, &allow_write_}) {
      for (const std::string& path : *paths) sandbox.filesystem_allow.push_back(NormalizePath(path).value());
    }
    for (const std::string& path : allow_write_) {
      sandbox.filesystem_writable.prefixes.push_back(NormalizePath(path).value());
    }
    sandbox.network_allow = allow_net_;
    for (const std::string& program : allow_cmd_) sandbox.commands[program] = CommandRule{};
    return sandbox;
  }

  // The --allow-* values are checked like the config's sandbox table, so a
  // typo is an error rather than a silently wrong policy.
  int CheckAllowOptions() const {
    for (const auto* paths : {&allow_read_, &allow_write_}) {
      const char* option = paths == &allow_read_ ? "--allow-read" : "--allow-write";
      for (const std::string& path : *paths) {
        Result<std::string> normalized = NormalizePath(path);
        if (!normalized.ok()) return ReportError(option, normalized.status().message());
      }
    }
    for (const std::string& url : allow_net_) {
      Status checked = CheckUrlPrefix(url);
      if (!checked.ok()) {
        return ReportError("--allow-net", Quote(url) + " is not a valid URL prefix: " + checked.message());
      }
    }
    for (const std::string& program : allow_cmd_) {
      bool bad = program.empty();
      for (char c : program) bad = bad || c == ' ' || static_cast<unsigned char>(c) < 0x20;
      if (bad) {
        return ReportError("--allow-cmd", Quote(program) +
                                              " is not a program name (no spaces or control characters)");
      }
    }
    return kExitOk;
  }

  const CLI::App* app_ = nullptr;  // the parser of AddOptions, which outlives Run
  std::vector<std::string> command_;
  std::string runtime_ = "vfs";
  std::optional<std::string> arguments_;
  bool json_ = false;
  std::vector<std::string> answers_;
  std::vector<std::string> allow_read_;
  std::vector<std::string> allow_write_;
  std::vector<std::string> allow_net_;
  std::vector<std::string> allow_cmd_;
};

}  // namespace

std::unique_ptr<Command> NewExecCommand() { return std::make_unique<ExecCommand>(); }

}  // namespace toolvfs
