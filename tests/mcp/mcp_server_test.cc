#include "mcp/mcp_server.h"

#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "mcp/mcp_stdio.h"

namespace toolvfs {
namespace {

// Offers one tool, "echo", which returns `reply` as its content, or fails
// to start when `start_error` is set.
class ScriptedHost final : public McpToolHost {
 public:
  std::vector<McpToolListing> ListTools() override {
    return {{"echo", "Says what it was told", R"({"type":"object"})"}};
  }
  Result<Outcome> CallTool(std::string_view name, const std::string& arguments_json, CancelToken&) override {
    if (name != "echo") return Status(StatusCode::kNotFound, "Invalid params: unknown tool '" + std::string(name) + "'");
    last_arguments = arguments_json;
    if (start_error) return Status(StatusCode::kInvalidArgument, "cannot start echo");
    Outcome outcome;
    outcome.content.push_back(ContentBlock::Text(reply));
    outcome.is_error = reply_is_error;
    return outcome;
  }
  std::string reply = "hi";
  bool reply_is_error = false;
  bool start_error = false;
  std::string last_arguments;
};

constexpr std::string_view kInitialize =
    R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})";

std::string Answer(McpServer& server, std::string_view line) {
  std::optional<WireMessage> answer = server.HandleLine(line);
  return answer ? answer->ToString() : std::string();
}

TEST(McpServerTest, InitializeAgreesOnAKnownVersion) {
  ScriptedHost host;
  McpServer server(host, {});
  const std::string answer = Answer(server,
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{}}})");
  EXPECT_NE(answer.find(R"("protocolVersion":"2025-03-26")"), std::string::npos) << answer;
  EXPECT_NE(answer.find(R"("tools":{"listChanged":false})"), std::string::npos) << answer;
  EXPECT_EQ(server.protocol_version(), "2025-03-26");
}

TEST(McpServerTest, InitializeOffersTheNewestForAnUnknownVersion) {
  ScriptedHost host;
  McpServer server(host, {});
  const std::string answer = Answer(server,
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"1999-01-01"}})");
  EXPECT_NE(answer.find(R"("protocolVersion":"2025-11-25")"), std::string::npos) << answer;
}

TEST(McpServerTest, InitializeWithoutVersionIsInvalidParams) {
  ScriptedHost host;
  McpServer server(host, {});
  const std::string answer = Answer(server, R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{}})");
  EXPECT_NE(answer.find("-32602"), std::string::npos) << answer;
  EXPECT_TRUE(server.protocol_version().empty());
}

TEST(McpServerTest, ToolsBeforeInitializeAreRefused) {
  ScriptedHost host;
  McpServer server(host, {});
  const std::string answer = Answer(server, R"({"jsonrpc":"2.0","id":2,"method":"tools/list"})");
  EXPECT_NE(answer.find("-32600"), std::string::npos) << answer;
  EXPECT_NE(answer.find("before initialize"), std::string::npos) << answer;
}

TEST(McpServerTest, PingWorksAnyTimeAndNotificationsGetNoAnswer) {
  ScriptedHost host;
  McpServer server(host, {});
  EXPECT_EQ(Answer(server, R"({"jsonrpc":"2.0","id":"p","method":"ping"})"),
            "{\"jsonrpc\":\"2.0\",\"id\":\"p\",\"result\":{}}\n");
  EXPECT_EQ(Answer(server, R"({"jsonrpc":"2.0","method":"notifications/initialized"})"), "");
}

TEST(McpServerTest, ListsToolsWithTheirSchema) {
  ScriptedHost host;
  McpServer server(host, {});
  Answer(server, kInitialize);
  const std::string answer = Answer(server, R"({"jsonrpc":"2.0","id":2,"method":"tools/list"})");
  EXPECT_NE(answer.find(R"({"name":"echo","description":"Says what it was told","inputSchema":{"type":"object"}})"),
            std::string::npos)
      << answer;
}

TEST(McpServerTest, CallsAToolWithItsArguments) {
  ScriptedHost host;
  McpServer server(host, {});
  Answer(server, kInitialize);
  const std::string answer = Answer(server,
      R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"x":1}}})");
  EXPECT_EQ(host.last_arguments, R"({"x":1})");
  EXPECT_NE(answer.find(R"("content":[{"type":"text","text":"hi"}],"isError":false)"), std::string::npos) << answer;
}

