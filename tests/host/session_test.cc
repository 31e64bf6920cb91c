// The session loop and the vfs runtime end to end, with real tool
// subprocesses: raw NDJSON tools written in Python, so that every byte on
// the wire is under the test's control (the SDKs have their own suite).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "project/test_util.h"
#include "host/test_gate.h"
#include "core/text.h"
#include "host/tool_session.h"
#include "runtime/outcome_text.h"
#include "runtime/vfs_runtime.h"

namespace toolvfs {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// Shared by every tool: read the init line, send/receive lines, finish.
constexpr std::string_view kPrelude = R"PY(
import json, os, signal, subprocess, sys, time
INIT = json.loads(sys.stdin.readline())
def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n"); sys.stdout.flush()
def send_raw(text):
    sys.stdout.write(text); sys.stdout.flush()
def recv():
    line = sys.stdin.readline()
    if not line:
        raise SystemExit("stdin closed")
    return json.loads(line)
def call(id, method, params):
    send({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
    return recv()
def result(content):
    send({"jsonrpc": "2.0", "method": "result", "params": {"content": content}})
)PY";

class SessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<std::unique_ptr<ProjectFiles>> store = OpenProject("memory:test");
    ASSERT_TRUE(store.ok());
    project_ = std::move(store).value();
    limits_.idle_timeout_s = 20;
    limits_.timeout_s = 60;
    limits_.cancel_grace_s = 1;
  }

  // Runs `body` (Python, after the prelude) as a vfs tool.
  Outcome Run(std::string_view body, std::string arguments = "{}", std::string answers = "{}") {
    std::string script = dir_.Join("tool.py");
    std::ofstream(script) << kPrelude << body << "\n";
    ToolConfig tool = tool_;
    tool.name = "t";
    tool.command = CommandSpec{.program = "python3", .args = {script}};
    tool.sandbox.limits = limits_;
    VfsRuntime runtime(*project_, {.working_directory = dir_.path(),
                                   .confinement = {.sandbox = sandbox_},
                                   .inquirer = inquirer_,
                                   .audit = audit_,
                                   .reports = reports_});
    ToolCall call{.name = "t", .arguments_json = std::move(arguments), .answers_json = std::move(answers)};
    auto started = std::chrono::steady_clock::now();
    Result<Outcome> outcome = runtime.Execute(call, tool, cancel_);
    elapsed_ = std::chrono::steady_clock::now() - started;
    EXPECT_TRUE(outcome.ok()) << outcome.status().message();
    return outcome.ok() ? std::move(outcome).value() : Outcome{};
  }

  static std::string Text(const Outcome& outcome) { return OutcomeText(outcome); }

  // Cancels the run from another thread, as Ctrl+C or an embedder would.
  std::thread CancelAfter(std::chrono::milliseconds delay) {
    return std::thread([this, delay] {
      std::this_thread::sleep_for(delay);
      cancel_.Cancel();
    });
  }

  double Seconds() const { return std::chrono::duration<double>(elapsed_).count(); }

  // Running, not a zombie: a killed grandchild waits for init to reap it.
  // SIGKILL is asynchronous: give the kernel up to 2 s to finish a process.
  static bool ProcessAlive(pid_t pid) {
    for (int i = 0; i < 200 && ProcessRunning(pid); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return ProcessRunning(pid);
  }
  static bool ProcessRunning(pid_t pid) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string fields;
    if (!std::getline(stat, fields)) return false;
    size_t close = fields.rfind(')');
    return close != std::string::npos && close + 2 < fields.size() && fields[close + 2] != 'Z';
  }

  TempDir dir_;
  std::unique_ptr<ProjectFiles> project_;
  // The policy: the whole project readable and writable unless a test says
  // otherwise; no inquirer (uncovered requests denied) and no audit.
  ToolConfig tool_ = ProjectWritableTool();
  Inquirer* inquirer_ = nullptr;
  AuditSink* audit_ = nullptr;
  ToolReportSink* reports_ = nullptr;
  // The OS sandbox, as in production. Tests of what the loop does to a
  // tool's process group turn it off: their tools fork on purpose, which a
  // sandboxed vfs tool cannot (stdio tools can; the loop must handle both).
  std::optional<SandboxMode> sandbox_ = SandboxMode::kRequire;
  LimitsConfig limits_;
  CancelToken cancel_;
  std::chrono::steady_clock::duration elapsed_{};
};

// `state` belongs to stateful tools: in a one-shot run even `stopped` is no
// final message, and a raw stateful tool gets `apply` answers with its typed
// input (tool_.stateful, answered from the call's answers by Execute).
TEST_F(SessionTest, StateIsIgnoredByOneShotRunsAndDrivesStatefulOnes) {
  std::string_view body = R"PY(
send({"jsonrpc": "2.0", "method": "state", "params": {"type": "waiting",
      "question": {"id": "n", "text": "How many?", "answer_type": "Text"}}})
if not STATEFUL:
    send({"jsonrpc": "2.0", "method": "state", "params": {"type": "stopped", "result": "not final"}})
    result("one-shot")
else:
    applied = recv()
    assert applied["method"] == "apply", applied
    send({"jsonrpc": "2.0", "method": "state", "params": {"type": "stopped", "result": [{"type": "text", "text": "got " + json.dumps(applied["params"]["input"])}]}})
)PY";
  EXPECT_EQ(Text(Run("STATEFUL = False\n" + std::string(body))), "one-shot");
  tool_.stateful = true;
  Outcome asked = Run("STATEFUL = True\n" + std::string(body));
  EXPECT_EQ(asked.kind, Outcome::Kind::kNeedsInput);
  ASSERT_TRUE(asked.question);
  EXPECT_EQ(asked.question->id, "n");
  std::string script = "STATEFUL = True\n" + std::string(body);
  EXPECT_EQ(Text(Run(script, "{}", R"({"n":"seven"})")), "got \"seven\"");
}

TEST_F(SessionTest, NothingAfterTheFinalStateCounts) {
  // A stateful tool that stops, then asks: the run is over, nobody is asked.
  tool_.stateful = true;
  Outcome outcome = Run(R"PY(
send({"jsonrpc": "2.0", "method": "state", "params": {"type": "stopped", "result": "done"}})
send({"jsonrpc": "2.0", "method": "state", "params": {"type": "waiting",
      "question": {"id": "late", "text": "Again?", "answer_type": "Text"}}})
send({"jsonrpc": "2.0", "method": "result", "params": {"content": "second result"}})
)PY");
  EXPECT_EQ(outcome.kind, Outcome::Kind::kCompleted);
  EXPECT_FALSE(outcome.question);
  EXPECT_EQ(Text(outcome), "done");
}

// What a sink was given, in order: "progress 0/100 a", "log info x: m",
// "end".
class RecordingReports final : public ToolReportSink {
 public:
  void OnProgress(const ToolProgress& progress) override {
    std::string entry = progress.tool + " progress " + std::to_string(static_cast<int>(progress.progress));
    if (progress.total) entry += "/" + std::to_string(static_cast<int>(*progress.total));
    if (!progress.message.empty()) entry += " " + progress.message;
    entries.push_back(entry);
  }
  void OnLog(const ToolLogLine& line) override {
    std::string entry = line.tool + " log " + std::string(ToolLogLevelName(line.level)) + " ";
    if (!line.logger.empty()) entry += line.logger + ": ";
    entry += line.message;
    if (!line.data_json.empty()) entry += " " + line.data_json;
    entries.push_back(entry);
  }
  void OnRunEnd() override { entries.push_back("end"); }

  std::vector<std::string> entries;
};

