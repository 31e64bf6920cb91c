// `toolvfs mcp`: serves the tools of toolvfs.toml and the builtin tools to
// an MCP client over stdio (newline-delimited JSON-RPC on stdin/stdout,
// logs on stderr only), or over Streamable HTTP with one session workspace
// per MCP session (--http, cli/mcp_http_serve.h). Each call runs through the tool's runtime under its
// policy, sandbox and audit, as `toolvfs run` would. docs/mcp.md.
#include <CLI/CLI.hpp>
#include <malloc.h>
#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cli/command.h"
#include "cli/mcp_http_serve.h"
#include "cli/project_opening.h"
#include "cli/stop_on_signals.h"
#include "cli/terminal.h"
#include "cli/tool_invocation.h"
#include "core/text.h"
#include "host/cancel_token.h"
#include "mcp/mcp_approvals.h"
#include "mcp/mcp_server.h"
#include "mcp/mcp_stdio.h"
#include "mcp/mcp_tool_metadata.h"
#include "policy/audit.h"
#include "policy/tool_policy.h"
#include "project/project_files.h"
#include "runtime/builtin_runtime.h"
#include "runtime/mcp_runtime.h"
#include "runtime/session_quota_runtime.h"
#include "runtime/stdio_runtime.h"
#include "runtime/tool_runtime.h"
#include "runtime/tool_schema.h"
#include "runtime/vfs_runtime.h"
#include "session/session_tools.h"
#include "session/session_workspace.h"

namespace toolvfs {
namespace {

// A vfs tool's own progress and log lines during one MCP call: forwarded
// to the client as notifications/progress (with the call's progressToken)
// and notifications/message (at the client's level), logger "TOOL" or
// "TOOL/LOGGER".
class McpCallReports final : public ToolReportSink {
 public:
  explicit McpCallReports(McpCall& call) : call_(call) {}

  void OnProgress(const ToolProgress& progress) override {
    call_.ReportProgress(progress.progress, progress.total, progress.message);
  }
  void OnLog(const ToolLogLine& line) override {
    const std::string logger = line.logger.empty() ? line.tool : line.tool + "/" + line.logger;
    call_.Log(line.level, logger, line.message, line.data_json);
  }

 private:
  McpCall& call_;
};

// The tools of one loaded config plus every builtin the config does not
// rename, each run by its runtime. Runtimes are made once and kept for the
// server's life, so MCP servers a config imports are started once (and
// again after a reload that changed [mcp_servers]).
class ConfiguredToolHost final : public McpToolHost {
 public:
  // Over HTTP every session has a host of its own over its own workspace;
  // they share the services (audit). With `session_workspace` the builtin
  // file tools are the session suite (docs/sessions.md).
  ConfiguredToolHost(ProjectFiles& store, LoadedConfig loaded, std::shared_ptr<const RunServices> services,
                     bool session_workspace)
      : store_(store), services_(std::move(services)), session_workspace_(session_workspace) {
    Load(std::move(loaded));
  }

  // Takes a config read again from disk: the next tools/list and every
  // call from now on use it; calls running keep the tool they started with.
  void Reload(LoadedConfig loaded) {
    std::lock_guard mcp_lock(mcp_mutex_);
    std::lock_guard lock(mutex_);
    const bool servers_changed = loaded.config.mcp_servers != loaded_.config.mcp_servers;
    // "Allow for this session" was an answer about a tool as it was: a tool
    // the reload changed or removed (an imported one: its server) asks again.
    approvals_.ForgetTools([&](std::string_view name) {
      const auto before = loaded_.config.tools.find(std::string(name));
      const auto after = loaded.config.tools.find(std::string(name));
      if (before == loaded_.config.tools.end() && after == loaded.config.tools.end()) return servers_changed;
      return before == loaded_.config.tools.end() || after == loaded.config.tools.end() ||
             before->second != after->second;
    });
    if (servers_changed) mcp_.reset();
    imported_.clear();
    imports_listed_ = false;
    Load(std::move(loaded));  // indexes the callable tools again
  }

  // Called on the reader thread while calls run on theirs: the config,
  // the imported tools and the MCP runtime are guarded by mutex_.
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
      imports_listed_ = true;
      for (ImportedMcpTool& imported : imports.tools) {
        // An imported tool's hints are its server's to give; none here.
        listed.push_back({imported.name, imported.tool.description, imported.input_schema_json, {}, {}});
        imported_.emplace(imported.name, std::move(imported.tool));
      }
    }
    IndexCallable();
    return listed;
  }

