// The audit record of an answered request (request_audit.h): what it names
// when the gate did not judge every target, and how a refusal reads.
#include "host/request_audit.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "host/test_gate.h"

namespace toolvfs {
namespace {

using ::testing::ElementsAre;

class RequestAuditTest : public ::testing::Test {
 protected:
  // The params of a request line with `params_json`.
  const Params& ParamsOf(const std::string& params_json) {
    line_ = R"({"jsonrpc":"2.0","id":1,"method":"m","params":)" + params_json + "}";
    parsed_.emplace(parser_.Parse(line_));
    EXPECT_TRUE(parsed_->is_message()) << line_;
    return parsed_->message().params();
  }

  MessageParser parser_;
  std::string line_;
  std::optional<ParsedLine> parsed_;
};

TEST_F(RequestAuditTest, NamedTargetsAreWhatTheRequestNamedAsSent) {
  EXPECT_THAT(NamedTargets("fs.read", ParamsOf(R"({"path":"../x"})")), ElementsAre("../x"));
  EXPECT_THAT(NamedTargets("fs.rename", ParamsOf(R"({"from":"a","to":"../b"})")), ElementsAre("a", "../b"));
  EXPECT_THAT(NamedTargets("fs.grep", ParamsOf(R"({"pattern":"x","paths":["a","b"]})")),
              ElementsAre("a", "b"));
  EXPECT_THAT(NamedTargets("fs.grep", ParamsOf(R"({"pattern":"x"})")), ElementsAre("."));
  EXPECT_THAT(NamedTargets("http.get", ParamsOf(R"({"url":"http://a%00b/"})")), ElementsAre("http://a%00b/"));
  EXPECT_THAT(NamedTargets("process.run", ParamsOf(R"({"program":"sh","args":["-c","echo 'hi'"]})")),
              ElementsAre(R"(sh -c 'echo '\''hi'\''')"));
  // Not strings: their JSON text. Nothing named: nothing.
  EXPECT_THAT(NamedTargets("fs.exists", ParamsOf(R"({"path":5})")), ElementsAre("5"));
  EXPECT_THAT(NamedTargets("fs.grep", ParamsOf(R"({"paths":["a",1]})")), ElementsAre(R"(["a",1])"));
  EXPECT_THAT(NamedTargets("fs.nope", ParamsOf("{}")), ElementsAre());
  // A huge path is cut, saying how long it was.
  std::string huge(100000, 'a');
  std::vector<std::string> cut = NamedTargets("fs.read", ParamsOf(R"({"path":")" + huge + "\"}"));
  ASSERT_EQ(cut.size(), 1u);
  EXPECT_EQ(cut[0], std::string(kMaxNamedTargetBytes, 'a') + "… (100000 bytes)");
}

TEST_F(RequestAuditTest, DecidedRequestsKeepWhatTheGateJudged) {
  DefaultGate gate(ProjectWritableTool());
  RequestScope scope(RequestId(1), "fs.rename", true);
  ASSERT_TRUE(gate.gate.Authorize(scope, "write", "a", PolicyDecision::Allow("rule a")).ok());
  const Params& params = ParamsOf(R"({"from":"a","to":"../b"})");
  // `to` was refused before its decision: the record names both ends.
  AuditRecord refused = AuditRecordForAnswer({"fs.rename", params, &scope, -32001}, "t", "c");
  EXPECT_EQ(refused.target, "a -> ../b");
  EXPECT_EQ(refused.decision, AuditDecision::kDeny);
  EXPECT_EQ(refused.rule, "refused: access denied");
  EXPECT_EQ(refused.code, -32001);
  EXPECT_EQ(refused.tool, "t");
  EXPECT_EQ(refused.call_id, "c");
  EXPECT_EQ(refused.method, "fs.rename");

  ASSERT_TRUE(gate.gate.Authorize(scope, "write", "b", PolicyDecision::Allow("rule b")).ok());
  AuditRecord allowed = AuditRecordForAnswer({"fs.rename", params, &scope, 0}, "t", "c");
  EXPECT_EQ(allowed.target, "a -> b");
  EXPECT_EQ(allowed.decision, AuditDecision::kAllow);
  // Allowed, then an escape found when the path was used: a denial.
  AuditRecord escaped = AuditRecordForAnswer({"fs.rename", params, &scope, -32001}, "t", "c");
  EXPECT_EQ(escaped.target, "a -> b");
  EXPECT_EQ(escaped.decision, AuditDecision::kDeny);
  EXPECT_EQ(escaped.rule, "refused: access denied");
  // Allowed, then failed: what happened stands.
  AuditRecord failed = AuditRecordForAnswer({"fs.rename", params, &scope, -32002}, "t", "c");
  EXPECT_EQ(failed.decision, AuditDecision::kAllow);
  EXPECT_EQ(failed.code, -32002);
}

TEST_F(RequestAuditTest, ADenialBeforeTheLastTargetKeepsItsRuleAndNamesEveryTarget) {
  DefaultGate gate(ProjectWritableTool());
  RequestScope scope(RequestId(1), "fs.rename", true);
  EXPECT_FALSE(gate.gate.Authorize(scope, "write", ".env", PolicyDecision::Deny("sensitive path")).ok());
  const Params& params = ParamsOf(R"({"from":".env","to":"public.txt"})");
  AuditRecord record = AuditRecordForAnswer({"fs.rename", params, &scope, -32001}, "t", "c");
  EXPECT_EQ(record.target, ".env -> public.txt");
  EXPECT_EQ(record.decision, AuditDecision::kDeny);
  EXPECT_EQ(record.rule, "sensitive path");
}

TEST_F(RequestAuditTest, RefusalsWithoutAScopeSayWhy) {
  const Params& params = ParamsOf(R"({"path":"/etc/passwd"})");
  AuditRecord unknown = AuditRecordForAnswer({"fs.nope", params, nullptr, -32601}, "t", "c");
  EXPECT_EQ(unknown.method, "fs.nope");
  EXPECT_EQ(unknown.target, "/etc/passwd");
  EXPECT_EQ(unknown.decision, AuditDecision::kDeny);
  EXPECT_EQ(unknown.rule, "refused: unknown method");
  EXPECT_EQ(RefusalRule(-32600), "refused: invalid request");
  EXPECT_EQ(RefusalRule(-32602), "refused: invalid params");
  EXPECT_EQ(RefusalRule(-32005), "not performed: cancelled");
}

}  // namespace
}  // namespace toolvfs
