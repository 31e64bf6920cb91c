#include "protocol/jsonrpc.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <deque>
#include <string>

#include "protocol/base64.h"
#include "protocol/json_writer.h"
#include "protocol/ndjson.h"

namespace toolvfs {
namespace {

Message ParseMessage(MessageParser& parser, std::string_view line) {
  ParsedLine parsed = parser.Parse(line);
  EXPECT_TRUE(parsed.is_message()) << line << " -> "
                                   << (parsed.is_error() ? parsed.error().message : "blank");
  return std::move(parsed.message());
}

ProtocolError ParseError(std::string_view line) {
  MessageParser parser;
  ParsedLine parsed = parser.Parse(line);
  EXPECT_TRUE(parsed.is_error()) << line;
  if (!parsed.is_error()) return {};
  return parsed.error();
}

// Every answer must be one line that parses as JSON.
rapidjson::Document ParseWire(const WireMessage& message) {
  std::string_view bytes = message.bytes();
  EXPECT_FALSE(bytes.empty());
  EXPECT_EQ(bytes.back(), '\n');
  EXPECT_EQ(bytes.find('\n'), bytes.size() - 1);
  rapidjson::Document document;
  document.Parse<rapidjson::kParseValidateEncodingFlag>(bytes.data(), bytes.size() - 1);
  EXPECT_FALSE(document.HasParseError()) << bytes;
  return document;
}

TEST(MessageParserTest, Request) {
  MessageParser parser;
  Message message = ParseMessage(
      parser, R"({"jsonrpc":"2.0","id":7,"method":"fs.read","params":{"path":"src/a.txt"}})");
  EXPECT_EQ(message.kind(), MessageKind::kRequest);
  EXPECT_EQ(message.id(), RequestId(int64_t{7}));
  EXPECT_EQ(message.method(), "fs.read");
  EXPECT_TRUE(message.has_params());
  Result<std::string_view> path = message.params().String("path");
  ASSERT_TRUE(path.ok());
  EXPECT_EQ(*path, "src/a.txt");
}

TEST(MessageParserTest, IdsAreStringsOrIntegersAndEchoExactly) {
  MessageParser parser;
  EXPECT_EQ(ParseMessage(parser, R"({"jsonrpc":"2.0","id":"req-1","method":"m"})").id(),
            RequestId(std::string("req-1")));
  EXPECT_EQ(ParseMessage(parser, R"({"jsonrpc":"2.0","id":-5,"method":"m"})").id(),
            RequestId(int64_t{-5}));
  EXPECT_EQ(ParseMessage(parser, R"({"jsonrpc":"2.0","id":0,"method":"m"})").id(),
            RequestId(int64_t{0}));
  Message big = ParseMessage(parser, R"({"jsonrpc":"2.0","id":9223372036854775807,"method":"m"})");
  EXPECT_EQ(big.id().ToJson(), "9223372036854775807");
  EXPECT_EQ(RequestId(std::string("a\"b")).ToJson(), R"("a\"b")");
  EXPECT_EQ(RequestId().ToJson(), "null");
  RequestIdHash hash;
  EXPECT_EQ(hash(RequestId(int64_t{3})), hash(RequestId(int64_t{3})));
}

TEST(MessageParserTest, NotificationHasNoId) {
  MessageParser parser;
  Message message = ParseMessage(
      parser, R"({"jsonrpc":"2.0","method":"result","params":{"content":"done"}})");
  EXPECT_EQ(message.kind(), MessageKind::kNotification);
  EXPECT_TRUE(message.id().is_null());
  EXPECT_EQ(message.method(), "result");
  Message bare = ParseMessage(parser, R"({"jsonrpc":"2.0","method":"cancel"})");
  EXPECT_FALSE(bare.has_params());
  EXPECT_TRUE(bare.params().empty());
}

TEST(MessageParserTest, ResponsesFromTheTool) {
  MessageParser parser;
  Message result = ParseMessage(parser, R"({"jsonrpc":"2.0","id":3,"result":{"a":[1,2]}})");
  EXPECT_EQ(result.kind(), MessageKind::kResponse);
  EXPECT_FALSE(result.is_error());
  EXPECT_EQ(result.result_json(), R"({"a":[1,2]})");
  Message error = ParseMessage(
      parser, R"({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"no"}})");
  EXPECT_TRUE(error.is_error());
  EXPECT_TRUE(error.id().is_null());
  EXPECT_EQ(error.error_code(), -32600);
  EXPECT_EQ(error.error_message(), "no");
}

TEST(MessageParserTest, BlankLinesAreSkipped) {
  MessageParser parser;
  EXPECT_TRUE(parser.Parse("").is_blank());
  EXPECT_TRUE(parser.Parse("  \t").is_blank());
  EXPECT_TRUE(parser.Parse("\r").is_blank());
}

TEST(MessageParserTest, CrlfLinesParse) {
  MessageParser parser;
  EXPECT_EQ(ParseMessage(parser, "{\"jsonrpc\":\"2.0\",\"method\":\"cancel\"}\r").method(),
            "cancel");
}

TEST(MessageParserTest, UnnamespacedMethodIsNotACodecError) {
  // "read" is a well-formed request: the host answers it with -32601.
  MessageParser parser;
  Message message =
      ParseMessage(parser, R"({"jsonrpc":"2.0","id":1,"method":"read","params":{}})");
  EXPECT_EQ(message.kind(), MessageKind::kRequest);
  EXPECT_EQ(message.method(), "read");
}

TEST(MessageParserTest, NotJsonIsAParseErrorWithNullId) {
  ProtocolError error = ParseError("Loading config...");
  EXPECT_EQ(error.code, kJsonRpcParseError);
  EXPECT_TRUE(error.id.is_null());
  EXPECT_EQ(error.message.rfind("Parse error: line 'Loading config...' is not JSON (", 0), 0u)
      << error.message;
  EXPECT_NE(error.message.find("write logs to stderr"), std::string::npos);

  ProtocolError truncated = ParseError(R"({"jsonrpc":"2.0","id":1,"method":)");
  EXPECT_EQ(truncated.code, kJsonRpcParseError);
  EXPECT_TRUE(truncated.id.is_null());
  EXPECT_EQ(ParseError(R"({"a":1}{"b":2})").code, kJsonRpcParseError);
  EXPECT_EQ(ParseError("{\"a\":\"tab\tinside\"}").code, kJsonRpcParseError);
}

TEST(MessageParserTest, LongLinesAreCutInMessages) {
  std::string line = "not json " + std::string(200, 'x');
  ProtocolError error = ParseError(line);
  EXPECT_NE(error.message.find("'not json xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'..."),
            std::string::npos)
      << error.message;
  EXPECT_LT(error.message.size(), 250u);
}

TEST(MessageParserTest, InvalidUtf8IsAParseError) {
  ProtocolError error = ParseError("{\"jsonrpc\":\"2.0\",\"method\":\"caf\xC3\"}");
  EXPECT_EQ(error.code, kJsonRpcParseError);
  EXPECT_NE(error.message.find("is not valid UTF-8"), std::string::npos) << error.message;
  EXPECT_NE(error.message.find("\\xc3"), std::string::npos) << error.message;
  EXPECT_EQ(ParseError("{\"a\":\"\xFF\"}").code, kJsonRpcParseError);
}

TEST(MessageParserTest, DeepNestingIsAParseError) {
  std::string deep = std::string(5000, '[') + std::string(5000, ']');
  ProtocolError error = ParseError(deep);
  EXPECT_EQ(error.code, kJsonRpcParseError);
  EXPECT_NE(error.message.find("nested deeper"), std::string::npos) << error.message;
}

TEST(MessageParserTest, JsonThatIsNotAnObjectIsAnInvalidRequest) {
  for (const char* line : {"42", "\"fs.read\"", "null", "true"}) {
    ProtocolError error = ParseError(line);
    EXPECT_EQ(error.code, kJsonRpcInvalidRequest) << line;
    EXPECT_TRUE(error.id.is_null());
    EXPECT_EQ(error.message.rfind("Invalid Request: expected a JSON object, got ", 0), 0u)
        << error.message;
  }
  ProtocolError batch = ParseError(R"([{"jsonrpc":"2.0","id":1,"method":"fs.read"}])");
  EXPECT_EQ(batch.code, kJsonRpcInvalidRequest);
  EXPECT_EQ(batch.message,
            "Invalid Request: expected a JSON object, got an array (batches are not supported)");
}

TEST(MessageParserTest, MissingOrWrongJsonrpc) {
  ProtocolError missing = ParseError(R"({"id":4,"method":"fs.read"})");
  EXPECT_EQ(missing.code, kJsonRpcInvalidRequest);
  EXPECT_EQ(missing.message, R"(Invalid Request: missing 'jsonrpc': "2.0")");
  EXPECT_EQ(missing.id, RequestId(int64_t{4})) << "a readable id is echoed";
  for (const char* line : {R"({"jsonrpc":"1.0","id":4,"method":"m"})",
                           R"({"jsonrpc":2.0,"id":4,"method":"m"})",
                           R"({"jsonrpc":null,"id":4,"method":"m"})"}) {
    ProtocolError error = ParseError(line);
    EXPECT_EQ(error.code, kJsonRpcInvalidRequest) << line;
    EXPECT_EQ(error.message, R"(Invalid Request: 'jsonrpc' must be "2.0")");
  }
}

TEST(MessageParserTest, MissingOrWrongMethod) {
  ProtocolError missing = ParseError(R"({"jsonrpc":"2.0","id":"x","params":{}})");
  EXPECT_EQ(missing.code, kJsonRpcInvalidRequest);
  EXPECT_EQ(missing.message, "Invalid Request: missing 'method'");
  EXPECT_EQ(missing.id, RequestId(std::string("x")));
  ProtocolError number = ParseError(R"({"jsonrpc":"2.0","id":1,"method":5})");
  EXPECT_EQ(number.message, "Invalid Request: 'method' must be a string");
  ProtocolError both = ParseError(R"({"jsonrpc":"2.0","id":1,"method":"m","result":{}})");
  EXPECT_EQ(both.code, kJsonRpcInvalidRequest);
}

TEST(MessageParserTest, BadIdTypes) {
  for (const char* id : {"1.5", "1e3", "true", "{}", "[]", "18446744073709551615", "-0.0"}) {
    std::string line = std::string(R"({"jsonrpc":"2.0","method":"m","id":)") + id + "}";
    ProtocolError error = ParseError(line);
    EXPECT_EQ(error.code, kJsonRpcInvalidRequest) << line;
    EXPECT_TRUE(error.id.is_null());
    EXPECT_EQ(error.message.rfind("Invalid Request: 'id' must be a string or an integer", 0), 0u)
        << error.message;
  }
  ProtocolError null_id = ParseError(R"({"jsonrpc":"2.0","method":"m","id":null})");
  EXPECT_EQ(null_id.code, kJsonRpcInvalidRequest);
}

TEST(MessageParserTest, ParamsMustBeAnObject) {
  for (const char* params : {"[1,2]", "\"a\"", "null", "3"}) {
    std::string line = std::string(R"({"jsonrpc":"2.0","id":2,"method":"m","params":)") +
                       params + "}";
    ProtocolError error = ParseError(line);
    EXPECT_EQ(error.code, kJsonRpcInvalidRequest) << line;
    EXPECT_EQ(error.id, RequestId(int64_t{2}));
    EXPECT_EQ(error.message.rfind("Invalid Request: 'params' must be an object", 0), 0u);
  }
}

TEST(MessageParserTest, MalformedResponses) {
  EXPECT_EQ(ParseError(R"({"jsonrpc":"2.0","result":{}})").message,
            "Invalid Request: a response needs an 'id'");
  EXPECT_EQ(ParseError(R"({"jsonrpc":"2.0","id":1,"result":1,"error":{}})").code,
            kJsonRpcInvalidRequest);
  EXPECT_EQ(ParseError(R"({"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"m"}})").code,
            kJsonRpcInvalidRequest);
  EXPECT_EQ(ParseError(R"({"jsonrpc":"2.0","id":1,"error":"boom"})").code,
            kJsonRpcInvalidRequest);
}

