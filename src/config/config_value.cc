#include "config/config_value.h"

#include <cmath>

#include "protocol/json_writer.h"

namespace toolvfs {
namespace {

// Written with the protocol's JsonWriter, the one JSON writer of toolvfs:
// parameters become tool input schemas on the wire.
void WriteValue(const ConfigValue& value, JsonWriter& writer) {
  if (value.is_null()) {
    writer.Null();
  } else if (value.is_bool()) {
    writer.Bool(value.as_bool());
  } else if (value.is_integer()) {
    writer.Int64(value.as_integer());
  } else if (value.is_float()) {
    // JSON has no NaN or infinity; RapidJSON writes the shortest form that
    // reads back as the same double, and keeps 1.0 a float ("1.0").
    if (std::isfinite(value.as_float())) {
      writer.Double(value.as_float());
    } else {
      writer.Null();
    }
  } else if (value.is_string()) {
    writer.String(value.as_string());
  } else if (value.is_array()) {
    writer.StartArray();
    for (const ConfigValue& element : value.as_array()) WriteValue(element, writer);
    writer.EndArray();
  } else {
    writer.StartObject();
    for (const auto& [key, member] : value.as_object()) {
      WriteJsonKey(writer, key);
      WriteValue(member, writer);
    }
    writer.EndObject();
  }
}

}  // namespace

const ConfigValue* ConfigValue::Find(std::string_view key) const {
  if (!is_object()) return nullptr;
  const Object& object = as_object();
  auto found = object.find(key);
  return found == object.end() ? nullptr : &found->second;
}

std::string ConfigValue::ToJson() const {
  rapidjson::StringBuffer buffer;
  JsonWriter writer(buffer);
  WriteValue(*this, writer);
  return JsonText(buffer);
}

}  // namespace toolvfs
