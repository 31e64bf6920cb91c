// The vfs host against a failing store (FaultInjectingProjectFiles over an
// fs store, whose WithoutSymlinks() view is a separate object, so the
// faults must reach what handlers do through it):
// - every failure is one clear error line: the right JSON-RPC code and a
//   message naming the path and the cause;
// - nothing changes half-way: whichever of the store calls a request makes
//   fails, the tree is as it was before the request;
// - a real session keeps answering the next requests;
// - a stalled store call on a worker (grep, delete, rename) holds up no
//   other request and not the tool's cancel; one inline on the loop thread
//   (fs.read and the other small methods, methods.h) holds up the whole
//   session: a known limit, pinned down below.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <map>
#include <string>
#include <thread>

#include "host/method_test_util.h"
#include "host/methods.h"
#include "host/test_gate.h"
#include "project/fault_injecting_store.h"
#include "project/fs_store.h"
#include "project/test_util.h"
#include "runtime/outcome_text.h"
#include "runtime/vfs_runtime.h"

namespace toolvfs {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;

// Every file below `root` with its content, "<dir>" for a directory: the
// tree a request must leave as it was when it fails.
std::map<std::string, std::string> Snapshot(const std::string& root) {
  namespace fs = std::filesystem;
  std::map<std::string, std::string> tree;
  for (const fs::directory_entry& entry : fs::recursive_directory_iterator(root)) {
    std::string path = fs::relative(entry.path(), root).string();
    tree[path] = entry.is_directory() ? "<dir>" : ReadRealFile(entry.path().string());
  }
  return tree;
}

class FailingStoreMethodsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    WriteRealFile(dir_.Join("a.txt"), "old a\n");
    WriteRealFile(dir_.Join("src/one.py"), "one\n");
    WriteRealFile(dir_.Join("src/deep/two.py"), "two\n");
    WriteRealFile(dir_.Join("docs/readme.md"), "readme\n");
    Result<std::unique_ptr<ProjectFiles>> fs = OpenFsStore(dir_.path());
    ASSERT_TRUE(fs.ok());
    fs_ = std::move(fs).value();
    store_ = std::make_unique<FaultInjectingProjectFiles>(*fs_);
  }

  // The answer to `method` with `params_json`: the result as compact JSON,
  // or "error CODE: MESSAGE"; checks that it is one line.
  std::string Call(std::string_view method, std::string_view params_json) {
    DefaultGate gate(ProjectWritableTool());
    std::string answer = CallMethod(*store_, gate.gate, method, params_json);
    EXPECT_TRUE(!answer.empty() && answer.back() == '\n' && answer.find('\n') == answer.size() - 1) << answer;
    MessageParser parser;
    ParsedLine response = parser.Parse(std::string_view(answer).substr(0, answer.size() - 1));
    if (!response.is_message()) return "<not parsed: " + answer + ">";
    const Message& parsed = response.message();
    if (parsed.is_error()) {
      return "error " + std::to_string(parsed.error_code()) + ": " + std::string(parsed.error_message());
    }
    return parsed.result_json();
  }

  // Runs `method` once healthy on a scratch copy of the tree to count the
  // store calls it makes, then fails each of them in turn (Io, "injected")
  // and checks that the answer is that error and the tree is unchanged.
  // Returns how many calls there were.
  uint64_t FailEachCallOf(std::string_view method, std::string_view params_json,
                          std::string_view expected_success) {
    const std::map<std::string, std::string> before = Snapshot(dir_.path());
    uint64_t calls = 0;
    {
      TempDir scratch;
      std::filesystem::copy(dir_.path(), scratch.path(), std::filesystem::copy_options::recursive);
      Result<std::unique_ptr<ProjectFiles>> copy = OpenFsStore(scratch.path());
      EXPECT_TRUE(copy.ok());
      FaultInjectingProjectFiles counting(**copy);
      DefaultGate gate(ProjectWritableTool());
      std::string answer = CallMethod(counting, gate.gate, method, params_json);
      EXPECT_THAT(answer, HasSubstr(std::string(expected_success))) << "healthy run";
      calls = counting.calls();
    }
    EXPECT_GT(calls, 0u);
    for (uint64_t n = 1; n <= calls; ++n) {
      store_->ClearFaults();
      store_->FailNthCall(n, StatusCode::kIo, "injected");
      std::string answer = Call(method, params_json);
      EXPECT_THAT(answer, HasSubstr("error -32603: Cannot ")) << method << ", call " << n;
      EXPECT_THAT(answer, HasSubstr(": injected")) << method << ", call " << n;
      EXPECT_EQ(Snapshot(dir_.path()), before) << method << " changed the tree when call " << n << " failed";
    }
    store_->ClearFaults();
    return calls;
  }

  TempDir dir_;
  std::unique_ptr<ProjectFiles> fs_;
  std::unique_ptr<FaultInjectingProjectFiles> store_;
};

