// The wider answers to a policy question, through the real binary on a
// pseudo-terminal (issue 22 item 7): a directory or a pattern for the rest
// of the run, a rule saved in toolvfs.toml (shown as a diff, the file's
// formatting kept) that a later run uses, one key press per answer, and the
// terminal's settings back after every way out.
#include <termios.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "project/test_util.h"
#include "subprocess.h"
#include "terminal_process.h"

namespace toolvfs {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Writes each path of its `writes` argument through the protocol and
// reports the error code of each (0 for written).
constexpr const char* kWriter = R"(import json, sys
init = json.loads(sys.stdin.readline())
codes = []
for index, path in enumerate(init["params"]["tool"]["arguments"]["writes"]):
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": index + 1, "method": "fs.write",
                                 "params": {"path": path, "content": "x"}}) + "\n")
    sys.stdout.flush()
    answer = json.loads(sys.stdin.readline())
    while "id" not in answer:  # `pending` before a question
        answer = json.loads(sys.stdin.readline())
    codes.append(answer.get("error", {}).get("code", 0))
sys.stdout.write(json.dumps({"jsonrpc": "2.0", "method": "result", "params": {"content": json.dumps(codes)}}) + "\n")
)";

constexpr const char* kConfig = R"(# The generator writes where it is told.
[tools.gen]
command = "python3 gen.py"   # raw protocol, no SDK
runtime = "vfs"

[tools.gen.sandbox]
filesystem.allow = ["."]     # reads anywhere

[tools.gen.sandbox.limits]
timeout_s = 60
)";

class InquiryScopeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(ToolvfsBinary().empty()) << "TOOLVFS_BINARY is not set";
    WriteRealFile(dir_.Join("gen.py"), kWriter);
    WriteRealFile(dir_.Join("toolvfs.toml"), kConfig);
  }

  std::vector<std::string> Run(const std::vector<std::string>& writes, std::vector<std::string> extra = {}) {
    std::string arguments = "{\"writes\": [";
    for (size_t index = 0; index < writes.size(); ++index) {
      arguments += (index > 0 ? ", \"" : "\"") + writes[index] + "\"";
    }
    arguments += "]}";
    std::vector<std::string> argv = {ToolvfsBinary(), "run", "gen", "--no-audit", "--args", arguments};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return argv;
  }

  std::string ConfigText() {
    std::ifstream file(dir_.Join("toolvfs.toml"));
    std::stringstream text;
    text << file.rdbuf();
    return text.str();
  }

  // The terminal's settings as the program left them.
  static tcflag_t LocalModes(const TerminalProcess& process) {
    struct termios settings {};
    EXPECT_EQ(::tcgetattr(process.master(), &settings), 0);
    return settings.c_lflag;
  }

  TempDir dir_;
  const std::string root_ = dir_.path();
};

TEST_F(InquiryScopeTest, ADirectoryIsAllowedForTheRestOfTheRunWithOneKey) {
  TerminalProcess process(Run({"out/a.txt", "out/deep/b.txt", "other/c.txt"}), root_);
  std::string first = process.ReadUntil("Allow? [y/a/n/d/t/x/p/s] ");
  EXPECT_THAT(first, HasSubstr("tool 'gen' asks to write 'out/a.txt'"));
  EXPECT_THAT(first, HasSubstr("t: allow all of 'out/' for this run   x: deny it for this run"));
  // One key, no Enter: the terminal is in key-press mode while it asks.
  EXPECT_EQ(LocalModes(process) & (ICANON | ECHO), 0u);
  // An arrow key (ESC [ A) answers nothing, though its last byte is a letter.
  process.Type("\x1b[A");
  process.Type("t");
  std::string second = process.ReadUntil("Allow? [");
  EXPECT_THAT(second, HasSubstr("asks to write 'other/c.txt'"));  // out/deep/b.txt was not asked
  process.Type("n");
  std::string rest;
  EXPECT_EQ(process.Wait(rest), 0);
  EXPECT_THAT(rest, HasSubstr("[0, 0, -32001]"));
  EXPECT_TRUE(std::filesystem::exists(root_ + "/out/deep/b.txt"));
  EXPECT_EQ(LocalModes(process) & ICANON, static_cast<tcflag_t>(ICANON));
}

TEST_F(InquiryScopeTest, ADirectoryIsDeniedForTheRestOfTheRun) {
  TerminalProcess process(Run({"out/a.txt", "out/b.txt", "top.txt"}), root_);
  process.ReadUntil("Allow? [");
  process.Type("x");
  std::string second = process.ReadUntil("Allow? [");
  EXPECT_THAT(second, HasSubstr("asks to write 'top.txt'"));
  // At the root, the directory is the whole project.
  EXPECT_THAT(second, HasSubstr("t: allow the whole project for this run"));
  process.Type("y");
  std::string rest;
  EXPECT_EQ(process.Wait(rest), 0);
  EXPECT_THAT(rest, HasSubstr("[-32001, -32001, 0]"));
  EXPECT_FALSE(std::filesystem::exists(root_ + "/out"));
}