TEST_F(SessionTest, ToolProgressAndLogLinesReachTheSinkInOrder) {
  RecordingReports recorded;
  reports_ = &recorded;
  Outcome outcome = Run(R"PY(
send({"jsonrpc": "2.0", "method": "progress", "params": {"progress": 0, "total": 100, "message": "start"}})
send({"jsonrpc": "2.0", "method": "log", "params": {"level": "info", "message": "parsed", "logger": "parser", "data": {"files": 3}}})
send({"jsonrpc": "2.0", "method": "progress", "params": {"progress": 7}})
send({"jsonrpc": "2.0", "method": "log", "params": {"level": "emergency", "message": "not really"}})
result("done")
send({"jsonrpc": "2.0", "method": "log", "params": {"level": "info", "message": "after the result"}})
)PY");
  EXPECT_EQ(Text(outcome), "done");
  EXPECT_THAT(recorded.entries, ::testing::ElementsAre("t progress 0/100 start", "t log info parser: parsed {\"files\":3}",
                                                       "t progress 7", "t log emergency not really", "end"));
}

TEST_F(SessionTest, MalformedReportsAreDroppedWithOneWarningAndTheRunGoesOn) {
  RecordingReports recorded;
  reports_ = &recorded;
  Outcome outcome = Run(R"PY(
send({"jsonrpc": "2.0", "method": "progress", "params": {"progress": -1}})
send({"jsonrpc": "2.0", "method": "progress", "params": {"progress": "half"}})
send({"jsonrpc": "2.0", "method": "progress", "params": {"progress": 1, "total": 0}})
send({"jsonrpc": "2.0", "method": "log", "params": {"level": "verbose", "message": "x"}})
send({"jsonrpc": "2.0", "method": "log", "params": {"level": "info"}})
send({"jsonrpc": "2.0", "method": "log", "params": {"level": "info", "message": "x", "colour": "red"}})
send({"jsonrpc": "2.0", "method": "log", "params": {"level": "info", "message": "valid"}})
result("done")
)PY");
  EXPECT_EQ(outcome.kind, Outcome::Kind::kCompleted);
  EXPECT_FALSE(outcome.is_error);
  ASSERT_EQ(recorded.entries.size(), 3u) << ::testing::PrintToString(recorded.entries);
  EXPECT_EQ(recorded.entries[0],
            "t log warning toolvfs: Tool 't' sent an invalid 'progress' notification ('progress' must be a "
            "non-negative number); it was dropped, and so are later invalid ones of this run");
  EXPECT_EQ(recorded.entries[1], "t log info valid");
  EXPECT_EQ(recorded.entries[2], "end");
}

TEST_F(SessionTest, ReportsAreBoundedInSizeAndRate) {
  RecordingReports recorded;
  reports_ = &recorded;
  Outcome outcome = Run(R"PY(
send({"jsonrpc": "2.0", "method": "log", "params": {"level": "info", "message": "\u00e9" * 5000}})
send({"jsonrpc": "2.0", "method": "log", "params": {"level": "info", "message": "big data", "data": "x" * 20000}})
for i in range(400):
    send({"jsonrpc": "2.0", "method": "log", "params": {"level": "debug", "message": str(i)}})
result("done")
)PY");
  EXPECT_EQ(Text(outcome), "done");
  ASSERT_GE(recorded.entries.size(), 4u);
  // 10,000 bytes of two-byte characters, cut at 4096 on a boundary.
  EXPECT_THAT(recorded.entries[0], HasSubstr(" [message cut: 10000 bytes, the limit is 4096]"));
  EXPECT_TRUE(IsValidUtf8(recorded.entries[0]));
  EXPECT_EQ(recorded.entries[1], "t log info big data [data left out: 20002 bytes of JSON, the limit is 16384]");
  // A burst of 100, then 50 a second: most of the 400 are dropped, and
  // the count is reported once at the end, before `end`.
  const size_t delivered = recorded.entries.size() - 2 - 2;  // the two above, the warning, end
  EXPECT_LT(delivered, 400u);
  EXPECT_GE(delivered, 98u);  // the burst, less the two lines above
  const std::string& warning = recorded.entries[recorded.entries.size() - 2];
  EXPECT_THAT(warning, HasSubstr("t log warning toolvfs: Tool 't' reported faster than the host passes on: dropped " +
                                 std::to_string(400 - delivered) + " log line(s) over 50 per second and 0 progress"));
  EXPECT_EQ(recorded.entries.back(), "end");
}

TEST_F(SessionTest, InitCarriesToolHostAndMethods) {
  Outcome outcome = Run(R"PY(
p = INIT["params"]
assert INIT["jsonrpc"] == "2.0" and INIT["method"] == "init" and "id" not in INIT
result(json.dumps([p["tool"]["name"], p["tool"]["arguments"], p["tool"]["answers"],
                   p["protocol_version"], p["host"]["name"], p["host"]["root"],
                   p["host"]["concurrent_requests"], "fs.read" in p["host"]["methods"],
                   "fs.grep" in p["host"]["methods"]]))
)PY",
                        R"({"n":1,"s":"é"})");
  EXPECT_EQ(Text(outcome),
            R"(["t", {"n": 1, "s": "\u00e9"}, {}, "0.1.0", "toolvfs", "memory:test", true, true, true])");
}

TEST_F(SessionTest, ResultContentAsStringOrBlocks) {
  Outcome text = Run(R"PY(result("hello\nworld"))PY");
  ASSERT_FALSE(text.is_error);
  ASSERT_EQ(text.content.size(), 1u);
  EXPECT_EQ(text.content[0].type, "text");
  EXPECT_EQ(text.content[0].text, "hello\nworld");
  EXPECT_EQ(text.content[0].json, R"({"type":"text","text":"hello\nworld"})");

  Outcome blocks = Run(R"PY(
result([{"type": "text", "text": "a"},
        {"type": "resource", "resource": {"uri": "file:///x", "text": "body"}},
        {"type": "resource", "resource": {"uri": "file:///y"}}])
)PY");
  ASSERT_EQ(blocks.content.size(), 3u);
  EXPECT_EQ(blocks.content[1].type, "resource");
  EXPECT_EQ(blocks.content[1].text, "body");
  EXPECT_EQ(blocks.content[2].text, "[resource file:///y]");
  EXPECT_EQ(blocks.failure, StatusCode::kOk);
}

TEST_F(SessionTest, InvalidResultContentIsAnError) {
  Outcome outcome = Run(R"PY(result(42))PY");
  EXPECT_TRUE(outcome.is_error);
  EXPECT_THAT(Text(outcome), HasSubstr("neither a string nor an array"));
}