TEST(MessageParserTest, OverLongLineError) {
  ProtocolError error = LineTooLongError(kDefaultMaxLineBytes);
  EXPECT_EQ(error.code, kJsonRpcParseError);
  EXPECT_TRUE(error.id.is_null());
  EXPECT_EQ(error.message,
            "Parse error: message longer than the limit of 10485760 bytes (max_message_mb); it "
            "was skipped");
}

TEST(MessageParserTest, UnterminatedLineError) {
  ProtocolError error = UnterminatedLineError(R"({"jsonrpc":"2.0","method":"result")");
  EXPECT_EQ(error.code, kJsonRpcParseError);
  EXPECT_TRUE(error.id.is_null());
  EXPECT_EQ(error.message,
            R"(Parse error: output ended without a newline after '{"jsonrpc":"2.0","method":"result"' )"
            R"((every message must end with '\n'); it was not processed)");
}

TEST(MessageParserTest, MessagesOwnTheirDataAndOutliveTheLineAndTheNextParse) {
  MessageParser parser;
  std::string line = R"({"jsonrpc":"2.0","id":1,"method":"fs.write","params":{"path":"a","content":"first"}})";
  Message first = ParseMessage(parser, line);
  line.assign(line.size(), 'x');
  Message second = ParseMessage(
      parser, R"({"jsonrpc":"2.0","id":2,"method":"fs.read","params":{"path":"bbbbbbbbbbbbbbbb"}})");
  Message moved = std::move(first);
  EXPECT_EQ(moved.method(), "fs.write");
  EXPECT_EQ(*moved.params().String("content"), "first");
  EXPECT_EQ(*second.params().String("path"), "bbbbbbbbbbbbbbbb");
}