  Result<Outcome> CallTool(std::string_view name, const std::string& arguments_json,
                           CancelToken& cancel) override {
    McpCall call(nullptr, nullptr, cancel);
    return CallToolInCall(name, arguments_json, call);
  }

  Result<Outcome> CallToolInCall(std::string_view name, const std::string& arguments_json, McpCall& call) override {
    bool listed;
    {
      std::lock_guard lock(mutex_);
      listed = imports_listed_ || !HasImports();
    }
    if (!listed) ListTools();  // a client may call an imported tool without listing first
    // Shared, not copied: a call keeps the tool (and its policy) it started
    // with through a reload, and a read costs no copy of the tool's config.
    std::shared_ptr<const CallableTool> found;
    std::string directory;
    {
      std::lock_guard lock(mutex_);
      if (auto callable = callable_.find(name); callable != callable_.end()) found = callable->second;
      directory = loaded_.directory;
    }
    if (!found) {
      return Status(StatusCode::kNotFound, "Invalid params: unknown tool " + Quote(name) + " (see tools/list)");
    }
    const ToolConfig* tool = &found->tool;
    ToolCall tool_call;
    tool_call.name = tool->name;
    tool_call.arguments_json = arguments_json;
    Result<RuntimeKind> runtime = ResolveRuntime(*tool);
    if (!runtime.ok()) return runtime.status();
    CancelToken& cancel = call.cancel();
    // Per call: requests the policy does not cover are asked of the user
    // through the client (elicitation), and, when the client wants
    // progress, each decided request is counted for it.
    std::unique_ptr<Inquirer> inquirer = NewElicitationInquirer(call, approvals_, protocol_version_());
    std::unique_ptr<AuditSink> counter;
    std::unique_ptr<AuditSink> audit;
    AuditSink* audit_sink = services_->audit.get();
    if (call.progress_requested()) {
      counter = NewCallbackAuditSink([&call](const AuditRecord&) { call.CountWork(); });
      std::vector<AuditSink*> sinks = {counter.get()};
      if (services_->audit) sinks.push_back(services_->audit.get());
      audit = NewFanOutAuditSink(std::move(sinks));
      audit_sink = audit.get();
    }
    // On a session workspace, what a tool changes past the session layer
    // is counted against its quota once the tool ran (session_quota_runtime.h).
    const bool counted_after =
        session_workspace_ && ChangesSessionPastItsLayer(*runtime == RuntimeKind::kBuiltin, tool->name);
    Result<Outcome> outcome = [&]() -> Result<Outcome> {
      switch (*runtime) {
        case RuntimeKind::kMcp: {
          // The MCP runtime runs one call at a time (mcp_runtime.h).
          std::lock_guard lock(mcp_mutex_);
          McpRuntime* mcp;
          {
            std::lock_guard guard(mutex_);
            mcp = &Mcp();
          }
          return mcp->Execute(tool_call, *tool, cancel);
        }
        case RuntimeKind::kBuiltin: {
          BuiltinRuntimeOptions options;
          services_->ConfigureRuntime(options);
          options.inquirer = inquirer.get();
          options.audit = audit_sink;
          options.session_workspace = session_workspace_;
          options.prebuilt_policy = {&found->policy, &found->tool};
          BuiltinRuntime builtin(store_, std::move(options));
          return builtin.Execute(tool_call, *tool, cancel);
        }
        case RuntimeKind::kStdio: {
          StdioRuntimeOptions options;
          services_->ConfigureRuntime(options);
          StdioRuntime stdio(store_, std::move(options));
          return stdio.Execute(tool_call, *tool, cancel);
        }
        default: {
          VfsRuntimeOptions options;
          options.working_directory = directory;
          services_->ConfigureRuntime(options);
          options.inquirer = inquirer.get();
          options.audit = audit_sink;
          McpCallReports reports(call);
          options.reports = &reports;
          options.prebuilt_policy = {&found->policy, &found->tool};
          VfsRuntime vfs(store_, std::move(options));
          return vfs.Execute(tool_call, *tool, cancel);
        }
      }
    }();
    if (!counted_after) return outcome;
    return CheckSessionQuotaAfter(store_, std::move(outcome));
  }

  // The negotiated protocol version, for the approval form's shape.
  void set_protocol_version_source(std::function<std::string()> source) { protocol_version_ = std::move(source); }

