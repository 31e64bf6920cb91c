// Frames and requests: the reader over a real pipe, and the strict parser's
// answers to garbage.

#include <fcntl.h>
#include <unistd.h>

#include <string>
#include <thread>
#include <variant>

#include "core/io.h"
#include "core/unique_fd.h"
#include "vfsd/frame.h"
#include "vfsd/request.h"
#include "vfsd/vfsd_test_util.h"

namespace toolvfs {
namespace {

// A pipe whose write end gets `bytes` from a thread, then closes.
class Feed {
 public:
  explicit Feed(std::string bytes) {
    int ends[2];
    EXPECT_EQ(::pipe2(ends, O_CLOEXEC), 0);
    read_.reset(ends[0]);
    UniqueFd write_end(ends[1]);
    writer_ = std::thread([bytes = std::move(bytes), write_end = std::move(write_end)]() mutable {
      (void)WriteFull(write_end.get(), bytes, "feed");
    });
  }
  ~Feed() { writer_.join(); }
  int fd() const { return read_.get(); }

 private:
  UniqueFd read_;
  std::thread writer_;
};

std::string Header(uint32_t length) {
  std::string header(4, '\0');
  header[0] = static_cast<char>(length >> 24);
  header[1] = static_cast<char>(length >> 16);
  header[2] = static_cast<char>(length >> 8);
  header[3] = static_cast<char>(length);
  return header;
}

TEST(FrameTest, EncodeWritesABigEndianLength) {
  EXPECT_EQ(EncodeFrame("abc"), std::string("\0\0\0\3abc", 7));
  EXPECT_EQ(EncodeFrame(std::string(0x010203, 'x')).substr(0, 4), std::string("\0\1\2\3", 4));
}

TEST(FrameTest, ReadsFramesBackToBackAndEndsAtEof) {
  Feed feed(EncodeFrame("first") + EncodeFrame("") + EncodeFrame(std::string(200000, 'z')));
  FrameReader reader(feed.fd(), kDefaultMaxFrameBytes);
  Result<Frame> first = reader.Next();
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->kind, Frame::Kind::kPayload);
  EXPECT_EQ(first->payload, "first");
  EXPECT_EQ(reader.Next()->payload, "");
  EXPECT_EQ(reader.Next()->payload, std::string(200000, 'z'));
  EXPECT_EQ(reader.Next()->kind, Frame::Kind::kEnd);
}

TEST(FrameTest, AnOversizedFrameIsSkippedAndTheNextOneRead) {
  Feed feed(EncodeFrame(std::string(5000, 'x')) + EncodeFrame("after"));
  FrameReader reader(feed.fd(), 1000);
  Result<Frame> big = reader.Next();
  ASSERT_TRUE(big.ok());
  EXPECT_EQ(big->kind, Frame::Kind::kTooLarge);
  EXPECT_EQ(big->length, 5000u);
  EXPECT_TRUE(big->payload.empty());
  EXPECT_EQ(reader.Next()->payload, "after");
}

TEST(FrameTest, TruncatedFramesAndHeadersEndTheStreamCleanly) {
  for (std::string bytes : {std::string("\0\0", 2), Header(10) + "short", Header(0xffffffff) + "abc"}) {
    Feed feed(bytes);
    FrameReader reader(feed.fd(), kDefaultMaxFrameBytes);
    Result<Frame> frame = reader.Next();
    ASSERT_TRUE(frame.ok()) << frame.status().ToString();
    EXPECT_EQ(frame->kind, Frame::Kind::kEnd);
  }
}

RequestError ErrorOf(std::string_view payload) {
  std::variant<Request, RequestError> parsed = ParseRequest(payload);
  EXPECT_TRUE(std::holds_alternative<RequestError>(parsed)) << payload;
  return std::holds_alternative<RequestError>(parsed) ? std::get<RequestError>(parsed) : RequestError{};
}

TEST(RequestTest, AValidRequestIsParsed) {
  std::variant<Request, RequestError> parsed =
      ParseRequest(R"({"id":"a1","op":"read","version":1,"params":{"h":3,"max":10}})");
  ASSERT_TRUE(std::holds_alternative<Request>(parsed));
  const Request& request = std::get<Request>(parsed);
  EXPECT_EQ(request.id, "a1");
  EXPECT_EQ(request.op, "read");
  EXPECT_EQ(*request.params.Integer("h"), 3);
  EXPECT_TRUE(request.params.ExpectOnly({"h", "max"}).ok());
}

TEST(RequestTest, GarbageGetsANullIdAndSaysWhy) {
  struct Case {
    std::string payload;
    std::string says;
  };
  std::string deep = std::string(5000, '[') + std::string(5000, ']');
  for (const Case& c : {Case{"", "empty"}, Case{"not json", "not valid JSON"}, Case{"[1,2]", "not an object"},
                        Case{"\"text\"", "not an object"}, Case{"{\"id\":\"\xff\",\"op\":\"ping\"}", "UTF-8"},
                        Case{deep, "nested deeper"}, Case{"{\"op\":\"ping\"}", "'id' is missing"},
                        Case{"{\"id\":7,\"op\":\"ping\"}", "'id' must be a string"},
                        Case{"{\"id\":\"a\",\"id\":\"b\",\"op\":\"ping\"}", "duplicate member 'id'"},
                        Case{std::string("{\"id\":\"a\0\",\"op\":\"ping\"", 23), "not valid JSON"}}) {
    RequestError error = ErrorOf(c.payload);
    std::string shown = c.payload.substr(0, 40);
    EXPECT_FALSE(error.id.has_value()) << shown;
    EXPECT_EQ(error.status.code(), StatusCode::kInvalidArgument) << shown;
    EXPECT_NE(error.status.message().find(c.says), std::string::npos) << shown << ": " << error.status.message();
  }
}

TEST(RequestTest, ErrorsAfterTheIdCarryIt) {
  struct Case {
    std::string payload;
    std::string says;
  };
  for (const Case& c : {Case{R"({"id":"x"})", "'op' is missing"}, Case{R"({"id":"x","op":3})", "'op' must be a string"},
                        Case{R"({"id":"x","op":"a","op":"b"})", "duplicate member 'op'"},
                        Case{R"({"id":"x","op":"read","params":{"h":1,"h":2}})", "duplicate member 'h' in 'params'"},
                        Case{R"({"id":"x","op":"read","params":[1]})", "'params' must be an object"},
                        Case{R"({"id":"x","op":"read","extra":1})", "unknown member 'extra'"},
                        Case{R"({"id":"x","op":"read","version":"1"})", "'version' must be an integer"}}) {
    RequestError error = ErrorOf(c.payload);
    EXPECT_EQ(error.id, std::optional<std::string>("x")) << c.payload;
    EXPECT_NE(error.status.message().find(c.says), std::string::npos) << c.payload << ": " << error.status.message();
  }
}

TEST(RequestTest, SessionsAnswerGarbageWithEArgAndANullId) {
  std::unique_ptr<ProjectFiles> store = NewMemoryStore();
  Harness harness(*store, VfsdOptions{});
  for (std::string payload : {std::string("garbage"), std::string("{}"), std::string("\xc3\x28"), std::string(3, '\0')}) {
    Answer answer = ParseAnswer(harness.session().Answer(payload));
    EXPECT_TRUE(answer.json["id"].IsNull()) << answer;
    EXPECT_EQ(answer.code(), "E_ARG") << answer;
  }
  Answer oversized = ParseAnswer(harness.session().AnswerOversizedFrame(20 << 20, 16 << 20));
  EXPECT_EQ(oversized.code(), "E_RANGE");
  EXPECT_TRUE(oversized.json["id"].IsNull());
  EXPECT_NE(oversized.message().find("16 MiB"), std::string::npos) << oversized;
}

}  // namespace
}  // namespace toolvfs