TEST_F(SessionTest, ErrorNotificationIsAnErrorOutcome) {
  Outcome outcome = Run(R"PY(
send({"jsonrpc": "2.0", "method": "error",
      "params": {"message": "Failed to parse input", "trace": ["a", "b"], "transient": True}})
)PY");
  EXPECT_TRUE(outcome.is_error);
  EXPECT_EQ(outcome.kind, Outcome::Kind::kCompleted);
  EXPECT_EQ(outcome.failure, StatusCode::kOk);
  ASSERT_TRUE(outcome.error);
  EXPECT_EQ(outcome.error->message, "Failed to parse input");
  EXPECT_EQ(outcome.error->trace, (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(outcome.error->transient);
}

TEST_F(SessionTest, ExitWithoutResultReportsStatusAndStderrTail) {
  Outcome outcome = Run(R"PY(
sys.stderr.write("loading\nboom: config missing\n"); sys.stderr.flush()
sys.exit(3)
)PY");
  EXPECT_TRUE(outcome.is_error);
  EXPECT_EQ(outcome.failure, StatusCode::kInternal);
  EXPECT_EQ(outcome.error->message,
            "Tool 't' exited with status 3 without sending a result; stderr ends with: boom: "
            "config missing");
  EXPECT_EQ(outcome.error->trace, (std::vector<std::string>{"loading", "boom: config missing"}));
  EXPECT_EQ(outcome.stderr_tail, "loading\nboom: config missing\n");
}

TEST_F(SessionTest, CrashIsNamedBySignal) {
  Outcome outcome = Run(R"PY(os.kill(os.getpid(), signal.SIGSEGV))PY");
  EXPECT_TRUE(outcome.is_error);
  EXPECT_THAT(outcome.error->message, HasSubstr("killed by signal SIGSEGV without sending a result"));
}

TEST_F(SessionTest, StderrTailKeepsTheLast64KiB) {
  Outcome outcome = Run(R"PY(
for i in range(20000):
    sys.stderr.write("line %05d\n" % i)
sys.stderr.flush()
result("ok")
)PY");
  EXPECT_FALSE(outcome.is_error);
  EXPECT_LE(outcome.stderr_tail.size(), kStderrTailBytes);
  EXPECT_GE(outcome.stderr_tail.size(), kStderrTailBytes - 16);
  EXPECT_THAT(outcome.stderr_tail, testing::EndsWith("line 19999\n"));
}

TEST_F(SessionTest, CancelIsSentThenTheToolIsStopped) {
  // The tool answers `cancel` by exiting: a prompt, clean cancellation.
  std::thread canceller = CancelAfter(std::chrono::milliseconds(300));
  Outcome outcome = Run(R"PY(
message = recv()
assert message["method"] == "cancel", message
sys.exit(0)
)PY");
  canceller.join();
  EXPECT_EQ(outcome.kind, Outcome::Kind::kCancelled);
  EXPECT_EQ(outcome.failure, StatusCode::kCancelled);
  EXPECT_LT(Seconds(), 1.0);
}

TEST_F(SessionTest, CancelledToolThatStillSendsAResultIsCancelled) {
  ASSERT_TRUE(project_->Write("a.txt", "x").ok());
  std::thread canceller = CancelAfter(std::chrono::milliseconds(300));
  // Requests are still served during the grace period.
  Outcome outcome = Run(R"PY(
message = recv()
assert message["method"] == "cancel", message
a = call(1, "fs.read", {"path": "a.txt"})
assert a["result"]["content"] == "x", a
result("partial work saved")
)PY");
  canceller.join();
  EXPECT_EQ(outcome.kind, Outcome::Kind::kCancelled);
  EXPECT_EQ(outcome.error->message, "Tool 't' was cancelled");
  EXPECT_LT(Seconds(), 1.0);
}

TEST_F(SessionTest, ToolIgnoringCancelIsKilledAfterTheGraces) {
  sandbox_ = std::nullopt;  // forks, and writes the pid file directly
  std::string pid_file = dir_.Join("child.pid");
  std::thread canceller = CancelAfter(std::chrono::milliseconds(200));
  Outcome outcome = Run(R"PY(
signal.signal(signal.SIGTERM, signal.SIG_IGN)
child = subprocess.Popen(["sleep", "1000"])
open(")PY" + pid_file + R"PY(", "w").write(str(child.pid))
while True:
    time.sleep(1)
)PY");
  canceller.join();
  EXPECT_EQ(outcome.kind, Outcome::Kind::kCancelled);
  // cancel, 1 s grace, SIGTERM (ignored), 1 s grace, SIGKILL.
  EXPECT_GE(Seconds(), 2.0);
  EXPECT_LT(Seconds(), 4.0);
  pid_t child = std::stoi(ReadRealFile(pid_file));
  EXPECT_FALSE(ProcessAlive(child)) << "the tool's process group outlived the run";
}

TEST_F(SessionTest, AKillRequestStopsAToolIgnoringCancelWithoutItsGrace) {
  // The user's second Ctrl+C (CancelToken::RequestKill) during a 30 s grace.
  limits_.cancel_grace_s = 30;
  std::thread canceller = CancelAfter(std::chrono::milliseconds(200));
  std::thread killer([this] {
    std::this_thread::sleep_for(std::chrono::milliseconds(700));
    cancel_.RequestKill();
  });
  Outcome outcome = Run(R"PY(
signal.signal(signal.SIGTERM, signal.SIG_IGN)
while True:
    time.sleep(1)
)PY");
  canceller.join();
  killer.join();
  EXPECT_EQ(outcome.kind, Outcome::Kind::kCancelled);
  EXPECT_EQ(outcome.error->message, "Tool 't' was cancelled");
  EXPECT_LT(Seconds(), 15.0) << "the kill request waited for the grace period";
}

TEST_F(SessionTest, CancelBeforeStartStillStopsTheTool) {
  cancel_.Cancel();
  Outcome outcome = Run(R"PY(
time.sleep(30)
)PY");
  EXPECT_EQ(outcome.kind, Outcome::Kind::kCancelled);
  EXPECT_LT(Seconds(), 4.0);
}

TEST_F(SessionTest, SilentToolHitsTheIdleTimeout) {
  limits_.idle_timeout_s = 1;
  Outcome outcome = Run(R"PY(time.sleep(30))PY");
  EXPECT_TRUE(outcome.is_error);
  EXPECT_EQ(outcome.failure, StatusCode::kTimeout);
  EXPECT_EQ(outcome.error->message,
            "Tool 't' was silent for 1 s and was stopped (limits.idle_timeout_s)");
  EXPECT_LT(Seconds(), 3.0);
}

TEST_F(SessionTest, BusyToolHitsTheTotalTimeout) {
  limits_.idle_timeout_s = 1;
  limits_.timeout_s = 2;
  Outcome outcome = Run(R"PY(
i = 0
while True:
    i += 1
    call(i, "fs.exists", {"path": "x"})
    time.sleep(0.1)
)PY");
  EXPECT_EQ(outcome.failure, StatusCode::kTimeout);
  EXPECT_THAT(outcome.error->message, HasSubstr("timed out: it ran longer than 2 s (limits.timeout_s)"));
  EXPECT_GE(Seconds(), 2.0);
  EXPECT_LT(Seconds(), 4.0);
}

TEST_F(SessionTest, ToolThatClosesStdoutIsStoppedAfterTheGrace) {
  // Without stdout it can never send a result: it gets cancel_grace_s to
  // exit, not the idle timeout (20 s here).
  Outcome outcome = Run(R"PY(
os.close(1)
time.sleep(30)
)PY");
  EXPECT_TRUE(outcome.is_error);
  EXPECT_EQ(outcome.failure, StatusCode::kInternal);
  EXPECT_THAT(outcome.error->message, HasSubstr("killed by signal SIGKILL without sending a result"));
  EXPECT_LT(Seconds(), 3.0);
}

TEST_F(SessionTest, ProcessGroupIsGoneAfterAResult) {
  sandbox_ = std::nullopt;  // forks, and writes the pid file directly
  std::string pid_file = dir_.Join("child.pid");
  Outcome outcome = Run(R"PY(
child = subprocess.Popen(["sleep", "1000"])
open(")PY" + pid_file + R"PY(", "w").write(str(child.pid))
result("done")
)PY");
  EXPECT_EQ(Text(outcome), "done");
  EXPECT_FALSE(ProcessAlive(std::stoi(ReadRealFile(pid_file))));
}

TEST_F(SessionTest, ToolThatLingersAfterItsResultIsStopped) {
  Outcome outcome = Run(R"PY(
result("done")
time.sleep(30)
)PY");
  EXPECT_EQ(Text(outcome), "done");
  EXPECT_LT(Seconds(), 3.0);
}

TEST_F(SessionTest, BadLinesGetTheRightErrorsAndTheSessionGoesOn) {
  Outcome outcome = Run(R"PY(
answers = []
for line in ['not json\n', '[1,2]\n', '{"jsonrpc":"2.0","id":1,"method":"fs.exists","params":{"path":"a"}}\n',
             '"just a string"\n', '{"id":2,"method":"fs.exists"}\n',
             '{"jsonrpc":"2.0","id":3,"method":"fs.exists","params":{"path":"a"}}\n',
             '{"jsonrpc":"2.0","id":4}\n', '\n', '   \n',
             '{"jsonrpc":"2.0","id":5,"method":"read","params":{"path":"a"}}\n',
             '{"jsonrpc":"2.0","id":6,"method":"fs.nope"}\n',
             '{"jsonrpc":"2.0","id":7,"method":"fs.exists","params":{"path":5}}\n',
             '{"jsonrpc":"2.0","id":8,"method":"fs.exists","params":{"path":"a","x":1}}\n',
             '{"jsonrpc":"2.0","id":9,"method":"fs.exists","params":{"path":"a"}}\n']:
    send_raw(line)
    if line.strip():
        a = recv()
        answers.append([a.get("id"), a["error"]["code"] if "error" in a else a["result"]])
result(json.dumps(answers))
)PY");
  EXPECT_EQ(Text(outcome),
            R"([[null, -32700], [null, -32600], [1, {"exists": false}], [null, -32600], )"
            R"([2, -32600], [3, {"exists": false}], [4, -32600], [5, -32601], [6, -32601], )"
            R"([7, -32602], [8, -32602], [9, {"exists": false}]])");
}

TEST_F(SessionTest, UnnamespacedMethodNamesTheConvention) {
  Outcome outcome = Run(R"PY(
a = call(1, "read", {"path": "a"})
result(a["error"]["message"])
)PY");
  EXPECT_THAT(Text(outcome), AllOf(StartsWith("Method not found: 'read'; methods are namespaced"),
                                   HasSubstr("fs.read")));
}

TEST_F(SessionTest, ThreeProtocolErrorsInARowStopTheTool) {
  Outcome outcome = Run(R"PY(
for line in ["oops\n", "\n", "[]\n", "  \n", "{\"jsonrpc\": \"1.0\"}\n"]:
    send_raw(line)
time.sleep(30)
)PY");
  EXPECT_TRUE(outcome.is_error);
  EXPECT_EQ(outcome.failure, StatusCode::kInternal);
  EXPECT_THAT(outcome.error->message,
              AllOf(StartsWith("Tool 't' sent 3 invalid protocol lines in a row and was stopped"),
                    HasSubstr("'jsonrpc'")));
  EXPECT_LT(Seconds(), 3.0);
}

TEST_F(SessionTest, ErrorsSeparatedByValidMessagesDoNotStopTheTool) {
  Outcome outcome = Run(R"PY(
for i in range(5):
    send_raw("bad\n"); recv()
    send_raw("bad\n"); recv()
    call(i, "fs.nope", {})  # an error answer to a well-formed request resets the count
result("alive")
)PY");
  EXPECT_EQ(Text(outcome), "alive");
}

// One over-long line is one protocol error however long it is (SPEC.md
// §4.1): 30 MiB and 100 MiB lines under the default 10 MiB limit each get
// exactly one -32700, and the request after each is answered. The lines
// are written in pieces, as a pipe delivers them.
TEST_F(SessionTest, AnOverLongLineIsOneErrorHoweverLongAndTheSessionGoesOn) {
  ASSERT_TRUE(project_->Write("a.txt", "after").ok());
  Outcome outcome = Run(R"PY(
piece = "x" * (1 << 20)
answers = []
for mebibytes, id in [(30, 1), (100, 2)]:
    for _ in range(mebibytes):
        sys.stdout.write(piece)
    send_raw("\n")
    first = recv()
    second = call(id, "fs.read", {"path": "a.txt"})
    answers.append([first.get("id"), first["error"]["code"] if "error" in first else first.get("result"),
                    second.get("id"), second.get("result", second.get("error"))])
result(json.dumps(answers))
)PY");
  EXPECT_EQ(Text(outcome), R"([[null, -32700, 1, {"content": "after", "size": 5}], )"
                           R"([null, -32700, 2, {"content": "after", "size": 5}]])");
}

// A line that never ends is dropped as it comes (bounded memory, tested in
// ndjson_test) and is no line: the idle timeout stops the tool, naming why.
TEST_F(SessionTest, FloodWithoutNewlinesIsStoppedByTheIdleTimeout) {
  limits_.max_message_mb = 1;
  limits_.idle_timeout_s = 1;
  Outcome outcome = Run(R"PY(
chunk = "x" * 65536
while True:
    sys.stdout.write(chunk)
)PY");
  EXPECT_TRUE(outcome.is_error);
  EXPECT_EQ(outcome.failure, StatusCode::kTimeout);
  EXPECT_THAT(outcome.error->message,
              AllOf(HasSubstr("sent no complete line for 1 s and was stopped"),
                    HasSubstr("a line longer than the limit of 1048576 bytes")));
  EXPECT_LT(Seconds(), 10.0);
}

TEST_F(SessionTest, UnterminatedLastLineIsNotProcessed) {
  Outcome outcome = Run(R"PY(
send_raw('{"jsonrpc":"2.0","method":"result","params":{"content":"x"}}')
)PY");
  EXPECT_TRUE(outcome.is_error);
  EXPECT_THAT(outcome.error->message, HasSubstr("exited with status 0 without sending a result"));
}

TEST_F(SessionTest, ToolThatNeverReadsCannotStallTheHost) {
  ASSERT_TRUE(project_->Write("big.txt", std::string(100 << 10, 'a')).ok());
  // 300 answers of 100 KiB: far more than a pipe holds. The host keeps
  // reading requests while its answers wait, so the tool gets to send its
  // result without reading a single answer.
  Outcome outcome = Run(R"PY(
for i in range(300):
    send({"jsonrpc": "2.0", "id": i, "method": "fs.read", "params": {"path": "big.txt"}})
result("sent all")
)PY");
  EXPECT_EQ(Text(outcome), "sent all");
}

TEST_F(SessionTest, ToolThatNeverReadsAndNeverStopsEndsByIdleTimeout) {
  limits_.idle_timeout_s = 1;
  ASSERT_TRUE(project_->Write("big.txt", std::string(1 << 20, 'a')).ok());
  Outcome outcome = Run(R"PY(
i = 0
while True:
    i += 1
    send({"jsonrpc": "2.0", "id": i, "method": "fs.read", "params": {"path": "big.txt"}})
)PY");
  EXPECT_EQ(outcome.failure, StatusCode::kTimeout);
  EXPECT_THAT(outcome.error->message, HasSubstr("of answers on its stdin"));
}

TEST_F(SessionTest, ManyRequestsInFlightAreAnsweredOutOfOrder) {
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(project_->Write("f" + std::to_string(i) + ".txt", "needle " + std::to_string(i)).ok());
  }
  // One write: a grep (worker thread) first, then 40 reads (inline); the
  // reads are answered before the grep.
  Outcome outcome = Run(R"PY(
lines = [json.dumps({"jsonrpc": "2.0", "id": "grep", "method": "fs.grep", "params": {"pattern": "needle"}})]
for i in range(40):
    lines.append(json.dumps({"jsonrpc": "2.0", "id": i, "method": "fs.read", "params": {"path": "f%d.txt" % (i % 20)}}))
send_raw("\n".join(lines) + "\n")
order = []
got = {}
for _ in range(41):
    a = recv()
    order.append(a["id"])
    got[a["id"]] = a["result"]
assert all(got[i]["content"] == "needle %d" % (i % 20) for i in range(40))
assert len(got["grep"]["matches"]) == 20
result(json.dumps([sorted(order, key=str) == sorted(["grep"] + list(range(40)), key=str),
                   order.index("grep")]))
)PY");
  EXPECT_EQ(Text(outcome), "[true, 40]");
}

TEST_F(SessionTest, ReusedIdOfARequestInProgressIsRejected) {
  Outcome outcome = Run(R"PY(
req = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "fs.grep", "params": {"pattern": "x"}})
send_raw(req + "\n" + req + "\n")
a, b = recv(), recv()
result(json.dumps([a["id"], a.get("error", {}).get("code"), b["id"], "result" in b]))
)PY");
  EXPECT_EQ(Text(outcome), "[7, -32600, 7, true]");
}

