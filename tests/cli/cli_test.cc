// End-to-end tests of the toolvfs command line: each test runs the built
// binary as a subprocess and checks its stdout, stderr and exit code.
#include <rapidjson/document.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "project/test_util.h"
#include "subprocess.h"

namespace toolvfs {
namespace {

using ::testing::AllOf;
using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::Not;
using ::testing::StartsWith;

namespace fs = std::filesystem;

ProcessResult Toolvfs(std::vector<std::string> arguments, const ProcessOptions& options = {}) {
  arguments.insert(arguments.begin(), ToolvfsBinary());
  return RunProcess(arguments, options);
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream stream(text);
  for (std::string line; std::getline(stream, line);) lines.push_back(line);
  return lines;
}

// A small project on disk:
//   src/a.py       two functions with blank lines between them
//   src/b.c        a TODO
//   docs/notes.md  a TODO and a capitalised "Def"
//   data.bin       "def " before a NUL byte: binary, skipped
//   app.log, build/out.py   ignored by .gitignore
class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(ToolvfsBinary().empty()) << "TOOLVFS_BINARY is not set";
    Write("src/a.py",
          "import os\n\ndef alpha():\n    return 1\n\n\n\n\ndef beta():\n    return 2\n");
    Write("src/b.c", "int main(void) {\n  /* TODO: parse args */\n  return 0;\n}\n");
    Write("docs/notes.md", "# Notes\nTODO write docs\nDef is not lowercase\n");
    Write("data.bin", std::string("def \0 binary\n", 13));
    Write(".gitignore", "*.log\nbuild/\n");
    Write("app.log", "def in a log\n");
    Write("build/out.py", "def built():\n");
  }

  void Write(const std::string& path, const std::string& content) { WriteRealFile(dir_.Join(path), content); }

  // toolvfs ARGS... --project ROOT
  ProcessResult InProject(std::vector<std::string> arguments) {
    arguments.push_back("--project");
    arguments.push_back(root_);
    return Toolvfs(arguments);
  }

  TempDir dir_;
  const std::string root_ = dir_.path();
};

TEST_F(CliTest, GrepPrintsMatchesSortedByPathAndExitsZero) {
  ProcessResult result = InProject({"grep", "TODO"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out,
            "docs/notes.md:2:TODO write docs\n"
            "src/b.c:2:  /* TODO: parse args */\n");
  EXPECT_EQ(result.err, "");
}

TEST_F(CliTest, GrepSkipsBinaryAndIgnoredFiles) {
  ProcessResult result = InProject({"grep", "def "});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, "src/a.py:3:def alpha():\nsrc/a.py:9:def beta():\n");
}

