// The session tools as builtins (BuiltinRuntime on a session workspace):
// the session suite's rules under the tool's policy, one audit record per
// call with its path, mode and result size, the session check, and the
// generic builtins unchanged on a workspace that is not a session.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <mutex>
#include <string>
#include <vector>

#include "project/memory_store.h"
#include "runtime/builtin_runtime.h"
#include "session/session_workspace.h"

namespace toolvfs {
namespace {

using ::testing::HasSubstr;

class SessionBuiltinTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = NewMemoryStore("builtin-session");
    ASSERT_TRUE(SessionWorkspace::Create(*store_, {.id = "s1"}).ok());
  }

  static ToolConfig Tool(const std::string& name, std::vector<std::string> writable = {""}) {
    ToolConfig tool;
    tool.name = name;
    tool.source = ToolSource::kBuiltin;
    tool.has_sandbox_table = true;
    tool.sandbox.filesystem_allow = {""};
    tool.sandbox.filesystem_writable.prefixes = std::move(writable);
    return tool;
  }

  Outcome Run(ProjectFiles& store, const std::string& name, const std::string& arguments,
              std::optional<std::string> session_id = std::nullopt, std::vector<std::string> writable = {""}) {
    BuiltinRuntime runtime(store, BuiltinRuntimeOptions{.audit = sink_.get(),
                                                        .session_id = session_id,
                                                        .session_workspace = *SessionWorkspace::IsSession(store)});
    CancelToken cancel;
    Result<Outcome> outcome =
        runtime.Execute(ToolCall{.name = name, .id = "c-test", .arguments_json = arguments}, Tool(name, writable), cancel);
    EXPECT_TRUE(outcome.ok()) << outcome.status().ToString();
    return outcome.ok() ? std::move(outcome).value() : Outcome{};
  }

  static std::string TextOf(const Outcome& outcome) {
    if (outcome.is_error) return "error: " + (outcome.error ? outcome.error->message : "");
    return outcome.content.empty() ? "" : outcome.content.front().text;
  }

  std::unique_ptr<ProjectFiles> store_;
  std::mutex mutex_;
  std::vector<AuditRecord> records_;
  std::unique_ptr<AuditSink> sink_ = NewCallbackAuditSink([this](const AuditRecord& record) {
    std::lock_guard lock(mutex_);
    records_.push_back(record);
  });
};

TEST_F(SessionBuiltinTest, TheFourToolsRunTheSessionSuiteAndAuditPathModeAndSize) {
  std::string created = TextOf(Run(*store_, "write_file", R"({"path":"notes/a.md","content":"hello\n"})"));
  EXPECT_THAT(created, HasSubstr(R"("action":"created","path":"notes/a.md","version":1)"));
  // The session default mode is create: a second write needs a mode.
  EXPECT_THAT(TextOf(Run(*store_, "write_file", R"({"path":"notes/a.md","content":"x"})")),
              HasSubstr("use mode \"overwrite\" or \"append\""));
  EXPECT_THAT(TextOf(Run(*store_, "write_file",
                         R"({"path":"notes/a.md","content":"more\n","mode":"append","expected_version":1})")),
              HasSubstr(R"("version":2)"));
  EXPECT_THAT(TextOf(Run(*store_, "read_file", R"({"path":"notes/a.md","offset":2,"limit":1})")),
              HasSubstr(R"("content":"more\n","total_lines":2,"offset":2,"lines_returned":1)"));
  EXPECT_EQ(TextOf(Run(*store_, "list_directory", "{}")), R"({"path":"","entries":[{"name":"notes","type":"directory"}]})");
  EXPECT_THAT(TextOf(Run(*store_, "delete_file", R"({"path":"notes"})")), HasSubstr(R"("deleted_files":1)"));
  EXPECT_THAT(TextOf(Run(*store_, "read_file", R"({"path":"/etc/passwd"})")), HasSubstr("absolute paths are not allowed"));

  std::lock_guard lock(mutex_);
  ASSERT_EQ(records_.size(), 7u);
  EXPECT_EQ(records_[0].method, "session.write_file:create");
  EXPECT_EQ(records_[0].target, "notes/a.md");
  EXPECT_EQ(records_[0].decision, AuditDecision::kAllow);
  EXPECT_EQ(records_[0].bytes_out, created.size());
  EXPECT_EQ(records_[2].method, "session.write_file:append");
  EXPECT_EQ(records_[3].method, "session.read_file");
  EXPECT_EQ(records_[4].target, ".");
  EXPECT_EQ(records_[6].decision, AuditDecision::kDeny);
  EXPECT_NE(records_[6].code, 0);
}

TEST_F(SessionBuiltinTest, ThePolicyJudgesTheSessionPath) {
  Outcome denied = Run(*store_, "write_file", R"({"path":"a.txt","content":"x"})", std::nullopt, {"elsewhere"});
  EXPECT_TRUE(denied.is_error);
  EXPECT_THAT(TextOf(denied), HasSubstr("denied"));
  EXPECT_FALSE(*store_->Exists("a.txt"));
}

TEST_F(SessionBuiltinTest, ACallForAnotherSessionIsRefusedAndChangesNothing) {
  Outcome refused = Run(*store_, "write_file", R"({"path":"a.txt","content":"x"})", "s2");
  EXPECT_TRUE(refused.is_error);
  EXPECT_THAT(TextOf(refused), HasSubstr("'s2'"));
  EXPECT_THAT(TextOf(refused), HasSubstr("'s1'"));
  EXPECT_FALSE(*store_->Exists("a.txt"));
  EXPECT_FALSE(Run(*store_, "write_file", R"({"path":"a.txt","content":"x"})", "s1").is_error);
}

TEST_F(SessionBuiltinTest, OtherWorkspacesKeepTheGenericBuiltins) {
  auto plain = NewMemoryStore("plain");
  // The generic write_file overwrites by default and answers with a line.
  EXPECT_EQ(TextOf(Run(*plain, "write_file", R"({"path":"a.txt","content":"x"})")), "Wrote 1 byte to 'a.txt'");
  EXPECT_EQ(TextOf(Run(*plain, "write_file", R"({"path":"a.txt","content":"y"})")), "Wrote 1 byte to 'a.txt'");
  BuiltinRuntime runtime(*plain, BuiltinRuntimeOptions{.session_id = "s1"});
  CancelToken cancel;
  Result<Outcome> refused =
      runtime.Execute(ToolCall{.name = "read_file", .arguments_json = R"({"path":"a.txt"})"}, Tool("read_file"), cancel);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("is not a session workspace"));
}

}  // namespace
}  // namespace toolvfs
