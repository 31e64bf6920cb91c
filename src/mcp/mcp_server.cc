#include "mcp/mcp_server.h"

#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>


namespace toolvfs {
namespace {

// How often a request to the client looks at its cancel tokens (the call's
// own wakes it at once; an inquirer's Cancel comes from another thread).
constexpr auto kClientRequestPoll = std::chrono::milliseconds(100);

bool IsKnownVersion(std::string_view version) {
  for (std::string_view known : kMcpProtocolVersions) {
    if (known == version) return true;
  }
  return false;
}

// One content block in MCP's shape: text as text; a block the runtime kept
// as JSON (resource) as it is; anything else as its readable text.
void WriteContentBlock(JsonWriter& writer, const ContentBlock& block, std::string_view text) {
  if (block.type != "text" && !block.json.empty()) {
    writer.RawValue(block.json.data(), block.json.size(), rapidjson::kObjectType);
    return;
  }
  writer.StartObject();
  WriteJsonKey(writer, "type");
  writer.String("text");
  WriteJsonKey(writer, "text");
  writer.String(text);
  writer.EndObject();
}

// Whether `text` is one JSON object (what structuredContent must be).
bool IsJsonObject(std::string_view text) {
  if (!text.starts_with('{')) return false;
  simdjson::dom::parser parser;
  simdjson::dom::element element;
  return parser.parse(simdjson::padded_string(text)).get(element) == simdjson::SUCCESS && element.is_object();
}

void WriteAnnotations(JsonWriter& writer, const McpToolAnnotations& annotations) {
  writer.StartObject();
  const std::pair<std::string_view, const std::optional<bool>*> hints[] = {
      {"readOnlyHint", &annotations.read_only},
      {"destructiveHint", &annotations.destructive},
      {"idempotentHint", &annotations.idempotent},
      {"openWorldHint", &annotations.open_world},
  };
  for (const auto& [key, value] : hints) {
    if (!*value) continue;
    WriteJsonKey(writer, key);
    writer.Bool(**value);
  }
  writer.EndObject();
}

// A whole number as an integer (50, not 50.0), anything else as a double.
void WriteNumber(JsonWriter& writer, double value) {
  if (value == std::floor(value) && std::fabs(value) < 9.0e15) {
    writer.Int64(static_cast<int64_t>(value));
  } else {
    writer.Double(value);
  }
}

}  // namespace

std::string_view CutAtUtf8Boundary(std::string_view text, size_t limit) {
  if (text.size() <= limit) return text;
  size_t end = limit;
  // Step back over continuation bytes (10xxxxxx) to the start of a sequence.
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return text.substr(0, end);
}

bool McpCall::ClientHas(std::string_view capability) const {
  return server_ != nullptr && send_ != nullptr && server_->ClientHas(capability);
}

Result<std::string> McpCall::RequestClient(std::string_view method, std::string_view params_json,
                                           const CancelToken* also_cancel) {
  if (server_ == nullptr || send_ == nullptr) {
    return Status(StatusCode::kUnsupported, "this call has no channel to the client to send " + std::string(method));
  }
  return server_->RequestClient(*send_, request_id_json_, cancel_, also_cancel, method, params_json);
}

void McpCall::ReportProgress(double progress, std::optional<double> total, std::string_view message) {
  if (server_ == nullptr || send_ == nullptr || !progress_requested_) return;
  server_->SendToolProgress(*this, progress, total, message);
}

void McpCall::Log(ToolLogLevel level, std::string_view logger, std::string_view message,
                  std::string_view data_json) {
  if (server_ == nullptr || send_ == nullptr) return;
  server_->SendLog(*send_, request_id_json_, level, logger, message, data_json);
}

McpServer::McpServer(McpToolHost& tools, McpServerOptions options)
    : tools_(tools), options_(std::move(options)), log_level_(options_.log_level) {}

std::string McpServer::protocol_version() const {
  std::lock_guard lock(state_mutex_);
  return protocol_version_;
}

bool McpServer::ClientHas(std::string_view capability) const {
  std::lock_guard lock(state_mutex_);
  return std::find(client_capabilities_.begin(), client_capabilities_.end(), capability) !=
         client_capabilities_.end();
}

ParsedLine McpServer::Parse(std::string_view line) {
  // One parser, lines from any transport thread (an HTTP transport submits
  // from several); each message owns its document once parsed.
  std::lock_guard lock(parser_mutex_);
  return parser_.Parse(line);
}

std::optional<WireMessage> McpServer::HandleLine(std::string_view line) {
  ParsedLine parsed = Parse(line);
  if (parsed.is_blank()) return std::nullopt;
  if (parsed.is_error()) return SerializeProtocolError(parsed.error());
  const Message& message = parsed.message();
  if (message.kind() == MessageKind::kResponse) {
    TakeClientResponse(message);
    return std::nullopt;
  }
  // Notifications (initialized, cancelled of a call already answered)
  // need no answer.
  if (message.kind() != MessageKind::kRequest) return std::nullopt;
  return Dispatch(message);
}

McpServer::~McpServer() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  progress_wakeup_.notify_all();
  work_ready_.notify_all();
  // Workers run the calls still queued or running before they stop.
  for (std::thread& worker : workers_) worker.join();
  if (progress_thread_.joinable()) progress_thread_.join();
}

