// Tests of the .gitignore/.ignore matcher (project/ignore.h): one table of
// cases, each a chain of ignore files and the verdicts for some paths.
#include "project/ignore.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace toolvfs {
namespace {

struct IgnoreFileText {
  std::string directory;  // where the file lives
  std::string text;
};

struct IgnoreCheck {
  std::string path;
  bool is_directory;
  bool ignored;
};

struct IgnoreCase {
  std::string name;
  // Added in order: shallower first; in one directory .gitignore, then .ignore.
  std::vector<IgnoreFileText> files;
  std::vector<IgnoreCheck> checks;
};

constexpr bool kFile = false;
constexpr bool kDirectory = true;

const std::vector<IgnoreCase>& Cases() {
  static const std::vector<IgnoreCase> cases = {
      {"name pattern matches at any depth",
       {{"", "*.o\n"}},
       {{"a.o", kFile, true},
        {"src/deep/a.o", kFile, true},
        {"a.c", kFile, false},
        {"a.o.c", kFile, false},
        {"dir.o", kDirectory, true}}},
      {"leading slash anchors to the file's directory",
       {{"", "/build\n"}},
       {{"build", kDirectory, true}, {"build", kFile, true}, {"src/build", kDirectory, false}}},
      {"middle slash anchors too",
       {{"", "doc/frotz\n"}},
       {{"doc/frotz", kFile, true}, {"a/doc/frotz", kFile, false}, {"frotz", kFile, false}}},
      {"trailing slash matches directories only",
       {{"", "frotz/\n/out/\n"}},
       {{"frotz", kDirectory, true},
        {"a/frotz", kDirectory, true},
        {"frotz", kFile, false},
        {"out", kDirectory, true},
        {"out", kFile, false},
        {"a/out", kDirectory, false}}},
      {"negation: the last matching pattern wins",
       {{"", "*.log\n!keep.log\n!first.log\nfirst.log\n"}},
       {{"other.log", kFile, true},
        {"keep.log", kFile, false},
        {"sub/keep.log", kFile, false},
        {"first.log", kFile, true}}},
      {"leading **/ matches in every directory",
       {{"", "**/foo\n**/bar/baz\n"}},
       {{"foo", kFile, true},
        {"a/foo", kFile, true},
        {"a/b/foo", kDirectory, true},
        {"bar/baz", kFile, true},
        {"x/bar/baz", kFile, true},
        {"bar/x/baz", kFile, false}}},
      {"trailing /** matches everything inside, not the directory",
       {{"", "abc/**\n"}},
       {{"abc/x", kFile, true},
        {"abc/x/y", kFile, true},
        {"abc", kDirectory, false},
        {"sub/abc/x", kFile, false}}},
      {"middle /**/ matches zero or more directories",
       {{"", "a/**/b\nfoo/**/*.c\n"}},
       {{"a/b", kFile, true},
        {"a/x/b", kFile, true},
        {"a/x/y/b", kDirectory, true},
        {"a/bc", kFile, false},
        {"x/a/b", kFile, false},
        {"foo/a.c", kFile, true},
        {"foo/x/y/a.c", kFile, true},
        {"foo/x/y/a.h", kFile, false}}},
      {"** alone and other stars",
       {{"", "**\n"}},
       {{"anything", kFile, true}, {"a/b/c", kDirectory, true}}},
      {"a star does not cross a slash",
       {{"", "a/*.c\nx**y\n"}},
       {{"a/x.c", kFile, true},
        {"a/b/x.c", kFile, false},
        {"xay", kFile, true},
        {"xy", kFile, true},
        {"x/y", kFile, false}}},
      {"question mark is one byte, never a slash",
       {{"", "?.txt\nd?r/f\n"}},
       {{"a.txt", kFile, true},
        {"ab.txt", kFile, false},
        {".txt", kFile, false},
        {"dir/f", kFile, true},
        {"d/r/f", kFile, false}}},
      {"character classes",
       {{"", "[abc].txt\n[!abc].md\n[^x]y\n[a-c]z\n[[:digit:]]*\n[]]\n[a-]q\n"}},
       {{"b.txt", kFile, true},
        {"d.txt", kFile, false},
        {"d.md", kFile, true},
        {"a.md", kFile, false},
        {"ay", kFile, true},
        {"xy", kFile, false},
        {"bz", kFile, true},
        {"dz", kFile, false},
        {"1abc", kFile, true},
        {"abc1", kFile, false},
        {"]", kFile, true},
        {"-q", kFile, true},
        {"bq", kFile, false}}},
      {"a malformed class matches nothing",
       {{"", "[abc\n[[:nope:]]\nok\n"}},
       {{"[abc", kFile, false}, {"a", kFile, false}, {"ok", kFile, true}}},
      {"comments, blank lines, escapes and trailing spaces",
       {{"", "# comment\n\n\\#hash\n\\!bang\nspace\\ \ntrail   \n\\*\n   \n"}},
       {{"# comment", kFile, false},
        {"#hash", kFile, true},
        {"!bang", kFile, true},
        {"space ", kFile, true},
        {"space", kFile, false},
        {"trail", kFile, true},
        {"trail   ", kFile, false},
        {"*", kFile, true},
        {"x", kFile, false}}},
      {"CRLF line ends and a byte order mark",
       {{"", "\xEF\xBB\xBF*.tmp\r\n/top\r\n"}},
       {{"a.tmp", kFile, true}, {"top", kFile, true}, {"a.tmpx", kFile, false}}},
      {"matching is case-sensitive",
       {{"", "*.TXT\n"}},
       {{"a.txt", kFile, false}, {"a.TXT", kFile, true}}},
      {"a deeper file overrides a shallower one",
       {{"", "*.txt\n!x\n"}, {"sub", "!*.txt\nx\n"}},
       {{"a.txt", kFile, true},
        {"sub/a.txt", kFile, false},
        {"sub/deep/a.txt", kFile, false},
        {"other/a.txt", kFile, true},
        {"sub/x", kFile, true},
        {"x", kFile, false}}},
      {"anchored patterns of a nested file are relative to its directory",
       {{"sub", "/x\nd/y\n"}},
       {{"sub/x", kFile, true},
        {"sub/y/x", kFile, false},
        {"x", kFile, false},
        {"sub/d/y", kFile, true},
        {"d/y", kFile, false}}},
      {"a nested file does not match its own directory",
       {{"sub", "*\n"}},
       {{"sub", kDirectory, false}, {"sub/a", kFile, true}, {"subx/a", kFile, false}}},
      {".ignore overrides .gitignore in the same directory",
       {{"", "*.txt\n!b.txt\n"}, {"", "!a.txt\nb.txt\n"}},
       {{"a.txt", kFile, false}, {"b.txt", kFile, true}, {"c.txt", kFile, true}}},
      {"nothing but comments ignores nothing",
       {{"", "# only a comment\n\n"}},
       {{"a", kFile, false}, {"# only a comment", kFile, false}}},
      {"a lone ! or / is not a pattern",
       {{"", "!\n/\n"}},
       {{"a", kFile, false}, {"a", kDirectory, false}}},
  };
  return cases;
}

IgnoreRules Chain(const std::vector<IgnoreFileText>& files) {
  IgnoreRules rules;
  for (const IgnoreFileText& file : files)
    rules = rules.With(IgnoreFile(file.directory, file.text));
  return rules;
}

TEST(IgnoreTest, Table) {
  for (const IgnoreCase& test_case : Cases()) {
    IgnoreRules rules = Chain(test_case.files);
    for (const IgnoreCheck& check : test_case.checks) {
      EXPECT_EQ(rules.IsIgnored(check.path, check.is_directory), check.ignored)
          << test_case.name << ": " << (check.is_directory ? "directory " : "file ") << "'"
          << check.path << "'";
    }
  }
}

TEST(IgnoreTest, FileVerdicts) {
  IgnoreFile file("src", "*.log\n!keep.log\n");
  EXPECT_EQ(file.directory(), "src");
  EXPECT_EQ(file.Match("src/a.log", false), IgnoreVerdict::kIgnored);
  EXPECT_EQ(file.Match("src/keep.log", false), IgnoreVerdict::kIncluded);
  EXPECT_EQ(file.Match("src/a.c", false), IgnoreVerdict::kNoMatch);
  EXPECT_EQ(file.Match("other/a.log", false), IgnoreVerdict::kNoMatch);  // outside src
  EXPECT_EQ(file.Match("srcx/a.log", false), IgnoreVerdict::kNoMatch);
}

TEST(IgnoreTest, EmptyFilesAddNothing) {
  EXPECT_TRUE(IgnoreFile("", "").empty());
  EXPECT_TRUE(IgnoreFile("", "# comment\n\n   \n").empty());
  EXPECT_FALSE(IgnoreFile("", "x\n").empty());
  IgnoreRules rules;
  EXPECT_TRUE(rules.empty());
  EXPECT_TRUE(rules.With(IgnoreFile("", "# nothing\n")).empty());
  EXPECT_FALSE(rules.With(IgnoreFile("", "x\n")).empty());
}

TEST(IgnoreTest, CopiesShareTheChainAndStayUnchanged) {
  IgnoreRules root = Chain({{"", "*.txt\n"}});
  IgnoreRules sub = root.With(IgnoreFile("sub", "!a.txt\n"));
  EXPECT_TRUE(root.IsIgnored("sub/a.txt", false));
  EXPECT_FALSE(sub.IsIgnored("sub/a.txt", false));
  EXPECT_TRUE(sub.IsIgnored("sub/b.txt", false));
}

TEST(IgnoreTest, PathologicalPatternsStayFast) {
  // Backtracking globs would take exponential time here.
  IgnoreRules rules = Chain({{"", "*a*a*a*a*a*a*a*a*a*a*a*b\n**/**/**/**/**/**/**/**/x/**/y\n"}});
  std::string name(200, 'a');
  std::string deep;
  for (int depth = 0; depth < 60; ++depth) deep += "d/";
  EXPECT_FALSE(rules.IsIgnored(name, false));
  EXPECT_FALSE(rules.IsIgnored(deep + "x/" + deep + "z", false));
  EXPECT_TRUE(rules.IsIgnored(deep + "x/" + deep + "y", false));
}

}  // namespace
}  // namespace toolvfs
