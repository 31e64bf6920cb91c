// The Tool of sdk/toolvfs/tool.h against a scripted host in the same
// process (two pipes): the exact request lines, answer decoding, errors,
// requests in flight answered out of order, threads, host notifications
// and the final messages. tool_e2e_test.cc runs tools against the real host.
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "toolvfs/tool.h"

namespace toolvfs {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr const char* kInit =
    R"({"jsonrpc":"2.0","method":"init","params":{"tool":{"name":"t","arguments":{"path":"a.txt","n":3},)"
    R"("answers":{"q":true},"options":{"fast":true}},"protocol_version":"0.1.0","host":{"name":"toolvfs",)"
    R"("version":"0.1.0","root":"/tmp/project","methods":["fs.read","fs.write"],"concurrent_requests":true}}})";

// The host's ends of the two pipes. The tool reads `to_tool` and writes
// `from_tool`; the fds stay owned here.
class FakeHost {
 public:
  FakeHost() {
    int to_tool[2], from_tool[2];
    if (pipe2(to_tool, O_CLOEXEC) != 0 || pipe2(from_tool, O_CLOEXEC) != 0) std::abort();
    tool_in_ = to_tool[0];
    host_out_ = to_tool[1];
    host_in_ = from_tool[0];
    tool_out_ = from_tool[1];
    reader_ = std::make_unique<LineReader>(host_in_);
  }
  ~FakeHost() {
    Stop();
    for (int fd : {tool_in_, host_out_, host_in_, tool_out_}) {
      if (fd >= 0) close(fd);
    }
  }

  ConnectOptions ToolSide() const { return ConnectOptions{tool_in_, tool_out_, false}; }

  void Send(std::string_view line) { ASSERT_TRUE(detail::write_all(host_out_, std::string(line) + "\n").ok()); }
  void Reply(int64_t id, const Json& result) {
    Send(R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"result":)" + result.dump() + "}");
  }
  void ReplyError(int64_t id, int code, std::string_view message) {
    Send(R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"error":{"code":)" + std::to_string(code) +
         R"(,"message":)" + Json(message).dump() + "}}");
  }
  // The host stops talking: the tool sees the end of its stdin.
  void CloseToTool() {
    close(host_out_);
    host_out_ = -1;
  }

  // The next line the tool wrote; nullopt once the tool side is closed.
  std::optional<std::string> ReadLine() {
    Result<std::optional<std::string_view>> line = reader_->next();
    if (!line.ok() || !line.value()) return std::nullopt;
    return std::string(*line.value());
  }
  // A line from the tool arrives within `timeout_ms`.
  bool LineReady(int timeout_ms) {
    if (reader_->has_line()) return true;
    pollfd readable{host_in_, POLLIN, 0};
    return poll(&readable, 1, timeout_ms) > 0;
  }
  Json ReadMessage() {
    std::optional<std::string> line = ReadLine();
    EXPECT_TRUE(line.has_value());
    return line ? Json::parse(*line).value() : Json();
  }

  // Answers every request on a thread: `handler` gets the request and
  // returns the `result` (or throws nothing and returns an Error).
  using Handler = std::function<Result<Json>(const Json& request)>;
  void Serve(Handler handler) {
    server_ = std::thread([this, handler = std::move(handler)] {
      while (std::optional<std::string> line = ReadLine()) {
        Json message = Json::parse(*line).value();
        {
          std::lock_guard lock(mutex_);
          lines_.push_back(*line);
        }
        if (!message.contains("id")) continue;  // a notification
        Result<Json> answer = handler(message);
        if (answer.ok()) {
          Reply(message["id"].as_int(), answer.value());
        } else {
          ReplyError(message["id"].as_int(), answer.error().code, answer.error().message);
        }
      }
    });
  }
  // Ends Serve: closes the tool's output so the server reads end of file.
  void Stop() {
    if (tool_out_ >= 0) {
      close(tool_out_);
      tool_out_ = -1;
    }
    if (server_.joinable()) server_.join();
  }
  std::vector<std::string> Lines() {
    std::lock_guard lock(mutex_);
    return lines_;
  }

