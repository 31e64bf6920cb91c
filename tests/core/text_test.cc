#include "core/text.h"

#include <gtest/gtest.h>

namespace toolvfs {
namespace {

TEST(TextTest, Utf8Validation) {
  EXPECT_TRUE(IsValidUtf8(""));
  EXPECT_TRUE(IsValidUtf8("plain ascii that is longer than eight bytes"));
  EXPECT_TRUE(IsValidUtf8("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"));
  EXPECT_FALSE(IsValidUtf8("\xC0\xAF"));          // overlong '/'
  EXPECT_FALSE(IsValidUtf8("\xE0\x80\xAF"));      // overlong
  EXPECT_FALSE(IsValidUtf8("\xED\xA0\x80"));      // surrogate
  EXPECT_FALSE(IsValidUtf8("\xF4\x90\x80\x80"));  // above U+10FFFF
  EXPECT_FALSE(IsValidUtf8("abc\xE2\x82"));       // truncated
  EXPECT_FALSE(IsValidUtf8("\xFF"));
  EXPECT_EQ(ValidUtf8Prefix("abcdefghij\xFFz"), 10u);
}

TEST(TextTest, ToValidUtf8ReplacesEachBadByte) {
  EXPECT_EQ(ToValidUtf8("a\xFF" "b\xC3"), "a\xEF\xBF\xBD" "b\xEF\xBF\xBD");
  EXPECT_EQ(ToValidUtf8("caf\xC3\xA9"), "caf\xC3\xA9");
}

TEST(TextTest, EscapeKeepsOneLineAndShowsTheExactValue) {
  EXPECT_EQ(Quote("a\nb\x1b[31m\\"), "'a\\nb\\x1b[31m\\\\'");
  EXPECT_EQ(EscapeForDisplay(std::string("nul\0x", 5)), "nul\\x00x");
  EXPECT_EQ(EscapeForDisplay("\xFF\xC3\xA9"), "\\xff\xC3\xA9");
  EXPECT_EQ(EscapeForDisplay("\x7F"), "\\x7f");
}

TEST(TextTest, AsciiLowercaseChangesOnlyAsciiLetters) {
  EXPECT_EQ(AsciiLowercase("HTTPS://Ex-AMPLE.com/Z@[\x7f"), "https://ex-ample.com/z@[\x7f");
  EXPECT_EQ(AsciiLowercase("\xc3\x9c"), "\xc3\x9c");  // Ü stays as it is
}

}  // namespace
}  // namespace toolvfs
