// The codec inside sdk/toolvfs/tool.h: the JSON value, parser and writer,
// UTF-8, base64 and line framing. No host involved.
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "toolvfs/tool.h"

namespace toolvfs {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

Json Parse(std::string_view text) {
  Result<Json> parsed = Json::parse(text);
  EXPECT_TRUE(parsed.ok()) << text << ": " << parsed.error().message;
  return parsed.ok() ? std::move(parsed).value() : Json();
}

std::string ParseError(std::string_view text) {
  Result<Json> parsed = Json::parse(text);
  EXPECT_FALSE(parsed.ok()) << text << " parsed as " << (parsed.ok() ? parsed->dump() : "");
  EXPECT_EQ(parsed.error().code, kParseError);
  return parsed.error().message;
}

std::string Quoted(std::string_view text) {
  std::string out;
  JsonWriter writer(out);
  writer.string(text);
  return out;
}

// --- JSON values

TEST(SdkJsonTest, ParsesEveryKindOfValue) {
  Json value = Parse(R"( {"s":"x","i":-42,"u":18446744073709551615,"d":1.5e3,"t":true,"f":false,"n":null,
                          "a":[1,[2],{}],"o":{"k":"v"}} )");
  ASSERT_TRUE(value.is_object());
  EXPECT_EQ(value["s"].as_string(), "x");
  EXPECT_EQ(value["i"].as_int(), -42);
  EXPECT_TRUE(value["i"].is_integer());
  EXPECT_EQ(value["u"].type(), Json::Type::kUint);
  EXPECT_EQ(value["u"].as_uint(), 18446744073709551615ull);
  EXPECT_EQ(value["d"].type(), Json::Type::kDouble);
  EXPECT_DOUBLE_EQ(value["d"].as_double(), 1500.0);
  EXPECT_TRUE(value["t"].as_bool());
  EXPECT_TRUE(value["f"].is_bool());
  EXPECT_FALSE(value["f"].as_bool(true));
  EXPECT_TRUE(value["n"].is_null());
  EXPECT_EQ(value["a"].size(), 3u);
  EXPECT_EQ(value["a"][1][0].as_int(), 2);
  EXPECT_TRUE(value["a"][2].is_object());
  EXPECT_EQ(value["o"]["k"].as_string(), "v");
  EXPECT_EQ(value.size(), 9u);
}

TEST(SdkJsonTest, MissingMembersAndWrongTypesGiveDefaults) {
  Json value = Parse(R"({"s":"x","n":5})");
  EXPECT_TRUE(value["missing"].is_null());
  EXPECT_TRUE(value["missing"]["deeper"][3].is_null());
  EXPECT_EQ(value["s"].as_int(7), 7);
  EXPECT_EQ(value["n"].as_string(), "");
  EXPECT_EQ(value["n"].as_string("fallback"), "fallback");
  EXPECT_TRUE(value["s"].as_array().empty());
  EXPECT_EQ(value.find("missing"), nullptr);
  EXPECT_TRUE(value.contains("n"));
  EXPECT_EQ(Parse("-1")["x"].as_uint(9), 9u);
  EXPECT_EQ(Parse("-1").as_uint(9), 9u);
}

TEST(SdkJsonTest, FirstOfDuplicateKeysCountsLikeTheHost) {
  Json value = Parse(R"({"a":1,"a":2})");
  EXPECT_EQ(value["a"].as_int(), 1);
  EXPECT_EQ(value.size(), 2u);
}

TEST(SdkJsonTest, WritesCompactJsonInMemberOrder) {
  Json value = Json::object({{"path", "a.txt"}, {"n", 3}, {"list", Json::array({true, nullptr, 2.5, "x"})}});
  value.set("extra", Json::object());
  value.set("n", int64_t{-7});  // replaces in place
  EXPECT_EQ(value.dump(), R"({"path":"a.txt","n":-7,"list":[true,null,2.5,"x"],"extra":{}})");
  EXPECT_EQ(Json().dump(), "null");
  EXPECT_EQ(Json(uint64_t{18446744073709551615ull}).dump(), "18446744073709551615");
  EXPECT_EQ(Json(std::numeric_limits<double>::infinity()).dump(), "null");
  EXPECT_EQ(Json::array().dump(), "[]");
}

