// http.get / http.post (SPEC.md §3.2–3.3, §4.3) against a local server on
// 127.0.0.1 (http_test_server.py, two ports = two origins), driven the way
// the session loop drives a handler: a request line through MessageParser,
// the handler from FindMethod, the answer parsed back as a tool would.

#include <poll.h>
#include <rapidjson/document.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "config/config.h"
#include "host/method_test_util.h"
#include "host/methods.h"
#include "host/request_audit.h"
#include "host/test_gate.h"
#include "policy/inquirer.h"
#include "project/project_files.h"
#include "protocol/base64.h"
#include "protocol/json_writer.h"
#include "protocol/jsonrpc.h"
#include "sandbox/launcher.h"

namespace toolvfs {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::Not;
using ::testing::StartsWith;

constexpr std::string_view kToken = "s3cr3t-token-value";

// `text` with the characters of a URL query value escaped.
std::string QueryValue(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == ':' || c == '/' || c == '?' || c == '&' || c == '=') {
      constexpr std::string_view kHex = "0123456789ABCDEF";
      out += '%';
      out += kHex[static_cast<unsigned char>(c) >> 4];
      out += kHex[c & 0xF];
    } else {
      out += c;
    }
  }
  return out;
}

// The test server, started once for the suite; its ChildProcess kills it.
class TestServer {
 public:
  TestServer() {
    const char* source_dir = std::getenv("TOOLVFS_SOURCE_DIR");
    std::string script =
        std::string(source_dir != nullptr ? source_dir : ".") + "/tests/host/http_test_server.py";
    Result<ChildProcess> child =
        Launch(LaunchSpec{.program = "python3", .args = {script}, .environment = {"PATH=/usr/bin:/bin"}});
    if (!child.ok()) {
      error_ = child.status().message();
      return;
    }
    child_.emplace(std::move(child).value());
    std::string line = ReadLine(child_->stdout_fd().get());
    if (std::sscanf(line.c_str(), "%d %d", &ports_[0], &ports_[1]) != 2) {
      error_ = "the test server printed " + line;
      ports_[1] = 0;
    }
  }

  bool started() const { return ports_[1] != 0; }
  const std::string& error() const { return error_; }
  std::string Origin(int which = 0) const { return "http://127.0.0.1:" + std::to_string(ports_[which]); }

 private:
  // The first line the server prints, waiting for it on the pipe (at most
  // 20 s: a python3 that cannot start must fail the tests, not hang them).
  static std::string ReadLine(int fd) {
    std::string line;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (line.find('\n') == std::string::npos && std::chrono::steady_clock::now() < deadline) {
      pollfd readable{fd, POLLIN, 0};
      if (::poll(&readable, 1, 1000) <= 0) continue;
      char buffer[256];
      ssize_t count = ::read(fd, buffer, sizeof(buffer));
      if (count <= 0 && errno != EAGAIN && errno != EINTR) break;
      if (count > 0) line.append(buffer, static_cast<size_t>(count));
    }
    return line.substr(0, line.find('\n'));
  }

  std::optional<ChildProcess> child_;
  int ports_[2] = {0, 0};
  std::string error_;
};

// A tool "web" whose network rules name paths of the two test origins.
ToolConfig WebTool(const TestServer& server) {
  std::string first = server.Origin(0);
  std::string second = server.Origin(1);
  std::string toml = "[tools.web]\ncommand = \"true\"\n[tools.web.sandbox]\nnetwork.allow = [";
  for (std::string_view path : {"/hello", "/echo", "/echo-headers", "/echo-header-back", "/header-named",
                                "/redirect",
                                "/chain/", "/sleep", "/bytes", "/binary"}) {
    toml += Json(first + std::string(path)) + ", ";
  }
  toml += Json(second + "/echo-headers") + "]\n";
  toml += "network.deny = [" + Json(first + "/denied") + "]\n";
  toml += "network.envs = [\"TEST_TOKEN\", \"UNSET_TOKEN\"]\n";
  Result<Config> config = ParseConfig(toml, "toolvfs.toml");
  EXPECT_TRUE(config.ok()) << config.status().message();
  return config.ok() ? config->tools.at("web") : ToolConfig{};
}

class HttpMethodsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { server_ = std::make_unique<TestServer>(); }
  static void TearDownTestSuite() { server_.reset(); }

  void SetUp() override {
    ASSERT_TRUE(server_->started()) << "test server: " << server_->error();
    Result<std::unique_ptr<ProjectFiles>> store = OpenProject("memory:test");
    ASSERT_TRUE(store.ok());
    project_ = std::move(store).value();
    gate_ = std::make_unique<DefaultGate>(WebTool(*server_));
  }

  // Calls `method` with `params_json`; returns the result object as JSON or
  // "error CODE: MESSAGE".
  std::string Call(std::string_view method, std::string_view params_json) {
    const MethodSpec* spec = FindMethod(method);
    if (spec == nullptr) return "<no method " + std::string(method) + ">";
    std::string line = R"({"jsonrpc":"2.0","id":7,"method":)" + Json(method) +
                       ",\"params\":" + std::string(params_json) + "}";
    MessageParser parser;
    ParsedLine request = parser.Parse(line);
    if (!request.is_message()) return "<request not parsed: " + request.error().message + ">";
    MethodContext context{*project_, gate_->gate, &environment_};
    context.http = settings_;
    scope_.emplace(request.message().id(), spec->name, /*may_block=*/true);
    scope_->set_cancel_flag(&cancelled_);
    WireMessage answer = spec->handler(request.message(), context, *scope_);
    std::string_view bytes = answer.bytes();
    ParsedLine response = parser.Parse(bytes.substr(0, bytes.size() - 1));
    if (!response.is_message()) return "<answer not parsed: " + std::string(bytes) + ">";
    const Message& parsed = response.message();
    if (parsed.is_error()) {
      return "error " + std::to_string(parsed.error_code()) + ": " + std::string(parsed.error_message());
    }
    return parsed.result_json();
  }

  std::string Get(std::string_view url, std::string_view headers_json = "") {
    std::string params = "{\"url\":" + Json(url);
    if (!headers_json.empty()) params += ",\"headers\":" + std::string(headers_json);
    return Call("http.get", params + "}");
  }

  std::string Url(std::string_view path, int origin = 0) const {
    return server_->Origin(origin) + std::string(path);
  }

  // The `body` of a result, base64-decoded when its encoding says so.
  static std::string Body(const std::string& result) {
    rapidjson::Document document;
    document.Parse(result.c_str(), result.size());
    if (document.HasParseError() || !document.IsObject() || !document.HasMember("body")) return "<no body>";
    std::string body(document["body"].GetString(), document["body"].GetStringLength());
    if (!document.HasMember("encoding")) return body;
    Result<std::string> decoded = Base64Decode(body);
    return decoded.ok() ? *decoded : "<bad base64>";
  }

  static std::unique_ptr<TestServer> server_;
  std::unique_ptr<ProjectFiles> project_;
  std::unique_ptr<DefaultGate> gate_;
  std::map<std::string, std::string> environment_{{"TEST_TOKEN", std::string(kToken)}, {"HOME", "/home/x"}};
  HttpSettings settings_;
  std::optional<RequestScope> scope_;
  std::atomic<bool> cancelled_{false};
};

std::unique_ptr<TestServer> HttpMethodsTest::server_;

TEST_F(HttpMethodsTest, GetAllowedUrl) {
  std::string result = Get(Url("/hello"));
  EXPECT_THAT(result, StartsWith(R"({"status":200,"headers":[)"));
  EXPECT_THAT(result, HasSubstr(R"({"name":"X-Test","value":"yes"})"));
  EXPECT_THAT(result, HasSubstr(R"("body":"hello"})"));
  EXPECT_EQ(scope_->target(), Url("/hello"));
  EXPECT_EQ(scope_->decision(), AuditDecision::kAllow);
  EXPECT_EQ(scope_->rule(), "network.allow \"" + Url("/hello") + "\"");
}

TEST_F(HttpMethodsTest, DeniedUrl) {
  EXPECT_EQ(Get(Url("/denied/x")), "error -32001: http.get of '" + Url("/denied/x") +
                                       "' denied by network.deny \"" + Url("/denied") + "\"");
  EXPECT_EQ(scope_->decision(), AuditDecision::kDeny);
}

TEST_F(HttpMethodsTest, UncoveredUrlIsDeniedWithoutInteraction) {
  std::string url = Url("/uncovered?x=1");
  Inquiry inquiry{"web", "GET", url, "add a prefix of \"" + Url("/uncovered") + "\" to network.allow"};
  EXPECT_EQ(Get(url), "error -32001: " + NonInteractiveDenial(inquiry, "http.get"));
}

TEST_F(HttpMethodsTest, InvalidUrlsAreInvalidParams) {
  EXPECT_EQ(
      Get("http://user@127.0.0.1/hello"),
      "error -32602: URL 'http://user@127.0.0.1/hello' has user information ('user@'); credentials never "
      "belong in a URL");
  EXPECT_THAT(Get("http://127.0.0.1\r\n.evil/"), HasSubstr("contains a line break"));
  EXPECT_THAT(Get("file:///etc/passwd"), HasSubstr("does not start with http:// or https://"));
  // The fragment of a request URL is dropped (it is never sent).
  EXPECT_THAT(Get(Url("/hello#part")), HasSubstr(R"("body":"hello"})"));
}

