// The SDKs against the real host: C++ and Python tools run under
// `toolvfs exec --json` on a temp project, plus the two example tools on a
// copy of examples/project. The tools check the host's answers themselves
// (tests/sdk/tools/) and end with "ok SCENARIO"; these tests check the
// outcome and the files left behind.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "subprocess.h"
#include "toolvfs/tool.h"

namespace toolvfs {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream content;
  content << in.rdbuf();
  return content.str();
}

void WriteFile(const fs::path& path, std::string_view content) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << content;
}

std::string SdkTestToolPy() { return SourceDir() + "/tests/sdk/tools/sdk_test_tool.py"; }

// What `toolvfs exec --json` printed, parsed.
struct Outcome {
  int exit_code = -1;
  Json json;
  std::string out;
  std::string err;

  std::string status() const { return json["status"].as_string(); }
  // The text of the first content block.
  std::string text() const { return json["content"][0]["text"].as_string(); }
  std::string Describe() const { return "exit " + std::to_string(exit_code) + "\nstdout: " + out + "\nstderr: " + err; }
};

Outcome Exec(const std::string& project, const std::vector<std::string>& program,
             const std::vector<std::string>& options = {}) {
  // The test tools write: the whole project is theirs.
  std::vector<std::string> argv = {ToolvfsBinary(), "exec", "--project", project, "--json",
                                   "--allow-write", "."};
  argv.insert(argv.end(), options.begin(), options.end());
  argv.push_back("--");
  argv.insert(argv.end(), program.begin(), program.end());
  ProcessResult result = RunProcess(argv);
  Outcome outcome{result.exit_code, Json(), result.out, result.err};
  Result<Json> parsed = Json::parse(result.out);
  if (parsed.ok()) outcome.json = std::move(parsed).value();
  return outcome;
}

// The project every scenario starts from (see the tools' checks).
class SdkE2eTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    ASSERT_FALSE(ToolvfsBinary().empty()) << "TOOLVFS_BINARY is not set";
    char pattern[] = "/tmp/toolvfs-sdk-test-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    root_ = pattern;
    WriteFile(root_ / "hello.txt", "hello world\n");
    WriteFile(root_ / "unicode.txt", "héllo wörld — 日本語 😀\n");
    std::string bytes;
    for (int i = 0; i < 256; ++i) bytes += static_cast<char>(i);
    WriteFile(root_ / "bin/blob.bin", bytes);
    WriteFile(root_ / "src/a.py", "def foo():\n    return 1  # TODO\nx = 2\ny = 3\n");
    WriteFile(root_ / "src/b.py", "def bar():\n    return 2\n");
    for (int i = 0; i < 50; ++i) WriteFile(root_ / "many" / ("f" + std::to_string(i) + ".txt"), "line " + std::to_string(i) + "\n");
    std::string big;
    for (int i = 0; big.size() < (4u << 20); ++i) big += "line " + std::to_string(i) + " of big.txt: \"quoted\"\tand é\n";
    WriteFile(root_ / "big.txt", big);
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(root_, ignored);
  }

  // The scenario's tool in the language of the test parameter.
  std::vector<std::string> Tool(const std::string& scenario) const {
    if (GetParam() == "python") return {SDK_PYTHON3, SdkTestToolPy(), scenario};
    return {SDK_TEST_TOOL, scenario};
  }

  Outcome Run(const std::string& scenario, const std::vector<std::string>& options = {}) const {
    return Exec(root_.string(), Tool(scenario), options);
  }

  void ExpectOk(const std::string& scenario) const {
    Outcome outcome = Run(scenario);
    EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
    EXPECT_EQ(outcome.status(), "completed") << outcome.Describe();
    EXPECT_EQ(outcome.text(), "ok " + scenario) << outcome.Describe();
  }

  fs::path root_;
};

INSTANTIATE_TEST_SUITE_P(Languages, SdkE2eTest, ::testing::Values("cpp", "python"),
                         [](const ::testing::TestParamInfo<std::string>& language) { return language.param; });

TEST_P(SdkE2eTest, EveryFsCall) {
  ExpectOk("fs");
  EXPECT_TRUE(fs::is_directory(root_ / "out/deep"));
  EXPECT_FALSE(fs::exists(root_ / "out/moved.txt"));
  EXPECT_FALSE(fs::exists(root_ / "out/trash"));
  EXPECT_EQ(ReadFile(root_ / "hello.txt"), "hello world\n");
}