TEST(SdkJsonTest, RoundTripsNestedValues) {
  const char* texts[] = {
      R"({"jsonrpc":"2.0","id":1,"result":{"entries":[{"path":"a","kind":"file"},{"path":"b","kind":"dir"}],"total":2}})",
      R"([[[[]]],{},{"":""},-0,0.25,1e+300,"\u00e9"])",
  };
  for (const char* text : texts) {
    Json value = Parse(text);
    EXPECT_EQ(Parse(value.dump()), value) << text;
  }
  EXPECT_EQ(Parse(texts[0]).dump(), texts[0]);
}

TEST(SdkJsonTest, NumbersCompareByValue) {
  EXPECT_EQ(Json(1), Json(1.0));
  EXPECT_EQ(Json(uint64_t{5}), Json(int64_t{5}));  // both stored as int64
  EXPECT_NE(Json(1), Json("1"));
  EXPECT_NE(Json(true), Json(1));
}

TEST(SdkJsonTest, ChecksTheNumberGrammar) {
  for (const char* bad : {"01", "-", "1.", ".5", "1e", "1e+", "+1", "0x10", "1.5.5", "--1", "NaN", "Infinity"}) {
    ParseError(bad);
  }
  EXPECT_THAT(ParseError("1e400"), HasSubstr("out of range"));
  EXPECT_EQ(Parse("-0").as_int(), 0);
  EXPECT_EQ(Parse("-9223372036854775808").as_int(), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(Parse("9223372036854775807").as_int(), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(Parse("9223372036854775808").type(), Json::Type::kUint);
  // Beyond uint64: kept as a double rather than rejected.
  EXPECT_EQ(Parse("123456789012345678901234567890").type(), Json::Type::kDouble);
  EXPECT_EQ(Parse("-9223372036854775809").type(), Json::Type::kDouble);
  EXPECT_DOUBLE_EQ(Parse("2.5E-3").as_double(), 0.0025);
  EXPECT_EQ(Parse("5.0").as_int(), 5);
  EXPECT_FALSE(Parse("5.0").is_integer());
}

TEST(SdkJsonTest, RejectsMalformedDocumentsWithTheOffset) {
  EXPECT_THAT(ParseError(R"({"a":1,})"), StartsWith("Parse error at offset 7"));
  for (const char* bad : {"", " ", "{", "[1,2", R"({"a" 1})", R"({"a":1 "b":2})", "[1 2]", "{1:2}", "tru",
                          "nul", "[true false]", R"("abc)", R"({"a":1}x)", "{}{}", R"(["\x"])", R"(["\u12"])",
                          R"(["\u12g4"])", "[\"a\tb\"]", "[\"a\nb\"]"}) {
    ParseError(bad);
  }
  EXPECT_THAT(ParseError("[\"line\nbreak\"]"), HasSubstr("control character"));
}

TEST(SdkJsonTest, LimitsNestingDepth) {
  std::string ok = std::string(1024, '[') + std::string(1024, ']');
  EXPECT_TRUE(Json::parse(ok).ok());
  std::string deep = std::string(1025, '[') + std::string(1025, ']');
  EXPECT_THAT(ParseError(deep), HasSubstr("nesting"));
}

// --- Strings, escapes, Unicode

TEST(SdkJsonTest, DecodesEveryEscape) {
  EXPECT_EQ(Parse(R"("\"\\\/\b\f\n\r\t")").as_string(), "\"\\/\b\f\n\r\t");
  EXPECT_EQ(Parse(R"("\u0041\u00e9\u20AC")").as_string(), "Aé€");
  EXPECT_EQ(Parse(R"("\u0000")").as_string(), std::string(1, '\0'));
  // A surrogate pair is one code point: U+1F600.
  EXPECT_EQ(Parse(R"("\ud83d\ude00")").as_string(), "\xF0\x9F\x98\x80");
  EXPECT_EQ(Parse(R"("x\uD834\uDD1Ey")").as_string(), "x\xF0\x9D\x84\x9Ey");
  // Raw UTF-8 passes through untouched.
  EXPECT_EQ(Parse("\"日本語 😀\"").as_string(), "日本語 😀");
}

TEST(SdkJsonTest, RejectsUnpairedSurrogates) {
  for (const char* bad : {R"("\ud83d")", R"("\ud83dx")", R"("\ud83d\u0041")", R"("\ude00")", R"("\ud83d\ud83d")"}) {
    EXPECT_THAT(ParseError(bad), HasSubstr("surrogate")) << bad;
  }
}

TEST(SdkJsonTest, WriterEscapesWhatJsonRequires) {
  EXPECT_EQ(Quoted("plain"), R"("plain")");
  EXPECT_EQ(Quoted("a\"b\\c"), R"("a\"b\\c")");
  EXPECT_EQ(Quoted("\n\r\t\b\f"), R"("\n\r\t\b\f")");
  EXPECT_EQ(Quoted(std::string("\x01\x1f\x00", 3)), R"("\u0001\u001f\u0000")");
  EXPECT_EQ(Quoted("/ \x7f é 😀"), "\"/ \x7f é 😀\"");  // no needless escapes
}

TEST(SdkJsonTest, WriterReplacesInvalidUtf8SoTheHostNeverRejectsALine) {
  EXPECT_EQ(Quoted("a\xff" "b"), "\"a\xEF\xBF\xBD" "b\"");
  EXPECT_EQ(Quoted("\xC3"), "\"\xEF\xBF\xBD\"");                       // truncated sequence
  EXPECT_EQ(Quoted("\xED\xA0\x80"), "\"\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\"");  // a surrogate
  EXPECT_EQ(Quoted("\xC0\xAF"), "\"\xEF\xBF\xBD\xEF\xBF\xBD\"");       // overlong '/'
  EXPECT_TRUE(is_utf8(Quoted(std::string("\x80\x80\xfe\xff", 4))));
}

// Every string of a few bytes, each position drawn from a set of bytes that
// matter to the scanner, survives writer -> parser unchanged, at every
// offset relative to the 16-byte chunks.
TEST(SdkJsonTest, RoundTripsTrickyStringsAtEveryChunkOffset) {
  const std::string pieces[] = {"\"", "\\", "\n", "\x01", "a", "é", "€", "😀", "\x7f", "/", "\\u"};
  for (size_t prefix = 0; prefix < 40; ++prefix) {
    for (const std::string& first : pieces) {
      for (const std::string& second : pieces) {
        std::string text = std::string(prefix, 'x') + first + std::string(prefix % 7, 'y') + second + "z";
        std::string json = Quoted(text);
        Result<Json> parsed = Json::parse(json);
        ASSERT_TRUE(parsed.ok()) << json << ": " << parsed.error().message;
        ASSERT_EQ(parsed->as_string(), text) << json;
      }
    }
  }
}

// Long strings go through the parser's 64-byte block decoder. A random
// mix of every escape form (short ones, \\uXXXX with and without surrogate
// pairs, "\\\\" runs) and raw bytes, placed at every offset relative to
// the blocks, decodes to the bytes it stands for.
struct EscapedText {
  std::string json;     // the string literal, quotes included
  std::string decoded;  // what it stands for
};

EscapedText RandomEscapedText(std::mt19937& random, size_t prefix, size_t pieces) {
  struct Piece {
    const char* json;
    const char* decoded;
  };
  static const Piece kPieces[] = {
      {"\\n", "\n"}, {"\\t", "\t"}, {"\\r", "\r"}, {"\\b", "\b"}, {"\\f", "\f"}, {"\\/", "/"},
      {"\\\\", "\\"}, {"\\\\\\\\", "\\\\"}, {"\\\"", "\""}, {"\\\\\\\"", "\\\""},
      {"\\u0041", "A"}, {"\\u00e9", "\xC3\xA9"}, {"\\u20AC", "\xE2\x82\xAC"},
      {"\\ud83d\\ude00", "\xF0\x9F\x98\x80"}, {"\\u005c", "\\"}, {"\\u0022", "\""},
      {"\xC3\xA9", "\xC3\xA9"}, {"\xF0\x9F\x98\x80", "\xF0\x9F\x98\x80"}, {"\x7f", "\x7f"},
      {"'", "'"}, {"/", "/"}, {"a", "a"}, {"  ", "  "}, {"0123456789abcdef", "0123456789abcdef"},
      {"some words of text, ", "some words of text, "}};
  EscapedText text;
  text.json = "\"" + std::string(prefix, 'x');
  text.decoded = std::string(prefix, 'x');
  for (size_t i = 0; i < pieces; ++i) {
    const Piece& piece = kPieces[random() % std::size(kPieces)];
    text.json += piece.json;
    text.decoded += piece.decoded;
  }
  text.json += '"';
  return text;
}

TEST(SdkJsonTest, DecodesLongStringsWithEscapesAtEveryBlockOffset) {
  std::mt19937 random(1234);
  for (size_t prefix = 0; prefix < 140; ++prefix) {
    for (int round = 0; round < 30; ++round) {
      EscapedText text = RandomEscapedText(random, prefix, 10 + random() % 120);
      // Alone, and as the member of a message, followed by more text.
      Result<Json> parsed = Json::parse(text.json);
      ASSERT_TRUE(parsed.ok()) << text.json << ": " << parsed.error().message;
      ASSERT_EQ(parsed->as_string(), text.decoded) << text.json;
      std::string line = R"({"jsonrpc":"2.0","id":7,"result":{"content":)" + text.json + R"(,"size":1}})";
      Result<Json> message = Json::parse(line);
      ASSERT_TRUE(message.ok()) << line << ": " << message.error().message;
      ASSERT_EQ((*message)["result"]["content"].as_string(), text.decoded) << line;
    }
  }
}

// An error inside a long string is reported at the same offset as anywhere
// else: the block decoder hands every such byte to the byte-by-byte code.
TEST(SdkJsonTest, ReportsErrorsInLongStringsAtTheirOffset) {
  struct Bad {
    const char* bytes;
    size_t offset;  // of the error, from the start of `bytes`
    const char* what;
  };
  const Bad kBad[] = {{"\x01", 0, "control character in string"},
                      {"\x1f", 0, "control character in string"},
                      {"\n", 0, "control character in string"},
                      {"\\x", 1, "invalid escape"},
                      {"\\\x01", 1, "invalid escape"},
                      {"\\U0041", 1, "invalid escape"},
                      {"\\u12x4", 2, "invalid \\u escape"},
                      {"\\ude00", 6, "unpaired surrogate in \\u escape"},
                      {"\\ud83dxx", 6, "unpaired surrogate in \\u escape"}};
  for (size_t prefix = 0; prefix < 140; ++prefix) {
    for (const Bad& bad : kBad) {
      for (const char* before : {"", "\\n", "\\\\", "\\\""}) {
        std::string json = "\"" + std::string(prefix, 'x') + before;
        size_t at = json.size() + bad.offset;
        json += bad.bytes;
        json += std::string(200, 'y') + "\"";
        EXPECT_EQ(ParseError(json), "Parse error at offset " + std::to_string(at) + ": " + bad.what)
            << "prefix " << prefix << " before '" << before << "' bad '" << bad.bytes << "'";
      }
    }
    std::string unterminated = "\"" + std::string(prefix, 'x') + "\\n" + std::string(200, 'y');
    EXPECT_EQ(ParseError(unterminated),
              "Parse error at offset " + std::to_string(unterminated.size()) + ": unterminated string");
  }
}

#if defined(__SSE2__)
// Both block decoders directly (Json::parse uses only the one the CPU
// runs best): they stop at the closing quote with exactly the decoded
// bytes before it.
void CheckBlockDecoder(void (*decode)(const char*&, const char*, char*&), const char* name) {
  std::mt19937 random(99);
  for (size_t prefix = 0; prefix < 140; ++prefix) {
    for (int round = 0; round < 20; ++round) {
      std::string body;
      std::string expected(prefix, 'x');
      body = expected;
      for (size_t i = 0, pieces = 5 + random() % 150; i < pieces; ++i) {
        switch (random() % 8) {
          case 0: body += "\\n", expected += '\n'; break;
          case 1: body += "\\\\", expected += '\\'; break;
          case 2: body += "\\\"", expected += '"'; break;
          case 3: body += "\\t\\/", expected += "\t/"; break;
          case 4: body += "\\\\\\\"", expected += "\\\""; break;
          default: {
            std::string plain(random() % 70, static_cast<char>('a' + random() % 26));
            body += plain;
            expected += plain;
          }
        }
      }
      std::string input = body + "\"" + std::string(200, 'z');
      std::string out(input.size() + 16, '\0');
      const char* p = input.data();
      char* w = out.data();
      decode(p, input.data() + input.size(), w);
      // It may also stop early, at a byte to decode (never inside an escape).
      while (*p != '"') {
        if (*p == '\\') {
          *w++ = detail::kUnescaped[static_cast<unsigned char>(p[1])];
          p += 2;
        } else {
          *w++ = *p++;
        }
      }
      ASSERT_EQ(static_cast<size_t>(p - input.data()), body.size()) << name << ": " << body;
      ASSERT_EQ(std::string(out.data(), static_cast<size_t>(w - out.data())), expected) << name << ": " << body;
    }
  }
}

TEST(SdkJsonTest, BlockDecodersAgree) {
  CheckBlockDecoder(detail::decode_blocks_sse2, "SSE2");
#if TOOLVFS_SDK_X86_TARGETS
  if (detail::cpu_has_avx2()) CheckBlockDecoder(detail::decode_blocks_avx2, "AVX2");
#endif
}
#endif

TEST(SdkJsonTest, RoundTripsEveryCodePoint) {
  std::string text;
  for (uint32_t code_point = 1; code_point < 0x110000; code_point += (code_point < 0x3000 ? 1 : 97)) {
    if (code_point >= 0xD800 && code_point <= 0xDFFF) continue;
    char bytes[4];
    text.append(bytes, detail::encode_utf8(code_point, bytes));
  }
  ASSERT_TRUE(is_utf8(text));
  EXPECT_EQ(Parse(Quoted(text)).as_string(), text);
}

TEST(SdkUtf8Test, ChecksWellFormedness) {
  EXPECT_TRUE(is_utf8(""));
  EXPECT_TRUE(is_utf8("plain ascii text that is longer than eight bytes"));
  EXPECT_TRUE(is_utf8("\xE0\xA0\x80"));        // U+0800
  EXPECT_TRUE(is_utf8("\xED\x9F\xBF"));        // U+D7FF
  EXPECT_TRUE(is_utf8("\xEE\x80\x80"));        // U+E000
  EXPECT_TRUE(is_utf8("\xF0\x90\x80\x80"));    // U+10000
  EXPECT_TRUE(is_utf8("\xF4\x8F\xBF\xBF"));    // U+10FFFF
  EXPECT_TRUE(is_utf8(std::string(1, '\0')));  // NUL is valid UTF-8
  EXPECT_FALSE(is_utf8("\x80"));
  EXPECT_FALSE(is_utf8("\xC1\xBF"));          // overlong
  EXPECT_FALSE(is_utf8("\xE0\x9F\xBF"));      // overlong
  EXPECT_FALSE(is_utf8("\xED\xA0\x80"));      // surrogate
  EXPECT_FALSE(is_utf8("\xF0\x8F\xBF\xBF"));  // overlong
  EXPECT_FALSE(is_utf8("\xF4\x90\x80\x80"));  // above U+10FFFF
  EXPECT_FALSE(is_utf8("\xF5\x80\x80\x80"));
  EXPECT_FALSE(is_utf8("abcdefgh\xC3"));      // truncated at the end
  EXPECT_FALSE(is_utf8("\xC3("));
}

// --- base64

TEST(SdkBase64Test, RoundTripsEveryLengthAndByte) {
  std::string bytes;
  for (int i = 0; i < 600; ++i) bytes += static_cast<char>(i * 37 + 11);
  for (size_t length = 0; length <= bytes.size(); ++length) {
    std::string input = bytes.substr(0, length);
    std::string encoded = base64_encode(input);
    ASSERT_EQ(encoded.size() % 4, 0u);
    Result<std::string> decoded = base64_decode(encoded);
    ASSERT_TRUE(decoded.ok()) << decoded.error().message;
    ASSERT_EQ(decoded.value(), input);
  }
}

TEST(SdkBase64Test, MatchesRfc4648Vectors) {
  std::pair<const char*, const char*> vectors[] = {{"", ""},         {"f", "Zg=="},         {"fo", "Zm8="},
                                                   {"foo", "Zm9v"},  {"foob", "Zm9vYg=="},  {"fooba", "Zm9vYmE="},
                                                   {"foobar", "Zm9vYmFy"}, {"\xff\xfe\xfd", "//79"}};
  for (auto [plain, encoded] : vectors) {
    EXPECT_EQ(base64_encode(plain), encoded);
    EXPECT_EQ(base64_decode(encoded).value(), plain);
  }
}

TEST(SdkBase64Test, IsStrictLikeTheHost) {
  for (const char* bad : {"Zg=", "Zg", "Z===", "====", "Zm9v\n", "Zm 9", "Zh==", "Zm9=", "Zm=v", "Z-9v", "Zm9v===="}) {
    Result<std::string> decoded = base64_decode(bad);
    EXPECT_FALSE(decoded.ok()) << bad;
    EXPECT_EQ(decoded.error().code, kInvalidParams) << bad;
    EXPECT_THAT(decoded.error().message, StartsWith("Invalid base64: ")) << bad;
  }
  EXPECT_THAT(base64_decode("Zm9vYm\nFy").error().message, HasSubstr("length"));
  EXPECT_THAT(base64_decode("Zm9vY!Fy").error().message, HasSubstr("offset 5"));
  EXPECT_THAT(base64_decode("Zh==").error().message, HasSubstr("unused bits"));
}

// --- Result

TEST(SdkResultTest, ValueThrowsTheErrorWithItsCode) {
  Result<int> good = 5;
  EXPECT_TRUE(good.ok());
  EXPECT_EQ(good.value(), 5);
  EXPECT_EQ(good.error().code, 0);
  Result<int> bad = Error{kNotFound, "File 'x' does not exist"};
  EXPECT_FALSE(bad);
  EXPECT_EQ(bad.value_or(9), 9);
  try {
    (void)bad.value();
    FAIL() << "no exception";
  } catch (const Exception& exception) {
    EXPECT_EQ(exception.code(), kNotFound);
    EXPECT_STREQ(exception.what(), "File 'x' does not exist (not found, -32002)");
  }
  Result<void> failed = Error{kCancelled, "stop"};
  EXPECT_THROW(failed.value(), Exception);
  EXPECT_NO_THROW(Result<void>().value());
}

// --- Line framing

class PipeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    int fds[2];
    ASSERT_EQ(pipe2(fds, O_CLOEXEC), 0);
    read_fd_ = fds[0];
    write_fd_ = fds[1];
  }
  void TearDown() override {
    if (read_fd_ >= 0) close(read_fd_);
    CloseWriteEnd();
  }
  void CloseWriteEnd() {
    if (write_fd_ >= 0) close(write_fd_);
    write_fd_ = -1;
  }
  int read_fd_ = -1;
  int write_fd_ = -1;
};

