// The MCP server core of `toolvfs mcp` (SPEC.md §9, docs/mcp.md): JSON-RPC
// 2.0 dispatch of the MCP lifecycle (initialize with version negotiation,
// notifications/initialized, ping), tools/list and tools/call over a
// McpToolHost, which owns the tools and runs them under their runtime,
// policy, sandbox and audit, and logging/setLevel. Transport-free: a
// transport hands it one message line at a time and writes back what it
// returns, so stdio and any later transport share one dispatcher
// (HandleLine answers every request on the caller's thread; Submit runs
// tools/call concurrently; Accept hands a tools/call back to a transport
// that runs it on a thread of its own).
//
// Submit runs each tools/call on a worker thread of a kept pool, so calls
// overlap and a `notifications/cancelled` for a running call cancels it (the runtime
// then sends the tool `cancel`, then SIGTERM/SIGKILL, SPEC.md §4.4); the
// cancelled call gets no answer, as the MCP cancellation rules say.
//
// A running call may send requests to the client (McpCall::RequestClient:
// elicitation); the client's responses come back as lines through Submit
// and are matched by id. A call whose request carries
// `_meta.progressToken` gets `notifications/progress` while it runs.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "core/status.h"
#include "host/cancel_token.h"
// The MCP logging levels are syslog's (RFC 5424), as a tool's log lines
// have them: ToolLogLevel, ParseToolLogLevel and ToolLogLevelName.
#include "host/tool_reports.h"
#include "protocol/jsonrpc.h"
#include "runtime/tool_runtime.h"

namespace toolvfs {

// Protocol revisions this server speaks, newest first. A client asking for
// another one gets the newest (MCP lifecycle, "Version Negotiation").
inline constexpr std::string_view kMcpProtocolVersions[] = {"2025-11-25", "2025-06-18", "2025-03-26"};

// The tool annotations of MCP (all hints; unset ones are left out, so the
// client applies the specification's defaults).
struct McpToolAnnotations {
  std::optional<bool> read_only;    // readOnlyHint: changes nothing
  std::optional<bool> destructive;  // destructiveHint: may overwrite or delete
  std::optional<bool> idempotent;   // idempotentHint: a repeat changes nothing more
  std::optional<bool> open_world;   // openWorldHint: reaches beyond the project (network)

  bool empty() const { return !read_only && !destructive && !idempotent && !open_world; }
};

// One tool as tools/list shows it.
struct McpToolListing {
  std::string name;
  std::string description;
  std::string input_schema_json;  // a JSON Schema object, compact
  // A JSON Schema object for the tool's structured result; empty: none.
  // With one, a result whose only text is a JSON object is also sent as
  // `structuredContent`.
  std::string output_schema_json;
  McpToolAnnotations annotations;
};

class McpServer;

// Sends one message; called from the call threads too, so it must be
// thread-safe.
using McpSend = std::function<void(const WireMessage&)>;

// What a transport needs to know of a message the server sends to route
// it, given with the message so that it is not parsed again (Streamable
// HTTP sends an answer on its request's POST, a call's messages on that
// call's SSE stream).
struct McpOutgoing {
  // An answer (result or error) to the client's request `id_json` (its id
  // as JSON; "null" for a line that could not be read); else a message the
  // server starts (a request or a notification).
  bool is_answer = false;
  std::string_view id_json;
  // A running call's own message (its request to the client, progress,
  // log line): that call's request id as JSON; empty: none.
  std::string_view related_request_id_json;
  // notifications/progress: its progressToken as JSON; empty otherwise.
  std::string_view progress_token;
};

// Sends one message with what a transport routes it by. Thread-safe.
using McpRoutedSend = std::function<void(const WireMessage&, const McpOutgoing&)>;

// One tools/call while it runs, as the tool host sees it: its cancel
// token, a way to ask the client (elicitation) and a counter of the work
// done, reported in progress notifications. Thread-safe.
class McpCall {
 public:
  // `request_id_json`: the call's request id as JSON, for transports
  // that route a call's messages with it (McpOutgoing).
  McpCall(McpServer* server, const McpSend* send, CancelToken& cancel, bool progress_requested = false,
          std::string request_id_json = {})
      : server_(server),
        send_(send),
        cancel_(cancel),
        progress_requested_(progress_requested),
        request_id_json_(std::move(request_id_json)) {}

  CancelToken& cancel() { return cancel_; }
  // The call's request id as JSON; empty for a call answered through
  // HandleLine.
  const std::string& request_id_json() const { return request_id_json_; }

  // Whether the client declared `capability` (e.g. "elicitation") at
  // initialize and this call has a channel to it (a call answered through
  // HandleLine has none).
  bool ClientHas(std::string_view capability) const;