TEST_F(CliTest, GrepIncludeIgnoredSearchesIgnoredFiles) {
  ProcessResult result = InProject({"grep", "def ", "--include-ignored"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out,
            "app.log:1:def in a log\n"
            "build/out.py:1:def built():\n"
            "src/a.py:3:def alpha():\n"
            "src/a.py:9:def beta():\n");
}

TEST_F(CliTest, GrepWithoutMatchExitsOneSilently) {
  ProcessResult result = InProject({"grep", "no such text anywhere"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(result.out, "");
  EXPECT_EQ(result.err, "");
}

// A flag before the command takes no value: the word after it is the
// command, and an unknown one is named as such.
TEST_F(CliTest, UnknownCommandAfterARootFlagIsNamed) {
  ProcessResult result = Toolvfs({"--no-interaction", "bogus"});
  EXPECT_EQ(result.exit_code, 2);
  ExpectOneLineError(result);
  EXPECT_THAT(result.err, HasSubstr("toolvfs: bogus: unknown command"));
}

// The man page and completions are generated from the command line itself
// (cli_reference.h): every command is in them, flags take no value.
TEST_F(CliTest, GenerateManPageAndCompletionsListEveryCommand) {
  ProcessResult man = Toolvfs({"generate", "man"});
  ProcessResult bash = Toolvfs({"generate", "bash"});
  ProcessResult zsh = Toolvfs({"generate", "zsh"});
  ASSERT_EQ(man.exit_code, 0) << man.err;
  ASSERT_EQ(bash.exit_code, 0) << bash.err;
  ASSERT_EQ(zsh.exit_code, 0) << zsh.err;
  for (const char* command : {"run", "exec", "tools", "check", "grep", "doctor", "workspace", "audit", "vfsd"}) {
    EXPECT_THAT(man.out, HasSubstr(std::string(".SS \"toolvfs ") + command + "\"")) << command;
    EXPECT_THAT(bash.out, HasSubstr(std::string("    ") + command + ")\n")) << command;
    EXPECT_THAT(zsh.out, HasSubstr(std::string("    '") + command + ":")) << command;
  }
  EXPECT_THAT(man.out, HasSubstr("\\fB\\-\\-no\\-interaction\\fR\n"));  // a flag: no value name
  EXPECT_THAT(man.out, Not(HasSubstr("generate")));                          // hidden
  EXPECT_THAT(bash.out, HasSubstr("complete -o filenames -F _toolvfs toolvfs"));
  ProcessResult unknown = Toolvfs({"generate", "fish"});
  EXPECT_EQ(unknown.exit_code, 2);
}

TEST_F(CliTest, GrepBadPatternIsOneLineErrorExitTwo) {
  ProcessResult result = InProject({"grep", "a("});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(result.out, "");
  ExpectOneLineError(result);
  EXPECT_THAT(result.err, StartsWith("toolvfs: grep: "));
  EXPECT_THAT(result.err, HasSubstr("a("));
}

TEST_F(CliTest, GrepIgnoreCase) {
  ProcessResult result = InProject({"grep", "-i", "^def "});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out,
            "docs/notes.md:3:Def is not lowercase\n"
            "src/a.py:3:def alpha():\n"
            "src/a.py:9:def beta():\n");
  EXPECT_EQ(InProject({"grep", "--ignore-case", "todo WRITE"}).out, "docs/notes.md:2:TODO write docs\n");
}

TEST_F(CliTest, GrepContextPrintsRipgrepStyleGroups) {
  ProcessResult result = InProject({"grep", "-C", "1", "def "});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out,
            "src/a.py-2-\n"
            "src/a.py:3:def alpha():\n"
            "src/a.py-4-    return 1\n"
            "--\n"
            "src/a.py-8-\n"
            "src/a.py:9:def beta():\n"
            "src/a.py-10-    return 2\n");
}

TEST_F(CliTest, GrepContextMergesAdjacentGroupsAndSeparatesFiles) {
  // With 3 lines of context the two groups of a.py overlap (line 6), so
  // they merge without "--"; the next file starts a new group.
  ProcessResult result = InProject({"grep", "--context", "3", "def |TODO"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out,
            "docs/notes.md-1-# Notes\n"
            "docs/notes.md:2:TODO write docs\n"
            "docs/notes.md-3-Def is not lowercase\n"
            "--\n"
            "src/a.py-1-import os\n"
            "src/a.py-2-\n"
            "src/a.py:3:def alpha():\n"
            "src/a.py-4-    return 1\n"
            "src/a.py-5-\n"
            "src/a.py-6-\n"
            "src/a.py-7-\n"
            "src/a.py-8-\n"
            "src/a.py:9:def beta():\n"
            "src/a.py-10-    return 2\n"
            "--\n"
            "src/b.c-1-int main(void) {\n"
            "src/b.c:2:  /* TODO: parse args */\n"
            "src/b.c-3-  return 0;\n"
            "src/b.c-4-}\n");
}

TEST_F(CliTest, GrepExtensionFilter) {
  EXPECT_EQ(InProject({"grep", "TODO", "--ext", "c"}).out, "src/b.c:2:  /* TODO: parse args */\n");
  EXPECT_EQ(InProject({"grep", "TODO", "--ext", ".md"}).out, "docs/notes.md:2:TODO write docs\n");
  ProcessResult both = InProject({"grep", "TODO", "--ext", "md,c"});
  EXPECT_EQ(Lines(both.out).size(), 2u) << both.out;
  ProcessResult repeated = InProject({"grep", "TODO", "--ext", "md", "--ext", "c"});
  EXPECT_EQ(repeated.out, both.out);
  ProcessResult none = InProject({"grep", "TODO", "--ext", "py"});
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_EQ(none.out, "");
}

TEST_F(CliTest, GrepMaxMatchesTruncates) {
  ProcessResult result = InProject({"grep", "def |TODO", "--max-matches", "2"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(Lines(result.out).size(), 2u) << result.out;
  EXPECT_THAT(result.err, HasSubstr("--max-matches"));  // a note, not an error

  ProcessResult zero = InProject({"grep", "def ", "--max-matches", "0"});
  EXPECT_EQ(zero.exit_code, 2);
  ExpectOneLineError(zero);
}

TEST_F(CliTest, GrepHasNoLimitByDefault) {
  std::string many;
  for (int line = 0; line < 2500; ++line) many += "needle " + std::to_string(line) + "\n";
  Write("many.txt", many);
  ProcessResult result = InProject({"grep", "needle"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(Lines(result.out).size(), 2500u);
  EXPECT_EQ(result.err, "");
}

// The NDJSON of `toolvfs grep --json`: one object per file, then the
// summary. Checks the exact shape: {"path","lines":[{line_number,content,
// is_match,matches?:[{start,end}]}]} per file, {"truncated"(,"truncated_by")}
// last.
std::vector<rapidjson::Document> ParseGrepNdjson(const std::string& out) {
  std::vector<rapidjson::Document> documents;
  EXPECT_THAT(out, EndsWith("}\n"));
  for (const std::string& line : Lines(out)) {
    rapidjson::Document document;
    document.Parse(line.c_str());
    EXPECT_FALSE(document.HasParseError()) << line;
    EXPECT_TRUE(document.IsObject()) << line;
    documents.push_back(std::move(document));
  }
  for (size_t index = 0; index + 1 < documents.size(); ++index) {
    const rapidjson::Document& file = documents[index];
    EXPECT_EQ(file.MemberCount(), 2u);
    EXPECT_TRUE(file.HasMember("path") && file["path"].IsString());
    EXPECT_TRUE(file.HasMember("lines") && file["lines"].IsArray());
    if (!file.HasMember("lines") || !file["lines"].IsArray()) continue;
    for (const rapidjson::Value& line : file["lines"].GetArray()) {
      EXPECT_TRUE(line.HasMember("line_number") && line["line_number"].IsUint64());
      EXPECT_TRUE(line.HasMember("content") && line["content"].IsString());
      EXPECT_TRUE(line.HasMember("is_match") && line["is_match"].IsBool());
      EXPECT_EQ(line.MemberCount(), line["is_match"].GetBool() ? 4u : 3u);
    }
  }
  if (!documents.empty()) {
    EXPECT_TRUE(documents.back().HasMember("truncated"));
  }
  return documents;
}

TEST_F(CliTest, GrepJsonIsOneFileEntryPerLineThenASummary) {
  ProcessResult result = InProject({"grep", "def ", "--json", "-C", "1"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  std::vector<rapidjson::Document> documents = ParseGrepNdjson(result.out);
  ASSERT_EQ(documents.size(), 2u);
  EXPECT_FALSE(documents[1]["truncated"].GetBool());
  EXPECT_STREQ(documents[0]["path"].GetString(), "src/a.py");
  const rapidjson::Value& lines = documents[0]["lines"];
  ASSERT_EQ(lines.Size(), 6u);
  EXPECT_EQ(lines[0]["line_number"].GetUint64(), 2u);
  EXPECT_FALSE(lines[0]["is_match"].GetBool());
  EXPECT_EQ(lines[1]["line_number"].GetUint64(), 3u);
  EXPECT_STREQ(lines[1]["content"].GetString(), "def alpha():");
  EXPECT_TRUE(lines[1]["is_match"].GetBool());
  // Byte offsets of the match within the line.
  ASSERT_EQ(lines[1]["matches"].Size(), 1u);
  EXPECT_EQ(lines[1]["matches"][0]["start"].GetUint64(), 0u);
  EXPECT_EQ(lines[1]["matches"][0]["end"].GetUint64(), 4u);
}

TEST_F(CliTest, GrepJsonReportsTruncationAndEmptyResults) {
  ProcessResult truncated = InProject({"grep", "def ", "--json", "--max-matches", "1"});
  EXPECT_EQ(truncated.exit_code, 0) << truncated.err;
  EXPECT_EQ(truncated.err, "");
  EXPECT_EQ(truncated.out,
            "{\"path\":\"src/a.py\",\"lines\":[{\"line_number\":3,"
            "\"content\":\"def alpha():\",\"is_match\":true,\"matches\":[{\"start\":0,\"end\":4}]}]}\n"
            "{\"truncated\":true,\"truncated_by\":\"max_matches\"}\n");

  ProcessResult empty = InProject({"grep", "nothing matches this", "--json"});
  EXPECT_EQ(empty.exit_code, 1);
  EXPECT_EQ(empty.out, "{\"truncated\":false}\n");
}

// What a toolvfs command wrote and the most memory it held.
struct OutputAndPeakMemory {
  int exit_code = -1;
  uint64_t output_bytes = 0;
  uint64_t output_lines = 0;
  std::string output_tail;  // the last 100 bytes
  uint64_t peak_resident_kib = 0;  // ru_maxrss
};

// Runs toolvfs with `arguments`, counting its output instead of keeping
// it (it may be hundreds of megabytes), and reads its peak resident memory
// from wait4.
OutputAndPeakMemory RunCountingOutput(const std::vector<std::string>& arguments) {
  OutputAndPeakMemory result;
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
    ADD_FAILURE() << "pipe2: " << std::strerror(errno);
    return result;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  std::vector<std::string> argv_strings = arguments;
  argv_strings.insert(argv_strings.begin(), ToolvfsBinary());
  std::vector<char*> argv;
  for (std::string& argument : argv_strings) argv.push_back(argument.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  int spawned = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_fds[1]);
  if (spawned != 0) {
    close(pipe_fds[0]);
    ADD_FAILURE() << "posix_spawn: " << std::strerror(spawned);
    return result;
  }
  std::vector<char> buffer(1 << 16);
  while (true) {
    ssize_t count = read(pipe_fds[0], buffer.data(), buffer.size());
    if (count < 0 && errno == EINTR) continue;
    if (count <= 0) break;
    result.output_bytes += static_cast<uint64_t>(count);
    result.output_lines += static_cast<uint64_t>(std::count(buffer.data(), buffer.data() + count, '\n'));
    result.output_tail.append(buffer.data(), static_cast<size_t>(count));
    if (result.output_tail.size() > 100) result.output_tail.erase(0, result.output_tail.size() - 100);
  }
  close(pipe_fds[0]);
  int status = 0;
  rusage usage{};
  if (wait4(pid, &status, 0, &usage) == pid && WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  result.peak_resident_kib = static_cast<uint64_t>(usage.ru_maxrss);
  return result;
}

// toolvfs grep prints each file as the search hands it over instead of
// holding the whole result: 2,000,000 matching lines (about 96 MB of JSON,
// 40 MB of text) go through in far less memory than the result takes
// (before: 908 MB with --json over a 190 MB tree where rg used 13 MB).
TEST(CliGrepStreamingTest, OutputIsWrittenAsTheSearchGoesInBoundedMemory) {
  TempDir dir;
  std::string lines;
  for (int line = 0; line < 10'000; ++line) lines += "x\n";
  for (int index = 0; index < 200; ++index) {
    WriteRealFile(dir.Join("d" + std::to_string(index % 10) + "/f" + std::to_string(index)), lines);
  }
  constexpr uint64_t kMatchingLines = 2'000'000;
  // The result alone, held whole, is at least 48 bytes per line
  // (GrepLine): about 92 MiB.
  constexpr uint64_t kPeakLimitKib = 64 << 10;

  OutputAndPeakMemory text = RunCountingOutput({"grep", "x", "--project", dir.path()});
  EXPECT_EQ(text.exit_code, 0);
  EXPECT_EQ(text.output_lines, kMatchingLines);
  EXPECT_THAT(text.output_tail, EndsWith("d9/f99:10000:x\n"));
  EXPECT_LT(text.peak_resident_kib, kPeakLimitKib);

  OutputAndPeakMemory json = RunCountingOutput({"grep", "x", "--json", "--project", dir.path()});
  EXPECT_EQ(json.exit_code, 0);
  EXPECT_EQ(json.output_lines, 201u);  // an object per file, then the summary
  EXPECT_GT(json.output_bytes, kMatchingLines * 48);
  EXPECT_THAT(json.output_tail,
              EndsWith(R"(:10000,"content":"x","is_match":true,"matches":[{"start":0,"end":1}]}]})"
                       "\n" R"({"truncated":false})" "\n"));
  EXPECT_LT(json.peak_resident_kib, kPeakLimitKib);
}

TEST_F(CliTest, GrepJsonEscapesControlCharacters) {
  Write("tabs.txt", "quote \" back \\ tab \t bell \x07 end\n");
  ProcessResult result = InProject({"grep", "bell", "--json"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  std::vector<rapidjson::Document> documents = ParseGrepNdjson(result.out);
  ASSERT_EQ(documents.size(), 2u);
  EXPECT_STREQ(documents[0]["lines"][0]["content"].GetString(), "quote \" back \\ tab \t bell \x07 end");
}

TEST_F(CliTest, GrepPathArgumentsRestrictTheSearch) {
  EXPECT_EQ(InProject({"grep", "TODO", "src"}).out, "src/b.c:2:  /* TODO: parse args */\n");
  EXPECT_EQ(InProject({"grep", "def |TODO", "src/a.py", "docs"}).out,
            "docs/notes.md:2:TODO write docs\n"
            "src/a.py:3:def alpha():\n"
            "src/a.py:9:def beta():\n");
  // A file named explicitly is searched even if ignored.
  EXPECT_EQ(InProject({"grep", "def ", "app.log"}).out, "app.log:1:def in a log\n");

  ProcessResult missing = InProject({"grep", "TODO", "no/such/dir"});
  EXPECT_EQ(missing.exit_code, 2);
  ExpectOneLineError(missing);
  EXPECT_THAT(missing.err, HasSubstr("no/such/dir"));
}

TEST_F(CliTest, PatternStartingWithDashAfterDoubleDash) {
  Write("flags.txt", "run with -v for details\n");
  // Everything after "--" is positional, so the options come first.
  ProcessResult result = Toolvfs({"grep", "--project", root_, "--", "-v for"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, "flags.txt:1:run with -v for details\n");
}

TEST_F(CliTest, ProjectAcceptsFsUriBareDirAndDefaultsToCurrentDirectory) {
  std::string expected = "docs/notes.md:2:TODO write docs\nsrc/b.c:2:  /* TODO: parse args */\n";
  EXPECT_EQ(Toolvfs({"grep", "TODO", "--project", "fs:" + root_}).out, expected);
  EXPECT_EQ(Toolvfs({"grep", "TODO", "--project", root_}).out, expected);
  EXPECT_EQ(Toolvfs({"grep", "TODO", "--project=" + root_}).out, expected);
  EXPECT_EQ(Toolvfs({"--project", root_, "grep", "TODO"}).out, expected);  // before the command
  EXPECT_EQ(Toolvfs({"grep", "TODO"}, {.cwd = root_}).out, expected);
  EXPECT_EQ(Toolvfs({"grep", "TODO", "--project", "src"}, {.cwd = root_}).out,
            "b.c:2:  /* TODO: parse args */\n");
}

TEST_F(CliTest, ProjectMemoryAndNullAreEmpty) {
  for (const char* uri : {"memory:", "memory:scratch", "null:"}) {
    ProcessResult result = Toolvfs({"grep", "anything", "--project", uri});
    EXPECT_EQ(result.exit_code, 1) << uri << ": " << result.err;
    EXPECT_EQ(result.out, "") << uri;
    EXPECT_EQ(result.err, "") << uri;
  }
}

TEST_F(CliTest, ProjectWithUnknownSchemeIsOneLineErrorNamingIt) {
  ProcessResult result = Toolvfs({"grep", "x", "--project", "ftp:example"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(result.out, "");
  ExpectOneLineError(result);
  EXPECT_THAT(result.err, HasSubstr("ftp:example"));
}

TEST_F(CliTest, MissingProjectDirectoryIsAnError) {
  std::string missing = root_ + "/does-not-exist";
  ProcessResult result = Toolvfs({"grep", "x", "--project", missing});
  EXPECT_EQ(result.exit_code, 2);
  ExpectOneLineError(result);
  EXPECT_THAT(result.err, HasSubstr("does-not-exist"));

  ProcessResult file = Toolvfs({"grep", "x", "--project", root_ + "/src/a.py"});
  EXPECT_EQ(file.exit_code, 2);
  ExpectOneLineError(file);
}

TEST_F(CliTest, CommonOptionsAreAcceptedAndChecked) {
  ProcessResult result = InProject({"grep", "TODO", "--no-interaction", "--sandbox=best-effort",
                                    "--log-level", "debug", "--config", "toolvfs.toml", "--no-audit"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(InProject({"doctor", "--audit", root_ + "/audit.jsonl", "--sandbox", "require"}).exit_code, 0);

  for (std::vector<std::string> bad : std::vector<std::vector<std::string>>{
           {"grep", "x", "--sandbox", "sometimes"},
           {"grep", "x", "--log-level", "loud"},
           {"grep", "x", "--audit", "a.jsonl", "--no-audit"},
       }) {
    ProcessResult rejected = InProject(bad);
    EXPECT_EQ(rejected.exit_code, 2) << bad[2];
    ExpectOneLineError(rejected);
    EXPECT_THAT(rejected.err, HasSubstr("(see toolvfs grep --help)"));
  }
}

TEST(CliUsageTest, UnknownOptionIsOneLineErrorWithHint) {
  ProcessResult result = Toolvfs({"grep", "x", "--bogus"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(result.out, "");
  ExpectOneLineError(result);
  EXPECT_THAT(result.err, AllOf(StartsWith("toolvfs: grep: "), HasSubstr("--bogus"),
                                HasSubstr("(see toolvfs grep --help)")));

  ProcessResult root = Toolvfs({"--bogus"});
  EXPECT_EQ(root.exit_code, 2);
  ExpectOneLineError(root);
  EXPECT_THAT(root.err, AllOf(HasSubstr("--bogus"), HasSubstr("(see toolvfs --help)")));
}

TEST(CliUsageTest, AMistypedOptionGetsTheOptionItWasMeantToBe) {
  // Before the command it is the root's option: grep is not blamed.
  ProcessResult root = Toolvfs({"--projcet", "x", "grep", "y"});
  EXPECT_EQ(root.exit_code, 2);
  EXPECT_EQ(root.err, "toolvfs: --projcet: unknown option; did you mean --project? (see toolvfs --help)\n");
  ProcessResult alone = Toolvfs({"--projcet", "x"});
  EXPECT_EQ(alone.err, "toolvfs: --projcet: unknown option; did you mean --project? (see toolvfs --help)\n");

  ProcessResult after = Toolvfs({"grep", "y", "--ignore-cas"});
  EXPECT_EQ(after.exit_code, 2);
  ExpectOneLineError(after);
  EXPECT_THAT(after.err, AllOf(StartsWith("toolvfs: grep: "), HasSubstr("--ignore-cas"),
                               HasSubstr("; did you mean --ignore-case? (see toolvfs grep --help)")));
}

TEST(CliUsageTest, AProjectThatLooksLikeAStoreUriSuggestsIt) {
  TempDir dir;
  for (const auto& [project, meant] : std::vector<std::pair<std::string, std::string>>{
           {"memory", "memory:"}, {"null", "null:"}, {"work.db#main", "sqlite:work.db#main"}}) {
    ProcessResult result = Toolvfs({"grep", "x", "--project", project}, ProcessOptions{.cwd = dir.path()});
    EXPECT_EQ(result.exit_code, 2) << project;
    EXPECT_EQ(result.err, "toolvfs: --project: Project directory '" + project + "' does not exist; did you mean '" +
                              meant + "'?\n");
  }
  ProcessResult plain = Toolvfs({"grep", "x", "--project", "absent"}, ProcessOptions{.cwd = dir.path()});
  EXPECT_EQ(plain.err, "toolvfs: --project: Project directory 'absent' does not exist\n");
}

// libpq's message for a refused connection spans lines, the second
// indented by a tab; the error stays one line of printable text.
TEST(CliUsageTest, AnUnreachablePostgresServerIsOneLineWithoutTabs) {
  ProcessResult result = Toolvfs({"grep", "x", "--project", "postgres://nobody:secret@127.0.0.1:1/db#w"});
  EXPECT_EQ(result.exit_code, 69) << result;
  ExpectOneLineError(result);
  EXPECT_EQ(result.err.find('\t'), std::string::npos) << result.err;
  EXPECT_THAT(result.err, AllOf(StartsWith("toolvfs: --project: Cannot connect to "), Not(HasSubstr("secret"))));
}

TEST(CliUsageTest, BadOptionValuesAreUsageErrors) {
  for (std::vector<std::string> bad : std::vector<std::vector<std::string>>{
           {"grep", "x", "-C", "many"},
           {"grep", "x", "-C", "-1"},
           {"grep", "x", "--max-matches", "lots"},
           {"grep"},
           {"grep", "x", "--project"},
       }) {
    ProcessResult result = Toolvfs(bad);
    EXPECT_EQ(result.exit_code, 2) << testing::PrintToString(bad);
    ExpectOneLineError(result);
    EXPECT_THAT(result.err, HasSubstr("(see toolvfs grep --help)"));
  }
}

TEST(CliUsageTest, MissingOrUnknownCommand) {
  ProcessResult none = Toolvfs({});
  EXPECT_EQ(none.exit_code, 2);
  ExpectOneLineError(none);
  EXPECT_THAT(none.err, HasSubstr("grep"));

  ProcessResult unknown = Toolvfs({"frobnicate"});
  EXPECT_EQ(unknown.exit_code, 2);
  ExpectOneLineError(unknown);
  EXPECT_THAT(unknown.err, StartsWith("toolvfs: frobnicate: "));
}

// The command names listed under "Subcommands:" in `toolvfs --help`.
std::vector<std::string> ListedCommands(const std::string& help) {
  std::vector<std::string> names;
  bool in_section = false;
  for (const std::string& line : Lines(help)) {
    if (line.starts_with("Subcommands:")) {
      in_section = true;
      continue;
    }
    if (!in_section) continue;
    if (line.empty() || line[0] != ' ') break;
    std::istringstream words(line);
    std::string name;
    words >> name;
    names.push_back(name);
  }
  return names;
}

TEST(CliUsageTest, HelpWorksForTheRootAndEveryCommand) {
  ProcessResult root = Toolvfs({"--help"});
  EXPECT_EQ(root.exit_code, 0);
  EXPECT_EQ(root.err, "");
  EXPECT_THAT(root.out, HasSubstr("Usage: toolvfs"));
  std::vector<std::string> commands = ListedCommands(root.out);
  EXPECT_THAT(commands, ::testing::IsSupersetOf({"grep", "doctor"}));
  for (const std::string& command : commands) {
    for (const char* flag : {"--help", "-h"}) {
      ProcessResult help = Toolvfs({command, flag});
      EXPECT_EQ(help.exit_code, 0) << command;
      EXPECT_EQ(help.err, "") << command;
      EXPECT_THAT(help.out, HasSubstr("Usage: toolvfs " + command)) << command;
      // Each command lists only the common options it reads (issue 22
      // item 10); doctor reads none of them.
      if (command != "doctor") {
        EXPECT_THAT(help.out, HasSubstr("--project")) << command << " lacks the common options";
      }
      // docs/cli.md: every --help has an example and its exit codes.
      EXPECT_THAT(help.out, AllOf(HasSubstr("\nExample: toolvfs " + command), HasSubstr("\nExit codes: 0 ")))
          << command;
    }
  }
  // A store's server may be down for every command that opens a store.
  for (std::string command : {"", "run", "exec", "grep", "tools", "workspace", "mcp", "vfsd"}) {
    ProcessResult help = command.empty() ? root : Toolvfs({command, "--help"});
    EXPECT_THAT(help.out, HasSubstr(", 69 the store's server is unavailable (try again)")) << command;
  }
}

TEST(CliUsageTest, TheRootHelpNamesEveryWorkspaceSubcommand) {
  ProcessResult root = Toolvfs({"--help"});
  std::string summary;
  for (const std::string& line : Lines(root.out)) {
    if (line.starts_with("  workspace ")) summary = line;
  }
  ASSERT_FALSE(summary.empty()) << root.out;
  ProcessResult workspace = Toolvfs({"workspace", "--help"});
  std::vector<std::string> subcommands = ListedCommands(workspace.out);
  EXPECT_THAT(subcommands, ::testing::IsSupersetOf({"init", "copy", "reset", "prompt", "materialize"}));
  for (const std::string& subcommand : subcommands) {
    EXPECT_THAT(summary, MatchesRegex(".*[ ,:]" + subcommand + "(,.*|$)")) << subcommand;
  }
}

TEST(CliUsageTest, CheckWithoutAConfigSaysHowToGetOne) {
  TempDir dir;
  ProcessResult check = Toolvfs({"check"}, ProcessOptions{.cwd = dir.path()});
  EXPECT_EQ(check.exit_code, 2);
  ExpectOneLineError(check);
  EXPECT_THAT(check.err,
              AllOf(StartsWith("toolvfs: check: Cannot read config file "),
                    EndsWith(" (create it, or name a config file with --config FILE; see docs/config.md)\n")));
  // A file named with --config is the user's own: its absence needs no hint.
  ProcessResult named = Toolvfs({"check", "--config", "absent.toml"}, ProcessOptions{.cwd = dir.path()});
  EXPECT_EQ(named.exit_code, 2);
  EXPECT_THAT(named.err, Not(HasSubstr("create it")));
}

TEST(CliUsageTest, VersionPrintsTheVersion) {
  ProcessResult result = Toolvfs({"--version"});
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_EQ(result.out, "toolvfs " TOOLVFS_VERSION "\n");
}

TEST(CliDoctorTest, PrintsEveryKernelFeature) {
  ProcessResult result = Toolvfs({"doctor"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.err, "");
  for (const char* feature : {"landlock", "openat2", "seccomp", "user namespaces", "clone3"}) {
    EXPECT_THAT(result.out, HasSubstr(feature));
  }
  EXPECT_THAT(result.out, Not(HasSubstr("\x1b[")));
}

// The enforcement table's line for `mechanism`, or "" when it is missing.
std::string TableLine(const std::string& out, const std::string& mechanism) {
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("  " + mechanism + "  ")) return line;
  }
  return "";
}

TEST(CliDoctorTest, TheEnforcementTableIsReadOffRealProfiles) {
  ProcessResult all = Toolvfs({"doctor"});
  ASSERT_EQ(all.exit_code, 0) << all.err;
  EXPECT_THAT(all.out, HasSubstr("vfs tool"));
  EXPECT_THAT(all.out, HasSubstr("process.run child"));
  // A vfs tool never gets a network namespace: seccomp denies its sockets.
  EXPECT_THAT(TableLine(all.out, "network namespace"), HasSubstr("n/a: no sockets")) << all.out;

  // The test seam a run honours hides mechanisms from the table too.
  ProcessResult hidden = RunProcess({ToolvfsBinary(), "doctor"},
                                    {.set_env = {"TOOLVFS_TEST_HIDE_SANDBOX=seccomp,namespaces,cgroups"}});
  ASSERT_EQ(hidden.exit_code, 0) << hidden.err;
  std::string seccomp = TableLine(hidden.out, "seccomp filter");
  EXPECT_THAT(seccomp, MatchesRegex("  seccomp filter +no \\(no seccomp\\) +no \\(no seccomp\\) +"
                                    "no \\(no seccomp\\)"))
      << hidden.out;
  EXPECT_THAT(TableLine(hidden.out, "PID namespace"), HasSubstr("no (no user ns)")) << hidden.out;
  // Without a pids cgroup nothing holds max_processes where RLIMIT_NPROC
  // does not: without a user namespace, or for root, whom it exempts.
  EXPECT_THAT(TableLine(hidden.out, "process limit (max_processes)"),
              HasSubstr(geteuid() == 0 ? "no (root, no pids cgroup)"
                                       : "no (needs user ns)"))
      << hidden.out;
  EXPECT_THAT(TableLine(hidden.out, "Landlock filesystem"), Not(HasSubstr("no (")));
}

TEST_F(CliTest, ColourOnlyOnATerminalAndNeverWithNoColor) {
  ProcessResult piped = InProject({"grep", "TODO"});
  EXPECT_THAT(piped.out, Not(HasSubstr("\x1b[")));

  std::vector<std::string> arguments = {ToolvfsBinary(), "grep", "TODO", "--project", root_};
  ProcessResult tty = RunProcess(arguments, {.unset_env = {"NO_COLOR"}, .use_tty = true});
  EXPECT_EQ(tty.exit_code, 0) << tty.err;
  EXPECT_THAT(tty.out, HasSubstr("\x1b[1;31mTODO\x1b[0m"));  // the match highlighted

  ProcessResult no_color = RunProcess(arguments, {.set_env = {"NO_COLOR=1"}, .use_tty = true});
  EXPECT_EQ(no_color.exit_code, 0) << no_color.err;
  EXPECT_THAT(no_color.out, HasSubstr("TODO write docs"));
  EXPECT_THAT(no_color.out, Not(HasSubstr("\x1b[")));
}

// The committed example project of `make run`.
TEST(CliExampleProjectTest, GrepShowsDefinitionsAndTodosButNotIgnoredOrBinaryFiles) {
  std::string project = SourceDir() + "/examples/project";
  ASSERT_TRUE(fs::is_directory(project)) << project;
  ProcessResult result = Toolvfs({"grep", "def |TODO", "--project", project});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  std::vector<std::string> lines = Lines(result.out);
  EXPECT_GE(lines.size(), 10u);
  std::vector<std::string> paths;
  for (const std::string& line : lines) paths.push_back(line.substr(0, line.find(':')));
  EXPECT_TRUE(std::is_sorted(paths.begin(), paths.end()));
  EXPECT_THAT(result.out, HasSubstr(".py:"));
  EXPECT_THAT(result.out, HasSubstr(".c:"));
  EXPECT_THAT(result.out, Not(HasSubstr(".log:")));   // ignored by .gitignore
  EXPECT_THAT(result.out, Not(HasSubstr("build/")));  // ignored by .gitignore

  // The ignored files exist (committed with git add -f) and do match.
  ProcessResult everything = Toolvfs({"grep", "def |TODO", "--include-ignored", "--project", project});
  EXPECT_THAT(everything.out, HasSubstr(".log:"));
  // The binary favicon is never searched.
  ProcessResult binary = Toolvfs({"grep", "IHDR|IDAT", "--include-ignored", "--project", project});
  EXPECT_EQ(binary.exit_code, 1) << binary.out;
}

// `toolvfs audit` reads the log that run and exec append to; these tests
// write the log themselves, in the format of AuditRecord::ToJson.
std::string AuditLine(const std::string& time, const std::string& tool, const std::string& method,
                      const std::string& target, const std::string& decision, const std::string& rule,
                      int code = 0) {
  return "{\"ts\":\"2026-11-21T" + time + "Z\",\"tool\":\"" + tool + "\",\"call_id\":\"c-1\",\"method\":\"" +
         method + "\",\"target\":\"" + target + "\",\"decision\":\"" + decision + "\",\"rule\":\"" + rule +
         "\",\"code\":" + std::to_string(code) + ",\"bytes_in\":80,\"bytes_out\":40,\"duration_us\":12}\n";
}

class CliAuditTest : public CliTest {
 protected:
  void SetUp() override {
    CliTest::SetUp();
    Write(".toolvfs/audit.jsonl",
          AuditLine("08:30:00.125", "gen", "fs.read", "src/a.py", "allow", "default: project readable") +
              AuditLine("08:30:00.250", "gen", "fs.write", "src/gen/a.rs", "asked-allow", "user") +
              AuditLine("08:30:01.000", "fetch", "http.get", "https://example.com/", "deny",
                        "network.deny \\\"https://example.com/\\\"", -32001) +
              AuditLine("08:30:02.500", "gen", "fs.write", "toolvfs.toml", "asked-deny", "user", -32001));
  }
};

TEST_F(CliAuditTest, PrintsTheTimelineOldestFirst) {
  ProcessResult result = InProject({"audit"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.err, "");
  EXPECT_EQ(result.out,
            "2026-11-21 08:30:00.125  gen  fs.read  src/a.py  allow (default: project readable)  12 µs\n"
            "2026-11-21 08:30:00.250  gen  fs.write  src/gen/a.rs  asked-allow (user)  12 µs\n"
            "2026-11-21 08:30:01.000  fetch  http.get  https://example.com/  deny "
            "(network.deny \"https://example.com/\")  12 µs  error -32001\n"
            "2026-11-21 08:30:02.500  gen  fs.write  toolvfs.toml  asked-deny (user)  12 µs  error -32001\n");
}

TEST_F(CliAuditTest, FiltersByToolAndByDenial) {
  std::vector<std::string> gen = Lines(InProject({"audit", "--tool", "gen"}).out);
  ASSERT_EQ(gen.size(), 3u);
  for (const std::string& line : gen) EXPECT_THAT(line, HasSubstr("  gen  "));

  std::vector<std::string> denied = Lines(InProject({"audit", "--denied"}).out);
  ASSERT_EQ(denied.size(), 2u);
  EXPECT_THAT(denied[0], HasSubstr("  deny "));
  EXPECT_THAT(denied[1], HasSubstr("  asked-deny "));

  ProcessResult both = InProject({"audit", "--denied", "--tool", "gen"});
  EXPECT_EQ(both.exit_code, 0) << both.err;
  EXPECT_THAT(both.out, AllOf(HasSubstr("toolvfs.toml  asked-deny"), Not(HasSubstr("fetch"))));

  ProcessResult none = InProject({"audit", "--tool", "nobody"});
  EXPECT_EQ(none.exit_code, 0) << none.err;
  EXPECT_THAT(none.out, HasSubstr("None of the 4 records"));
}

TEST_F(CliAuditTest, JsonPrintsTheMatchingRecordsAsTheLogKeepsThem) {
  ProcessResult result = InProject({"audit", "--json", "--denied"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  std::vector<std::string> lines = Lines(result.out);
  ASSERT_EQ(lines.size(), 2u);
  for (const std::string& line : lines) {
    rapidjson::Document record;
    record.Parse(line.c_str());
    ASSERT_FALSE(record.HasParseError()) << line;
    EXPECT_EQ(record["code"].GetInt(), -32001);
  }
  EXPECT_EQ(lines[0] + "\n", AuditLine("08:30:01.000", "fetch", "http.get", "https://example.com/", "deny",
                                       "network.deny \\\"https://example.com/\\\"", -32001));
  ProcessResult none = InProject({"audit", "--json", "--tool", "nobody"});
  EXPECT_EQ(none.out, "");
}

TEST_F(CliAuditTest, MalformedLinesAreReportedWithTheirNumberAndSkipped) {
  std::string log = root_ + "/other.jsonl";
  Write("other.jsonl", AuditLine("08:30:00.125", "gen", "fs.read", "a", "allow", "r") + "not json\n\n" +
                           AuditLine("08:30:00.250", "gen", "fs.read", "b", "maybe", "r") +
                           AuditLine("08:30:00.375", "gen", "fs.read", "c", "allow", "r") +
                           "{\"ts\":\"2026-11-21T08:30:00.500Z\",\"tool\":\"gen\"");  // cut short
  ProcessResult result = Toolvfs({"audit", "--audit", log});
  EXPECT_EQ(result.exit_code, 2);
  std::vector<std::string> printed = Lines(result.out);
  ASSERT_EQ(printed.size(), 2u) << result.out;
  EXPECT_THAT(printed[0], HasSubstr("  a  allow"));
  EXPECT_THAT(printed[1], HasSubstr("  c  allow"));
  std::vector<std::string> errors = Lines(result.err);
  ASSERT_EQ(errors.size(), 3u) << result.err;
  EXPECT_THAT(errors[0], StartsWith("toolvfs: audit: " + log + ":2: Invalid audit record: not JSON"));
  EXPECT_THAT(errors[1], StartsWith("toolvfs: audit: " + log + ":4: Invalid audit record: 'decision'"));
  EXPECT_THAT(errors[2], StartsWith("toolvfs: audit: " + log + ":6: "));
  for (const std::string& error : errors) EXPECT_THAT(error, EndsWith("; line skipped"));
}

TEST_F(CliAuditTest, WhatToolsAskedForCannotDriveTheTerminal) {
  Write(".toolvfs/audit.jsonl",
        AuditLine("08:30:00.125", "gen", "fs.read", "x\\u001b[2J\\ny", "deny", "filesystem.deny \\\"x\\\""));
  ProcessResult result = InProject({"audit"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(result.out, HasSubstr("  x\\x1b[2J\\x0ay  deny"));
  EXPECT_THAT(result.out, Not(HasSubstr("\x1b")));
}

TEST_F(CliTest, AuditWithoutALogIsOneLineErrorNamingThePath) {
  ProcessResult result = InProject({"audit"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(result.out, "");
  ExpectOneLineError(result);
  EXPECT_THAT(result.err, StartsWith("toolvfs: audit: No audit log at '" + root_ + "/.toolvfs/audit.jsonl'"));
  EXPECT_THAT(result.err, HasSubstr("--audit PATH"));

  ProcessResult memory = Toolvfs({"audit", "--project", "memory:"});
  EXPECT_EQ(memory.exit_code, 2);
  ExpectOneLineError(memory);
  EXPECT_THAT(memory.err, HasSubstr("has no directory"));

  ProcessResult named = Toolvfs({"audit", "--audit", root_ + "/nope.jsonl"});
  EXPECT_EQ(named.exit_code, 2);
  ExpectOneLineError(named);
  EXPECT_THAT(named.err, HasSubstr("nope.jsonl"));
}

TEST_F(CliTest, AuditOfAnEmptyLogSaysSo) {
  Write(".toolvfs/audit.jsonl", "");
  ProcessResult result = InProject({"audit"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(result.out, HasSubstr("has no records"));
}

}  // namespace
}  // namespace toolvfs