 private:
  // With mutex_ held (or before any thread runs).
  void Load(LoadedConfig loaded) {
    loaded_ = std::move(loaded);
    unconfigured_builtins_.clear();
    for (const BuiltinToolInfo& builtin : BuiltinTools()) {
      if (loaded_.config.tools.contains(builtin.name)) continue;
      ToolConfig tool;
      tool.name = builtin.name;
      tool.source = ToolSource::kBuiltin;
      tool.description = builtin.description;
      tool.parameters = builtin.parameters;
      if (session_workspace_) {
        // A session workspace is the agent's own scratch space: readable
        // and writable by the unconfigured builtins (sensitive paths stay
        // protected by the policy).
        tool.has_sandbox_table = true;
        tool.sandbox.filesystem_allow = {""};
        tool.sandbox.filesystem_writable.all = true;
        if (const SessionToolInfo* session_tool = FindSessionTool(builtin.name)) {
          tool.description = std::string(session_tool->description);
        }
      }
      unconfigured_builtins_.emplace(builtin.name, std::move(tool));
    }
    IndexCallable();
  }

  // With mutex_ held: callable_ from the config's tools, the unconfigured
  // builtins and the imported tools, in that order of precedence, each with
  // its policy.
  void IndexCallable() {
    callable_.clear();
    const auto callable = [this](const ToolConfig& tool) {
      return std::make_shared<const CallableTool>(
          CallableTool{tool, ToolPolicy::ForTool(tool, services_->config_project_path)});
    };
    for (const auto& [name, tool] : loaded_.config.tools) {
      if (!IsMcpImport(tool)) callable_.emplace(name, callable(tool));
    }
    for (const auto& [name, tool] : unconfigured_builtins_) callable_.emplace(name, callable(tool));
    for (const auto& [name, tool] : imported_) callable_.emplace(name, callable(tool));
  }

  McpToolListing Listing(const ToolConfig& tool) const {
    std::string description = tool.description;
    const BuiltinToolInfo* builtin = tool.source == ToolSource::kBuiltin ? FindBuiltinTool(tool.name) : nullptr;
    if (description.empty() && builtin != nullptr) description = builtin->description;
    // The schema the runtime checks calls against: a session tool's own
    // on a session workspace.
    BuiltinRuntimeOptions options;
    options.session_workspace = session_workspace_;
    const ConfigValue::Object* parameters = &tool.parameters;
    if (builtin != nullptr) parameters = &BuiltinRuntime(store_, options).Parameters(tool);
    McpToolListing listing{tool.name, std::move(description), InputSchemaJson(*parameters), {}, {}};
    if (builtin != nullptr) {
      McpToolTraits traits = BuiltinToolTraits(tool.name, session_workspace_);
      listing.output_schema_json = std::move(traits.output_schema_json);
      listing.annotations = traits.annotations;
    } else if (tool.source == ToolSource::kLocal) {
      listing.annotations = AnnotationsFromPolicy(tool);
    }
    return listing;
  }

  bool HasImports() const {
    for (const auto& [name, tool] : loaded_.config.tools) {
      if (IsMcpImport(tool)) return true;
    }
    return false;
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
  const bool session_workspace_;
  McpSessionApprovals approvals_;  // "allow for this session", for the server's life
  std::function<std::string()> protocol_version_ = [] { return std::string(kMcpProtocolVersions[0]); };
  std::map<std::string, ToolConfig, std::less<>> unconfigured_builtins_;
  std::map<std::string, ToolConfig, std::less<>> imported_;  // from the last tools/list
  // A tool as a call finds it: its config and its policy, built once when
  // the config is loaded or the tools listed (a builtin call then compiles
  // no path glob).
  struct CallableTool {
    ToolConfig tool;
    ToolPolicy policy;
  };
  // Every tool a call may name, shared with the calls running it.
  std::map<std::string, std::shared_ptr<const CallableTool>, std::less<>> callable_;
  bool imports_listed_ = false;  // imported_ is filled
  std::unique_ptr<McpRuntime> mcp_;
  std::mutex mutex_;      // loaded_, unconfigured_builtins_, imported_, callable_, mcp_
  std::mutex mcp_mutex_;  // one MCP call at a time
};

// Watches the config file by polling its identity (device, inode, size,
// modification time) every `interval`: simple, and it sees an editor's
// rename-over-the-file as well as an in-place write, which inotify on the
// file itself would not. Calls `changed` on its own thread.
class ConfigWatcher {
 public:
  ConfigWatcher(std::string path, std::chrono::milliseconds interval, std::function<void()> changed)
      : path_(std::move(path)), last_(Identity()) {
    thread_ = std::thread([this, interval, changed = std::move(changed)] {
      std::unique_lock lock(mutex_);
      while (!stopping_) {
        wakeup_.wait_for(lock, interval);
        if (stopping_) break;
        const std::string now = Identity();
        if (now == last_) continue;
        last_ = now;
        lock.unlock();
        changed();
        lock.lock();
      }
    });
  }
  ~ConfigWatcher() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wakeup_.notify_all();
    thread_.join();
  }

