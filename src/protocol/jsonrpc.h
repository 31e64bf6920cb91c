// JSON-RPC 2.0 messages of the VFS tool protocol (SPEC.md §4, D11).
//
// Reading: MessageParser turns one NDJSON line from a tool into a Message
// (a request, a notification or a response) or into a ProtocolError that
// carries exactly the code, message and id to answer with. Parsing is
// simdjson's (full validation, UTF-8 included); a Message owns its parsed
// document, so it stays valid after the line buffer is reused and can be
// handed to another thread. Handlers read their parameters through Params,
// whose accessors fail with InvalidArgument "Invalid params: ..." messages.
//
// Writing: Serialize* build the host's lines (responses and notifications)
// with RapidJSON's writer, each ending in '\n' and ready for the pipe.
//
// Nothing here throws. MessageParser is not thread-safe (one per reader);
// Message, Params and WireMessage are plain values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "core/status.h"
#include "protocol/json_writer.h"

namespace simdjson::dom {
class document;
class parser;
}  // namespace simdjson::dom

namespace toolvfs {

// Error codes of the protocol: JSON-RPC 2.0's own and D11's (SPEC.md §2.5).
inline constexpr int kJsonRpcParseError = -32700;
inline constexpr int kJsonRpcInvalidRequest = -32600;
inline constexpr int kJsonRpcMethodNotFound = -32601;
inline constexpr int kJsonRpcInvalidParams = -32602;
inline constexpr int kJsonRpcInternalError = -32603;
inline constexpr int kJsonRpcAccessDenied = -32001;
inline constexpr int kJsonRpcNotFound = -32002;
inline constexpr int kJsonRpcAlreadyExists = -32003;
inline constexpr int kJsonRpcTimeout = -32004;
inline constexpr int kJsonRpcCancelled = -32005;
inline constexpr int kJsonRpcUnavailable = -32006;

// A request id: a string, an integer, or null (only in error answers to
// lines whose id could not be read). Fractional and out-of-range numbers
// are not ids (the request is rejected), so an id always echoes exactly.
class RequestId {
 public:
  RequestId() = default;  // null
  explicit RequestId(int64_t value) : value_(value) {}
  explicit RequestId(std::string value) : value_(std::move(value)) {}

  bool is_null() const { return std::holds_alternative<std::monostate>(value_); }
  bool is_integer() const { return std::holds_alternative<int64_t>(value_); }
  bool is_string() const { return std::holds_alternative<std::string>(value_); }
  int64_t integer() const { return std::get<int64_t>(value_); }
  const std::string& string() const { return std::get<std::string>(value_); }

  void WriteTo(JsonWriter& writer) const;
  // The id as JSON: 7, "abc" or null. For logs, maps and messages.
  std::string ToJson() const;

  friend bool operator==(const RequestId&, const RequestId&) = default;

 private:
  std::variant<std::monostate, int64_t, std::string> value_;
};

struct RequestIdHash {
  size_t operator()(const RequestId& id) const;
};

enum class JsonType { kNull, kBool, kNumber, kString, kArray, kObject };

// A read-only view of a JSON object in a Message: a request's params, or an
// object nested in them. Valid while its Message lives.
//
// Accessors name the parameter in their errors, e.g. "Invalid params:
// 'offset' must be a non-negative integer"; nested views name the whole
// path ("'headers[1].value' must be a string"). An optional parameter given
// as null counts as absent; a required one does not. With duplicate keys
// the first one counts, for every accessor alike.
//
// Unknown parameters are errors, not ignored (see docs/protocol.md): a
// handler calls ExpectOnly with the names it knows first, so that a typo or
// an option this host does not have ("offset" on a host without ranged
// reads) fails instead of silently doing something else.
class Params {
 public:
  Params();  // no members (a request without params)

  bool empty() const;
  size_t size() const;
  // Present and not null.
  bool Has(std::string_view name) const;
  // Type of a member, or nullopt if absent.
  std::optional<JsonType> TypeOf(std::string_view name) const;

  // InvalidArgument naming the first member not in `names`.
  Status ExpectOnly(std::initializer_list<std::string_view> names) const;

  Result<std::string_view> String(std::string_view name) const;
  Result<std::optional<std::string_view>> OptionalString(std::string_view name) const;
  Result<uint64_t> Uint(std::string_view name) const;
  Result<std::optional<uint64_t>> OptionalUint(std::string_view name) const;
  Result<std::optional<bool>> OptionalBool(std::string_view name) const;
  Result<std::vector<std::string_view>> StringArray(std::string_view name) const;
  Result<std::optional<std::vector<std::string_view>>> OptionalStringArray(
      std::string_view name) const;
  Result<std::optional<Params>> OptionalObject(std::string_view name) const;
  // An array of objects, e.g. http headers [{name, value}].
  Result<std::vector<Params>> ObjectArray(std::string_view name) const;
  // Any value as compact JSON text, for values passed through as they are
  // (a tool's `state.content`); nullopt if absent.
  std::optional<std::string> Json(std::string_view name) const;

