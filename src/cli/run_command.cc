// `toolvfs run TOOL`: one call of a tool configured in toolvfs.toml, with
// its arguments from --args, printed as text or as one JSON object.
#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/terminal.h"
#include "cli/tool_invocation.h"
#include "config/config.h"
#include "core/text.h"
#include "project/project_files.h"
#include "runtime/builtin_runtime.h"
#include "runtime/stdio_runtime.h"
#include "runtime/vfs_runtime.h"

namespace toolvfs {
namespace {

std::string ToolNames(const Config& config) {
  std::string names;
  for (const auto& [name, tool] : config.tools) {
    if (!names.empty()) names += ", ";
    names += name;
  }
  return names;
}

class RunCommand final : public Command {
 public:
  void AddOptions(CLI::App& app) override {
    app.add_option("TOOL", tool_name_, "Name of the tool in toolvfs.toml (see toolvfs tools)")
        ->required();
    app.add_option("--args", arguments_,
                   "The tool's arguments: a JSON object, @FILE to read it from a file, @- from stdin")
        ->type_name("JSON|@FILE");
    app.add_option("--answer", answers_,
                   "Answer the tool's question ID with VALUE (repeatable; passed as a string)")
        ->type_name("ID=VALUE")
        ->allow_extra_args(false);  // one value per --answer, so TOOL may follow
    app.add_flag("--json", json_,
                 "Print one JSON object: {\"status\",\"content\",\"error\"?,\"question\"?}");
    app.footer(
        "The tool runs in the directory of its config file. Without --json its text "
        "content goes to stdout and errors to stderr.\n"
        "Exit codes: 0 completed, 1 the tool reported an error or failed, 2 usage or config "
        "error, 3 needs input, 124 timeout, 130 cancelled (Ctrl+C sends the tool `cancel`).");
  }

  int Run(const CommonOptions& common) override {
    Result<std::unique_ptr<ProjectFiles>> store = OpenProject(common.project);
    if (!store.ok()) return ReportError("--project", store.status().message());

    Result<LoadedConfig> loaded = LoadToolConfig(common);
    if (!loaded.ok()) return ReportError("run", loaded.status().message());
    ReportConfigWarnings(*loaded, common);
    const Config& config = loaded->config;

    auto found = config.tools.find(tool_name_);
    if (found == config.tools.end()) {
      if (config.tools.empty()) {
        return ReportError("run", "Unknown tool " + Quote(tool_name_) + ": " + loaded->path +
                                      " configures no tools");
      }
      return ReportError("run", "Unknown tool " + Quote(tool_name_) + "; " + loaded->path +
                                    " configures: " + ToolNames(config));
    }
    const ToolConfig& tool = found->second;

    Result<RuntimeKind> runtime = ResolveRuntime(tool);
    if (!runtime.ok()) return ReportError("run", runtime.status().message());
    if (*runtime == RuntimeKind::kMcp) {
      return ReportError("run", "Tool '" + tool.name + "' uses runtime '" +
                                    std::string(RuntimeKindName(*runtime)) +
                                    "', which this build does not run yet");
    }

    ToolCall call;
    call.name = tool.name;
    if (arguments_) {
      Result<std::string> arguments = ReadArgumentsJson(*arguments_);
      if (!arguments.ok()) return ReportError("--args", arguments.status().message());
      call.arguments_json = std::move(arguments).value();
    }
    Result<std::string> answers = AnswersToJson(answers_);
    if (!answers.ok()) return ReportError("--answer", answers.status().message());
    call.answers_json = std::move(answers).value();

    Result<RunServices> services = PrepareRunServices(common, loaded->path);
    if (!services.ok()) return ReportError("run", services.status().message());
    const InvocationOutput output{.json = json_};
    if (*runtime == RuntimeKind::kBuiltin) {
      BuiltinRuntimeOptions options;
      services->ConfigureRuntime(options);
      BuiltinRuntime builtin(**store, std::move(options));
      return InvokeTool(builtin, call, tool, output);
    }
    if (*runtime == RuntimeKind::kStdio) {
      StdioRuntimeOptions options;
      services->ConfigureRuntime(options);
      StdioRuntime stdio(**store, std::move(options));
      return InvokeTool(stdio, call, tool, output);
    }
    VfsRuntimeOptions options;
    options.working_directory = loaded->directory;
    services->ConfigureRuntime(options);
    VfsRuntime vfs(**store, std::move(options));
    return InvokeTool(vfs, call, tool, output);
  }

 private:
  std::string tool_name_;
  std::optional<std::string> arguments_;
  std::vector<std::string> answers_;
  bool json_ = false;
};

}  // namespace

std::unique_ptr<Command> NewRunCommand() { return std::make_unique<RunCommand>(); }

}  // namespace toolvfs