TEST_F(HttpMethodsTest, RejectsHostOwnedAndMalformedHeaders) {
  EXPECT_EQ(Get(Url("/hello"), R"([{"name":"Host","value":"evil.example"}])"),
            "error -32602: Invalid params: header 'Host' is set by the host, not the tool");
  EXPECT_EQ(Get(Url("/hello"), R"([{"name":"X-A","value":"a\r\nX-Injected: 1"}])"),
            "error -32602: Invalid params: the value of header 'X-A' contains a control character");
  EXPECT_EQ(Get(Url("/hello"), R"([{"name":"X A","value":"a"}])"),
            "error -32602: Invalid params: header name 'X A' is not an HTTP token");
  EXPECT_EQ(Get(Url("/hello"), R"([{"name":"X-A","value":"${TEST_TOKEN"}])"),
            "error -32602: Invalid params: header 'X-A' has a '${' that is not a ${NAME} reference");
  EXPECT_EQ(Get(Url("/hello"), R"([{"name":"X-A","value":"a","extra":1}])"),
            "error -32602: Invalid params: unknown parameter 'headers[0].extra' (expected name, value)");
}

TEST_F(HttpMethodsTest, FollowsAnAllowedRedirectAndRecordsEveryHop) {
  std::string start = Url("/redirect?to=" + QueryValue(Url("/hello")));
  EXPECT_THAT(Get(start), HasSubstr(R"("body":"hello"})"));
  EXPECT_EQ(scope_->target(), start + " -> " + Url("/hello"));
  // A relative Location is resolved against the request URL.
  EXPECT_THAT(Get(Url("/redirect?to=/hello")), HasSubstr(R"("body":"hello"})"));
}

TEST_F(HttpMethodsTest, RedirectToADeniedHopEndsTheRequest) {
  std::string start = Url("/redirect?to=" + QueryValue(Url("/denied")));
  std::string result = Get(start);
  EXPECT_EQ(result, "error -32001: http.get of '" + Url("/denied") + "' denied by network.deny \"" +
                        Url("/denied") + "\" (redirected from '" + start + "')");
  EXPECT_THAT(result, Not(HasSubstr("moved")));  // nothing of the redirect's answer
  EXPECT_EQ(scope_->decision(), AuditDecision::kDeny);

  // An uncovered hop goes to the inquirer like any request.
  std::string uncovered = Url("/redirect?to=" + QueryValue(Url("/elsewhere")));
  Inquiry inquiry{"web", "GET", Url("/elsewhere"),
                  "add a prefix of \"" + Url("/elsewhere") + "\" to network.allow"};
  EXPECT_EQ(Get(uncovered), "error -32001: " + NonInteractiveDenial(inquiry, "http.get") +
                                " (redirected from '" + uncovered + "')");

  // Another scheme is not followed at all.
  EXPECT_THAT(Get(Url("/redirect?to=" + QueryValue("file:///etc/passwd"))),
              HasSubstr("was redirected to a URL that is not followed"));
}

// The audit record of each answer (request_audit.h, as the session writes
// it): refusals before the policy are recorded with the URL as sent, and a
// redirect to a URL that is not followed with the Location refused.
TEST_F(HttpMethodsTest, RefusedRequestsAndRedirectsAreAuditedWithWhatWasRefused) {
  auto record = [&](std::string_view params_json, int code) {
    MessageParser parser;
    std::string line = R"({"jsonrpc":"2.0","id":7,"method":"http.get","params":)" + std::string(params_json) + "}";
    ParsedLine request = parser.Parse(line);
    EXPECT_TRUE(request.is_message());
    return AuditRecordForAnswer({"http.get", request.message().params(), &*scope_, code}, "web", "c-1");
  };
  std::string params = R"({"url":"http://a%00b/"})";
  EXPECT_THAT(Call("http.get", params), StartsWith("error -32602: "));
  AuditRecord invalid_url = record(params, scope_->error_code());
  EXPECT_EQ(invalid_url.target, "http://a%00b/");
  EXPECT_EQ(invalid_url.decision, AuditDecision::kDeny);
  EXPECT_EQ(invalid_url.rule, "refused: invalid params");
  EXPECT_EQ(invalid_url.code, -32602);

  params = R"({"url":)" + Json(Url("/hello")) + R"(,"headers":[{"name":"X-A","value":"a\r\nX-B: 1"}]})";
  EXPECT_THAT(Call("http.get", params), StartsWith("error -32602: "));
  AuditRecord invalid_header = record(params, scope_->error_code());
  EXPECT_EQ(invalid_header.target, Url("/hello"));
  EXPECT_EQ(invalid_header.decision, AuditDecision::kDeny);
  EXPECT_EQ(invalid_header.rule, "refused: invalid params");

  for (std::string location : {std::string("file:///etc/passwd"), std::string("http://user@127.0.0.1/x")}) {
    std::string start = Url("/redirect?to=" + QueryValue(location));
    params = R"({"url":)" + Json(start) + "}";
    EXPECT_THAT(Call("http.get", params), HasSubstr("was redirected to a URL that is not followed"));
    AuditRecord redirect = record(params, scope_->error_code());
    EXPECT_EQ(redirect.target, start + " -> " + location);
    EXPECT_EQ(redirect.decision, AuditDecision::kDeny);
    EXPECT_EQ(redirect.rule, "redirects (only to a valid http or https URL)");
    EXPECT_EQ(redirect.code, -32001);
  }

  // Allowed: the URL the policy judged.
  params = R"({"url":)" + Json(Url("/hello")) + "}";
  EXPECT_THAT(Call("http.get", params), StartsWith(R"({"status":200)"));
  AuditRecord allowed = record(params, scope_->error_code());
  EXPECT_EQ(allowed.target, Url("/hello"));
  EXPECT_EQ(allowed.decision, AuditDecision::kAllow);
  EXPECT_EQ(allowed.code, 0);
}

TEST_F(HttpMethodsTest, StopsAfterTheRedirectLimit) {
  EXPECT_THAT(Get(Url("/chain/5")), HasSubstr(R"("body":"done"})"));
  EXPECT_EQ(Get(Url("/chain/6")),
            "error -32602: GET " + Url("/chain/1") + " redirected again after 5 redirects (the limit)");
}

TEST_F(HttpMethodsTest, SubstitutesAllowedVariablesAndRedactsThemInTheAnswer) {
  std::string result =
      Get(Url("/echo-headers"), R"([{"name":"Authorization","value":"Bearer ${TEST_TOKEN}"}])");
  EXPECT_THAT(Body(result), HasSubstr(R"("authorization": "Bearer [REDACTED]")"));
  EXPECT_THAT(result, Not(HasSubstr(kToken)));

  result = Get(Url("/echo-header-back"), R"([{"name":"Authorization","value":"${TEST_TOKEN}"}])");
  EXPECT_THAT(result, HasSubstr(R"({"name":"X-Echo","value":"[REDACTED]"})"));
  EXPECT_THAT(result, Not(HasSubstr(kToken)));
}

// A server that reflects a secret into a header's name (SPEC.md §3.3):
// the name is scrubbed like the value, in every form the scrubber knows,
// base64 at each of the three byte alignments (the prefix shifts it).
TEST_F(HttpMethodsTest, SecretInAResponseHeaderNameIsRedacted) {
  for (std::string form : {"plain", "base64", "base64url", "percent", "percent-lower"}) {
    for (std::string prefix : {"", "a", "ab"}) {
      std::string result = Get(Url("/header-named?form=" + form + "&prefix=" + prefix),
                               R"([{"name":"Authorization","value":"${TEST_TOKEN}"}])");
      rapidjson::Document document;
      document.Parse(result.c_str(), result.size());
      ASSERT_TRUE(!document.HasParseError() && document.IsObject() && document.HasMember("headers"))
          << result;
      std::string named;
      for (const rapidjson::Value& header : document["headers"].GetArray()) {
        if (std::string_view(header["value"].GetString()) == "named") named = header["name"].GetString();
      }
      // What is left around the redaction: "X-", the prefix (or the base64
      // characters that also depend on it), "-End".
      EXPECT_THAT(named, MatchesRegex(R"(X-.{0,6}\[REDACTED\].{0,4}-End)")) << form << " " << prefix;
      EXPECT_THAT(result, Not(HasSubstr(kToken))) << form << " " << prefix;
    }
  }
}

TEST_F(HttpMethodsTest, VariableOutsideNetworkEnvsIsDeniedNamingIt) {
  std::string url = Url("/echo-headers");
  EXPECT_EQ(Get(url, R"([{"name":"Authorization","value":"Bearer ${HOME}"}])"),
            "error -32001: http.get of '" + url +
                "' denied by network.envs without \"HOME\"; add \"HOME\" to network.envs");
  EXPECT_EQ(scope_->decision(), AuditDecision::kDeny);
  // Allowed but not set on the host: not found, never an empty value.
  EXPECT_EQ(Get(url, R"([{"name":"X-Key","value":"${UNSET_TOKEN}"}])"),
            "error -32002: The variable UNSET_TOKEN in header 'X-Key' is not set in the host's environment");
}

TEST_F(HttpMethodsTest, SecretHeadersAreDroppedWhenARedirectChangesOrigin) {
  std::string headers =
      R"([{"name":"Authorization","value":"Bearer ${TEST_TOKEN}"},{"name":"X-Plain","value":"kept"}])";
  std::string other_origin = Body(Get(Url("/redirect?to=" + QueryValue(Url("/echo-headers", 1))), headers));
  EXPECT_THAT(other_origin, HasSubstr(R"("x-plain": "kept")"));
  EXPECT_THAT(other_origin, Not(HasSubstr("authorization")));

  std::string same_origin = Body(Get(Url("/redirect?to=/echo-headers"), headers));
  EXPECT_THAT(same_origin, HasSubstr(R"("authorization": "Bearer [REDACTED]")"));
}

TEST_F(HttpMethodsTest, BodyLimit) {
  settings_.max_body_bytes = 1000;
  EXPECT_EQ(Body(Get(Url("/bytes?n=1000"))), std::string(1000, 'a'));
  EXPECT_EQ(Get(Url("/bytes?n=1001")), "error -32602: GET " + Url("/bytes?n=1001") +
                                           ": the response is larger than the limit of 1000 bytes");
}

TEST_F(HttpMethodsTest, Timeout) {
  settings_.timeout = std::chrono::milliseconds(300);
  auto started = std::chrono::steady_clock::now();
  EXPECT_EQ(Get(Url("/sleep?ms=5000")),
            "error -32004: GET " + Url("/sleep?ms=5000") + " timed out after 300 ms (the http timeout)");
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(3));
}

