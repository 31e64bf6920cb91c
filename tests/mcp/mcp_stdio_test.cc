// `toolvfs mcp` over stdio, end to end: a session of requests written to
// its stdin, the answers read from its stdout, one per line.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <dirent.h>

#include <cstdio>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "../cli/subprocess.h"

namespace toolvfs {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kInitialize =
    R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"test","version":"1"}}})";

class McpStdioTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(ToolvfsBinary().empty()) << "TOOLVFS_BINARY is not set";
    std::string pattern = (fs::temp_directory_path() / "toolvfs-mcp-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
    project_ = root_ / "proj";
    fs::create_directories(project_ / "docs");
    // A sibling whose name starts with the project's: prefix confusion.
    fs::create_directories(root_ / "proj-secret");
    Write(project_ / "docs" / "a.txt", "hello from a\n");
    Write(root_ / "proj-secret" / "key.txt", "SECRET\n");
    fs::create_symlink(root_ / "proj-secret" / "key.txt", project_ / "link.txt");
    Write(project_ / "toolvfs.toml", "");
  }
  void TearDown() override { fs::remove_all(root_); }

  static void Write(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }

  // Runs one session: initialize, the given lines, end of input. Returns
  // the answer lines.
  std::vector<std::string> Session(const std::vector<std::string>& lines) {
    std::string input = std::string(kInitialize) + "\n" +
                        R"({"jsonrpc":"2.0","method":"notifications/initialized"})" + "\n";
    for (const std::string& line : lines) input += line + "\n";
    Write(root_ / "input.jsonl", input);
    ProcessResult result = RunProcess(
        {"/bin/sh", "-c", "exec \"$0\" mcp --no-audit --project \"$1\" < \"$2\"", ToolvfsBinary(),
         project_.string(), (root_ / "input.jsonl").string()},
        {.cwd = project_.string(), .deadline = std::chrono::seconds(30)});
    EXPECT_EQ(result.exit_code, 0) << result;
    std::vector<std::string> answers;
    size_t start = 0;
    for (size_t end; (end = result.out.find('\n', start)) != std::string::npos; start = end + 1) {
      answers.push_back(result.out.substr(start, end - start));
    }
    EXPECT_EQ(start, result.out.size()) << "stdout must end with a newline: " << result.out;
    return answers;
  }

  // The answer with id `id` (calls run concurrently, so answers may come
  // in any order); empty if none.
  static std::string ById(const std::vector<std::string>& answers, std::string_view id) {
    const std::string marker = R"("id":)" + std::string(id) + ",";
    for (const std::string& answer : answers) {
      if (answer.find(marker) != std::string::npos) return answer;
    }
    return {};
  }

  static std::string Call(int id, std::string_view tool, std::string_view arguments) {
    return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"method":"tools/call","params":{"name":")" +
           std::string(tool) + R"(","arguments":)" + std::string(arguments) + "}}";
  }

  fs::path root_;
  fs::path project_;
};

TEST_F(McpStdioTest, ListsTheBuiltinToolsWithSchemas) {
  std::vector<std::string> answers = Session({R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})"});
  ASSERT_EQ(answers.size(), 2u);
  EXPECT_NE(answers[0].find(R"("protocolVersion":"2025-11-25")"), std::string::npos) << answers[0];
  EXPECT_NE(answers[1].find(R"("name":"read_file")"), std::string::npos) << answers[1];
  EXPECT_NE(answers[1].find(R"("inputSchema":{)"), std::string::npos) << answers[1];
}

TEST_F(McpStdioTest, ReadsAProjectFile) {
  std::vector<std::string> answers = Session({Call(1, "read_file", R"({"path":"docs/a.txt"})")});
  ASSERT_EQ(answers.size(), 2u);
  EXPECT_NE(ById(answers, "1").find(R"("text":"hello from a\n"}],"isError":false)"), std::string::npos)
      << answers[1];
}

