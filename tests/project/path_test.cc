#include "project/path.h"

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