  // Sends the request `method` with `params_json` (a compact object) to
  // the client and waits for its response: the result as compact JSON;
  // the client's error as Unsupported with its message; Timeout after
  // McpServerOptions::client_request_timeout; Cancelled when the call is
  // cancelled or `also_cancel` is (the client then gets
  // notifications/cancelled for the request). Unsupported when the call
  // has no channel to the client.
  Result<std::string> RequestClient(std::string_view method, std::string_view params_json,
                                    const CancelToken* also_cancel = nullptr);

  // Adds to the count of the call's work (requests the policy decided),
  // which progress notifications report.
  void CountWork(uint64_t amount = 1) { work_done_.fetch_add(amount, std::memory_order_relaxed); }
  uint64_t work_done() const { return work_done_.load(std::memory_order_relaxed); }
  // Whether the client asked for progress (so counting work is worth it).
  bool progress_requested() const { return progress_requested_; }

  // The tool's own progress (a vfs tool's `progress` notification): sent
  // as notifications/progress with the call's progressToken, when it has
  // one, instead of the server's elapsed-time reports from then on, its
  // value and total shifted by the last timed report's value. A value
  // not above the last one sent for the call is dropped (MCP wants
  // progress to grow); `total` <= 0 means unknown.
  void ReportProgress(double progress, std::optional<double> total, std::string_view message);
  // A log line of the tool: notifications/message on the call's channel
  // when `level` is at or above the client's (logging/setLevel). `data`:
  // the message as a string, or {"message", "data"} when the tool sent
  // data too (`data_json`, compact; empty: none).
  void Log(ToolLogLevel level, std::string_view logger, std::string_view message, std::string_view data_json);

 private:
  McpServer* server_;
  const McpSend* send_;
  CancelToken& cancel_;
  bool progress_requested_;
  std::string request_id_json_;
  std::atomic<uint64_t> work_done_{0};
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
  // The same with the call's channel to the client (approvals through
  // elicitation, work counted for progress). The default ignores it.
  virtual Result<Outcome> CallToolInCall(std::string_view name, const std::string& arguments_json, McpCall& call) {
    return CallTool(name, arguments_json, call.cancel());
  }
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
  // Declared as tools.listChanged: the transport watches the config and
  // calls NotifyToolsChanged.
  bool tools_list_changed = false;
  // How long a request to the client (an approval) waits for its answer.
  std::chrono::milliseconds client_request_timeout = std::chrono::minutes(5);
  // How often a call with a progressToken gets notifications/progress.
  std::chrono::milliseconds progress_interval = std::chrono::seconds(1);
  // Log messages below this level are not sent until the client sets one
  // with logging/setLevel.
  ToolLogLevel log_level = ToolLogLevel::kWarning;
};

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
  // was cancelled), and a response of the client is handed to the call
  // that asked. `send` must outlive the server; the latest one also
  // carries notifications not tied to a call (log messages, list changes).
  void Submit(std::string_view line, const McpSend& send);
  // The same with the line already parsed (a transport that parsed it to
  // route it need not have it parsed twice).
  void Submit(ParsedLine parsed, const McpSend& send);

  // Submit in two halves, for a transport whose reader threads take turns
  // (mcp_stdio.h): handles `line` at once, in input order, as Submit does
  // (a tools/call is registered, so a cancellation read next finds it),
  // but hands a tools/call back instead of queueing it: the caller runs
  // the returned job on its own thread (it sends the answer), or gives it
  // to RunOnPool. Empty when nothing is left to run. The caller must keep
  // another thread reading while it runs the job, or cancellation and
  // ping stop working.
  std::function<void()> Accept(std::string_view line, const McpSend& send);
  std::function<void()> Accept(ParsedLine parsed, const McpSend& send);
  // Runs a job from Accept on a thread of the server's pool.
  void RunOnPool(std::function<void()> job);

  // Sends every message through `send`, with what it is (McpOutgoing),
  // instead of through the McpSend given to Submit. Set once, before the
  // first Submit.
  void SetRoutedSend(McpRoutedSend send) { routed_send_ = std::move(send); }

  // Cancels every running call (the client is gone) and every request to
  // the client they wait for; their answers are not sent. Calls accepted
  // afterwards are cancelled as they start: the session is ending.
  void CancelAll();

  // Waits up to `timeout` for the running calls to end and their answers
  // to be sent; true when none is left.
  bool WaitForCalls(std::chrono::milliseconds timeout);

  // Sends notifications/tools/list_changed (after initialize, when a
  // transport was seen through Submit).
  void NotifyToolsChanged();

  // Sends notifications/message with `text` when `level` is at or above
  // the client's level (after initialize). Thread-safe.
  void Log(ToolLogLevel level, std::string_view text);

  // Waits for the running calls (cancelling none).
  ~McpServer();

  size_t max_concurrent_calls() const { return options_.max_concurrent_calls; }

  // The version agreed by initialize; empty before it.
  std::string protocol_version() const;

