#include "runtime/mcp_client.h"

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <simdjson.h>

#include <algorithm>
#include <cerrno>
#include <thread>
#include <utility>

#include "core/text.h"
#include "protocol/json_writer.h"
#include "protocol/jsonrpc.h"
#include "protocol/ndjson.h"
#include "runtime/outcome_json.h"

namespace toolvfs {

namespace dom = simdjson::dom;
using Clock = std::chrono::steady_clock;

namespace {

static_assert(kLinePadding >= simdjson::SIMDJSON_PADDING,
              "lines from the splitter are parsed in place by simdjson");

constexpr size_t kStderrTailBytes = size_t{64} << 10;
// The longest wait of one poll, so deadlines and the child's exit are
// noticed promptly even when nothing is written.
constexpr int kPollSliceMs = 50;
// What may wait to be written to a server's stdin.
constexpr size_t kMaxQueuedInputBytes = size_t{4} << 20;
// stderr read per pump: a server printing without pause cannot keep the
// client from its deadline.
constexpr int kStderrReadsPerPump = 4;
// After the server closed its stdout: how long to wait for its exit status.
constexpr auto kExitStatusWait = std::chrono::seconds(2);
// How much of an offending line an error message quotes.
constexpr size_t kQuotedLineBytes = 200;
constexpr std::string_view kClientVersion = "0.1.0";

std::string ServerName(std::string_view name) { return "MCP server " + Quote(name); }

// "5 s", or "250 ms" for a timeout that is not whole seconds.
std::string DurationText(std::chrono::milliseconds duration) {
  const int64_t ms = duration.count();
  return ms % 1000 == 0 ? std::to_string(ms / 1000) + " s" : std::to_string(ms) + " ms";
}

std::string CompactJson(dom::element element) { return simdjson::minify(element); }

// The last non-empty line of `text`, or "".
std::string LastLine(std::string_view text) {
  std::vector<std::string> lines = LastLines(text, 1);
  return lines.empty() ? std::string() : lines.back();
}

std::string Excerpt(std::string_view line) {
  std::string text = ToValidUtf8(line.substr(0, kQuotedLineBytes));
  if (line.size() > kQuotedLineBytes) text += "...";
  return EscapeForDisplay(text);
}

// The fixed environment plus the listed host variables (a listed variable
// replaces a fixed entry of the same name).
std::vector<std::string> ServerEnvironment(const PrivateTempDir& temp, const McpClientOptions& options) {
  std::vector<std::string> environment = FixedEnvironment(temp);
  for (const std::string& name : options.server.env) {
    auto found = options.host_environment.find(name);
    if (found == options.host_environment.end()) continue;
    const std::string entry = name + "=" + found->second;
    bool replaced = false;
    for (std::string& existing : environment) {
      if (existing.starts_with(name + "=")) {
        existing = entry;
        replaced = true;
      }
    }
    if (!replaced) environment.push_back(entry);
  }
  return environment;
}

}  // namespace

// The I/O state of the pipes: what waits to be written to stdin, the
// splitter for stdout, stderr's tail, and the parser for messages.
struct McpClient::Pending {
  explicit Pending(size_t max_line_bytes) : lines(max_line_bytes) {}