 private:
  int tool_in_, host_out_, host_in_, tool_out_;
  std::unique_ptr<LineReader> reader_;
  std::thread server_;
  std::mutex mutex_;
  std::vector<std::string> lines_;
};

class SdkSessionTest : public ::testing::Test {
 protected:
  Tool Connect() {
    host_.Send(kInit);
    Result<Tool> tool = connect(host_.ToolSide());
    EXPECT_TRUE(tool.ok()) << tool.error().message;
    return std::move(tool).value();
  }
  FakeHost host_;
};

TEST_F(SdkSessionTest, ConnectReadsInit) {
  host_.Send("");  // blank lines before init are skipped
  Tool tool = Connect();
  EXPECT_EQ(tool.name(), "t");
  EXPECT_EQ(tool.arguments()["path"].as_string(), "a.txt");
  EXPECT_EQ(tool.arguments()["n"].as_int(), 3);
  EXPECT_TRUE(tool.answers()["q"].as_bool());
  EXPECT_TRUE(tool.options()["fast"].as_bool());
  EXPECT_EQ(tool.protocol_version(), "0.1.0");
  EXPECT_EQ(tool.host_version(), "0.1.0");
  EXPECT_EQ(tool.root(), "/tmp/project");
  EXPECT_THAT(tool.methods(), ElementsAre("fs.read", "fs.write"));
  EXPECT_TRUE(tool.has_method("fs.write"));
  EXPECT_FALSE(tool.has_method("http.get"));
  EXPECT_TRUE(tool.init()["host"]["concurrent_requests"].as_bool());
  EXPECT_FALSE(tool.cancelled());
}

TEST_F(SdkSessionTest, ConnectFailsWithoutInit) {
  host_.CloseToTool();
  Result<Tool> tool = connect(host_.ToolSide());
  ASSERT_FALSE(tool.ok());
  EXPECT_EQ(tool.error().code, kInvalidRequest);
  EXPECT_THAT(tool.error().message, HasSubstr("init"));
}

TEST_F(SdkSessionTest, ConnectFailsOnAnotherFirstMessage) {
  host_.Send(R"({"jsonrpc":"2.0","id":1,"result":{}})");
  Result<Tool> tool = connect(host_.ToolSide());
  ASSERT_FALSE(tool.ok());
  EXPECT_THAT(tool.error().message, HasSubstr("expected the host's init message first"));
}

