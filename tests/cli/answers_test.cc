// The answering chain end to end through the real toolvfs binary (SPEC.md
// §4.6, §10): a stateful vfs tool (tests/sdk/tools/stateful_survey.py, two
// questions over `state waiting` / `apply`) and a jp-style stdio tool asking
// with needs_input, answered by --answer, by questions.ID.answer in the
// config, on a real terminal, or refused under --no-interaction.
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "core/unique_fd.h"
#include "project/test_util.h"
#include "stdio_ask_tool.h"
#include "subprocess.h"
#include "terminal_process.h"

namespace toolvfs {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using Clock = std::chrono::steady_clock;


// Every process whose command line contains `marker`.
std::vector<std::string> ProcessesWith(const std::string& marker) {
  std::vector<std::string> found;
  for (const fs::directory_entry& entry : fs::directory_iterator("/proc")) {
    std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream file(entry.path() / "cmdline", std::ios::binary);
    std::stringstream read;
    read << file.rdbuf();
    std::string cmdline = read.str();
    if (cmdline.find(marker) != std::string::npos) found.push_back(name);
  }
  return found;
}

// Waits up to 2 s (SIGKILL is asynchronous) for no process to carry `marker`.
bool NoProcessWith(const std::string& marker) {
  for (int i = 0; i < 200; ++i) {
    if (ProcessesWith(marker).empty()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

rapidjson::Document ParseJson(const std::string& text) {
  rapidjson::Document document;
  document.Parse(text.c_str(), text.size());
  EXPECT_FALSE(document.HasParseError()) << text;
  return document;
}

class AnswersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(ToolvfsBinary().empty()) << "TOOLVFS_BINARY is not set";
    marker_ = "survey-marker-" + fs::path(root_).filename().string();
    std::string survey = "python3 " + SourceDir() + "/tests/sdk/tools/stateful_survey.py " + marker_;
    std::string sandbox = R"(
filesystem.allow = ["."]
filesystem.writable = ["survey"]
limits = { cancel_grace_s = 1 }
)";
    Write("toolvfs.toml", "[tools.survey]\ncommand = \"" + survey + "\"\nruntime = \"vfs\"\nstateful = true\n" +
                              "[tools.survey.sandbox]" + sandbox +
                              "\n[tools.configured]\ncommand = \"" + survey + "\"\nruntime = \"vfs\"\nstateful = true\n" +
                              "[tools.configured.sandbox]" + sandbox + R"(
[tools.configured.questions.proceed]
answer = true
[tools.configured.questions.color]
answer = "blue"

[tools.misconfigured]
command = ")" + survey + R"("
runtime = "vfs"
stateful = true
questions = { proceed = { answer = "yes" }, color = { answer = true } }
[tools.misconfigured.sandbox])" + sandbox + R"(
[tools.ask]
command = "python3 stdio_ask.py '{{ tool.answers | tojson }}'"

[tools.nag]
command = "python3 nag.py"

[tools.ask_configured]
command = "python3 stdio_ask.py '{{ tool.answers | tojson }}'"
questions.go.answer = "no"
)");
    Write("stdio_ask.py", kStdioAsk);
    // Asks the same question whatever the answers: never satisfied.
    Write("nag.py", "import json\nprint(json.dumps({'type': 'needs_input', 'question': "
                    "{'id': 'go', 'text': 'Sure?', 'answer_type': 'Boolean'}}))\n");
  }

  void Write(const std::string& path, const std::string& content) { WriteRealFile(dir_.Join(path), content); }

  ProcessResult Toolvfs(std::vector<std::string> arguments) {
    arguments.insert(arguments.begin(), ToolvfsBinary());
    ProcessOptions options;
    options.cwd = root_;
    options.deadline = std::chrono::seconds(60);
    return RunProcess(arguments, options);
  }

  TempDir dir_;
  const std::string root_ = dir_.path();
  std::string marker_;
};

// --- The stateful survey ---------------------------------------------------------

TEST_F(AnswersTest, StatefulToolAnsweredByFlags) {
  ProcessResult result = Toolvfs({"run", "survey", "--answer", "proceed=yes", "--answer", "color=green"});
  EXPECT_EQ(result.exit_code, 0) << result;
  EXPECT_EQ(result.out, "proceed=true color=green\n");
  EXPECT_EQ(result.err, "");
  // Between the questions the tool wrote through the host: one live run.
  EXPECT_EQ(ReadRealFile(dir_.Join("survey/progress.txt")), "proceed=true\n");
  EXPECT_TRUE(NoProcessWith(marker_));
}

TEST_F(AnswersTest, StatefulToolAnsweredByConfigAndFlagsWin) {
  ProcessResult configured = Toolvfs({"run", "configured", "--no-interaction"});
  EXPECT_EQ(configured.exit_code, 0) << configured;
  EXPECT_EQ(configured.out, "proceed=true color=blue\n");

  ProcessResult overridden = Toolvfs({"run", "configured", "--answer", "color=red", "--json"});
  EXPECT_EQ(overridden.exit_code, 0) << overridden;
  rapidjson::Document document = ParseJson(overridden.out);
  ASSERT_TRUE(document.IsObject());
  EXPECT_STREQ(document["status"].GetString(), "completed");
  EXPECT_STREQ(document["content"][0]["text"].GetString(), "proceed=true color=red");
}

TEST_F(AnswersTest, NoInteractionEndsWithExit3AndTheQuestionAndAbortsTheTool) {
  ProcessResult first = Toolvfs({"run", "survey", "--no-interaction"});
  EXPECT_EQ(first.exit_code, 3) << first;
  EXPECT_EQ(first.out, "");
  EXPECT_THAT(first.err, StartsWith("toolvfs: tool 'survey' needs input: 1 question has no answer (give it with "
                                    "--answer ID=VALUE"));
  EXPECT_THAT(first.err, HasSubstr("\n  proceed (Boolean: true/false): Proceed with the survey?\n"));
  EXPECT_TRUE(NoProcessWith(marker_)) << "the waiting tool was not aborted";

  ProcessResult second = Toolvfs({"run", "survey", "--no-interaction", "--answer", "proceed=no", "--json"});
  EXPECT_EQ(second.exit_code, 3) << second;
  EXPECT_THAT(second.err, HasSubstr("\n  color (Select: red | green | blue): Which color?\n"));
  rapidjson::Document document = ParseJson(second.out);
  ASSERT_TRUE(document.IsObject());
  EXPECT_STREQ(document["status"].GetString(), "needs_input");
  EXPECT_STREQ(document["question"]["id"].GetString(), "color");
  EXPECT_STREQ(document["question"]["text"].GetString(), "Which color?");
  EXPECT_EQ(document["question"]["answer_type"]["Select"]["options"].Size(), 3u);
  EXPECT_EQ(ReadRealFile(dir_.Join("survey/progress.txt")), "proceed=false\n");
  EXPECT_TRUE(NoProcessWith(marker_));
}

TEST_F(AnswersTest, BadAnswersAreOneLineUsageErrors) {
  ProcessResult maybe = Toolvfs({"run", "survey", "--answer", "proceed=maybe"});
  EXPECT_EQ(maybe.exit_code, 2) << maybe;
  ExpectOneLineError(maybe);
  EXPECT_EQ(maybe.err,
            "toolvfs: tool 'survey' got a bad answer: the answer 'maybe' to question 'proceed' (--answer) is not a "
            "Boolean: use true, false, yes or no\n");

  ProcessResult purple = Toolvfs({"run", "survey", "--answer", "proceed=yes", "--answer", "color=purple"});
  EXPECT_EQ(purple.exit_code, 2) << purple;
  ExpectOneLineError(purple);
  EXPECT_THAT(purple.err, HasSubstr("the answer 'purple' to question 'color' (--answer) is not one of its options: "
                                    "'red', 'green', 'blue'"));

  ProcessResult configured = Toolvfs({"run", "misconfigured"});
  EXPECT_EQ(configured.exit_code, 2) << configured;
  ExpectOneLineError(configured);
  EXPECT_THAT(configured.err, HasSubstr("the answer true to question 'color' (questions.color.answer of tool "
                                        "'misconfigured') is a boolean, but the question is Select"));
  EXPECT_TRUE(NoProcessWith(marker_));
}

// --- A stdio tool's needs_input ----------------------------------------------------

TEST_F(AnswersTest, StdioNeedsInputRerunsWithTheTypedAnswer) {
  ProcessResult flag = Toolvfs({"run", "ask", "--answer", "go=YES"});
  EXPECT_EQ(flag.exit_code, 0) << flag;
  EXPECT_EQ(flag.out, "went: true\n");  // a JSON boolean in tool.answers

  ProcessResult configured = Toolvfs({"run", "ask_configured"});
  EXPECT_EQ(configured.exit_code, 0) << configured;
  EXPECT_EQ(configured.out, "went: false\n");

  ProcessResult refused = Toolvfs({"run", "ask", "--no-interaction"});
  EXPECT_EQ(refused.exit_code, 3) << refused;
  EXPECT_THAT(refused.err, AllOf(StartsWith("toolvfs: tool 'ask' needs input: "),
                                 HasSubstr("\n  go (Boolean: true/false): Go on?\n")));

  ProcessResult bad = Toolvfs({"run", "ask", "--answer", "go=maybe"});
  EXPECT_EQ(bad.exit_code, 2) << bad;
  ExpectOneLineError(bad);
  EXPECT_THAT(bad.err, HasSubstr("'maybe'"));
}

TEST_F(AnswersTest, AToolThatKeepsAskingIsStoppedAfterTheRoundLimit) {
  ProcessResult result = Toolvfs({"run", "nag", "--answer", "go=yes"});
  EXPECT_EQ(result.exit_code, 1) << result;
  ExpectOneLineError(result);
  EXPECT_THAT(result.err, HasSubstr("Tool 'nag' asked 17 questions without finishing (the last: 'go')"));
}

// --- On a terminal --------------------------------------------------------------------

TEST_F(AnswersTest, StatefulToolAnsweredOnTheTerminal) {
  TerminalProcess process({ToolvfsBinary(), "run", "survey"}, root_);
  std::string first = process.ReadUntil("[y/n] ");
  EXPECT_THAT(first, HasSubstr("tool 'survey' asks (proceed): Proceed with the survey?"));
  process.Type("maybe\r");
  process.ReadUntil("Please answer y or n. [y/n] ");
  process.Type("y\r");
  std::string second = process.ReadUntil("choose 1-3: ");
  EXPECT_THAT(second, AllOf(HasSubstr("asks (color): Which color?"), HasSubstr("1) red"), HasSubstr("3) blue")));
  process.Type("3\r");
  std::string rest;
  EXPECT_EQ(process.Wait(rest), 0) << rest;
  EXPECT_THAT(rest, HasSubstr("proceed=true color=blue"));
  EXPECT_TRUE(NoProcessWith(marker_));
}

TEST_F(AnswersTest, StdioToolAnsweredOnTheTerminal) {
  TerminalProcess process({ToolvfsBinary(), "run", "ask"}, root_);
  EXPECT_THAT(process.ReadUntil("[y/n] "), HasSubstr("tool 'ask' asks (go): Go on?"));
  process.Type("n\r");
  std::string rest;
  EXPECT_EQ(process.Wait(rest), 0) << rest;
  EXPECT_THAT(rest, HasSubstr("went: false"));
}

TEST_F(AnswersTest, NoInteractionNeverTouchesTheTerminal) {
  TerminalProcess process({ToolvfsBinary(), "run", "survey", "--no-interaction"}, root_);
  std::string rest;
  EXPECT_EQ(process.Wait(rest), 3) << rest;
  EXPECT_THAT(rest, HasSubstr("proceed (Boolean: true/false)"));
  EXPECT_THAT(rest, ::testing::Not(HasSubstr("[y/n]")));
}

}  // namespace
}  // namespace toolvfs