using SdkLineReaderTest = PipeTest;

TEST_F(SdkLineReaderTest, SplitsLinesWrittenInAnyChunks) {
  std::string stream;
  std::vector<std::string> expected;
  for (int i = 0; i < 300; ++i) {
    std::string line(static_cast<size_t>(i * 977 % 5000), static_cast<char>('a' + i % 26));
    expected.push_back(line);
    stream += line + "\n";
  }
  expected.push_back("");
  stream += "\n";
  stream += "tail without newline";
  std::thread writer([&] {
    size_t offset = 0;
    for (size_t chunk = 1; offset < stream.size(); chunk = chunk * 3 % 7919 + 1) {
      size_t size = std::min(chunk, stream.size() - offset);
      ASSERT_TRUE(detail::write_all(write_fd_, std::string_view(stream).substr(offset, size)).ok());
      offset += size;
    }
    CloseWriteEnd();
  });
  LineReader reader(read_fd_);
  std::vector<std::string> lines;
  while (true) {
    Result<std::optional<std::string_view>> line = reader.next();
    ASSERT_TRUE(line.ok());
    if (!line.value()) break;
    lines.emplace_back(*line.value());
  }
  writer.join();
  EXPECT_EQ(lines, expected);  // the unterminated tail is dropped
}

// Lines around the page size and the read size, so that dropping consumed
// lines (which moves a partial line to end on a page boundary) and growing
// the buffer happen at every kind of position.
TEST_F(SdkLineReaderTest, KeepsLinesIntactAcrossCompactionAndGrowth) {
  std::mt19937 random(7);
  const size_t kSizes[] = {0, 1, 15, 16, 17, 4095, 4096, 4097, 8191, 65535, 65536, 100000,
                           262143, 262144, 262145, 600001};
  std::vector<std::string> expected;
  std::string stream;
  for (int i = 0; i < 120; ++i) {
    std::string line(kSizes[random() % std::size(kSizes)], '\0');
    for (char& c : line) c = static_cast<char>('a' + random() % 26);
    stream += line + "\n";
    expected.push_back(std::move(line));
  }
  std::thread writer([&] {
    std::mt19937 chunks(11);
    for (size_t offset = 0; offset < stream.size();) {
      size_t size = std::min<size_t>(1 + chunks() % 300000, stream.size() - offset);
      ASSERT_TRUE(detail::write_all(write_fd_, std::string_view(stream).substr(offset, size)).ok());
      offset += size;
    }
    CloseWriteEnd();
  });
  LineReader reader(read_fd_);
  size_t count = 0;
  while (true) {
    Result<std::optional<std::string_view>> line = reader.next();
    ASSERT_TRUE(line.ok());
    if (!line.value()) break;
    ASSERT_LT(count, expected.size());
    ASSERT_EQ(*line.value(), expected[count]) << "line " << count;
    ++count;
  }
  writer.join();
  EXPECT_EQ(count, expected.size());
}