// Every typed call: the exact request line it sends and what it makes of
// the answer.
TEST_F(SdkSessionTest, TypedCallsSendExactRequestsAndDecodeAnswers) {
  Tool tool = Connect();
  host_.Serve([](const Json& request) -> Result<Json> {
    const std::string& method = request["method"].as_string();
    const Json& params = request["params"];
    if (method == "fs.read" && params["path"].as_string() == "bin") {
      return Json::object({{"content", base64_encode(std::string("\xff\x00\x01", 3))}, {"size", 3},
                           {"encoding", "base64"}});
    }
    if (method == "fs.read") return Json::object({{"content", "héllo\n"}, {"size", 42}});
    if (method == "fs.write") return Json::object({{"size", 7}});
    if (method == "fs.exists") return Json::object({{"exists", params["path"].as_string() == "yes"}});
    if (method == "fs.list_dir") {
      return Json::object({{"entries", Json::array({Json::object({{"path", "a"}, {"kind", "file"}}),
                                                    Json::object({{"path", "d"}, {"kind", "dir"}})})},
                           {"total", 5}});
    }
    if (method == "fs.metadata") {
      return Json::object({{"kind", "file"}, {"size", 12}, {"modified", "2024-05-02T09:14:03.211Z"}});
    }
    if (method == "fs.delete" || method == "fs.rename") return Json::object();
    if (method == "fs.grep") {
      return Json::parse(R"({"matches":[{"path":"a.py","lines":[{"line_number":1,"content":"x","is_match":false},)"
                         R"({"line_number":2,"content":"TODO","is_match":true}]}],"truncated":true})")
          .value();
    }
    if (method == "http.get") {
      return Json::object({{"status", 200}, {"headers", Json::array({Json::object({{"name", "a"}, {"value", "b"}})})},
                           {"body", "ok"}});
    }
    if (method == "http.post") {
      return Json::object({{"status", 201}, {"headers", Json::object({{"c", "d"}})}, {"body", "AA=="},
                           {"encoding", "base64"}});
    }
    if (method == "process.run") {
      return Json::object({{"stdout", "out"}, {"stderr", "err"}, {"exit_code", 3}, {"truncated", false}});
    }
    return Error{kMethodNotFound, "unknown"};
  });

  EXPECT_EQ(tool.read("a.txt").value(), "héllo\n");
  FileContent ranged = tool.read_bytes("a.txt", {.offset = 2, .length = 5}).value();
  EXPECT_EQ(ranged.size, 42u);
  EXPECT_FALSE(ranged.binary);
  FileContent binary = tool.read_bytes("bin").value();
  EXPECT_EQ(binary.content, std::string("\xff\x00\x01", 3));
  EXPECT_TRUE(binary.binary);
  EXPECT_EQ(tool.read("bin").value(), std::string("\xff\x00\x01", 3));

  EXPECT_EQ(tool.write("w.txt", "text \"q\"\n").value(), 7u);
  EXPECT_EQ(tool.write("w.bin", std::string("\x89PNG\xff", 5), WriteMode::kCreate).value(), 7u);
  const uint8_t bytes[] = {0, 1, 2};
  EXPECT_EQ(tool.write("w.log", std::span<const uint8_t>(bytes), WriteMode::kAppend).value(), 7u);

  EXPECT_TRUE(tool.exists("yes").value());
  EXPECT_FALSE(tool.exists("no").value());

  DirListing listing = tool.list_dir("src", {.offset = 1, .limit = 2}).value();
  ASSERT_EQ(listing.entries.size(), 2u);
  EXPECT_EQ(listing.entries[1].path, "d");
  EXPECT_EQ(listing.entries[1].kind, "dir");
  EXPECT_EQ(listing.total, 5u);
  (void)tool.list_dir("").value();

  Metadata metadata = tool.metadata("a.txt").value();
  EXPECT_EQ(metadata.kind, "file");
  EXPECT_EQ(metadata.size, 12u);
  EXPECT_EQ(metadata.modified, "2024-05-02T09:14:03.211Z");

  tool.remove("old").value();
  tool.remove("dir", true).value();
  tool.rename("a", "b").value();
  tool.rename("a", "b", true).value();

  GrepResult grep = tool.grep("TODO", {.paths = {"src"},
                                       .extensions = {"py"},
                                       .context = 1,
                                       .case_insensitive = true,
                                       .max_matches = 10,
                                       .include_ignored = true})
                        .value();
  ASSERT_EQ(grep.matches.size(), 1u);
  EXPECT_EQ(grep.matches[0].path, "a.py");
  ASSERT_EQ(grep.matches[0].lines.size(), 2u);
  EXPECT_EQ(grep.matches[0].lines[1].line_number, 2u);
  EXPECT_TRUE(grep.matches[0].lines[1].is_match);
  EXPECT_EQ(grep.match_count(), 1u);
  EXPECT_TRUE(grep.truncated);
  (void)tool.grep("x").value();

  HttpResponse get = tool.http_get("https://x.test/a", {{"Authorization", "Bearer ${TOKEN}"}}).value();
  EXPECT_EQ(get.status, 200);
  ASSERT_EQ(get.headers.size(), 1u);
  EXPECT_EQ(get.headers[0].value, "b");
  EXPECT_EQ(get.body, "ok");
  HttpResponse post = tool.http_post("https://x.test/b", std::string("\xff", 1)).value();
  EXPECT_EQ(post.status, 201);
  EXPECT_EQ(post.headers[0].name, "c");
  EXPECT_EQ(post.body, std::string(1, '\0'));
  EXPECT_TRUE(post.binary);

  ProcessOutput run = tool.run("cargo", {"check", "--all"}, {.envs = {"CARGO_HOME"}, .input = "in", .timeout_s = 5})
                          .value();
  EXPECT_EQ(run.stdout_text, "out");
  EXPECT_EQ(run.stderr_text, "err");
  EXPECT_EQ(run.exit_code, 3);
  (void)tool.run("ls").value();

  Result<Json> raw = tool.call("fs.metadata", Json::object({{"path", "x"}}));
  EXPECT_EQ(raw.value()["kind"].as_string(), "file");
  Result<Json> unknown = tool.call("fs.nope");
  EXPECT_EQ(unknown.error().code, kMethodNotFound);

  host_.Stop();
  EXPECT_THAT(
      host_.Lines(),
      ElementsAre(R"({"jsonrpc":"2.0","id":1,"method":"fs.read","params":{"path":"a.txt"}})",
                  R"({"jsonrpc":"2.0","id":2,"method":"fs.read","params":{"path":"a.txt","offset":2,"length":5}})",
                  R"({"jsonrpc":"2.0","id":3,"method":"fs.read","params":{"path":"bin"}})",
                  R"({"jsonrpc":"2.0","id":4,"method":"fs.read","params":{"path":"bin"}})",
                  R"({"jsonrpc":"2.0","id":5,"method":"fs.write","params":{"path":"w.txt","content":"text \"q\"\n"}})",
                  R"({"jsonrpc":"2.0","id":6,"method":"fs.write","params":{"path":"w.bin","content":"iVBOR/8=","encoding":"base64","mode":"create"}})",
                  R"({"jsonrpc":"2.0","id":7,"method":"fs.write","params":{"path":"w.log","content":"\u0000\u0001\u0002","mode":"append"}})",
                  R"({"jsonrpc":"2.0","id":8,"method":"fs.exists","params":{"path":"yes"}})",
                  R"({"jsonrpc":"2.0","id":9,"method":"fs.exists","params":{"path":"no"}})",
                  R"({"jsonrpc":"2.0","id":10,"method":"fs.list_dir","params":{"path":"src","offset":1,"limit":2}})",
                  R"({"jsonrpc":"2.0","id":11,"method":"fs.list_dir","params":{"path":""}})",
                  R"({"jsonrpc":"2.0","id":12,"method":"fs.metadata","params":{"path":"a.txt"}})",
                  R"({"jsonrpc":"2.0","id":13,"method":"fs.delete","params":{"path":"old"}})",
                  R"({"jsonrpc":"2.0","id":14,"method":"fs.delete","params":{"path":"dir","recursive":true}})",
                  R"({"jsonrpc":"2.0","id":15,"method":"fs.rename","params":{"from":"a","to":"b"}})",
                  R"({"jsonrpc":"2.0","id":16,"method":"fs.rename","params":{"from":"a","to":"b","overwrite":true}})",
                  R"({"jsonrpc":"2.0","id":17,"method":"fs.grep","params":{"pattern":"TODO","paths":["src"],"extensions":["py"],"context":1,"case_insensitive":true,"max_matches":10,"include_ignored":true}})",
                  R"({"jsonrpc":"2.0","id":18,"method":"fs.grep","params":{"pattern":"x"}})",
                  R"({"jsonrpc":"2.0","id":19,"method":"http.get","params":{"url":"https://x.test/a","headers":[{"name":"Authorization","value":"Bearer ${TOKEN}"}]}})",
                  R"({"jsonrpc":"2.0","id":20,"method":"http.post","params":{"url":"https://x.test/b","body":"/w==","encoding":"base64"}})",
                  R"({"jsonrpc":"2.0","id":21,"method":"process.run","params":{"program":"cargo","args":["check","--all"],"envs":["CARGO_HOME"],"stdin":"in","timeout_s":5}})",
                  R"({"jsonrpc":"2.0","id":22,"method":"process.run","params":{"program":"ls","args":[]}})",
                  R"({"jsonrpc":"2.0","id":23,"method":"fs.metadata","params":{"path":"x"}})",
                  R"({"jsonrpc":"2.0","id":24,"method":"fs.nope","params":{}})"));
}