TEST_F(SessionTest, ToolCancelsItsOwnRequest) {
  Outcome outcome = Run(R"PY(
req = json.dumps({"jsonrpc": "2.0", "id": 9, "method": "fs.grep", "params": {"pattern": "x"}})
cancel = json.dumps({"jsonrpc": "2.0", "method": "cancel", "params": {"id": 9}})
send_raw(req + "\n" + cancel + "\n")
a = recv()
b = call(10, "fs.exists", {"path": "a"})
result(json.dumps([a["id"], a["error"]["code"], a["error"]["message"], b["id"]]))
)PY");
  EXPECT_EQ(Text(outcome), R"([9, -32005, "Cancelled: request 9 was cancelled by the tool", 10])");
}

// The contents fs.read answers in one piece whatever their encoding
// (docs/protocol.md, "Size limits"): built the same way here and in the
// tool, which compares what it got byte for byte.
constexpr std::string_view kReadLimitContents = R"PY(
MIB = 1 << 20
CONTENTS = {
    "text.txt": b"a" * (10 * MIB),
    "newlines.txt": b"\n" * (10 * MIB),
    # \u0001 and \u001f take six bytes each in JSON, quotes and backslashes two.
    "escapes.txt": (b"\x01\"\\\x1f" * (10 * MIB // 4)),
    "binary_7_6.bin": bytes(range(256)) * (int(7.6 * MIB) // 256),
    "binary_10.bin": b"\xff" * (10 * MIB),
}
)PY";

TEST_F(SessionTest, EveryFileWithinTheReadLimitIsReadWholeInOneRead) {
  // The same contents written by Python into an fs store for this test.
  std::string script = dir_.Join("contents.py");
  std::ofstream(script) << kReadLimitContents << R"PY(
import os, sys
for name, data in CONTENTS.items():
    with open(os.path.join(sys.argv[1], name), "wb") as f:
        f.write(data)
)PY";
  const std::string root = dir_.Join("project");
  std::filesystem::create_directory(root);
  ASSERT_EQ(std::system(("python3 " + script + " " + root).c_str()), 0);
  Result<std::unique_ptr<ProjectFiles>> store = OpenProject(root);
  ASSERT_TRUE(store.ok()) << store.status().message();
  project_ = std::move(store).value();
  ASSERT_TRUE(project_->Write("over.txt", std::string((10 << 20) + 1, 'a')).ok());

  Outcome outcome = Run(std::string(kReadLimitContents) + R"PY(
import base64
report = {}
for i, (name, expected) in enumerate(CONTENTS.items()):
    a = call(i, "fs.read", {"path": name})
    if "error" in a:
        report[name] = a["error"]["message"]
        continue
    r = a["result"]
    got = base64.b64decode(r["content"]) if r.get("encoding") == "base64" else r["content"].encode()
    report[name] = [got == expected, r["size"] == len(expected), r.get("encoding", "text")]
over = call("over", "fs.read", {"path": "over.txt"})
report["over.txt"] = [over["error"]["code"], over["error"]["message"]]
result(json.dumps(report, sort_keys=True))
)PY");
  EXPECT_EQ(Text(outcome),
            R"({"binary_10.bin": [true, true, "base64"], "binary_7_6.bin": [true, true, "base64"], )"
            R"("escapes.txt": [true, true, "text"], "newlines.txt": [true, true, "text"], )"
            R"("over.txt": [-32602, "Cannot read 'over.txt': 10485761 bytes is larger than the read limit )"
            R"(of 10 MiB; read it in parts with offset and length"], "text.txt": [true, true, "text"]})");
}

