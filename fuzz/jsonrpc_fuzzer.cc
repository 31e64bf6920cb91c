// libFuzzer target: any bytes a tool writes on its stdout go through the
// framer and the JSON-RPC parser without crashing, every line gets exactly
// one outcome, and every rejected line gets an answer that is itself a valid
// JSON-RPC error response (one line, the right code and id). Parameter
// accessors and base64 are exercised on what parses; an accepted base64
// string re-encodes to itself (decoding is canonical). Lines are parsed from
// the framer's buffer without copying, so ASan checks the padding promise.
//
// Input: byte 0 picks the line limit (small, to reach the over-long paths,
// or the default), byte 1 the read size; the rest is the stream.
// Build and run with `make fuzz`.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "protocol/base64.h"
#include "protocol/jsonrpc.h"
#include "protocol/ndjson.h"
#include "protocol/wire_errors.h"

namespace toolvfs {
namespace {

void Check(bool condition) {
  if (!condition) std::abort();
}

void CheckOneLine(std::string_view text) { Check(text.find('\n') == std::string_view::npos); }

// An answer must be one line that the codec reads back as the same error.
void CheckAnswer(const WireMessage& answer, int code, const RequestId& id) {
  std::string_view bytes = answer.bytes();
  Check(!bytes.empty() && bytes.back() == '\n');
  bytes.remove_suffix(1);
  CheckOneLine(bytes);
  MessageParser parser;
  ParsedLine parsed = parser.Parse(bytes);
  Check(parsed.is_message());
  const Message& message = parsed.message();
  Check(message.kind() == MessageKind::kResponse && message.is_error());
  Check(message.error_code() == code);
  Check(message.id() == id);
}

void CheckStatus(const Status& status, const RequestId& id) {
  if (status.ok()) return;
  Check(status.code() == StatusCode::kInvalidArgument);
  CheckOneLine(status.message());
  CheckAnswer(ErrorResponse(id, status), kJsonRpcInvalidParams, id);
}

void ExerciseParams(const Params& params, const RequestId& id, int depth) {
  static constexpr std::string_view kNames[] = {"path", "content", "offset", "paths",
                                                "headers", "recursive", "mode", "tool"};
  CheckStatus(params.ExpectOnly({"path", "content"}), id);
  for (std::string_view name : kNames) {
    CheckStatus(params.String(name).status(), id);
    CheckStatus(params.OptionalUint(name).status(), id);
    CheckStatus(params.OptionalBool(name).status(), id);
    CheckStatus(params.StringArray(name).status(), id);
    Result<std::optional<std::string_view>> text = params.OptionalString(name);
    CheckStatus(text.status(), id);
    if (text.ok() && text->has_value()) {
      Result<std::string> decoded = Base64Decode(**text);
      if (decoded.ok()) {
        Check(Base64Encode(*decoded) == **text);
      } else {
        CheckOneLine(decoded.status().message());
      }
    }
    static_cast<void>(params.Json(name));
    static_cast<void>(params.TypeOf(name));
    if (depth < 3) {
      Result<std::optional<Params>> object = params.OptionalObject(name);
      CheckStatus(object.status(), id);
      if (object.ok() && object->has_value()) ExerciseParams(**object, id, depth + 1);
      Result<std::vector<Params>> objects = params.ObjectArray(name);
      CheckStatus(objects.status(), id);
      if (objects.ok()) {
        for (const Params& item : *objects) ExerciseParams(item, id, depth + 1);
      }
    }
  }
  // What parsed can be written back and read again.
  std::string json = params.ToJson();
  MessageParser parser;
  ParsedLine again =
      parser.Parse(R"({"jsonrpc":"2.0","method":"m","params":)" + json + "}");
  Check(again.is_message() && again.message().params().ToJson() == json);
}

void HandleLine(MessageParser& parser, std::string_view line, bool padded) {
  ParsedLine parsed = padded ? parser.ParsePadded(line) : parser.Parse(line);
  // Copying or not must not change the outcome.
  MessageParser copying;
  ParsedLine copied = copying.Parse(std::string(line));
  Check(parsed.is_blank() == copied.is_blank() && parsed.is_error() == copied.is_error());
  if (parsed.is_blank()) return;
  if (parsed.is_error()) {
    const ProtocolError& error = parsed.error();
    Check(error.code == kJsonRpcParseError || error.code == kJsonRpcInvalidRequest);
    Check(error.message == copied.error().message);
    CheckOneLine(error.message);
    CheckAnswer(SerializeProtocolError(error), error.code, error.id);
    return;
  }
  const Message& message = parsed.message();
  if (message.kind() != MessageKind::kResponse) {
    ExerciseParams(message.params(), message.id(), 0);
  }
  if (message.kind() == MessageKind::kRequest) {
    CheckAnswer(ErrorResponse(message.id(), NotFoundError("File 'x' does not exist")),
                kJsonRpcNotFound, message.id());
    WireMessage result = SerializeResult(message.id(), [&](JsonWriter& writer) {
      writer.StartObject();
      WriteJsonKey(writer, "method");
      WriteJsonString(writer, message.method());
      writer.EndObject();
    });
    std::string_view bytes = result.bytes();
    Check(bytes.back() == '\n');
    ParsedLine answer = copying.Parse(bytes.substr(0, bytes.size() - 1));
    Check(answer.is_message() && answer.message().kind() == MessageKind::kResponse &&
          answer.message().id() == message.id());
  }
}

}  // namespace
}  // namespace toolvfs

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace toolvfs;  // NOLINT: a fuzzer entry point
  if (size < 2) return 0;
  size_t limit = data[0] & 1 ? 8 + (data[0] >> 1) : kDefaultMaxLineBytes;
  size_t read_size = 1 + data[1] % 97;
  std::string_view stream(reinterpret_cast<const char*>(data) + 2, size - 2);

  LineSplitter splitter(limit);
  MessageParser parser;
  while (!stream.empty()) {
    size_t piece = std::min(read_size, stream.size());
    std::span<char> space = splitter.PrepareAppend(piece);
    std::memcpy(space.data(), stream.data(), piece);
    splitter.CommitAppend(piece);
    stream.remove_prefix(piece);
    Check(splitter.capacity() <= limit + std::max(piece, LineSplitter::kDefaultReadChunk) +
                                     kLinePadding);
    while (std::optional<LineSplitter::Event> event = splitter.Next()) {
      if (event->kind == LineSplitter::EventKind::kTooLong) {
        ProtocolError error = LineTooLongError(limit);
        CheckAnswer(SerializeProtocolError(error), error.code, error.id);
        continue;
      }
      Check(event->kind == LineSplitter::EventKind::kLine);
      Check(event->line.size() <= limit);
      Check(event->line.find('\n') == std::string_view::npos);
      HandleLine(parser, event->line, true);
    }
  }
  if (std::optional<LineSplitter::Event> rest = splitter.Finish()) {
    Check(rest->kind == LineSplitter::EventKind::kUnterminated);
    Check(!rest->line.empty() && rest->line.size() <= limit);
    HandleLine(parser, rest->line, true);
  }
  return 0;
}