 private:
  std::string Identity() const {
    struct stat info {};
    if (stat(path_.c_str(), &info) != 0) return "missing";
    return std::to_string(info.st_dev) + ":" + std::to_string(info.st_ino) + ":" + std::to_string(info.st_size) +
           ":" + std::to_string(info.st_mtim.tv_sec) + "." + std::to_string(info.st_mtim.tv_nsec);
  }

  std::string path_;
  std::string last_;
  std::mutex mutex_;
  std::condition_variable wakeup_;
  bool stopping_ = false;
  std::thread thread_;
};

class McpCommand final : public Command {
 public:
  void AddOptions(CLI::App& app) override {
    app.add_option("--max-result-bytes", max_result_bytes_,
                   "Cut a tool's text result beyond this many bytes, with a note (default 1048576)")
        ->check(CLI::PositiveNumber);
    app.add_option("--approval-timeout", approval_timeout_s_,
                   "Seconds an approval asked of the client (elicitation) waits for an answer; then denied "
                   "(default 300)")
        ->check(CLI::PositiveNumber);
    app.add_option("--stall-timeout", stall_timeout_s_,
                   "Seconds the client may leave output unread before it is taken as gone (default 30)")
        ->check(CLI::PositiveNumber);
    AddMcpHttpOptions(app, http_options_);
    app.footer(
        "Speaks MCP (2025-11-25, 2025-06-18, 2025-03-26) on stdin/stdout, one JSON-RPC message "
        "per line; logs go to stderr. Serves the tools of toolvfs.toml and the builtin tools. "
        "With --http: Streamable HTTP at http://ADDR:PORT/mcp, one session workspace per MCP session.\n"
        "Example: toolvfs mcp --project /path/to/project (as the command of an MCP client's server entry)\n"
        "Exit codes: 0 at the end of input (stdio) or on SIGINT/SIGTERM (--http), 1 the stdio channel failed, "
        "2 usage or config error, 69 the store's server is unavailable (try again).");
  }

  int Run(const CommonOptions& common) override {
    // One malloc arena for all threads instead of one per worker: each
    // worker's arena kept ~90 KB resident after its calls (the server's
    // memory target, docs/mcp.md "Memory"), and the calls' allocations are
    // too few for the shared lock to matter (bench/mcp_bench's reads/s).
    mallopt(M_ARENA_MAX, 1);
    if (http_options_.listen) return RunHttp(common);
    // Before anything starts a thread (see StopOnSignals): SIGINT and
    // SIGTERM end the session as the end of input does.
    CancelToken stop_asked;
    StopOnSignals stop_on_signals([&stop_asked] {
      std::fputs("toolvfs mcp: stopping on a signal, as at the end of input\n", stderr);
      stop_asked.Cancel();
    });
    Result<std::unique_ptr<ProjectFiles>> store = OpenCommandProject(common.project, ProjectUse::kWrite);
    if (!store.ok()) return ReportStatus("--project", store.status());
    Result<Serving> serving = PrepareServing(common);
    if (!serving.ok()) return ReportError("mcp", serving.status().message());

    McpServerOptions options = ServerOptions();
    options.tools_list_changed = true;
    options.instructions =
        "Tools of this project's toolvfs.toml and toolvfs's builtin file tools. Paths are "
        "project-relative; each tool runs under its configured policy and sandbox.";
    // On a session workspace the model gets the session suite's own
    // instructions (`toolvfs workspace prompt`).
    Result<bool> is_session = SessionWorkspace::IsSession(**store);
    if (!is_session.ok()) return ReportError("mcp", is_session.status().message());
    // Held while the server runs: the session tools of every call share its
    // state, so the quota's count is walked once, not at every call.
    std::unique_ptr<SessionWorkspace> session;
    if (*is_session) {
      Result<std::unique_ptr<SessionWorkspace>> opened = SessionWorkspace::Open(**store);
      if (!opened.ok()) return ReportError("mcp", opened.status().message());
      session = std::move(opened).value();
      Result<std::string> guidance = SessionGuidance(*session);
      if (!guidance.ok()) return ReportError("mcp", guidance.status().message());
      options.instructions = std::move(guidance).value();
    }

    const std::string config_path = serving->loaded.path;
    ConfiguredToolHost tools(**store, std::move(serving->loaded), std::move(serving->services), *is_session);

    McpStdioOptions stdio;
    stdio.stall_timeout = std::chrono::seconds(stall_timeout_s_);
    stdio.stop_fd = stop_asked.fd();
    // The server's log lines: stderr always, the client as well at or
    // above the level it set (logging/setLevel).
    McpServer* log_server = nullptr;
    std::mutex log_mutex;
    const auto log = [&](ToolLogLevel level, std::string_view text) {
      std::fprintf(stderr, "toolvfs mcp: %.*s: %.*s\n", static_cast<int>(ToolLogLevelName(level).size()),
                   ToolLogLevelName(level).data(), static_cast<int>(text.size()), text.data());
      std::lock_guard lock(log_mutex);
      if (log_server != nullptr) log_server->Log(level, text);
    };
    stdio.log = [&](std::string_view text) {
      std::fprintf(stderr, "toolvfs mcp: warning: %.*s\n", static_cast<int>(text.size()), text.data());
    };
    McpStdioWriter writer(stdio);
    // Declared after the writer, so that its destructor, which waits for
    // the running calls, runs while the writer still exists.
    McpServer server(tools, std::move(options));
    tools.set_protocol_version_source([&server] { return server.protocol_version(); });
    {
      std::lock_guard lock(log_mutex);
      log_server = &server;
    }
    ConfigWatcher watcher(config_path, std::chrono::seconds(1), [&] {
      Result<LoadedConfig> reloaded = LoadToolConfig(common);
      if (!reloaded.ok()) {
        log(ToolLogLevel::kWarning, "the config changed but cannot be used; keeping the tools of before: " +
                                       reloaded.status().message());
        return;
      }
      tools.Reload(std::move(reloaded).value());
      log(ToolLogLevel::kInfo, "reloaded " + config_path + "; the tool list may have changed");
      server.NotifyToolsChanged();
    });
    Status served = ServeMcpOverStdio(server, writer, stdio);
    {
      std::lock_guard lock(log_mutex);
      log_server = nullptr;
    }
    if (!served.ok()) {
      std::fprintf(stderr, "%s\n", served.message().c_str());
      return kExitNoResult;
    }
    return kExitOk;  // ~McpServer waits for the calls still running
  }