TEST_F(SessionTest, TheLongestIdWithTheWorstReadStillFitsTheAnswerLimit) {
  // 10 MiB escaping to 60 MiB, and an id filling the rest of a request of
  // exactly the message limit: the answer limit's worst case.
  ASSERT_TRUE(project_->Write("controls.txt", std::string(10 << 20, '\x01')).ok());
  Outcome outcome = Run(R"PY(
prefix = '{"jsonrpc":"2.0","method":"fs.read","params":{"path":"controls.txt"},"id":"'
suffix = '"}'
ident = "i" * ((10 << 20) - len(prefix) - len(suffix))
send_raw(prefix + ident + suffix + "\n")
a = recv()
result(json.dumps([a["id"] == ident, len(a["result"]["content"])]))
)PY");
  EXPECT_EQ(Text(outcome), "[true, 10485760]");
}

TEST_F(SessionTest, AMessageLimitBelowTheReadLimitIsTheReadLimitAndSaysSo) {
  limits_.max_message_mb = 1;
  ASSERT_TRUE(project_->Write("big.txt", std::string((1 << 20) + 10, 'a')).ok());
  std::string escapes;
  for (int i = 0; i < (1 << 20) / 2; ++i) escapes += "\x01\"";
  ASSERT_TRUE(project_->Write("escapes.txt", escapes).ok());
  Outcome outcome = Run(R"PY(
a = call(1, "fs.read", {"path": "big.txt"})
b = call(2, "fs.read", {"path": "big.txt", "offset": 0, "length": 2000000})
c = call(3, "fs.read", {"path": "big.txt", "offset": 0, "length": 1000})
d = call(4, "fs.read", {"path": "escapes.txt"})
result(json.dumps([a["error"]["code"], a["error"]["message"], b["error"]["message"],
                   len(c["result"]["content"]), len(d["result"]["content"])]))
)PY");
  EXPECT_EQ(Text(outcome),
            R"([-32602, "Cannot read 'big.txt': 1048586 bytes is larger than the read limit of 1 MiB set )"
            R"(by this tool's message limit (max_message_mb); read it in parts with offset and length", )"
            R"("Cannot read 'big.txt': 1048586 bytes from offset 0 is larger than the read limit of 1 MiB set )"
            R"(by this tool's message limit (max_message_mb); read it in parts with offset and length", )"
            R"(1000, 1048576])");
}

TEST_F(SessionTest, AnswerOverTheAnswerLimitBecomesAnError) {
  limits_.max_message_mb = 1;
  // process.run's two streams, each cut at 1 MiB of control characters:
  // 12 MiB escaped, over the answer limit of 7 MiB + 4 KiB. (fs.grep, the
  // other way to get there, now stops its answer at the limit instead.)
  tool_.sandbox.commands["python3"] = CommandRule{};
  ASSERT_TRUE(project_->Write("wide.txt", "x").ok());
  Outcome outcome = Run(R"PY(
code = "import sys; sys.stdout.write(chr(1) * (2 << 20)); sys.stderr.write(chr(1) * (2 << 20))"
a = call(1, "process.run", {"program": "python3", "args": ["-c", code]})
b = call(2, "fs.exists", {"path": "wide.txt"})
result(json.dumps([a["error"]["code"], a["error"]["message"], b["result"]["exists"]]))
)PY");
  EXPECT_THAT(Text(outcome),
              AllOf(HasSubstr("-32602"),
                    HasSubstr("larger than the answer limit of 7344128 bytes (7 x max_message_mb + 4 KiB); "
                              "ask for less"),
                    HasSubstr(", true]")));
}