TEST_F(SdkSessionTest, ErrorAnswersCarryCodeAndMessage) {
  Tool tool = Connect();
  host_.Serve([](const Json& request) -> Result<Json> {
    const std::string& path = request["params"]["path"].as_string();
    if (path == "missing") return Error{kNotFound, "Not found: 'missing' does not exist"};
    if (path == "secret") return Error{kAccessDenied, "Access denied: path 'secret'"};
    return Json::object({{"unexpected", true}});  // a malformed answer
  });
  Result<std::string> missing = tool.read("missing");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, kNotFound);
  EXPECT_EQ(missing.error().message, "Not found: 'missing' does not exist");
  EXPECT_EQ(tool.exists("secret").error().code, kAccessDenied);
  try {
    (void)tool.metadata("secret").value();
    FAIL();
  } catch (const Exception& exception) {
    EXPECT_EQ(exception.code(), kAccessDenied);
  }
  Result<std::string> malformed = tool.read("other");
  EXPECT_EQ(malformed.error().code, kInternalError);
  EXPECT_THAT(malformed.error().message, HasSubstr("malformed fs.read answer"));
}

// Fifty requests in flight; the host answers them in reverse order and the
// tool waits for them in the order it sent them, then the other way round.
TEST_F(SdkSessionTest, ManyRequestsInFlightAnsweredInAnyOrder) {
  Tool tool = Connect();
  for (bool wait_in_reverse : {false, true}) {
    std::vector<Pending<std::string>> pending;
    for (int i = 0; i < 50; ++i) pending.push_back(tool.read_async("file" + std::to_string(i)));
    std::vector<Json> requests;
    for (int i = 0; i < 50; ++i) requests.push_back(host_.ReadMessage());
    for (int i = 49; i >= 0; --i) {
      host_.Reply(requests[i]["id"].as_int(),
                  Json::object({{"content", "content of " + requests[i]["params"]["path"].as_string()}, {"size", 1}}));
    }
    for (int n = 0; n < 50; ++n) {
      int i = wait_in_reverse ? 49 - n : n;
      EXPECT_EQ(pending[i].get().value(), "content of file" + std::to_string(i));
    }
  }
}