TEST_P(SdkE2eTest, BinaryRoundTrip) {
  ExpectOk("binary");
  std::string bytes;
  for (int i = 0; i < 256; ++i) bytes += static_cast<char>(i);
  EXPECT_EQ(ReadFile(root_ / "out/copy.bin"), bytes);
  EXPECT_EQ(fs::file_size(root_ / "out/big.bin"), 1u << 20);
}

TEST_P(SdkE2eTest, Unicode) {
  ExpectOk("unicode");
  EXPECT_THAT(ReadFile(root_ / "out/ü/ñame 😀.txt"), HasSubstr("日本語 😀"));
}

TEST_P(SdkE2eTest, ErrorsSurfaceWithTheirCodes) { ExpectOk("errors"); }

TEST_P(SdkE2eTest, ManyRequestsInFlightWaitedForInReverse) {
  ExpectOk("inflight");
  for (int i = 0; i < 50; ++i) EXPECT_EQ(ReadFile(root_ / "out" / ("w" + std::to_string(i) + ".txt")), std::to_string(i));
}

TEST_P(SdkE2eTest, FourMebibytesBothWays) {
  ExpectOk("big");
  EXPECT_EQ(ReadFile(root_ / "out/big-copy.txt"), ReadFile(root_ / "big.txt"));
}

TEST_P(SdkE2eTest, ResultWithContentBlocks) {
  Outcome outcome = Run("blocks");
  EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_EQ(outcome.status(), "completed") << outcome.Describe();
  const Json& content = outcome.json["content"];
  ASSERT_EQ(content.size(), 3u) << outcome.Describe();
  EXPECT_EQ(content[0]["text"].as_string(), "first block");
  EXPECT_EQ(content[1]["text"].as_string(), "second — ü");
  EXPECT_EQ(content[2]["type"].as_string(), "resource");
  EXPECT_EQ(content[2]["resource"]["uri"].as_string(), "file:///hello.txt");
}

TEST_P(SdkE2eTest, ErrorNotification) {
  Outcome outcome = Run("error");
  EXPECT_EQ(outcome.exit_code, 1) << outcome.Describe();
  EXPECT_EQ(outcome.status(), "error") << outcome.Describe();
  const Json& error = outcome.json["error"];
  EXPECT_EQ(error["message"].as_string(), "could not frobnicate: the widget is missing") << outcome.Describe();
  EXPECT_EQ(error["trace"][1].as_string(), "frame 2") << outcome.Describe();
  EXPECT_TRUE(error["transient"].as_bool()) << outcome.Describe();
}

TEST_P(SdkE2eTest, EscapingErrorBecomesTheToolsError) {
  Outcome outcome = Run("throw");
  EXPECT_EQ(outcome.exit_code, 1) << outcome.Describe();
  EXPECT_EQ(outcome.status(), "error") << outcome.Describe();
  EXPECT_THAT(outcome.json["error"]["message"].as_string(), HasSubstr("missing.txt")) << outcome.Describe();
}

TEST_P(SdkE2eTest, InitCarriesNameArgumentsAndRoot) {
  Outcome outcome = Run("arguments", {"--args", R"({"x":[1,"ü"],"flag":true})"});
  ASSERT_EQ(outcome.status(), "completed") << outcome.Describe();
  Result<Json> report = Json::parse(outcome.text());
  ASSERT_TRUE(report.ok()) << outcome.text();
  EXPECT_EQ(report.value()["name"].as_string(), GetParam() == "python" ? "sdk_test_tool.py" : "sdk_test_tool")
      << "an ad-hoc tool is named after its script, not its interpreter";
  EXPECT_EQ(report.value()["arguments"], Json::parse(R"({"x":[1,"ü"],"flag":true})").value()) << outcome.text();
  EXPECT_EQ(report.value()["protocol_version"].as_string(), "0.1.0");
  EXPECT_THAT(report.value()["root"].as_string(), HasSubstr(root_.filename().string()));
  EXPECT_TRUE(report.value()["has_fs_read"].as_bool());
}

