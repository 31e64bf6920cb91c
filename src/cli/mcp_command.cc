// `toolvfs mcp`: serves the tools of toolvfs.toml and the builtin tools to
// an MCP client over stdio (newline-delimited JSON-RPC on stdin/stdout,
// logs on stderr only). Each call runs through the tool's runtime under its
// policy, sandbox and audit, as `toolvfs run` would. docs/mcp.md.
#include <CLI/CLI.hpp>
#include <atomic>
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/mcp_http_serve.h"
#include "cli/terminal.h"
#include "cli/tool_invocation.h"
#include "core/text.h"
#include "mcp/mcp_server.h"
#include "project/project_files.h"
#include "runtime/builtin_runtime.h"
#include "runtime/mcp_runtime.h"
#include "runtime/stdio_runtime.h"
#include "runtime/tool_runtime.h"
#include "runtime/tool_schema.h"
#include "runtime/vfs_runtime.h"
#include "session/session_tools.h"

namespace toolvfs {
namespace {

// The tools of one loaded config plus every builtin the config does not
// rename, each run by its runtime. Runtimes are made once and kept for the
// server's life, so MCP servers a config imports are started once.
class ConfiguredToolHost final : public McpToolHost {
 public:
  ConfiguredToolHost(ProjectFiles& store, LoadedConfig loaded, RunServices services)
      : ConfiguredToolHost(store, std::move(loaded), std::make_shared<const RunServices>(std::move(services))) {}

  // Over HTTP every session has a host of its own over its own workspace;
  // they share the services (audit, inquirer). With `session_workspace`
  // the builtin file tools are the session suite (docs/sessions.md).
  ConfiguredToolHost(ProjectFiles& store, LoadedConfig loaded, std::shared_ptr<const RunServices> services,
                     bool session_workspace = false)
      : store_(store),
        loaded_(std::move(loaded)),
        services_(std::move(services)),
        session_workspace_(session_workspace) {
    for (const BuiltinToolInfo& builtin : BuiltinTools()) {
      if (loaded_.config.tools.contains(builtin.name)) continue;
      ToolConfig tool;
      tool.name = builtin.name;
      tool.source = ToolSource::kBuiltin;
      tool.description = builtin.description;
      tool.parameters = builtin.parameters;
      if (session_workspace_) {
        // The session workspace is the agent's own scratch space: the
        // builtins may read and write all of it (sensitive paths stay
        // denied); a [tools.NAME] entry still sets its own policy.
        tool.has_sandbox_table = true;
        tool.sandbox.filesystem_allow = {""};  // the root, as "." is written
        tool.sandbox.filesystem_writable.all = true;
        if (const SessionToolInfo* session_tool = FindSessionTool(builtin.name)) {
          tool.description = std::string(session_tool->description);
        }
      }
      unconfigured_builtins_.emplace(builtin.name, std::move(tool));
    }
  }

  // Called on the reader thread while calls run on theirs: the imported
  // tools and the MCP runtime are guarded by mutex_.
  std::vector<McpToolListing> ListTools() override {
    std::lock_guard lock(mutex_);
    std::vector<McpToolListing> listed;
    imported_.clear();
    bool has_imports = false;
    for (const auto& [name, tool] : loaded_.config.tools) {
      if (IsMcpImport(tool)) {
        has_imports = true;
        continue;
      }
      listed.push_back(Listing(tool));
    }
    for (const auto& [name, tool] : unconfigured_builtins_) listed.push_back(Listing(tool));
    if (has_imports) {
      CancelToken cancel;
      ImportedMcpTools imports = ListImportedMcpTools(Mcp(), loaded_.config, cancel);
      for (const auto& [entry, error] : imports.errors) {
        std::fprintf(stderr, "toolvfs mcp: warning: %s: %s\n", entry.c_str(), error.c_str());
      }
      for (ImportedMcpTool& imported : imports.tools) {
        listed.push_back({imported.name, imported.tool.description, imported.input_schema_json});
        imported_.emplace(imported.name, std::move(imported.tool));
      }
    }
    return listed;
  }