TEST_F(SdkLineReaderTest, HandsOutALineOfSeveralMebibytes) {
  std::string big(3 << 20, 'x');
  std::thread writer([&] {
    ASSERT_TRUE(detail::write_all(write_fd_, "short\n" + big + "\nafter\n").ok());
    CloseWriteEnd();
  });
  LineReader reader(read_fd_);
  EXPECT_EQ(reader.next().value().value(), "short");
  EXPECT_EQ(reader.next().value().value().size(), big.size());
  EXPECT_EQ(reader.next().value().value(), "after");
  EXPECT_FALSE(reader.next().value().has_value());
  writer.join();
}

// --- Speed: the tool's parse of a 1 MiB fs.read answer is the largest JSON
// cost of a big read (docs/protocol.md). The bounds are loose so a loaded
// machine does not fail the test; the figures are printed.

std::string ReadAnswer(const std::string& content) {
  std::string line = R"({"jsonrpc":"2.0","id":7,"result":{"content":)";
  JsonWriter writer(line);
  writer.string(content);
  line += R"(,"size":)" + std::to_string(content.size()) + "}}";
  return line;
}

template <typename Fn>
double BestMicroseconds(int runs, Fn&& fn) {
  double best = 1e18;
  for (int run = 0; run < runs; ++run) {
    auto start = std::chrono::steady_clock::now();
    fn();
    auto end = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double, std::micro>(end - start).count());
  }
  return best;
}

