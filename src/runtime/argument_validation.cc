#include "runtime/argument_validation.h"

#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "core/text.h"

namespace toolvfs {
namespace {

namespace dom = simdjson::dom;

// Longest rendering of a value in an error message.
constexpr size_t kShownValueChars = 60;

ConfigValue FromDom(dom::element element) {
  switch (element.type()) {
    case dom::element_type::OBJECT: {
      ConfigValue::Object object;
      for (dom::key_value_pair member : dom::object(element)) {
        object[std::string(member.key)] = FromDom(member.value);
      }
      return object;
    }
    case dom::element_type::ARRAY: {
      ConfigValue::Array array;
      for (dom::element item : dom::array(element)) array.push_back(FromDom(item));
      return array;
    }
    case dom::element_type::STRING:
      return std::string(element.get_string().value());
    case dom::element_type::INT64:
      return element.get_int64().value();
    case dom::element_type::UINT64:
      return static_cast<double>(element.get_uint64().value());
    case dom::element_type::DOUBLE:
      return element.get_double().value();
    case dom::element_type::BOOL:
      return element.get_bool().value();
    case dom::element_type::NULL_VALUE:
      return ConfigValue();
  }
  return ConfigValue();
}

std::string Shown(const ConfigValue& value) {
  std::string json = value.ToJson();
  if (json.size() > kShownValueChars) json = json.substr(0, kShownValueChars) + "...";
  return EscapeForDisplay(json);
}

std::string Joined(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

std::vector<std::string> DeclaredTypes(const ConfigValue& schema) {
  std::vector<std::string> types;
  const ConfigValue* type = schema.Find("type");
  if (type == nullptr) return types;
  if (type->is_string()) types.push_back(type->as_string());
  if (type->is_array()) {
    for (const ConfigValue& name : type->as_array()) {
      if (name.is_string()) types.push_back(name.as_string());
    }
  }
  return types;
}

bool HasType(const ConfigValue& value, const std::string& type) {
  if (type == "string") return value.is_string();
  if (type == "integer") {
    return value.is_integer() ||
           (value.is_float() && std::isfinite(value.as_float()) && std::trunc(value.as_float()) == value.as_float());
  }
  if (type == "number") return value.is_integer() || value.is_float();
  if (type == "boolean") return value.is_bool();
  if (type == "array") return value.is_array();
  if (type == "object") return value.is_object();
  if (type == "null") return value.is_null();
  return false;
}

bool HasAnyType(const ConfigValue& value, const std::vector<std::string>& types) {
  if (types.empty()) return true;
  for (const std::string& type : types) {
    if (HasType(value, type)) return true;
  }
  return false;
}

std::string TypeList(const std::vector<std::string>& types) {
  std::string list;
  for (const std::string& type : types) list += (list.empty() ? "" : " or ") + type;
  return list;
}

Status CheckValue(const ConfigValue& schema, ConfigValue& value, const std::string& path);

Status CheckObject(const ConfigValue::Object& properties, ConfigValue::Object& object, const std::string& path) {
  for (const auto& [key, member] : object) {
    if (!properties.contains(key)) {
      return Status(StatusCode::kInvalidArgument, "unknown argument " + Quote(Joined(path, key)));
    }
  }
  for (const auto& [key, schema] : properties) {
    auto found = object.find(key);
    if (found == object.end()) {
      const ConfigValue* fallback = schema.is_object() ? schema.Find("default") : nullptr;
      if (fallback != nullptr) {
        found = object.emplace(key, *fallback).first;
      } else {
        const ConfigValue* required = schema.is_object() ? schema.Find("required") : nullptr;
        if (required != nullptr && required->is_bool() && required->as_bool()) {
          return Status(StatusCode::kInvalidArgument, "missing required argument " + Quote(Joined(path, key)));
        }
        continue;
      }
    }
    if (schema.is_object()) TOOLVFS_RETURN_IF_ERROR(CheckValue(schema, found->second, Joined(path, key)));
  }
  return OkStatus();
}

Status CheckValue(const ConfigValue& schema, ConfigValue& value, const std::string& path) {
  const std::vector<std::string> types = DeclaredTypes(schema);
  const bool declares_string = std::find(types.begin(), types.end(), "string") != types.end();
  if (value.is_string() && !types.empty() && !declares_string) {
    Result<ConfigValue> decoded = ParseJsonValue(value.as_string());
    if (decoded.ok() && HasAnyType(*decoded, types)) value = std::move(decoded).value();
  }
  if (!HasAnyType(value, types)) {
    return Status(StatusCode::kInvalidArgument,
                  "argument " + Quote(path) + " must be " + TypeList(types) + ", got " + Shown(value));
  }
  if (const ConfigValue* choices = schema.Find("enum"); choices != nullptr && choices->is_array()) {
    bool listed = false;
    for (const ConfigValue& choice : choices->as_array()) listed = listed || choice == value;
    if (!listed) {
      return Status(StatusCode::kInvalidArgument, "argument " + Quote(path) + " must be one of " +
                                                      Shown(*choices) + ", got " + Shown(value));
    }
  }
  if (const ConfigValue* properties = schema.Find("properties");
      properties != nullptr && properties->is_object() && value.is_object()) {
    TOOLVFS_RETURN_IF_ERROR(CheckObject(properties->as_object(), value.as_object(), path));
  }
  if (const ConfigValue* items = schema.Find("items"); items != nullptr && items->is_object() && value.is_array()) {
    ConfigValue::Array& array = value.as_array();
    for (size_t index = 0; index < array.size(); ++index) {
      TOOLVFS_RETURN_IF_ERROR(CheckValue(*items, array[index], path + "[" + std::to_string(index) + "]"));
    }
  }
  return OkStatus();
}

}  // namespace

Result<ConfigValue> ParseJsonValue(std::string_view json) {
  dom::parser parser;
  dom::element element;
  simdjson::padded_string padded(json);
  if (auto error = parser.parse(padded).get(element); error != simdjson::SUCCESS) {
    return Status(StatusCode::kInvalidArgument, std::string("not valid JSON: ") + simdjson::error_message(error));
  }
  return FromDom(element);
}

Result<ConfigValue> ValidateArguments(const ConfigValue::Object& parameters, const ConfigValue& arguments) {
  ConfigValue checked = arguments.is_null() ? ConfigValue(ConfigValue::Object()) : arguments;
  if (!checked.is_object()) {
    return Status(StatusCode::kInvalidArgument, "the arguments must be a JSON object, got " + Shown(checked));
  }
  TOOLVFS_RETURN_IF_ERROR(CheckObject(parameters, checked.as_object(), ""));
  return checked;
}

}  // namespace toolvfs
