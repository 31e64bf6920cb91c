// The MCP server core of `toolvfs mcp` (SPEC.md §9, docs/mcp.md): JSON-RPC
// 2.0 dispatch of the MCP lifecycle (initialize with version negotiation,
// notifications/initialized, ping) and of tools/list and tools/call over a
// McpToolHost, which owns the tools and runs them under their runtime,
// policy, sandbox and audit. Transport-free: a transport hands it one
// message line at a time and writes back what it returns, so stdio and any
// later transport share one dispatcher (HandleLine answers every request
// on the caller's thread; Submit runs tools/call concurrently).
//
// Submit runs each tools/call on its own thread, so calls overlap and a
// `notifications/cancelled` for a running call cancels it (the runtime
// then sends the tool `cancel`, then SIGTERM/SIGKILL, SPEC.md §4.4); the
// cancelled call gets no answer, as the MCP cancellation rules say.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <atomic>
#include <utility>
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
  // Calls running at once; Submit blocks its caller (the transport's
  // reader) while this many run, which bounds memory and threads.
  size_t max_concurrent_calls = 16;
};

// Sends one answer; called from the call threads too, so it must be
// thread-safe.
using McpSend = std::function<void(const WireMessage&)>;

class McpServer {
 public:
  // `tools` must outlive the server.
  McpServer(McpToolHost& tools, McpServerOptions options);

  // Handles one message line (without its '\n') and returns the line to
  // send back, if any (requests get one; notifications none; a line that
  // is not JSON-RPC gets the standard error).
  std::optional<WireMessage> HandleLine(std::string_view line);

  // Handles one line like HandleLine, except that a tools/call runs on its
  // own thread and sends its answer through `send` when it ends (unless it
  // was cancelled). `send` must outlive the server.
  void Submit(std::string_view line, const McpSend& send);

  // Waits for the running calls (cancelling none).
  ~McpServer();

  // The version agreed by initialize; empty before it.
  const std::string& protocol_version() const { return protocol_version_; }

 private:
  WireMessage Dispatch(const Message& message);
  WireMessage Initialize(const Message& message);
  WireMessage ListTools(const Message& message);
  WireMessage CallTool(const Message& message, CancelToken& cancel);
  void CancelCall(const Message& notification);
  void JoinFinishedCalls();

  struct RunningCall {
    std::unique_ptr<CancelToken> cancel;
    bool cancelled_by_client = false;
  };

  McpToolHost& tools_;
  McpServerOptions options_;
  MessageParser parser_;
  std::string protocol_version_;

  std::mutex mutex_;
  std::condition_variable call_ended_;
  std::map<std::string, RunningCall> running_;  // by request id as JSON
  std::vector<std::pair<std::thread, std::shared_ptr<std::atomic<bool>>>> threads_;  // (thread, done)
};

// `text` cut to at most `limit` bytes without splitting a UTF-8 sequence.
std::string_view CutAtUtf8Boundary(std::string_view text, size_t limit);

}  // namespace toolvfs