TEST_P(SdkE2eTest, PrintsAfterConnectGoToStderr) {
  Outcome outcome = Run("prints");
  EXPECT_EQ(outcome.status(), "completed") << outcome.Describe();
  EXPECT_EQ(outcome.text(), "ok prints 12") << outcome.Describe();
  EXPECT_THAT(outcome.out, Not(HasSubstr("after connect")));
}

// --- The example tools (examples/tools/todo_report, examples/project/agent_tools/)
// on a copy of examples/project.

class SdkExampleToolsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/toolvfs-sdk-example-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    root_ = pattern;
    fs::copy(SourceDir() + "/examples/project", root_, fs::copy_options::recursive);
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(root_, ignored);
  }
  fs::path root_;
};

TEST_F(SdkExampleToolsTest, TodoReportGroupsMarkersByFile) {
  Outcome outcome = Exec(root_.string(), {SDK_TODO_REPORT});
  ASSERT_EQ(outcome.status(), "completed") << outcome.Describe();
  std::string report = outcome.text();
  EXPECT_THAT(report, StartsWith("Found ")) << report;
  EXPECT_THAT(report, HasSubstr("shortlink/store.py — 1 line ("));
  EXPECT_THAT(report, HasSubstr("72: # TODO: VACUUM after large deletions"));
  EXPECT_THAT(report, HasSubstr("tools/logstat/parse.c"));
  EXPECT_THAT(report, HasSubstr("modified 20"));
  EXPECT_THAT(report, Not(HasSubstr("access.log")));  // ignored by .gitignore
  EXPECT_THAT(report, Not(HasSubstr("favicon")));

  Outcome custom = Exec(root_.string(), {SDK_TODO_REPORT}, {"--args", R"({"pattern":"def \\w+","paths":["tests"]})"});
  ASSERT_EQ(custom.status(), "completed") << custom.Describe();
  EXPECT_THAT(custom.text(), HasSubstr("matching def \\w+"));
  EXPECT_THAT(custom.text(), HasSubstr("tests/test_store.py"));
  EXPECT_THAT(custom.text(), Not(HasSubstr("shortlink/")));
}

TEST_F(SdkExampleToolsTest, RenameSymbolRewritesWholeWordsOnly) {
  std::string tool = SourceDir() + "/examples/project/agent_tools/rename_symbol.py";
  std::string before = ReadFile(root_ / "shortlink/store.py");

  Outcome dry = Exec(root_.string(), {SDK_PYTHON3, tool}, {"--args", R"({"from":"LinkStore","to":"LinkRepository","dry_run":true})"});
  ASSERT_EQ(dry.status(), "completed") << dry.Describe();
  EXPECT_THAT(dry.text(), HasSubstr("Would rename"));
  EXPECT_THAT(dry.text(), HasSubstr("shortlink/app.py: 2"));
  EXPECT_EQ(ReadFile(root_ / "shortlink/store.py"), before);

  Outcome done = Exec(root_.string(), {SDK_PYTHON3, tool}, {"--args", R"({"from":"LinkStore","to":"LinkRepository"})"});
  ASSERT_EQ(done.status(), "completed") << done.Describe();
  EXPECT_THAT(done.text(), HasSubstr("Renamed LinkStore to LinkRepository: 6 occurrences in 4 files"));
  EXPECT_THAT(ReadFile(root_ / "shortlink/store.py"), HasSubstr("class LinkRepository:"));
  EXPECT_THAT(ReadFile(root_ / "tests/conftest.py"), Not(HasSubstr("LinkStore")));
  EXPECT_THAT(ReadFile(root_ / "docs/architecture.md"), HasSubstr("`LinkRepository.compact()`"));

  Outcome none = Exec(root_.string(), {SDK_PYTHON3, tool}, {"--args", R"({"from":"LinkStore","to":"X"})"});
  EXPECT_EQ(none.status(), "completed") << none.Describe();
  EXPECT_THAT(none.text(), HasSubstr("No whole-word occurrence of LinkStore"));

  Outcome bad = Exec(root_.string(), {SDK_PYTHON3, tool}, {"--args", R"({"from":"a b","to":"c"})"});
  EXPECT_EQ(bad.status(), "error") << bad.Describe();
}

}  // namespace
}  // namespace toolvfs