void McpServer::RunWorker() {
  std::unique_lock lock(mutex_);
  for (;;) {
    ++idle_workers_;
    work_ready_.wait(lock, [&] { return stopping_ || !work_.empty(); });
    --idle_workers_;
    if (work_.empty()) return;  // stopping, nothing left
    std::function<void()> job = std::move(work_.front());
    work_.pop_front();
    lock.unlock();
    job();
    lock.lock();
  }
}

void McpServer::CancelCall(const Message& notification) {
  std::optional<std::string> id = notification.params().Json("requestId");
  if (!id) return;
  {
    std::lock_guard lock(mutex_);
    auto found = running_.find(*id);
    // A call that already ended (or never was) is no error: the
    // notification and the answer may cross.
    if (found == running_.end()) return;
    found->second.cancelled_by_client = true;
    found->second.cancel->Cancel();
  }
  client_answered_.notify_all();  // a call waiting for the client stops waiting
}

void McpServer::CancelAll() {
  {
    std::lock_guard lock(mutex_);
    all_cancelled_ = true;  // a call accepted from now on is cancelled at once (Accept)
    for (auto& [id, call] : running_) {
      call.cancelled_by_client = true;
      call.cancel->Cancel();
    }
  }
  client_answered_.notify_all();
}

bool McpServer::WaitForCalls(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  return call_ended_.wait_for(lock, timeout, [&] { return unanswered_calls_ == 0; });
}

void McpServer::TakeClientResponse(const Message& response) {
  if (!response.id().is_integer()) return;  // not an id this server gave
  {
    std::lock_guard lock(mutex_);
    auto found = client_requests_.find(response.id().integer());
    // A late answer to a request that timed out or was cancelled.
    if (found == client_requests_.end()) return;
    if (response.is_error()) {
      found->second.error = std::string(response.error_message());
    } else {
      found->second.result = response.result_json();
    }
  }
  client_answered_.notify_all();
}

void McpServer::Emit(const McpSend& send, const WireMessage& message, const McpOutgoing& what) {
  if (routed_send_) {
    routed_send_(message, what);
  } else {
    send(message);
  }
}

void McpServer::Answer(const McpSend& send, const RequestId& id, const WireMessage& answer) {
  if (!routed_send_) {
    send(answer);
    return;
  }
  const std::string id_json = id.ToJson();
  Emit(send, answer, {.is_answer = true, .id_json = id_json});
}

