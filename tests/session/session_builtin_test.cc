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
#include "project/null_store.h"
#include "policy/inquirer.h"
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
    Result<bool> is_session = SessionWorkspace::IsSession(store);  // the null store answers NoProject
    BuiltinRuntime runtime(store, BuiltinRuntimeOptions{.audit = sink_.get(),
                                                        .session_id = session_id,
                                                        .session_workspace = is_session.ok() && *is_session});
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


// delete_file of a directory judges every file it would remove: one the
// policy denies (a sensitive `.env`) refuses the call, names that file and
// deletes nothing; the audit record names it too.
TEST_F(SessionBuiltinTest, DeletingADirectoryChecksThePolicyForEveryFileInIt) {
  ASSERT_TRUE(store_->Write("notes/a.md", "a").ok());
  ASSERT_TRUE(store_->Write("notes/deep/.env", "SECRET=1").ok());
  Outcome refused = Run(*store_, "delete_file", R"({"path":"notes"})");
  EXPECT_TRUE(refused.is_error);
  EXPECT_THAT(TextOf(refused), HasSubstr("notes/deep/.env"));
  EXPECT_TRUE(*store_->Exists("notes/a.md"));
  EXPECT_TRUE(*store_->Exists("notes/deep/.env"));
  {
    std::lock_guard lock(mutex_);
    ASSERT_EQ(records_.size(), 1u);
    EXPECT_EQ(records_[0].target, "notes/deep/.env");
    EXPECT_EQ(records_[0].decision, AuditDecision::kDeny);
  }
  // Without it the directory goes, and a sibling with the prefix stays.
  ASSERT_TRUE(store_->Delete("notes/deep/.env", false).ok());
  ASSERT_TRUE(store_->Write("notesX/keep.md", "k").ok());
  EXPECT_THAT(TextOf(Run(*store_, "delete_file", R"({"path":"notes"})")), HasSubstr(R"("deleted_files":1)"));
  EXPECT_FALSE(*store_->Exists("notes"));
  EXPECT_TRUE(*store_->Exists("notesX/keep.md"));
}