TEST_F(McpStdioTest, PathEscapesAreIsErrorResultsAndTheServerGoesOn) {
  const std::string sibling = (root_ / "proj-secret" / "key.txt").string();
  std::vector<std::string> answers = Session({
      Call(1, "read_file", R"({"path":"../proj-secret/key.txt"})"),
      Call(2, "read_file", R"({"path":"link.txt"})"),
      Call(3, "read_file", R"({"path":")" + sibling + R"("})"),
      Call(4, "read_file", R"({"path":"docs/../../proj-secret/key.txt"})"),
      R"({"jsonrpc":"2.0","id":5,"method":"ping"})",
  });
  ASSERT_EQ(answers.size(), 6u);
  for (int id = 1; id <= 4; ++id) {
    const std::string answer = ById(answers, std::to_string(id));
    EXPECT_NE(answer.find(R"("isError":true)"), std::string::npos) << id << ": " << answer;
    EXPECT_EQ(answer.find("SECRET"), std::string::npos) << answer;
  }
  EXPECT_EQ(ById(answers, "5"), R"({"jsonrpc":"2.0","id":5,"result":{}})");
}

TEST_F(McpStdioTest, BadLinesGetErrorsAndTheServerGoesOn) {
  std::vector<std::string> answers = Session({
      "{not json",
      Call(1, "no_such_tool", "{}"),
      R"({"jsonrpc":"2.0","id":2,"method":"ping"})",
  });
  ASSERT_EQ(answers.size(), 4u);
  EXPECT_NE(answers[1].find("-32700"), std::string::npos) << answers[1];
  EXPECT_NE(ById(answers, "1").find("-32602"), std::string::npos) << ById(answers, "1");
  EXPECT_EQ(ById(answers, "2"), R"({"jsonrpc":"2.0","id":2,"result":{}})");
}


// Runs `script` with sh, $0 the toolvfs binary and $1 the project.
ProcessResult RunScript(const std::string& script, const fs::path& project, std::chrono::seconds deadline) {
  return RunProcess({"/bin/sh", "-c", script, ToolvfsBinary(), project.string()},
                    {.cwd = project.string(), .deadline = deadline});
}

// A shell function for a test's client: `wait_until COMMAND...` runs
// COMMAND every 20 ms until it succeeds, at most 30 s (then it says what
// it waited for on stderr and fails). A client waits for the event itself
// (the server's answer, a reload announced, the tool running), never for
// a fixed time: a fixed nap is too short on a loaded machine and wasted on
// a quiet one.
constexpr std::string_view kWaitUntil =
    "wait_until() { tries=0; until \"$@\" >/dev/null 2>&1; do tries=$((tries + 1)); "
    "if [ $tries -ge 1500 ]; then echo \"timed out waiting for: $*\" >&2; return 1; fi; sleep 0.02; done; }; ";

// `toolvfs mcp` on `project`, its input written by `client` (shell
// commands, $1 the project), its output into a file the client can wait
// on: `wait_for TEXT` returns once TEXT is in the output (wait_until). The
// result's `out` is that output. The server reads until the client ends.
ProcessResult Converse(const std::string& client, const fs::path& project) {
  const fs::path output = project.parent_path() / "conversation.out";
  ProcessResult result = RunProcess(
      {"/bin/sh", "-c",
       std::string(kWaitUntil) + "wait_for() { wait_until grep -qF -- \"$1\" \"$OUT\"; }; OUT=\"$2\"; (" + client +
           ") | \"$0\" mcp --no-audit --project \"$1\" > \"$OUT\"",
       ToolvfsBinary(), project.string(), output.string()},
      {.cwd = project.string(), .deadline = std::chrono::seconds(60)});
  std::ostringstream text;
  text << std::ifstream(output).rdbuf();
  result.out = text.str();
  return result;
}

