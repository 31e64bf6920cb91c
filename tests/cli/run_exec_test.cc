// End-to-end tests of `toolvfs run`, `toolvfs exec` and `toolvfs tools`:
// the built binary runs small python3 tools that speak raw NDJSON (no SDK),
// configured in a toolvfs.toml in a temporary project.
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <signal.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "live_process.h"
#include "project/test_util.h"
#include "stdio_ask_tool.h"
#include "subprocess.h"
#include "terminal_process.h"

namespace toolvfs {
namespace {

using ::testing::AllOf;
using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// The tools. Each reads the init line first, as every vfs tool must.
constexpr const char* kPrelude = R"(import json, os, sys
def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()
def notify(method, params):
    send({"jsonrpc": "2.0", "method": method, "params": params})
init = json.loads(sys.stdin.readline())
)";

// The exact line of the brief: a result with a string content.
constexpr const char* kHello = R"(import sys
sys.stdin.readline()
sys.stdout.write('{"jsonrpc":"2.0","method":"result","params":{"content":"hello"}}\n')
sys.stdout.flush()
)";

// Reports what it was started with: tool name, arguments, answers, argv, cwd.
constexpr const char* kEcho = R"(tool = init["params"]["tool"]
report = {"name": tool["name"], "arguments": tool["arguments"], "answers": tool["answers"],
          "argv": sys.argv[1:], "cwd": os.getcwd()}
notify("result", {"content": json.dumps(report, sort_keys=True)})
)";

constexpr const char* kBlocks = R"(notify("result", {"content": [
    {"type": "text", "text": "first"},
    {"type": "text", "text": "second\n"},
    {"type": "text", "text": ""},
    {"type": "resource", "resource": {"uri": "file:///r.txt"}},
    {"type": "resource", "resource": {"uri": "file:///s.txt", "text": "inline"}}]})
)";

constexpr const char* kFail = R"(notify("error", {"message": "boom", "trace": ["at step 1", "at step 2"], "transient": True}))";

constexpr const char* kCrash = R"(sys.stderr.write("starting\n")
raise ValueError("bad thing")
)";

constexpr const char* kSilent = R"(import time
sys.stderr.write("about to hang\n")
sys.stderr.flush()
time.sleep(60)
)";

// Tells the test it is running (a file written through the protocol, so
// this keeps working under the OS sandbox), then waits for `cancel` and
// answers it with an error, the polite way to stop.
constexpr const char* kWaiter = R"(send({"jsonrpc": "2.0", "id": 1, "method": "fs.write",
      "params": {"path": "ready.txt", "content": "ready"}})
for line in sys.stdin:
    message = json.loads(line)
    if message.get("method") == "cancel":
        notify("error", {"message": "stopped on cancel"})
        sys.exit(0)
)";

// Like kWaiter but ignores `cancel`: the host must escalate to SIGTERM.
constexpr const char* kStubborn = R"(import time
send({"jsonrpc": "2.0", "id": 1, "method": "fs.write",
      "params": {"path": "ready.txt", "content": "ready"}})
for line in sys.stdin:
    pass
time.sleep(60)
)";

constexpr const char* kConfig = R"([tools.hello]
command = "python3 hello.py"
runtime = "vfs"
description = "Says hello"

[tools.echo]
command = "python3 echo.py --flag"
runtime = "vfs"

[tools.blocks]
command = "python3 blocks.py"
runtime = "vfs"

[tools.fail]
command = "python3 fail.py"
runtime = "vfs"

[tools.crash]
command = "python3 crash.py"
runtime = "vfs"

[tools.silent]
command = "python3 silent.py"
runtime = "vfs"
[tools.silent.sandbox]
filesystem.allow = ["."]
[tools.silent.sandbox.limits]
idle_timeout_s = 1

[tools.waiter]
command = "python3 waiter.py"
runtime = "vfs"
[tools.waiter.sandbox]
filesystem.allow = ["."]
filesystem.writable = true
[tools.waiter.sandbox.limits]
cancel_grace_s = 30

[tools.stubborn]
command = "python3 stubborn.py"
runtime = "vfs"
[tools.stubborn.sandbox]
filesystem.allow = ["."]
filesystem.writable = true
[tools.stubborn.sandbox.limits]
cancel_grace_s = 1

[tools.inferred_stdio]
command = "python3 stdio_greet.py {{ tool.arguments.name }}"
parameters = { name = { type = "string", default = "world" } }

[tools.explicit_stdio]
command = "python3 stdio_ask.py '{{ tool.answers | tojson }}'"
runtime = "stdio"

[tools.wasm_tool]
command = "tool.wasm"

[tools.builtin_tool]
source = "builtin"

[tools.checked]
command = "python3 echo.py"
runtime = "vfs"
[tools.checked.parameters]
path = { type = "string", required = true }
depth = { type = "integer", default = 2, minimum = 0 }
[tools.checked.sandbox]
filesystem.allow = ["."]

[tools.read_file]
source = "builtin"
[tools.read_file.sandbox]
filesystem.allow = ["."]
filesystem.deny = ["private"]

[tools.reader]
command = "python3 reader.py"
runtime = "vfs"
[tools.reader.sandbox]
filesystem.allow = ["."]
filesystem.deny = ["private"]

[tools.reporting]
command = "python3 reporting.py"
runtime = "vfs"
)";

// Its own progress and log lines (docs/protocol.md), then a result.
constexpr const char* kReporting = R"(notify("progress", {"progress": 1, "total": 4, "message": "reading"})
notify("log", {"level": "debug", "message": "details"})
notify("log", {"level": "info", "message": "read 3 files"})
notify("log", {"level": "warning", "message": "odd file", "logger": "parser", "data": {"n": 1}})
notify("progress", {"progress": 4, "total": 4})
notify("result", {"content": "reported"})
)";

// Reads private/secret.txt, which its policy denies, and reports the refusal.
constexpr const char* kReader = R"(send({"jsonrpc": "2.0", "id": 1, "method": "fs.read", "params": {"path": "private/secret.txt"}})
answer = json.loads(sys.stdin.readline())
notify("error", {"message": answer.get("error", {}).get("message", "read it")})
)";

rapidjson::Document ParseJson(const std::string& text) {
  rapidjson::Document document;
  document.Parse(text.c_str(), text.size());
  EXPECT_FALSE(document.HasParseError()) << text;
  return document;
}

class RunExecTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(ToolvfsBinary().empty()) << "TOOLVFS_BINARY is not set";
    Write("hello.py", kHello);
    WriteTool("echo.py", kEcho);
    WriteTool("blocks.py", kBlocks);
    WriteTool("fail.py", kFail);
    WriteTool("crash.py", kCrash);
    WriteTool("silent.py", kSilent);
    WriteTool("waiter.py", kWaiter);
    WriteTool("stubborn.py", kStubborn);
    WriteTool("reader.py", kReader);
    WriteTool("reporting.py", kReporting);
    Write("private/secret.txt", "secret");
    Write("stdio_greet.py", "import sys\nprint('hello ' + sys.argv[1])\n");
    Write("stdio_ask.py", kStdioAsk);
    Write("toolvfs.toml", kConfig);
  }

  void Write(const std::string& path, const std::string& content) { WriteRealFile(dir_.Join(path), content); }

  void WriteTool(const std::string& path, const std::string& body) {
    Write(path, std::string(kPrelude) + body + "\n");
  }

  // toolvfs ARGS... run in the project directory (so --project and the
  // config are found by default).
  ProcessResult Toolvfs(std::vector<std::string> arguments, std::string cwd = "") {
    arguments.insert(arguments.begin(), ToolvfsBinary());
    ProcessOptions options;
    options.cwd = cwd.empty() ? root_ : cwd;
    return RunProcess(arguments, options);
  }

  // `exec --no-interaction` of the tool `script` (its text `source`) fails
  // with "toolvfs: tool 'SCRIPT' failed: " and `denial`, which names `flag`;
  // given `flag` and `value`, the tool gets past the policy and ends with
  // an error of its own containing `allowed_error`.
  void ExpectExecDenialNamingItsFlag(const std::string& script, const char* source, const std::string& denial,
                                     const std::string& flag, const std::string& value,
                                     const std::string& allowed_error) {
    WriteTool(script, source);
    ProcessResult result = Toolvfs({"exec", "--no-interaction", "--", "python3", script});
    EXPECT_EQ(result.exit_code, 1);
    EXPECT_THAT(result.err, StartsWith("toolvfs: tool '" + script + "' failed: " + denial + "\n"));
    EXPECT_THAT(result.err, HasSubstr("pass " + flag + " "));
    EXPECT_THAT(result.err, Not(HasSubstr("tools.")));
    ProcessResult allowed = Toolvfs({"exec", "--no-interaction", flag, value, "--", "python3", script});
    EXPECT_THAT(allowed.err, HasSubstr("tool '" + script + "' failed: " + allowed_error)) << allowed.err;
    EXPECT_THAT(allowed.err, Not(HasSubstr("denied"))) << allowed.err;
  }

  // Starts `toolvfs ARGS...` in the project, waits until the tool wrote
  // ready.txt, sends `signals` (with a pause between them) and waits.
  ProcessResult Interrupt(std::vector<std::string> arguments, std::vector<int> signals,
                          std::chrono::milliseconds* elapsed = nullptr) {
    arguments.insert(arguments.begin(), ToolvfsBinary());
    ProcessOptions options;
    options.cwd = root_;
    LiveProcess process(arguments, options);
    EXPECT_TRUE(WaitForFile(root_ + "/ready.txt", std::chrono::seconds(20)))
        << "the tool never became ready";
    Clock::time_point start = Clock::now();
    for (int signal_number : signals) {
      process.Signal(signal_number);
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ProcessResult result = process.Wait(std::chrono::seconds(60));
    if (elapsed != nullptr) {
      *elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
    }
    return result;
  }

  TempDir dir_;
  const std::string root_ = dir_.path();
};

// --- run: outcomes ----------------------------------------------------------