  // The whole object as compact JSON text ("{}" when empty).
  std::string ToJson() const;

 private:
  friend class MessageParser;
  friend struct ParamsAccess;

  // A simdjson::dom::object, stored in place so that simdjson's header stays
  // out of this one (sizes checked in jsonrpc.cc).
  alignas(8) unsigned char object_[16] = {};
  bool present_ = false;
  std::string path_;  // "" at the top; "headers[1]." for a nested object
};

enum class MessageKind {
  kRequest,       // method + id: the host must answer
  kNotification,  // method, no id: no answer (result, error, state, cancel)
  kResponse,      // result or error + id (a tool answering; the host sends no requests)
};

// One message from a tool. Owns its parsed document; move-only.
class Message {
 public:
  Message(Message&&) noexcept;
  Message& operator=(Message&&) noexcept;
  ~Message();

  MessageKind kind() const { return kind_; }
  // kRequest, kResponse (may be null in an error response); null otherwise.
  const RequestId& id() const { return id_; }
  // kRequest, kNotification.
  std::string_view method() const { return method_; }
  // kRequest, kNotification: the params object, empty when absent.
  const Params& params() const { return params_; }
  bool has_params() const { return has_params_; }

  // kResponse: either a result (as compact JSON) or an error.
  bool is_error() const { return is_error_; }
  const std::string& result_json() const { return result_json_; }
  int64_t error_code() const { return error_code_; }
  std::string_view error_message() const { return error_message_; }

 private:
  friend class MessageParser;
  Message();

  std::unique_ptr<simdjson::dom::document> document_;
  MessageKind kind_ = MessageKind::kNotification;
  RequestId id_;
  std::string_view method_;  // into document_
  Params params_;
  bool has_params_ = false;
  bool is_error_ = false;
  std::string result_json_;
  int64_t error_code_ = 0;
  std::string_view error_message_;  // into document_
};

// A line that is not a valid JSON-RPC 2.0 message, with the answer it gets.
struct ProtocolError {
  int code = kJsonRpcParseError;  // kJsonRpcParseError or kJsonRpcInvalidRequest
  std::string message;            // "Parse error: ..." / "Invalid Request: ..."; one line
  RequestId id;                   // the line's id if it had a valid one, else null
};

// The ProtocolError for a line longer than `limit` bytes (a kTooLong event
// of LineSplitter): -32700, id null, naming the limit.
ProtocolError LineTooLongError(size_t limit);

// The ProtocolError for bytes after the last newline at end of stream (a
// kUnterminated event): -32700, id null. Every message must end with '\n';
// an unterminated one may be a truncated write, so it is not processed.
ProtocolError UnterminatedLineError(std::string_view rest);

// The outcome of parsing one line: a message, a protocol error, or a blank
// line (empty or only JSON whitespace), which is skipped without an answer.
class ParsedLine {
 public:
  static ParsedLine Blank() { return ParsedLine(std::monostate{}); }
  ParsedLine(Message message) : value_(std::move(message)) {}      // NOLINT
  ParsedLine(ProtocolError error) : value_(std::move(error)) {}    // NOLINT

  bool is_blank() const { return std::holds_alternative<std::monostate>(value_); }
  bool is_message() const { return std::holds_alternative<Message>(value_); }
  bool is_error() const { return std::holds_alternative<ProtocolError>(value_); }
  Message& message() { return std::get<Message>(value_); }
  const Message& message() const { return std::get<Message>(value_); }
  const ProtocolError& error() const { return std::get<ProtocolError>(value_); }

 private:
  explicit ParsedLine(std::monostate) {}
  std::variant<std::monostate, Message, ProtocolError> value_;
};

class MessageParser {
 public:
  MessageParser();
  MessageParser(const MessageParser&) = delete;
  MessageParser& operator=(const MessageParser&) = delete;
  ~MessageParser();

  // Parses one line (without its '\n'; a trailing '\r' is whitespace).
  // Copies the line first: use ParsePadded where the padding is known.
  ParsedLine Parse(std::string_view line);

  // The same without the copy. The kLinePadding (64) bytes after the line
  // must be readable, as for every line LineSplitter yields.
  ParsedLine ParsePadded(std::string_view line);