  Result<Outcome> CallTool(std::string_view name, const std::string& arguments_json,
                           CancelToken& cancel) override {
    bool listed;
    {
      std::lock_guard lock(mutex_);
      listed = !imported_.empty();
    }
    if (!listed) ListTools();  // a client may call an imported tool without listing first
    std::optional<ToolConfig> found;
    {
      std::lock_guard lock(mutex_);
      if (const ToolConfig* tool = Find(name)) found = *tool;
    }
    if (!found) {
      return Status(StatusCode::kNotFound, "Invalid params: unknown tool " + Quote(name) + " (see tools/list)");
    }
    const ToolConfig* tool = &*found;
    ToolCall call;
    call.name = tool->name;
    call.arguments_json = arguments_json;
    Result<RuntimeKind> runtime = ResolveRuntime(*tool);
    if (!runtime.ok()) return runtime.status();
    switch (*runtime) {
      case RuntimeKind::kMcp: {
        // The MCP runtime runs one call at a time (mcp_runtime.h).
        std::lock_guard lock(mcp_mutex_);
        McpRuntime* mcp;
        {
          std::lock_guard guard(mutex_);
          mcp = &Mcp();
        }
        return mcp->Execute(call, *tool, cancel);
      }
      case RuntimeKind::kBuiltin: {
        BuiltinRuntimeOptions options;
        services_->ConfigureRuntime(options);
        options.session_workspace = session_workspace_;
        BuiltinRuntime builtin(store_, std::move(options));
        return builtin.Execute(call, *tool, cancel);
      }
      case RuntimeKind::kStdio: {
        StdioRuntimeOptions options;
        services_->ConfigureRuntime(options);
        StdioRuntime stdio(store_, std::move(options));
        return stdio.Execute(call, *tool, cancel);
      }
      default: {
        VfsRuntimeOptions options;
        options.working_directory = loaded_.directory;
        services_->ConfigureRuntime(options);
        VfsRuntime vfs(store_, std::move(options));
        return vfs.Execute(call, *tool, cancel);
      }
    }
  }

 private:
  McpToolListing Listing(const ToolConfig& tool) const {
    std::string description = tool.description;
    if (description.empty() && tool.source == ToolSource::kBuiltin) {
      if (const BuiltinToolInfo* builtin = FindBuiltinTool(tool.name)) description = builtin->description;
    }
    const ConfigValue::Object* parameters = &tool.parameters;
    if (tool.source == ToolSource::kBuiltin && session_workspace_) {
      // The session suite's schema where the builtin is a session tool.
      BuiltinRuntimeOptions options;
      options.session_workspace = true;
      parameters = &BuiltinRuntime(store_, std::move(options)).Parameters(tool);
    } else if (parameters->empty() && tool.source == ToolSource::kBuiltin) {
      if (const BuiltinToolInfo* builtin = FindBuiltinTool(tool.name)) parameters = &builtin->parameters;
    }
    return {tool.name, std::move(description), InputSchemaJson(*parameters)};
  }

  const ToolConfig* Find(std::string_view name) const {
    if (auto found = loaded_.config.tools.find(std::string(name));
        found != loaded_.config.tools.end() && !IsMcpImport(found->second)) {
      return &found->second;
    }
    if (auto found = unconfigured_builtins_.find(std::string(name)); found != unconfigured_builtins_.end()) {
      return &found->second;
    }
    if (auto found = imported_.find(std::string(name)); found != imported_.end()) return &found->second;
    return nullptr;
  }

  McpRuntime& Mcp() {
    if (!mcp_) {
      McpRuntimeOptions options;
      services_->ConfigureRuntime(options);
      mcp_ = std::make_unique<McpRuntime>(store_, loaded_.config.mcp_servers, std::move(options));
    }
    return *mcp_;
  }

  ProjectFiles& store_;
  LoadedConfig loaded_;
  std::shared_ptr<const RunServices> services_;
  bool session_workspace_ = false;
  std::map<std::string, ToolConfig, std::less<>> unconfigured_builtins_;
  std::map<std::string, ToolConfig, std::less<>> imported_;  // from the last tools/list
  std::unique_ptr<McpRuntime> mcp_;
  std::mutex mutex_;      // imported_, mcp_
  std::mutex mcp_mutex_;  // one MCP call at a time
};

class McpCommand final : public Command {
 public:
  void AddOptions(CLI::App& app) override {
    app.add_option("--max-result-bytes", max_result_bytes_,
                   "Cut a tool's text result beyond this many bytes, with a note (default 1048576)")
        ->check(CLI::PositiveNumber);
    AddMcpHttpOptions(app, http_options_);
    app.footer(
        "Speaks MCP (2025-11-25, 2025-06-18, 2025-03-26) on stdin/stdout, one JSON-RPC message "
        "per line; logs go to stderr. Serves the tools of toolvfs.toml and the builtin tools. "
        "With --http: Streamable HTTP at http://ADDR:PORT/mcp, one session workspace per MCP session.");
  }