TEST_F(FailingStoreMethodsTest, AFailingReadIsOneInternalErrorNamingThePathAndTheCause) {
  store_->FailNthCall(1, StatusCode::kIo, "Input/output error");
  EXPECT_EQ(Call("fs.read", R"({"path":"src/one.py"})"),
            "error -32603: Cannot read 'src/one.py': Input/output error");
  EXPECT_EQ(Call("fs.read", R"({"path":"src/one.py"})"), R"({"content":"one\n","size":4})");
}

TEST_F(FailingStoreMethodsTest, EachReadingMethodAnswersAFailingStoreWithItsError) {
  store_->FailNthCall(1, StatusCode::kIo, "bad sector", StoreOperation::kListDir);
  EXPECT_EQ(Call("fs.list_dir", R"({"path":"src"})"), "error -32603: Cannot list 'src': bad sector");
  store_->FailNthCall(1, StatusCode::kIo, "bad sector", StoreOperation::kMetadata);
  EXPECT_EQ(Call("fs.metadata", R"({"path":"a.txt"})"), "error -32603: Cannot get metadata of 'a.txt': bad sector");
  store_->FailNthCall(1, StatusCode::kTimeout, "the server did not answer", StoreOperation::kExists);
  EXPECT_EQ(Call("fs.exists", R"({"path":"a.txt"})"),
            "error -32004: Cannot check 'a.txt': the server did not answer");
  store_->FailNthCall(1, StatusCode::kIo, "index unreadable", StoreOperation::kGrep);
  EXPECT_EQ(Call("fs.grep", R"({"pattern":"one"})"),
            "error -32603: Cannot search the project for 'one': index unreadable");
  store_->FailNthCall(1, StatusCode::kIo, "bad sector", StoreOperation::kResolvePath);
  EXPECT_EQ(Call("fs.grep", R"({"pattern":"one","paths":["src"]})"),
            "error -32603: Cannot resolve 'src': bad sector");
  EXPECT_EQ(Call("fs.exists", R"({"path":"a.txt"})"), R"({"exists":true})");
}

TEST_F(FailingStoreMethodsTest, AReadOnlyStoreRefusesEveryChangeWithPermissionDenied) {
  store_->SetReadOnly(true);
  const auto before = Snapshot(dir_.path());
  EXPECT_EQ(Call("fs.write", R"({"path":"a.txt","content":"new"})"),
            "error -32001: Cannot write 'a.txt': the store is read-only");
  EXPECT_EQ(Call("fs.write", R"({"path":"new/b.txt","content":"new","mode":"create"})"),
            "error -32001: Cannot write 'new/b.txt': the store is read-only");
  EXPECT_EQ(Call("fs.delete", R"({"path":"src","recursive":true})"),
            "error -32001: Cannot delete 'src': the store is read-only");
  EXPECT_EQ(Call("fs.rename", R"({"from":"src","to":"lib"})"),
            "error -32001: Cannot rename 'src' to 'lib': the store is read-only");
  EXPECT_EQ(Snapshot(dir_.path()), before);
  EXPECT_EQ(Call("fs.read", R"({"path":"a.txt"})"), R"({"content":"old a\n","size":6})");
}

TEST_F(FailingStoreMethodsTest, AFullDiskFailsWritesWithResourceExhaustedAndKeepsTheOldContent) {
  store_->FailWrites(StatusCode::kResourceExhausted, "No space left on device");
  EXPECT_EQ(Call("fs.write", R"({"path":"a.txt","content":"new","mode":"append"})"),
            "error -32602: Cannot write 'a.txt': No space left on device");
  EXPECT_EQ(ReadRealFile(dir_.Join("a.txt")), "old a\n");
}

// Whichever store call of a request fails, the request changes nothing.
TEST_F(FailingStoreMethodsTest, AWriteChangesNothingWhicheverStoreCallFails) {
  EXPECT_GE(FailEachCallOf("fs.write", R"({"path":"a.txt","content":"new a"})", R"("size":5)"), 2u);
  EXPECT_GE(FailEachCallOf("fs.write", R"({"path":"new/c.txt","content":"c","mode":"create"})", R"("size":1)"),
            2u);
}