TEST_F(SdkSessionTest, RawSendAndWait) {
  Tool tool = Connect();
  int64_t first = tool.send("fs.exists", Json::object({{"path", "a"}})).value();
  int64_t second = tool.send("fs.exists", Json::object({{"path", "b"}})).value();
  EXPECT_NE(first, second);
  host_.ReadMessage();
  host_.ReadMessage();
  host_.Reply(second, Json::object({{"exists", false}}));
  host_.ReplyError(first, kAccessDenied, "denied");
  EXPECT_FALSE(tool.wait(second).value()["exists"].as_bool());
  EXPECT_EQ(tool.wait(first).error().code, kAccessDenied);
  EXPECT_EQ(tool.wait(first).error().code, kInvalidRequest);  // each id once
  EXPECT_EQ(tool.send("fs.read", Json::array()).error().code, kInvalidParams);
}

// Eight threads share one Tool; the host answers in shuffled batches.
TEST_F(SdkSessionTest, ThreadsShareOneTool) {
  Tool tool = Connect();
  constexpr int kThreads = 8, kPerThread = 40;
  std::thread server([&] {
    std::mt19937 random(42);
    std::vector<Json> batch;
    for (int handled = 0; handled < kThreads * kPerThread;) {
      batch.push_back(host_.ReadMessage());
      while (batch.size() < kThreads && host_.LineReady(5)) batch.push_back(host_.ReadMessage());
      std::shuffle(batch.begin(), batch.end(), random);
      for (const Json& request : batch) {
        host_.Reply(request["id"].as_int(), Json::object({{"content", request["params"]["path"]}, {"size", 0}}));
      }
      handled += static_cast<int>(batch.size());
      batch.clear();
    }
  });
  std::atomic<int> wrong{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < kThreads; ++t) {
    workers.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        std::string path = std::to_string(t) + "/" + std::to_string(i);
        Result<std::string> content = tool.read(path);
        if (!content.ok() || content.value() != path) ++wrong;
      }
    });
  }
  for (std::thread& worker : workers) worker.join();
  server.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST_F(SdkSessionTest, LargeAnswerThroughThePipe) {
  Tool tool = Connect();
  std::string content;
  for (int i = 0; content.size() < (4u << 20); ++i) content += "line " + std::to_string(i) + " \"quoted\"\té\n";
  std::thread server([&] {
    Json request = host_.ReadMessage();
    host_.Reply(request["id"].as_int(), Json::object({{"content", content}, {"size", content.size()}}));
  });
  Result<std::string> read = tool.read("big");
  server.join();
  ASSERT_TRUE(read.ok()) << read.error().message;
  EXPECT_EQ(read.value(), content);
}