// Whether a process whose command line contains `marker` is alive.
bool ProcessWithArgumentAlive(std::string_view marker) {
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return false;
  bool found = false;
  while (dirent* entry = readdir(proc)) {
    if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
    std::string command(4096, '\0');
    FILE* file = std::fopen((std::string("/proc/") + entry->d_name + "/cmdline").c_str(), "r");
    if (file == nullptr) continue;
    command.resize(std::fread(command.data(), 1, command.size(), file));
    std::fclose(file);
    for (char& c : command) {
      if (c == '\0') c = ' ';
    }
    if (command.find(marker) != std::string::npos && command.find("/bin/sh") == std::string::npos) found = true;
  }
  closedir(proc);
  return found;
}

TEST_F(McpStdioTest, StructuredResultsAndAnnotationsOfTheBuiltins) {
  std::vector<std::string> answers = Session({
      R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})",
      Call(2, "file_info", R"({"path":"docs/a.txt"})"),
      Call(3, "read_file", R"({"path":"docs/a.txt"})"),
  });
  ASSERT_EQ(answers.size(), 4u);
  const std::string listed = ById(answers, "1");
  EXPECT_NE(listed.find(R"("name":"grep_files")"), std::string::npos) << listed;
  EXPECT_NE(listed.find(R"("annotations":{"readOnlyHint":false,"destructiveHint":true,"idempotentHint":false,)"
                        R"("openWorldHint":false}}]})"),
            std::string::npos)
      << "write_file is last: " << listed;
  EXPECT_NE(ById(answers, "2").find(R"("structuredContent":{"kind":"file","size":13,)"), std::string::npos)
      << ById(answers, "2");
  EXPECT_EQ(ById(answers, "3").find("structuredContent"), std::string::npos) << ById(answers, "3");
}

TEST_F(McpStdioTest, UncoveredRequestsAreDeniedWithTheHowToWithoutElicitation) {
  std::vector<std::string> answers = Session({Call(1, "write_file", R"({"path":"new.txt","content":"x"})")});
  ASSERT_EQ(answers.size(), 2u);
  EXPECT_NE(ById(answers, "1").find("denied without asking (no interaction); to allow it, add"), std::string::npos)
      << ById(answers, "1");
  EXPECT_FALSE(fs::exists(project_ / "new.txt"));
}

