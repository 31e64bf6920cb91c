// Feedback on long work through the real binary (issue 22 item 6): the
// progress line of grep and workspace import/export on a pseudo-terminal,
// erased before the results and the final message; nothing of it when
// stderr is not a terminal or with --json; and a second Ctrl+C that stops a
// tool at once instead of after its grace period.
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
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

constexpr std::string_view kErase = "\r\x1b[K";

// The lines the terminal shows in the end: what is left of each line after
// the last carriage return (a progress draw or erase), without the erase
// sequence. A progress line that was not erased shows up here.
std::vector<std::string> ShownLines(const std::string& terminal) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < terminal.size()) {
    size_t end = terminal.find('\n', start);
    std::string line = terminal.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (!line.empty() && line.back() == '\r') line.pop_back();  // the terminal's \r\n
    size_t last_return = line.rfind('\r');
    if (last_return != std::string::npos) line.erase(0, last_return + 1);
    if (line.starts_with("\x1b[K")) line.erase(0, 3);
    lines.push_back(line);
    if (end == std::string::npos) break;
    start = end + 1;
  }
  while (!lines.empty() && lines.back().empty()) lines.pop_back();
  return lines;
}

class ProgressTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(ToolvfsBinary().empty()) << "TOOLVFS_BINARY is not set";
    // 400 files in 20 directories; every tenth has the word the test looks for.
    for (int directory = 0; directory < 20; ++directory) {
      for (int file = 0; file < 20; ++file) {
        const int number = directory * 20 + file;
        WriteRealFile(dir_.Join("tree/d" + std::to_string(directory) + "/f" + std::to_string(file) + ".txt"),
                      "line one\n" + std::string(number % 10 == 0 ? "a needle here\n" : "nothing\n"));
      }
    }
  }

  // toolvfs ARGS on a pseudo-terminal (stdout and stderr both), with the
  // progress line allowed at once: the work here is quick.
  int OnTerminal(const std::vector<std::string>& arguments, std::string& shown) {
    // NO_COLOR: the lines are compared as text.
    std::vector<std::string> argv = {"/usr/bin/env", "TOOLVFS_PROGRESS_AFTER_MS=0", "NO_COLOR=1", ToolvfsBinary()};
    argv.insert(argv.end(), arguments.begin(), arguments.end());
    TerminalProcess process(argv, dir_.path());
    return process.Wait(shown);
  }

  TempDir dir_;
};

TEST_F(ProgressTest, GrepOnATerminalShowsProgressThenCleanResults) {
  std::string shown;
  int exit_code = OnTerminal({"grep", "needle", "--project", dir_.Join("tree")}, shown);
  EXPECT_EQ(exit_code, 0) << shown;
  EXPECT_THAT(shown, HasSubstr("searching: ")) << "no progress line";
  EXPECT_THAT(shown, HasSubstr(" files, ")) << shown;
  EXPECT_THAT(shown, HasSubstr(std::string(kErase))) << "the progress line is never erased";
  std::vector<std::string> lines = ShownLines(shown);
  ASSERT_EQ(lines.size(), 40u) << shown;
  for (const std::string& line : lines) {
    EXPECT_THAT(line, ::testing::MatchesRegex("d[0-9]+/f[0-9]+\\.txt:2:a needle here")) << shown;
  }
}

TEST_F(ProgressTest, NothingExtraWhenStderrIsNotATerminalOrWithJson) {
  // Pipes: stdout has the results only, stderr nothing at all.
  ProcessResult piped = RunProcess({ToolvfsBinary(), "grep", "needle", "--project", dir_.Join("tree")},
                                   {.set_env = {"TOOLVFS_PROGRESS_AFTER_MS=0"}});
  EXPECT_EQ(piped.exit_code, 0) << piped.err;
  EXPECT_EQ(piped.err, "");
  EXPECT_THAT(piped.out, Not(HasSubstr("\x1b"))) << piped.out;
  EXPECT_EQ(std::count(piped.out.begin(), piped.out.end(), '\n'), 40);

  // stdout a terminal, stderr a pipe: still nothing on stderr.
  ProcessResult tty_out = RunProcess({ToolvfsBinary(), "grep", "needle", "--project", dir_.Join("tree")},
                                     {.set_env = {"TOOLVFS_PROGRESS_AFTER_MS=0"}, .use_tty = true});
  EXPECT_EQ(tty_out.exit_code, 0) << tty_out.err;
  EXPECT_EQ(tty_out.err, "");
  EXPECT_THAT(tty_out.out, Not(HasSubstr("searching")));

  // On a terminal, --json and --log-level error turn it off.
  std::string shown;
  EXPECT_EQ(OnTerminal({"grep", "needle", "--json", "--project", dir_.Join("tree")}, shown), 0) << shown;
  EXPECT_THAT(shown, Not(HasSubstr("searching"))) << shown;
  EXPECT_THAT(shown, Not(HasSubstr("\x1b[K"))) << shown;
  shown.clear();
  EXPECT_EQ(OnTerminal({"grep", "needle", "--log-level", "error", "--project", dir_.Join("tree")}, shown), 0);
  EXPECT_THAT(shown, Not(HasSubstr("searching"))) << shown;
}