TEST_F(SdkSessionTest, CancelNotificationSetsTheFlag) {
  Tool tool = Connect();
  std::vector<std::string> seen;
  tool.set_notification_handler([&](std::string_view method, const Json& params) {
    seen.push_back(std::string(method) + " " + params.dump());
  });
  Pending<bool> pending = tool.exists_async("a");
  Json request = host_.ReadMessage();
  host_.Send(R"({"jsonrpc":"2.0","method":"pending","params":{"request_id":1,"reason":"asking the user"}})");
  host_.Send(R"({"jsonrpc":"2.0","method":"cancel"})");
  host_.Reply(request["id"].as_int(), Json::object({{"exists", true}}));
  EXPECT_TRUE(pending.get().value());
  EXPECT_TRUE(tool.cancelled());
  EXPECT_EQ(tool.check_cancelled().error().code, kCancelled);
  EXPECT_THAT(seen, ElementsAre(R"(pending {"request_id":1,"reason":"asking the user"})", "cancel null"));
}

TEST_F(SdkSessionTest, PollNotificationsSeesACancelWithoutARequest) {
  Tool tool = Connect();
  tool.poll_notifications();
  EXPECT_FALSE(tool.cancelled());
  host_.Send(R"({"jsonrpc":"2.0","method":"cancel"})");
  for (int i = 0; i < 500 && !tool.cancelled(); ++i) {
    tool.poll_notifications();
    if (!tool.cancelled()) usleep(2000);
  }
  EXPECT_TRUE(tool.cancelled());
}

TEST_F(SdkSessionTest, ToolCancelsItsOwnRequest) {
  Tool tool = Connect();
  Pending<GrepResult> grep = tool.grep_async("slow");
  Json request = host_.ReadMessage();
  grep.cancel().value();
  EXPECT_EQ(host_.ReadLine().value(),
            R"({"jsonrpc":"2.0","method":"cancel","params":{"id":)" + request["id"].dump() + "}}");
  host_.ReplyError(request["id"].as_int(), kCancelled, "Cancelled: the tool abandoned request 1");
  EXPECT_EQ(grep.get().error().code, kCancelled);
}