Result<std::string> McpServer::RequestClient(const McpSend& send, std::string_view request_id_json,
                                             const CancelToken& cancel, const CancelToken* also_cancel,
                                             std::string_view method, std::string_view params_json) {
  int64_t id;
  {
    std::lock_guard lock(mutex_);
    id = next_client_request_id_++;
    client_requests_[id];
  }
  Emit(send, SerializeRequest(id, method, params_json), {.related_request_id_json = request_id_json});
  const auto deadline = std::chrono::steady_clock::now() + options_.client_request_timeout;
  std::unique_lock lock(mutex_);
  for (;;) {
    ClientRequest& request = client_requests_[id];
    if (request.result || request.error) break;
    const bool cancelled = cancel.cancelled() || (also_cancel != nullptr && also_cancel->cancelled());
    const bool timed_out = std::chrono::steady_clock::now() >= deadline;
    if (cancelled || timed_out) {
      client_requests_.erase(id);
      lock.unlock();
      const std::string reason = cancelled ? "the tool call was cancelled" : "no answer in time";
      Emit(send, SerializeNotification("notifications/cancelled", [&](JsonWriter& writer) {
             writer.StartObject();
             WriteJsonKey(writer, "requestId");
             writer.Int64(id);
             WriteJsonKey(writer, "reason");
             writer.String(reason);
             writer.EndObject();
           }),
           {.related_request_id_json = request_id_json});
      if (cancelled) return Status(StatusCode::kCancelled, std::string(method) + " was cancelled with its tool call");
      return Status(StatusCode::kTimeout,
                    "the client did not answer " + std::string(method) + " within " +
                        std::to_string(std::chrono::duration_cast<std::chrono::seconds>(
                                           options_.client_request_timeout)
                                           .count()) +
                        " s");
    }
    client_answered_.wait_until(lock, std::min(deadline, std::chrono::steady_clock::now() + kClientRequestPoll));
  }
  ClientRequest request = std::move(client_requests_[id]);
  client_requests_.erase(id);
  if (request.error) {
    return Status(StatusCode::kUnsupported, "the client answered " + std::string(method) + " with an error: " +
                                                *request.error);
  }
  return std::move(*request.result);
}

std::function<void()> McpServer::Accept(std::string_view line, const McpSend& send) {
  return Accept(Parse(line), send);
}

std::function<void()> McpServer::Accept(ParsedLine parsed, const McpSend& send) {
  {
    std::lock_guard lock(state_mutex_);
    notify_send_ = &send;
  }
  if (parsed.is_blank()) return {};
  if (parsed.is_error()) {
    Answer(send, parsed.error().id, SerializeProtocolError(parsed.error()));
    return {};
  }
  Message& message = parsed.message();
  if (message.kind() == MessageKind::kResponse) {
    TakeClientResponse(message);
    return {};
  }
  if (message.kind() == MessageKind::kNotification && message.method() == "notifications/cancelled") {
    CancelCall(message);
    return {};
  }
  if (message.kind() != MessageKind::kRequest) return {};
  if (message.method() != "tools/call" || protocol_version().empty()) {
    Answer(send, message.id(), Dispatch(message));
    return {};
  }
  // The progress token, if the client asked for progress.
  std::string progress_token;
  Result<std::optional<Params>> meta = message.params().OptionalObject("_meta");
  if (!meta.ok()) {
    Answer(send, message.id(),
           SerializeError(message.id(), kJsonRpcInvalidParams, "Invalid params: '_meta' must be an object"));
    return {};
  }
  if (*meta) {
    std::optional<JsonType> type = (*meta)->TypeOf("progressToken");
    if (type && *type != JsonType::kString && *type != JsonType::kNumber) {
      Answer(send, message.id(),
             SerializeError(message.id(), kJsonRpcInvalidParams,
                            "Invalid params: '_meta.progressToken' must be a string or a number"));
      return {};
    }
    if (type) progress_token = *(*meta)->Json("progressToken");
  }
  const std::string key = message.id().ToJson();
  std::unique_lock lock(mutex_);
  call_ended_.wait(lock, [&] { return unanswered_calls_ < options_.max_concurrent_calls; });
  if (running_.contains(key)) {
    lock.unlock();
    Answer(send, message.id(),
           SerializeError(message.id(), kJsonRpcInvalidRequest,
                          "Invalid Request: id " + key + " is already in use by a running call"));
    return {};
  }
  RunningCall& running = running_[key];
  ++unanswered_calls_;
  running.cancel = std::make_unique<CancelToken>();
  running.progress_token = progress_token;
  if (!progress_token.empty()) running.output = std::make_shared<CallOutput>();
  running.send = &send;
  running.started = std::chrono::steady_clock::now();
  CancelToken* cancel = running.cancel.get();
  if (all_cancelled_) {
    // Accepted after CancelAll (a reader was waiting for a free slot
    // meanwhile): it must not outlive the session either.
    running.cancelled_by_client = true;
    cancel->Cancel();
  }

  auto owned = std::make_shared<Message>(std::move(message));
  if (!progress_token.empty() && !progress_thread_.joinable()) StartProgressThread();
  return [this, owned, cancel, key, &send, wants_progress = !progress_token.empty()] {
    McpCall call(this, &send, *cancel, wants_progress, key);
    {
      std::lock_guard guard(mutex_);
      running_[key].call = &call;
    }
    WireMessage answer = CallTool(*owned, call);
    bool cancelled_by_client = false;
    std::shared_ptr<CallOutput> output;
    {
      std::lock_guard guard(mutex_);
      auto found = running_.find(key);
      cancelled_by_client = found->second.cancelled_by_client;
      output = std::move(found->second.output);
      running_.erase(found);
    }
    if (output) {
      // A progress notification being sent goes first; none follows.
      std::lock_guard output_lock(output->mutex);
      output->answered = true;
    }
    if (!cancelled_by_client) Emit(send, answer, {.is_answer = true, .id_json = key});
    {
      std::lock_guard guard(mutex_);
      --unanswered_calls_;
    }
    call_ended_.notify_all();
  };
}