TEST(MessageParserTest, ParsesPaddedLinesFromTheSplitter) {
  LineSplitter splitter;
  splitter.Append(R"({"jsonrpc":"2.0","id":1,"method":"a"})" "\n"
                  R"({"jsonrpc":"2.0","id":2,"method":"b"})" "\n");
  MessageParser parser;
  std::vector<std::string> methods;
  while (std::optional<LineSplitter::Event> event = splitter.Next()) {
    ParsedLine parsed = parser.ParsePadded(event->line);
    ASSERT_TRUE(parsed.is_message());
    methods.emplace_back(parsed.message().method());
  }
  EXPECT_EQ(methods, (std::vector<std::string>{"a", "b"}));
}

// ---- Params -------------------------------------------------------------------

class ParamsTest : public ::testing::Test {
 protected:
  const Params& Of(const std::string& params_json) {
    std::string line = R"({"jsonrpc":"2.0","id":1,"method":"m","params":)" + params_json + "}";
    ParsedLine parsed = parser_.Parse(line);
    EXPECT_TRUE(parsed.is_message()) << line;
    messages_.push_back(std::move(parsed.message()));
    return messages_.back().params();
  }

  static std::string Error(const Status& status) {
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
    return status.message();
  }

  MessageParser parser_;
  std::deque<Message> messages_;
};