TEST_F(SessionTest, AGrepStopsItsAnswerAtTheAnswerLimit) {
  limits_.max_message_mb = 1;
  // One grep line of 2 MiB of control characters (12 MiB escaped) after
  // many short ones: the answer keeps the short ones and stops before it.
  std::string content;
  for (int line = 0; line < 1000; ++line) content += "needle " + std::to_string(line) + "\n";
  ASSERT_TRUE(project_->Write("a.txt", content).ok());
  ASSERT_TRUE(project_->Write("wide.txt", std::string(2 << 20, '\x01') + "needle\n").ok());
  Outcome outcome = Run(R"PY(
a = call(1, "fs.grep", {"pattern": "needle", "max_matches": 0})
r = a["result"]
result(json.dumps([r["truncated"], r["truncated_by"], [m["path"] for m in r["matches"]],
                   len(r["matches"][0]["lines"])]))
)PY");
  EXPECT_EQ(Text(outcome), R"([true, "max_result_bytes", ["a.txt"], 1000])");
}

TEST_F(SessionTest, HugeNumberOfRequests) {
  Outcome outcome = Run(R"PY(
import threading
N = 20000
def writer():
    out = []
    for i in range(N):
        out.append('{"jsonrpc":"2.0","id":%d,"method":"fs.exists","params":{"path":"p%d"}}\n' % (i, i))
    sys.stdout.write("".join(out)); sys.stdout.flush()
t = threading.Thread(target=writer); t.start()
seen = set()
for _ in range(N):
    seen.add(recv()["id"])
t.join()
result(str(len(seen)))
)PY");
  EXPECT_EQ(Text(outcome), "20000");
}

// --- Policy in the loop --------------------------------------------------------

// Records audit records; lets a test wait for one.
class RecordingAuditSink final : public AuditSink {
 public:
  void Record(const AuditRecord& record) override {
    std::lock_guard lock(mutex_);
    records_.push_back(record);
    changed_.notify_all();
  }
  // Waits up to 10 s for a record of `method`.
  bool WaitFor(std::string_view method) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, std::chrono::seconds(10), [&] {
      return std::any_of(records_.begin(), records_.end(),
                         [&](const AuditRecord& record) { return record.method == method; });
    });
  }
  std::vector<AuditRecord> records() {
    std::lock_guard lock(mutex_);
    return records_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<AuditRecord> records_;
};

// Answers every question with `answer`, but only once an fs.read has been
// audited: proof that the loop kept serving while the question was open.
class WaitingInquirer final : public Inquirer {
 public:
  WaitingInquirer(RecordingAuditSink& audit, InquiryAnswer answer) : audit_(audit), answer_(answer) {}
  Result<InquiryAnswer> Ask(const Inquiry& inquiry) override {
    asked_.push_back(inquiry);
    if (!audit_.WaitFor("fs.read")) return Status(StatusCode::kTimeout, "no fs.read was served meanwhile");
    return answer_;
  }
  bool asks_user() const override { return true; }
  std::vector<Inquiry> asked_;

 private:
  RecordingAuditSink& audit_;
  InquiryAnswer answer_;
};

TEST_F(SessionTest, UncoveredRequestIsAskedOnAWorkerAfterPendingWhileOthersAreServed) {
  ASSERT_TRUE(project_->Write("a.txt", "hello").ok());
  tool_ = ToolConfig{};  // the default policy: reads allowed, writes uncovered
  RecordingAuditSink audit;
  WaitingInquirer inquirer(audit, InquiryAnswer::kAllowForRun);
  inquirer_ = &inquirer;
  audit_ = &audit;
  Outcome outcome = Run(R"PY(
send({"jsonrpc": "2.0", "id": "w", "method": "fs.write", "params": {"path": "new.txt", "content": "x"}})
pending = recv()
assert pending.get("method") == "pending" and "id" not in pending, pending
assert pending["params"]["request_id"] == "w", pending
r = call("r", "fs.read", {"path": "a.txt"})
w = recv()
assert w["id"] == "w" and w["result"] == {"size": 1}, w
again = call("w2", "fs.write", {"path": "new.txt", "content": "yz"})
result(json.dumps([r["result"]["content"], again["result"], pending["params"]["reason"]]))
)PY");
  EXPECT_EQ(Text(outcome),
            R"(["hello", {"size": 2}, "asking the user to allow write of 'new.txt'"])");
  // Allowed for the rest of the run: the second write was not asked.
  ASSERT_EQ(inquirer.asked_.size(), 1u);
  EXPECT_EQ(inquirer.asked_[0].tool, "t");
  EXPECT_EQ(inquirer.asked_[0].operation, "write");
  EXPECT_EQ(inquirer.asked_[0].target, "new.txt");
  EXPECT_EQ(project_->Read("new.txt").value(), "yz");

  std::vector<AuditRecord> records = audit.records();
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[0].method, "fs.read");
  EXPECT_EQ(records[0].decision, AuditDecision::kAllow);
  EXPECT_EQ(records[1].method, "fs.write");
  EXPECT_EQ(records[1].target, "new.txt");
  EXPECT_EQ(records[1].decision, AuditDecision::kAskedAllow);
  EXPECT_EQ(records[1].rule, "user");
  EXPECT_EQ(records[2].decision, AuditDecision::kAskedAllow);
  EXPECT_EQ(records[2].rule, "user, for this run");
  for (const AuditRecord& record : records) {
    EXPECT_EQ(record.tool, "t");
    EXPECT_EQ(record.code, 0);
    EXPECT_EQ(record.call_id, records[0].call_id);
    EXPECT_GT(record.bytes_in, 0u);
    EXPECT_GT(record.bytes_out, 0u);
  }
  EXPECT_THAT(records[0].call_id, StartsWith("c-"));
}

TEST_F(SessionTest, UserDenialForTheRunIsRecordedAndRemembered) {
  ASSERT_TRUE(project_->Write("a.txt", "hello").ok());
  tool_ = ToolConfig{};
  RecordingAuditSink audit;
  WaitingInquirer inquirer(audit, InquiryAnswer::kDenyForRun);
  inquirer_ = &inquirer;
  audit_ = &audit;
  Outcome outcome = Run(R"PY(
send({"jsonrpc": "2.0", "id": "w", "method": "fs.write", "params": {"path": "new.txt", "content": "x"}})
assert recv()["method"] == "pending"
call("r", "fs.read", {"path": "a.txt"})
w = recv()
again = call("w2", "fs.write", {"path": "new.txt", "content": "y"})
result(json.dumps([w["error"]["code"], again["error"]["code"], again["error"]["message"]]))
)PY");
  EXPECT_EQ(Text(outcome),
            R"([-32001, -32001, "fs.write of 'new.txt' denied by the user for the rest of this run"])");
  EXPECT_EQ(inquirer.asked_.size(), 1u);
  EXPECT_FALSE(project_->Exists("new.txt").value());
  std::vector<AuditRecord> records = audit.records();
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[1].decision, AuditDecision::kAskedDeny);
  EXPECT_EQ(records[1].rule, "user");
  EXPECT_EQ(records[1].code, -32001);
  EXPECT_EQ(records[2].decision, AuditDecision::kAskedDeny);
  EXPECT_EQ(records[2].rule, "user, for this run");
}