 private:
  ParsedLine ParseImpl(std::string_view line, bool padded);

  std::unique_ptr<simdjson::dom::parser> parser_;
};

// One serialized message: compact JSON and a final '\n', ready for the
// pipe. Holds the writer's buffer, so a 1 MiB answer is not copied again.
class WireMessage {
 public:
  explicit WireMessage(size_t size_hint = 0);
  // A copy of a serialized message (e.g. one built once, sent per run).
  static WireMessage Copy(std::string_view bytes);
  std::string_view bytes() const { return JsonView(buffer_); }
  // bytes() without the final '\n' (for a transport that adds its own).
  std::string_view line() const {
    std::string_view all = bytes();
    if (all.ends_with('\n')) all.remove_suffix(1);
    return all;
  }
  size_t size() const { return buffer_.GetSize(); }
  std::string ToString() const { return std::string(bytes()); }

  // For the Serialize functions below: the buffer a JsonWriter writes into.
  rapidjson::StringBuffer& buffer() { return buffer_; }

 private:
  rapidjson::StringBuffer buffer_;
};

namespace jsonrpc_internal {
// {"jsonrpc":"2.0","id":ID,"result": — the caller writes one value next.
void BeginResult(JsonWriter& writer, const RequestId& id);
// {"jsonrpc":"2.0","method":METHOD,"params": — the caller writes an object.
void BeginNotification(JsonWriter& writer, std::string_view method);
// Closes the message object and appends '\n'.
void EndMessage(JsonWriter& writer, WireMessage& message);
}  // namespace jsonrpc_internal

// {"jsonrpc":"2.0","id":ID,"result":VALUE}\n where `write_result(writer)`
// writes VALUE (one JSON value, normally an object). `size_hint` presizes
// the buffer: pass the payload size for large results.
template <typename WriteResult>
WireMessage SerializeResult(const RequestId& id, WriteResult&& write_result,
                            size_t size_hint = 0) {
  WireMessage message(size_hint);
  JsonWriter writer(message.buffer());
  jsonrpc_internal::BeginResult(writer, id);
  std::forward<WriteResult>(write_result)(writer);
  jsonrpc_internal::EndMessage(writer, message);
  return message;
}

// {"jsonrpc":"2.0","id":ID,"result":{}}\n
WireMessage SerializeEmptyResult(const RequestId& id);

// {"jsonrpc":"2.0","id":ID,"error":{"code":C,"message":M}}\n. The message
// is made valid UTF-8 if it is not (an error must always be deliverable).
WireMessage SerializeError(const RequestId& id, int code, std::string_view message);

// The same with "data":VALUE, written by `write_data(writer)`.
template <typename WriteData>
WireMessage SerializeError(const RequestId& id, int code, std::string_view message,
                           WriteData&& write_data);

// The answer to a line that was not a valid message.
WireMessage SerializeProtocolError(const ProtocolError& error);

// {"jsonrpc":"2.0","method":M,"params":VALUE}\n where `write_params(writer)`
// writes an object: init, pending, apply.
template <typename WriteParams>
WireMessage SerializeNotification(std::string_view method, WriteParams&& write_params,
                                  size_t size_hint = 0) {
  WireMessage message(size_hint);
  JsonWriter writer(message.buffer());
  jsonrpc_internal::BeginNotification(writer, method);
  std::forward<WriteParams>(write_params)(writer);
  jsonrpc_internal::EndMessage(writer, message);
  return message;
}

// {"jsonrpc":"2.0","method":M}\n: a notification without params (cancel).
WireMessage SerializeNotification(std::string_view method);

// {"jsonrpc":"2.0","id":ID,"method":M,"params":PARAMS}\n, for the requests
// toolvfs itself sends (to MCP servers, and the builtins' requests to the
// host's own handlers). `params_json` is a serialized object, or empty for
// none.
WireMessage SerializeRequest(int64_t id, std::string_view method, std::string_view params_json);

namespace jsonrpc_internal {
void BeginError(JsonWriter& writer, const RequestId& id, int code, std::string_view message);
void EndError(JsonWriter& writer, WireMessage& message);
}  // namespace jsonrpc_internal

template <typename WriteData>
WireMessage SerializeError(const RequestId& id, int code, std::string_view message,
                           WriteData&& write_data) {
  WireMessage wire;
  JsonWriter writer(wire.buffer());
  jsonrpc_internal::BeginError(writer, id, code, message);
  WriteJsonKey(writer, "data");
  std::forward<WriteData>(write_data)(writer);
  jsonrpc_internal::EndError(writer, wire);
  return wire;
}

}  // namespace toolvfs
