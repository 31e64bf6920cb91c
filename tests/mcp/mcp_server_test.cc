#include "mcp/mcp_server.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include <string>
#include <vector>

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