  std::string to_write;
  LineSplitter lines;
  std::string stderr_text;
  bool stdout_closed = false;
  dom::parser parser;
};

McpClient::McpClient(McpClientOptions options, PrivateTempDir temp, ChildProcess child)
    : options_(std::move(options)),
      temp_(std::move(temp)),
      child_(std::move(child)),
      io_(std::make_unique<Pending>(options_.max_message_bytes)) {}

McpClient::~McpClient() { Shutdown(); }

Result<std::unique_ptr<McpClient>> McpClient::Start(McpClientOptions options, CancelToken& cancel) {
  const std::string what = ServerName(options.server.name);
  TOOLVFS_ASSIGN_OR_RETURN(PrivateTempDir temp, PrivateTempDir::Create());
  LaunchSpec spec;
  spec.program = options.server.command;
  spec.args = options.server.args;
  spec.environment = ServerEnvironment(temp, options);
  spec.working_directory = options.working_directory;
  LimitsConfig& limits = options.policy.sandbox.limits;
  limits.memory_mb = std::max(limits.memory_mb, kMcpServerMinimumMemoryMb);
  Result<ChildProcess> child = LaunchConfined(spec, options.policy, ToolKind::kMcpServer,
                                              options.working_directory, options.confinement);
  if (!child.ok()) {
    return Status(child.status().code(), what + " cannot start: " + child.status().message());
  }
  std::unique_ptr<McpClient> client(new McpClient(std::move(options), std::move(temp), std::move(child).value()));
  TOOLVFS_RETURN_IF_ERROR(client->Initialize(cancel));
  return client;
}

Status McpClient::Initialize(CancelToken& cancel) {
  const std::string what = ServerName(server_name());
  rapidjson::StringBuffer buffer;
  JsonWriter writer(buffer);
  writer.StartObject();
  WriteJsonKey(writer, "protocolVersion");
  WriteJsonString(writer, kMcpProtocolVersion);
  WriteJsonKey(writer, "capabilities");
  writer.StartObject();
  writer.EndObject();
  WriteJsonKey(writer, "clientInfo");
  writer.StartObject();
  WriteJsonKey(writer, "name");
  WriteJsonString(writer, "toolvfs");
  WriteJsonKey(writer, "version");
  WriteJsonString(writer, kClientVersion);
  writer.EndObject();
  writer.EndObject();
  TOOLVFS_ASSIGN_OR_RETURN(
      McpResponse response,
      Request("initialize", JsonView(buffer), options_.startup_timeout, cancel));
  if (response.error) {
    Shutdown();
    return Status(StatusCode::kInternal, what + " refused initialize: " + response.error->Describe());
  }
  dom::element result;
  std::string_view version;
  if (io_->parser.parse(response.result_json).get(result) != simdjson::SUCCESS ||
      result["protocolVersion"].get_string().get(version) != simdjson::SUCCESS) {
    Shutdown();
    return Status(StatusCode::kInternal, what + " answered initialize without a protocolVersion");
  }
  bool supported = false;
  std::string supported_list;
  for (std::string_view candidate : kMcpSupportedProtocolVersions) {
    supported = supported || candidate == version;
    supported_list += (supported_list.empty() ? "" : ", ") + std::string(candidate);
  }
  if (!supported) {
    const std::string message = what + " speaks MCP protocol version " + Quote(version) +
                                ", which toolvfs does not support (it supports " + supported_list + ")";
    Shutdown();
    return Status(StatusCode::kUnsupported, message);
  }
  protocol_version_ = std::string(version);
  Status sent = Send(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
  if (!sent.ok()) return Status(sent.code(), what + " " + sent.message() + " after initialize");
  return sent;
}

Status McpClient::Send(std::string_view line) {
  // A server that sends requests (pings) but never reads its stdin would
  // make the queue of answers grow without end.
  if (io_->to_write.size() + line.size() > kMaxQueuedInputBytes) {
    return Status(StatusCode::kResourceExhausted,
                  "does not read its stdin (over " + std::to_string(kMaxQueuedInputBytes >> 20) + " MiB queued for it)");
  }
  io_->to_write.append(line);
  io_->to_write += '\n';
  return Pump(0, -1);
}

void McpClient::SendCancelled(int64_t id, std::string_view reason) {
  rapidjson::StringBuffer buffer;
  JsonWriter writer(buffer);
  writer.StartObject();
  WriteJsonKey(writer, "jsonrpc");
  WriteJsonString(writer, "2.0");
  WriteJsonKey(writer, "method");
  WriteJsonString(writer, "notifications/cancelled");
  WriteJsonKey(writer, "params");
  writer.StartObject();
  WriteJsonKey(writer, "requestId");
  writer.Int64(id);
  WriteJsonKey(writer, "reason");
  WriteJsonString(writer, reason);
  writer.EndObject();
  writer.EndObject();
  (void)Send(JsonView(buffer));
  // Give the notification a moment to leave before anything else happens.
  const Clock::time_point until = Clock::now() + std::chrono::milliseconds(200);
  while (!io_->to_write.empty() && child_.stdin_fd().valid() && Clock::now() < until) {
    if (!Pump(20, -1).ok()) break;
  }
}

Result<McpResponse> McpClient::Request(std::string_view method, std::string_view params_json,
                                       std::chrono::milliseconds timeout, CancelToken& cancel) {
  const std::string what = ServerName(server_name());
  if (!alive_) return Status(StatusCode::kInternal, what + " is not running");
  const int64_t id = next_id_++;
  Status sent = Send(SerializeRequest(id, method, params_json).line());
  if (!sent.ok()) {
    Shutdown();
    return Status(sent.code(), what + " " + sent.message() + " during " + std::string(method));
  }
  return Await(id, method, timeout, cancel);
}

Result<McpResponse> McpClient::Await(int64_t id, std::string_view method, std::chrono::milliseconds timeout,
                                     CancelToken& cancel) {
  const std::string what = ServerName(server_name());
  const Clock::time_point deadline = Clock::now() + timeout;
  std::optional<McpResponse> answer;
  while (true) {
    // Complete lines already buffered first: one read may bring several.
    while (std::optional<LineSplitter::Event> event = io_->lines.Next()) {
      if (event->kind == LineSplitter::EventKind::kTooLong) {
        Shutdown();
        return Status(StatusCode::kInternal, what + " sent a message longer than " +
                                                 std::to_string(io_->lines.max_line_bytes()) +
                                                 " bytes during " + std::string(method));
      }
      Status handled = HandleLine(event->line, id, answer);
      if (!handled.ok()) {
        Shutdown();
        return Status(handled.code(), what + " " + handled.message() + " during " + std::string(method));
      }
      if (answer) return std::move(*answer);
    }
    if (io_->stdout_closed) {
      const std::string message = ExitedMessage(method);
      Shutdown();
      return Status(StatusCode::kInternal, message);
    }
    if (cancel.cancelled()) {
      SendCancelled(id, "cancelled by the user");
      Shutdown();
      return Status(StatusCode::kCancelled, what + ": " + std::string(method) + " was cancelled");
    }
    const Clock::time_point now = Clock::now();
    if (now >= deadline) {
      SendCancelled(id, "timed out");
      return Status(StatusCode::kTimeout,
                    what + " did not answer " + std::string(method) + " within " + DurationText(timeout));
    }
    const auto remaining = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count();
    Status pumped =
        Pump(static_cast<int>(std::min<int64_t>(remaining + 1, kPollSliceMs)), cancel.fd(), /*read_stdout=*/true);
    if (!pumped.ok()) {
      Shutdown();
      return pumped;
    }
  }
}

Status McpClient::HandleLine(std::string_view line, int64_t id, std::optional<McpResponse>& answer) {
  // Blank lines (and a lone '\r') carry nothing.
  if (line.find_first_not_of(" \t\r") == std::string_view::npos) return OkStatus();
  dom::element message;
  if (io_->parser.parse(line.data(), line.size(), /*realloc_if_needed=*/false).get(message) !=
          simdjson::SUCCESS ||
      !message.is_object()) {
    return Status(StatusCode::kInternal, "wrote a line that is not a JSON-RPC message on stdout: " + Excerpt(line));
  }
  dom::element id_element;
  const bool has_id = message["id"].get(id_element) == simdjson::SUCCESS;
  std::string_view method;
  if (message["method"].get_string().get(method) == simdjson::SUCCESS) {
    if (!has_id) return OkStatus();  // a notification: progress, logging, list_changed
    // A request of the server's. This client offers no capabilities, so it
    // only answers ping.
    rapidjson::StringBuffer buffer;
    JsonWriter writer(buffer);
    writer.StartObject();
    WriteJsonKey(writer, "jsonrpc");
    WriteJsonString(writer, "2.0");
    WriteJsonKey(writer, "id");
    const std::string raw_id = CompactJson(id_element);
    writer.RawValue(raw_id.data(), raw_id.size(), rapidjson::kNumberType);
    if (method == "ping") {
      WriteJsonKey(writer, "result");
      writer.StartObject();
      writer.EndObject();
    } else {
      WriteJsonKey(writer, "error");
      writer.StartObject();
      WriteJsonKey(writer, "code");
      writer.Int(-32601);
      WriteJsonKey(writer, "message");
      WriteJsonString(writer, "Method not found: this client offers no " + std::string(method));
      writer.EndObject();
    }
    writer.EndObject();
    return Send(JsonView(buffer));
  }
  int64_t answered_id = 0;
  if (!has_id || id_element.get_int64().get(answered_id) != simdjson::SUCCESS || answered_id != id) {
    return OkStatus();  // a late answer to a request given up on
  }
  McpResponse response;
  dom::element error;
  if (message["error"].get(error) == simdjson::SUCCESS && error.is_object()) {
    McpRequestError request_error;
    int64_t code = 0;
    std::string_view text;
    if (error["code"].get_int64().get(code) == simdjson::SUCCESS) request_error.code = code;
    if (error["message"].get_string().get(text) == simdjson::SUCCESS) request_error.message = std::string(text);
    if (request_error.message.empty()) request_error.message = "(no message)";
    response.error = std::move(request_error);
  } else {
    dom::element result;
    if (message["result"].get(result) != simdjson::SUCCESS) {
      return Status(StatusCode::kInternal, "answered request " + std::to_string(id) + " with neither result nor error");
    }
    response.result_json = CompactJson(result);
  }
  answer = std::move(response);
  return OkStatus();
}

Status McpClient::Pump(int timeout_ms, int cancel_fd, bool read_stdout) {
  pollfd fds[4];
  nfds_t count = 0;
  UniqueFd& in = child_.stdin_fd();
  UniqueFd& out = child_.stdout_fd();
  UniqueFd& err = child_.stderr_fd();
  if (in.valid() && !io_->to_write.empty()) fds[count++] = pollfd{.fd = in.get(), .events = POLLOUT, .revents = 0};
  if (out.valid() && read_stdout) fds[count++] = pollfd{.fd = out.get(), .events = POLLIN, .revents = 0};
  if (err.valid()) fds[count++] = pollfd{.fd = err.get(), .events = POLLIN, .revents = 0};
  if (cancel_fd >= 0) fds[count++] = pollfd{.fd = cancel_fd, .events = POLLIN, .revents = 0};
  if (poll(fds, count, timeout_ms) < 0 && errno != EINTR) return ErrnoToStatus(errno, "poll");

  while (in.valid() && !io_->to_write.empty()) {
    const ssize_t written = write(in.get(), io_->to_write.data(), io_->to_write.size());
    if (written > 0) {
      io_->to_write.erase(0, static_cast<size_t>(written));
      continue;
    }
    if (written < 0 && errno == EINTR) continue;
    if (written < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    // EPIPE: the server closed its stdin (or died); its stdout's end of
    // file reports that with its exit status.
    in.reset();
    io_->to_write.clear();
  }
  // One chunk of stdout per pump: its lines are consumed before the next
  // read reuses the splitter's buffer.
  if (out.valid() && read_stdout) {
    std::span<char> space = io_->lines.PrepareAppend();
    const ssize_t received = read(out.get(), space.data(), space.size());
    if (received > 0) {
      io_->lines.CommitAppend(static_cast<size_t>(received));
    } else if (received == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
      io_->lines.CommitAppend(0);
      out.reset();
      io_->stdout_closed = true;
    } else {
      io_->lines.CommitAppend(0);
    }
  }
  char buffer[16384];
  for (int reads = 0; err.valid() && reads < kStderrReadsPerPump; ++reads) {
    const ssize_t received = read(err.get(), buffer, sizeof buffer);
    if (received > 0) {
      io_->stderr_text.append(buffer, static_cast<size_t>(received));
      continue;
    }
    if (received < 0 && errno == EINTR) continue;
    if (received < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    err.reset();
  }
  if (io_->stderr_text.size() > kStderrTailBytes) {
    io_->stderr_text.erase(0, io_->stderr_text.size() - kStderrTailBytes);
  }
  return OkStatus();
}

std::string McpClient::ExitedMessage(std::string_view during) {
  std::string message = ServerName(server_name());
  std::optional<ExitStatus> exit;
  const Clock::time_point until = Clock::now() + kExitStatusWait;
  while (true) {
    Result<std::optional<ExitStatus>> reaped = child_.TryWait();
    if (!reaped.ok() || *reaped) {
      if (reaped.ok()) exit = **reaped;
      break;
    }
    if (Clock::now() >= until) break;
    (void)Pump(20, -1);
  }
  // Whatever it printed last, e.g. a stack trace (a grandchild may hold
  // stderr open: not for long).
  const Clock::time_point stderr_until = Clock::now() + std::chrono::milliseconds(500);
  while (exit && child_.stderr_fd().valid() && Clock::now() < stderr_until) {
    if (!Pump(20, -1).ok()) break;
  }
  message += exit ? " " + exit->Describe() : std::string(" closed its stdout");
  message += " during " + std::string(during);
  const std::string last = LastLine(StderrTail());
  if (!last.empty()) message += "; stderr: " + EscapeForDisplay(last);
  return message;
}

std::string McpClient::StderrTail() const { return ToValidUtf8(io_->stderr_text); }

void McpClient::Shutdown() {
  if (!alive_ || child_.pid() < 0) {
    alive_ = false;
    return;
  }
  alive_ = false;
  child_.stdin_fd().reset();
  io_->to_write.clear();
  const auto exited_within = [&](std::chrono::milliseconds grace) {
    const Clock::time_point until = Clock::now() + grace;
    while (true) {
      Result<std::optional<ExitStatus>> reaped = child_.TryWait();
      if (!reaped.ok() || *reaped) return true;
      if (Clock::now() >= until) return false;
      // Keep reading, so a server writing on its way out is not stuck on a
      // full pipe.
      if (child_.stdout_fd().valid() || child_.stderr_fd().valid()) {
        (void)Pump(10, -1, /*read_stdout=*/true);
        while (io_->lines.Next()) {
        }
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    }
  };
  if (exited_within(options_.shutdown_grace)) return;
  (void)child_.Signal(SIGTERM);
  if (exited_within(options_.shutdown_grace)) return;
  (void)child_.Signal(SIGKILL);
  (void)child_.Wait();
}

Result<std::vector<McpToolInfo>> McpClient::ListTools(std::chrono::milliseconds timeout, CancelToken& cancel) {
  const std::string what = ServerName(server_name());
  std::vector<McpToolInfo> tools;
  std::string cursor;
  // A server that keeps handing out cursors must not keep us here forever.
  for (int page = 0; page < 1000; ++page) {
    std::string params;
    if (!cursor.empty()) {
      rapidjson::StringBuffer buffer;
      JsonWriter writer(buffer);
      writer.StartObject();
      WriteJsonKey(writer, "cursor");
      WriteJsonString(writer, cursor);
      writer.EndObject();
      params = JsonText(buffer);
    }
    TOOLVFS_ASSIGN_OR_RETURN(McpResponse response, Request("tools/list", params, timeout, cancel));
    if (response.error) {
      return Status(StatusCode::kInternal, what + " refused tools/list: " + response.error->Describe());
    }
    dom::element result;
    dom::array list;
    if (io_->parser.parse(response.result_json).get(result) != simdjson::SUCCESS ||
        result["tools"].get_array().get(list) != simdjson::SUCCESS) {
      return Status(StatusCode::kInternal, what + " answered tools/list without a 'tools' array");
    }
    for (dom::element entry : list) {
      McpToolInfo info;
      std::string_view text;
      if (entry["name"].get_string().get(text) != simdjson::SUCCESS || text.empty()) {
        return Status(StatusCode::kInternal, what + " listed a tool without a name");
      }
      info.name = std::string(text);
      if (entry["description"].get_string().get(text) == simdjson::SUCCESS) info.description = std::string(text);
      dom::element schema;
      if (entry["inputSchema"].get(schema) == simdjson::SUCCESS) info.input_schema_json = CompactJson(schema);
      tools.push_back(std::move(info));
    }
    std::string_view next;
    if (result["nextCursor"].get_string().get(next) != simdjson::SUCCESS || next.empty()) return tools;
    cursor = std::string(next);
  }
  return Status(StatusCode::kInternal, what + " kept paginating tools/list past 1000 pages");
}

}  // namespace toolvfs