 private:
  friend class McpCall;

  // The progress of a call that asked for it is sent under this lock of
  // its own, not mutex_: a client that stops reading then holds up that
  // call's messages, never Submit or CancelCall; and none follows the
  // answer, which is sent once `answered` was set under the same lock.
  struct CallOutput {
    std::mutex mutex;
    bool answered = false;
  };

  struct RunningCall {
    std::unique_ptr<CancelToken> cancel;
    bool cancelled_by_client = false;
    // For progress: the token as JSON (empty: none), where to send, and
    // the call whose work is counted.
    std::string progress_token;
    std::shared_ptr<CallOutput> output;  // made when progress_token is set
    const McpSend* send = nullptr;
    McpCall* call = nullptr;
    std::chrono::steady_clock::time_point started;
    uint64_t progress_sent = 0;
    // The last `progress` value sent; once the tool reports its own, the
    // server's elapsed-time reports stop.
    double last_progress = 0;
    bool tool_reports_progress = false;
    // The last timed report's value when the tool's own began: added to
    // the tool's values (and total) so that progress keeps growing.
    double tool_progress_offset = 0;
  };

  // A request this server sent to the client, until its response.
  struct ClientRequest {
    std::optional<std::string> result;  // compact JSON
    std::optional<std::string> error;   // the client's error message
  };

  ParsedLine Parse(std::string_view line);
  WireMessage Dispatch(const Message& message);
  WireMessage Initialize(const Message& message);
  WireMessage ListTools(const Message& message);
  WireMessage SetLogLevel(const Message& message);
  WireMessage CallTool(const Message& message, McpCall& call);
  void CancelCall(const Message& notification);
  void TakeClientResponse(const Message& response);
  void RunWorker();
  void StartProgressThread();
  void SendProgress();
  void SendToolProgress(const McpCall& call, double progress, std::optional<double> total,
                        std::string_view message);
  // Sends the notification `build` makes from running call `id` (nullopt:
  // none), in order with the call's other progress and never after its
  // answer (CallOutput); `build` runs with mutex_ held.
  void SendCallProgress(const std::string& id,
                        const std::function<std::optional<WireMessage>(const std::string& id, RunningCall&)>& build);
  // `related_request_id_json`: the call the line belongs to; empty: none.
  void SendLog(const McpSend& send, std::string_view related_request_id_json, ToolLogLevel level,
               std::string_view logger, std::string_view message, std::string_view data_json);
  // Sends `message` through the routed send when the transport set one,
  // else through `send`.
  void Emit(const McpSend& send, const WireMessage& message, const McpOutgoing& what);
  // An answer to `id` (Emit).
  void Answer(const McpSend& send, const RequestId& id, const WireMessage& answer);
  bool ClientHas(std::string_view capability) const;
  Result<std::string> RequestClient(const McpSend& send, std::string_view request_id_json, const CancelToken& cancel,
                                    const CancelToken* also_cancel, std::string_view method,
                                    std::string_view params_json);
  // Whether results of `tool` carry structuredContent (it has an output
  // schema), from the last listing; lists again for a name not seen.
  bool IsStructured(std::string_view tool);

  McpToolHost& tools_;
  McpServerOptions options_;
  std::mutex parser_mutex_;
  MessageParser parser_;

  mutable std::mutex state_mutex_;  // protocol_version_, client capabilities, notify_send_, structured_
  std::string protocol_version_;
  std::vector<std::string> client_capabilities_;
  const McpSend* notify_send_ = nullptr;
  std::map<std::string, bool, std::less<>> structured_;  // tool name -> has an output schema
  std::atomic<ToolLogLevel> log_level_;
  McpRoutedSend routed_send_;  // set before the first Submit, then only read

  std::mutex mutex_;  // running_, work_, workers_, idle_workers_, client_requests_, stopping_
  std::condition_variable call_ended_;
  std::condition_variable client_answered_;
  std::condition_variable progress_wakeup_;
  std::map<std::string, RunningCall> running_;  // by request id as JSON
  size_t unanswered_calls_ = 0;  // started and not yet answered (running_ + being sent)
  bool all_cancelled_ = false;   // CancelAll was called: the session is ending
  // The calls run on a pool of at most max_concurrent_calls threads, made
  // as needed and kept.
  std::deque<std::function<void()>> work_;
  std::vector<std::thread> workers_;
  size_t idle_workers_ = 0;
  std::condition_variable work_ready_;
  std::map<int64_t, ClientRequest> client_requests_;  // by our request id
  int64_t next_client_request_id_ = 1;
  bool stopping_ = false;
  std::thread progress_thread_;
};

// `text` cut to at most `limit` bytes without splitting a UTF-8 sequence.
std::string_view CutAtUtf8Boundary(std::string_view text, size_t limit);

}  // namespace toolvfs