 private:
  // The loaded config and the services every tool runs with.
  struct Serving {
    LoadedConfig loaded;
    std::shared_ptr<const RunServices> services;
  };

  // Loads the config (its warnings on stderr) and prepares the services.
  // Nobody at a terminal answers questions: stdin is the protocol, or
  // (over HTTP) nobody is there; approvals go to the client (elicitation),
  // per call.
  static Result<Serving> PrepareServing(const CommonOptions& common) {
    TOOLVFS_ASSIGN_OR_RETURN(LoadedConfig loaded, LoadToolConfig(common));
    ReportConfigWarnings(loaded, common);
    CommonOptions for_services = common;
    for_services.no_interaction = true;
    TOOLVFS_ASSIGN_OR_RETURN(RunServices services, PrepareRunServices(for_services, loaded.path));
    return Serving{std::move(loaded), std::make_shared<const RunServices>(std::move(services))};
  }

  McpServerOptions ServerOptions() const {
    McpServerOptions options;
    options.max_result_bytes = max_result_bytes_;
    options.client_request_timeout = std::chrono::seconds(approval_timeout_s_);
    return options;
  }

  // Over HTTP each MCP session gets a tool host of its own over its own
  // session workspace (mcp_http_serve.h); --project only locates the
  // config, as for a memory: project. The config is not watched there
  // (no listChanged), and the approval form takes the newest protocol
  // revision's shape, since the transport makes each session's server.
  int RunHttp(const CommonOptions& common) {
    if (!kMcpHttpServedInThisProgram) return ServeMcpHttp(http_options_, std::nullopt, ServerOptions(), nullptr);
    Result<Serving> serving = PrepareServing(common);
    if (!serving.ok()) return ReportError("mcp", serving.status().message());
    const std::optional<SessionConfig> session_config = serving->loaded.config.session;
    const LoadedConfig& config = serving->loaded;
    std::shared_ptr<const RunServices> services = serving->services;
    return ServeMcpHttp(http_options_, session_config, ServerOptions(),
                        [&config, services](ProjectFiles& store, SessionWorkspace&) {
                          return std::make_unique<ConfiguredToolHost>(store, config, services,
                                                                      /*session_workspace=*/true);
                        });
  }

  size_t max_result_bytes_ = size_t{1} << 20;
  int64_t approval_timeout_s_ = 300;
  int64_t stall_timeout_s_ = 30;
  McpHttpCommandOptions http_options_;
};

}  // namespace

std::unique_ptr<Command> NewMcpCommand() { return std::make_unique<McpCommand>(); }

}  // namespace toolvfs