// A vfs tool's own progress and log lines (docs/protocol.md) reach the
// client: progress with the call's token, replacing the server's
// elapsed-time reports once the tool has its own (a value not above the
// last one sent is dropped), log lines at the level the client set.
TEST_F(McpStdioTest, AToolsOwnProgressAndLogLinesReachTheClient) {
  Write(project_ / "reporter.py",
        "import sys, time, toolvfs_tool\n"
        "def main(tool):\n"
        "    time.sleep(1.6)  # the server reports elapsed time meanwhile\n"
        "    tool.progress(0, 10, 'not above what was sent')\n"
        "    tool.progress(5, 10, 'half')\n"
        "    tool.log('debug', 'hidden')\n"
        "    tool.log('info', 'shown')\n"
        "    tool.log('error', 'failed', logger='db', data={'code': 7})\n"
        "    tool.progress(10, 10)\n"
        "    return 'reported'\n"
        "sys.exit(toolvfs_tool.tool_main(main))\n");
  Write(project_ / "toolvfs.toml", "[tools.reporter]\ncommand = \"python3 reporter.py\"\nruntime = \"vfs\"\n");
  // Input stays open until the call is answered: at end of input a call
  // gets only 2 s, which a loaded machine may need to start the tool.
  const std::string input = std::string(kInitialize) + "\n" +
                            R"({"jsonrpc":"2.0","method":"notifications/initialized"})" "\n"
                            R"({"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"info"}})" "\n"
                            R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"reporter","arguments":{},)"
                            R"("_meta":{"progressToken":"tok"}}})" "\n";
  Write(root_ / "input.jsonl", input);
  ProcessResult run = Converse("cat \"$1/../input.jsonl\"; wait_for '\"id\":2,'", project_);
  EXPECT_EQ(run.exit_code, 0) << run;
  std::vector<std::string> answers;
  {
    std::istringstream lines(run.out);
    for (std::string line; std::getline(lines, line);) answers.push_back(line);
  }
  auto position = [&](std::string_view needle) -> size_t {
    for (size_t index = 0; index < answers.size(); ++index) {
      if (answers[index].find(needle) != std::string::npos) return index;
    }
    return answers.size();
  };
  std::string all;
  for (const std::string& answer : answers) all += answer + "\n";
  const size_t answer = position(R"("id":2,"result")");
  ASSERT_LT(answer, answers.size()) << all;
  EXPECT_NE(answers[answer].find(R"("text":"reported")"), std::string::npos) << all;
  const size_t elapsed = position(R"("progressToken":"tok","progress":1,"message":"running for 1 s;)");
  // The tool's values go on from the server's last timed report (one a
  // second: 1 after the tool's 1.6 s sleep, 2 or more on a loaded machine
  // where the tool starts late), so 5 of 10 is 5+k of 10+k; its 0 (k + 0,
  // not above k) is dropped.
  int timed_reports = 0;
  for (const std::string& line : answers) timed_reports += line.find("\"message\":\"running for") != std::string::npos;
  const size_t half = position(R"({"progressToken":"tok","progress":)" + std::to_string(5 + timed_reports) +
                               R"(,"total":)" + std::to_string(10 + timed_reports) + R"(,"message":"half"})");
  const size_t done = position(R"({"progressToken":"tok","progress":)" + std::to_string(10 + timed_reports) +
                               R"(,"total":)" + std::to_string(10 + timed_reports) + "}");
  const size_t shown = position(R"({"level":"info","logger":"reporter","data":"shown"})");
  const size_t failed =
      position(R"({"level":"error","logger":"reporter/db","data":{"message":"failed","data":{"code":7}}})");
  EXPECT_LT(elapsed, half) << all;
  ASSERT_LT(half, answers.size()) << all;
  EXPECT_LT(half, done) << all;
  EXPECT_LT(done, answer) << all;
  EXPECT_LT(shown, failed) << all;
  EXPECT_LT(failed, answer) << all;
  EXPECT_EQ(all.find("not above what was sent"), std::string::npos) << all;
  EXPECT_EQ(all.find("hidden"), std::string::npos) << all;
  // Once the tool reports, the server's elapsed-time reports stop.
  EXPECT_EQ(all.find("running for", answers[half].size() + all.find(answers[half])), std::string::npos) << all;
}

// A stdio tool `nap` that would sleep for minutes (`sleep SECONDS`, a
// number no other test uses, to find its process), cancelled after a
// grace of 1 s; and the call of it as a JSON-RPC line.
constexpr const char* kCallNap = R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nap"}})";
void WriteNapTool(const std::filesystem::path& project, std::string_view seconds) {
  std::ofstream(project / "toolvfs.toml") << "[tools.nap]\ncommand = \"sleep " << seconds
                                          << "\"\nruntime = \"stdio\"\n[tools.nap.sandbox.limits]\ncancel_grace_s = 1\n";
}

// The nap call of `result` was cancelled, not answered, and its process is gone.
void ExpectNapCancelled(const ProcessResult& result, std::string_view seconds) {
  EXPECT_EQ(result.exit_code, 0) << result;
  EXPECT_LT(result.elapsed, std::chrono::seconds(15)) << result;
  EXPECT_EQ(result.out.find(R"("id":1,)"), std::string::npos) << "a cancelled call gets no answer: " << result;
  EXPECT_FALSE(ProcessWithArgumentAlive("sleep " + std::string(seconds)));
}

TEST_F(McpStdioTest, AClientThatVanishesMidCallLeavesNoToolProcessBehind) {
  // The client closes its end once the tool runs.
  WriteNapTool(project_, "271.828");
  ProcessResult result = RunScript(
      std::string(kWaitUntil) + "(printf '%s\\n' '" + std::string(kInitialize) + "' '" + kCallNap +
          "'; wait_until pgrep -f '^sleep 271.828' && echo tool-was-running >&2) "
          "| \"$0\" mcp --no-audit --project \"$1\"",
      project_, std::chrono::seconds(30));
  ExpectNapCancelled(result, "271.828");
  EXPECT_NE(result.err.find("tool-was-running"), std::string::npos) << result;
}