TEST(McpServerTest, ToolFailuresAreIsErrorResults) {
  ScriptedHost host;
  host.reply = "Access denied";
  host.reply_is_error = true;
  McpServer server(host, {});
  Answer(server, kInitialize);
  std::string answer = Answer(server, R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo"}})");
  EXPECT_NE(answer.find(R"("isError":true)"), std::string::npos) << answer;
  host.start_error = true;
  answer = Answer(server, R"({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo"}})");
  EXPECT_NE(answer.find(R"("text":"cannot start echo"}],"isError":true)"), std::string::npos) << answer;
}

TEST(McpServerTest, UnknownToolAndBadArgumentsAreInvalidParams) {
  ScriptedHost host;
  McpServer server(host, {});
  Answer(server, kInitialize);
  std::string answer = Answer(server, R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"nope"}})");
  EXPECT_NE(answer.find("-32602"), std::string::npos) << answer;
  answer = Answer(server, R"({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":[1]}})");
  EXPECT_NE(answer.find("'arguments' must be an object"), std::string::npos) << answer;
}

TEST(McpServerTest, UnknownMethodAndGarbageGetStandardErrors) {
  ScriptedHost host;
  McpServer server(host, {});
  Answer(server, kInitialize);
  EXPECT_NE(Answer(server, R"({"jsonrpc":"2.0","id":5,"method":"resources/list"})").find("-32601"), std::string::npos);
  const std::string answer = Answer(server, "not json");
  EXPECT_NE(answer.find("-32700"), std::string::npos) << answer;
  EXPECT_NE(answer.find(R"("id":null)"), std::string::npos) << answer;
}

TEST(McpServerTest, LongResultsAreCutWithANote) {
  ScriptedHost host;
  host.reply = std::string(10, 'a') + "\xC3\xA9";  // é straddles the 11-byte limit
  McpServerOptions options;
  options.max_result_bytes = 11;
  McpServer server(host, options);
  Answer(server, kInitialize);
  const std::string answer = Answer(server, R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo"}})");
  EXPECT_NE(answer.find(R"("text":"aaaaaaaaaa"})"), std::string::npos) << answer;
  EXPECT_NE(answer.find("2 bytes of the result cut at the 11-byte limit"), std::string::npos) << answer;
}

TEST(CutAtUtf8BoundaryTest, NeverSplitsASequence) {
  EXPECT_EQ(CutAtUtf8Boundary("ab", 5), "ab");
  EXPECT_EQ(CutAtUtf8Boundary("a\xE2\x82\xAC", 3), "a");
  EXPECT_EQ(CutAtUtf8Boundary("a\xE2\x82\xAC", 4), "a\xE2\x82\xAC");
}

}  // namespace
}  // namespace toolvfs

namespace toolvfs {
namespace {

// "wait" blocks until its call is cancelled; "echo" answers at once.
class BlockingHost final : public McpToolHost {
 public:
  std::vector<McpToolListing> ListTools() override { return {}; }
  Result<Outcome> CallTool(std::string_view name, const std::string&, CancelToken& cancel) override {
    if (name == "wait") {
      started.store(true);
      while (!cancel.cancelled()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      Outcome outcome;
      outcome.kind = Outcome::Kind::kCancelled;
      outcome.is_error = true;
      return outcome;
    }
    Outcome outcome;
    outcome.content.push_back(ContentBlock::Text("echoed"));
    return outcome;
  }
  std::atomic<bool> started{false};
};

TEST(McpServerSubmitTest, CallsOverlapAndACancelledCallGetsNoAnswer) {
  BlockingHost host;
  std::mutex mutex;
  std::vector<std::string> sent;
  const McpSend send = [&](const WireMessage& answer) {
    std::lock_guard lock(mutex);
    sent.push_back(answer.ToString());
  };
  {
    McpServer server(host, {});
    server.Submit(kInitialize, send);
    server.Submit(R"({"jsonrpc":"2.0","id":"w","method":"tools/call","params":{"name":"wait"}})", send);
    while (!host.started.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    // The waiting call does not hold up the next one.
    server.Submit(R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo"}})", send);
    for (;;) {
      std::lock_guard lock(mutex);
      if (sent.size() == 2) break;
    }
    EXPECT_NE(sent[1].find("echoed"), std::string::npos) << sent[1];
    server.Submit(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"w","reason":"bored"}})",
                  send);
  }  // the destructor waits for "wait", which ends because it was cancelled
  ASSERT_EQ(sent.size(), 2u) << sent.back();
}

TEST(McpServerSubmitTest, AnIdInUseByARunningCallIsRefused) {
  BlockingHost host;
  std::mutex mutex;
  std::vector<std::string> sent;
  const McpSend send = [&](const WireMessage& answer) {
    std::lock_guard lock(mutex);
    sent.push_back(answer.ToString());
  };
  {
    McpServer server(host, {});
    server.Submit(kInitialize, send);
    server.Submit(R"({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"wait"}})", send);
    server.Submit(R"({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo"}})", send);
    server.Submit(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}})", send);
  }
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_NE(sent[1].find("already in use"), std::string::npos) << sent[1];
}

}  // namespace
}  // namespace toolvfs