TEST_F(SdkSessionTest, DroppedPendingDiscardsItsAnswer) {
  Tool tool = Connect();
  int64_t id;
  {
    Pending<bool> dropped = tool.exists_async("a");
    id = dropped.id();
  }
  Pending<bool> kept = tool.exists_async("b");
  host_.ReadMessage();
  Json second = host_.ReadMessage();
  host_.Reply(id, Json::object({{"exists", true}}));
  host_.Reply(second["id"].as_int(), Json::object({{"exists", false}}));
  EXPECT_FALSE(kept.get().value());
  EXPECT_EQ(tool.wait(id).error().code, kInvalidRequest);
}

// The host answers a line it could not read with id null (e.g. over its
// size limit): with one request outstanding, that is the one.
TEST_F(SdkSessionTest, IdNullErrorReleasesTheOnlyOutstandingRequest) {
  Tool tool = Connect();
  Pending<uint64_t> write = tool.write_async("big", "x");
  host_.ReadMessage();
  host_.Send(R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: message longer than the limit"}})");
  Result<uint64_t> result = write.get();
  EXPECT_EQ(result.error().code, kParseError);
  EXPECT_THAT(result.error().message, HasSubstr("longer than the limit"));
}

TEST_F(SdkSessionTest, EndOfStdinFailsWaitingCalls) {
  Tool tool = Connect();
  Pending<bool> pending = tool.exists_async("a");
  host_.CloseToTool();
  Result<bool> result = pending.get();
  EXPECT_EQ(result.error().code, kInternalError);
  EXPECT_THAT(result.error().message, HasSubstr("stdin ended"));
  EXPECT_EQ(tool.next_apply().error().code, kInternalError);
}

TEST_F(SdkSessionTest, StatefulToolGetsApplyAndSendsState) {
  Tool tool = Connect();
  host_.Send(R"({"jsonrpc":"2.0","method":"apply","params":{"input":"y"}})");
  host_.Send(R"({"jsonrpc":"2.0","method":"apply","params":{"input":{"answer":true}}})");
  EXPECT_EQ(tool.next_apply().value(), Json("y"));
  EXPECT_TRUE(tool.next_apply().value()["answer"].as_bool());
  tool.state({.type = State::Type::kRunning, .content = "Next hunk"}).value();
  tool.state({.type = State::Type::kWaiting,
              .content = "Stage it?",
              .question = Json::object({{"id", "stage"}, {"text", "Stage?"}, {"answer_type", "Boolean"}})})
      .value();
  tool.state({.type = State::Type::kStopped, .result = "Staged 3 hunks."}).value();
  EXPECT_EQ(host_.ReadLine().value(), R"({"jsonrpc":"2.0","method":"state","params":{"type":"running","content":"Next hunk"}})");
  EXPECT_EQ(host_.ReadLine().value(),
            R"({"jsonrpc":"2.0","method":"state","params":{"type":"waiting","content":"Stage it?",)"
            R"("question":{"id":"stage","text":"Stage?","answer_type":"Boolean"}}})");
  EXPECT_EQ(host_.ReadLine().value(), R"({"jsonrpc":"2.0","method":"state","params":{"type":"stopped","result":"Staged 3 hunks."}})");
  // stopped is final: tool_main sends no result after it, and a second final message is refused.
  EXPECT_TRUE(tool.finished());
  EXPECT_EQ(tool.result(Json("again")).error().code, kInvalidRequest);
  host_.Send(R"({"jsonrpc":"2.0","method":"cancel"})");
  EXPECT_EQ(tool.next_apply().error().code, kCancelled);
}