// The snapshot tools on a session: create, list, diff (the session's own
// records left out), restore; policy on the project root; one audit record
// per call.
TEST_F(SessionBuiltinTest, SnapshotToolsCreateListDiffAndRestore) {
  ASSERT_FALSE(Run(*store_, "write_file", R"({"path":"a.txt","content":"one"})").is_error);
  std::string created = TextOf(Run(*store_, "snapshot_create", R"({"label":"before"})"));
  EXPECT_THAT(created, HasSubstr(R"({"id":"1","label":"before","created_at":")"));
  ASSERT_FALSE(Run(*store_, "write_file", R"({"path":"a.txt","content":"two","mode":"overwrite"})").is_error);
  ASSERT_FALSE(Run(*store_, "write_file", R"({"path":"b/c.txt","content":"c"})").is_error);
  EXPECT_THAT(TextOf(Run(*store_, "snapshot_list", "{}")), HasSubstr(R"({"snapshots":[{"id":"1","label":"before")"));
  EXPECT_EQ(TextOf(Run(*store_, "snapshot_diff", "{}")),
            R"({"from":"1","to":"current","added":["b","b/c.txt"],"added_count":2,"modified":["a.txt"],)"
            R"("modified_count":1,"deleted":[],"deleted_count":0})");
  EXPECT_THAT(TextOf(Run(*store_, "snapshot_restore", R"({"id":"7"})")),
              HasSubstr("There is no snapshot '7'; the snapshots are 1"));
  // Each path the restore would change is judged as a write: a tool that
  // may write only `b` may not revert `a.txt`, and nothing changes.
  Outcome denied = Run(*store_, "snapshot_restore", R"({"id":"1"})", std::nullopt, {"b"});
  EXPECT_TRUE(denied.is_error);
  EXPECT_THAT(TextOf(denied), HasSubstr("snapshot.restore of 'a.txt'"));
  EXPECT_THAT(TextOf(denied), HasSubstr("denied"));
  EXPECT_TRUE(*store_->Exists("b/c.txt"));

  EXPECT_THAT(TextOf(Run(*store_, "snapshot_restore", R"({"id":"1"})")),
              HasSubstr(R"("removed":2,"restored":0,"reverted":1})"));
  EXPECT_THAT(TextOf(Run(*store_, "read_file", R"({"path":"a.txt"})")), HasSubstr(R"("content":"one")"));
  EXPECT_FALSE(*store_->Exists("b"));
  // The snapshot stays: restoring again works, and the diff is empty.
  EXPECT_THAT(TextOf(Run(*store_, "snapshot_diff", R"({"from":"1"})")), HasSubstr(R"("added":[],"added_count":0)"));
  EXPECT_THAT(TextOf(Run(*store_, "snapshot_create", R"({"label":"bad\u0001"})")), HasSubstr("label"));

  std::lock_guard lock(mutex_);
  ASSERT_GE(records_.size(), 4u);
  EXPECT_EQ(records_[1].method, "snapshot.create");
  EXPECT_EQ(records_[1].target, ".");
  EXPECT_EQ(records_[1].decision, AuditDecision::kAllow);
}

// The paths a restore changes that the policy leaves open are one question,
// not one each; "for this run" then holds for each of them.
TEST_F(SessionBuiltinTest, ARestoreAsksOneQuestionForThePathsThePolicyLeavesOpen) {
  ASSERT_FALSE(Run(*store_, "write_file", R"({"path":"a.txt","content":"one"})").is_error);
  ASSERT_FALSE(Run(*store_, "snapshot_create", "{}").is_error);
  for (const char* path : {"x1.txt", "x2.txt", "x3.txt", "b/y.txt"}) {
    ASSERT_FALSE(Run(*store_, "write_file", std::string(R"({"content":"x","path":")") + path + "\"}").is_error);
  }
  ASSERT_FALSE(Run(*store_, "delete_file", R"({"path":"a.txt"})").is_error);

  std::vector<Inquiry> asked;
  std::unique_ptr<Inquirer> inquirer =
      NewScriptedInquirer({InquiryAnswer::kAllowForRun, InquiryAnswer::kDenyOnce}, &asked);
  BuiltinRuntime runtime(*store_, BuiltinRuntimeOptions{.inquirer = inquirer.get(), .audit = sink_.get(),
                                                        .session_workspace = true});
  CancelToken cancel;
  auto restore = [&] {
    Result<Outcome> outcome = runtime.Execute(ToolCall{.name = "snapshot_restore", .arguments_json = R"({"id":"1"})"},
                                              Tool("snapshot_restore", {"b"}), cancel);
    EXPECT_TRUE(outcome.ok()) << outcome.status().ToString();
    return outcome.ok() ? TextOf(*outcome) : "";
  };
  // `b` and `b/y.txt` are writable by the policy; the other four are
  // asked about at once.
  EXPECT_THAT(restore(), HasSubstr(R"("removed":5,"restored":1,"reverted":0})"));
  ASSERT_EQ(asked.size(), 1u);
  EXPECT_EQ(asked[0].operation, "write");
  EXPECT_EQ(asked[0].targets, (std::vector<std::string>{"a.txt", "x1.txt", "x2.txt", "x3.txt"}));
  EXPECT_EQ(InquiryTargetsShown(asked[0]), "4 paths: 'a.txt', 'x1.txt', 'x2.txt', 'x3.txt'");
  EXPECT_EQ(*store_->Read("a.txt"), "one");
  EXPECT_FALSE(*store_->Exists("x1.txt"));
  {
    std::lock_guard lock(mutex_);
    ASSERT_FALSE(records_.empty());
    EXPECT_EQ(records_.back().method, "snapshot.restore");
    EXPECT_EQ(records_.back().decision, AuditDecision::kAskedAllow);
  }

  // A denial of the one question refuses the restore, which changes nothing.
  for (const char* path : {"x1.txt", "z.txt"}) {
    ASSERT_FALSE(Run(*store_, "write_file", std::string(R"({"content":"x","path":")") + path + "\"}").is_error);
  }
  EXPECT_THAT(restore(), HasSubstr("snapshot.restore of 2 paths: 'x1.txt', 'z.txt' denied by the user"));
  ASSERT_EQ(asked.size(), 2u);
  EXPECT_TRUE(*store_->Exists("x1.txt"));
  EXPECT_TRUE(*store_->Exists("z.txt"));
  // Its audit record names every path refused, not only the first.
  std::lock_guard lock(mutex_);
  EXPECT_EQ(records_.back().method, "snapshot.restore");
  EXPECT_EQ(records_.back().target, "x1.txt -> z.txt");
  EXPECT_EQ(records_.back().decision, AuditDecision::kAskedDeny);
}

// On any store that keeps snapshots the tools work without a session; on
// one that does not, they answer why.
TEST_F(SessionBuiltinTest, SnapshotToolsOnAPlainStoreAndOnOneWithoutSnapshots) {
  auto plain = NewMemoryStore("plain");
  EXPECT_EQ(TextOf(Run(*plain, "snapshot_list", "{}")), R"({"snapshots":[]})");
  EXPECT_THAT(TextOf(Run(*plain, "snapshot_diff", "{}")), HasSubstr("there are none yet"));
  EXPECT_THAT(TextOf(Run(*plain, "snapshot_create", "{}")), HasSubstr(R"({"id":"1","label":null)"));
  ASSERT_TRUE(plain->Write(".toolvfs/x", "shown on a plain store").ok());
  EXPECT_THAT(TextOf(Run(*plain, "snapshot_diff", "{}")), HasSubstr(R"("added":[".toolvfs",".toolvfs/x"])"));

  auto none = NewNullStore();
  Outcome unsupported = Run(*none, "snapshot_create", "{}");
  EXPECT_TRUE(unsupported.is_error);
  EXPECT_THAT(TextOf(unsupported), HasSubstr("snapshot_create: The project"));
  EXPECT_THAT(TextOf(unsupported), HasSubstr("does not keep snapshots"));
}

}  // namespace
}  // namespace toolvfs