TEST(SdkJsonSpeedTest, ParsesAOneMebibyteReadAnswerFast) {
  // Source code: a newline every ~40 bytes, quotes, tabs, some non-ASCII.
  std::string code;
  const char* lines[] = {"int main(int argc, char** argv) {\n", "\tstd::string name = \"toolvfs\";  // é\n",
                         "  return run(name, \"--flag\", 42);\n", "}\n", "\n"};
  for (size_t i = 0; code.size() < (1u << 20); ++i) code += lines[i % 5];
  code.resize(1u << 20);
  std::string prose(1u << 20, 'a');
  for (size_t i = 70; i < prose.size(); i += 71) prose[i] = '\n';

  for (auto [name, content] : {std::pair{"source code", &code}, std::pair{"prose", &prose}}) {
    std::string line = ReadAnswer(*content);
    size_t size = 0;
    double parse_us = BestMicroseconds(20, [&] {
      Result<Json> parsed = Json::parse(line);
      size += parsed.value()["result"]["content"].as_string().size();
    });
    EXPECT_EQ(Parse(line)["result"]["content"].as_string(), *content);
    std::string out;
    double write_us = BestMicroseconds(20, [&] {
      out.clear();
      detail::append_json_string(out, *content);
    });
    std::printf("[ speed    ] 1 MiB %s: parse %.0f us (%.2f GB/s), write %.0f us\n", name, parse_us,
                static_cast<double>(line.size()) / parse_us / 1e3, write_us);
    EXPECT_LT(parse_us, 5000) << name;
    EXPECT_LT(write_us, 5000) << name;
  }
}

}  // namespace
}  // namespace toolvfs