void McpServer::Submit(std::string_view line, const McpSend& send) {
  if (std::function<void()> job = Accept(line, send)) RunOnPool(std::move(job));
}

void McpServer::Submit(ParsedLine parsed, const McpSend& send) {
  if (std::function<void()> job = Accept(std::move(parsed), send)) RunOnPool(std::move(job));
}

void McpServer::RunOnPool(std::function<void()> job) {
  std::lock_guard lock(mutex_);
  work_.push_back(std::move(job));
  // Threads are kept and reused: making one per call costs a stack's
  // mmap/munmap and TLB shootdowns on every call (bench/mcp_bench).
  // Each queued call needs a worker of its own (a slow call must not hold
  // up the next): idle ones that have not yet taken a job count.
  if (work_.size() > idle_workers_ && workers_.size() < options_.max_concurrent_calls) {
    workers_.emplace_back([this] { RunWorker(); });
  }
  work_ready_.notify_one();
}

void McpServer::StartProgressThread() {
  // Called with mutex_ held; the thread takes it in its loop.
  progress_thread_ = std::thread([this] {
    std::unique_lock lock(mutex_);
    while (!stopping_) {
      progress_wakeup_.wait_for(lock, options_.progress_interval);
      if (stopping_) break;
      lock.unlock();
      SendProgress();
      lock.lock();
    }
  });
}

void McpServer::SendCallProgress(
    const std::string& id, const std::function<std::optional<WireMessage>(const std::string& id, RunningCall&)>& build) {
  std::shared_ptr<CallOutput> output;
  {
    std::lock_guard lock(mutex_);
    auto found = running_.find(id);
    if (found == running_.end() || !found->second.output) return;
    output = found->second.output;
  }
  std::lock_guard output_lock(output->mutex);
  if (output->answered) return;
  std::optional<WireMessage> message;
  const McpSend* send;
  std::string progress_token;
  {
    std::lock_guard lock(mutex_);
    auto found = running_.find(id);
    if (found == running_.end()) return;
    message = build(id, found->second);
    send = found->second.send;
    progress_token = found->second.progress_token;
  }
  // Written with mutex_ released: the client may be slow to read.
  if (message) {
    Emit(*send, *message, {.related_request_id_json = id, .progress_token = progress_token});
  }
}

void McpServer::SendProgress() {
  std::vector<std::string> ids;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [id, running] : running_) {
      if (!running.progress_token.empty()) ids.push_back(id);
    }
  }
  const auto now = std::chrono::steady_clock::now();
  for (const std::string& id : ids) {
    SendCallProgress(id, [&](const std::string&, RunningCall& running) -> std::optional<WireMessage> {
      if (running.call == nullptr || running.cancel->cancelled() || running.tool_reports_progress) {
        return std::nullopt;
      }
      const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(now - running.started).count();
      const uint64_t work = running.call->work_done();
      // `progress` must grow with every notification: it is the number of
      // notifications sent; the message carries the real counts.
      ++running.progress_sent;
      running.last_progress = static_cast<double>(running.progress_sent);
      const std::string text = "running for " + std::to_string(seconds) + " s; " + std::to_string(work) +
                               (work == 1 ? " request" : " requests") + " of the tool decided by its policy";
      return SerializeNotification("notifications/progress", [&](JsonWriter& writer) {
        writer.StartObject();
        WriteJsonKey(writer, "progressToken");
        writer.RawValue(running.progress_token.data(), running.progress_token.size(), rapidjson::kStringType);
        WriteJsonKey(writer, "progress");
        writer.Uint64(running.progress_sent);
        WriteJsonKey(writer, "message");
        writer.String(text);
        writer.EndObject();
      });
    });
  }
}

