// Session path rules (issue 19 item 2): every accepted form, every boundary,
// every error message.
#include "session/session_path.h"

#include <gtest/gtest.h>

#include <string>

namespace toolvfs {
namespace {

std::string Normalized(std::string_view path) {
  Result<std::string> result = NormalizeSessionPath(path);
  EXPECT_TRUE(result.ok()) << result.status().message();
  return result.ok() ? *result : std::string("<error>");
}

std::string ErrorOf(std::string_view path, const SessionPathLimits& limits = {}) {
  Result<std::string> result = NormalizeSessionPath(path, limits);
  EXPECT_FALSE(result.ok()) << "accepted '" << std::string(path) << "'";
  if (result.ok()) return "";
  EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
  return result.status().message();
}

std::string Segments(std::size_t count) {
  std::string path;
  for (std::size_t index = 0; index < count; ++index) {
    if (!path.empty()) path += '/';
    path += "d" + std::to_string(index);
  }
  return path;
}

TEST(SessionPathTest, RootIsEmpty) {
  EXPECT_EQ(Normalized(""), "");
  EXPECT_NE(ErrorOf("//").find("absolute paths are not allowed"), std::string::npos);
}

TEST(SessionPathTest, DuplicateAndTrailingSlashesCollapse) {
  EXPECT_EQ(Normalized("a"), "a");
  EXPECT_EQ(Normalized("a//b///c"), "a/b/c");
  EXPECT_EQ(Normalized("a/b/"), "a/b");
  EXPECT_EQ(Normalized("a/b//"), "a/b");
}

TEST(SessionPathTest, DotNamesThatAreNotDotSegmentsAreFine) {
  EXPECT_EQ(Normalized(".hidden/...x/a..b"), ".hidden/...x/a..b");
  EXPECT_EQ(Normalized("..."), "...");
}

TEST(SessionPathTest, AbsolutePathIsRejected) {
  EXPECT_EQ(ErrorOf("/etc/passwd"),
            "Path '/etc/passwd': absolute paths are not allowed (use a path relative to the "
            "workspace root)");
  EXPECT_NE(ErrorOf("/").find("absolute paths are not allowed"), std::string::npos);
}

TEST(SessionPathTest, DotSegmentsAreRejectedNotCollapsed) {
  EXPECT_EQ(ErrorOf("a/../b"), "Path 'a/../b': '..' segments are not allowed");
  EXPECT_EQ(ErrorOf(".."), "Path '..': '..' segments are not allowed");
  EXPECT_EQ(ErrorOf("a/./b"), "Path 'a/./b': '.' segments are not allowed");
  EXPECT_EQ(ErrorOf("a/."), "Path 'a/.': '.' segments are not allowed");
}

TEST(SessionPathTest, SegmentLengthBoundary) {
  const std::string eighty(80, 'x');
  EXPECT_EQ(Normalized("a/" + eighty), "a/" + eighty);
  const std::string eighty_one(81, 'x');
  EXPECT_EQ(ErrorOf("a/" + eighty_one), "Path 'a/" + eighty_one + "': segment '" + eighty_one +
                                            "' has 81 characters, more than the limit of 80");
}

TEST(SessionPathTest, SegmentCountBoundary) {
  EXPECT_EQ(Normalized(Segments(16)), Segments(16));
  EXPECT_EQ(Normalized(Segments(16) + "/"), Segments(16));
  EXPECT_EQ(ErrorOf(Segments(17)), "Path '" + Segments(17) + "': more than 16 segments");
}

TEST(SessionPathTest, LimitsAreConfigurable) {
  const SessionPathLimits limits{.max_segments = 2, .max_segment_chars = 3};
  EXPECT_TRUE(NormalizeSessionPath("abc/def", limits).ok());
  EXPECT_EQ(ErrorOf("a/b/c", limits), "Path 'a/b/c': more than 2 segments");
  EXPECT_EQ(ErrorOf("abcd", limits),
            "Path 'abcd': segment 'abcd' has 4 characters, more than the limit of 3");
}

TEST(SessionPathTest, PrintableAsciiIsAccepted) {
  EXPECT_EQ(Normalized("with space/~tilde!"), "with space/~tilde!");
}

TEST(SessionPathTest, NonAsciiAndControlBytesAreRejected) {
  EXPECT_EQ(ErrorOf("caf\xc3\xa9"),
            "Path 'caf\\xc3\\xa9': segments must be printable ASCII (0x20-0x7e), found byte "
            "'\\xc3'");
  EXPECT_EQ(ErrorOf("a\tb"),
            "Path 'a\\x09b': segments must be printable ASCII (0x20-0x7e), found byte '\\x09'");
  EXPECT_EQ(ErrorOf(std::string("a\0b", 3)),
            "Path 'a\\x00b': segments must be printable ASCII (0x20-0x7e), found byte '\\x00'");
  EXPECT_EQ(ErrorOf("a\x7f"),
            "Path 'a\\x7f': segments must be printable ASCII (0x20-0x7e), found byte '\\x7f'");
}

TEST(SessionPathTest, UnderDirectoryComparesWholeSegments) {
  EXPECT_TRUE(IsUnderSessionDirectory("a/b", "a/b"));
  EXPECT_TRUE(IsUnderSessionDirectory("a/b/c", "a/b"));
  EXPECT_FALSE(IsUnderSessionDirectory("a/bc", "a/b"));
  EXPECT_FALSE(IsUnderSessionDirectory("a", "a/b"));
  EXPECT_TRUE(IsUnderSessionDirectory("anything", ""));
  EXPECT_TRUE(IsUnderSessionDirectory("", ""));
}

TEST(SessionPathTest, JoinHandlesTheRoot) {
  EXPECT_EQ(JoinSessionPath("", "a"), "a");
  EXPECT_EQ(JoinSessionPath("a", ""), "a");
  EXPECT_EQ(JoinSessionPath("a/b", "c"), "a/b/c");
}

}  // namespace
}  // namespace toolvfs
