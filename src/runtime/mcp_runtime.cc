#include "runtime/mcp_runtime.h"

#include <simdjson.h>

#include <utility>

#include "core/text.h"
#include "protocol/json_writer.h"
#include "runtime/argument_validation.h"
#include "runtime/outcome_json.h"

namespace toolvfs {
namespace {

namespace dom = simdjson::dom;

Status Invalid(std::string message) { return Status(StatusCode::kInvalidArgument, std::move(message)); }

std::string StringMember(dom::element element, std::string_view key) {
  std::string_view text;
  if (element[key].get_string().get(text) == simdjson::SUCCESS) return std::string(text);
  return {};
}

// Bytes the base64 text `data` decodes to (for what a person reads).
size_t DecodedSize(std::string_view data) {
  size_t padding = 0;
  while (padding < 2 && padding < data.size() && data[data.size() - 1 - padding] == '=') ++padding;
  return data.size() / 4 * 3 - padding;
}

// An image or audio block as an embedded resource: the data as its blob,
// the mime type kept, and a URI that says where it came from.
ContentBlock MediaAsResource(dom::element element, std::string_view type, std::string_view server,
                             std::string_view tool, size_t index) {
  const std::string mime = StringMember(element, "mimeType");
  const std::string data = StringMember(element, "data");
  const std::string uri = "mcp://" + std::string(server) + "/" + std::string(tool) + "/content/" + std::to_string(index);
  return ContentBlock::Blob(uri, mime, data,
                            "[" + std::string(type) + " " + (mime.empty() ? "of unknown type" : mime) + ", " +
                                std::to_string(DecodedSize(data)) + " bytes: " + uri + "]");
}

// One MCP content block as ours; InvalidArgument naming a malformed one.
Result<ContentBlock> MapBlock(dom::element element, std::string_view server, std::string_view tool, size_t index) {
  std::string_view type;
  if (!element.is_object() || element["type"].get_string().get(type) != simdjson::SUCCESS) {
    return Invalid("content[" + std::to_string(index) + "] is not an object with a string 'type'");
  }
  if (type == "image" || type == "audio") {
    std::string_view data;
    if (element["data"].get_string().get(data) != simdjson::SUCCESS) {
      return Invalid("content[" + std::to_string(index) + "] is an " + std::string(type) +
                     " block without string 'data'");
    }
    return MediaAsResource(element, type, server, tool, index);
  }
  ContentBlock block;
  block.type = std::string(type);
  block.json = simdjson::minify(element);
  if (type == "text") {
    std::string_view text;
    if (element["text"].get_string().get(text) != simdjson::SUCCESS) {
      return Invalid("content[" + std::to_string(index) + "] is a text block without a string 'text'");
    }
    block.text = std::string(text);
  } else if (type == "resource") {
    dom::element resource;
    if (element["resource"].get(resource) != simdjson::SUCCESS || !resource.is_object()) {
      return Invalid("content[" + std::to_string(index) + "] is a resource block without a 'resource' object");
    }
    const std::string uri = StringMember(resource, "uri");
    std::string_view text;
    if (resource["text"].get_string().get(text) == simdjson::SUCCESS) {
      block.text = std::string(text);
    } else {
      std::string_view blob;
      const std::string mime = StringMember(resource, "mimeType");
      const size_t size = resource["blob"].get_string().get(blob) == simdjson::SUCCESS ? DecodedSize(blob) : 0;
      block.text = "[resource " + uri + (mime.empty() ? "" : ", " + mime) + ", " + std::to_string(size) + " bytes]";
    }
  } else if (type == "resource_link") {
    const std::string uri = StringMember(element, "uri");
    const std::string name = StringMember(element, "name");
    block.text = "[resource link " + uri + (name.empty() || name == uri ? "" : " (" + name + ")") + "]";
  } else {
    block.text = "[" + block.type + " block]";
  }
  return block;
}

// The text of the blocks, for an error's message.
std::string JoinedText(const std::vector<ContentBlock>& blocks) {
  std::string message;
  for (const ContentBlock& block : blocks) {
    if (block.type != "text") continue;
    message += (message.empty() ? "" : "\n") + block.text;
  }
  return message;
}

Outcome ErrorOutcome(const Status& status, const std::string& stderr_tail) {
  if (status.code() == StatusCode::kCancelled) return CancelledOutcome(status.message(), stderr_tail);
  const StatusCode failure = status.code() == StatusCode::kTimeout ? StatusCode::kTimeout : StatusCode::kInternal;
  Outcome outcome = FailedOutcome(failure, status.message(), stderr_tail);
  outcome.error->transient = failure == StatusCode::kTimeout;
  outcome.stderr_tail = stderr_tail;
  return outcome;
}

}  // namespace

Outcome McpResultToOutcome(std::string_view result_json, std::string_view server, std::string_view tool) {
  const std::string what = "MCP server " + Quote(server) + " answered tools/call of " + Quote(tool);
  dom::parser parser;
  dom::element result;
  dom::array content;
  if (parser.parse(result_json).get(result) != simdjson::SUCCESS || !result.is_object()) {
    return FailedOutcome(StatusCode::kInternal, what + " with a result that is not an object", "");
  }
  Outcome outcome;
  if (result["content"].get_array().get(content) == simdjson::SUCCESS) {
    size_t index = 0;
    for (dom::element element : content) {
      Result<ContentBlock> block = MapBlock(element, server, tool, index++);
      if (!block.ok()) return FailedOutcome(StatusCode::kInternal, what + ": " + block.status().message(), "");
      outcome.content.push_back(std::move(block).value());
    }
  }
  dom::element structured;
  if (outcome.content.empty() && result["structuredContent"].get(structured) == simdjson::SUCCESS) {
    outcome.content.push_back(ContentBlock::Text(simdjson::minify(structured)));
  } else if (result["content"].get_array().error() != simdjson::SUCCESS) {
    return FailedOutcome(StatusCode::kInternal, what + " without a 'content' array", "");
  }
  bool is_error = false;
  if (result["isError"].get_bool().get(is_error) == simdjson::SUCCESS && is_error) {
    outcome.is_error = true;
    std::string message = JoinedText(outcome.content);
    if (message.empty()) message = "MCP tool " + Quote(tool) + " of server " + Quote(server) + " reported an error";
    outcome.error = ToolError{std::move(message), {}, false};
  }
  return outcome;
}

McpRuntime::McpRuntime(ProjectFiles& project, std::map<std::string, McpServerConfig> servers,
                       McpRuntimeOptions options)
    : project_(project), servers_(std::move(servers)), options_(std::move(options)) {}

McpRuntime::~McpRuntime() {
  // Servers first: they run in the view's directory.
  running_.clear();
  if (view_) (void)view_->Release();
}

McpClient* McpRuntime::RunningServer(const ToolConfig& entry) {
  for (Running& running : running_) {
    if (running.server == entry.mcp_server && running.has_sandbox_table == entry.has_sandbox_table &&
        running.sandbox == entry.sandbox && running.client && running.client->alive()) {
      return running.client.get();
    }
  }
  return nullptr;
}

Result<McpClient*> McpRuntime::Server(const ToolConfig& entry, CancelToken& cancel) {
  if (entry.source != ToolSource::kMcp) {
    return Invalid("Tool " + Quote(entry.name) + " is not an MCP tool (its source is " +
                   std::string(ToolSourceName(entry.source)) + ")");
  }
  if (McpClient* client = RunningServer(entry)) return client;
  auto configured = servers_.find(entry.mcp_server);
  if (configured == servers_.end()) {
    return Status(StatusCode::kNotFound, "Tool " + Quote(entry.name) + " uses MCP server " +
                                             Quote(entry.mcp_server) + ", which is not configured; add [mcp_servers." +
                                             entry.mcp_server + "]");
  }
  // Dead processes of this server and policy go; a new one takes their place.
  std::erase_if(running_, [&](const Running& running) {
    return running.server == entry.mcp_server && running.has_sandbox_table == entry.has_sandbox_table &&
           running.sandbox == entry.sandbox;
  });
  if (!view_) {
    TOOLVFS_ASSIGN_OR_RETURN(view_, project_.Materialize());
    view_->FilterChanges(write_policies_);
  }
  // The servers share the copy: a change is kept when one of them may make it.
  write_policies_->Add(entry, options_.confinement.config_project_path);
  McpClientOptions client_options;
  client_options.server = configured->second;
  client_options.server.name = configured->first;
  client_options.working_directory = view_->path();
  client_options.policy = entry;
  client_options.confinement = options_.confinement;
  client_options.host_environment = options_.host_environment;
  // Not bounded by the tool's timeout_s: the process outlives this call
  // and serves tools with other limits; the call itself is bounded below.
  client_options.startup_timeout = options_.startup_timeout;
  client_options.shutdown_grace = options_.shutdown_grace;
  client_options.max_message_bytes = static_cast<size_t>(entry.sandbox.limits.max_message_mb) << 20;
  TOOLVFS_ASSIGN_OR_RETURN(std::unique_ptr<McpClient> client, McpClient::Start(std::move(client_options), cancel));
  running_.push_back(Running{.server = entry.mcp_server,
                             .has_sandbox_table = entry.has_sandbox_table,
                             .sandbox = entry.sandbox,
                             .client = std::move(client)});
  return running_.back().client.get();
}

Result<std::vector<McpToolInfo>> McpRuntime::ListTools(const ToolConfig& entry, CancelToken& cancel) {
  TOOLVFS_ASSIGN_OR_RETURN(McpClient * client, Server(entry, cancel));
  return client->ListTools(options_.startup_timeout, cancel);
}

Result<Outcome> McpRuntime::Execute(const ToolCall& call, const ToolConfig& tool, CancelToken& cancel) {
  if (tool.source == ToolSource::kMcp && tool.mcp_tool.empty()) {
    return Invalid("Tool " + Quote(tool.name) + " imports every tool of MCP server " + Quote(tool.mcp_server) +
                   "; run one of them as " + tool.name + ".TOOL (toolvfs tools lists them)");
  }
  TOOLVFS_ASSIGN_OR_RETURN(ConfigValue checked, CheckCallArguments(tool.name, call.arguments_json, tool.parameters));
  if (!checked.is_object()) return Invalid("Tool " + Quote(tool.name) + ": the arguments must be a JSON object");

  TOOLVFS_ASSIGN_OR_RETURN(McpClient * client, Server(tool, cancel));
  rapidjson::StringBuffer buffer;
  JsonWriter writer(buffer);
  writer.StartObject();
  WriteJsonKey(writer, "name");
  WriteJsonString(writer, tool.mcp_tool);
  WriteJsonKey(writer, "arguments");
  const std::string arguments_json = checked.ToJson();
  writer.RawValue(arguments_json.data(), arguments_json.size(), rapidjson::kObjectType);
  writer.EndObject();

  Result<McpResponse> response = client->Request("tools/call", JsonView(buffer),
                                                 std::chrono::seconds(tool.sandbox.limits.timeout_s), cancel);
  const std::string stderr_tail = client->StderrTail();
  if (!response.ok()) {
    Status status = response.status();
    if (status.code() == StatusCode::kTimeout) {
      status = Status(StatusCode::kTimeout, "Tool " + Quote(tool.name) + " timed out after " +
                                                std::to_string(tool.sandbox.limits.timeout_s) + " s: " + status.message());
    }
    return ErrorOutcome(status, stderr_tail);
  }
  if (response->error) {
    Outcome outcome;
    outcome.is_error = true;
    outcome.error = ToolError{"MCP server " + Quote(tool.mcp_server) + " refused tools/call of " +
                                  Quote(tool.mcp_tool) + ": " + response->error->Describe(),
                              {},
                              false};
    outcome.stderr_tail = stderr_tail;
    return outcome;
  }
  Outcome outcome = McpResultToOutcome(response->result_json, tool.mcp_server, tool.mcp_tool);
  outcome.stderr_tail = stderr_tail;
  return outcome;
}

bool IsMcpImport(const ToolConfig& tool) { return tool.source == ToolSource::kMcp && tool.mcp_tool.empty(); }

ImportedMcpTools ListImportedMcpTools(McpRuntime& runtime, const Config& config, CancelToken& cancel,
                                      std::optional<std::string> only_entry) {
  ImportedMcpTools imported;
  std::map<std::string, int> offered;  // MCP tool name -> how many entries offer it
  for (const auto& [entry_name, entry] : config.tools) {
    if (!IsMcpImport(entry) || (only_entry && *only_entry != entry_name)) continue;
    Result<std::vector<McpToolInfo>> listed = runtime.ListTools(entry, cancel);
    if (!listed.ok()) {
      imported.errors.emplace(entry_name, listed.status().message());
      continue;
    }
    for (McpToolInfo& info : *listed) {
      ImportedMcpTool tool;
      tool.tool = entry;
      tool.entry = entry_name;
      tool.tool.mcp_tool = info.name;
      tool.tool.description = std::move(info.description);
      tool.input_schema_json = std::move(info.input_schema_json);
      tool.name = info.name;
      ++offered[info.name];
      imported.tools.push_back(std::move(tool));
    }
  }
  for (ImportedMcpTool& tool : imported.tools) {
    const std::string qualified = tool.entry + "." + tool.tool.mcp_tool;
    if (offered[tool.name] > 1 || config.tools.contains(tool.name)) tool.name = qualified;
    tool.tool.name = tool.name;
  }
  return imported;
}

}  // namespace toolvfs