// Asks until the run cancels the question (Inquirer::Cancel), like a user
// who never answers.
class NeverAnsweringInquirer final : public Inquirer {
 public:
  Result<InquiryAnswer> Ask(const Inquiry&) override {
    std::unique_lock lock(mutex_);
    asked_ = true;
    changed_.notify_all();
    changed_.wait_for(lock, std::chrono::seconds(30), [&] { return cancelled_; });
    return Status(StatusCode::kCancelled, "the question was cancelled");
  }
  bool asks_user() const override { return true; }
  void Cancel() override {
    std::lock_guard lock(mutex_);
    cancelled_ = true;
    changed_.notify_all();
  }
  bool WaitUntilAsked() {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, std::chrono::seconds(10), [&] { return asked_; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  bool asked_ = false;
  bool cancelled_ = false;
};

TEST_F(SessionTest, CancellingTheRunEndsAnOpenQuestion) {
  tool_ = ToolConfig{};  // writes uncovered
  limits_.cancel_grace_s = 30;  // the tool itself stops on `cancel`
  NeverAnsweringInquirer inquirer;
  inquirer_ = &inquirer;
  std::thread canceller([&] {
    if (inquirer.WaitUntilAsked()) cancel_.Cancel();
  });
  Outcome outcome = Run(R"PY(
send({"jsonrpc": "2.0", "id": "w", "method": "fs.write", "params": {"path": "new.txt", "content": "x"}})
cancelled = answered = None
while cancelled is None or answered is None:
    message = recv()
    if message.get("method") == "cancel":
        cancelled = True
    elif message.get("id") == "w":
        answered = message
# The tool waits for its write's answer before it stops: the question must
# end with the cancel, not when the tool is killed.
send({"jsonrpc": "2.0", "method": "error", "params": {"message": str(answered["error"]["code"])}})
)PY");
  canceller.join();
  EXPECT_EQ(outcome.kind, Outcome::Kind::kCancelled);
  ASSERT_TRUE(outcome.error.has_value());
  // Not the 30 s the question would wait, nor the grace.
  EXPECT_LT(Seconds(), 5.0);
  EXPECT_FALSE(project_->Exists("new.txt").value());
}

TEST_F(SessionTest, UncoveredRequestWithoutInquirerIsDeniedAtOnceWithoutPending) {
  tool_ = ToolConfig{};
  RecordingAuditSink audit;
  audit_ = &audit;
  Outcome outcome = Run(R"PY(
w = call("w", "fs.write", {"path": "new.txt", "content": "x"})
result(json.dumps([w["error"]["code"], w["error"]["message"]]))
)PY");
  EXPECT_THAT(Text(outcome), AllOf(StartsWith("[-32001, "), HasSubstr("new.txt"), HasSubstr("not covered")));
  EXPECT_FALSE(project_->Exists("new.txt").value());
  std::vector<AuditRecord> records = audit.records();
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].decision, AuditDecision::kDeny);
  EXPECT_EQ(records[0].code, -32001);
}

// Every answered request leaves exactly one audit record (SPEC.md §3.4),
// the ones refused before the policy saw them most of all: a tool probing
// for a way out is visible in the log, with what it named.
TEST_F(SessionTest, EveryAnsweredRequestLeavesOneAuditRecord) {
  // The fs store, for a symlink that leads out of the project.
  const std::string root = dir_.Join("project");
  std::filesystem::create_directory(root);
  WriteRealFile(dir_.Join("outside.txt"), "secret");
  MakeSymlink(dir_.Join("outside.txt"), root + "/link");
  Result<std::unique_ptr<ProjectFiles>> store = OpenProject("fs:" + root);
  ASSERT_TRUE(store.ok()) << store.status().message();
  project_ = std::move(store).value();
  ASSERT_TRUE(project_->Write("a.txt", "a").ok());
  RecordingAuditSink audit;
  audit_ = &audit;
  Outcome outcome = Run(R"PY(
requests = [
    ("fs.read", {"path": "../outside.txt"}),
    ("fs.read", {"path": "link"}),
    ("fs.grep", {"pattern": "secret", "paths": ["../"]}),
    ("fs.write", {"path": "a\u0001b", "content": "x"}),
    ("http.get", {"url": "http://a%00b/"}),
    ("http.get", {"url": "http://127.0.0.1:9/x", "headers": [{"name": "X A", "value": "v"}]}),
    ("fs.exists", {"path": 5}),
    ("fs.nope", {"path": "../../etc/passwd"}),
    ("process.run", {"program": "ls", "args": ["-l", "a b"], "bogus": 1}),
    ("fs.rename", {"from": "a.txt", "to": "../moved.txt"}),
    ("fs.rename", {"from": "a.txt", "to": "b.txt"}),
    ("fs.read", {"path": "b.txt"}),
]
codes = []
for i, (method, params) in enumerate(requests):
    answer = call(i, method, params)
    codes.append(answer["error"]["code"] if "error" in answer else 0)
result(json.dumps(codes))
)PY");
  EXPECT_EQ(Text(outcome),
            "[-32001, -32001, -32001, -32602, -32602, -32602, -32602, -32601, -32602, -32001, 0, 0]");
  struct Expected {
    std::string method, target;
    AuditDecision decision;
    std::string rule;
    int code;
  };
  const AuditDecision deny = AuditDecision::kDeny;
  const Expected expected[] = {
      {"fs.read", "../outside.txt", deny, "refused: access denied", -32001},
      {"fs.read", "link", deny, "refused: access denied", -32001},
      {"fs.grep", "../", deny, "refused: access denied", -32001},
      {"fs.write", "a\x01" "b", deny, "refused: invalid params", -32602},
      {"http.get", "http://a%00b/", deny, "refused: invalid params", -32602},
      {"http.get", "http://127.0.0.1:9/x", deny, "refused: invalid params", -32602},
      {"fs.exists", "5", deny, "refused: invalid params", -32602},
      {"fs.nope", "../../etc/passwd", deny, "refused: unknown method", -32601},
      {"process.run", "ls -l 'a b'", deny, "refused: invalid params", -32602},
      {"fs.rename", "a.txt -> ../moved.txt", deny, "refused: access denied", -32001},
      // Allowed: what the gate decided, once.
      {"fs.rename", "a.txt -> b.txt", AuditDecision::kAllow, "", 0},
      {"fs.read", "b.txt", AuditDecision::kAllow, "", 0},
  };
  std::vector<AuditRecord> records = audit.records();
  ASSERT_EQ(records.size(), std::size(expected));  // one each, no duplicates
  for (size_t i = 0; i < records.size(); ++i) {
    SCOPED_TRACE("request " + std::to_string(i) + ": " + expected[i].method + " " + expected[i].target);
    EXPECT_EQ(records[i].method, expected[i].method);
    EXPECT_EQ(records[i].target, expected[i].target);
    EXPECT_EQ(records[i].decision, expected[i].decision);
    EXPECT_EQ(records[i].code, expected[i].code);
    if (!expected[i].rule.empty()) {
      EXPECT_EQ(records[i].rule, expected[i].rule);
    }
    EXPECT_EQ(records[i].tool, "t");
    EXPECT_GT(records[i].bytes_in, 0u);
    EXPECT_GT(records[i].bytes_out, 0u);
  }
  EXPECT_EQ(ReadRealFile(dir_.Join("outside.txt")), "secret");
  EXPECT_FALSE(std::filesystem::exists(dir_.Join("moved.txt")));
}

// Requests the loop answers itself are recorded too, once: an id already
// in use, and a request the tool cancelled (recorded when its worker is
// done, with the -32005 the tool got).
TEST_F(SessionTest, RequestsAnsweredByTheLoopAreAuditedOnce) {
  RecordingAuditSink audit;
  audit_ = &audit;
  Outcome outcome = Run(R"PY(
req = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "fs.grep", "params": {"pattern": "x"}})
send_raw(req + "\n" + req + "\n")
recv(), recv()
grep = json.dumps({"jsonrpc": "2.0", "id": 9, "method": "fs.grep",
                   "params": {"pattern": "x", "paths": ["src"]}})