// A long call that is the input's last line, without its newline: it is
// taken at the end of input, and the reader that took it does not run it
// itself (it would then wait for it instead of giving it its grace), so
// the call is cancelled after 2 s.
TEST_F(McpStdioTest, ACallReadWithTheEndOfInputGetsTheGraceThenIsCancelled) {
  WriteNapTool(project_, "271.829");
  ProcessResult result = RunScript(
      "printf '%s\\n%s' '" + std::string(kInitialize) + "' '" + kCallNap + "' | \"$0\" mcp --no-audit --project \"$1\"",
      project_, std::chrono::seconds(60));
  ExpectNapCancelled(result, "271.829");
}

// SIGTERM (and SIGINT) end the session as the end of input does: the
// running call gets its grace and is cancelled, and the server exits 0,
// while the client still holds its input open. Before, the signal's
// default action killed the server (exit 143), skipping that cleanup.
TEST_F(McpStdioTest, SigtermEndsTheSessionAsTheEndOfInputDoes) {
  WriteNapTool(project_, "271.830");
  ProcessResult result = RunScript(
      std::string(kWaitUntil) + "mkfifo \"$1/../in\" || exit 9; (printf '%s\\n' '" + std::string(kInitialize) +
          "' '" + kCallNap + "'; exec sleep 60) > \"$1/../in\" 2>/dev/null & client=$!; "
          "\"$0\" mcp --no-audit --project \"$1\" < \"$1/../in\" & server=$!; "
          "wait_until pgrep -f '^sleep 271.830' || exit 8; kill -TERM $server; wait $server; code=$?; "
          "kill $client; exit $code",
      project_, std::chrono::seconds(60));
  ExpectNapCancelled(result, "271.830");
  EXPECT_NE(result.err.find("stopping on a signal"), std::string::npos) << result;
}

TEST_F(McpStdioTest, AClientThatNeverReadsIsTakenAsGone) {
  Write(project_ / "big.txt", std::string(64 << 10, 'x'));
  std::string input = std::string(kInitialize) + "\n";
  for (int id = 1; id <= 200; ++id) input += Call(id, "read_file", R"({"path":"big.txt"})") + "\n";
  Write(root_ / "input.jsonl", input);
  // stdout is a FIFO whose reader never reads (it only holds it open).
  ProcessResult result = RunScript(
      "mkfifo \"$1/../out\" || exit 9; (exec 3<\"$1/../out\"; sleep 20) >/dev/null 2>&1 & "
      "exec \"$0\" mcp --no-audit --stall-timeout 1 --project \"$1\" < \"$1/../input.jsonl\" > \"$1/../out\"",
      project_, std::chrono::seconds(30));
  EXPECT_EQ(result.exit_code, 0) << result;
  EXPECT_LT(result.elapsed, std::chrono::seconds(15)) << result;
  EXPECT_NE(result.err.find("has not read its output for 1 s; taking it as gone"), std::string::npos) << result;
}

TEST_F(McpStdioTest, ALineOverTheLimitIsRefusedAndTheServerGoesOn) {
  std::vector<std::string> answers = Session({
      std::string(R"({"jsonrpc":"2.0","id":9,"method":"ping","params":{"pad":")") + std::string(11 << 20, 'a') + "\"}}",
      R"({"jsonrpc":"2.0","id":2,"method":"ping"})",
  });
  ASSERT_EQ(answers.size(), 3u);
  EXPECT_NE(answers[1].find(R"("code":-32700,"message":"Parse error: message longer than the limit of 10485760 bytes)"),
            std::string::npos)
      << answers[1].substr(0, 300);
  EXPECT_EQ(ById(answers, "2"), R"({"jsonrpc":"2.0","id":2,"result":{}})");
}

