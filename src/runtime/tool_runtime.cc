#include "runtime/tool_runtime.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <random>

#include "protocol/json_writer.h"

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
  block.json.assign(buffer.GetString(), buffer.GetSize());
  block.text = std::move(text);
  return block;
}

}  // namespace toolvfs