namespace toolvfs {
namespace {

// Collects what the server sends, for tests that drive Submit.
class Recorder {
 public:
  McpSend send = [this](const WireMessage& message) {
    std::lock_guard lock(mutex_);
    lines_.push_back(message.ToString());
    changed_.notify_all();
  };
  // Waits (up to 10 s) for a line containing `text`; returns it, or "".
  std::string WaitFor(std::string_view text) {
    std::unique_lock lock(mutex_);
    std::string found;
    changed_.wait_for(lock, std::chrono::seconds(10), [&] {
      for (const std::string& line : lines_) {
        if (line.find(text) != std::string::npos) {
          found = line;
          return true;
        }
      }
      return false;
    });
    return found;
  }
  std::vector<std::string> lines() {
    std::lock_guard lock(mutex_);
    return lines_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::string> lines_;
};

constexpr std::string_view kInitializeWithElicitation =
    R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}}}})";

// "info" has an output schema and returns a JSON object; "ask" asks the
// client with elicitation/create and returns the answer's text; "slow"
// counts work until cancelled or `release` is set.
class FeatureHost final : public McpToolHost {
 public:
  std::vector<McpToolListing> ListTools() override {
    McpToolListing info{"info", "", R"({"type":"object"})", R"({"type":"object"})", {}};
    info.annotations.read_only = true;
    info.annotations.open_world = false;
    return {info, {"ask", "", R"({"type":"object"})", "", {}}, {"slow", "", R"({"type":"object"})", "", {}},
            {"reports_late", "", R"({"type":"object"})", "", {}}};
  }
  Result<Outcome> CallTool(std::string_view, const std::string&, CancelToken&) override {
    return Status(StatusCode::kInternal, "the server must call CallToolInCall");
  }
  Result<Outcome> CallToolInCall(std::string_view name, const std::string&, McpCall& call) override {
    Outcome outcome;
    if (name == "info") {
      outcome.content.push_back(ContentBlock::Text(info_text));
    } else if (name == "ask") {
      if (!call.ClientHas("elicitation")) return Status(StatusCode::kUnsupported, "no elicitation");
      Result<std::string> answer = call.RequestClient("elicitation/create", R"({"message":"ok?"})");
      outcome.content.push_back(ContentBlock::Text(answer.ok() ? *answer : answer.status().message()));
      outcome.is_error = !answer.ok();
    } else if (name == "slow") {
      while (!call.cancel().cancelled() && !release.load()) {
        call.CountWork();
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
      outcome.content.push_back(ContentBlock::Text("slow done"));
    } else if (name == "reports_late") {
      // Reports its own progress only once the server's timed reports
      // have begun, with values below theirs.
      while (!call.cancel().cancelled() && !report.load()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
      call.ReportProgress(0.5, 1, "half");
      call.ReportProgress(1, 1, "all");
      outcome.content.push_back(ContentBlock::Text("reported"));
    } else {
      return Status(StatusCode::kNotFound, "unknown tool");
    }
    return outcome;
  }
  std::string info_text = R"({"size":3})";
  std::atomic<bool> release{false};
  std::atomic<bool> report{false};
};

TEST(McpServerFeatureTest, ListsOutputSchemaAndAnnotationsAndReturnsStructuredContent) {
  FeatureHost host;
  McpServer server(host, {});
  Answer(server, kInitialize);
  const std::string listed = Answer(server, R"({"jsonrpc":"2.0","id":2,"method":"tools/list"})");
  EXPECT_NE(listed.find(R"("name":"info","inputSchema":{"type":"object"},"outputSchema":{"type":"object"},)"
                        R"("annotations":{"readOnlyHint":true,"openWorldHint":false}})"),
            std::string::npos)
      << listed;
  EXPECT_NE(listed.find(R"({"name":"ask","inputSchema":{"type":"object"}})"), std::string::npos) << listed;
  std::string answer = Answer(server, R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"info"}})");
  EXPECT_NE(answer.find(R"("content":[{"type":"text","text":"{\"size\":3}"}],"structuredContent":{"size":3},)"
                        R"("isError":false)"),
            std::string::npos)
      << answer;
  // Text that is not a JSON object is no structured result.
  host.info_text = "[1]";
  answer = Answer(server, R"({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"info"}})");
  EXPECT_EQ(answer.find("structuredContent"), std::string::npos) << answer;
}