TEST_F(InquiryScopeTest, APatternIsAllowedOrDeniedForTheRestOfTheRun) {
  TerminalProcess process(Run({"out/a.txt", "out/b.md", "out/c.txt"}), root_);
  process.ReadUntil("Allow? [");
  process.Type("p");
  EXPECT_THAT(process.ReadUntil("empty to go back): "), HasSubstr("Pattern (gitignore style, e.g. out/**"));
  // A pattern that misses the target decides nothing: asked again.
  process.Type("docs/**\n");
  EXPECT_THAT(process.ReadUntil("Allow? ["), HasSubstr("'docs/**' does not match 'out/a.txt'; nothing was decided."));
  process.Type("p");
  process.ReadUntil("empty to go back): ");
  process.Type("out/*.txt\n");
  EXPECT_THAT(process.ReadUntil("Allow or deny? [a/d] "), HasSubstr("a: allow 'out/*.txt' for this run"));
  process.Type("a");
  EXPECT_THAT(process.ReadUntil("Allow? ["), HasSubstr("asks to write 'out/b.md'"));
  process.Type("n");
  std::string rest;
  EXPECT_EQ(process.Wait(rest), 0);
  EXPECT_THAT(rest, HasSubstr("[0, -32001, 0]"));
}

TEST_F(InquiryScopeTest, ASavedRuleKeepsTheFilesFormattingAndALaterRunUsesIt) {
  const std::string before = ConfigText();
  TerminalProcess process(Run({"out/a.txt", "out/a.txt"}), root_);
  process.ReadUntil("Allow? [");
  process.Type("s");
  std::string diff = process.ReadUntil("Write this change? [y/n] ");
  // The terminal shows "\n" as "\r\n".
  EXPECT_THAT(diff, HasSubstr("  --- toolvfs.toml\r\n  +++ toolvfs.toml\r\n  @@ -5,6 +5,7 @@\r\n"));
  EXPECT_THAT(diff, HasSubstr("   filesystem.allow = [\".\"]     # reads anywhere\r\n"
                              "  +filesystem.writable = [\"out/a.txt\"]\r\n"));
  EXPECT_EQ(ConfigText(), before);  // nothing written before the yes
  process.Type("y");
  EXPECT_THAT(process.ReadUntil("Saved."), Not(HasSubstr("Allow?")));
  std::string rest;
  EXPECT_EQ(process.Wait(rest), 0);
  EXPECT_THAT(rest, Not(HasSubstr("Allow?")));  // the second write was not asked about
  EXPECT_THAT(rest, HasSubstr("[0, 0]"));
  const std::string expected = R"(# The generator writes where it is told.
[tools.gen]
command = "python3 gen.py"   # raw protocol, no SDK
runtime = "vfs"

[tools.gen.sandbox]
filesystem.allow = ["."]     # reads anywhere
filesystem.writable = ["out/a.txt"]

[tools.gen.sandbox.limits]
timeout_s = 60
)";
  EXPECT_EQ(ConfigText(), expected);

  // A later run, asking nobody, is allowed by the saved rule.
  ProcessResult later = RunProcess(Run({"out/a.txt"}, {"--no-interaction"}), ProcessOptions{.cwd = root_});
  EXPECT_EQ(later.exit_code, 0) << later.err;
  EXPECT_EQ(later.out, "[0]\n");
}

TEST_F(InquiryScopeTest, DecliningTheSaveAsksAgainAndWritesNothing) {
  const std::string before = ConfigText();
  TerminalProcess process(Run({"out/a.txt"}), root_);
  process.ReadUntil("Allow? [");
  process.Type("s");
  process.ReadUntil("Write this change? [y/n] ");
  process.Type("n");
  process.ReadUntil("Allow? [");
  process.Type("n");
  std::string rest;
  EXPECT_EQ(process.Wait(rest), 0);
  EXPECT_THAT(rest, HasSubstr("[-32001]"));
  EXPECT_EQ(ConfigText(), before);
}

TEST_F(InquiryScopeTest, TheTerminalIsRestoredWhenCtrlBackslashEndsToolvfs) {
  TerminalProcess process(Run({"out/a.txt"}), root_);
  process.ReadUntil("Allow? [");
  EXPECT_EQ(LocalModes(process) & ICANON, 0u);
  process.Type("\x1c");  // Ctrl+\: SIGQUIT from the terminal
  std::string rest;
  EXPECT_EQ(process.Wait(rest), 128 + SIGQUIT);
  EXPECT_EQ(LocalModes(process) & (ICANON | ECHO), static_cast<tcflag_t>(ICANON | ECHO));
}

// Ctrl+C while a tool takes its grace period: said at once, on a fresh line
// (issue 22 item 6).
TEST_F(InquiryScopeTest, CtrlCSaysHowLongItWaitsForTheTool) {
  WriteRealFile(dir_.Join("stubborn.py"), R"(import sys, time
sys.stdin.readline()
sys.stderr.write("ready\n")
sys.stderr.flush()
time.sleep(60)
)");
  WriteRealFile(dir_.Join("toolvfs.toml"), std::string(kConfig) + R"(
[tools.stubborn]
command = "python3 stubborn.py"
runtime = "vfs"
[tools.stubborn.sandbox.limits]
cancel_grace_s = 1
)");
  TerminalProcess process({ToolvfsBinary(), "run", "stubborn", "--no-audit"}, root_);
  // The tool's stderr is collected, not shown: wait until it runs.
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  process.Type("\x03");  // Ctrl+C
  std::string rest;
  EXPECT_EQ(process.Wait(rest), 130);
  EXPECT_THAT(rest, HasSubstr("\r\ntoolvfs: cancelling tool 'stubborn': waiting up to 1 s for it to stop, then it is "
                              "terminated (SIGTERM, then SIGKILL); press Ctrl+C again to stop it at once\r\n"));
  EXPECT_THAT(rest, HasSubstr("toolvfs: tool 'stubborn' cancelled: interrupted by SIGINT"));
}

}  // namespace
}  // namespace toolvfs
