// `toolvfs grep` against ripgrep: each ripgrep-style flag on the same tree
// must print exactly what `rg` prints (rg with -n --no-heading
// --with-filename --sort path, the form toolvfs always prints in).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "project/test_util.h"
#include "subprocess.h"

namespace toolvfs {
namespace {

class GrepFlagsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(ToolvfsBinary().empty()) << "TOOLVFS_BINARY is not set";
    Write("src/a.py", "foo bar\nfoobar baz\n  foo\nnothing\nx foo y foo\ndef Foo():\n");
    Write("src/sub/b.c", "int foo;\n// TODO foo\nbar\nbaz\nqux\nfoo end\n");
    Write("src/sub/c.h", "#define FOO_BAR 1\n/* foo.bar */\n");
    Write("docs/notes.md", "foo md\nTODO: write\n");
    Write("docs/a.txt", "one\ntwo foo\nthree\nfour\nfive\nsix foo\n");
    Write(".hidden/h.txt", "hidden foo\n");
    Write(".dotfile", "foo dot\n");
    Write("vendor/lib.py", "foo vendored\n");
    Write("data.bin", std::string("foo\0binary\n", 11));
  }

  void Write(const std::string& path, const std::string& content) { WriteRealFile(dir_.Join(path), content); }

  ProcessResult Run(std::vector<std::string> argv) {
    ProcessOptions options;
    options.cwd = dir_.path();
    return RunProcess(argv, options);
  }

  // Runs `toolvfs grep ARGS` and `rg ARGS` in the tree and compares.
  // `exit_code` is what rg must exit with (1: the case finds nothing).
  void ExpectSameAsRipgrep(const std::vector<std::string>& arguments, int exit_code = 0) {
    std::string shown;
    for (const std::string& argument : arguments) shown += argument + " ";
    SCOPED_TRACE("grep " + shown);
    std::vector<std::string> ours = {ToolvfsBinary(), "grep", "--no-audit", "--color", "never"};
    ours.insert(ours.end(), arguments.begin(), arguments.end());
    std::vector<std::string> theirs = {TOOLVFS_TEST_RG, "-n", "--no-heading", "--with-filename",
                                       "--sort", "path", "--color", "never", "--no-config"};
    theirs.insert(theirs.end(), arguments.begin(), arguments.end());
    ProcessResult toolvfs = Run(ours);
    ProcessResult ripgrep = Run(theirs);
    EXPECT_EQ(ripgrep.exit_code, exit_code) << ripgrep.err;
    EXPECT_EQ(toolvfs.exit_code, ripgrep.exit_code) << toolvfs.err;
    EXPECT_EQ(toolvfs.out, ripgrep.out);
  }

  TempDir dir_;
};

