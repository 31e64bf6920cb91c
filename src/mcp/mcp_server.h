// The MCP server core of `toolvfs mcp` (SPEC.md §9, docs/mcp.md): JSON-RPC
// 2.0 dispatch of the MCP lifecycle (initialize with version negotiation,
// notifications/initialized, ping) and of tools/list and tools/call over a
// McpToolHost, which owns the tools and runs them under their runtime,
// policy, sandbox and audit. Transport-free: a transport hands it one
// message line at a time and writes back what it returns, so stdio and any
// later transport share one dispatcher.
//
// Calls are answered in order, on the caller's thread (one call at a time):
// see docs/mcp.md for what this leaves out of SPEC.md §9.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "host/cancel_token.h"
#include "protocol/jsonrpc.h"
#include "runtime/tool_runtime.h"

namespace toolvfs {

// Protocol revisions this server speaks, newest first. A client asking for
// another one gets the newest (MCP lifecycle, "Version Negotiation").
inline constexpr std::string_view kMcpProtocolVersions[] = {"2025-11-25", "2025-06-18", "2025-03-26"};

// One tool as tools/list shows it.
struct McpToolListing {
  std::string name;
  std::string description;
  std::string input_schema_json;  // a JSON Schema object, compact
};

// Where the tools come from and how they run. Implemented by the command
// (cli/mcp_command.cc), which knows the config and the runtimes.
class McpToolHost {
 public:
  virtual ~McpToolHost() = default;
  // Every tool the server offers, in a stable order.
  virtual std::vector<McpToolListing> ListTools() = 0;
  // Runs tool `name` with `arguments_json` (a JSON object). NotFound for a
  // name ListTools does not offer; any other error Status is a run that
  // could not start (reported to the client as an isError result).
  virtual Result<Outcome> CallTool(std::string_view name, const std::string& arguments_json,
                                   CancelToken& cancel) = 0;
};

struct McpServerOptions {
  std::string server_name = "toolvfs";
  std::string server_version = "0.1.0";
  std::string instructions;
  // A tool's text content beyond this many bytes is cut (at a UTF-8
  // boundary) and a note says how much was left out.
  size_t max_result_bytes = size_t{1} << 20;
};

class McpServer {
 public:
  // `tools` must outlive the server.
  McpServer(McpToolHost& tools, McpServerOptions options);

  // Handles one message line (without its '\n') and returns the line to
  // send back, if any (requests get one; notifications none; a line that
  // is not JSON-RPC gets the standard error).
  std::optional<WireMessage> HandleLine(std::string_view line);

  // The version agreed by initialize; empty before it.
  const std::string& protocol_version() const { return protocol_version_; }

 private:
  WireMessage Dispatch(const Message& message);
  WireMessage Initialize(const Message& message);
  WireMessage ListTools(const Message& message);
  WireMessage CallTool(const Message& message);

  McpToolHost& tools_;
  McpServerOptions options_;
  MessageParser parser_;
  std::string protocol_version_;
};

// `text` cut to at most `limit` bytes without splitting a UTF-8 sequence.
std::string_view CutAtUtf8Boundary(std::string_view text, size_t limit);

}  // namespace toolvfs
