#include "runtime/tool_runtime.h"

#include "protocol/json_writer.h"

namespace toolvfs {

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