TEST(McpServerFeatureTest, ARequestToTheClientIsMatchedWithItsResponse) {
  FeatureHost host;
  Recorder recorder;
  {
    McpServer server(host, {});
    server.Submit(kInitializeWithElicitation, recorder.send);
    server.Submit(R"({"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"ask"}})", recorder.send);
    const std::string request = recorder.WaitFor("elicitation/create");
    ASSERT_NE(request, "");
    EXPECT_NE(request.find(R"("id":1,"method":"elicitation/create","params":{"message":"ok?"})"), std::string::npos)
        << request;
    // A response for an id never sent is ignored; the right one is taken.
    server.Submit(R"({"jsonrpc":"2.0","id":99,"result":{"action":"decline"}})", recorder.send);
    server.Submit(R"({"jsonrpc":"2.0","id":1,"result":{"action":"accept","content":{"decision":"deny"}}})",
                  recorder.send);
    const std::string answer = recorder.WaitFor(R"("id":"c")");
    EXPECT_NE(answer.find(R"(\"decision\":\"deny\")"), std::string::npos) << answer;
  }
}

TEST(McpServerFeatureTest, ARequestToTheClientTimesOutAndIsCancelled) {
  FeatureHost host;
  Recorder recorder;
  McpServerOptions options;
  options.client_request_timeout = std::chrono::milliseconds(200);
  {
    McpServer server(host, options);
    server.Submit(kInitializeWithElicitation, recorder.send);
    server.Submit(R"({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"ask"}})", recorder.send);
    const std::string answer = recorder.WaitFor(R"("id":5,"result")");
    EXPECT_NE(answer.find("did not answer elicitation/create within"), std::string::npos) << answer;
    EXPECT_NE(answer.find(R"("isError":true)"), std::string::npos) << answer;
    EXPECT_NE(recorder.WaitFor(R"("method":"notifications/cancelled","params":{"requestId":1)"), "");
  }
}

TEST(McpServerFeatureTest, ACancelledCallStopsWaitingForTheClient) {
  FeatureHost host;
  Recorder recorder;
  {
    McpServer server(host, {});
    server.Submit(kInitializeWithElicitation, recorder.send);
    server.Submit(R"({"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"ask"}})", recorder.send);
    ASSERT_NE(recorder.WaitFor("elicitation/create"), "");
    server.Submit(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":6}})", recorder.send);
    EXPECT_TRUE(server.WaitForCalls(std::chrono::seconds(5)));
    EXPECT_NE(recorder.WaitFor(R"("reason":"the tool call was cancelled")"), "");
  }
  for (const std::string& line : recorder.lines()) EXPECT_EQ(line.find(R"("id":6,)"), std::string::npos) << line;
}

TEST(McpServerFeatureTest, WithoutTheCapabilityTheToolIsNotAsked) {
  FeatureHost host;
  Recorder recorder;
  {
    McpServer server(host, {});
    server.Submit(kInitialize, recorder.send);
    server.Submit(R"({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"ask"}})", recorder.send);
    EXPECT_NE(recorder.WaitFor(R"("id":7,)").find("no elicitation"), std::string::npos);
  }
  for (const std::string& line : recorder.lines()) EXPECT_EQ(line.find("elicitation/create"), std::string::npos);
}