TEST_F(ParamsTest, RequiredString) {
  EXPECT_EQ(*Of(R"({"path":"a/b"})").String("path"), "a/b");
  EXPECT_EQ(Error(Of("{}").String("path").status()), "Invalid params: 'path' is required");
  EXPECT_EQ(Error(Of(R"({"path":3})").String("path").status()),
            "Invalid params: 'path' must be a string");
  EXPECT_EQ(Error(Of(R"({"path":null})").String("path").status()),
            "Invalid params: 'path' must be a string");
}

TEST_F(ParamsTest, OptionalUint) {
  EXPECT_EQ(*Of("{}").OptionalUint("offset"), std::nullopt);
  EXPECT_EQ(*Of(R"({"offset":null})").OptionalUint("offset"), std::nullopt);
  EXPECT_EQ(*Of(R"({"offset":5})").OptionalUint("offset"), 5u);
  EXPECT_EQ(*Of(R"({"offset":18446744073709551615})").OptionalUint("offset"),
            18446744073709551615u);
  for (const char* bad : {"-1", "1.5", "\"5\"", "true", "[]", "1e2"}) {
    EXPECT_EQ(Error(Of(std::string(R"({"offset":)") + bad + "}").OptionalUint("offset").status()),
              "Invalid params: 'offset' must be a non-negative integer")
        << bad;
  }
  EXPECT_EQ(*Of(R"({"limit":0})").Uint("limit"), 0u);
  EXPECT_EQ(Error(Of("{}").Uint("limit").status()), "Invalid params: 'limit' is required");
}