void McpServer::SendToolProgress(const McpCall& call, double progress, std::optional<double> total,
                                 std::string_view message) {
  SendCallProgress(call.request_id_json(), [&](const std::string&, RunningCall& running) -> std::optional<WireMessage> {
    if (running.call != &call || running.cancel->cancelled()) return std::nullopt;
    if (!running.tool_reports_progress) {
      // The server's timed reports stop here; they counted 1, 2, 3, … and
      // MCP progress must grow, so the tool's own values go on from there.
      running.tool_reports_progress = true;
      running.tool_progress_offset = running.last_progress;
    }
    const double shown = running.tool_progress_offset + progress;
    if (running.progress_sent > 0 && shown <= running.last_progress) return std::nullopt;
    running.last_progress = shown;
    ++running.progress_sent;
    return SerializeNotification("notifications/progress", [&](JsonWriter& writer) {
      writer.StartObject();
      WriteJsonKey(writer, "progressToken");
      writer.RawValue(running.progress_token.data(), running.progress_token.size(), rapidjson::kStringType);
      WriteJsonKey(writer, "progress");
      WriteNumber(writer, shown);
      if (total && *total > 0) {
        WriteJsonKey(writer, "total");
        WriteNumber(writer, running.tool_progress_offset + *total);
      }
      if (!message.empty()) {
        WriteJsonKey(writer, "message");
        writer.String(message);
      }
      writer.EndObject();
    });
  });
}

void McpServer::SendLog(const McpSend& send, std::string_view related_request_id_json, ToolLogLevel level,
                        std::string_view logger, std::string_view message, std::string_view data_json) {
  if (level < log_level_.load() || protocol_version().empty()) return;
  const WireMessage line = SerializeNotification("notifications/message", [&](JsonWriter& writer) {
    writer.StartObject();
    WriteJsonKey(writer, "level");
    writer.String(ToolLogLevelName(level));
    WriteJsonKey(writer, "logger");
    writer.String(logger);
    WriteJsonKey(writer, "data");
    if (data_json.empty()) {
      writer.String(message);
    } else {
      writer.StartObject();
      WriteJsonKey(writer, "message");
      writer.String(message);
      WriteJsonKey(writer, "data");
      writer.RawValue(data_json.data(), data_json.size(), rapidjson::kObjectType);
      writer.EndObject();
    }
    writer.EndObject();
  });
  Emit(send, line, {.related_request_id_json = related_request_id_json});
}

void McpServer::NotifyToolsChanged() {
  const McpSend* send;
  {
    std::lock_guard lock(state_mutex_);
    if (protocol_version_.empty() || notify_send_ == nullptr) return;
    send = notify_send_;
    structured_.clear();
  }
  Emit(*send, SerializeNotification("notifications/tools/list_changed", [](JsonWriter& writer) {
         writer.StartObject();
         writer.EndObject();
       }),
       {});
}

void McpServer::Log(ToolLogLevel level, std::string_view text) {
  const McpSend* send;
  {
    std::lock_guard lock(state_mutex_);
    if (notify_send_ == nullptr) return;
    send = notify_send_;
  }
  SendLog(*send, {}, level, options_.server_name, text, {});
}

WireMessage McpServer::Dispatch(const Message& message) {
  const std::string_view method = message.method();
  if (method == "initialize") return Initialize(message);
  if (method == "ping") return SerializeEmptyResult(message.id());
  if (protocol_version().empty()) {
    return SerializeError(message.id(), kJsonRpcInvalidRequest,
                          "Invalid Request: '" + std::string(method) + "' before initialize");
  }
  if (method == "tools/list") return ListTools(message);
  if (method == "logging/setLevel") return SetLogLevel(message);
  if (method == "tools/call") {
    CancelToken cancel;
    McpCall call(this, nullptr, cancel);
    return CallTool(message, call);
  }
  return SerializeError(message.id(), kJsonRpcMethodNotFound,
                        "Method not found: '" + std::string(method) + "'");
}