TEST_F(RunExecTest, RunPrintsTheTextContentAndExitsZero) {
  ProcessResult result = Toolvfs({"run", "hello"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, "hello\n");
  EXPECT_EQ(result.err, "");
}

TEST_F(RunExecTest, RunJsonIsOneObjectWithStatusAndContent) {
  ProcessResult result = Toolvfs({"run", "hello", "--json"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, R"({"status":"completed","content":[{"type":"text","text":"hello"}]})" "\n");
  EXPECT_EQ(result.err, "");
}

TEST_F(RunExecTest, RunPrintsEveryBlockOnItsOwnLines) {
  ProcessResult result = Toolvfs({"run", "blocks"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, "first\nsecond\n[resource file:///r.txt]\ninline\n");

  ProcessResult json = Toolvfs({"run", "blocks", "--json"});
  EXPECT_EQ(json.exit_code, 0) << json.err;
  rapidjson::Document document = ParseJson(json.out);
  ASSERT_TRUE(document.IsObject());
  EXPECT_STREQ(document["status"].GetString(), "completed");
  const rapidjson::Value& content = document["content"];
  ASSERT_TRUE(content.IsArray());
  ASSERT_EQ(content.Size(), 5u);
  EXPECT_STREQ(content[3]["type"].GetString(), "resource");
  EXPECT_STREQ(content[3]["resource"]["uri"].GetString(), "file:///r.txt");
  EXPECT_STREQ(content[4]["resource"]["text"].GetString(), "inline");
}

// A tool's log lines go to stderr at --log-level; its progress off a
// terminal only at info or debug, as plain lines (no carriage returns).
TEST_F(RunExecTest, AToolsLogLinesAndProgressFollowTheLogLevel) {
  ProcessResult quiet = Toolvfs({"run", "reporting"});
  EXPECT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_EQ(quiet.out, "reported\n");
  EXPECT_EQ(quiet.err, "toolvfs: reporting: warning: parser: odd file {\"n\":1}\n");

  ProcessResult errors_only = Toolvfs({"--log-level", "error", "run", "reporting"});
  EXPECT_EQ(errors_only.err, "");

  ProcessResult info = Toolvfs({"--log-level", "info", "run", "reporting"});
  EXPECT_EQ(info.exit_code, 0) << info.err;
  EXPECT_EQ(info.out, "reported\n");
  EXPECT_EQ(info.err,
            "toolvfs: progress: reporting: 25% (1/4) reading\n"
            "toolvfs: reporting: info: read 3 files\n"
            "toolvfs: reporting: warning: parser: odd file {\"n\":1}\n"
            "toolvfs: progress: reporting: 100% (4/4)\n");
}

// On a terminal the progress is one status line redrawn in place ("\r",
// erase to the end of the line), a log line printed above it, and the
// status removed before the result is printed.
TEST_F(RunExecTest, OnATerminalProgressIsOneStatusLineRemovedAtTheEnd) {
  // The status line shows from the start (not after the usual 250 ms).
  TerminalProcess process({"/usr/bin/env", "TOOLVFS_PROGRESS_AFTER_MS=0", ToolvfsBinary(), "run", "reporting"}, root_);
  std::string shown;
  EXPECT_EQ(process.Wait(shown), 0) << shown;
  const size_t first = shown.find("reporting: 25% (1/4) reading");
  const size_t warning = shown.find("\r\x1b[Ktoolvfs: reporting: warning: parser: odd file {\"n\":1}\r\n");
  const size_t last = shown.find("\rreporting: 100% (4/4)");
  const size_t result = shown.find("\r\x1b[Kreported\r\n");
  EXPECT_NE(first, std::string::npos) << shown;
  EXPECT_NE(warning, std::string::npos) << shown;
  EXPECT_NE(last, std::string::npos) << shown;
  EXPECT_NE(result, std::string::npos) << shown;
  EXPECT_LT(first, warning);
  EXPECT_LT(warning, last);
  EXPECT_LT(last, result);
  EXPECT_EQ(shown.find("info: read 3 files"), std::string::npos) << "below --log-level warn: " << shown;
}

TEST_F(RunExecTest, ToolErrorGoesToStderrAndExitsOne) {
  ProcessResult result = Toolvfs({"run", "fail"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(result.out, "");
  EXPECT_EQ(result.err, "toolvfs: tool 'fail' failed: boom\n");
}

TEST_F(RunExecTest, ToolErrorJsonHasMessageTraceAndTransient) {
  ProcessResult result = Toolvfs({"run", "fail", "--json"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(result.err, "");
  EXPECT_EQ(result.out,
            R"({"status":"error","content":[],"error":{"kind":"tool_error","message":"boom","trace":["at step 1","at step 2"],"transient":true}})"
            "\n");
}

TEST_F(RunExecTest, CrashShowsTheErrorAndTheEndOfStderr) {
  ProcessResult result = Toolvfs({"run", "crash"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(result.out, "");
  EXPECT_THAT(result.err, StartsWith("toolvfs: tool 'crash' failed: "));
  std::string first_line = result.err.substr(0, result.err.find('\n'));
  EXPECT_THAT(first_line, HasSubstr("status 1"));
  // The tail follows, indented, ending with the exception.
  EXPECT_THAT(result.err, HasSubstr("\n  starting\n"));
  EXPECT_THAT(result.err, EndsWith("\n  ValueError: bad thing\n"));

  ProcessResult json = Toolvfs({"run", "crash", "--json"});
  EXPECT_EQ(json.exit_code, 1);
  EXPECT_EQ(json.err, "");
  rapidjson::Document document = ParseJson(json.out);
  EXPECT_STREQ(document["status"].GetString(), "error");
  EXPECT_TRUE(document["error"]["message"].IsString());
}

TEST_F(RunExecTest, IdleTimeoutExits124) {
  Clock::time_point start = Clock::now();
  ProcessResult result = Toolvfs({"run", "silent"});
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(20));
  EXPECT_EQ(result.exit_code, 124) << result.err;
  EXPECT_EQ(result.out, "");
  EXPECT_THAT(result.err, StartsWith("toolvfs: tool 'silent' failed: "));
  EXPECT_THAT(result.err, HasSubstr("idle_timeout_s"));
  EXPECT_THAT(result.err, HasSubstr("\n  about to hang\n"));

  ProcessResult json = Toolvfs({"run", "silent", "--json"});
  EXPECT_EQ(json.exit_code, 124);
  rapidjson::Document document = ParseJson(json.out);
  EXPECT_STREQ(document["status"].GetString(), "error");
  EXPECT_TRUE(document["error"]["transient"].GetBool());
}

// --- run: Ctrl+C ------------------------------------------------------------

TEST_F(RunExecTest, CtrlCSendsCancelAndExits130) {
  std::chrono::milliseconds elapsed{};
  ProcessResult result = Interrupt({"run", "waiter"}, {SIGINT}, &elapsed);
  EXPECT_EQ(result.exit_code, 130) << result.err;
  EXPECT_EQ(result.out, "");
  // Whether the tool's own `error` answering `cancel` is its last word
  // ("; the tool said: stopped on cancel") is the runtime's call.
  ExpectOneLineError(result);
  EXPECT_THAT(result.err, StartsWith("toolvfs: tool 'waiter' cancelled: interrupted by SIGINT"));
  // The tool stopped on `cancel` itself: far less than its 30 s grace.
  EXPECT_LT(elapsed, std::chrono::seconds(15));
}

TEST_F(RunExecTest, CtrlCWithJsonPrintsStatusCancelled) {
  ProcessResult result = Interrupt({"run", "waiter", "--json"}, {SIGINT});
  EXPECT_EQ(result.exit_code, 130) << result.err;
  EXPECT_EQ(result.err, "");
  rapidjson::Document document = ParseJson(result.out);
  ASSERT_TRUE(document.IsObject());
  EXPECT_STREQ(document["status"].GetString(), "cancelled");
  EXPECT_TRUE(document["content"].IsArray());
}

TEST_F(RunExecTest, SecondCtrlCDoesNotCutCleanupShort) {
  ProcessResult result = Interrupt({"run", "waiter", "--json"}, {SIGINT, SIGINT, SIGINT});
  EXPECT_EQ(result.exit_code, 130) << result.err;
  rapidjson::Document document = ParseJson(result.out);
  ASSERT_TRUE(document.IsObject());
  EXPECT_STREQ(document["status"].GetString(), "cancelled");
}

TEST_F(RunExecTest, SigtermCancelsLikeCtrlC) {
  ProcessResult result = Interrupt({"run", "waiter"}, {SIGTERM});
  EXPECT_EQ(result.exit_code, 130) << result.err;
  EXPECT_THAT(result.err, StartsWith("toolvfs: tool 'waiter' cancelled: interrupted by SIGTERM"));
}

TEST_F(RunExecTest, ToolIgnoringCancelIsStoppedAfterItsGrace) {
  std::chrono::milliseconds elapsed{};
  ProcessResult result = Interrupt({"run", "stubborn"}, {SIGINT}, &elapsed);
  EXPECT_EQ(result.exit_code, 130) << result.err;
  EXPECT_THAT(result.err, StartsWith("toolvfs: tool 'stubborn' cancelled: interrupted by SIGINT"));
  EXPECT_LT(elapsed, std::chrono::seconds(15));  // cancel_grace_s = 1, then SIGTERM
}

// --- run: arguments -----------------------------------------------------------

TEST_F(RunExecTest, ArgsReachTheToolAndAnswersWaitForTheirQuestion) {
  ProcessResult result = Toolvfs({"run", "echo", "--args", R"({"b": [1, 2.50], "a": "x\u00e9"})",
                                  "--answer", "confirm=yes", "--answer", "empty="});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  rapidjson::Document report = ParseJson(result.out);
  ASSERT_TRUE(report.IsObject());
  EXPECT_STREQ(report["name"].GetString(), "echo");
  EXPECT_STREQ(report["arguments"]["a"].GetString(), "x\xc3\xa9");
  EXPECT_EQ(report["arguments"]["b"].Size(), 2u);
  // An answer is typed by its question, so it reaches the tool only once the
  // tool asked (SPEC.md §4.6); this one never does.
  EXPECT_TRUE(report["answers"].IsObject());
  EXPECT_EQ(report["answers"].MemberCount(), 0u);
  EXPECT_EQ(report["argv"].Size(), 1u);
  EXPECT_STREQ(report["argv"][0].GetString(), "--flag");
  EXPECT_EQ(fs::path(report["cwd"].GetString()), fs::canonical(root_));
}

TEST_F(RunExecTest, AnswerTakesOneValueSoToolMayFollow) {
  ProcessResult result = Toolvfs({"run", "--answer", "a=1", "echo"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_STREQ(ParseJson(result.out)["name"].GetString(), "echo");
}

TEST_F(RunExecTest, NoArgsMeansAnEmptyObject) {
  ProcessResult result = Toolvfs({"run", "echo"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  rapidjson::Document report = ParseJson(result.out);
  EXPECT_TRUE(report["arguments"].IsObject());
  EXPECT_EQ(report["arguments"].MemberCount(), 0u);
  EXPECT_TRUE(report["answers"].IsObject());
  EXPECT_EQ(report["answers"].MemberCount(), 0u);
}

TEST_F(RunExecTest, ArgsFromAFileAndFromStdin) {
  Write("args.json", "{\n  \"path\": \"src/a.py\"\n}\n");
  ProcessResult from_file = Toolvfs({"run", "echo", "--args", "@args.json"});
  EXPECT_EQ(from_file.exit_code, 0) << from_file.err;
  EXPECT_STREQ(ParseJson(from_file.out)["arguments"]["path"].GetString(), "src/a.py");

  ProcessOptions options;
  options.cwd = root_;
  LiveProcess process({ToolvfsBinary(), "run", "echo", "--args", "@-"}, options, R"({"n": 7})");
  ProcessResult from_stdin = process.Wait();
  EXPECT_EQ(from_stdin.exit_code, 0) << from_stdin.err;
  EXPECT_EQ(ParseJson(from_stdin.out)["arguments"]["n"].GetInt(), 7);
}

// --- run --json: every outcome a harness hands back ---------------------------

// The `error` object of a --json answer that must be one JSON object.
rapidjson::Document JsonError(const ProcessResult& result) {
  rapidjson::Document document = ParseJson(result.out);
  EXPECT_TRUE(document.IsObject()) << result.out;
  if (!document.IsObject()) return document;
  EXPECT_STREQ(document["status"].GetString(), "error") << result.out;
  EXPECT_TRUE(document["content"].IsArray());
  EXPECT_TRUE(document.HasMember("error") && document["error"].IsObject()) << result.out;
  return document;
}

TEST_F(RunExecTest, JsonArgumentErrorsHaveTheirKindAndArgument) {
  struct Case {
    const char* tool;
    const char* arguments;
    const char* kind;
    const char* argument;  // "" for none
    const char* message;
  };
  for (const Case& c : std::vector<Case>{
           {"checked", R"({"path":"a","bogus":1})", "unknown_argument", "bogus", "unknown argument 'bogus'"},
           {"checked", R"({"depth":1})", "missing_argument", "path", "missing required argument 'path'"},
           {"checked", R"({"path":"a","depth":"x"})", "invalid_argument", "depth", "argument 'depth' must be integer"},
           {"checked", R"({"path":"a","depth":-1})", "invalid_argument", "depth", "'depth'"},
           {"read_file", R"({"pth":"a"})", "unknown_argument", "pth", "unknown argument 'pth'"},
           {"read_file", R"({})", "missing_argument", "path", "missing required argument 'path'"},
           {"read_file", R"({"path":3})", "invalid_argument", "path", "must be string"},
           {"checked", R"([1])", "invalid_arguments", "", "must be a JSON object"},
           {"checked", R"({"a":)", "invalid_arguments", "", "Invalid JSON"},
       }) {
    SCOPED_TRACE(std::string(c.tool) + " " + c.arguments);
    ProcessResult result = Toolvfs({"run", c.tool, "--json", "--args", c.arguments});
    EXPECT_EQ(result.exit_code, 2);
    ExpectOneLineError(result);  // the same, for people, on stderr
    rapidjson::Document document = JsonError(result);
    if (!document.IsObject() || !document.HasMember("error")) continue;
    const rapidjson::Value& error = document["error"];
    EXPECT_STREQ(error["kind"].GetString(), c.kind);
    EXPECT_THAT(error["message"].GetString(), HasSubstr(c.message));
    if (*c.argument != '\0') {
      ASSERT_TRUE(error.HasMember("argument"));
      EXPECT_STREQ(error["argument"].GetString(), c.argument);
    } else {
      EXPECT_FALSE(error.HasMember("argument"));
    }
  }
  // An unknown argument near a declared one is suggested.
  ProcessResult near = Toolvfs({"run", "read_file", "--json", "--args", R"({"pth":"a"})"});
  rapidjson::Document document = JsonError(near);
  ASSERT_TRUE(document["error"].HasMember("did_you_mean"));
  EXPECT_STREQ(document["error"]["did_you_mean"][0].GetString(), "path");
}

TEST_F(RunExecTest, VfsToolArgumentsAreCheckedAndDefaulted) {
  // The default reaches the tool; a missing required argument never does.
  ProcessResult result = Toolvfs({"run", "checked", "--args", R"({"path":"a"})"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(result.out, HasSubstr(R"("arguments": {"depth": 2, "path": "a"})"));
  ProcessResult missing = Toolvfs({"run", "checked"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_EQ(missing.out, "");
  EXPECT_EQ(missing.err, "toolvfs: tool 'checked' got bad arguments: Tool 'checked': missing required argument 'path'\n");
}

TEST_F(RunExecTest, JsonUnknownToolSaysDidYouMean) {
  ProcessResult result = Toolvfs({"run", "chekced", "--json"});
  EXPECT_EQ(result.exit_code, 2);
  ExpectOneLineError(result);
  EXPECT_THAT(result.err, StartsWith("toolvfs: run: Unknown tool 'chekced', did you mean 'checked'?"));
  rapidjson::Document document = JsonError(result);
  const rapidjson::Value& error = document["error"];
  EXPECT_STREQ(error["kind"].GetString(), "unknown_tool");
  ASSERT_TRUE(error.HasMember("did_you_mean"));
  ASSERT_EQ(error["did_you_mean"].Size(), 1u);
  EXPECT_STREQ(error["did_you_mean"][0].GetString(), "checked");
  // Nothing close: no suggestion, the configured names in the message.
  ProcessResult far = Toolvfs({"run", "zzzzzzzz", "--json"});
  rapidjson::Document far_document = JsonError(far);
  EXPECT_FALSE(far_document["error"].HasMember("did_you_mean"));
  EXPECT_THAT(far_document["error"]["message"].GetString(), HasSubstr("configures: blocks, "));
}

TEST_F(RunExecTest, JsonPolicyDenialsAreKindDenied) {
  ProcessResult builtin =
      Toolvfs({"run", "read_file", "--json", "--no-interaction", "--args", R"({"path":"private/secret.txt"})"});
  EXPECT_EQ(builtin.exit_code, 1) << builtin.err;
  rapidjson::Document document = JsonError(builtin);
  EXPECT_STREQ(document["error"]["kind"].GetString(), "denied");
  EXPECT_THAT(document["error"]["message"].GetString(), HasSubstr("private"));

  ProcessResult vfs = Toolvfs({"run", "reader", "--json", "--no-interaction"});
  EXPECT_EQ(vfs.exit_code, 1) << vfs.err;
  rapidjson::Document vfs_document = JsonError(vfs);
  EXPECT_STREQ(vfs_document["error"]["kind"].GetString(), "denied");
}

TEST_F(RunExecTest, JsonRunFailuresHaveTheirKind) {
  ProcessResult crash = Toolvfs({"run", "crash", "--json"});
  EXPECT_EQ(crash.exit_code, 1);
  EXPECT_STREQ(JsonError(crash)["error"]["kind"].GetString(), "failed");

  ProcessResult timeout = Toolvfs({"run", "silent", "--json"});
  EXPECT_EQ(timeout.exit_code, 124);
  EXPECT_STREQ(JsonError(timeout)["error"]["kind"].GetString(), "timeout");

  Write("nostart/toolvfs.toml", "[tools.gone]\ncommand = \"/nonexistent/program\"\nruntime = \"vfs\"\n");
  ProcessResult gone = Toolvfs({"run", "gone", "--json", "--project", root_ + "/nostart"});
  EXPECT_EQ(gone.exit_code, 2);
  ExpectOneLineError(gone);
  EXPECT_STREQ(JsonError(gone)["error"]["kind"].GetString(), "start_failed");

  // "maybe" is no answer to a yes/no question.
  ProcessResult bad_answer = Toolvfs({"run", "explicit_stdio", "--json", "--answer", "go=maybe"});
  EXPECT_EQ(bad_answer.exit_code, 2);
  EXPECT_STREQ(JsonError(bad_answer)["error"]["kind"].GetString(), "bad_answer");
}

TEST_F(RunExecTest, MistypedToolNameIsToldWithoutStartingMcpServers) {
  // A server that fails at once: had it been started to look the name up,
  // the run would end with its failure instead of the suggestion.
  Write("mcp/server.py", "import sys\nsys.exit('server started')\n");
  Write("mcp/toolvfs.toml",
        "[mcp_servers.srv]\ncommand = \"python3\"\nargs = [\"server.py\"]\n\n"
        "[tools.everything]\nsource = \"mcp.srv\"\n\n"
        "[tools.read_file]\nsource = \"builtin\"\n");
  ProcessResult result = Toolvfs({"run", "read_fiel", "--json", "--project", root_ + "/mcp"}, root_ + "/mcp");
  EXPECT_EQ(result.exit_code, 2);
  ExpectOneLineError(result);
  EXPECT_THAT(result.err, StartsWith("toolvfs: run: Unknown tool 'read_fiel', did you mean 'read_file'?"));
  EXPECT_STREQ(JsonError(result)["error"]["kind"].GetString(), "unknown_tool");
  EXPECT_THAT(result.err, Not(HasSubstr("server started")));
  // The same server is started for a name nothing resembles.
  ProcessResult far = Toolvfs({"run", "qqqqqqqq", "--project", root_ + "/mcp"}, root_ + "/mcp");
  EXPECT_EQ(far.exit_code, 2);
  EXPECT_THAT(far.err, HasSubstr("server started"));
}

TEST_F(RunExecTest, JsonUsageErrorsOfTheCommandLineStayOnStderr) {
  ProcessResult result = Toolvfs({"run", "echo", "--json", "--answer", "no-equals"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(result.out, "");
  ExpectOneLineError(result);
}

TEST_F(RunExecTest, ExecJsonArgumentErrorsAreJson) {
  ProcessResult result = Toolvfs({"exec", "--json", "--args", "[1]", "--", "python3", "echo.py"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_STREQ(JsonError(result)["error"]["kind"].GetString(), "invalid_arguments");
}

TEST_F(RunExecTest, ToolsJsonGivesEachRuntimesInputSchema) {
  Write("schemas/toolvfs.toml",
        "[tools.v]\ncommand = \"python3 v.py\"\nruntime = \"vfs\"\n"
        "parameters = { n = { type = \"integer\", default = 1, description = \"How many\" } }\n\n"
        "[tools.s]\ncommand = \"python3 s.py\"\nruntime = \"stdio\"\n"
        "parameters = { q = { type = \"string\", required = true, enum = [\"a\", \"b\"] } }\n\n"
        "[tools.read_file]\nsource = \"builtin\"\n");
  ProcessResult result = Toolvfs({"tools", "--json", "--project", root_ + "/schemas"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  rapidjson::Document document = ParseJson(result.out);
  ASSERT_TRUE(document.IsArray());
  std::map<std::string, std::string> schemas;
  for (const rapidjson::Value& tool : document.GetArray()) {
    ASSERT_TRUE(tool.HasMember("input_schema")) << tool["name"].GetString();
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
    tool["input_schema"].Accept(writer);
    schemas[tool["name"].GetString()] = buffer.GetString();
  }
  EXPECT_EQ(schemas["v"],
            R"({"additionalProperties":false,"properties":{"n":{"default":1,"description":"How many",)"
            R"("type":"integer"}},"type":"object"})");
  EXPECT_EQ(schemas["s"],
            R"({"additionalProperties":false,"properties":{"q":{"enum":["a","b"],"type":"string"}},)"
            R"("required":["q"],"type":"object"})");
  EXPECT_THAT(schemas["read_file"], AllOf(HasSubstr(R"("required":["path"])"), HasSubstr(R"("type":"object")")));
}

TEST_F(RunExecTest, BadArgsAreOneLineErrorsNamingWhere) {
  Write("list.json", "[1, 2]");
  Write("broken.json", "{\"a\": ");
  struct Case {
    std::vector<std::string> arguments;
    std::string expected;
  };
  for (const Case& bad : std::vector<Case>{
           {{"--args", "{\"a\":"}, "Invalid JSON on the command line at line 1, column 6: "},
           {{"--args", "[1]"}, "on the command line must be a JSON object"},
           {{"--args", "\"text\""}, "got a string"},
           {{"--args", "@list.json"}, "in 'list.json' must be a JSON object"},
           {{"--args", "@broken.json"}, "Invalid JSON in 'broken.json' at line 1, column 7: "},
           {{"--args", "@missing.json"}, "'missing.json'"},
           {{"--args", "@"}, "@FILE"},
       }) {
    std::vector<std::string> arguments = {"run", "echo"};
    arguments.insert(arguments.end(), bad.arguments.begin(), bad.arguments.end());
    ProcessResult result = Toolvfs(arguments);
    EXPECT_EQ(result.exit_code, 2) << bad.arguments[1];
    EXPECT_EQ(result.out, "");
    ExpectOneLineError(result);
    EXPECT_THAT(result.err, AllOf(StartsWith("toolvfs: --args: "), HasSubstr(bad.expected)));
  }
}

TEST_F(RunExecTest, BadAnswersAreUsageErrors) {
  for (std::vector<std::string> bad : std::vector<std::vector<std::string>>{
           {"--answer", "no-equals"},
           {"--answer", "=value"},
           {"--answer", "a=1", "--answer", "a=2"},
       }) {
    std::vector<std::string> arguments = {"run", "echo"};
    arguments.insert(arguments.end(), bad.begin(), bad.end());
    ProcessResult result = Toolvfs(arguments);
    EXPECT_EQ(result.exit_code, 2) << bad[1];
    ExpectOneLineError(result);
    EXPECT_THAT(result.err, StartsWith("toolvfs: --answer: "));
  }
}

// --- run: config ------------------------------------------------------------

TEST_F(RunExecTest, UnknownToolListsTheConfiguredNames) {
  ProcessResult result = Toolvfs({"run", "nope"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(result.out, "");
  ExpectOneLineError(result);
  EXPECT_THAT(result.err, AllOf(StartsWith("toolvfs: run: Unknown tool 'nope'"),
                                HasSubstr("toolvfs.toml configures: "),
                                HasSubstr("blocks, builtin_tool, checked, crash, echo")));
  // The tool name is checked before --args is read (which may be stdin,
  // waiting at a terminal for `@-`): the error is the name's, not the
  // arguments' that are not JSON.
  Write("not_json.txt", "not json");
  result = Toolvfs({"run", "nope", "--args", "@not_json.txt"});
  EXPECT_EQ(result.exit_code, 2);
  ExpectOneLineError(result);
  EXPECT_THAT(result.err, StartsWith("toolvfs: run: Unknown tool 'nope'"));
}

TEST_F(RunExecTest, MissingConfigNamesThePathTried) {
  fs::create_directories(root_ + "/empty");
  ProcessResult result = Toolvfs({"run", "hello", "--project", root_ + "/empty"});
  EXPECT_EQ(result.exit_code, 2);
  ExpectOneLineError(result);
  EXPECT_THAT(result.err, AllOf(StartsWith("toolvfs: run: "), HasSubstr(root_ + "/empty/toolvfs.toml"),
                                HasSubstr("--config")));

  ProcessResult named = Toolvfs({"run", "hello", "--config", "nowhere.toml"});
  EXPECT_EQ(named.exit_code, 2);
  ExpectOneLineError(named);
  EXPECT_THAT(named.err, HasSubstr("'nowhere.toml'"));

  ProcessResult tools = Toolvfs({"tools"}, root_ + "/empty");
  EXPECT_EQ(tools.exit_code, 2);
  ExpectOneLineError(tools);
  EXPECT_THAT(tools.err, AllOf(StartsWith("toolvfs: tools: "), HasSubstr("toolvfs.toml")));
}

TEST_F(RunExecTest, ConfigFromProjectOrConfigOptionAndToolRunsInItsDirectory) {
  // --project elsewhere: its toolvfs.toml, wherever the command runs.
  fs::create_directories(root_ + "/elsewhere");
  ProcessResult by_project = Toolvfs({"run", "hello", "--project", root_}, root_ + "/elsewhere");
  EXPECT_EQ(by_project.exit_code, 0) << by_project.err;
  EXPECT_EQ(by_project.out, "hello\n");

  // --config in another directory: the tool runs there (its script is there).
  Write("other/echo.py", std::string(kPrelude) + kEcho);
  Write("other/tools.toml", "[tools.other]\ncommand = \"python3 echo.py\"\nruntime = \"vfs\"\n");
  ProcessResult by_config = Toolvfs({"run", "other", "--config", "other/tools.toml"});
  EXPECT_EQ(by_config.exit_code, 0) << by_config.err;
  rapidjson::Document report = ParseJson(by_config.out);
  EXPECT_EQ(fs::path(report["cwd"].GetString()), fs::canonical(root_ + "/other"));
}

TEST_F(RunExecTest, InvalidConfigIsOneLineWithFileLineColumn) {
  Write("bad/toolvfs.toml", "[tools.x]\ncommand = \"x\"\nruntime = \"vfs\"\ncomand = 1\n");
  for (const char* command : {"run", "tools"}) {
    std::vector<std::string> arguments = {command, "--project", root_ + "/bad"};
    if (std::string(command) == "run") arguments.push_back("x");
    ProcessResult result = Toolvfs(arguments);
    EXPECT_EQ(result.exit_code, 2) << command;
    ExpectOneLineError(result);
    EXPECT_THAT(result.err, AllOf(HasSubstr("toolvfs.toml:4:1: "), HasSubstr("comand")));
  }
}

TEST_F(RunExecTest, StdioToolsRunAndOtherRuntimesAreRefusedPerTool) {
  ProcessResult inferred = Toolvfs({"run", "inferred_stdio"});
  EXPECT_EQ(inferred.exit_code, 0) << inferred.err;
  EXPECT_EQ(inferred.out, "hello world\n");  // the parameter's default

  ProcessResult with_spaces = Toolvfs({"run", "inferred_stdio", "--args", R"({"name":"big world"})"});
  EXPECT_EQ(with_spaces.exit_code, 0) << with_spaces.err;
  EXPECT_EQ(with_spaces.out, "hello big world\n");  // one argv element

  ProcessResult unknown = Toolvfs({"run", "inferred_stdio", "--args", R"({"nme":"x"})"});
  EXPECT_EQ(unknown.exit_code, 2);
  ExpectOneLineError(unknown);
  EXPECT_THAT(unknown.err, HasSubstr("unknown argument 'nme'"));

  ProcessResult asks = Toolvfs({"run", "explicit_stdio", "--json", "--no-interaction"});
  EXPECT_EQ(asks.exit_code, 3) << asks.err;
  EXPECT_THAT(asks.out, AllOf(HasSubstr("\"needs_input\""), HasSubstr("\"id\":\"go\"")));

  ProcessResult answered = Toolvfs({"run", "explicit_stdio", "--answer", "go=yes"});
  EXPECT_EQ(answered.exit_code, 0) << answered.err;
  EXPECT_EQ(answered.out, "went: true\n");  // typed: the Boolean question gets a JSON boolean
  // A stdio tool reads files itself, under the sandbox: it makes no
  // requests; its runs are in the audit log as start and end records only.
  ProcessResult stdio_records = Toolvfs({"audit", "--json", "--tool", "explicit_stdio"});
  EXPECT_EQ(stdio_records.exit_code, 0) << stdio_records.err;
  EXPECT_EQ(std::count(stdio_records.out.begin(), stdio_records.out.end(), '\n'), 4) << stdio_records.out;
  EXPECT_THAT(stdio_records.out, Not(HasSubstr("\"fs.")));

  ProcessResult builtin = Toolvfs({"run", "builtin_tool"});
  EXPECT_EQ(builtin.exit_code, 2);
  ExpectOneLineError(builtin);
  EXPECT_THAT(builtin.err, HasSubstr("Tool 'builtin_tool'"));  // no builtin of that name

  ProcessResult wasm = Toolvfs({"run", "wasm_tool"});
  EXPECT_EQ(wasm.exit_code, 2);
  EXPECT_EQ(wasm.err, "toolvfs: run: Tool 'wasm_tool' uses runtime 'wasm', which is not yet supported.\n");

  // The other tools of the same config are unaffected.
  EXPECT_EQ(Toolvfs({"run", "hello"}).exit_code, 0);
}

// --- exec -------------------------------------------------------------------

TEST_F(RunExecTest, ExecRunsAProgramWithoutAConfig) {
  fs::create_directories(root_ + "/noconfig");
  Write("noconfig/echo.py", std::string(kPrelude) + kEcho);
  ProcessResult result = Toolvfs({"exec", "--", "python3", "echo.py", "one"}, root_ + "/noconfig");
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.err, "");
  rapidjson::Document report = ParseJson(result.out);
  ASSERT_TRUE(report.IsObject());
  EXPECT_STREQ(report["name"].GetString(), "echo.py");  // the script's file name
  EXPECT_STREQ(report["argv"][0].GetString(), "one");
  EXPECT_EQ(fs::path(report["cwd"].GetString()), fs::canonical(root_ + "/noconfig"));
}

TEST_F(RunExecTest, ExecArgumentsAfterProgramBelongToIt) {
  // No "--": everything from PROGRAM on is the program's, options included.
  ProcessResult result = Toolvfs({"exec", "--args", R"({"k":1})", "python3", "echo.py", "--json", "-x"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  rapidjson::Document report = ParseJson(result.out);  // text output: the content itself
  ASSERT_TRUE(report.IsObject());
  ASSERT_EQ(report["argv"].Size(), 2u);
  EXPECT_STREQ(report["argv"][0].GetString(), "--json");
  EXPECT_STREQ(report["argv"][1].GetString(), "-x");
  EXPECT_EQ(report["arguments"]["k"].GetInt(), 1);
  // --json is exec's own option too, so the user is told where it went.
  EXPECT_EQ(result.err, "toolvfs: warning: '--json' after PROGRAM 'python3' went to the program, not to exec; "
                        "exec's own options go before PROGRAM (toolvfs exec [OPTIONS] [--] PROGRAM [ARGS...])\n");
}

TEST_F(RunExecTest, ExecWarnsOfItsOwnOptionsAfterProgramWithoutChangingWhatRuns) {
  // The slip of README's first example: --args after the script.
  ProcessResult result =
      Toolvfs({"exec", "--", "python3", "echo.py", "--args", R"({"path":"notes.txt"})", "--allow-write=x", "-v"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(result.err, AllOf(StartsWith("toolvfs: warning: '--args', '--allow-write' after PROGRAM 'python3' "
                                           "went to the program, not to exec; "),
                                Not(HasSubstr("'-v'"))));
  EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1);
  rapidjson::Document report = ParseJson(result.out);
  ASSERT_TRUE(report.IsObject());
  EXPECT_EQ(report["argv"].Size(), 4u);  // all of them still the program's
  EXPECT_TRUE(report["arguments"].ObjectEmpty());

  ProcessResult quiet = Toolvfs({"exec", "--log-level", "error", "--", "python3", "echo.py", "--args", "{}"});
  EXPECT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_EQ(quiet.err, "");
}

// A python tool written for the SDK but configured without runtime = "vfs"
// is inferred as stdio, where the SDK is not on its path.
TEST_F(RunExecTest, AStdioToolThatCannotImportTheSdkGetsAHintToMakeItAVfsTool) {
  Write("sdk_tool.py", "import toolvfs_tool\n");
  Write("toolvfs.toml", std::string(kConfig) + "\n[tools.sdk_tool]\ncommand = \"python3 sdk_tool.py\"\n");
  ProcessResult run = Toolvfs({"run", "sdk_tool"});
  EXPECT_EQ(run.exit_code, 1) << run;
  EXPECT_THAT(run.err, HasSubstr("No module named 'toolvfs_tool'"));
  EXPECT_THAT(run.err, EndsWith("\ntoolvfs: hint: tool 'sdk_tool' could not load the toolvfs SDK, which only vfs "
                                "tools get: set runtime = \"vfs\" in its [tools.sdk_tool] table (toolvfs exec: "
                                "--runtime vfs)\n"));
  // As a vfs tool it imports the SDK: the hint was right.
  ProcessResult vfs = Toolvfs({"exec", "--", "python3", "sdk_tool.py"});
  EXPECT_THAT(vfs.err, Not(HasSubstr("No module named")));
  EXPECT_THAT(vfs.err, Not(HasSubstr("hint:")));
}

// A binary copied away from its build or install finds no SDK beside it.
TEST_F(RunExecTest, AVfsToolRunByABinaryWithoutAnSdkNearbySaysHowToNameOne) {
  TempDir elsewhere;
  const std::string copy = elsewhere.Join("toolvfs");
  fs::copy_file(ToolvfsBinary(), copy);
  fs::permissions(copy, fs::perms::owner_all);
  ProcessOptions options;
  options.cwd = root_;
  options.unset_env = {"TOOLVFS_SDK_DIR"};
  ProcessResult result = RunProcess({copy, "exec", "--", "python3", "hello.py"}, options);
  EXPECT_THAT(result.err, StartsWith("toolvfs: warning: no tool SDK (share/toolvfs/sdk) was found near '" + copy +
                                     "', so tool 'hello.py' cannot import toolvfs_tool; set TOOLVFS_SDK_DIR to the "
                                     "absolute path of the directory that holds toolvfs_tool.py\n"))
      << result;
  // The built binary has one: no warning.
  ProcessResult built = Toolvfs({"exec", "--", "python3", "hello.py"});
  EXPECT_EQ(built.exit_code, 0) << built;
  EXPECT_EQ(built.err, "");
}

TEST_F(RunExecTest, ExecJsonAndExitCodes) {
  ProcessResult hello = Toolvfs({"exec", "--json", "--", "python3", "hello.py"});
  EXPECT_EQ(hello.exit_code, 0) << hello.err;
  EXPECT_EQ(hello.out, R"({"status":"completed","content":[{"type":"text","text":"hello"}]})" "\n");

  ProcessResult fail = Toolvfs({"exec", "--", "python3", "fail.py"});
  EXPECT_EQ(fail.exit_code, 1);
  EXPECT_EQ(fail.err, "toolvfs: tool 'fail.py' failed: boom\n");

  ProcessResult vfs = Toolvfs({"exec", "--runtime", "vfs", "--", "python3", "hello.py"});
  EXPECT_EQ(vfs.exit_code, 0) << vfs.err;
}

TEST_F(RunExecTest, ExecRunsAStdioProgram) {
  Write("report.py", "import json, os, sys\nprint(json.dumps({'argv': sys.argv[1:], 'cwd': os.getcwd()}))\n");
  ProcessResult result = Toolvfs({"exec", "--runtime", "stdio", "--args", R"({"a":[1,2]})", "--",
                                  "python3", "report.py", "{{ tool.arguments | tojson }}", "two words"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  rapidjson::Document report = ParseJson(result.out);
  ASSERT_TRUE(report.IsObject()) << result.out;
  ASSERT_EQ(report["argv"].Size(), 2u);
  EXPECT_STREQ(report["argv"][0].GetString(), R"({"a":[1,2]})");
  EXPECT_STREQ(report["argv"][1].GetString(), "two words");
  EXPECT_EQ(fs::path(report["cwd"].GetString()), fs::canonical(root_));

  ProcessResult failing = Toolvfs({"exec", "--runtime", "stdio", "--", "sh", "-c", "echo out; echo bad >&2; exit 4"});
  EXPECT_EQ(failing.exit_code, 1);
  EXPECT_THAT(failing.err, HasSubstr("exited with status 4: bad"));
}

TEST_F(RunExecTest, ExecUsageErrors) {
  ProcessResult wasm = Toolvfs({"exec", "--runtime", "wasm", "--", "python3", "hello.py"});
  EXPECT_EQ(wasm.exit_code, 2);
  ExpectOneLineError(wasm);

  ProcessResult none = Toolvfs({"exec"});
  EXPECT_EQ(none.exit_code, 2);
  ExpectOneLineError(none);
  EXPECT_THAT(none.err, HasSubstr("(see toolvfs exec --help)"));

  ProcessResult missing = Toolvfs({"exec", "--", "./no-such-program"});
  EXPECT_EQ(missing.exit_code, 2);
  ExpectOneLineError(missing);
  EXPECT_THAT(missing.err, AllOf(StartsWith("toolvfs: tool 'no-such-program' could not start: "),
                                 HasSubstr("no-such-program")));

  ProcessResult bad_args = Toolvfs({"exec", "--args", "[]", "--", "python3", "hello.py"});
  EXPECT_EQ(bad_args.exit_code, 2);
  ExpectOneLineError(bad_args);
}

// Tries each request of its arguments ([method, params], ...) and reports
// for each the error code, or 0.
constexpr const char* kProbe = R"(codes = []
for index, (method, params) in enumerate(init["params"]["tool"]["arguments"]["requests"]):
    send({"jsonrpc": "2.0", "id": index, "method": method, "params": params})
    answer = json.loads(sys.stdin.readline())
    codes.append(answer["error"]["code"] if "error" in answer else 0)
notify("result", {"content": json.dumps(codes)})
)";

TEST_F(RunExecTest, ExecAllowOptionsAreThePolicy) {
  WriteTool("probe.py", kProbe);
  Write("src/a.txt", "a");
  Write("other/b.txt", "b");
  Write(".env", "SECRET=1");
  const std::string requests = R"({"requests": [
      ["fs.read", {"path": "src/a.txt"}],
      ["fs.read", {"path": "other/b.txt"}],
      ["fs.write", {"path": "out/c.txt", "content": "c"}],
      ["fs.write", {"path": "src/d.txt", "content": "d"}],
      ["fs.read", {"path": ".env"}],
      ["fs.read", {"path": "out/c.txt"}]]})";
  ProcessResult flags = Toolvfs({"exec", "--no-interaction", "--allow-read", "src", "--allow-write", "out/",
                                 "--allow-net", "https://api.github.com/repos/", "--allow-cmd", "git",
                                 "--args", requests, "--", "python3", "probe.py"});
  EXPECT_EQ(flags.exit_code, 0) << flags.err;
  // src readable, other/ not covered, out/ writable and readable, src not
  // writable, .env sensitive whatever the flags say.
  EXPECT_EQ(flags.out, "[0, -32001, 0, -32001, -32001, 0]\n");
  EXPECT_TRUE(fs::exists(fs::path(root_) / "out/c.txt"));
  EXPECT_FALSE(fs::exists(fs::path(root_) / "src/d.txt"));

  // Without --allow-read the whole project stays readable.
  ProcessResult write_only = Toolvfs({"exec", "--no-interaction", "--allow-write", "out",
                                      "--args", requests, "--", "python3", "probe.py"});
  EXPECT_EQ(write_only.out, "[0, 0, 0, -32001, -32001, 0]\n") << write_only.err;

  // No flag: the default policy (reads allowed, writes not covered).
  ProcessResult none = Toolvfs({"exec", "--no-interaction", "--args", requests, "--", "python3", "probe.py"});
  EXPECT_EQ(none.out, "[0, 0, -32001, -32001, -32001, 0]\n") << none.err;

  // Every decided request went to the project's audit log, denials with
  // the rule that made them.
  ProcessResult denied = Toolvfs({"audit", "--denied"});
  EXPECT_EQ(denied.exit_code, 0) << denied.err;
  EXPECT_THAT(denied.out, AllOf(HasSubstr("probe.py  fs.read  other/b.txt  deny (not covered, no interaction)"),
                                HasSubstr("fs.read  .env  deny (sensitive path \"**/.env\")"),
                                HasSubstr("fs.write  src/d.txt  deny"), Not(HasSubstr("allow"))));
  ProcessResult all = Toolvfs({"audit", "--json"});
  EXPECT_THAT(all.out, HasSubstr(R"("target":"out/c.txt","decision":"allow","rule":"filesystem.writable \"out\"")"));

  // --no-audit writes nothing; --audit PATH writes there.
  fs::remove_all(fs::path(root_) / ".toolvfs");
  EXPECT_EQ(Toolvfs({"exec", "--no-audit", "--", "python3", "hello.py"}).exit_code, 0);
  EXPECT_FALSE(fs::exists(fs::path(root_) / ".toolvfs"));
  EXPECT_EQ(Toolvfs({"exec", "--audit", root_ + "/elsewhere.jsonl", "--args", requests, "--", "python3", "probe.py"})
                .exit_code,
            0);
  EXPECT_TRUE(fs::exists(fs::path(root_) / "elsewhere.jsonl"));
  EXPECT_FALSE(fs::exists(fs::path(root_) / ".toolvfs"));

  // Each --allow-* takes one value: PROGRAM may follow without "--".
  ProcessResult without_dashes = Toolvfs({"exec", "--allow-read", "src", "python3", "hello.py"});
  EXPECT_EQ(without_dashes.exit_code, 0) << without_dashes.err;
  EXPECT_EQ(without_dashes.out, "hello\n");

  struct Case {
    std::string option, value;
  };
  for (const Case& bad : std::vector<Case>{{"--allow-read", "../outside"},
                                           {"--allow-write", "/etc"},
                                           {"--allow-net", "ftp://example.com"},
                                           {"--allow-net", "example.com"},
                                           {"--allow-cmd", "rm -rf"}}) {
    ProcessResult result = Toolvfs({"exec", bad.option, bad.value, "--", "python3", "hello.py"});
    EXPECT_EQ(result.exit_code, 2) << bad.option << " " << bad.value;
    EXPECT_EQ(result.out, "");
    ExpectOneLineError(result);
    EXPECT_THAT(result.err, StartsWith("toolvfs: " + bad.option + ": "));
  }
}

// A tool probing for a way out (SPEC.md 3.4): every probe is in the
// project's audit log once, with what it named, and `toolvfs audit
// --denied` shows them.
TEST_F(RunExecTest, ProbesRefusedBeforeThePolicyAreInTheAuditLog) {
  WriteTool("probe.py", kProbe);
  Write("a.txt", "a");
  const std::string requests = R"({"requests": [
      ["fs.read", {"path": "../../etc/passwd"}],
      ["fs.rename", {"from": "a.txt", "to": "../stolen.txt"}],
      ["fs.grep", {"pattern": "root", "paths": ["../"]}],
      ["http.get", {"url": "http://a%00b/"}],
      ["fs.steal", {"path": "/etc/shadow"}],
      ["fs.read", {"path": "a.txt"}]]})";
  ProcessResult run = Toolvfs({"exec", "--no-interaction", "--args", requests, "--", "python3", "probe.py"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, "[-32001, -32001, -32001, -32602, -32601, 0]\n");

  ProcessResult denied = Toolvfs({"audit", "--denied"});
  EXPECT_EQ(denied.exit_code, 0) << denied.err;
  EXPECT_THAT(denied.out,
              AllOf(HasSubstr("fs.read  ../../etc/passwd  deny (refused: access denied)"),
                    // Writes are not covered by exec's default policy: the
                    // source's denial stands, the destination is recorded.
                    HasSubstr("fs.rename  a.txt -> ../stolen.txt  deny (not covered, no interaction)"),
                    HasSubstr("fs.grep  ../  deny (refused: access denied)"),
                    HasSubstr("http.get  http://a%00b/  deny (refused: invalid params)"),
                    HasSubstr("fs.steal  /etc/shadow  deny (refused: unknown method)"),
                    Not(HasSubstr("a.txt  allow"))));
  std::string all = Toolvfs({"audit", "--json"}).out;
  // One each, the allowed read included, between the run's start and end.
  EXPECT_EQ(std::count(all.begin(), all.end(), '\n'), 8) << all;
}

// --- audit: a timeline of runs -----------------------------------------------

// The records of `toolvfs audit --json ARGS...`, parsed.
std::vector<rapidjson::Document> AuditRecords(const std::string& out) {
  std::vector<rapidjson::Document> records;
  size_t start = 0;
  while (start < out.size()) {
    size_t end = out.find('\n', start);
    if (end == std::string::npos) end = out.size();
    records.push_back(ParseJson(out.substr(start, end - start)));
    start = end + 1;
  }
  return records;
}

TEST_F(RunExecTest, EveryRunHasAStartAndAnEndRecord) {
  EXPECT_EQ(Toolvfs({"run", "hello"}).exit_code, 0);                       // vfs
  EXPECT_EQ(Toolvfs({"run", "inferred_stdio"}).exit_code, 0);              // stdio
  EXPECT_EQ(Toolvfs({"run", "fail"}).exit_code, 1);                        // the tool's error
  EXPECT_EQ(Toolvfs({"run", "read_file", "--args", "{}"}).exit_code, 2);   // bad arguments
  EXPECT_EQ(Toolvfs({"run", "read_file", "--args", R"({"path":"hello.py"})"}).exit_code, 0);  // builtin
  ProcessResult log = Toolvfs({"audit", "--json"});
  EXPECT_EQ(log.exit_code, 0) << log.err;
  std::vector<rapidjson::Document> records = AuditRecords(log.out);
  struct Run {
    std::string tool, runtime, status, kind;
    int code;
  };
  std::vector<Run> runs;
  std::map<std::string, std::string> started;  // run id -> runtime
  for (const rapidjson::Document& record : records) {
    std::string method = record["method"].GetString();
    std::string run_id = record["call_id"].GetString();
    if (method == "run.start") {
      EXPECT_FALSE(started.contains(run_id)) << "run ids are unique";
      started[run_id] = record["target"].GetString();
    } else if (method == "run.end") {
      ASSERT_TRUE(started.contains(run_id)) << "an end without a start: " << run_id;
      runs.push_back(Run{record["tool"].GetString(), started[run_id], record["target"].GetString(),
                         record["rule"].GetString(), record["code"].GetInt()});
    } else {
      // A request record belongs to a run that started and has not ended.
      EXPECT_TRUE(started.contains(run_id)) << method;
    }
  }
  ASSERT_EQ(runs.size(), 5u) << log.out;
  EXPECT_EQ(runs[0].tool, "hello");
  EXPECT_EQ(runs[0].runtime, "vfs");
  EXPECT_EQ(runs[0].status, "completed");
  EXPECT_EQ(runs[0].code, 0);
  EXPECT_EQ(runs[1].runtime, "stdio");
  EXPECT_EQ(runs[1].status, "completed");
  EXPECT_EQ(runs[2].status, "error");
  EXPECT_EQ(runs[2].kind, "tool_error");
  EXPECT_EQ(runs[2].code, 1);
  EXPECT_EQ(runs[3].kind, "missing_argument");
  EXPECT_EQ(runs[3].code, 2);
  EXPECT_EQ(runs[4].runtime, "builtin");

  // The text timeline shows them too.
  ProcessResult text = Toolvfs({"audit", "--tool", "fail"});
  EXPECT_THAT(text.out, AllOf(HasSubstr("  fail  run.start  vfs  run "), HasSubstr("  fail  run.end  error  run "),
                              HasSubstr("(tool_error)  exit 1")));
}

TEST_F(RunExecTest, AuditFiltersByRunToolAndTime) {
  EXPECT_EQ(Toolvfs({"run", "read_file", "--args", R"({"path":"hello.py"})"}).exit_code, 0);
  EXPECT_EQ(Toolvfs({"run", "hello"}).exit_code, 0);
  std::vector<rapidjson::Document> records = AuditRecords(Toolvfs({"audit", "--json"}).out);
  ASSERT_GE(records.size(), 4u);
  const std::string first_run = records[0]["call_id"].GetString();

  std::vector<rapidjson::Document> run = AuditRecords(Toolvfs({"audit", "--json", "--run", first_run}).out);
  ASSERT_EQ(run.size(), 3u);  // start, the read, end
  for (const rapidjson::Document& record : run) EXPECT_EQ(first_run, record["call_id"].GetString());
  EXPECT_EQ(AuditRecords(Toolvfs({"audit", "--json", "--tool", "hello"}).out).size(), 2u);

  EXPECT_EQ(AuditRecords(Toolvfs({"audit", "--json", "--since", "1h"}).out).size(), records.size());
  EXPECT_EQ(AuditRecords(Toolvfs({"audit", "--json", "--since", "2000-01-01"}).out).size(), records.size());
  EXPECT_EQ(Toolvfs({"audit", "--json", "--since", "2999-01-01T00:00:00Z"}).out, "");
  EXPECT_EQ(Toolvfs({"audit", "--since", "2999-01-01 00:00"}).out.find("None of the"), 0u);

  for (const char* bad : {"yesterday", "10y", "2026-13-01", "2026-11-21 8:30"}) {
    ProcessResult result = Toolvfs({"audit", "--since", bad});
    EXPECT_EQ(result.exit_code, 2) << bad;
    ExpectOneLineError(result);
    EXPECT_THAT(result.err, StartsWith("toolvfs: --since: '" + std::string(bad) + "' is no time"));
  }
}

TEST_F(RunExecTest, AuditFollowPrintsRecordsAsTheyAreAppended) {
  EXPECT_EQ(Toolvfs({"run", "hello"}).exit_code, 0);
  ProcessOptions options;
  options.cwd = root_;
  LiveProcess follow({ToolvfsBinary(), "audit", "--follow", "--tool", "echo"}, options);
  EXPECT_EQ(Toolvfs({"run", "echo"}).exit_code, 0);
  // Give the follower a few rounds to read what was appended, then stop it.
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  follow.Signal(SIGTERM);
  ProcessResult result = follow.Wait(std::chrono::seconds(20));
  EXPECT_THAT(result.out, AllOf(HasSubstr("  echo  run.start  vfs  run "), HasSubstr("  echo  run.end  completed  run ")));
  EXPECT_THAT(result.out, Not(HasSubstr("  hello  ")));
}

// --- check ------------------------------------------------------------------

TEST_F(RunExecTest, CheckPrintsEachToolsEffectivePolicy) {
  Write("policy/toolvfs.toml", R"([tools.gen]
command = "python3 gen.py"
runtime = "vfs"
[tools.gen.sandbox]
filesystem.allow = ["src"]
filesystem.writable = ["src/gen"]
filesystem.deny = ["src/secrets"]
network.allow = ["https://api.github.com/repos/"]
commands.rg = { args = [["-n", "**"]] }
commands.rm = false
)");
  ProcessResult result = Toolvfs({"check", "--config", "policy/toolvfs.toml"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(result.out, AllOf(StartsWith("tool gen (runtime vfs)\n"),
                                HasSubstr(R"(read "src": allow (filesystem.allow))"),
                                HasSubstr(R"(write "src/gen": allow (filesystem.writable))"),
                                HasSubstr(R"(read and write "src/secrets": deny (filesystem.deny))"),
                                HasSubstr("\"**/.env\""), HasSubstr("https://api.github.com/repos/"),
                                HasSubstr("commands.rm"), EndsWith("policy/toolvfs.toml: 1 tool, 0 MCP servers\n")));

  // Every error is listed, one line each, then the count; exit 2.
  Write("bad/toolvfs.toml", "[tools.x]\ncommand = \"x\"\ncomand = 1\n[tools.x.sandbox]\nfilesystem.allow = 3\n");
  ProcessResult bad = Toolvfs({"check", "--config", "bad/toolvfs.toml"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.out, "");
  EXPECT_THAT(bad.err, AllOf(HasSubstr("bad/toolvfs.toml:3:1: "), HasSubstr("comand"),
                             HasSubstr("bad/toolvfs.toml:5:"), HasSubstr("has 2 errors")));

  // The project's own config: a wasm tool is named, the others still listed.
  ProcessResult project = Toolvfs({"check"});
  EXPECT_EQ(project.exit_code, 2);
  EXPECT_THAT(project.err, HasSubstr("Tool 'wasm_tool' uses runtime 'wasm', which is not yet supported."));
  EXPECT_THAT(project.out, AllOf(HasSubstr("tool hello (runtime vfs)"), HasSubstr("tool wasm_tool (runtime unsupported)")));
}

// --- tools ------------------------------------------------------------------

TEST_F(RunExecTest, ToolsListsNameRuntimeSourceAndDescription) {
  Write("list/toolvfs.toml",
        "[tools.fmt]\ncommand = \"python3 fmt.py\"\nruntime = \"vfs\"\n"
        "description = \"\"\"Formats\n  files\"\"\"\n\n"
        "[tools.lint]\ncommand = \"lint.wasm\"\n\n"
        "[tools.search]\nsource = \"builtin\"\ndescription = \"Searches\"\n\n"
        "[tools.shell]\ncommand = \"sh -c true\"\ndescription = \"Runs a shell\"\n");
  ProcessResult result = Toolvfs({"tools", "--project", root_ + "/list"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.err, "");
  EXPECT_EQ(result.out,
            "NAME    RUNTIME      SOURCE   DESCRIPTION\n"
            "fmt     vfs          local    Formats files\n"
            "lint    unsupported  local\n"
            "        Tool 'lint' uses runtime 'wasm', which is not yet supported.\n"
            "search  builtin      builtin  Searches\n"
            "shell   stdio        local    Runs a shell\n");
}

TEST_F(RunExecTest, ToolsJsonIsAnArrayOfObjects) {
  Write("list/toolvfs.toml",
        "[tools.fmt]\ncommand = \"python3 fmt.py --fast\"\nruntime = \"vfs\"\n"
        "description = \"Formats\"\nparameters = { path = { type = \"string\", required = true } }\n\n"
        "[tools.lint]\ncommand = \"lint.wasm\"\n");
  ProcessResult result = Toolvfs({"tools", "--json", "--config", root_ + "/list/toolvfs.toml"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out,
            R"([{"name":"fmt","runtime":"vfs","source":"local","description":"Formats",)"
            R"("command":["python3","fmt.py","--fast"],"parameters":{"path":{"required":true,"type":"string"}},)"
            R"("input_schema":{"additionalProperties":false,"properties":{"path":{"type":"string"}},)"
            R"("required":["path"],"type":"object"},"stateful":false},)"
            R"({"name":"lint","runtime":null,"runtime_error":"Tool 'lint' uses runtime 'wasm', which is not yet supported.",)"
            R"("source":"local","description":"","command":["lint.wasm"],"parameters":{},)"
            R"("input_schema":{"type":"object"},"stateful":false}])"
            "\n");
}

TEST_F(RunExecTest, ToolsWithAnEmptyConfig) {
  Write("empty/toolvfs.toml", "");
  ProcessResult text = Toolvfs({"tools", "--project", root_ + "/empty"});
  EXPECT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("No tools are configured in "));
  ProcessResult json = Toolvfs({"tools", "--json", "--project", root_ + "/empty"});
  EXPECT_EQ(json.exit_code, 0);
  EXPECT_EQ(json.out, "[]\n");

  ProcessResult run = Toolvfs({"run", "x", "--project", root_ + "/empty"});
  EXPECT_EQ(run.exit_code, 2);
  ExpectOneLineError(run);
  EXPECT_THAT(run.err, HasSubstr("configures no tools"));
}

TEST_F(RunExecTest, ConfigWarningsGoToStderr) {
  Write("warn/toolvfs.toml", "[tools.b]\nsource = \"builtin\"\nruntime = \"vfs\"\n");
  ProcessResult result = Toolvfs({"tools", "--project", root_ + "/warn"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(result.err, AllOf(StartsWith("toolvfs: warning: "), HasSubstr("toolvfs.toml:3:")));
  ProcessResult quiet = Toolvfs({"tools", "--project", root_ + "/warn", "--log-level", "error"});
  EXPECT_EQ(quiet.err, "");
}

}  // namespace
}  // namespace toolvfs

// --- Words: messages that say what happened (issue 22 item 10) ---------------

namespace toolvfs {
namespace {

// Writes todo.txt and hands back the host's refusal as its error.
constexpr const char* kTodoWriter = R"(send({"jsonrpc": "2.0", "id": 1, "method": "fs.write",
      "params": {"path": "todo.txt", "content": "x"}})
answer = json.loads(sys.stdin.readline())
notify("error", {"message": answer.get("error", {}).get("message", "written")})
)";

// Fetches a URL on a port where nothing listens (9, discard): allowed,
// the fetch fails with the connection's error, never with a denial.
constexpr const char* kUrlFetcher = R"(send({"jsonrpc": "2.0", "id": 1, "method": "http.get",
      "params": {"url": "http://127.0.0.1:9/api/items?page=2"}})
answer = json.loads(sys.stdin.readline())
notify("error", {"message": answer.get("error", {}).get("message", "fetched")})
)";

size_t Occurrences(const std::string& text, const std::string& part) {
  size_t count = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + part.size())) ++count;
  return count;
}

TEST_F(RunExecTest, ACrashsStderrIsShownOnce) {
  ProcessResult result = Toolvfs({"run", "crash"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(Occurrences(result.err, "ValueError: bad thing"), 1u) << result.err;
  EXPECT_THAT(result.err, StartsWith("toolvfs: tool 'crash' failed: Tool 'crash' exited with status 1 without "
                                     "sending a result; its stderr ends with:\n"));
  // --json keeps the last line in the message, for harnesses that read only it.
  ProcessResult json = Toolvfs({"run", "crash", "--json"});
  EXPECT_THAT(ParseJson(json.out)["error"]["message"].GetString(), HasSubstr("stderr ends with: ValueError"));
}

TEST_F(RunExecTest, StrayStdoutIsQuotedInTheFailure) {
  Write("chatty.py", "import sys\nsys.stdin.readline()\nprint('Loading model weights...')\n");
  ProcessResult result = Toolvfs({"exec", "--", "python3", "chatty.py"});
  EXPECT_EQ(result.exit_code, 1);
  ExpectOneLineError(result);
  EXPECT_THAT(result.err, HasSubstr("without sending a result; its stdout had a line that is not protocol JSON: "
                                    "'Loading model weights...' (a tool's own messages belong on stderr)"));
}

TEST_F(RunExecTest, AMissingProgramIsNotASandboxFailure) {
  Write("toolvfs.toml", std::string(kConfig) + R"(
[tools.typo]
command = "pyhton3 hello.py"
runtime = "vfs"

[tools.gone]
command = "./not-there.sh"
)");
  ProcessResult typo = Toolvfs({"run", "typo"});
  EXPECT_EQ(typo.exit_code, 2);
  ExpectOneLineError(typo);
  EXPECT_THAT(typo.err, StartsWith("toolvfs: tool 'typo' could not start: program 'pyhton3' was not found on the "
                                   "PATH tools get (/usr/local/bin:/usr/bin:/bin)"));
  EXPECT_THAT(typo.err, Not(HasSubstr("sandbox")));
  ProcessResult gone = Toolvfs({"run", "gone"});
  EXPECT_EQ(gone.exit_code, 2);
  EXPECT_THAT(gone.err, HasSubstr("program './not-there.sh' does not exist (looked for '" + root_ + "/not-there.sh')"));
  EXPECT_THAT(gone.err, Not(HasSubstr("sandbox")));
}

TEST_F(RunExecTest, ABrokenConfigPointsToCheck) {
  Write("toolvfs.toml", "[tools.a]\ncommand = 3\n");
  ProcessResult result = Toolvfs({"run", "a"});
  EXPECT_EQ(result.exit_code, 2);
  ExpectOneLineError(result);
  EXPECT_THAT(result.err, EndsWith("(toolvfs check --config 'toolvfs.toml' lists every error)\n"));
}

TEST_F(RunExecTest, BadArgsJsonNamesThePosition) {
  ProcessResult result = Toolvfs({"run", "echo", "--args", "{\"path\": \"a\",\n \"depth\": tru}"});
  EXPECT_EQ(result.exit_code, 2);
  ExpectOneLineError(result);
  EXPECT_THAT(result.err, HasSubstr("Invalid JSON on the command line at line 2, column "));
  EXPECT_THAT(result.err, HasSubstr("Invalid value (at '}', after "));
}

TEST_F(RunExecTest, HelpListsOnlyTheOptionsACommandUsesWithAnExampleAndEveryExitCode) {
  ProcessResult check = Toolvfs({"check", "--help"});
  EXPECT_EQ(check.exit_code, 0);
  EXPECT_THAT(check.out, AllOf(HasSubstr("--config"), HasSubstr("--json"), HasSubstr("\nExample: toolvfs check"),
                               Not(HasSubstr("--sandbox")), Not(HasSubstr("--no-interaction")),
                               Not(HasSubstr("--audit"))));
  ProcessResult exec = Toolvfs({"exec", "--help"});
  EXPECT_THAT(exec.out, AllOf(HasSubstr("--answer"), HasSubstr("--sandbox"), Not(HasSubstr("--config")),
                              HasSubstr("\nExample: toolvfs exec")));
  for (const char* command : {"run", "exec"}) {
    ProcessResult help = Toolvfs({command, "--help"});
    EXPECT_THAT(help.out, AllOf(HasSubstr("0 completed"), HasSubstr("1 the tool"), HasSubstr("2 usage"),
                                HasSubstr("3 needs input"), HasSubstr("4 the OS sandbox cannot be enforced"),
                                HasSubstr("124 timeout"), HasSubstr("130 cancelled")))
        << command;
  }
  ProcessResult doctor = Toolvfs({"doctor", "--help"});
  EXPECT_THAT(doctor.out, AllOf(Not(HasSubstr("--project")), HasSubstr("Exit codes:")));
  // Options a command does not use are still accepted (a harness may pass
  // the same ones to every command).
  EXPECT_EQ(Toolvfs({"doctor", "--no-interaction"}).exit_code, 0);
}

TEST_F(RunExecTest, CheckJsonHasErrorsToolsAndPolicies) {
  ProcessResult valid = Toolvfs({"check", "--json"});
  // The config has a wasm tool: valid TOML, but a runtime this build does not run.
  EXPECT_EQ(valid.exit_code, 2);
  rapidjson::Document document = ParseJson(valid.out);
  EXPECT_FALSE(document["valid"].GetBool());
  EXPECT_STREQ(document["config"].GetString(), "toolvfs.toml");
  bool saw_reader = false;
  for (const auto& tool : document["tools"].GetArray()) {
    if (std::string(tool["name"].GetString()) == "wasm_tool") {
      EXPECT_TRUE(tool["runtime"].IsNull());
      EXPECT_THAT(tool["runtime_error"].GetString(), HasSubstr("wasm"));
    }
    if (std::string(tool["name"].GetString()) != "reader") continue;
    saw_reader = true;
    EXPECT_STREQ(tool["runtime"].GetString(), "vfs");
    std::string policy;
    for (const auto& line : tool["policy"].GetArray()) policy += std::string(line.GetString()) + "\n";
    EXPECT_THAT(policy, HasSubstr("read and write \"private\": deny (filesystem.deny)"));
  }
  EXPECT_TRUE(saw_reader);

  Write("toolvfs.toml", "[tools.a]\ncommand = 3\n");
  ProcessResult broken = Toolvfs({"check", "--json"});
  EXPECT_EQ(broken.exit_code, 2);
  rapidjson::Document errors = ParseJson(broken.out);
  EXPECT_FALSE(errors["valid"].GetBool());
  ASSERT_EQ(errors["errors"].Size(), 1u);
  EXPECT_THAT(errors["errors"][0].GetString(), StartsWith("toolvfs.toml:2:"));
}

TEST_F(RunExecTest, DoctorJsonHasTheFeaturesAndTheEnforcementTable) {
  ProcessResult result = Toolvfs({"doctor", "--json"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  rapidjson::Document document = ParseJson(result.out);
  ASSERT_TRUE(document["features"].IsArray());
  bool saw_landlock = false;
  for (const auto& feature : document["features"].GetArray()) {
    EXPECT_TRUE(feature["available"].IsBool());
    saw_landlock = saw_landlock || std::string(feature["name"].GetString()) == "landlock";
  }
  EXPECT_TRUE(saw_landlock);
  bool saw_seccomp = false;
  for (const auto& row : document["enforced"].GetArray()) {
    EXPECT_TRUE(row["vfs_tool"].IsString() && row["stdio_tool"].IsString() && row["process_run_child"].IsString());
    saw_seccomp = saw_seccomp || std::string(row["mechanism"].GetString()) == "seccomp filter";
  }
  EXPECT_TRUE(saw_seccomp);
}

TEST_F(RunExecTest, DebugLogLevelTellsTheConfigTheCommandAndEachRequest) {
  ProcessResult quiet = Toolvfs({"run", "reader"});
  EXPECT_THAT(quiet.err, Not(HasSubstr("debug")));
  ProcessResult result = Toolvfs({"run", "reader", "--log-level", "debug"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_THAT(result.err, HasSubstr("toolvfs: debug: config " + root_ + "/toolvfs.toml: "));
  EXPECT_THAT(result.err, HasSubstr("tool 'reader', runtime vfs, command 'python3' 'reader.py', arguments {}"));
  EXPECT_THAT(result.err, HasSubstr("toolvfs: debug: fs.read 'private/secret.txt': deny (filesystem.deny \"private\")"));
  EXPECT_THAT(result.err, HasSubstr("ended: error (denied), exit code 1 after "));
}

TEST_F(RunExecTest, ExecTakesAnswers) {
  ProcessResult result = Toolvfs({"exec", "--runtime", "stdio", "--answer", "go=yes", "--", "python3",
                                  "stdio_ask.py", "{{ tool.answers | tojson }}"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, "went: true\n");
}

TEST_F(RunExecTest, ExecNamesTheToolAfterItsScriptAndHintsNameTheFlag) {
  ExpectExecDenialNamingItsFlag("todo_writer.py", kTodoWriter,
                                "fs.write of 'todo.txt' was not covered by the policy of tool 'todo_writer.py' and "
                                "was denied without asking (no interaction); to allow it, pass --allow-write todo.txt",
                                "--allow-write", "todo.txt", "written");
  // A denial by a rule names the flag too; a program that is no interpreter keeps its name.
  ProcessResult sensitive = Toolvfs({"exec", "--no-interaction", "--args", "{}", "--", "python3", "-u",
                                     "reader.py"});
  EXPECT_THAT(sensitive.err, HasSubstr("tool 'reader.py' failed"));
}

// A URL's hint is the --allow-net flag with the URL's prefix (its query
// left out), and that flag lets the request through.
TEST_F(RunExecTest, ExecHintsNameAllowNetForAUrl) {
  // Allowed, the fetch fails on the closed port, not on the policy.
  ExpectExecDenialNamingItsFlag("url_fetcher.py", kUrlFetcher,
                                "http.get of 'http://127.0.0.1:9/api/items?page=2' was not covered by the policy of "
                                "tool 'url_fetcher.py' and was denied without asking (no interaction); to allow it, "
                                "pass --allow-net http://127.0.0.1:9/api/items",
                                "--allow-net", "http://127.0.0.1:9/api/items", "");
}

}  // namespace
}  // namespace toolvfs