TEST_F(FailingStoreMethodsTest, ARenameLeavesBothPathsAsTheyWereWhicheverStoreCallFails) {
  // A directory's move walks the tree below it first: many calls.
  EXPECT_GE(FailEachCallOf("fs.rename", R"({"from":"src","to":"docs/src"})", R"("result":{})"), 5u);
  EXPECT_GE(FailEachCallOf("fs.rename", R"({"from":"a.txt","to":"docs/readme.md","overwrite":true})",
                           R"("result":{})"),
            3u);
}

TEST_F(FailingStoreMethodsTest, ARecursiveDeleteDeletesNothingWhicheverStoreCallFails) {
  EXPECT_GE(FailEachCallOf("fs.delete", R"({"path":"src","recursive":true})", R"("result":{})"), 4u);
}

// The walk below a deleted or moved directory is the policy's only look at
// what is in it: a store that fails to say whether the path is a directory
// must fail the request, not let it act unchecked. (It used to take the
// failure for "not a directory" and delete src/.env with src.)
TEST_F(FailingStoreMethodsTest, AFailureBeforeTheWalkBelowADirectoryNeverActsUnchecked) {
  WriteRealFile(dir_.Join("src/.env"), "TOKEN=secret\n");
  EXPECT_THAT(Call("fs.delete", R"({"path":"src","recursive":true})"), HasSubstr("error -32001: "));
  store_->FailNthCall(1, StatusCode::kIo, "bad sector", StoreOperation::kMetadata);
  EXPECT_EQ(Call("fs.delete", R"({"path":"src","recursive":true})"), "error -32603: Cannot get metadata of 'src': bad sector");
  store_->FailNthCall(1, StatusCode::kTimeout, "no answer", StoreOperation::kMetadata);
  EXPECT_EQ(Call("fs.rename", R"({"from":"src","to":"lib"})"), "error -32004: Cannot get metadata of 'src': no answer");
  EXPECT_EQ(ReadRealFile(dir_.Join("src/.env")), "TOKEN=secret\n");
  EXPECT_TRUE(RealPathExists(dir_.Join("src/one.py")));
}

// --- Real sessions -----------------------------------------------------------

// Shared by every tool: read the init line, send/receive lines, finish.
constexpr std::string_view kPrelude = R"PY(
import json, sys
INIT = json.loads(sys.stdin.readline())
def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n"); sys.stdout.flush()
def recv():
    line = sys.stdin.readline()
    if not line:
        raise SystemExit("stdin closed")
    return json.loads(line)
def request(id, method, params):
    send({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
def call(id, method, params):
    request(id, method, params)
    return recv()
def result(content):
    send({"jsonrpc": "2.0", "method": "result", "params": {"content": content}})
)PY";

class FailingStoreSessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    WriteRealFile(project_dir_.Join("a.txt"), "old a\n");
    Result<std::unique_ptr<ProjectFiles>> fs = OpenFsStore(project_dir_.path());
    ASSERT_TRUE(fs.ok());
    fs_ = std::move(fs).value();
    store_ = std::make_unique<FaultInjectingProjectFiles>(*fs_);
    limits_.idle_timeout_s = 20;
    limits_.timeout_s = 60;
    limits_.cancel_grace_s = 1;
  }

  // Runs `body` (Python, after the prelude) as a sandboxed vfs tool over
  // the failing store.
  Outcome Run(std::string_view body) {
    std::string script = tool_dir_.Join("tool.py");
    std::ofstream(script) << kPrelude << body << "\n";
    ToolConfig tool = ProjectWritableTool();
    tool.name = "t";
    tool.command = CommandSpec{.program = "python3", .args = {script}};
    tool.sandbox.limits = limits_;
    VfsRuntime runtime(*store_, {.working_directory = tool_dir_.path(),
                                 .confinement = {.sandbox = SandboxMode::kRequire}});
    auto started = std::chrono::steady_clock::now();
    Result<Outcome> outcome = runtime.Execute(ToolCall{.name = "t", .arguments_json = "{}"}, tool, cancel_);
    elapsed_ = std::chrono::steady_clock::now() - started;
    EXPECT_TRUE(outcome.ok()) << outcome.status().message();
    return outcome.ok() ? std::move(outcome).value() : Outcome{};
  }

  static std::string Text(const Outcome& outcome) { return OutcomeText(outcome); }

  // Polls until `operation` was called `count` times, or `timeout` passed.
  bool WaitForCalls(StoreOperation operation, uint64_t count, std::chrono::milliseconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (store_->calls(operation) < count && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(10ms);
    }
    return store_->calls(operation) >= count;
  }

  TempDir tool_dir_;
  TempDir project_dir_;
  std::unique_ptr<ProjectFiles> fs_;
  std::unique_ptr<FaultInjectingProjectFiles> store_;
  LimitsConfig limits_;
  CancelToken cancel_;
  std::chrono::steady_clock::duration elapsed_{};
};

