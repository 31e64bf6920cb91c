// `toolvfs run TOOL`: one call of a tool configured in toolvfs.toml, with
// its arguments from --args, printed as text or as one JSON object.
#include <CLI/CLI.hpp>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/project_opening.h"
#include "cli/terminal.h"
#include "cli/tool_invocation.h"
#include "config/config.h"
#include "core/text.h"
#include "project/project_files.h"
#include "runtime/builtin_runtime.h"
#include "runtime/mcp_runtime.h"
#include "runtime/stdio_runtime.h"
#include "runtime/vfs_runtime.h"
#include "session/session_config.h"
#include "session/session_workspace.h"

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

std::vector<std::string> ConfiguredNames(const Config& config) {
  std::vector<std::string> names;
  for (const auto& [name, tool] : config.tools) names.push_back(name);
  return names;
}

std::string JoinedNames(const std::vector<std::string>& names) {
  std::string joined;
  for (const std::string& name : names) joined += (joined.empty() ? "" : ", ") + name;
  return joined;
}

bool HasMcpImports(const Config& config) {
  for (const auto& [name, tool] : config.tools) {
    if (IsMcpImport(tool)) return true;
  }
  return false;
}

// The MCP runtime under the run's sandbox settings, with the host's
// environment for the variables a server's `env` lists.
McpRuntimeOptions McpOptions(const RunServices& services) {
  McpRuntimeOptions options;
  services.ConfigureRuntime(options);
  return options;
}

class RunCommand final : public Command {
 public:
  void AddOptions(CLI::App& app) override {
    app.add_option("TOOL", tool_name_, "Name of the tool in toolvfs.toml (see toolvfs tools)")
        ->required();
    app.add_option("--args", arguments_,
                   "The tool's arguments: a JSON object, @FILE to read it from a file, @- from stdin")
        ->type_name("JSON|@FILE");
    app.add_option("--answer", answers_, kAnswerOptionHelp)
        ->type_name("ID=VALUE")
        ->allow_extra_args(false);  // one value per --answer, so TOOL may follow
    app.add_option("--session", session_id_,
                   "The session the call is meant for: refused unless --project is that session's workspace "
                   "(a memory: project becomes a throw-away session of that id)")
        ->type_name("ID");
    app.add_flag("--json", json_,
                 "Print one JSON object: {\"status\",\"content\",\"error\"?,\"question\"?}");
    app.footer(
        "The tool runs in the directory of its config file. Without --json its text "
        "content goes to stdout and errors to stderr.\n"
        "Example: toolvfs run rename_symbol --args '{\"from\": \"a\", \"to\": \"b\"}' --json\n"
        "Exit codes: 0 completed, 1 the tool reported an error or failed, 2 usage or config "
        "error, 3 needs input, 4 the OS sandbox cannot be enforced, 69 the store's server is unavailable "
        "(try again), 124 timeout, 130 cancelled "
        "(Ctrl+C sends the tool `cancel`).");
  }

  int Run(const CommonOptions& common) override {
    Result<std::unique_ptr<ProjectFiles>> store = OpenCommandProject(common.project, ProjectUse::kWrite);
    if (!store.ok()) return ReportStatus("--project", store.status());

    Result<LoadedConfig> loaded = LoadToolConfig(common);
    if (!loaded.ok()) return ReportError("run", loaded.status().message());
    ReportConfigWarnings(*loaded, common);
    const Config& config = loaded->config;
    // `run --session ID` without --project: the session ID of the store the
    // [session] table names (docs/sessions.md).
    std::string project = common.project;
    if (session_id_ && common.project == "." && config.session && config.session->store) {
      project = *config.session->store;
      if (!project.starts_with("memory:")) project += "#" + *session_id_;
      store = OpenProject(project);
      if (!store.ok()) return ReportError("session.store", store.status().message());
    }

    // A name the config does not list can only be a tool an MCP import offers.
    auto found = config.tools.find(tool_name_);
    // A near miss of a configured name is a typo, told at once: no MCP
    // server is started to look it up among the imports.
    if (found == config.tools.end() &&
        (!HasMcpImports(config) || !ClosestNames(tool_name_, ConfiguredNames(config)).empty())) {
      return UnknownTool(*loaded, {});
    }
    std::optional<RuntimeKind> runtime;
    if (found != config.tools.end()) {
      Result<RuntimeKind> resolved = ResolveRuntime(found->second);
      if (!resolved.ok()) return ReportError("run", resolved.status().message());
      runtime = *resolved;
    }

    // The call's own input before any MCP server is started to look an
    // imported tool up, so that a mistake in it is reported at once.
    ToolCall call;
    if (arguments_) {
      Result<std::string> arguments = ReadArgumentsJson(*arguments_);
      if (!arguments.ok()) {
        return ReportInvocationError(json_, kExitUsage, "--args",
                                     {.kind = "invalid_arguments", .message = arguments.status().message()});
      }
      call.arguments_json = std::move(arguments).value();
    }
    auto answers = ParseAnswerFlags(answers_);  // typed when the tool asks (runtime/answers.h)
    if (!answers.ok()) return ReportError("--answer", answers.status().message());

    // Every run gets its start and end records; MCP servers and stdio tools
    // read files themselves, confined by the sandbox, so theirs are the
    // only records of their runs.
    Result<RunServices> services = PrepareRunServices(common, loaded->path);
    if (!services.ok()) return ReportError("run", services.status().message());

    // MCP servers, started lazily; kept for the run once a lookup started them.
    std::unique_ptr<McpRuntime> mcp;
    std::optional<ToolConfig> imported;
    if (found == config.tools.end()) {
      std::vector<std::string> offered;
      Result<std::optional<ImportedMcpTool>> resolved = FindImportedTool(**store, config, *services, mcp, offered);
      if (!resolved.ok()) return ReportError("run", resolved.status().message());
      if (!*resolved) return UnknownTool(*loaded, offered);
      imported = (*resolved)->tool;
      runtime = RuntimeKind::kMcp;
    }
    const ToolConfig& tool = imported ? *imported : found->second;
    call.name = tool.name;

    const InvocationOutput output{.json = json_,
                                  .answers = std::move(answers).value(),
                                  .interactive = !common.no_interaction,
                                  .audit = services->audit.get(),
                                  .runtime = *runtime};
    if (*runtime == RuntimeKind::kBuiltin && session_id_ && project.starts_with("memory:")) {
      // A memory: project lives for this run only: a throw-away session.
      Result<std::unique_ptr<SessionWorkspace>> session =
          SessionWorkspace::Create(**store, SessionSettingsFrom(config.session, *session_id_));
      if (!session.ok()) return ReportError("--session", session.status().message());
    }
    // On a session workspace, what a tool changes past the session layer
    // is counted against its quota once the tool ran.
    const auto invoke = [&](ToolRuntime& chosen) { return InvokeToolOnProject(chosen, **store, call, tool, output); };
    if (*runtime == RuntimeKind::kMcp) {
      if (!mcp) mcp = std::make_unique<McpRuntime>(**store, config.mcp_servers, McpOptions(*services));
      return invoke(*mcp);
    }
    if (*runtime == RuntimeKind::kBuiltin) {
      BuiltinRuntimeOptions options;
      services->ConfigureRuntime(options);
      options.session_id = session_id_;
      Result<bool> is_session = SessionWorkspace::IsSession(**store);
      if (!is_session.ok()) return ReportError("run", is_session.status().message());
      options.session_workspace = *is_session;
      BuiltinRuntime builtin(**store, std::move(options));
      return invoke(builtin);
    }
    if (*runtime == RuntimeKind::kStdio) {
      StdioRuntimeOptions options;
      services->ConfigureRuntime(options);
      StdioRuntime stdio(**store, std::move(options));
      return invoke(stdio);
    }
    VfsRuntimeOptions options;
    options.working_directory = loaded->directory;
    services->ConfigureRuntime(options);
    VfsRuntime vfs(**store, std::move(options));
    return invoke(vfs);
  }