TEST_F(GrepFlagsTest, PlainSearch) { ExpectSameAsRipgrep({"foo"}); }
TEST_F(GrepFlagsTest, FilesWithMatches) {
  ExpectSameAsRipgrep({"-l", "foo"});
  ExpectSameAsRipgrep({"--files-with-matches", "TODO"});
}
TEST_F(GrepFlagsTest, Count) { ExpectSameAsRipgrep({"-c", "foo"}); }
TEST_F(GrepFlagsTest, WordRegexp) {
  ExpectSameAsRipgrep({"-w", "foo"});
  ExpectSameAsRipgrep({"-w", "-i", "foo"});
}
TEST_F(GrepFlagsTest, FixedStrings) {
  ExpectSameAsRipgrep({"-F", "foo.bar"});
  ExpectSameAsRipgrep({"-F", "foo;"});
}
TEST_F(GrepFlagsTest, OnlyMatching) {
  ExpectSameAsRipgrep({"-o", "foo"});
  ExpectSameAsRipgrep({"-o", "-w", "fo+"});
}
TEST_F(GrepFlagsTest, RepeatedPatterns) {
  ExpectSameAsRipgrep({"-e", "bar", "-e", "baz"});
  ExpectSameAsRipgrep({"-e", "TODO", "-e", "qux", "src"});
}
TEST_F(GrepFlagsTest, AfterAndBeforeContext) {
  ExpectSameAsRipgrep({"-A", "1", "TODO"});
  ExpectSameAsRipgrep({"-B", "2", "end"});
  ExpectSameAsRipgrep({"-A", "2", "foo", "docs/a.txt"});
  ExpectSameAsRipgrep({"-B", "1", "-A", "3", "two"});
  ExpectSameAsRipgrep({"-C", "1", "-A", "0", "bar"});  // -A and -B override -C, as in rg
}
TEST_F(GrepFlagsTest, Globs) {
  ExpectSameAsRipgrep({"-g", "*.py", "foo"});
  ExpectSameAsRipgrep({"-g", "!vendor", "foo"});
  ExpectSameAsRipgrep({"-g", "!*.md", "-g", "!src/sub/**", "foo"});
  ExpectSameAsRipgrep({"-g", "src/**/*.c", "foo"});
}
TEST_F(GrepFlagsTest, Types) {
  ExpectSameAsRipgrep({"-t", "py", "foo"});
  ExpectSameAsRipgrep({"-t", "c", "foo"});
  ExpectSameAsRipgrep({"-t", "md", "-t", "txt", "foo"});
}
TEST_F(GrepFlagsTest, HiddenFilesOnlyWithHidden) {
  ExpectSameAsRipgrep({"dot|hidden"}, 1);
  ExpectSameAsRipgrep({"--hidden", "foo"});
  ExpectSameAsRipgrep({"foo", ".hidden"});  // named on the command line: searched
}
TEST_F(GrepFlagsTest, InvertMatch) {
  ExpectSameAsRipgrep({"-v", "foo"});
  ExpectSameAsRipgrep({"--invert-match", "o"});
  ExpectSameAsRipgrep({"-v", "-c", "foo"});
  ExpectSameAsRipgrep({"-v", "-l", "foo"});
  ExpectSameAsRipgrep({"-v", "-o", "bar"});  // the whole selected line, as rg
  ExpectSameAsRipgrep({"-v", "-i", "-w", "foo", "src"});
  ExpectSameAsRipgrep({"-v", "-A", "1", "foo"});
  ExpectSameAsRipgrep({"-v", "-B", "1", "-A", "2", "o", "docs/a.txt"});
  ExpectSameAsRipgrep({"-v", "-e", "foo", "-e", "bar"});
  // Every line matches: nothing is selected.
  ExpectSameAsRipgrep({"-v", "", "src"}, 1);
}
TEST_F(GrepFlagsTest, InvertMatchJsonHasNoSpans) {
  ProcessResult result = Run({ToolvfsBinary(), "grep", "--no-audit", "--json", "-v", "foo", "docs/a.txt"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out,
            R"({"path":"docs/a.txt","lines":[)"
            R"({"line_number":1,"content":"one","is_match":true,"matches":[]},)"
            R"({"line_number":3,"content":"three","is_match":true,"matches":[]},)"
            R"({"line_number":4,"content":"four","is_match":true,"matches":[]},)"
            R"({"line_number":5,"content":"five","is_match":true,"matches":[]}]})"
            "\n"
            R"({"truncated":false})"
            "\n");
}
TEST_F(GrepFlagsTest, Files) {
  ExpectSameAsRipgrep({"--files"});
  ExpectSameAsRipgrep({"--files", "--hidden"});
  ExpectSameAsRipgrep({"--files", "-t", "py"});
  ExpectSameAsRipgrep({"--files", "-g", "!*.py", "src"});
}

TEST_F(GrepFlagsTest, UnknownTypeIsAOneLineError) {
  ProcessResult result = Run({ToolvfsBinary(), "grep", "-t", "nosuch", "foo"});
  EXPECT_EQ(result.exit_code, 2);
  ExpectOneLineError(result);
  EXPECT_THAT(result.err, ::testing::HasSubstr("Unknown file type 'nosuch' (known: "));
}

TEST_F(GrepFlagsTest, ColorAlwaysHighlightsMatches) {
  ProcessResult result = Run({ToolvfsBinary(), "grep", "--color", "always", "qux"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(result.out, ::testing::HasSubstr("qux\x1b[0m"));
  ProcessResult never = Run({ToolvfsBinary(), "grep", "--color", "never", "qux"});
  EXPECT_EQ(never.out, "src/sub/b.c:5:qux\n");
}

}  // namespace
}  // namespace toolvfs