TEST_F(McpStdioTest, AChangedConfigIsAnnouncedAndListed) {
  const std::string list = R"({"jsonrpc":"2.0","id":5,"method":"tools/list"})";
  // The config is changed once the server answered (its watcher runs), and
  // listed once the change was announced. The new config is moved into
  // place whole: written in place, the watcher could read it empty.
  ProcessResult result = Converse(
      "printf '%s\\n' '" + std::string(kInitialize) + "'; wait_for '\"id\":0,'; "
      "printf '[tools.fresh]\\ncommand = \"true\"\\nruntime = \"stdio\"\\n' > \"$1/next.toml\" && mv \"$1/next.toml\" \"$1/toolvfs.toml\"; "
      "wait_for 'notifications/tools/list_changed'; printf '%s\\n' '" + list + "'; wait_for '\"id\":5,'",
      project_);
  EXPECT_EQ(result.exit_code, 0) << result;
  const size_t changed = result.out.find(R"({"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{}})");
  const size_t listed = result.out.find(R"("id":5,"result":{"tools":[{"name":"fresh")");
  EXPECT_NE(changed, std::string::npos) << result;
  EXPECT_NE(listed, std::string::npos) << result;
  EXPECT_LT(changed, listed) << result;
}

// "Allow for this session" answers a question about a tool as configured:
// a reload that leaves the tool as it was keeps the answer, one that
// changes the tool asks again.
TEST_F(McpStdioTest, AReloadThatChangesAToolForgetsWhatTheSessionAllowedIt) {
  const std::string config =
      "[tools.read_file]\nsource = \"builtin\"\n[tools.read_file.sandbox]\nfilesystem.allow = [\"src\"]\n";
  Write(project_ / "toolvfs.toml", config);
  const std::string initialize =
      R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25",)"
      R"("capabilities":{"elicitation":{}},"clientInfo":{"name":"test","version":"1"}}})";
  const auto answer = [](int id, std::string_view decision) {
    return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"result":{"action":"accept","content":{"decision":")" +
           std::string(decision) + R"("}}})";
  };
  const auto read = [](int id) { return Call(id, "read_file", R"({"path":"docs/a.txt"})"); };
  // Each new config is moved into place whole (the watcher never reads it half-written).
  const auto reload = [&](const std::string& text) {
    return "printf '%s' '" + text + "' > \"$1/next.toml\" && mv \"$1/next.toml\" \"$1/toolvfs.toml\"; ";
  };
  ProcessResult result = Converse(
      "printf '%s\\n' '" + initialize + "'; wait_for '\"id\":0,'; "
      "printf '%s\\n' '" + read(1) + "'; wait_for '\"id\":1,\"method\":\"elicitation/create\"'; "
      "printf '%s\\n' '" + answer(1, "allow_session") + "'; wait_for '\"id\":1,\"result\"'; "
      "printf '%s\\n' '" + read(2) + "'; wait_for '\"id\":2,\"result\"'; " +
      reload(config + "[tools.other]\ncommand = \"true\"\nruntime = \"stdio\"\n") +
      "wait_for 'notifications/tools/list_changed'; "
      "printf '%s\\n' '" + read(3) + "'; wait_for '\"id\":3,\"result\"'; " +
      reload("[tools.read_file]\nsource = \"builtin\"\n[tools.read_file.sandbox]\nfilesystem.allow = [\"src\", \"lib\"]\n") +
      "wait_until eval 'test $(grep -c notifications/tools/list_changed \"$OUT\") -ge 2'; "
      "printf '%s\\n' '" + read(4) + "'; wait_for '\"id\":2,\"method\":\"elicitation/create\"'; "
      "printf '%s\\n' '" + answer(2, "deny") + "'; wait_for '\"id\":4,\"result\"'",
      project_);
  EXPECT_EQ(result.exit_code, 0) << result;
  EXPECT_EQ(result.err.find("timed out"), std::string::npos) << result;
  size_t questions = 0;
  for (size_t at = 0; (at = result.out.find("elicitation/create", at)) != std::string::npos; ++at) ++questions;
  EXPECT_EQ(questions, 2u) << "asked at the first read and after the change, not at the second or third\n" << result;
  for (std::string_view allowed : {R"("id":1,"result")", R"("id":2,"result")", R"("id":3,"result")"}) {
    const size_t at = result.out.find(allowed);
    ASSERT_NE(at, std::string::npos) << allowed << "\n" << result;
    EXPECT_NE(result.out.substr(at, result.out.find('\n', at) - at).find("hello from a"), std::string::npos)
        << allowed << "\n" << result;
  }
  const size_t denied = result.out.find(R"("id":4,"result")");
  ASSERT_NE(denied, std::string::npos) << result;
  EXPECT_EQ(result.out.substr(denied, result.out.find('\n', denied) - denied).find("hello from a"), std::string::npos)
      << result;
}

