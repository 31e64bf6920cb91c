#include "mcp/mcp_server.h"

#include <string>
#include <utility>

namespace toolvfs {
namespace {

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

}  // namespace

std::string_view CutAtUtf8Boundary(std::string_view text, size_t limit) {
  if (text.size() <= limit) return text;
  size_t end = limit;
  // Step back over continuation bytes (10xxxxxx) to the start of a sequence.
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return text.substr(0, end);
}

McpServer::McpServer(McpToolHost& tools, McpServerOptions options)
    : tools_(tools), options_(std::move(options)) {}

std::optional<WireMessage> McpServer::HandleLine(std::string_view line) {
  ParsedLine parsed = parser_.Parse(line);
  if (parsed.is_blank()) return std::nullopt;
  if (parsed.is_error()) return SerializeProtocolError(parsed.error());
  const Message& message = parsed.message();
  // Responses (to requests this server does not send) and notifications
  // (initialized, cancelled of a call already answered) need no answer.
  if (message.kind() != MessageKind::kRequest) return std::nullopt;
  return Dispatch(message);
}

McpServer::~McpServer() {
  for (auto& [thread, done] : threads_) thread.join();
}

void McpServer::JoinFinishedCalls() {
  std::erase_if(threads_, [](auto& entry) {
    if (!entry.second->load()) return false;
    entry.first.join();
    return true;
  });
}

void McpServer::CancelCall(const Message& notification) {
  std::optional<std::string> id = notification.params().Json("requestId");
  if (!id) return;
  std::lock_guard lock(mutex_);
  auto found = running_.find(*id);
  // A call that already ended (or never was) is no error: the notification
  // and the answer may cross.
  if (found == running_.end()) return;
  found->second.cancelled_by_client = true;
  found->second.cancel->Cancel();
}

void McpServer::Submit(std::string_view line, const McpSend& send) {
  JoinFinishedCalls();
  ParsedLine parsed = parser_.Parse(line);
  if (parsed.is_blank()) return;
  if (parsed.is_error()) {
    send(SerializeProtocolError(parsed.error()));
    return;
  }
  Message& message = parsed.message();
  if (message.kind() == MessageKind::kNotification && message.method() == "notifications/cancelled") {
    CancelCall(message);
    return;
  }
  if (message.kind() != MessageKind::kRequest) return;
  if (message.method() != "tools/call" || protocol_version_.empty()) {
    send(Dispatch(message));
    return;
  }
  const std::string key = message.id().ToJson();
  std::unique_lock lock(mutex_);
  if (running_.contains(key)) {
    lock.unlock();
    send(SerializeError(message.id(), kJsonRpcInvalidRequest,
                        "Invalid Request: id " + key + " is already in use by a running call"));
    return;
  }
  call_ended_.wait(lock, [&] { return running_.size() < options_.max_concurrent_calls; });
  RunningCall& call = running_[key];
  call.cancel = std::make_unique<CancelToken>();
  CancelToken* cancel = call.cancel.get();
  lock.unlock();

  auto done = std::make_shared<std::atomic<bool>>(false);
  auto owned = std::make_shared<Message>(std::move(message));
  std::thread thread([this, owned, cancel, key, done, &send] {
    WireMessage answer = CallTool(*owned, *cancel);
    bool cancelled_by_client = false;
    {
      std::lock_guard guard(mutex_);
      auto found = running_.find(key);
      cancelled_by_client = found->second.cancelled_by_client;
      running_.erase(found);
    }
    call_ended_.notify_all();
    if (!cancelled_by_client) send(answer);
    done->store(true);
  });
  threads_.emplace_back(std::move(thread), std::move(done));
}

WireMessage McpServer::Dispatch(const Message& message) {
  const std::string_view method = message.method();
  if (method == "initialize") return Initialize(message);
  if (method == "ping") return SerializeEmptyResult(message.id());
  if (protocol_version_.empty()) {
    return SerializeError(message.id(), kJsonRpcInvalidRequest,
                          "Invalid Request: '" + std::string(method) + "' before initialize");
  }
  if (method == "tools/list") return ListTools(message);
  if (method == "tools/call") {
    CancelToken cancel;
    return CallTool(message, cancel);
  }
  return SerializeError(message.id(), kJsonRpcMethodNotFound,
                        "Method not found: '" + std::string(method) + "'");
}

WireMessage McpServer::Initialize(const Message& message) {
  Result<std::string_view> requested = message.params().String("protocolVersion");
  if (!requested.ok()) {
    return SerializeError(message.id(), kJsonRpcInvalidParams, requested.status().message());
  }
  protocol_version_ = IsKnownVersion(*requested) ? std::string(*requested) : std::string(kMcpProtocolVersions[0]);
  return SerializeResult(message.id(), [&](JsonWriter& writer) {
    writer.StartObject();
    WriteJsonKey(writer, "protocolVersion");
    writer.String(protocol_version_);
    WriteJsonKey(writer, "capabilities");
    writer.StartObject();
    // The tool list is read once per tools/list; no change notifications yet.
    WriteJsonKey(writer, "tools");
    writer.StartObject();
    WriteJsonKey(writer, "listChanged");
    writer.Bool(false);
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

WireMessage McpServer::ListTools(const Message& message) {
  std::vector<McpToolListing> tools = tools_.ListTools();
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
      writer.EndObject();
    }
    writer.EndArray();
    writer.EndObject();
  });
}

WireMessage McpServer::CallTool(const Message& message, CancelToken& cancel) {
  const Params& params = message.params();
  Result<std::string_view> name = params.String("name");
  if (!name.ok()) return SerializeError(message.id(), kJsonRpcInvalidParams, name.status().message());
  std::string arguments = params.Json("arguments").value_or("{}");
  if (arguments == "null") arguments = "{}";
  if (!arguments.starts_with('{')) {
    return SerializeError(message.id(), kJsonRpcInvalidParams, "Invalid params: 'arguments' must be an object");
  }
  Result<Outcome> outcome = tools_.CallTool(*name, arguments, cancel);
  if (!outcome.ok() && outcome.status().code() == StatusCode::kNotFound) {
    return SerializeError(message.id(), kJsonRpcInvalidParams, outcome.status().message());
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
    WriteJsonKey(writer, "isError");
    writer.Bool(is_error);
    writer.EndObject();
  });
}

}  // namespace toolvfs