TEST(McpServerFeatureTest, ACallWithAProgressTokenGetsProgressUntilItsAnswer) {
  FeatureHost host;
  Recorder recorder;
  McpServerOptions options;
  options.progress_interval = std::chrono::milliseconds(20);
  {
    McpServer server(host, options);
    server.Submit(kInitialize, recorder.send);
    server.Submit(
        R"({"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"slow","_meta":{"progressToken":"tok"}}})",
        recorder.send);
    ASSERT_NE(recorder.WaitFor(R"("progressToken":"tok","progress":2,)"), "");
    host.release = true;
    ASSERT_NE(recorder.WaitFor(R"("id":8,)"), "");
  }
  const std::vector<std::string> lines = recorder.lines();
  uint64_t last = 0;
  bool answered = false;
  for (const std::string& line : lines) {
    if (line.find(R"("id":8,)") != std::string::npos) answered = true;
    const size_t at = line.find(R"("progress":)");
    if (at == std::string::npos) continue;
    EXPECT_FALSE(answered) << "progress after the answer: " << line;
    const uint64_t progress = std::stoull(line.substr(at + 11));
    EXPECT_GT(progress, last) << line;  // grows with every notification
    last = progress;
    EXPECT_NE(line.find(" requests of the tool decided by its policy"), std::string::npos) << line;
  }
  // No progress without a token.
  FeatureHost quiet;
  Recorder quiet_recorder;
  {
    McpServer server(quiet, options);
    server.Submit(kInitialize, quiet_recorder.send);
    server.Submit(R"({"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"slow"}})", quiet_recorder.send);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    quiet.release = true;
  }
  for (const std::string& line : quiet_recorder.lines()) EXPECT_EQ(line.find("notifications/progress"), std::string::npos);
}

TEST(McpServerFeatureTest, AToolsOwnProgressAfterTheTimedReportsGoesOnFromThem) {
  FeatureHost host;
  Recorder recorder;
  McpServerOptions options;
  options.progress_interval = std::chrono::milliseconds(20);
  {
    McpServer server(host, options);
    server.Submit(kInitialize, recorder.send);
    server.Submit(
        R"({"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"reports_late","_meta":{"progressToken":"t"}}})",
        recorder.send);
    ASSERT_NE(recorder.WaitFor(R"("progressToken":"t","progress":2,)"), "");
    host.report = true;
    ASSERT_NE(recorder.WaitFor(R"("id":12,)"), "");
  }
  // The tool's 0.5 of 1 and 1 of 1 come after timed reports 1, 2, … N:
  // shown as N+0.5 and N+1 of N+1, never dropped for being below N.
  std::vector<std::string> own;
  double last = 0;
  for (const std::string& line : recorder.lines()) {
    const size_t at = line.find(R"("progress":)");
    if (at == std::string::npos) continue;
    const double progress = std::stod(line.substr(at + 11));
    EXPECT_GT(progress, last) << line;
    last = progress;
    if (line.find(R"("message":"half")") != std::string::npos || line.find(R"("message":"all")") != std::string::npos) {
      own.push_back(line);
    }
  }
  ASSERT_EQ(own.size(), 2u);
  EXPECT_NE(own[1].find(R"("message":"all")"), std::string::npos);
  const size_t at = own[1].find(R"("progress":)");
  const size_t total_at = own[1].find(R"("total":)");
  ASSERT_NE(total_at, std::string::npos) << own[1];
  EXPECT_EQ(std::stod(own[1].substr(at + 11)), std::stod(own[1].substr(total_at + 8))) << own[1];
}

// A client that stops reading while a call reports progress: the progress
// being written waits for it (here: until `unblock`), but the server goes
// on taking messages; a cancellation still reaches the call at once.
TEST(McpServerFeatureTest, AClientThatStopsReadingDuringProgressDoesNotHoldUpCancellation) {
  FeatureHost host;
  std::mutex mutex;
  std::condition_variable changed;
  bool progress_blocked = false;
  bool unblock = false;
  std::vector<std::string> sent;
  const McpSend send = [&](const WireMessage& message) {
    std::unique_lock lock(mutex);
    sent.push_back(message.ToString());
    if (message.ToString().find("notifications/progress") == std::string::npos) return;
    progress_blocked = true;
    changed.notify_all();
    changed.wait(lock, [&] { return unblock; });
  };
  McpServerOptions options;
  options.progress_interval = std::chrono::milliseconds(10);
  McpServer server(host, options);
  server.Submit(kInitialize, send);
  server.Submit(
      R"({"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"slow","_meta":{"progressToken":"p"}}})",
      send);
  {
    std::unique_lock lock(mutex);
    ASSERT_TRUE(changed.wait_for(lock, std::chrono::seconds(10), [&] { return progress_blocked; }));
  }
  // The cancellation is taken while the progress write still waits.
  std::atomic<bool> cancel_taken{false};
  std::thread canceller([&] {
    server.Submit(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":13}})", send);
    cancel_taken = true;
  });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  while (!cancel_taken.load() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const bool taken_while_blocked = cancel_taken.load();
  {
    std::lock_guard lock(mutex);
    unblock = true;
  }
  changed.notify_all();
  canceller.join();
  EXPECT_TRUE(taken_while_blocked) << "notifications/cancelled waited for the client to read a progress notification";
  EXPECT_TRUE(server.WaitForCalls(std::chrono::seconds(10)));
  std::lock_guard lock(mutex);
  for (const std::string& line : sent) EXPECT_EQ(line.find(R"("id":13,)"), std::string::npos) << line;
}

