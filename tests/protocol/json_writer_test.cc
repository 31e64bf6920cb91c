#include "protocol/json_writer.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace toolvfs {
namespace {

std::string WithOurs(std::string_view text) {
  rapidjson::StringBuffer buffer;
  AppendJsonString(buffer, text);
  return JsonText(buffer);
}

std::string WithRapidJson(std::string_view text) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  writer.String(text.data(), static_cast<rapidjson::SizeType>(text.size()));
  return JsonText(buffer);
}

TEST(JsonWriterTest, EscapesLikeRapidJson) {
  EXPECT_EQ(WithOurs(""), "\"\"");
  EXPECT_EQ(WithOurs("a\"b\\c\nd\te\x01\x1f\x7f/\xC3\xA9"),
            "\"a\\\"b\\\\c\\nd\\te\\u0001\\u001F\x7f/\xC3\xA9\"");
  // Random mixes of plain and special bytes at every length and alignment
  // around the 16-byte vector loop and the 4 KiB blocks.
  std::mt19937 random(42);
  const char alphabet[] = "abc \"\\\n\t\r\b\f\x01\x10\x18\x1d\x1f\x7f\xC3\xA9{}";
  for (size_t length : {1, 15, 16, 17, 31, 32, 33, 47, 100, 4095, 4096, 4097, 9000, 70000}) {
    for (int trial = 0; trial < 20; ++trial) {
      std::string text;
      int density = static_cast<int>(random() % 40) + 1;
      for (size_t i = 0; i < length; ++i) {
        text += static_cast<int>(random() % 40) < density
                    ? alphabet[random() % (sizeof(alphabet) - 1)]
                    : static_cast<char>('a' + random() % 26);
      }
      ASSERT_EQ(WithOurs(text), WithRapidJson(text)) << "length " << length;
    }
  }
}

TEST(JsonWriterTest, EveryByteAtEveryPositionOfAVector) {
  for (int byte = 1; byte < 256; ++byte) {
    for (size_t position = 0; position < 40; ++position) {
      std::string text(40, 'a');
      text[position] = static_cast<char>(byte);
      ASSERT_EQ(WithOurs(text), WithRapidJson(text)) << "byte " << byte << " at " << position;
    }
  }
  std::string nul(33, 'x');
  nul[17] = '\0';
  EXPECT_EQ(WithOurs(nul), WithRapidJson(nul));
}

TEST(JsonWriterTest, KeepsTheWriterState) {
  rapidjson::StringBuffer buffer;
  JsonWriter writer(buffer);
  writer.StartObject();
  writer.String("k");  // in key position, as with RapidJSON's String
  writer.StartArray();
  writer.String("a");
  writer.String(std::string_view("b\n"));
  writer.Int(1);
  writer.EndArray();
  WriteJsonKey(writer, "x");
  WriteJsonString(writer, "y");
  writer.EndObject();
  EXPECT_TRUE(writer.IsComplete());
  EXPECT_EQ(JsonText(buffer),
            "{\"k\":[\"a\",\"b\\n\",1],\"x\":\"y\"}");
}

// The text is the buffer's bytes exactly: an escaped NUL stays six
// characters, GetString()'s terminator is not part of it, and text taken
// after more is written has all of it.
TEST(JsonWriterTest, JsonTextAndViewAreTheBuffersBytes) {
  rapidjson::StringBuffer buffer;
  EXPECT_EQ(JsonView(buffer), "");
  AppendJsonString(buffer, std::string_view("a\0b", 3));
  EXPECT_EQ(JsonView(buffer), "\"a\\u0000b\"");
  EXPECT_EQ(JsonView(buffer).size(), buffer.GetSize());
  buffer.Put(',');
  EXPECT_EQ(JsonText(buffer), "\"a\\u0000b\",");
}

}  // namespace
}  // namespace toolvfs
