#include "protocol/base64.h"

#include <gtest/gtest.h>

#include <string>

namespace toolvfs {
namespace {

TEST(Base64Test, Rfc4648Vectors) {
  const std::pair<const char*, const char*> vectors[] = {
      {"", ""},          {"f", "Zg=="},         {"fo", "Zm8="},         {"foo", "Zm9v"},
      {"foob", "Zm9vYg=="}, {"fooba", "Zm9vYmE="}, {"foobar", "Zm9vYmFy"}};
  for (const auto& [plain, encoded] : vectors) {
    EXPECT_EQ(Base64Encode(plain), encoded);
    Result<std::string> decoded = Base64Decode(encoded);
    ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
    EXPECT_EQ(*decoded, plain);
  }
  EXPECT_EQ(Base64Encode(std::string("\xFB\xFF\xFE", 3)), "+//+");
}

TEST(Base64Test, RoundTripsEveryLengthAndByte) {
  std::string bytes;
  for (int i = 0; i < 600; ++i) {
    Result<std::string> decoded = Base64Decode(Base64Encode(bytes));
    ASSERT_TRUE(decoded.ok()) << i;
    ASSERT_EQ(*decoded, bytes) << i;
    bytes += static_cast<char>((i * 131 + 17) & 0xFF);
  }
}

std::string DecodeError(std::string_view text) {
  Result<std::string> decoded = Base64Decode(text);
  EXPECT_FALSE(decoded.ok()) << text;
  if (decoded.ok()) return "";
  EXPECT_EQ(decoded.status().code(), StatusCode::kInvalidArgument);
  return decoded.status().message();
}

TEST(Base64Test, StrictDecoding) {
  EXPECT_EQ(DecodeError("Zg="),
            "Invalid base64: length 3 is not a multiple of 4 (padding with '=' is required)");
  EXPECT_EQ(DecodeError("Zm9vYmFy\nZm9v"),
            "Invalid base64: length 13 is not a multiple of 4 (padding with '=' is required)");
  EXPECT_EQ(DecodeError("Zm9v\nZg="), "Invalid base64: byte '\\n' at offset 4 is not in the alphabet");
  EXPECT_EQ(DecodeError("Zm9v Zg="), "Invalid base64: byte ' ' at offset 4 is not in the alphabet");
  EXPECT_EQ(DecodeError("Zm-v"), "Invalid base64: byte '-' at offset 2 is not in the alphabet");
  EXPECT_EQ(DecodeError("Zm_v"), "Invalid base64: byte '_' at offset 2 is not in the alphabet");
  EXPECT_EQ(DecodeError("Zg==Zg=="), "Invalid base64: byte '=' at offset 2 is padding before the end");
  EXPECT_EQ(DecodeError("Z==="), "Invalid base64: byte '=' at offset 1 is padding before the end");
  EXPECT_EQ(DecodeError("===="), "Invalid base64: byte '=' at offset 0 is padding before the end");
  EXPECT_EQ(DecodeError("Zm=v"), "Invalid base64: byte '=' at offset 2 is padding before the end");
  EXPECT_EQ(DecodeError("Zh=="),
            "Invalid base64: byte 'h' at offset 1 has non-zero bits after the end of the data "
            "(not canonical)");
  EXPECT_EQ(DecodeError("Zm9="),
            "Invalid base64: byte '9' at offset 2 has non-zero bits after the end of the data "
            "(not canonical)");
  EXPECT_EQ(DecodeError("Zm9v\xC3\xA9=="), "Invalid base64: byte '\\xc3' at offset 4 is not in the alphabet");
}

}  // namespace
}  // namespace toolvfs
