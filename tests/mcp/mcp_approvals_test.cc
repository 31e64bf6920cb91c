#include "mcp/mcp_approvals.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

namespace toolvfs {
namespace {

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
  EXPECT_FALSE(approvals.Allowed(batch));
  approvals.Allow(batch);
  EXPECT_TRUE(approvals.Allowed(batch));
  EXPECT_TRUE(approvals.Allowed(Inquiry{"gen", "write", "b\x1b.txt", ""}));
  batch.targets.push_back("c.txt");
  EXPECT_FALSE(approvals.Allowed(batch));  // c.txt was not allowed
}

// A question about several paths asks only about those the session has
// not allowed yet: the gate of a later call does not know them.
TEST(McpApprovalsTest, ABatchIsNarrowedToWhatTheSessionHasNotAllowed) {
  McpSessionApprovals approvals;
  approvals.Allow(Inquiry{"gen", "write", "a.txt", ""});
  approvals.Allow(Inquiry{"gen", "write", "c.txt", ""});
  Inquiry batch{"gen", "write", "a.txt", "a hint"};
  batch.targets = {"a.txt", "b.txt", "c.txt", "d.txt"};
  std::optional<Inquiry> question = approvals.Unapproved(batch);
  ASSERT_TRUE(question.has_value());
  EXPECT_EQ(question->target, "b.txt");
  EXPECT_EQ(question->targets, (std::vector<std::string>{"b.txt", "d.txt"}));
  EXPECT_EQ(question->hint, "a hint");

  approvals.Allow(Inquiry{"gen", "write", "d.txt", ""});
  question = approvals.Unapproved(batch);
  ASSERT_TRUE(question.has_value());
  EXPECT_EQ(question->target, "b.txt");
  EXPECT_TRUE(question->targets.empty()) << "one path left: a plain question";

  approvals.Allow(*question);
  EXPECT_FALSE(approvals.Unapproved(batch).has_value());
  Inquiry other_tool = batch;
  other_tool.tool = "other";
  EXPECT_EQ(approvals.Unapproved(other_tool)->targets.size(), 4u) << "approvals are per tool";
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
  // What was allowed for the session is answered without a channel.
  approvals.Allow(kInquiry);
  EXPECT_EQ(*inquirer->Ask(kInquiry), InquiryAnswer::kAllowForRun);
  Inquiry other = kInquiry;
  other.target = "src/b.rs";
  EXPECT_FALSE(approvals.Allowed(other));
}

}  // namespace
}  // namespace toolvfs
