#include "runtime/argument_validation.h"

#include <re2/re2.h>
#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <optional>
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

// A number as a double (integers included), or nullopt.
std::optional<double> NumberOf(const ConfigValue& value) {
  if (value.is_integer()) return static_cast<double>(value.as_integer());
  if (value.is_float()) return value.as_float();
  return std::nullopt;
}

// Unicode code points in valid UTF-8 (JSON Schema counts those, not bytes).
size_t CodePoints(std::string_view text) {
  size_t count = 0;
  for (char c : text) count += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return count;
}

// The bounds of a number: minimum, maximum (inclusive), exclusiveMinimum,
// exclusiveMaximum (JSON Schema 2020-12: numbers, not booleans).
Status CheckNumberBounds(const ConfigValue& schema, double number, const ConfigValue& value,
                         const std::string& path) {
  struct Bound {
    const char* keyword;
    const char* relation;
    bool (*holds)(double, double);
  };
  static constexpr Bound kBounds[] = {
      {"minimum", ">=", [](double v, double b) { return v >= b; }},
      {"maximum", "<=", [](double v, double b) { return v <= b; }},
      {"exclusiveMinimum", ">", [](double v, double b) { return v > b; }},
      {"exclusiveMaximum", "<", [](double v, double b) { return v < b; }},
  };
  for (const Bound& bound : kBounds) {
    const ConfigValue* limit = schema.Find(bound.keyword);
    std::optional<double> limit_number = limit == nullptr ? std::nullopt : NumberOf(*limit);
    if (limit_number && !bound.holds(number, *limit_number)) {
      return Status(StatusCode::kInvalidArgument, "argument " + Quote(path) + " must be " + bound.relation +
                                                      " " + limit->ToJson() + " (" + bound.keyword +
                                                      "), got " + Shown(value));
    }
  }
  return OkStatus();
}

// minLength/maxLength (strings, in code points) and minItems/maxItems
// (arrays): `size` against the keyword pair, `unit` for the message.
Status CheckSizeBounds(const ConfigValue& schema, const char* minimum_keyword, const char* maximum_keyword,
                       size_t size, const char* unit, const ConfigValue& value, const std::string& path) {
  const ConfigValue* minimum = schema.Find(minimum_keyword);
  if (minimum != nullptr && minimum->is_integer() && size < static_cast<uint64_t>(minimum->as_integer())) {
    return Status(StatusCode::kInvalidArgument, "argument " + Quote(path) + " must have at least " +
                                                    minimum->ToJson() + " " + unit + " (" + minimum_keyword +
                                                    "), got " + std::to_string(size) + ": " + Shown(value));
  }
  const ConfigValue* maximum = schema.Find(maximum_keyword);
  if (maximum != nullptr && maximum->is_integer() && size > static_cast<uint64_t>(maximum->as_integer())) {
    return Status(StatusCode::kInvalidArgument, "argument " + Quote(path) + " must have at most " +
                                                    maximum->ToJson() + " " + unit + " (" + maximum_keyword +
                                                    "), got " + std::to_string(size) + ": " + Shown(value));
  }
  return OkStatus();
}

// `pattern`: an RE2 regular expression the string must contain a match of
// (unanchored, as JSON Schema says; write ^...$ for a whole-string match).
Status CheckPattern(const ConfigValue& schema, const std::string& text, const ConfigValue& value,
                    const std::string& path) {
  const ConfigValue* pattern = schema.Find("pattern");
  if (pattern == nullptr || !pattern->is_string()) return OkStatus();
  RE2 expression(pattern->as_string(), RE2::Quiet);
  if (!expression.ok()) {
    return Status(StatusCode::kInvalidArgument, "the pattern of argument " + Quote(path) + ", " +
                                                    Quote(pattern->as_string()) +
                                                    ", is not a valid regular expression: " + expression.error());
  }
  if (!RE2::PartialMatch(text, expression)) {
    return Status(StatusCode::kInvalidArgument, "argument " + Quote(path) + " must match the pattern " +
                                                    Quote(pattern->as_string()) + ", got " + Shown(value));
  }
  return OkStatus();
}