WireMessage McpServer::Initialize(const Message& message) {
  Result<std::string_view> requested = message.params().String("protocolVersion");
  if (!requested.ok()) {
    return SerializeError(message.id(), kJsonRpcInvalidParams, requested.status().message());
  }
  Result<std::optional<Params>> capabilities = message.params().OptionalObject("capabilities");
  if (!capabilities.ok()) {
    return SerializeError(message.id(), kJsonRpcInvalidParams, "Invalid params: 'capabilities' must be an object");
  }
  std::string version;
  {
    std::lock_guard lock(state_mutex_);
    protocol_version_ = IsKnownVersion(*requested) ? std::string(*requested) : std::string(kMcpProtocolVersions[0]);
    version = protocol_version_;
    client_capabilities_.clear();
    for (std::string_view capability : {"elicitation", "sampling", "roots"}) {
      if (*capabilities && (*capabilities)->TypeOf(capability) == JsonType::kObject) {
        client_capabilities_.emplace_back(capability);
      }
    }
  }
  return SerializeResult(message.id(), [&](JsonWriter& writer) {
    writer.StartObject();
    WriteJsonKey(writer, "protocolVersion");
    writer.String(version);
    WriteJsonKey(writer, "capabilities");
    writer.StartObject();
    WriteJsonKey(writer, "tools");
    writer.StartObject();
    WriteJsonKey(writer, "listChanged");
    writer.Bool(options_.tools_list_changed);
    writer.EndObject();
    WriteJsonKey(writer, "logging");
    writer.StartObject();
    writer.EndObject();
    writer.EndObject();
    WriteJsonKey(writer, "serverInfo");
    writer.StartObject();
    WriteJsonKey(writer, "name");
    writer.String(options_.server_name);
    WriteJsonKey(writer, "version");
    writer.String(options_.server_version);
    writer.EndObject();
    if (!options_.instructions.empty()) {
      WriteJsonKey(writer, "instructions");
      writer.String(options_.instructions);
    }
    writer.EndObject();
  });
}

WireMessage McpServer::SetLogLevel(const Message& message) {
  Result<std::string_view> level = message.params().String("level");
  if (!level.ok()) return SerializeError(message.id(), kJsonRpcInvalidParams, level.status().message());
  std::optional<ToolLogLevel> parsed = ParseToolLogLevel(*level);
  if (!parsed) {
    return SerializeError(message.id(), kJsonRpcInvalidParams,
                          "Invalid params: unknown log level '" + std::string(*level) +
                              "' (debug, info, notice, warning, error, critical, alert, emergency)");
  }
  log_level_.store(*parsed);
  return SerializeEmptyResult(message.id());
}

WireMessage McpServer::ListTools(const Message& message) {
  std::vector<McpToolListing> tools = tools_.ListTools();
  {
    std::lock_guard lock(state_mutex_);
    structured_.clear();
    for (const McpToolListing& tool : tools) structured_[tool.name] = !tool.output_schema_json.empty();
  }
  return SerializeResult(message.id(), [&](JsonWriter& writer) {
    writer.StartObject();
    WriteJsonKey(writer, "tools");
    writer.StartArray();
    for (const McpToolListing& tool : tools) {
      writer.StartObject();
      WriteJsonKey(writer, "name");
      writer.String(tool.name);
      if (!tool.description.empty()) {
        WriteJsonKey(writer, "description");
        writer.String(tool.description);
      }
      WriteJsonKey(writer, "inputSchema");
      writer.RawValue(tool.input_schema_json.data(), tool.input_schema_json.size(), rapidjson::kObjectType);
      if (!tool.output_schema_json.empty()) {
        WriteJsonKey(writer, "outputSchema");
        writer.RawValue(tool.output_schema_json.data(), tool.output_schema_json.size(), rapidjson::kObjectType);
      }
      if (!tool.annotations.empty()) {
        WriteJsonKey(writer, "annotations");
        WriteAnnotations(writer, tool.annotations);
      }
      writer.EndObject();
    }
    writer.EndArray();
    writer.EndObject();
  });
}