TEST_F(ParamsTest, OptionalBoolAndString) {
  EXPECT_EQ(*Of(R"({"recursive":true})").OptionalBool("recursive"), true);
  EXPECT_EQ(*Of(R"({"recursive":false})").OptionalBool("recursive"), false);
  EXPECT_EQ(*Of("{}").OptionalBool("recursive"), std::nullopt);
  EXPECT_EQ(Error(Of(R"({"recursive":"yes"})").OptionalBool("recursive").status()),
            "Invalid params: 'recursive' must be true or false");
  EXPECT_EQ(*Of(R"({"mode":"append"})").OptionalString("mode"), "append");
  EXPECT_EQ(*Of(R"({"mode":null})").OptionalString("mode"), std::nullopt);
  EXPECT_EQ(Error(Of(R"({"mode":1})").OptionalString("mode").status()),
            "Invalid params: 'mode' must be a string");
}

TEST_F(ParamsTest, StringArrays) {
  EXPECT_EQ(*Of(R"({"paths":["src","docs"]})").StringArray("paths"),
            (std::vector<std::string_view>{"src", "docs"}));
  EXPECT_TRUE(Of(R"({"paths":[]})").StringArray("paths")->empty());
  EXPECT_EQ(Error(Of(R"({"paths":["a",1]})").StringArray("paths").status()),
            "Invalid params: 'paths[1]' must be a string");
  EXPECT_EQ(Error(Of(R"({"paths":"src"})").StringArray("paths").status()),
            "Invalid params: 'paths' must be an array of strings");
  EXPECT_EQ(*Of("{}").OptionalStringArray("extensions"), std::nullopt);
  EXPECT_EQ(**Of(R"({"extensions":["rs"]})").OptionalStringArray("extensions"),
            (std::vector<std::string_view>{"rs"}));
}