// A builtin's policy is built when the config is loaded, and built again
// when it changes: a read the first policy does not cover is refused, the
// same read under the rewritten one answered.
TEST_F(McpStdioTest, ABuiltinIsJudgedByThePolicyOfTheConfigInUse) {
  Write(project_ / "toolvfs.toml", "[tools.read_file]\nsource = \"builtin\"\n[tools.read_file.sandbox]\n"
                                   "filesystem.allow = [\"src\"]\n");
  const std::string read = Call(1, "read_file", R"({"path":"docs/a.txt"})");
  const std::string read_again = Call(2, "read_file", R"({"path":"docs/a.txt"})");
  ProcessResult result = Converse(
      "printf '%s\\n%s\\n' '" + std::string(kInitialize) + "' '" + read + "'; wait_for '\"id\":1,'; "
      "printf '[tools.read_file]\\nsource = \"builtin\"\\n[tools.read_file.sandbox]\\nfilesystem.allow = [\"docs\"]\\n' "
      "> \"$1/next.toml\" && mv \"$1/next.toml\" \"$1/toolvfs.toml\"; wait_for 'notifications/tools/list_changed'; printf '%s\\n' '" + read_again +
          "'; wait_for '\"id\":2,'",
      project_);
  EXPECT_EQ(result.exit_code, 0) << result;
  const size_t first = result.out.find(R"("id":1,)");
  const size_t second = result.out.find(R"("id":2,)");
  ASSERT_NE(first, std::string::npos) << result;
  ASSERT_NE(second, std::string::npos) << result;
  const std::string first_answer = result.out.substr(first, result.out.find('\n', first) - first);
  const std::string second_answer = result.out.substr(second, result.out.find('\n', second) - second);
  EXPECT_NE(first_answer.find("not covered by the policy of tool 'read_file'"), std::string::npos) << result;
  EXPECT_NE(second_answer.find("hello from a"), std::string::npos) << result;
}

TEST_F(McpStdioTest, ASessionWorkspaceGetsTheSessionSuiteAndItsInstructions) {
  const std::string store = "sqlite:" + (root_ / "sessions.db").string() + "#s1";
  ProcessResult init = RunProcess({ToolvfsBinary(), "workspace", "init", "--session", "--project", store},
                                  {.deadline = std::chrono::seconds(30)});
  ASSERT_EQ(init.exit_code, 0) << init;
  Write(root_ / "input.jsonl", std::string(kInitialize) + "\n" +
                                   Call(1, "write_file", R"({"path":"notes.md","content":"hi"})") + "\n");
  ProcessResult result = RunProcess(
      {"/bin/sh", "-c", "exec \"$0\" mcp --no-audit --config \"$1\" --project \"$2\" < \"$3\"", ToolvfsBinary(),
       (project_ / "toolvfs.toml").string(), store, (root_ / "input.jsonl").string()},
      {.cwd = project_.string(), .deadline = std::chrono::seconds(30)});
  EXPECT_EQ(result.exit_code, 0) << result;
  EXPECT_NE(result.out.find(R"("instructions":"## Session workspace)"), std::string::npos) << result;
  EXPECT_NE(result.out.find(R"("structuredContent":{"action":"created","path":"notes.md","version":1,)"),
            std::string::npos)
      << result;
}
}  // namespace
}  // namespace toolvfs
