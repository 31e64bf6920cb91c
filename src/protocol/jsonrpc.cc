#include "protocol/jsonrpc.h"

#include <simdjson.h>

#include <cstring>
#include <functional>
#include <type_traits>

#include "core/text.h"
#include "protocol/ndjson.h"

namespace toolvfs {

namespace dom = simdjson::dom;

static_assert(kLinePadding >= simdjson::SIMDJSON_PADDING,
              "LineSplitter's padding must cover simdjson's");

// The bridge between Params and the simdjson object it stores in place.
struct ParamsAccess {
  static_assert(sizeof(dom::object) <= sizeof(Params::object_) && alignof(dom::object) <= 8,
                "Params::object_ must hold a simdjson::dom::object");
  static_assert(std::is_trivially_copyable_v<dom::object> &&
                std::is_trivially_destructible_v<dom::object>);

  static dom::object Object(const Params& params) {
    dom::object object;
    std::memcpy(static_cast<void*>(&object), params.object_, sizeof object);
    return object;
  }
  static Params Make(dom::object object, std::string path) {
    Params params;
    std::memcpy(params.object_, static_cast<const void*>(&object), sizeof object);
    params.present_ = true;
    params.path_ = std::move(path);
    return params;
  }
  static const std::string& Path(const Params& params) { return params.path_; }
};

namespace {

constexpr std::string_view kJsonWhitespace = " \t\r\n";

// ---- Params ---------------------------------------------------------------

std::string ParamName(const Params& params, std::string_view name) {
  return "'" + ParamsAccess::Path(params) + std::string(name) + "'";
}

Status ParamError(const Params& params, std::string_view name, std::string_view must_be) {
  return InvalidArgumentError("Invalid params: " + ParamName(params, name) + " must be " +
                              std::string(must_be));
}

Status MissingParam(const Params& params, std::string_view name) {
  return InvalidArgumentError("Invalid params: " + ParamName(params, name) + " is required");
}

// The member `name`, or nullopt if absent; with `null_is_absent`, a null
// value counts as absent too.
std::optional<dom::element> Find(const Params& params, std::string_view name,
                                 bool null_is_absent) {
  if (params.empty()) return std::nullopt;
  dom::element value;
  if (ParamsAccess::Object(params).at_key(name).get(value) != simdjson::SUCCESS) {
    return std::nullopt;
  }
  if (null_is_absent && value.is_null()) return std::nullopt;
  return value;
}

JsonType TypeOfElement(dom::element value) {
  switch (value.type()) {
    case dom::element_type::ARRAY: return JsonType::kArray;
    case dom::element_type::OBJECT: return JsonType::kObject;
    case dom::element_type::INT64:
    case dom::element_type::UINT64:
    case dom::element_type::DOUBLE: return JsonType::kNumber;
    case dom::element_type::STRING: return JsonType::kString;
    case dom::element_type::BOOL: return JsonType::kBool;
    case dom::element_type::NULL_VALUE: return JsonType::kNull;
  }
  return JsonType::kNull;
}

Result<std::vector<std::string_view>> ToStringArray(const Params& params, std::string_view name,
                                                    dom::element value) {
  dom::array array;
  if (value.get_array().get(array) != simdjson::SUCCESS) {
    return ParamError(params, name, "an array of strings");
  }
  std::vector<std::string_view> strings;
  strings.reserve(array.size());
  size_t index = 0;
  for (dom::element item : array) {
    std::string_view text;
    if (item.get_string().get(text) != simdjson::SUCCESS) {
      return ParamError(params, std::string(name) + "[" + std::to_string(index) + "]",
                        "a string");
    }
    strings.push_back(text);
    ++index;
  }
  return strings;
}

Result<uint64_t> ToUint(const Params& params, std::string_view name, dom::element value) {
  uint64_t number;
  if (value.get_uint64().get(number) != simdjson::SUCCESS) {
    return ParamError(params, name, "a non-negative integer");
  }
  return number;
}

}  // namespace

Params::Params() = default;

bool Params::empty() const { return !present_ || ParamsAccess::Object(*this).size() == 0; }

size_t Params::size() const { return present_ ? ParamsAccess::Object(*this).size() : 0; }

bool Params::Has(std::string_view name) const { return Find(*this, name, true).has_value(); }

std::optional<JsonType> Params::TypeOf(std::string_view name) const {
  std::optional<dom::element> value = Find(*this, name, false);
  if (!value) return std::nullopt;
  return TypeOfElement(*value);
}

Status Params::ExpectOnly(std::initializer_list<std::string_view> names) const {
  if (!present_) return OkStatus();
  for (dom::key_value_pair member : ParamsAccess::Object(*this)) {
    bool known = false;
    for (std::string_view name : names) known = known || member.key == name;
    if (known) continue;
    std::string expected;
    for (std::string_view name : names) {
      if (!expected.empty()) expected += ", ";
      expected += name;
    }
    return InvalidArgumentError("Invalid params: unknown parameter " +
                                Quote(path_ + std::string(member.key)) + " (expected " +
                                (expected.empty() ? "none" : expected) + ")");
  }
  return OkStatus();
}

Result<std::string_view> Params::String(std::string_view name) const {
  std::optional<dom::element> value = Find(*this, name, false);
  if (!value) return MissingParam(*this, name);
  std::string_view text;
  if (value->get_string().get(text) != simdjson::SUCCESS) {
    return ParamError(*this, name, "a string");
  }
  return text;
}

Result<std::optional<std::string_view>> Params::OptionalString(std::string_view name) const {
  std::optional<dom::element> value = Find(*this, name, true);
  if (!value) return std::optional<std::string_view>();
  std::string_view text;
  if (value->get_string().get(text) != simdjson::SUCCESS) {
    return ParamError(*this, name, "a string");
  }
  return std::optional<std::string_view>(text);
}

Result<uint64_t> Params::Uint(std::string_view name) const {
  std::optional<dom::element> value = Find(*this, name, false);
  if (!value) return MissingParam(*this, name);
  return ToUint(*this, name, *value);
}

Result<std::optional<uint64_t>> Params::OptionalUint(std::string_view name) const {
  std::optional<dom::element> value = Find(*this, name, true);
  if (!value) return std::optional<uint64_t>();
  TOOLVFS_ASSIGN_OR_RETURN(uint64_t number, ToUint(*this, name, *value));
  return std::optional<uint64_t>(number);
}

Result<std::optional<bool>> Params::OptionalBool(std::string_view name) const {
  std::optional<dom::element> value = Find(*this, name, true);
  if (!value) return std::optional<bool>();
  bool flag;
  if (value->get_bool().get(flag) != simdjson::SUCCESS) {
    return ParamError(*this, name, "true or false");
  }
  return std::optional<bool>(flag);
}

Result<std::vector<std::string_view>> Params::StringArray(std::string_view name) const {
  std::optional<dom::element> value = Find(*this, name, false);
  if (!value) return MissingParam(*this, name);
  return ToStringArray(*this, name, *value);
}

Result<std::optional<std::vector<std::string_view>>> Params::OptionalStringArray(
    std::string_view name) const {
  std::optional<dom::element> value = Find(*this, name, true);
  if (!value) return std::optional<std::vector<std::string_view>>();
  TOOLVFS_ASSIGN_OR_RETURN(std::vector<std::string_view> strings,
                           ToStringArray(*this, name, *value));
  return std::optional<std::vector<std::string_view>>(std::move(strings));
}

Result<std::optional<Params>> Params::OptionalObject(std::string_view name) const {
  std::optional<dom::element> value = Find(*this, name, true);
  if (!value) return std::optional<Params>();
  dom::object object;
  if (value->get_object().get(object) != simdjson::SUCCESS) {
    return ParamError(*this, name, "an object");
  }
  return std::optional<Params>(ParamsAccess::Make(object, path_ + std::string(name) + "."));
}

Result<std::vector<Params>> Params::ObjectArray(std::string_view name) const {
  std::optional<dom::element> value = Find(*this, name, false);
  if (!value) return MissingParam(*this, name);
  dom::array array;
  if (value->get_array().get(array) != simdjson::SUCCESS) {
    return ParamError(*this, name, "an array of objects");
  }
  std::vector<Params> objects;
  objects.reserve(array.size());
  size_t index = 0;
  for (dom::element item : array) {
    std::string item_name = std::string(name) + "[" + std::to_string(index) + "]";
    dom::object object;
    if (item.get_object().get(object) != simdjson::SUCCESS) {
      return ParamError(*this, item_name, "an object");
    }
    objects.push_back(ParamsAccess::Make(object, path_ + item_name + "."));
    ++index;
  }
  return objects;
}

std::optional<std::string> Params::Json(std::string_view name) const {
  std::optional<dom::element> value = Find(*this, name, false);
  if (!value) return std::nullopt;
  return simdjson::to_string(*value);
}

std::string Params::ToJson() const {
  if (!present_) return "{}";
  return simdjson::to_string(ParamsAccess::Object(*this));
}

// ---- RequestId --------------------------------------------------------------

void RequestId::WriteTo(JsonWriter& writer) const {
  if (is_integer()) {
    writer.Int64(integer());
  } else if (is_string()) {
    WriteJsonString(writer, string());
  } else {
    writer.Null();
  }
}

std::string RequestId::ToJson() const {
  rapidjson::StringBuffer buffer;
  JsonWriter writer(buffer);
  WriteTo(writer);
  return JsonText(buffer);
}

size_t RequestIdHash::operator()(const RequestId& id) const {
  if (id.is_integer()) return std::hash<int64_t>()(id.integer());
  if (id.is_string()) return std::hash<std::string>()(id.string());
  return 0;
}

// ---- Message ------------------------------------------------------------------

Message::Message() = default;
Message::Message(Message&&) noexcept = default;
Message& Message::operator=(Message&&) noexcept = default;
Message::~Message() = default;

// ---- MessageParser --------------------------------------------------------------

namespace {

// The start of a line for an error message: at most 40 bytes, cut at a
// character boundary, shown escaped and quoted.
std::string Excerpt(std::string_view line) {
  constexpr size_t kMax = 40;
  if (line.size() <= kMax) return Quote(line);
  size_t cut = kMax;
  // Do not split a UTF-8 sequence: back up over continuation bytes.
  while (cut > kMax - 3 && (static_cast<uint8_t>(line[cut]) & 0xC0) == 0x80) --cut;
  return Quote(line.substr(0, cut)) + "...";
}

ProtocolError ParseFailure(simdjson::error_code error, std::string_view line) {
  std::string message = "Parse error: ";
  switch (error) {
    case simdjson::UTF8_ERROR:
      message += "line " + Excerpt(line) + " is not valid UTF-8";
      break;
    case simdjson::DEPTH_ERROR:
      message += "JSON nested deeper than " + std::to_string(simdjson::DEFAULT_MAX_DEPTH) +
                 " levels";
      break;
    case simdjson::MEMALLOC:
    case simdjson::CAPACITY:
      message += "out of memory for a line of " + std::to_string(line.size()) + " bytes";
      break;
    default: {
      message += "line " + Excerpt(line) + " is not JSON (" +
                 simdjson::error_message(error) + ")";
      // Text that does not even start like a message is most likely a log
      // line printed to the wrong stream.
      size_t start = line.find_first_not_of(kJsonWhitespace);
      if (start != std::string_view::npos && line[start] != '{') {
        message += "; stdout carries only JSON-RPC messages, write logs to stderr";
      }
      break;
    }
  }
  return ProtocolError{kJsonRpcParseError, std::move(message), RequestId()};
}

ProtocolError Invalid(std::string_view why, RequestId id = RequestId()) {
  return ProtocolError{kJsonRpcInvalidRequest, "Invalid Request: " + std::string(why),
                       std::move(id)};
}

std::string_view TypeName(dom::element_type type) {
  switch (type) {
    case dom::element_type::ARRAY: return "an array";
    case dom::element_type::OBJECT: return "an object";
    case dom::element_type::INT64:
    case dom::element_type::UINT64:
    case dom::element_type::DOUBLE: return "a number";
    case dom::element_type::STRING: return "a string";
    case dom::element_type::BOOL: return "a boolean";
    case dom::element_type::NULL_VALUE: return "null";
  }
  return "a value";
}

// The members the envelope is made of; the first occurrence counts, as for
// Params. Other members are ignored.
struct Envelope {
  std::optional<dom::element> jsonrpc, id, method, params, result, error;
};

Envelope ReadEnvelope(dom::object object) {
  Envelope envelope;
  for (dom::key_value_pair member : object) {
    std::optional<dom::element>* slot = nullptr;
    std::string_view key = member.key;
    if (key == "jsonrpc") slot = &envelope.jsonrpc;
    else if (key == "id") slot = &envelope.id;
    else if (key == "method") slot = &envelope.method;
    else if (key == "params") slot = &envelope.params;
    else if (key == "result") slot = &envelope.result;
    else if (key == "error") slot = &envelope.error;
    if (slot != nullptr && !slot->has_value()) *slot = member.value;
  }
  return envelope;
}

enum class IdState { kAbsent, kValid, kNull, kInvalid };

IdState ReadId(const std::optional<dom::element>& element, RequestId& id) {
  if (!element) return IdState::kAbsent;
  std::string_view text;
  int64_t number;
  if (element->get_string().get(text) == simdjson::SUCCESS) {
    id = RequestId(std::string(text));
    return IdState::kValid;
  }
  if (element->get_int64().get(number) == simdjson::SUCCESS) {
    id = RequestId(number);
    return IdState::kValid;
  }
  if (element->is_null()) return IdState::kNull;
  return IdState::kInvalid;
}

constexpr std::string_view kBadId =
    "'id' must be a string or an integer between -2^63 and 2^63-1";

}  // namespace

ProtocolError LineTooLongError(size_t limit) {
  return ProtocolError{kJsonRpcParseError,
                       "Parse error: message longer than the limit of " +
                           std::to_string(limit) + " bytes (max_message_mb); it was skipped",
                       RequestId()};
}

ProtocolError UnterminatedLineError(std::string_view rest) {
  return ProtocolError{kJsonRpcParseError,
                       "Parse error: output ended without a newline after " + Excerpt(rest) +
                           " (every message must end with '\\n'); it was not processed",
                       RequestId()};
}

MessageParser::MessageParser() : parser_(std::make_unique<dom::parser>()) {}

MessageParser::~MessageParser() = default;

ParsedLine MessageParser::Parse(std::string_view line) { return ParseImpl(line, false); }

ParsedLine MessageParser::ParsePadded(std::string_view line) { return ParseImpl(line, true); }

ParsedLine MessageParser::ParseImpl(std::string_view line, bool padded) {
  if (line.find_first_not_of(kJsonWhitespace) == std::string_view::npos) {
    return ParsedLine::Blank();
  }
  Message message;
  message.document_ = std::make_unique<dom::document>();
  dom::element root;
  simdjson::error_code error =
      parser_->parse_into_document(*message.document_, line.data(), line.size(), !padded)
          .get(root);
  if (error != simdjson::SUCCESS) return ParseFailure(error, line);

  dom::object object;
  if (root.get_object().get(object) != simdjson::SUCCESS) {
    if (root.is_array()) return Invalid("expected a JSON object, got an array (batches are not supported)");
    return Invalid("expected a JSON object, got " + std::string(TypeName(root.type())));
  }
  Envelope envelope = ReadEnvelope(object);
  RequestId id;
  IdState id_state = ReadId(envelope.id, id);
  // From here on, errors carry the id when it could be read, so the tool's
  // pending call is answered.
  std::string_view version;
  if (!envelope.jsonrpc) return Invalid("missing 'jsonrpc': \"2.0\"", id);
  if (envelope.jsonrpc->get_string().get(version) != simdjson::SUCCESS || version != "2.0") {
    return Invalid("'jsonrpc' must be \"2.0\"", id);
  }
  if (id_state == IdState::kInvalid) return Invalid(kBadId);

  if (envelope.method) {
    if (envelope.result || envelope.error) {
      return Invalid("a message has either 'method' or 'result'/'error', not both", id);
    }
    if (envelope.method->get_string().get(message.method_) != simdjson::SUCCESS) {
      return Invalid("'method' must be a string", id);
    }
    if (id_state == IdState::kNull) {
      return Invalid(std::string(kBadId) + " (null is reserved for answers to unreadable lines)");
    }
    if (envelope.params) {
      dom::object params;
      if (envelope.params->get_object().get(params) != simdjson::SUCCESS) {
        return Invalid("'params' must be an object (by-position arrays are not supported)", id);
      }
      message.params_ = ParamsAccess::Make(params, "");
      message.has_params_ = true;
    }
    message.kind_ = id_state == IdState::kValid ? MessageKind::kRequest : MessageKind::kNotification;
    message.id_ = std::move(id);
    return ParsedLine(std::move(message));
  }

  if (envelope.result || envelope.error) {
    if (envelope.result && envelope.error) {
      return Invalid("a response has either 'result' or 'error', not both", id);
    }
    if (id_state == IdState::kAbsent) return Invalid("a response needs an 'id'");
    if (envelope.result) {
      if (id_state == IdState::kNull) return Invalid("a result needs a non-null 'id'");
      message.result_json_ = simdjson::to_string(*envelope.result);
    } else {
      dom::object error_object;
      if (envelope.error->get_object().get(error_object) != simdjson::SUCCESS ||
          error_object["code"].get_int64().get(message.error_code_) != simdjson::SUCCESS ||
          error_object["message"].get_string().get(message.error_message_) != simdjson::SUCCESS) {
        return Invalid("'error' must be an object with an integer 'code' and a string 'message'",
                       id);
      }
      message.is_error_ = true;
    }
    message.kind_ = MessageKind::kResponse;
    message.id_ = std::move(id);
    return ParsedLine(std::move(message));
  }
  return Invalid("missing 'method'", id);
}

// ---- Serialization --------------------------------------------------------------

WireMessage::WireMessage(size_t size_hint)
    : buffer_(nullptr, size_hint + size_hint / 8 + 128) {}

WireMessage WireMessage::Copy(std::string_view bytes) {
  WireMessage message(bytes.size());
  std::memcpy(message.buffer_.Push(bytes.size()), bytes.data(), bytes.size());
  return message;
}

namespace jsonrpc_internal {

namespace {
void BeginEnvelope(JsonWriter& writer) {
  writer.StartObject();
  WriteJsonKey(writer, "jsonrpc");
  writer.String("2.0", 3);
}
}  // namespace

void BeginResult(JsonWriter& writer, const RequestId& id) {
  BeginEnvelope(writer);
  WriteJsonKey(writer, "id");
  id.WriteTo(writer);
  WriteJsonKey(writer, "result");
}

void BeginNotification(JsonWriter& writer, std::string_view method) {
  BeginEnvelope(writer);
  WriteJsonKey(writer, "method");
  WriteJsonString(writer, method);
  WriteJsonKey(writer, "params");
}

void EndMessage(JsonWriter& writer, WireMessage& message) {
  writer.EndObject();
  message.buffer().Put('\n');
  // GetString() appends a NUL (and may grow the buffer for it): do it now,
  // so that bytes() never reallocates.
  static_cast<void>(message.buffer().GetString());
}

void BeginError(JsonWriter& writer, const RequestId& id, int code, std::string_view message) {
  BeginEnvelope(writer);
  WriteJsonKey(writer, "id");
  id.WriteTo(writer);
  WriteJsonKey(writer, "error");
  writer.StartObject();
  WriteJsonKey(writer, "code");
  writer.Int(code);
  WriteJsonKey(writer, "message");
  if (IsValidUtf8(message)) {
    WriteJsonString(writer, message);
  } else {
    WriteJsonString(writer, ToValidUtf8(message));
  }
}

void EndError(JsonWriter& writer, WireMessage& message) {
  writer.EndObject();
  EndMessage(writer, message);
}

}  // namespace jsonrpc_internal

WireMessage SerializeRequest(int64_t id, std::string_view method, std::string_view params_json) {
  WireMessage wire(params_json.size() + method.size() + 64);
  JsonWriter writer(wire.buffer());
  writer.StartObject();
  WriteJsonKey(writer, "jsonrpc");
  writer.String("2.0", 3);
  WriteJsonKey(writer, "id");
  writer.Int64(id);
  WriteJsonKey(writer, "method");
  WriteJsonString(writer, method);
  if (!params_json.empty()) {
    WriteJsonKey(writer, "params");
    writer.RawValue(params_json.data(), params_json.size(), rapidjson::kObjectType);
  }
  jsonrpc_internal::EndMessage(writer, wire);
  return wire;
}

WireMessage SerializeEmptyResult(const RequestId& id) {
  return SerializeResult(id, [](JsonWriter& writer) {
    writer.StartObject();
    writer.EndObject();
  });
}

WireMessage SerializeError(const RequestId& id, int code, std::string_view message) {
  WireMessage wire;
  JsonWriter writer(wire.buffer());
  jsonrpc_internal::BeginError(writer, id, code, message);
  jsonrpc_internal::EndError(writer, wire);
  return wire;
}

WireMessage SerializeProtocolError(const ProtocolError& error) {
  return SerializeError(error.id, error.code, error.message);
}

WireMessage SerializeNotification(std::string_view method) {
  WireMessage wire;
  JsonWriter writer(wire.buffer());
  writer.StartObject();
  WriteJsonKey(writer, "jsonrpc");
  writer.String("2.0", 3);
  WriteJsonKey(writer, "method");
  WriteJsonString(writer, method);
  jsonrpc_internal::EndMessage(writer, wire);
  return wire;
}

}  // namespace toolvfs