TEST_F(ParamsTest, NestedObjectsNameTheWholePath) {
  const Params& params = Of(
      R"({"headers":[{"name":"Accept","value":"*/*"},{"name":"X","value":7}],"tool":{"name":"t"}})");
  Result<std::vector<Params>> headers = params.ObjectArray("headers");
  ASSERT_TRUE(headers.ok());
  ASSERT_EQ(headers->size(), 2u);
  EXPECT_EQ(*(*headers)[0].String("value"), "*/*");
  EXPECT_EQ(Error((*headers)[1].String("value").status()),
            "Invalid params: 'headers[1].value' must be a string");
  EXPECT_EQ(Error((*headers)[1].ExpectOnly({"name"})),
            "Invalid params: unknown parameter 'headers[1].value' (expected name)");
  Result<std::optional<Params>> tool = params.OptionalObject("tool");
  ASSERT_TRUE(tool.ok() && tool->has_value());
  EXPECT_EQ(Error((*tool)->String("arguments").status()),
            "Invalid params: 'tool.arguments' is required");
  EXPECT_EQ(Error(Of(R"({"headers":[1]})").ObjectArray("headers").status()),
            "Invalid params: 'headers[0]' must be an object");
  EXPECT_EQ(Error(Of(R"({"tool":[]})").OptionalObject("tool").status()),
            "Invalid params: 'tool' must be an object");
}

TEST_F(ParamsTest, UnknownParametersAreRejected) {
  const Params& params = Of(R"({"path":"a","recursve":true})");
  EXPECT_EQ(Error(params.ExpectOnly({"path", "recursive"})),
            "Invalid params: unknown parameter 'recursve' (expected path, recursive)");
  EXPECT_TRUE(Of(R"({"path":"a"})").ExpectOnly({"path", "recursive"}).ok());
  EXPECT_TRUE(Params().ExpectOnly({"path"}).ok());
  EXPECT_EQ(Error(Of(R"({"a\n":1})").ExpectOnly({})),
            "Invalid params: unknown parameter 'a\\n' (expected none)");
}

TEST_F(ParamsTest, TypeOfHasJsonAndDuplicates) {
  const Params& params =
      Of(R"({"content":[{"type":"text","text":"hi"}],"n":null,"dup":"first","dup":"second"})");
  EXPECT_EQ(params.TypeOf("content"), JsonType::kArray);
  EXPECT_EQ(params.TypeOf("n"), JsonType::kNull);
  EXPECT_EQ(params.TypeOf("missing"), std::nullopt);
  EXPECT_TRUE(params.Has("content"));
  EXPECT_FALSE(params.Has("n"));
  EXPECT_EQ(params.Json("content"), R"([{"type":"text","text":"hi"}])");
  EXPECT_EQ(*params.String("dup"), "first");
  EXPECT_EQ(params.size(), 4u);
  EXPECT_EQ(Of("{}").ToJson(), "{}");
  EXPECT_EQ(Params().ToJson(), "{}");
}

// ---- Unicode and binary round trips --------------------------------------------

std::string AllBytesText() {
  // Every ASCII byte (controls included) and characters of 2, 3 and 4 bytes.
  std::string text;
  for (int c = 0; c < 0x80; ++c) text += static_cast<char>(c);
  text += "caf\xC3\xA9 \xE2\x82\xAC \xE6\x97\xA5\xE6\x9C\xAC \xF0\x9F\x98\x80 \xEF\xBF\xBF";
  return text;
}

TEST(RoundTripTest, UnicodeContentSurvivesResponseAndRequest) {
  const std::string content = AllBytesText();
  WireMessage response = SerializeResult(RequestId(int64_t{9}), [&](JsonWriter& writer) {
    writer.StartObject();
    WriteJsonKey(writer, "content");
    WriteJsonString(writer, content);
    WriteJsonKey(writer, "size");
    writer.Uint64(content.size());
    writer.EndObject();
  });
  rapidjson::Document document = ParseWire(response);
  const rapidjson::Value& text = document["result"]["content"];
  EXPECT_EQ(std::string(text.GetString(), text.GetStringLength()), content);

  // The tool sends the same content back: fs.write.
  std::string line = R"({"jsonrpc":"2.0","id":10,"method":"fs.write","params":{"path":"u.txt","content":)";
  rapidjson::StringBuffer quoted;
  AppendJsonString(quoted, content);
  line += JsonText(quoted) + "}}";
  MessageParser parser;
  Message message = ParseMessage(parser, line);
  EXPECT_EQ(*message.params().String("content"), content);
}

TEST(RoundTripTest, EscapedInputDecodes) {
  MessageParser parser;
  Message message = ParseMessage(
      parser,
      R"({"jsonrpc":"2.0","method":"m","params":{"s":"caf\u00e9 \ud83d\ude00 \u0000 \"q\" \\ \/"}})");
  EXPECT_EQ(*message.params().String("s"),
            std::string("caf\xC3\xA9 \xF0\x9F\x98\x80 \0 \"q\" \\ /", 20));
}

TEST(RoundTripTest, BinaryContentAsBase64) {
  std::string binary;
  for (int i = 0; i < 1000; ++i) binary += static_cast<char>((i * 7 + 3) & 0xFF);
  std::string encoded = Base64Encode(binary);
  std::string line = R"({"jsonrpc":"2.0","id":1,"method":"fs.write","params":{"path":"b.bin","content":")" +
                     encoded + R"(","encoding":"base64"}})";
  MessageParser parser;
  Message message = ParseMessage(parser, line);
  EXPECT_EQ(*message.params().OptionalString("encoding"), "base64");
  Result<std::string> decoded = Base64Decode(*message.params().String("content"));
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(*decoded, binary);
}