  int Run(const CommonOptions& common) override {
    if (http_options_.listen) return RunHttp(common);
    Result<std::unique_ptr<ProjectFiles>> store = OpenProject(common.project);
    if (!store.ok()) return ReportError("--project", store.status().message());
    Result<Serving> serving = PrepareServing(common);
    if (!serving.ok()) return ReportError("mcp", serving.status().message());

    ConfiguredToolHost tools(**store, std::move(serving->loaded), std::move(serving->services));
    McpServerOptions options;
    options.max_result_bytes = max_result_bytes_;
    options.instructions =
        "Tools of this project's toolvfs.toml and toolvfs's builtin file tools. Paths are "
        "project-relative; each tool runs under its configured policy and sandbox.";

    // Answers come from the call threads too: one writer at a time, each
    // answer one whole line.
    std::mutex output_mutex;
    std::atomic<bool> output_closed{false};
    const McpSend send = [&](const WireMessage& answer) {
      std::lock_guard lock(output_mutex);
      if (output_closed) return;
      const std::string_view bytes = answer.bytes();
      if (std::fwrite(bytes.data(), 1, bytes.size(), stdout) != bytes.size() || std::fflush(stdout) != 0) {
        std::fprintf(stderr, "toolvfs mcp: stdout closed; stopping\n");
        output_closed = true;
      }
    };
    // Declared after `send`, so that its destructor, which waits for the
    // running calls, runs while `send` still exists.
    McpServer server(tools, std::move(options));
    std::string line;
    while (!output_closed && std::getline(std::cin, line)) server.Submit(line, send);
    return kExitOk;  // ~McpServer waits for the calls still running
  }

 private:
  // The loaded config and the services every tool runs with.
  struct Serving {
    LoadedConfig loaded;
    RunServices services;
  };

  // Loads the config (its warnings on stderr) and prepares the services.
  // Nobody at a terminal answers questions: stdin is the protocol, or
  // (over HTTP) nobody is there.
  static Result<Serving> PrepareServing(const CommonOptions& common) {
    TOOLVFS_ASSIGN_OR_RETURN(LoadedConfig loaded, LoadToolConfig(common));
    ReportConfigWarnings(loaded, common);
    CommonOptions for_services = common;
    for_services.no_interaction = true;
    TOOLVFS_ASSIGN_OR_RETURN(RunServices services, PrepareRunServices(for_services, loaded.path));
    return Serving{std::move(loaded), std::move(services)};
  }

  // Over HTTP each MCP session gets a tool host of its own over its own
  // session workspace (mcp_http_serve.h); --project only locates the
  // config, as for a memory: project.
  int RunHttp(const CommonOptions& common) {
    Result<Serving> serving = PrepareServing(common);
    if (!serving.ok()) return ReportError("mcp", serving.status().message());
    auto shared_services = std::make_shared<const RunServices>(std::move(serving->services));
    McpServerOptions options;
    options.max_result_bytes = max_result_bytes_;
    const std::optional<SessionConfig> session_config = serving->loaded.config.session;
    const LoadedConfig& config = serving->loaded;
    return ServeMcpHttp(http_options_, session_config, std::move(options),
                        [&config, shared_services](ProjectFiles& store, SessionWorkspace&) {
                          return std::make_unique<ConfiguredToolHost>(store, config, shared_services,
                                                                      /*session_workspace=*/true);
                        });
  }

  size_t max_result_bytes_ = size_t{1} << 20;
  McpHttpCommandOptions http_options_;
};

}  // namespace

std::unique_ptr<Command> NewMcpCommand() { return std::make_unique<McpCommand>(); }

}  // namespace toolvfs