TEST(McpServerFeatureTest, ACallAcceptedAfterCancelAllIsCancelledAtOnce) {
  // A stdio reader that waited for a free slot while the session ended
  // accepts its call after CancelAll; that call must not run on.
  FeatureHost host;
  Recorder recorder;
  McpServer server(host, {});
  server.Submit(kInitialize, recorder.send);
  server.CancelAll();
  server.Submit(R"({"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"name":"slow"}})", recorder.send);
  const bool ended = server.WaitForCalls(std::chrono::seconds(10));
  host.release = true;  // lets a call that was not cancelled end, so the test ends
  EXPECT_TRUE(ended) << "a call accepted after CancelAll kept running";
  for (const std::string& line : recorder.lines()) EXPECT_EQ(line.find(R"("id":21,)"), std::string::npos) << line;
}

TEST(McpServerFeatureTest, TwoCallsInOneReadAreBothAnsweredWithOneCallAtATime) {
  // The stdio reader holds the last call of a read to run it itself; with
  // a limit of one call, accepting the next call while holding one waited
  // for a slot that only the held call could free.
  FeatureHost host;
  McpServerOptions server_options;
  server_options.max_concurrent_calls = 1;
  McpServer server(host, server_options);
  int input[2], output[2];
  ASSERT_EQ(pipe(input), 0);
  ASSERT_EQ(pipe(output), 0);
  McpStdioOptions options;
  options.input_fd = input[0];
  options.output_fd = output[1];
  const std::string lines = std::string(kInitialize) + "\n" +
                            R"({"jsonrpc":"2.0","id":31,"method":"tools/call","params":{"name":"info"}})" "\n"
                            R"({"jsonrpc":"2.0","id":32,"method":"tools/call","params":{"name":"info"}})" "\n";
  ASSERT_EQ(write(input[1], lines.data(), lines.size()), static_cast<ssize_t>(lines.size()));
  close(input[1]);
  std::atomic<bool> served{false};
  std::thread serving([&] {
    McpStdioWriter writer(options);
    (void)ServeMcpOverStdio(server, writer, options);
    close(output[1]);
    served = true;
  });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!served.load() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (!served.load()) {
    ADD_FAILURE() << "the server hung with two calls in one read and max_concurrent_calls 1";
    std::_Exit(1);  // the serving thread cannot be stopped; a hang is the failure
  }
  serving.join();
  std::string answers;
  char buffer[4096];
  for (ssize_t got; (got = read(output[0], buffer, sizeof buffer)) > 0;) answers.append(buffer, static_cast<size_t>(got));
  close(input[0]);
  close(output[0]);
  EXPECT_NE(answers.find(R"("id":31,"result")"), std::string::npos) << answers;
  EXPECT_NE(answers.find(R"("id":32,"result")"), std::string::npos) << answers;
}

TEST(McpServerFeatureTest, ABadProgressTokenIsInvalidParams) {
  FeatureHost host;
  Recorder recorder;
  McpServer server(host, {});
  server.Submit(kInitialize, recorder.send);
  server.Submit(R"({"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"info","_meta":{"progressToken":[1]}}})",
                recorder.send);
  server.Submit(R"({"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"info","_meta":3}})", recorder.send);
  EXPECT_NE(recorder.WaitFor(R"("id":10,"error":{"code":-32602)").find("progressToken"), std::string::npos);
  EXPECT_NE(recorder.WaitFor(R"("id":11,"error":{"code":-32602)").find("'_meta' must be an object"), std::string::npos);
}

