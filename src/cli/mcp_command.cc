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

namespace toolvfs {
namespace {

// The tools of one loaded config plus every builtin the config does not
// rename, each run by its runtime. Runtimes are made once and kept for the
// server's life, so MCP servers a config imports are started once.
class ConfiguredToolHost final : public McpToolHost {
 public:
  ConfiguredToolHost(ProjectFiles& store, LoadedConfig loaded, RunServices services)
      : store_(store), loaded_(std::move(loaded)), services_(std::move(services)) {
    for (const BuiltinToolInfo& builtin : BuiltinTools()) {
      if (loaded_.config.tools.contains(builtin.name)) continue;
      ToolConfig tool;
      tool.name = builtin.name;
      tool.source = ToolSource::kBuiltin;
      tool.description = builtin.description;
      tool.parameters = builtin.parameters;
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
        services_.ConfigureRuntime(options);
        BuiltinRuntime builtin(store_, std::move(options));
        return builtin.Execute(call, *tool, cancel);
      }
      case RuntimeKind::kStdio: {
        StdioRuntimeOptions options;
        services_.ConfigureRuntime(options);
        StdioRuntime stdio(store_, std::move(options));
        return stdio.Execute(call, *tool, cancel);
      }
      default: {
        VfsRuntimeOptions options;
        options.working_directory = loaded_.directory;
        services_.ConfigureRuntime(options);
        VfsRuntime vfs(store_, std::move(options));
        return vfs.Execute(call, *tool, cancel);
      }
    }
  }

 private:
  static McpToolListing Listing(const ToolConfig& tool) {
    std::string description = tool.description;
    if (description.empty() && tool.source == ToolSource::kBuiltin) {
      if (const BuiltinToolInfo* builtin = FindBuiltinTool(tool.name)) description = builtin->description;
    }
    const ConfigValue::Object* parameters = &tool.parameters;
    if (parameters->empty() && tool.source == ToolSource::kBuiltin) {
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
      services_.ConfigureRuntime(options);
      mcp_ = std::make_unique<McpRuntime>(store_, loaded_.config.mcp_servers, std::move(options));
    }
    return *mcp_;
  }

  ProjectFiles& store_;
  LoadedConfig loaded_;
  RunServices services_;
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
    app.footer(
        "Speaks MCP (2025-11-25, 2025-06-18, 2025-03-26) on stdin/stdout, one JSON-RPC message "
        "per line; logs go to stderr. Serves the tools of toolvfs.toml and the builtin tools.");
  }

  int Run(const CommonOptions& common) override {
    Result<std::unique_ptr<ProjectFiles>> store = OpenProject(common.project);
    if (!store.ok()) return ReportStatus("--project", store.status());
    Result<LoadedConfig> loaded = LoadToolConfig(common);
    if (!loaded.ok()) return ReportError("mcp", loaded.status().message());
    ReportConfigWarnings(*loaded, common);
    // Nobody at a terminal answers questions here: stdin is the protocol.
    CommonOptions for_services = common;
    for_services.no_interaction = true;
    Result<RunServices> services = PrepareRunServices(for_services, loaded->path);
    if (!services.ok()) return ReportError("mcp", services.status().message());

    ConfiguredToolHost tools(**store, std::move(loaded).value(), std::move(services).value());
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
  size_t max_result_bytes_ = size_t{1} << 20;
};

}  // namespace

std::unique_ptr<Command> NewMcpCommand() { return std::make_unique<McpCommand>(); }

}  // namespace toolvfs