 private:
  // The tool `tool_name_` names among the tools `source = "mcp.SERVER"`
  // entries import (docs/runtimes.md, mcp runtime, "Tool names"): "ENTRY.TOOL"
  // starts only that entry's server; a bare name starts every import
  // entry's server and must be offered by exactly one. nullopt when no
  // import offers it (`offered` then lists what they do offer, for the
  // message). Leaves the runtime in `mcp` so the call reuses the servers.
  Result<std::optional<ImportedMcpTool>> FindImportedTool(ProjectFiles& store, const Config& config,
                                                          const RunServices& services,
                                                          std::unique_ptr<McpRuntime>& mcp,
                                                          std::vector<std::string>& offered) {
    mcp = std::make_unique<McpRuntime>(store, config.mcp_servers, McpOptions(services));
    std::optional<std::string> only_entry;
    if (const size_t dot = tool_name_.find('.'); dot != std::string::npos) {
      auto entry = config.tools.find(tool_name_.substr(0, dot));
      if (entry == config.tools.end() || !IsMcpImport(entry->second)) return std::optional<ImportedMcpTool>();
      only_entry = entry->first;
    }
    CancelToken cancel;
    ImportedMcpTools listed = ListImportedMcpTools(*mcp, config, cancel, only_entry);
    std::optional<ImportedMcpTool> match;
    for (ImportedMcpTool& candidate : listed.tools) {
      if (candidate.name == tool_name_ || candidate.entry + "." + candidate.tool.mcp_tool == tool_name_) {
        match = std::move(candidate);
        break;
      }
      offered.push_back(candidate.name);
    }
    if (match) return match;
    // A server that could not be listed may be the one meant: say why.
    if (!listed.errors.empty()) return Status(StatusCode::kInvalidArgument, listed.errors.begin()->second);
    return std::optional<ImportedMcpTool>();
  }

  // "Unknown tool": the closest names, what the config lists, and what
  // its MCP imports offer (`offered`, when they were asked).
  int UnknownTool(const LoadedConfig& loaded, const std::vector<std::string>& offered) const {
    InvocationError error{.kind = "unknown_tool"};
    std::vector<std::string> candidates = ConfiguredNames(loaded.config);
    candidates.insert(candidates.end(), offered.begin(), offered.end());
    error.did_you_mean = ClosestNames(tool_name_, candidates);
    error.message = "Unknown tool " + Quote(tool_name_);
    if (!error.did_you_mean.empty()) error.message += ", did you mean " + Quote(error.did_you_mean.front()) + "?";
    if (loaded.config.tools.empty()) {
      error.message += " (" + loaded.path + " configures no tools)";
    } else {
      error.message += " (" + loaded.path + " configures: " + ToolNames(loaded.config);
      if (!offered.empty()) error.message += "; its MCP imports offer: " + JoinedNames(offered);
      error.message += ")";
    }
    return ReportInvocationError(json_, kExitUsage, "run", error);
  }

  std::string tool_name_;
  std::optional<std::string> arguments_;
  std::vector<std::string> answers_;
  std::optional<std::string> session_id_;
  bool json_ = false;
};

}  // namespace

std::unique_ptr<Command> NewRunCommand() { return std::make_unique<RunCommand>(); }

}  // namespace toolvfs