TEST_F(FailingStoreSessionTest, TheToolGetsOneErrorPerFailureAndTheSessionKeepsAnswering) {
  store_->FailNthCall(1, StatusCode::kIo, "disk on fire", StoreOperation::kWrite);
  store_->FailNthCall(1, StatusCode::kResourceExhausted, "no space left", StoreOperation::kRename);
  store_->FailNthCall(1, StatusCode::kTimeout, "the server did not answer", StoreOperation::kReadAuthorized);
  Outcome outcome = Run(R"PY(
answers = [call(1, "fs.write", {"path": "a.txt", "content": "new a"}),
           call(2, "fs.read", {"path": "a.txt"}),
           call(3, "fs.read", {"path": "a.txt"}),
           call(4, "fs.rename", {"from": "a.txt", "to": "b.txt"}),
           call(5, "fs.exists", {"path": "b.txt"}),
           call(6, "fs.write", {"path": "c.txt", "content": "c"})]
result(json.dumps([a.get("error") or a.get("result") for a in answers], sort_keys=True))
)PY");
  ASSERT_EQ(outcome.kind, Outcome::Kind::kCompleted);
  EXPECT_EQ(Text(outcome),
            R"([{"code": -32603, "message": "Cannot write 'a.txt': disk on fire"}, )"
            R"({"code": -32004, "message": "Cannot read 'a.txt': the server did not answer"}, )"
            R"({"content": "old a\n", "size": 6}, )"
            R"({"code": -32602, "message": "Cannot rename 'a.txt' to 'b.txt': no space left"}, )"
            R"({"exists": false}, {"size": 1}])");
  EXPECT_EQ(ReadRealFile(project_dir_.Join("a.txt")), "old a\n");
  EXPECT_EQ(ReadRealFile(project_dir_.Join("c.txt")), "c");
}

TEST_F(FailingStoreSessionTest, AReadOnlyStoreIsAPermissionErrorTheToolCanReadAndGoOnFrom) {
  store_->SetReadOnly(true);
  Outcome outcome = Run(R"PY(
w = call(1, "fs.write", {"path": "a.txt", "content": "new a"})
d = call(2, "fs.delete", {"path": "a.txt"})
r = call(3, "fs.read", {"path": "a.txt"})
result(json.dumps([w["error"], d["error"], r["result"]["content"]]))
)PY");
  EXPECT_EQ(Text(outcome),
            R"([{"code": -32001, "message": "Cannot write 'a.txt': the store is read-only"}, )"
            R"({"code": -32001, "message": "Cannot delete 'a.txt': the store is read-only"}, "old a\n"])");
}

// grep (like delete and rename) runs on a worker: while the store holds it,
// the loop serves the tool's other requests and its cancel.
TEST_F(FailingStoreSessionTest, AStalledGrepHoldsUpNoOtherRequestAndTheToolCanCancelIt) {
  store_->StallCalls(StoreOperation::kGrep);
  // Once the grep is held in the store, go.txt tells the tool to go on;
  // the stall is released once the tool has been served around the grep
  // (its marker write), or after 20 s if the loop was stuck.
  std::thread releaser([this] {
    if (store_->WaitForStalledCalls(1, 10s)) WriteRealFile(project_dir_.Join("go.txt"), "");
    static_cast<void>(WaitForCalls(StoreOperation::kWrite, 1, 20s));
    store_->ReleaseStalls();
  });
  Outcome outcome = Run(R"PY(
import time
request(1, "fs.grep", {"pattern": "old"})
polls = 0
while not call(100 + polls, "fs.exists", {"path": "go.txt"})["result"]["exists"]:
    polls += 1
    time.sleep(0.01)
r = call(2, "fs.read", {"path": "a.txt"})
send({"jsonrpc": "2.0", "method": "cancel", "params": {"id": 1}})
c = recv()
w = call(3, "fs.write", {"path": "marker.txt", "content": "x"})
result(json.dumps([r["result"]["content"], c["id"], c["error"]["code"], w["result"]]))
)PY");
  releaser.join();
  EXPECT_EQ(Text(outcome), R"(["old a\n", 1, -32005, {"size": 1}])");
  EXPECT_EQ(store_->calls(StoreOperation::kGrep), 1u);
}