TEST_F(SdkSessionTest, ProgressAndLogLines) {
  Tool tool = Connect();
  tool.progress(0, 100, "starting").value();
  tool.progress(2.5).value();
  tool.log("info", "parsed").value();
  tool.log("warning", "odd file", "parser", Json::object({{"path", "a.txt"}})).value();
  EXPECT_EQ(host_.ReadLine().value(),
            R"({"jsonrpc":"2.0","method":"progress","params":{"progress":0,"total":100,"message":"starting"}})");
  EXPECT_EQ(host_.ReadLine().value(), R"({"jsonrpc":"2.0","method":"progress","params":{"progress":2.5}})");
  EXPECT_EQ(host_.ReadLine().value(), R"({"jsonrpc":"2.0","method":"log","params":{"level":"info","message":"parsed"}})");
  EXPECT_EQ(host_.ReadLine().value(),
            R"({"jsonrpc":"2.0","method":"log","params":{"level":"warning","message":"odd file","logger":"parser",)"
            R"("data":{"path":"a.txt"}}})");
  EXPECT_EQ(tool.progress(-1).error().code, kInvalidParams);
  EXPECT_EQ(tool.progress(1, 0.0).error().code, kInvalidParams);
  EXPECT_EQ(tool.log("verbose", "x").error().code, kInvalidParams);
}

TEST_F(SdkSessionTest, ResultAndErrorNotifications) {
  Tool tool = Connect();
  tool.result(Json::array({text_block("Modified 2 files."), resource_block("file:///a.txt", "new text", "text/plain")}))
      .value();
  EXPECT_EQ(host_.ReadLine().value(),
            R"({"jsonrpc":"2.0","method":"result","params":{"content":[{"type":"text","text":"Modified 2 files."},)"
            R"({"type":"resource","resource":{"uri":"file:///a.txt","mimeType":"text/plain","text":"new text"}}]}})");
  EXPECT_TRUE(tool.finished());
  EXPECT_EQ(tool.error("late").error().code, kInvalidRequest);  // one final message only
  EXPECT_EQ(tool.result(5).error().code, kInvalidParams);

  FakeHost other;
  other.Send(kInit);
  Tool failing = connect(other.ToolSide()).value();
  failing.error("Failed to parse input", {.trace = {"at line 3"}, .transient = false}).value();
  EXPECT_EQ(other.ReadLine().value(),
            R"({"jsonrpc":"2.0","method":"error","params":{"message":"Failed to parse input","trace":["at line 3"],"transient":false}})");
  EXPECT_TRUE(failing.reported_error());
}

TEST_F(SdkSessionTest, ToolMainReportsTheReturnValue) {
  host_.Send(kInit);
  int code = tool_main([](Tool& tool) { return "done: " + tool.arguments()["path"].as_string(); }, host_.ToolSide());
  EXPECT_EQ(code, 0);
  EXPECT_EQ(host_.ReadLine().value(), R"({"jsonrpc":"2.0","method":"result","params":{"content":"done: a.txt"}})");
}

TEST_F(SdkSessionTest, ToolMainTurnsAnExceptionIntoTheErrorNotification) {
  host_.Send(kInit);
  std::thread server([&] {
    Json request = host_.ReadMessage();
    host_.ReplyError(request["id"].as_int(), kNotFound, "Not found: 'a.txt' does not exist");
  });
  int code = tool_main([](Tool& tool) { return tool.read("a.txt").value(); }, host_.ToolSide());
  server.join();
  EXPECT_EQ(code, 1);
  EXPECT_EQ(host_.ReadLine().value(),
            R"({"jsonrpc":"2.0","method":"error","params":{"message":"Not found: 'a.txt' does not exist"}})");
}

TEST_F(SdkSessionTest, ToolMainKeepsAResultTheToolSentItself) {
  host_.Send(kInit);
  int code = tool_main(
      [](Tool& tool) {
        tool.error("gave up").value();
        throw std::runtime_error("ignored: the error was already sent");
      },
      host_.ToolSide());
  EXPECT_EQ(code, 1);
  EXPECT_EQ(host_.ReadLine().value(), R"({"jsonrpc":"2.0","method":"error","params":{"message":"gave up"}})");
}

}  // namespace
}  // namespace toolvfs