// The keywords that bound a value of the right type.
Status CheckBounds(const ConfigValue& schema, const ConfigValue& value, const std::string& path) {
  if (std::optional<double> number = NumberOf(value)) {
    return CheckNumberBounds(schema, *number, value, path);
  }
  if (value.is_string()) {
    TOOLVFS_RETURN_IF_ERROR(CheckSizeBounds(schema, "minLength", "maxLength", CodePoints(value.as_string()),
                                            "characters", value, path));
    return CheckPattern(schema, value.as_string(), value, path);
  }
  if (value.is_array()) {
    const ConfigValue::Array& items = value.as_array();
    TOOLVFS_RETURN_IF_ERROR(
        CheckSizeBounds(schema, "minItems", "maxItems", items.size(), "items", value, path));
    const ConfigValue* unique = schema.Find("uniqueItems");
    if (unique != nullptr && unique->is_bool() && unique->as_bool()) {
      for (size_t index = 1; index < items.size(); ++index) {
        for (size_t earlier = 0; earlier < index; ++earlier) {
          if (items[earlier] == items[index]) {
            return Status(StatusCode::kInvalidArgument,
                          "argument " + Quote(path) + " must not repeat items (uniqueItems), but items " +
                              std::to_string(earlier) + " and " + std::to_string(index) + " are both " +
                              Shown(items[index]));
          }
        }
      }
    }
  }
  return OkStatus();
}

Status CheckValue(const ConfigValue& schema, ConfigValue& value, const std::string& path, ArgumentError& error);

// Records what is wrong in `error` and returns the status saying so.
Status Problem(ArgumentError& error, ArgumentProblem problem, const std::string& argument, Status status) {
  error.problem = problem;
  error.argument = argument;
  return status;
}

Status CheckObject(const ConfigValue::Object& properties, ConfigValue::Object& object, const std::string& path,
                   ArgumentError& error) {
  for (const auto& [key, member] : object) {
    if (!properties.contains(key)) {
      return Problem(error, ArgumentProblem::kUnknown, Joined(path, key),
                     Status(StatusCode::kInvalidArgument, "unknown argument " + Quote(Joined(path, key))));
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
          return Problem(error, ArgumentProblem::kMissing, Joined(path, key),
                         Status(StatusCode::kInvalidArgument, "missing required argument " + Quote(Joined(path, key))));
        }
        continue;
      }
    }
    if (schema.is_object()) TOOLVFS_RETURN_IF_ERROR(CheckValue(schema, found->second, Joined(path, key), error));
  }
  return OkStatus();
}

Status CheckValue(const ConfigValue& schema, ConfigValue& value, const std::string& path, ArgumentError& error) {
  // What fails here is the value at `path` itself; a member's own problem
  // is recorded by the recursion below.
  error = ArgumentError{.problem = ArgumentProblem::kInvalid, .argument = path};
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
  TOOLVFS_RETURN_IF_ERROR(CheckBounds(schema, value, path));
  if (const ConfigValue* properties = schema.Find("properties");
      properties != nullptr && properties->is_object() && value.is_object()) {
    TOOLVFS_RETURN_IF_ERROR(CheckObject(properties->as_object(), value.as_object(), path, error));
  }
  if (const ConfigValue* items = schema.Find("items"); items != nullptr && items->is_object() && value.is_array()) {
    ConfigValue::Array& array = value.as_array();
    for (size_t index = 0; index < array.size(); ++index) {
      TOOLVFS_RETURN_IF_ERROR(CheckValue(*items, array[index], path + "[" + std::to_string(index) + "]", error));
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

Result<ConfigValue> ValidateArguments(const ConfigValue::Object& parameters, const ConfigValue& arguments,
                                      ArgumentError* error) {
  ArgumentError found;
  ArgumentError& problem = error != nullptr ? *error : found;
  problem = ArgumentError{.problem = ArgumentProblem::kNotAnObject, .argument = {}};
  if (!arguments.is_null() && !arguments.is_object()) {
    return Status(StatusCode::kInvalidArgument, "the arguments must be a JSON object, got " + Shown(arguments));
  }
  ConfigValue::Object checked = arguments.is_null() ? ConfigValue::Object() : arguments.as_object();
  TOOLVFS_RETURN_IF_ERROR(CheckObject(parameters, checked, "", problem));
  return ConfigValue(std::move(checked));
}

Result<ConfigValue> CheckCallArguments(std::string_view tool_name, std::string_view arguments_json,
                                       const ConfigValue::Object& parameters, ArgumentError* error) {
  auto invalid = [&](const std::string& why) {
    return Status(StatusCode::kInvalidArgument, "Tool " + Quote(tool_name) + ": " + why);
  };
  if (error != nullptr) *error = ArgumentError{.problem = ArgumentProblem::kNotAnObject, .argument = {}};
  Result<ConfigValue> arguments = ParseJsonValue(arguments_json);
  if (!arguments.ok()) return invalid("the arguments are " + arguments.status().message());
  if (arguments->is_null()) *arguments = ConfigValue(ConfigValue::Object());
  if (parameters.empty()) return arguments;
  Result<ConfigValue> checked = ValidateArguments(parameters, *arguments, error);
  if (!checked.ok()) return invalid(checked.status().message());
  return checked;
}

}  // namespace toolvfs
