#include "runtime/tool_runtime.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <random>

#include "core/text.h"
#include "protocol/json_writer.h"
#include "runtime/stateful_tool.h"

namespace toolvfs {

std::string NewCallId() {
  static std::atomic<uint32_t> counter{0};
  thread_local std::mt19937 random(std::random_device{}());
  uint32_t suffix = static_cast<uint32_t>(random()) ^ counter.fetch_add(1);
  int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  char buffer[48];
  std::snprintf(buffer, sizeof buffer, "c-%lld-%08x", static_cast<long long>(now_ms), suffix);
  return buffer;
}

ContentBlock ContentBlock::Blob(std::string_view uri, std::string_view mime_type, std::string_view base64,
                                std::string text) {
  rapidjson::StringBuffer buffer;
  JsonWriter writer(buffer);
  writer.StartObject();
  WriteJsonKey(writer, "type");
  WriteJsonString(writer, "resource");
  WriteJsonKey(writer, "resource");
  writer.StartObject();
  WriteJsonKey(writer, "uri");
  WriteJsonString(writer, uri);
  WriteJsonKey(writer, "mimeType");
  WriteJsonString(writer, mime_type);
  WriteJsonKey(writer, "blob");
  WriteJsonString(writer, base64);
  writer.EndObject();
  writer.EndObject();
  ContentBlock block;
  block.type = "resource";
  block.json = JsonText(buffer);
  block.text = std::move(text);
  return block;
}

ContentBlock ContentBlock::Text(std::string text) {
  rapidjson::StringBuffer buffer;
  JsonWriter writer(buffer);
  writer.StartObject();
  WriteJsonKey(writer, "type");
  WriteJsonString(writer, "text");
  WriteJsonKey(writer, "text");
  WriteJsonString(writer, text);
  writer.EndObject();
  ContentBlock block;
  block.type = "text";
  block.json = JsonText(buffer);
  block.text = std::move(text);
  return block;
}

Result<std::unique_ptr<StatefulRun>> ToolRuntime::Start(const ToolCall&, const ToolConfig& tool, CancelToken&) {
  return Status(StatusCode::kInvalidArgument,
                "Tool " + Quote(tool.name) + " has stateful = true, which only vfs tools support (runtime = \"vfs\")");
}

}  // namespace toolvfs
