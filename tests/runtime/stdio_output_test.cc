#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "runtime/stdio_runtime.h"

namespace toolvfs {
namespace {

using ::testing::HasSubstr;

Outcome Parse(const std::string& out, int exit_code = 0, const std::string& err = "") {
  StdioCapture capture{.stdout_text = out, .stderr_tail = err, .exit = ExitStatus{.code = exit_code}};
  return ParseStdioOutput(capture, "t");
}

TEST(ParseStdioOutput, Success) {
  Outcome text = Parse(R"({"type":"success","content":"done"})");
  EXPECT_EQ(text.kind, Outcome::Kind::kCompleted);
  EXPECT_FALSE(text.is_error);
  ASSERT_EQ(text.content.size(), 1u);
  EXPECT_EQ(text.content[0].text, "done");

  Outcome blocks = Parse(R"({"type":"success","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]})"
                         "\n");
  ASSERT_EQ(blocks.content.size(), 2u);
  EXPECT_EQ(blocks.content[1].text, "b");
}

TEST(ParseStdioOutput, ErrorWithTraceAndTransient) {
  Outcome outcome = Parse(R"({"type":"error","message":"no such file","trace":["a","b"],"transient":true})", 1);
  EXPECT_TRUE(outcome.is_error);
  ASSERT_TRUE(outcome.error);
  EXPECT_EQ(outcome.error->message, "no such file");
  EXPECT_THAT(outcome.error->trace, ::testing::ElementsAre("a", "b"));
  EXPECT_TRUE(outcome.error->transient);
  EXPECT_EQ(outcome.failure, StatusCode::kOk);
}

TEST(ParseStdioOutput, NeedsInputWithEachAnswerType) {
  for (const char* answer_type : {R"("Boolean")", R"("Text")", R"({"Select":{"options":["a","b"]}})"}) {
    Outcome outcome = Parse(std::string(R"({"type":"needs_input","question":{"id":"q1","text":"Sure?","answer_type":)") +
                            answer_type + "}}");
    EXPECT_EQ(outcome.kind, Outcome::Kind::kNeedsInput) << answer_type;
    ASSERT_TRUE(outcome.question) << answer_type;
    EXPECT_EQ(outcome.question->id, "q1");
    EXPECT_EQ(outcome.question->text, "Sure?");
    EXPECT_THAT(outcome.question->json, HasSubstr(R"("answer_type")"));
  }
  Outcome flat = Parse(R"({"type":"needs_input","question":{"id":"q","text":"x","answer_type":"Select","options":["a"]}})");
  EXPECT_EQ(flat.kind, Outcome::Kind::kNeedsInput);
}

TEST(ParseStdioOutput, MalformedShapesAreFailures) {
  for (const char* out : {R"({"type":"needs_input"})",
                          R"({"type":"needs_input","question":{"text":"x","answer_type":"Text"}})",
                          R"({"type":"needs_input","question":{"id":"q","text":"x","answer_type":"Number"}})",
                          R"({"type":"needs_input","question":{"id":"q","text":"x","answer_type":"Select"}})",
                          R"({"type":"success","content":[{"text":"no type"}]})",
                          R"({"content":[1]})"}) {
    Outcome outcome = Parse(out);
    EXPECT_TRUE(outcome.is_error) << out;
    EXPECT_EQ(outcome.failure, StatusCode::kInternal) << out;
    ASSERT_TRUE(outcome.error);
    EXPECT_THAT(outcome.error->message, HasSubstr("Tool 't' printed an invalid outcome: ")) << out;
  }
}

TEST(ParseStdioOutput, McpEnvelope) {
  Outcome ok = Parse(R"({"content":[{"type":"text","text":"hi"}]})");
  EXPECT_FALSE(ok.is_error);
  ASSERT_EQ(ok.content.size(), 1u);
  EXPECT_EQ(ok.content[0].text, "hi");

  Outcome failed = Parse(R"({"content":[{"type":"text","text":"bad path"}],"isError":true})");
  EXPECT_TRUE(failed.is_error);
  ASSERT_TRUE(failed.error);
  EXPECT_EQ(failed.error->message, "bad path");
}

TEST(ParseStdioOutput, RawTextFollowsTheExitCode) {
  Outcome ok = Parse("plain output\n");
  EXPECT_FALSE(ok.is_error);
  ASSERT_EQ(ok.content.size(), 1u);
  EXPECT_EQ(ok.content[0].text, "plain output\n");

  // JSON of another shape is raw text too.
  Outcome other = Parse(R"({"type":"other"})");
  EXPECT_FALSE(other.is_error);
  ASSERT_EQ(other.content.size(), 1u);
  EXPECT_EQ(other.content[0].text, R"({"type":"other"})");

  Outcome empty = Parse("");
  EXPECT_FALSE(empty.is_error);
  EXPECT_TRUE(empty.content.empty());

  Outcome failed = Parse("partial\n", 3, "warming up\nbad input\n");
  EXPECT_TRUE(failed.is_error);
  EXPECT_EQ(failed.failure, StatusCode::kOk);
  ASSERT_EQ(failed.content.size(), 1u);
  EXPECT_EQ(failed.content[0].text, "partial\n");
  ASSERT_TRUE(failed.error);
  EXPECT_EQ(failed.error->message, "exited with status 3: bad input");
  EXPECT_THAT(failed.error->trace, ::testing::ElementsAre("warming up", "bad input"));
  EXPECT_EQ(failed.stderr_tail, "warming up\nbad input\n");
}

}  // namespace
}  // namespace toolvfs