TEST_F(HttpMethodsTest, CancelledRequestStops) {
  cancelled_ = true;
  EXPECT_EQ(Get(Url("/hello")), "error -32005: GET " + Url("/hello") + " was cancelled");

  // Cancelled mid-transfer: curl's progress callback sees it within about
  // a second, long before the server answers.
  cancelled_ = false;
  std::thread canceller([this] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    cancelled_ = true;
  });
  auto started = std::chrono::steady_clock::now();
  EXPECT_EQ(Get(Url("/sleep?ms=10000")), "error -32005: GET " + Url("/sleep?ms=10000") + " was cancelled");
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(5));
  canceller.join();
}

TEST_F(HttpMethodsTest, BinaryResponseComesBackAsBase64) {
  std::string result = Get(Url("/binary"));
  EXPECT_THAT(result, HasSubstr(R"("encoding":"base64")"));
  EXPECT_EQ(Body(result), AllBytes());
}

TEST_F(HttpMethodsTest, PostTextAndBase64Bodies) {
  EXPECT_EQ(Body(Call("http.post", R"({"url":)" + Json(Url("/echo")) + R"(,"body":"data"})")), "POST\ndata");
  std::string result = Call("http.post", R"({"url":)" + Json(Url("/echo")) + R"(,"body":)" +
                                             Json(Base64Encode(AllBytes())) + R"(,"encoding":"base64"})");
  EXPECT_EQ(Body(result), "POST\n" + AllBytes());
  EXPECT_THAT(Call("http.post", R"({"url":)" + Json(Url("/echo")) + R"(,"body":"x","encoding":"hex"})"),
              HasSubstr("error -32602: Invalid params: 'encoding' must be \"base64\""));
  EXPECT_THAT(Call("http.post", R"({"url":)" + Json(Url("/echo")) + "}"), StartsWith("error -32602:"));
  EXPECT_THAT(Call("http.get", R"({"url":)" + Json(Url("/echo")) + R"(,"body":"x"})"),
              StartsWith("error -32602:"));
}

// 301/302/303 turn a POST into a GET without a body, as browsers do;
// 307/308 repeat the POST.
TEST_F(HttpMethodsTest, RedirectedPostBecomesGetExceptFor307And308) {
  auto post = [&](std::string_view code) {
    return Body(
        Call("http.post", R"({"url":)" + Json(Url("/redirect?code=" + std::string(code) + "&to=/echo")) +
                              R"(,"body":"data","headers":[{"name":"Content-Type","value":"text/plain"}]})"));
  };
  EXPECT_EQ(post("302"), "GET\n");
  EXPECT_EQ(post("303"), "GET\n");
  EXPECT_EQ(post("307"), "POST\ndata");
  EXPECT_EQ(post("308"), "POST\ndata");
}

}  // namespace
}  // namespace toolvfs