// KNOWN LIMIT (pinned down here so that a fix shows up): the session joins
// its workers before it returns, so a store call that never returns holds
// the end of the run, even after the user's cancel reached the tool (which
// still gets its requests served meanwhile) and the tool exited.
// Invert this test when the host learns to abandon stalled workers.
TEST_F(FailingStoreSessionTest, KnownLimitAStalledWorkerHoldsTheEndOfACancelledRunUntilTheStoreReturns) {
  store_->StallCalls(StoreOperation::kGrep);
  std::atomic<bool> released{false};
  bool cancel_reached_the_tool = false;
  std::thread canceller([&] {
    ASSERT_TRUE(store_->WaitForStalledCalls(1, 10s));
    cancel_.Cancel();
    cancel_reached_the_tool = WaitForCalls(StoreOperation::kExists, 1, 5s);
    std::this_thread::sleep_for(500ms);
    released = true;
    store_->ReleaseStalls();
  });
  Outcome outcome = Run(R"PY(
request(1, "fs.grep", {"pattern": "old"})
message = recv()
assert message["method"] == "cancel", message
e = call(2, "fs.exists", {"path": "a.txt"})
assert e["result"]["exists"] is True, e
sys.exit(0)
)PY");
  const bool returned_after_release = released.load();
  canceller.join();
  EXPECT_EQ(outcome.kind, Outcome::Kind::kCancelled);
  EXPECT_TRUE(cancel_reached_the_tool);
  EXPECT_TRUE(returned_after_release);
}

// KNOWN LIMIT (pinned down here so that a fix shows up): the cancel token
// is watched by the loop thread, so while an inline request stalls in the
// store the user's cancel does not even reach the tool.
TEST_F(FailingStoreSessionTest, KnownLimitAStalledInlineReadHoldsUpTheUsersCancel) {
  store_->StallCalls(StoreOperation::kReadAuthorized);
  uint64_t exists_calls_during_stall = 99;
  std::thread canceller([&] {
    ASSERT_TRUE(store_->WaitForStalledCalls(1, 10s));
    cancel_.Cancel();
    std::this_thread::sleep_for(500ms);
    exists_calls_during_stall = store_->calls(StoreOperation::kExists);
    store_->ReleaseStalls();
  });
  Outcome outcome = Run(R"PY(
request(1, "fs.read", {"path": "a.txt"})
while True:
    message = recv()
    if message.get("method") == "cancel":
        call(2, "fs.exists", {"path": "a.txt"})
        sys.exit(0)
)PY");
  canceller.join();
  EXPECT_EQ(outcome.kind, Outcome::Kind::kCancelled);
  EXPECT_EQ(exists_calls_during_stall, 0u);  // the tool never heard of the cancel
  EXPECT_EQ(store_->calls(StoreOperation::kExists), 1u);  // it did once the read returned
}

// KNOWN LIMIT (pinned down here so that a fix shows up): fs.read, fs.write,
// fs.exists, fs.list_dir and fs.metadata run inline on the loop thread
// (methods.h, not may_block), so a store call that stalls in one holds up
// the whole session: no other request is served, and the cancel token and
// the timeouts, which the same thread watches, wait too.
TEST_F(FailingStoreSessionTest, KnownLimitAStalledInlineReadHoldsUpTheWholeSession) {
  store_->StallCalls(StoreOperation::kReadAuthorized);
  uint64_t exists_calls_during_stall = 99;
  std::thread releaser([this, &exists_calls_during_stall] {
    ASSERT_TRUE(store_->WaitForStalledCalls(1, 10s));
    std::this_thread::sleep_for(500ms);  // the tool sent fs.exists long ago
    exists_calls_during_stall = store_->calls(StoreOperation::kExists);
    store_->ReleaseStalls();
  });
  Outcome outcome = Run(R"PY(
request(1, "fs.read", {"path": "a.txt"})
request(2, "fs.exists", {"path": "a.txt"})
first, second = recv(), recv()
result(json.dumps([first["id"], second["id"]]))
)PY");
  releaser.join();
  EXPECT_EQ(Text(outcome), "[1, 2]");
  EXPECT_EQ(exists_calls_during_stall, 0u);
}

}  // namespace
}  // namespace toolvfs