TEST(McpServerFeatureTest, LogMessagesFollowTheClientsLevel) {
  FeatureHost host;
  Recorder recorder;
  McpServer server(host, {});
  server.Log(ToolLogLevel::kError, "before initialize");  // nobody to tell yet
  server.Submit(kInitialize, recorder.send);
  server.Log(ToolLogLevel::kInfo, "below the default level");
  server.Log(ToolLogLevel::kWarning, "a warning");
  server.Submit(R"({"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"debug"}})", recorder.send);
  server.Log(ToolLogLevel::kDebug, "a detail");
  server.Submit(R"({"jsonrpc":"2.0","id":3,"method":"logging/setLevel","params":{"level":"loud"}})", recorder.send);
  server.Submit(R"({"jsonrpc":"2.0","id":4,"method":"logging/setLevel","params":{"level":7}})", recorder.send);
  const std::vector<std::string> lines = recorder.lines();
  ASSERT_EQ(lines.size(), 6u);
  EXPECT_EQ(lines[1], R"({"jsonrpc":"2.0","method":"notifications/message","params":{"level":"warning","logger":"toolvfs","data":"a warning"}})"
                      "\n");
  EXPECT_EQ(lines[2], "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n");
  EXPECT_NE(lines[3].find(R"("level":"debug","logger":"toolvfs","data":"a detail")"), std::string::npos) << lines[3];
  EXPECT_NE(lines[4].find("unknown log level 'loud'"), std::string::npos) << lines[4];
  EXPECT_NE(lines[5].find("-32602"), std::string::npos) << lines[5];
}

TEST(McpServerFeatureTest, ToolListChangesAreAnnouncedAfterInitialize) {
  FeatureHost host;
  Recorder recorder;
  McpServerOptions options;
  options.tools_list_changed = true;
  McpServer server(host, options);
  server.NotifyToolsChanged();  // before initialize: nothing
  server.Submit(kInitialize, recorder.send);
  EXPECT_NE(recorder.WaitFor(R"("tools":{"listChanged":true},"logging":{})"), "");
  server.NotifyToolsChanged();
  const std::vector<std::string> lines = recorder.lines();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1], "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\",\"params\":{}}\n");
}

TEST(McpServerFeatureTest, WrongParamTypesAndEarlyCallsGetClearErrors) {
  FeatureHost host;
  McpServer server(host, {});
  EXPECT_NE(Answer(server, R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"info"}})").find("before initialize"),
            std::string::npos);
  EXPECT_NE(Answer(server, R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":5}})").find("-32602"),
            std::string::npos);
  EXPECT_NE(Answer(server, R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":[]}})")
                .find("'capabilities' must be an object"),
            std::string::npos);
  Answer(server, kInitialize);
  std::string answer = Answer(server, R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":42}})");
  EXPECT_NE(answer.find("-32602"), std::string::npos) << answer;
  EXPECT_NE(answer.find("name"), std::string::npos) << answer;
  answer = Answer(server, R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"info","arguments":"x"}})");
  EXPECT_NE(answer.find("'arguments' must be an object"), std::string::npos) << answer;
  answer = Answer(server, R"({"jsonrpc":"2.0","id":4,"method":"tools/call"})");
  EXPECT_NE(answer.find("-32602"), std::string::npos) << answer;
  answer = Answer(server, R"({"jsonrpc":"1.0","id":5,"method":"ping"})");
  EXPECT_NE(answer.find("-32600"), std::string::npos) << answer;
  answer = Answer(server, R"([{"jsonrpc":"2.0","id":6,"method":"ping"}])");
  EXPECT_NE(answer.find("-326"), std::string::npos) << answer;
}

TEST(McpServerFeatureTest, CancelAllEndsEveryRunningCallWithoutAnswers) {
  FeatureHost host;
  Recorder recorder;
  McpServer server(host, {});
  server.Submit(kInitialize, recorder.send);
  for (int id = 20; id < 24; ++id) {
    server.Submit(R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"method":"tools/call","params":{"name":"slow"}})",
                  recorder.send);
  }
  EXPECT_FALSE(server.WaitForCalls(std::chrono::milliseconds(50)));
  server.CancelAll();
  EXPECT_TRUE(server.WaitForCalls(std::chrono::seconds(5)));
  EXPECT_EQ(recorder.lines().size(), 1u);
}

}  // namespace
}  // namespace toolvfs
