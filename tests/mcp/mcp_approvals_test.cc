#include "mcp/mcp_approvals.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "host/access_gate.h"
#include "host/request_audit.h"
#include "policy/tool_policy.h"
#include "protocol/wire_errors.h"

namespace toolvfs {
namespace {

using ::testing::HasSubstr;

const Inquiry kInquiry{"gen", "write", "src/a\x1b[2J.rs", "add \"src\" to filesystem.writable"};

TEST(McpApprovalsTest, TheFormNamesToolOperationAndEscapedTarget) {
  const std::string params = ElicitationParamsJson(kInquiry, "2025-11-25");
  EXPECT_NE(params.find(R"({"mode":"form","message":"Tool 'gen' asks to write 'src/a\\x1b[2J.rs', which its policy )"
                        R"(does not cover. Allow it? (To allow it for good: add \"src\" to )"
                        R"(tools.gen.sandbox.filesystem.writable.)"),
            std::string::npos)
      << params;
  EXPECT_NE(params.find(R"("oneOf":[{"const":"allow_once","title":"Allow once"},{"const":"allow_session",)"),
            std::string::npos)
      << params;
  EXPECT_NE(params.find(R"("required":["decision"])"), std::string::npos) << params;
}

// One question for several paths (a snapshot_restore's): the form lists
// them, and "allow for this session" then covers each of them.
TEST(McpApprovalsTest, OneFormForSeveralPathsListsThemAndAllowsEach) {
  Inquiry batch{"gen", "write", "a.txt", ""};
  batch.targets = {"a.txt", "b\x1b.txt"};
  EXPECT_NE(ElicitationParamsJson(batch, "2025-11-25")
                .find(R"("message":"Tool 'gen' asks to write 2 paths: 'a.txt', 'b\\x1b.txt', which its policy )"),
            std::string::npos)
      << ElicitationParamsJson(batch, "2025-11-25");
  McpSessionApprovals approvals;
  EXPECT_FALSE(approvals.Allowed("gen", "write", "a.txt"));
  approvals.Allow(batch);
  EXPECT_TRUE(approvals.Allowed("gen", "write", "a.txt"));
  EXPECT_TRUE(approvals.Allowed("gen", "write", "b\x1b.txt"));
  EXPECT_FALSE(approvals.Allowed("gen", "write", "c.txt"));
  EXPECT_FALSE(approvals.Allowed("gen", "read", "a.txt")) << "approvals are per operation";
  EXPECT_FALSE(approvals.Allowed("other", "write", "a.txt")) << "approvals are per tool";
}

// A call's gate learns from the inquirer what the session allowed: those
// targets are allowed without a question or a `pending`, and the audit
// record says so (rule kSessionApprovalRule), not that the user was asked
// now. Here the call has no channel to the client, so what the session
// did not allow is denied without asking, and the record says that too.
TEST(McpApprovalsTest, WhatTheSessionAllowedIsAuditedAsAllowedEarlier) {
  CancelToken cancel;
  McpCall call(nullptr, nullptr, cancel);
  McpSessionApprovals approvals;
  approvals.Allow(Inquiry{"gen", "write", "a.txt", ""});
  approvals.Allow(Inquiry{"gen", "write", "b.txt", ""});
  std::unique_ptr<Inquirer> inquirer = NewElicitationInquirer(call, approvals, "2025-11-25");
  ToolConfig tool;
  tool.name = "gen";
  const ToolPolicy policy = ToolPolicy::ForTool(tool, std::nullopt);
  AccessGate gate(policy, *inquirer);
  int pending_sent = 0;
  gate.set_pending_sender([&](const RequestId&, std::string_view) { ++pending_sent; });
  const PolicyDecision uncovered = PolicyDecision::Uncovered("add \"x\" to filesystem.writable");

  // One request per path, as a vfs tool writes them: one audit line each.
  const std::pair<const char*, const char*> expected[] = {
      {"a.txt", R"("decision":"asked-allow","rule":"user, for this MCP session","code":0)"},
      {"b.txt", R"("decision":"asked-allow","rule":"user, for this MCP session","code":0)"},
      {"c.txt", R"("decision":"deny","rule":"not covered, no interaction","code":-32001)"},
  };
  for (const auto& [path, fields] : expected) {
    RequestScope scope(RequestId(int64_t{1}), "fs.write", /*may_block=*/true);
    const Status status = gate.Authorize(scope, "write", path, uncovered);
    EXPECT_EQ(status.ok(), std::string_view(path) != "c.txt") << path << ": " << status.message();
    const AuditRecord record = AuditRecordForAnswer(
        {"fs.write", Params{}, &scope, status.ok() ? 0 : JsonRpcErrorCode(status.code())}, "gen", "c-1");
    EXPECT_THAT(record.ToJson(), HasSubstr(fields)) << path;
  }
  // A batch the session allowed whole: no question, recorded the same way.
  RequestScope batch(RequestId(int64_t{2}), "snapshot.restore", /*may_block=*/true);
  EXPECT_TRUE(gate.AuthorizeAll(batch, "write", {{"a.txt", uncovered}, {"b.txt", uncovered}}).ok());
  EXPECT_EQ(batch.decision(), AuditDecision::kAskedAllow);
  EXPECT_EQ(batch.rule(), kSessionApprovalRule);
  EXPECT_EQ(batch.target(), "a.txt -> b.txt");
  EXPECT_EQ(pending_sent, 0) << "nothing was asked";
}

TEST(McpApprovalsTest, EarlierRevisionsGetEnumNamesAndNoMode) {
  const std::string params = ElicitationParamsJson(kInquiry, "2025-06-18");
  EXPECT_EQ(params.find(R"("mode")"), std::string::npos) << params;
  EXPECT_NE(params.find(R"("enum":["allow_once","allow_session","deny"],)"
                        R"("enumNames":["Allow once","Allow for this session","Deny"],"default":"deny")"),
            std::string::npos)
      << params;
}

TEST(McpApprovalsTest, AnswersMapToInquiryAnswers) {
  EXPECT_EQ(*ParseElicitationAnswer(R"({"action":"accept","content":{"decision":"allow_once"}})"),
            InquiryAnswer::kAllowOnce);
  EXPECT_EQ(*ParseElicitationAnswer(R"({"action":"accept","content":{"decision":"allow_session"}})"),
            InquiryAnswer::kAllowForRun);
  EXPECT_EQ(*ParseElicitationAnswer(R"({"action":"accept","content":{"decision":"deny"}})"), InquiryAnswer::kDenyOnce);
  EXPECT_EQ(*ParseElicitationAnswer(R"({"action":"decline"})"), InquiryAnswer::kDenyOnce);
  EXPECT_EQ(*ParseElicitationAnswer(R"({"action":"cancel"})"), InquiryAnswer::kDenyOnce);
  Result<InquiryAnswer> odd = ParseElicitationAnswer(R"({"action":"accept","content":{"decision":"maybe"}})");
  ASSERT_FALSE(odd.ok());
  EXPECT_EQ(odd.status().message(), "the client's approval decision 'maybe' is none of allow_once, allow_session, deny");
  EXPECT_FALSE(ParseElicitationAnswer(R"({"action":"accept"})").ok());
  EXPECT_FALSE(ParseElicitationAnswer(R"({"action":"shrug"})").ok());
  EXPECT_FALSE(ParseElicitationAnswer("not json").ok());
}

TEST(McpApprovalsTest, WithoutAChannelTheInquirerDoesNotAsk) {
  CancelToken cancel;
  McpCall call(nullptr, nullptr, cancel);
  McpSessionApprovals approvals;
  std::unique_ptr<Inquirer> inquirer = NewElicitationInquirer(call, approvals, "2025-11-25");
  EXPECT_FALSE(inquirer->asks_user());
  EXPECT_FALSE(inquirer->Ask(kInquiry).ok());
  // What was allowed for the session is known without a channel.
  EXPECT_FALSE(inquirer->RememberedAllowRule(kInquiry.tool, kInquiry.operation, kInquiry.target).has_value());
  approvals.Allow(kInquiry);
  EXPECT_EQ(inquirer->RememberedAllowRule(kInquiry.tool, kInquiry.operation, kInquiry.target), kSessionApprovalRule);
  EXPECT_FALSE(inquirer->RememberedAllowRule(kInquiry.tool, kInquiry.operation, "src/b.rs").has_value());
}

}  // namespace
}  // namespace toolvfs
