#include "host/init_message.h"

#include "host/methods.h"

namespace toolvfs {

WireMessage BuildInitNotification(const InitInfo& info) {
  return SerializeNotification("init", [&](JsonWriter& writer) {
    writer.StartObject();
    WriteJsonKey(writer, "tool");
    writer.StartObject();
    WriteJsonKey(writer, "name");
    WriteJsonString(writer, info.tool_name);
    WriteJsonKey(writer, "arguments");
    writer.RawValue(info.arguments_json.data(), info.arguments_json.size(), rapidjson::kObjectType);
    WriteJsonKey(writer, "answers");
    writer.RawValue(info.answers_json.data(), info.answers_json.size(), rapidjson::kObjectType);
    WriteJsonKey(writer, "options");
    writer.RawValue(info.options_json.data(), info.options_json.size(), rapidjson::kObjectType);
    writer.EndObject();
    WriteJsonKey(writer, "protocol_version");
    WriteJsonString(writer, kProtocolVersion);
    WriteJsonKey(writer, "host");
    writer.StartObject();
    WriteJsonKey(writer, "name");
    WriteJsonString(writer, "toolvfs");
    WriteJsonKey(writer, "version");
    WriteJsonString(writer, TOOLVFS_VERSION);
    WriteJsonKey(writer, "root");
    WriteJsonString(writer, info.root);
    WriteJsonKey(writer, "methods");
    writer.StartArray();
    for (const MethodSpec& method : AllMethods()) WriteJsonString(writer, method.name);
    writer.EndArray();
    WriteJsonKey(writer, "concurrent_requests");
    writer.Bool(true);
    writer.EndObject();
    writer.EndObject();
  });
}

}  // namespace toolvfs
