#include "runtime/tool_schema.h"

#include <utility>

namespace toolvfs {
namespace {

ConfigValue ConvertSchema(const ConfigValue& schema);

// An object schema's `properties` converted, with the names whose schema
// says `required = true` collected into `required`.
ConfigValue::Object ObjectSchema(const ConfigValue::Object& properties) {
  ConfigValue::Object converted;
  ConfigValue::Array required;
  for (const auto& [name, schema] : properties) {
    const ConfigValue* flag = schema.is_object() ? schema.Find("required") : nullptr;
    if (flag != nullptr && flag->is_bool() && flag->as_bool()) required.emplace_back(name);
    converted.emplace(name, ConvertSchema(schema));
  }
  ConfigValue::Object object;
  object.emplace("type", "object");
  object.emplace("properties", std::move(converted));
  if (!required.empty()) object.emplace("required", std::move(required));
  object.emplace("additionalProperties", false);
  return object;
}

ConfigValue ConvertSchema(const ConfigValue& schema) {
  if (!schema.is_object()) return schema;
  ConfigValue::Object converted;
  for (const auto& [keyword, value] : schema.as_object()) {
    // The per-parameter flag becomes the parent's `required` array.
    if (keyword == "required" && value.is_bool()) continue;
    if (keyword == "items") {
      converted.emplace(keyword, ConvertSchema(value));
    } else if (keyword == "properties" && value.is_object()) {
      ConfigValue::Object object = ObjectSchema(value.as_object());
      for (auto& [key, member] : object) {
        // `type` as written wins (it may be a list such as ["object","null"]).
        if (key == "type" && schema.Find("type") != nullptr) continue;
        converted.insert_or_assign(key, std::move(member));
      }
    } else {
      converted.insert_or_assign(keyword, value);
    }
  }
  return converted;
}

}  // namespace

ConfigValue InputSchema(const ConfigValue::Object& parameters) {
  // No parameters declared: CheckCallArguments passes the input unchecked.
  if (parameters.empty()) return ConfigValue::Object{{"type", "object"}};
  return ObjectSchema(parameters);
}

std::string InputSchemaJson(const ConfigValue::Object& parameters) { return InputSchema(parameters).ToJson(); }

}  // namespace toolvfs
