#include "project/path.h"

#include <iterator>

#include "core/text.h"

#include <gtest/gtest.h>

namespace toolvfs {
namespace {

std::string Normalized(std::string_view path) {
  Result<std::string> result = NormalizePath(path);
  EXPECT_TRUE(result.ok()) << path << ": " << result.status().ToString();
  return result.ok() ? *result : "<error>";
}

TEST(PathTest, Normalization) {
  EXPECT_EQ(Normalized(""), "");
  EXPECT_EQ(Normalized("."), "");
  EXPECT_EQ(Normalized("./"), "");
  EXPECT_EQ(Normalized("a//b///c"), "a/b/c");
  EXPECT_EQ(Normalized("a/./b/."), "a/b");
  EXPECT_EQ(Normalized("src/"), "src");
  EXPECT_EQ(Normalized("a/b/../c"), "a/c");
  EXPECT_EQ(Normalized("a/.."), "");
  EXPECT_EQ(Normalized("a/b/../../c/./d/"), "c/d");
  EXPECT_EQ(Normalized("...") , "...");
  EXPECT_EQ(Normalized("..a/b.."), "..a/b..");
  EXPECT_EQ(Normalized("caf\xC3\xA9/\xE6\x97\xA5.txt"), "caf\xC3\xA9/\xE6\x97\xA5.txt");
  EXPECT_EQ(Normalized("with space/back\\slash"), "with space/back\\slash");
}

TEST(PathTest, EscapesAreDenied) {
  for (std::string_view path : {"..", "../x", "a/../..", "a/../../x", "./../x", "a/b/../../../etc"}) {
    Result<std::string> result = NormalizePath(path);
    ASSERT_FALSE(result.ok()) << path;
    EXPECT_EQ(result.status().code(), StatusCode::kPermissionDenied) << path;
    EXPECT_NE(result.status().message().find("leaves the project root"), std::string::npos);
  }
}

TEST(PathTest, BadPathsAreInvalidAndNamed) {
  struct Case { std::string path; std::string why; };
  for (const Case& c : {Case{"/etc/passwd", "absolute"}, Case{std::string("a\0b", 3), "NUL"},
                        Case{"a\nb", "control character"}, Case{"a\x1b[0m", "control character"},
                        Case{"tab\there", "control character"}, Case{"del\x7f", "control character"},
                        Case{"bad\xFF", "UTF-8"}, Case{"\xC0\xAF", "UTF-8"}, Case{"//x", "absolute"}}) {
    Result<std::string> result = NormalizePath(c.path);
    ASSERT_FALSE(result.ok()) << c.path;
    EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(result.status().message().find(c.why), std::string::npos) << result.status().message();
    EXPECT_EQ(result.status().message().find('\n'), std::string::npos);
  }
  EXPECT_EQ(NormalizePath("a\nb").status().message(),
            "Invalid path 'a\\nb': contains a control character");
}

TEST(PathTest, ContainmentIsSegmentWise) {
  EXPECT_TRUE(PathContains("src", "src"));
  EXPECT_TRUE(PathContains("src", "src/a.c"));
  EXPECT_FALSE(PathContains("src", "src_gen/a.c"));
  EXPECT_FALSE(PathContains("proj", "proj_secrets"));
  EXPECT_TRUE(PathContains("", "anything"));
  EXPECT_FALSE(PathContains("src/a", "src"));
}

TEST(PathTest, Parts) {
  EXPECT_EQ(ParentPath("a/b/c"), "a/b");
  EXPECT_EQ(ParentPath("a"), "");
  EXPECT_EQ(BaseName("a/b/c"), "c");
  EXPECT_EQ(JoinPath("", "x"), "x");
  EXPECT_EQ(JoinPath("a/b", "x"), "a/b/x");
  EXPECT_EQ(PathSegments("a/b/c").size(), 3u);
  EXPECT_TRUE(PathSegments("").empty());
  EXPECT_EQ(DisplayPath(""), "'.'");
}

}  // namespace
}  // namespace toolvfs

namespace toolvfs {
namespace {

// Random strings over an alphabet rich in the characters that matter: the
// result is either a one-line error or a path with every invariant of a
// normalized path. (fuzz/path_fuzzer.cc explores the same property with
// coverage guidance.)
TEST(PathTest, RandomInputsKeepTheInvariants) {
  const std::string alphabet[] = {"a", "b", ".", "..", "/", "//", std::string(1, '\0'), "\n",
                                  "\x7f", "\xff", "\xc3", "\xa9", "\xe6\x97\xa5", "\\", " "};
  uint64_t state = 0x9E3779B97F4A7C15ULL;
  auto next = [&] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  int accepted = 0;
  for (int i = 0; i < 100000; ++i) {
    std::string input;
    for (uint64_t n = next() % 12; n > 0; --n) input += alphabet[next() % std::size(alphabet)];
    Result<std::string> result = NormalizePath(input);
    if (!result.ok()) {
      StatusCode code = result.status().code();
      ASSERT_TRUE(code == StatusCode::kInvalidArgument || code == StatusCode::kPermissionDenied);
      ASSERT_EQ(result.status().message().find('\n'), std::string::npos);
      ASSERT_TRUE(IsValidUtf8(result.status().message()));
      continue;
    }
    ++accepted;
    const std::string& path = *result;
    ASSERT_TRUE(path.empty() || (path.front() != '/' && path.back() != '/')) << path;
    ASSERT_EQ(path.find("//"), std::string::npos) << path;
    for (std::string_view segment : PathSegments(path)) {
      ASSERT_TRUE(segment != "." && segment != ".." && !segment.empty()) << path;
    }
    Result<std::string> again = NormalizePath(path);
    ASSERT_TRUE(again.ok());
    ASSERT_EQ(*again, path) << "not idempotent";
  }
  EXPECT_GT(accepted, 1000);
}

}  // namespace
}  // namespace toolvfs