cancel = json.dumps({"jsonrpc": "2.0", "method": "cancel", "params": {"id": 9}})
send_raw(grep + "\n" + cancel + "\n")
a = recv()
result(json.dumps(a.get("error", {}).get("code")))
)PY");
  std::vector<AuditRecord> records = audit.records();
  std::vector<std::string> seen;
  for (const AuditRecord& record : records) {
    seen.push_back(record.method + " " + record.target + " " +
                   std::string(AuditDecisionName(record.decision)) + " " + std::to_string(record.code));
  }
  std::sort(seen.begin(), seen.end());
  // Both lines of each write are handled before a worker's answer: the
  // cancel always finds the grep in progress (or not yet started).
  EXPECT_EQ(Text(outcome), "-32005");
  EXPECT_THAT(seen, ::testing::ElementsAre("fs.grep . allow 0", "fs.grep . deny -32600",
                                           ::testing::AnyOf("fs.grep src allow -32005",
                                                            "fs.grep src deny -32005")));
}

TEST_F(SessionTest, RunningProcessIsKilledWhenTheToolEndsOrCancelsIt) {
  tool_.sandbox.commands["sleep"] = CommandRule{};
  // The tool cancels one run and leaves another running when it finishes:
  // neither holds the session up for the 30 s the children would take.
  Outcome outcome = Run(R"PY(
send({"jsonrpc": "2.0", "id": 1, "method": "process.run", "params": {"program": "sleep", "args": ["30"]}})
send({"jsonrpc": "2.0", "method": "cancel", "params": {"id": 1}})
answer = recv()
send({"jsonrpc": "2.0", "id": 2, "method": "process.run", "params": {"program": "sleep", "args": ["31"]}})
result(json.dumps(answer["error"]["code"]))
)PY");
  EXPECT_EQ(Text(outcome), "-32005");
  EXPECT_LT(Seconds(), 10.0);
}

// The OS sandbox under the vfs runtime (SPEC.md §5): the protocol is the
// only way out. The full malicious-tool corpus is tests/sandbox/.
TEST_F(SessionTest, SandboxedToolCanOnlyGoThroughTheHost) {
  ASSERT_TRUE(project_->Write("a.txt", "through the host").ok());
  std::string outside = dir_.Join("outside.txt");
  std::ofstream(outside) << "secret";
  Outcome outcome = Run(R"PY(
import socket
def attempt(action):
    try:
        action()
        return "allowed"
    except OSError as error:
        return type(error).__name__
report = {
    "read /etc/passwd": attempt(lambda: open("/etc/passwd").read()),
    "read outside": attempt(lambda: open(")PY" + outside + R"PY(").read()),
    "write /tmp": attempt(lambda: open("/tmp/toolvfs-sandbox-probe", "w").write("x")),
    "fork": attempt(lambda: subprocess.run(["true"])),
    "tcp socket": attempt(lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM)),
    "private tmp": attempt(lambda: open(os.environ["TMPDIR"] + "/scratch", "w").write("x")),
    "host read": call(1, "fs.read", {"path": "a.txt"})["result"]["content"],
}
result(json.dumps(report, sort_keys=True))
)PY");
  EXPECT_EQ(Text(outcome),
            R"({"fork": "PermissionError", "host read": "through the host", "private tmp": "allowed", )"
            R"("read /etc/passwd": "PermissionError", "read outside": "PermissionError", )"
            R"("tcp socket": "PermissionError", "write /tmp": "PermissionError"})");
  EXPECT_FALSE(std::filesystem::exists("/tmp/toolvfs-sandbox-probe"));
}

// Load, standing (issue 16 item 8): 32 sessions of one tool each, running
// at once through one runtime over an fs store, each sending 1,000
// requests one at a time (writes, reads, listings, metadata, greps). Every
// request is answered without error, with its own id and the content its
// session wrote, and the audit log gets exactly one line per request.
TEST_F(SessionTest, ThirtyTwoSessionsOfAThousandRequestsLoseNothing) {
  constexpr int kSessions = 32;
  constexpr int kRequests = 1000;
  TempDir root;
  Result<std::unique_ptr<ProjectFiles>> store = OpenProject(root.path());
  ASSERT_TRUE(store.ok()) << store.status().message();
  const std::string audit_path = dir_.Join("audit.jsonl");
  Result<std::unique_ptr<AuditSink>> audit = OpenAuditLogFile(audit_path);
  ASSERT_TRUE(audit.ok()) << audit.status().message();

  std::string script = dir_.Join("load_tool.py");
  std::ofstream(script) << kPrelude << R"PY(
me = INIT["params"]["tool"]["arguments"]["session"]
path = "s%d.txt" % me
errors = []
written = 0
for i in range(1, 1001):
    kind = (i - 1) % 5
    if kind == 0:
        answer = call(i, "fs.write", {"path": path, "content": "line %d\n" % i, "mode": "append"})
        written += 1
    elif kind == 1:
        answer = call(i, "fs.read", {"path": path})
        if "result" in answer and answer["result"]["content"].count("\n") != written:
            errors.append("read %d: %r" % (i, answer["result"]["content"][-40:]))
    elif kind == 2:
        answer = call(i, "fs.exists", {"path": path})
    elif kind == 3:
        answer = call(i, "fs.metadata", {"path": path})
    elif i % 50 == 0:
        answer = call(i, "fs.grep", {"pattern": "line %d$" % (i - 4), "paths": [path]})
        if "result" in answer and len(answer["result"]["matches"]) != 1:
            errors.append("grep %d: %r" % (i, answer["result"]))
    else:
        answer = call(i, "fs.list_dir", {"path": "", "limit": 1})
    if answer.get("id") != i or "error" in answer:
        errors.append("request %d: %r" % (i, answer))
result("%d answered, %d errors %s" % (1000, len(errors), errors[:3]))
)PY";
  ToolConfig tool = tool_;
  tool.name = "load";
  tool.command = CommandSpec{.program = "python3", .args = {script}};
  tool.sandbox.limits = limits_;
  VfsRuntime runtime(**store, {.working_directory = dir_.path(),
                              .confinement = {.sandbox = sandbox_},
                              .audit = audit->get()});

  std::vector<std::string> outcomes(kSessions);
  std::vector<std::thread> sessions;
  for (int session = 0; session < kSessions; ++session) {
    sessions.emplace_back([&, session] {
      CancelToken cancel;
      ToolCall call{.name = "load",
                    .id = "load-" + std::to_string(session),
                    .arguments_json = R"({"session":)" + std::to_string(session) + "}"};
      Result<Outcome> outcome = runtime.Execute(call, tool, cancel);
      outcomes[static_cast<size_t>(session)] = outcome.ok() ? Text(*outcome) : outcome.status().message();
    });
  }
  for (std::thread& session : sessions) session.join();

  for (int session = 0; session < kSessions; ++session) {
    EXPECT_EQ(outcomes[static_cast<size_t>(session)], "1000 answered, 0 errors []") << "session " << session;
    Result<std::string> content = (*store)->Read("s" + std::to_string(session) + ".txt");
    ASSERT_TRUE(content.ok());
    EXPECT_EQ(std::count(content->begin(), content->end(), '\n'), kRequests / 5);
  }
  audit->reset();  // closes the log
  std::ifstream log(audit_path);
  std::map<std::string, int> lines_per_run;
  int lines = 0;
  for (std::string line; std::getline(log, line); ++lines) {
    size_t call_id = line.find("\"load-");
    if (call_id != std::string::npos) ++lines_per_run[line.substr(call_id + 1, line.find('"', call_id + 1) - call_id - 1)];
  }
  EXPECT_EQ(lines, kSessions * kRequests);
  EXPECT_EQ(lines_per_run.size(), static_cast<size_t>(kSessions));
  for (const auto& [run, count] : lines_per_run) EXPECT_EQ(count, kRequests) << run;
}

}  // namespace
}  // namespace toolvfs