bool McpServer::IsStructured(std::string_view tool) {
  {
    std::lock_guard lock(state_mutex_);
    if (auto found = structured_.find(tool); found != structured_.end()) return found->second;
  }
  std::vector<McpToolListing> tools = tools_.ListTools();
  std::lock_guard lock(state_mutex_);
  for (const McpToolListing& listed : tools) structured_[listed.name] = !listed.output_schema_json.empty();
  auto found = structured_.find(tool);
  return found != structured_.end() && found->second;
}

WireMessage McpServer::CallTool(const Message& message, McpCall& call) {
  const Params& params = message.params();
  Result<std::string_view> name = params.String("name");
  if (!name.ok()) return SerializeError(message.id(), kJsonRpcInvalidParams, name.status().message());
  std::string arguments = params.Json("arguments").value_or("{}");
  if (arguments == "null") arguments = "{}";
  if (!arguments.starts_with('{')) {
    return SerializeError(message.id(), kJsonRpcInvalidParams, "Invalid params: 'arguments' must be an object");
  }
  const auto started = std::chrono::steady_clock::now();
  Result<Outcome> outcome = tools_.CallToolInCall(*name, arguments, call);
  if (!outcome.ok() && outcome.status().code() == StatusCode::kNotFound) {
    return SerializeError(message.id(), kJsonRpcInvalidParams, outcome.status().message());
  }
  const bool failed = !outcome.ok() || outcome->kind != Outcome::Kind::kCompleted || outcome->is_error;
  if (log_level_.load() <= ToolLogLevel::kDebug) {  // built only when it may be sent
    Log(ToolLogLevel::kDebug,
        "tools/call " + std::string(*name) + (failed ? " failed" : " ended") + " after " +
            std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                                 started)
                               .count()) +
            " ms");
  }
  // structuredContent: the one text block, when it is the JSON object the
  // tool's output schema describes and nothing of it was cut.
  const ContentBlock* structured = nullptr;
  if (!failed && outcome->content.size() == 1 && outcome->content[0].type == "text" &&
      outcome->content[0].text.size() <= options_.max_result_bytes && IsStructured(*name) &&
      IsJsonObject(outcome->content[0].text)) {
    structured = &outcome->content[0];
  }
  // Everything else is the tool's own result: errors are isError results,
  // so the model sees them (MCP tools, "Error Handling").
  return SerializeResult(message.id(), [&](JsonWriter& writer) {
    writer.StartObject();
    WriteJsonKey(writer, "content");
    writer.StartArray();
    bool is_error = true;
    size_t budget = options_.max_result_bytes;
    if (!outcome.ok()) {
      WriteContentBlock(writer, ContentBlock::Text(outcome.status().message()), outcome.status().message());
    } else if (outcome->kind == Outcome::Kind::kNeedsInput) {
      const std::string text = "The tool asks a question this server cannot put to the client: " +
                               (outcome->question ? outcome->question->text : std::string("(no text)"));
      WriteContentBlock(writer, ContentBlock::Text(text), text);
    } else {
      is_error = outcome->is_error || outcome->kind == Outcome::Kind::kCancelled;
      size_t cut = 0;
      for (const ContentBlock& block : outcome->content) {
        std::string_view text = CutAtUtf8Boundary(block.text, budget);
        cut += block.text.size() - text.size();
        budget -= text.size();
        WriteContentBlock(writer, block, text);
      }
      if (outcome->error && outcome->content.empty()) {
        WriteContentBlock(writer, ContentBlock::Text(outcome->error->message), outcome->error->message);
      }
      if (cut > 0) {
        const std::string note = "[toolvfs: " + std::to_string(cut) + " bytes of the result cut at the " +
                                 std::to_string(options_.max_result_bytes) + "-byte limit (--max-result-bytes)]";
        WriteContentBlock(writer, ContentBlock::Text(note), note);
      }
    }
    writer.EndArray();
    if (structured != nullptr) {
      WriteJsonKey(writer, "structuredContent");
      writer.RawValue(structured->text.data(), structured->text.size(), rapidjson::kObjectType);
    }
    WriteJsonKey(writer, "isError");
    writer.Bool(is_error);
    writer.EndObject();
  });
}

}  // namespace toolvfs