// ---- Serializers ------------------------------------------------------------------

TEST(SerializeTest, ExactWireText) {
  EXPECT_EQ(SerializeEmptyResult(RequestId(int64_t{7})).ToString(),
            "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}\n");
  EXPECT_EQ(SerializeError(RequestId(std::string("a")), kJsonRpcMethodNotFound,
                           "Method not found: 'read'")
                .ToString(),
            "{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"error\":{\"code\":-32601,\"message\":"
            "\"Method not found: 'read'\"}}\n");
  EXPECT_EQ(SerializeError(RequestId(int64_t{1}), kJsonRpcInvalidParams, "too big",
                           [](JsonWriter& writer) {
                             writer.StartObject();
                             WriteJsonKey(writer, "limit");
                             writer.Uint64(10);
                             writer.EndObject();
                           })
                .ToString(),
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32602,\"message\":\"too big\","
            "\"data\":{\"limit\":10}}}\n");
  EXPECT_EQ(SerializeNotification("cancel").ToString(), "{\"jsonrpc\":\"2.0\",\"method\":\"cancel\"}\n");
  EXPECT_EQ(SerializeNotification("pending",
                                  [](JsonWriter& writer) {
                                    writer.StartObject();
                                    WriteJsonKey(writer, "request_id");
                                    RequestId(int64_t{4}).WriteTo(writer);
                                    WriteJsonKey(writer, "reason");
                                    WriteJsonString(writer, "awaiting user approval");
                                    writer.EndObject();
                                  })
                .ToString(),
            "{\"jsonrpc\":\"2.0\",\"method\":\"pending\",\"params\":{\"request_id\":4,"
            "\"reason\":\"awaiting user approval\"}}\n");
}

TEST(SerializeTest, RequestsWithAndWithoutParams) {
  const WireMessage with = SerializeRequest(7, "tools/call", R"({"name":"x"})");
  EXPECT_EQ(with.ToString(), "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"x\"}}\n");
  EXPECT_EQ(with.line(), with.bytes().substr(0, with.size() - 1));
  EXPECT_EQ(SerializeRequest(1, "ping", "").ToString(), "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n");
  // What the host's parser reads back.
  MessageParser parser;
  ParsedLine parsed = parser.Parse(with.line());
  ASSERT_TRUE(parsed.is_message());
  EXPECT_EQ(parsed.message().method(), "tools/call");
}

TEST(SerializeTest, ProtocolErrorsAnswerWithTheirIdAndCode) {
  MessageParser parser;
  for (const char* line : {"garbage", "[]", R"({"jsonrpc":"2.0","id":5})",
                           "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xFF\"}"}) {
    ParsedLine parsed = parser.Parse(line);
    ASSERT_TRUE(parsed.is_error()) << line;
    rapidjson::Document answer = ParseWire(SerializeProtocolError(parsed.error()));
    EXPECT_EQ(answer["error"]["code"].GetInt(), parsed.error().code);
    EXPECT_STREQ(answer["jsonrpc"].GetString(), "2.0");
    // And the answer is itself a valid response for the codec.
    std::string text = SerializeProtocolError(parsed.error()).ToString();
    text.pop_back();
    Message response = ParseMessage(parser, text);
    EXPECT_EQ(response.kind(), MessageKind::kResponse);
    EXPECT_EQ(response.id(), parsed.error().id);
  }
}

TEST(SerializeTest, ErrorMessagesAreMadeValidUtf8) {
  WireMessage wire = SerializeError(RequestId(), kJsonRpcInternalError, "bad \xFF byte\nnext");
  rapidjson::Document document = ParseWire(wire);
  EXPECT_STREQ(document["error"]["message"].GetString(), "bad \xEF\xBF\xBD byte\nnext");
}

}  // namespace
}  // namespace toolvfs
