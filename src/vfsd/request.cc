#include "vfsd/request.h"

#include <simdjson.h>

#include <set>
#include <utility>

#include "core/text.h"

namespace toolvfs {
namespace {

namespace dom = simdjson::dom;

Status ParamError(std::string_view name, std::string_view must) {
  return InvalidArgumentError("Invalid params: " + Quote(name) + " must be " + std::string(must));
}

std::string JsonErrorMessage(simdjson::error_code error) {
  switch (error) {
    case simdjson::UTF8_ERROR: return "the frame is not valid UTF-8";
    case simdjson::DEPTH_ERROR:
      return "the frame's JSON is nested deeper than " + std::to_string(simdjson::DEFAULT_MAX_DEPTH) + " levels";
    case simdjson::EMPTY: return "the frame is empty; expected a JSON object";
    default: return "the frame is not valid JSON (" + std::string(simdjson::error_message(error)) + ")";
  }
}

ParamValue ToParamValue(dom::element element) {
  ParamValue value;
  switch (element.type()) {
    case dom::element_type::NULL_VALUE: value.type = ParamValue::Type::kNull; break;
    case dom::element_type::BOOL:
      value.type = ParamValue::Type::kBool;
      value.boolean = element.get_bool().value_unsafe();
      break;
    case dom::element_type::INT64:
      value.type = ParamValue::Type::kInteger;
      value.integer = element.get_int64().value_unsafe();
      break;
    case dom::element_type::UINT64:  // above INT64_MAX: a number, but no integer we take
    case dom::element_type::DOUBLE: value.type = ParamValue::Type::kNumber; break;
    case dom::element_type::STRING:
      value.type = ParamValue::Type::kString;
      value.text = std::string(element.get_string().value_unsafe());
      break;
    case dom::element_type::ARRAY: {
      value.type = ParamValue::Type::kArray;
      dom::array array;
      if (element.get_array().get(array) != simdjson::SUCCESS) break;
      for (dom::element item : array) {
        if (item.type() != dom::element_type::STRING) {
          value.strings_only = false;
          value.strings.clear();
          break;
        }
        value.strings.emplace_back(item.get_string().value_unsafe());
      }
      break;
    }
    case dom::element_type::OBJECT: value.type = ParamValue::Type::kObject; break;
  }
  return value;
}

}  // namespace

const ParamValue* RequestParams::Find(std::string_view name) const {
  auto found = members_.find(name);
  return found == members_.end() ? nullptr : &found->second;
}

bool RequestParams::Add(std::string name, ParamValue value) {
  return members_.emplace(std::move(name), std::move(value)).second;
}

bool RequestParams::Has(std::string_view name) const {
  const ParamValue* value = Find(name);
  return value != nullptr && value->type != ParamValue::Type::kNull;
}

Status RequestParams::ExpectOnly(std::initializer_list<std::string_view> names) const {
  for (const auto& [name, value] : members_) {
    bool known = false;
    for (std::string_view expected : names) known = known || name == expected;
    if (known) continue;
    std::string list;
    for (std::string_view expected : names) list += (list.empty() ? "" : ", ") + Quote(expected);
    return InvalidArgumentError("Invalid params: unknown member " + Quote(name) +
                                (list.empty() ? "; this op takes no params" : "; expected " + list));
  }
  return OkStatus();
}

Result<std::string> RequestParams::String(std::string_view name) const {
  const ParamValue* value = Find(name);
  if (value == nullptr || value->type == ParamValue::Type::kNull) {
    return InvalidArgumentError("Invalid params: " + Quote(name) + " is missing");
  }
  if (value->type != ParamValue::Type::kString) return ParamError(name, "a string");
  return value->text;
}

Result<int64_t> RequestParams::Integer(std::string_view name) const {
  TOOLVFS_ASSIGN_OR_RETURN(std::optional<int64_t> number, OptionalInteger(name));
  if (!number) return InvalidArgumentError("Invalid params: " + Quote(name) + " is missing");
  return *number;
}

Result<std::optional<int64_t>> RequestParams::OptionalInteger(std::string_view name) const {
  const ParamValue* value = Find(name);
  if (value == nullptr || value->type == ParamValue::Type::kNull) return std::optional<int64_t>();
  if (value->type != ParamValue::Type::kInteger) return ParamError(name, "an integer");
  return std::optional<int64_t>(value->integer);
}

Result<std::optional<bool>> RequestParams::OptionalBool(std::string_view name) const {
  const ParamValue* value = Find(name);
  if (value == nullptr || value->type == ParamValue::Type::kNull) return std::optional<bool>();
  if (value->type != ParamValue::Type::kBool) return ParamError(name, "true or false");
  return std::optional<bool>(value->boolean);
}

Result<std::optional<std::vector<std::string>>> RequestParams::OptionalStringArray(std::string_view name) const {
  const ParamValue* value = Find(name);
  if (value == nullptr || value->type == ParamValue::Type::kNull) {
    return std::optional<std::vector<std::string>>();
  }
  if (value->type != ParamValue::Type::kArray || !value->strings_only) {
    return ParamError(name, "an array of strings");
  }
  return std::optional<std::vector<std::string>>(value->strings);
}

std::variant<Request, RequestError> ParseRequest(std::string_view payload) {
  // One parser per thread: its buffers are reused from frame to frame.
  thread_local dom::parser parser;
  dom::element root;
  simdjson::padded_string padded(payload);
  if (simdjson::error_code error = parser.parse(padded).get(root); error != simdjson::SUCCESS) {
    return RequestError{std::nullopt, InvalidArgumentError("Invalid request: " + JsonErrorMessage(error))};
  }
  dom::object object;
  if (root.get_object().get(object) != simdjson::SUCCESS) {
    return RequestError{std::nullopt, InvalidArgumentError("Invalid request: the frame's JSON is not an object")};
  }

  // The id first, so that every later error can carry it. A duplicated id
  // is no id: which one would the client expect back?
  std::optional<std::string> id;
  int id_count = 0;
  for (dom::key_value_pair member : object) {
    if (member.key != "id") continue;
    ++id_count;
    std::string_view text;
    if (member.value.get_string().get(text) == simdjson::SUCCESS) id = std::string(text);
  }
  if (id_count > 1) {
    return RequestError{std::nullopt, InvalidArgumentError("Invalid request: duplicate member 'id'")};
  }
  if (!id) {
    return RequestError{std::nullopt, InvalidArgumentError(id_count == 0 ? "Invalid request: 'id' is missing"
                                                                          : "Invalid request: 'id' must be a string")};
  }
  auto fail = [&](std::string message) {
    return RequestError{id, InvalidArgumentError("Invalid request: " + std::move(message))};
  };

  Request request;
  request.id = *id;
  std::set<std::string_view> seen;
  bool has_op = false;
  for (dom::key_value_pair member : object) {
    if (!seen.insert(member.key).second) return fail("duplicate member " + Quote(member.key));
    if (member.key == "id") continue;
    if (member.key == "op") {
      std::string_view op;
      if (member.value.get_string().get(op) != simdjson::SUCCESS) return fail("'op' must be a string");
      request.op = std::string(op);
      has_op = true;
    } else if (member.key == "version") {
      int64_t version = 0;
      if (member.value.get_int64().get(version) != simdjson::SUCCESS) return fail("'version' must be an integer");
      if (version != kVfsdVersion) {
        return RequestError{id, UnsupportedError("Unsupported version " + std::to_string(version) +
                                                 ": this vfsd speaks version " + std::to_string(kVfsdVersion))};
      }
    } else if (member.key == "params") {
      if (member.value.is_null()) continue;
      dom::object params;
      if (member.value.get_object().get(params) != simdjson::SUCCESS) return fail("'params' must be an object");
      for (dom::key_value_pair param : params) {
        if (!request.params.Add(std::string(param.key), ToParamValue(param.value))) {
          return fail("duplicate member " + Quote(param.key) + " in 'params'");
        }
      }
    } else {
      return fail("unknown member " + Quote(member.key) + "; expected 'id', 'op', 'version' and 'params'");
    }
  }
  if (!has_op) return fail("'op' is missing");
  return request;
}

}  // namespace toolvfs