TEST_F(ProgressTest, WorkspaceImportExportAndCopyShowFilesAndBytesThenTheirMessage) {
  const std::string project = "sqlite:" + dir_.Join("store.db") + "#work";
  ProcessResult init = RunProcess({ToolvfsBinary(), "workspace", "init", "--project", project});
  ASSERT_EQ(init.exit_code, 0) << init.err;

  std::string shown;
  ASSERT_EQ(OnTerminal({"workspace", "import", dir_.Join("tree"), "--project", project}, shown), 0) << shown;
  EXPECT_THAT(shown, HasSubstr("importing: ")) << shown;
  EXPECT_THAT(shown, HasSubstr(" of 400 files, ")) << shown;
  EXPECT_THAT(shown, HasSubstr("importing: 400 files copied, writing them into ")) << shown;
  std::vector<std::string> lines = ShownLines(shown);
  ASSERT_EQ(lines.size(), 1u) << shown;
  EXPECT_THAT(lines[0], ::testing::StartsWith("Imported 400 files")) << shown;

  shown.clear();
  ASSERT_EQ(OnTerminal({"workspace", "export", dir_.Join("out"), "--project", project}, shown), 0) << shown;
  EXPECT_THAT(shown, HasSubstr("exporting: ")) << shown;
  lines = ShownLines(shown);
  ASSERT_EQ(lines.size(), 1u) << shown;
  EXPECT_THAT(lines[0], ::testing::StartsWith("Exported 400 files")) << shown;
  EXPECT_EQ(ReadRealFile(dir_.Join("out/d3/f0.txt")), "line one\na needle here\n");

  shown.clear();
  const std::string copy = "sqlite:" + dir_.Join("copy.db") + "#work";
  ASSERT_EQ(OnTerminal({"workspace", "copy", project, copy}, shown), 0) << shown;
  EXPECT_THAT(shown, HasSubstr("copying: ")) << shown;
  EXPECT_THAT(shown, HasSubstr(std::string(kErase))) << shown;
  EXPECT_THAT(ShownLines(shown), Not(::testing::Contains(HasSubstr("copying:")))) << shown;

  // Not on a terminal: the message only.
  ProcessResult piped = RunProcess({ToolvfsBinary(), "workspace", "export", dir_.Join("out2"), "--project", project},
                                   {.set_env = {"TOOLVFS_PROGRESS_AFTER_MS=0"}});
  EXPECT_EQ(piped.exit_code, 0) << piped.err;
  EXPECT_EQ(piped.err, "");
  EXPECT_THAT(piped.out, ::testing::StartsWith("Exported 400 files"));
}

// A tool that ignores `cancel`, SIGTERM and SIGINT: only SIGKILL stops it.
constexpr const char* kStubbornTool = R"(import signal, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
signal.signal(signal.SIGINT, signal.SIG_IGN)
sys.stdin.readline()
time.sleep(120)
)";

// Ctrl+C once: the notice says a second one stops the tool at once; Ctrl+C
// again: it is killed, long before its 60 s grace period (twice over: the
// SIGTERM it ignores comes after one grace, SIGKILL after another).
TEST_F(ProgressTest, ASecondCtrlCStopsAToolAtOnce) {
  WriteRealFile(dir_.Join("stubborn.py"), kStubbornTool);
  for (const std::string runtime : {"vfs", "stdio"}) {
    SCOPED_TRACE(runtime);
    WriteRealFile(dir_.Join("toolvfs.toml"), "[tools.stubborn]\ncommand = \"python3 stubborn.py\"\nruntime = \"" +
                                                 runtime + "\"\n\n[tools.stubborn.sandbox]\nlimits.cancel_grace_s = 60\n");
    TerminalProcess process({ToolvfsBinary(), "run", "stubborn", "--no-audit"}, dir_.path());
    // Its stderr is captured, not shown: time to start and set its handlers.
    std::this_thread::sleep_for(std::chrono::seconds(1));
    const auto started = std::chrono::steady_clock::now();
    process.Type("\x03");
    std::string notice = process.ReadUntil("at once\r\n");
    EXPECT_THAT(notice, HasSubstr("cancelling tool 'stubborn': waiting up to 60 s")) << notice;
    EXPECT_THAT(notice, HasSubstr("press Ctrl+C again to stop it at once")) << notice;
    process.Type("\x03");
    std::string rest;
    int exit_code = process.Wait(rest);
    const auto took = std::chrono::steady_clock::now() - started;
    EXPECT_EQ(exit_code, 130) << notice << rest;
    EXPECT_THAT(rest, HasSubstr("stopping tool 'stubborn' at once (SIGKILL)")) << rest;
    EXPECT_THAT(rest, HasSubstr("cancelled")) << rest;
    EXPECT_LT(took, std::chrono::seconds(30)) << "the second Ctrl+C waited for the grace period: " << rest;
  }
}

}  // namespace
}  // namespace toolvfs
