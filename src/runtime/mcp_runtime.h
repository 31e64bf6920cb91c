// The mcp runtime (SPEC.md §6.4, docs/runtimes.md): runs `source =
// "mcp.SERVER.TOOL"` tools as `tools/call` requests to the configured MCP
// server, through McpClient.
//
// Servers start lazily, on the first call (or listing) that needs them, and
// stay up for the runtime's lifetime: one process per configured server,
// reused by every call. The server runs under the sandbox policy of the
// tool entry that uses it (its `sandbox` table: project access, network,
// limits); should two entries of one server have different policies, each
// policy gets its own process of that server, so a call never runs with
// another entry's rights. A server that died or was cancelled is started
// again by the next call. The destructor shuts every server down.
//
// Not thread-safe: one call at a time.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "project/project_files.h"
#include "runtime/mcp_client.h"
#include "runtime/tool_runtime.h"
#include "runtime/confined_launch.h"
#include "sandbox/sandbox_profile.h"

namespace toolvfs {

struct McpRuntimeOptions {
  // The OS sandbox of its processes (SPEC.md §5): the mode, what to warn
  // about, and the config file that must stay out of their reach.
  ConfinementOptions confinement;
  // The host's environment: a server receives the variables its
  // `mcp_servers.NAME.env` lists, nothing else of it.
  std::map<std::string, std::string> host_environment;
  // Startup (initialize) and tools/list take at most this long, whatever
  // the tool's limits.timeout_s (which bounds each tools/call).
  std::chrono::milliseconds startup_timeout{std::chrono::seconds(30)};
  // At shutdown: after closing stdin, and again after SIGTERM.
  std::chrono::milliseconds shutdown_grace{std::chrono::seconds(2)};
};

class McpRuntime : public ToolRuntime {
 public:
  // `project` must outlive the runtime; `servers` are the config's
  // [mcp_servers] tables.
  McpRuntime(ProjectFiles& project, std::map<std::string, McpServerConfig> servers, McpRuntimeOptions options);
  ~McpRuntime() override;

  // Calls tool.mcp_tool on tool.mcp_server (started if needed) with the
  // call's arguments, checked against tool.parameters when the entry
  // declares any (else passed as they are; the server checks them against
  // its inputSchema). The answer maps to the Outcome: text blocks as text;
  // embedded resources as resource blocks; image and audio blocks as
  // resource blocks with their mime type and data as `blob`; resource
  // links kept as `resource_link` blocks; structuredContent without content
  // as one text block of its JSON; `isError` as an error whose message is
  // the text. A JSON-RPC error answer is an error naming the server, the
  // tool and the server's code and message. limits.timeout_s ends the call
  // with kTimeout (the server is told with notifications/cancelled and
  // kept); cancelling sends notifications/cancelled and stops the server.
  // A server that dies mid-call is an error naming it, its exit status and
  // stderr's last line. Returns an error Status when the call cannot
  // start: not an mcp tool, an import entry without a tool, invalid
  // arguments, a server that cannot be started or fails its handshake.
  Result<Outcome> Execute(const ToolCall& call, const ToolConfig& tool, CancelToken& cancel) override;

  // The tools of the server `entry` names (starting it under the entry's
  // policy if needed), for `toolvfs tools` and `source = "mcp.SERVER"`
  // imports.
  Result<std::vector<McpToolInfo>> ListTools(const ToolConfig& entry, CancelToken& cancel);

  // The running process of `entry`'s server, or null (for tests).
  McpClient* RunningServer(const ToolConfig& entry);

 private:
  struct Running {
    std::string server;
    bool has_sandbox_table = false;
    SandboxConfig sandbox;
    std::unique_ptr<McpClient> client;
  };

  // The live client for `entry`, started now if there is none.
  Result<McpClient*> Server(const ToolConfig& entry, CancelToken& cancel);

  ProjectFiles& project_;
  std::map<std::string, McpServerConfig> servers_;
  McpRuntimeOptions options_;
  // The project's real directory, for as long as servers may run in it.
  std::unique_ptr<MaterializedView> view_;
  // The policies of the servers started on view_, which judge its sync-back.
  std::shared_ptr<ToolWritePolicies> write_policies_ = std::make_shared<ToolWritePolicies>();
  std::vector<Running> running_;
};

// One tool a `source = "mcp.SERVER"` entry imports.
struct ImportedMcpTool {
  // What `toolvfs run` takes: the MCP tool's own name when no configured
  // tool has that name and no other import entry offers it, else
  // "ENTRY.TOOL" (always accepted too; a config name has no dots).
  std::string name;
  std::string entry;  // the import entry's name
  ToolConfig tool;    // the entry with name, mcp_tool and description set
  std::string input_schema_json = "{}";  // the server's inputSchema
};

struct ImportedMcpTools {
  std::vector<ImportedMcpTool> tools;  // in entry order, then the server's order
  // Entries whose server could not be listed: entry name -> one-line error.
  std::map<std::string, std::string> errors;
};

// Whether `tool` is an import entry (`source = "mcp.SERVER"`).
bool IsMcpImport(const ToolConfig& tool);

// The tools of every import entry of `config`, each server started (under
// its entry's policy) and listed. `only_entry`, when set, limits this to
// that entry (for "ENTRY.TOOL": no other server is started).
ImportedMcpTools ListImportedMcpTools(McpRuntime& runtime, const Config& config, CancelToken& cancel,
                                      std::optional<std::string> only_entry = std::nullopt);

// Maps the `result` of tools/call (compact JSON) to an Outcome, as
// McpRuntime::Execute describes; `server` and `tool` are for messages and
// the URIs of image and audio blocks. A result without a content array is
// a failure (kInternal) naming what is wrong.
Outcome McpResultToOutcome(std::string_view result_json, std::string_view server, std::string_view tool);

}  // namespace toolvfs
