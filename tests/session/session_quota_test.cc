// The session's quota (docs/sessions.md, "Quota"): max_total_bytes and
// max_files, counted by SessionWorkspace through every path that changes
// the workspace, on the memory store and on a sqlite workspace.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "config/config.h"
#include "host/cancel_token.h"
#include "runtime/session_quota_runtime.h"
#include "session/session_config.h"
#include "session/session_test_store.h"
#include "session/session_workspace.h"

namespace toolvfs {
namespace {

using ::testing::HasSubstr;

constexpr uint64_t kQuotaBytes = 100;
constexpr uint64_t kQuotaFiles = 3;

class SessionQuotaTest : public SessionOnEachStoreTest {
 protected:
  void SetUp() override {
    SessionSettings settings{.id = "agent-1"};
    settings.limits.max_total_bytes = kQuotaBytes;
    settings.limits.max_files = kQuotaFiles;
    CreateSession("quota-test", settings);
  }

  Result<SessionWriteResult> Write(std::string path, size_t bytes, SessionWriteMode mode = SessionWriteMode::kCreate) {
    return session_->WriteFile({.path = std::move(path), .content = std::string(bytes, 'x'), .mode = mode});
  }

  SessionUsage Usage() {
    Result<SessionUsage> usage = session_->Usage();
    EXPECT_TRUE(usage.ok()) << usage.status().ToString();
    return usage.ok() ? *usage : SessionUsage{};
  }
};

TEST_P(SessionQuotaTest, AWriteOverTheByteQuotaIsRefusedBeforeAnythingIsWritten) {
  ASSERT_TRUE(Write("a", 60).ok());
  ASSERT_TRUE(Write("notes/b", 40).ok());  // exactly the quota
  Result<SessionWriteResult> over = Write("notes/c", 1);
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.status().code(), StatusCode::kTooLarge);
  EXPECT_EQ(over.status().message(),
            "Writing 'notes/c' would bring the session to 101 bytes, over its limit max_total_bytes = 100 (100 bytes); "
            "nothing was written (delete files the session no longer needs)");
  EXPECT_FALSE(*store_->Exists("notes/c"));
  EXPECT_EQ(Usage(), (SessionUsage{.bytes = 100, .files = 2}));
}

TEST_P(SessionQuotaTest, AnOverwriteFreesWhatTheFileHeldAndAnAppendAddsToIt) {
  ASSERT_TRUE(Write("a", 60).ok());
  ASSERT_TRUE(Write("a", 100, SessionWriteMode::kOverwrite).ok());
  Result<SessionWriteResult> appended = Write("a", 1, SessionWriteMode::kAppend);
  ASSERT_FALSE(appended.ok());
  EXPECT_THAT(appended.status().message(), HasSubstr("Writing 'a' would bring the session to 101 bytes"));
  EXPECT_EQ(store_->Metadata("a")->size, 100u);
  ASSERT_TRUE(Write("a", 10, SessionWriteMode::kOverwrite).ok());
  ASSERT_TRUE(Write("a", 90, SessionWriteMode::kAppend).ok());
  EXPECT_EQ(Usage(), (SessionUsage{.bytes = 100, .files = 1}));
}

TEST_P(SessionQuotaTest, TheFileQuotaCountsFilesNotTheSessionsRecords) {
  ASSERT_TRUE(Write("a", 1).ok());
  ASSERT_TRUE(Write("b", 1).ok());
  ASSERT_TRUE(Write("d/c", 1).ok());  // each has a sidecar under .toolvfs/: not counted
  Result<SessionWriteResult> fourth = Write("d/e", 1);
  ASSERT_FALSE(fourth.ok());
  EXPECT_EQ(fourth.status().code(), StatusCode::kTooLarge);
  EXPECT_THAT(fourth.status().message(),
              HasSubstr("Writing 'd/e' would bring the session to 4 files, over its limit max_files = 3"));
  EXPECT_TRUE(Write("a", 5, SessionWriteMode::kOverwrite).ok());  // no new file
  EXPECT_EQ(Usage(), (SessionUsage{.bytes = 7, .files = 3}));
}

TEST_P(SessionQuotaTest, DeletesGiveTheirShareBack) {
  ASSERT_TRUE(Write("d/a", 50).ok());
  ASSERT_TRUE(Write("d/b", 30).ok());
  ASSERT_TRUE(Write("c", 20).ok());
  EXPECT_FALSE(Write("f", 1).ok());  // full
  ASSERT_TRUE(session_->DeleteFile("d").ok());
  EXPECT_EQ(Usage(), (SessionUsage{.bytes = 20, .files = 1}));
  ASSERT_TRUE(session_->DeleteFile("c").ok());
  EXPECT_EQ(Usage(), (SessionUsage{}));
  EXPECT_TRUE(Write("e", 100).ok());
}

TEST_P(SessionQuotaTest, RestoreAndResetKeepTheCount) {
  ASSERT_TRUE(Write("a", 50).ok());
  ASSERT_TRUE(Write("b", 10).ok());
  Result<std::string> snapshot = session_->Snapshot("half");
  ASSERT_TRUE(snapshot.ok()) << snapshot.status().ToString();
  ASSERT_TRUE(Write("b", 20, SessionWriteMode::kOverwrite).ok());
  ASSERT_TRUE(session_->DeleteFile("a").ok());
  ASSERT_TRUE(Write("d/e/c", 80).ok());
  EXPECT_EQ(Usage(), (SessionUsage{.bytes = 100, .files = 2}));
  ASSERT_TRUE(session_->Restore(*snapshot).ok());  // d/e/c goes, a comes back, b is 10 bytes again
  EXPECT_EQ(Usage(), (SessionUsage{.bytes = 60, .files = 2}));
  EXPECT_FALSE(Write("c", 41).ok());
  EXPECT_TRUE(Write("c", 40).ok());
  ASSERT_TRUE(session_->Reset().ok());
  EXPECT_EQ(Usage(), (SessionUsage{}));
  EXPECT_TRUE(Write("z", 100).ok());
}

TEST_P(SessionQuotaTest, SessionsOnOneStoreShareOneCount) {
  // The builtin runtime opens a SessionWorkspace per call: two calls must not
  // each stay under the quota while together they go over it.
  Result<std::unique_ptr<SessionWorkspace>> other = SessionWorkspace::Open(*store_);
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  ASSERT_TRUE(Write("a", 60).ok());
  Result<SessionWriteResult> second =
      (*other)->WriteFile({.path = "b", .content = std::string(60, 'x'), .mode = SessionWriteMode::kCreate});
  ASSERT_FALSE(second.ok());
  EXPECT_THAT(second.status().message(), HasSubstr("max_total_bytes = 100"));
}

TEST_P(SessionQuotaTest, OpeningCountsWhatIsThereWithoutTheSessionsRecords) {
  ASSERT_TRUE(Write("a", 30).ok());
  session_.reset();  // no session open: the next one counts afresh
  ASSERT_TRUE(store_->Write("outside/b", std::string(50, 'y')).ok());
  Result<std::unique_ptr<SessionWorkspace>> reopened = SessionWorkspace::Open(*store_);
  ASSERT_TRUE(reopened.ok()) << reopened.status().ToString();
  session_ = std::move(reopened).value();
  EXPECT_EQ(Usage(), (SessionUsage{.bytes = 80, .files = 2}));
  EXPECT_FALSE(Write("c", 21).ok());
  EXPECT_TRUE(Write("c", 20).ok());
}

TEST_P(SessionQuotaTest, AChangePastTheSessionIsReportedWhenCountedAgainAndOnlyShrinkingWritesPass) {
  ASSERT_TRUE(Write("a", 10).ok());
  // A stdio tool's copy synced back: the store changed past the session.
  ASSERT_TRUE(store_->Write("big", std::string(150, 'y')).ok());
  Status counted = session_->RecountAfterOutsideChange();
  EXPECT_EQ(counted.code(), StatusCode::kTooLarge);
  EXPECT_THAT(counted.message(), HasSubstr("brought it to 160 bytes, over its limit max_total_bytes = 100"));
  EXPECT_EQ(Usage(), (SessionUsage{.bytes = 160, .files = 2}));
  EXPECT_FALSE(Write("a", 1, SessionWriteMode::kAppend).ok());
  EXPECT_TRUE(Write("big", 120, SessionWriteMode::kOverwrite).ok());  // smaller: allowed while over
  ASSERT_TRUE(session_->DeleteFile("big").ok());
  EXPECT_TRUE(session_->RecountAfterOutsideChange().ok());
  EXPECT_TRUE(Write("c", 90).ok());
}

TEST_P(SessionQuotaTest, AMaterializedCopyIsCountedAfterItsSyncBack) {
  ASSERT_TRUE(Write("a", 10).ok());
  Result<std::unique_ptr<SessionDirectory>> directory = session_->Materialize();
  ASSERT_TRUE(directory.ok()) << directory.status().ToString();
  std::ofstream((*directory)->path() + "/made-by-a-command.bin") << std::string(200, 'z');
  Status released = (*directory)->Release();
  EXPECT_EQ(released.code(), StatusCode::kTooLarge);
  EXPECT_THAT(released.message(), HasSubstr("210 bytes, over its limit max_total_bytes = 100"));
  EXPECT_EQ(Usage(), (SessionUsage{.bytes = 210, .files = 2}));
  EXPECT_FALSE(Write("b", 1).ok());
}

// A stdio tool in miniature: its run ends with its copy synced back into
// the store, past the session layer.
class SyncingBackRuntime final : public ToolRuntime {
 public:
  SyncingBackRuntime(ProjectFiles& store, size_t bytes) : store_(store), bytes_(bytes) {}
  Result<Outcome> Execute(const ToolCall&, const ToolConfig&, CancelToken&) override {
    TOOLVFS_RETURN_IF_ERROR(store_.Write("build/output.bin", std::string(bytes_, 'o')));
    Outcome done;
    done.content.push_back(ContentBlock::Text("built"));
    return done;
  }

 private:
  ProjectFiles& store_;
  size_t bytes_;
};

TEST_P(SessionQuotaTest, AToolsSyncBackIsCountedAfterItAndItsOutcomeNamesTheLimit) {
  ASSERT_TRUE(Write("a", 10).ok());
  ToolConfig tool;
  tool.name = "build";
  CancelToken cancel;
  EXPECT_TRUE(*CountsSessionQuotaAfter(*store_, /*builtin=*/false, tool.name));
  EXPECT_FALSE(*CountsSessionQuotaAfter(*store_, /*builtin=*/true, "write_file"));  // the session suite

  SyncingBackRuntime within_runtime(*store_, 90);
  SessionQuotaRuntime within(within_runtime, *store_);
  Result<Outcome> fits = within.Execute(ToolCall{}, tool, cancel);
  ASSERT_TRUE(fits.ok()) << fits.status().ToString();
  EXPECT_FALSE(fits->is_error);
  EXPECT_EQ(Usage(), (SessionUsage{.bytes = 100, .files = 2}));

  SyncingBackRuntime over_runtime(*store_, 200);
  SessionQuotaRuntime over(over_runtime, *store_);
  Result<Outcome> excess = over.Execute(ToolCall{}, tool, cancel);
  ASSERT_TRUE(excess.ok()) << excess.status().ToString();
  EXPECT_TRUE(excess->is_error);
  ASSERT_TRUE(excess->error.has_value());
  EXPECT_THAT(excess->error->message, HasSubstr("brought it to 210 bytes, over its limit max_total_bytes = 100"));
  EXPECT_EQ(excess->content.front().text, "built");  // the tool's own answer stays
  EXPECT_EQ(Usage(), (SessionUsage{.bytes = 210, .files = 2}));
  EXPECT_FALSE(Write("b", 1).ok());
}

INSTANTIATE_TEST_SUITE_P(Stores, SessionQuotaTest, ::testing::Values(Backend::kMemory, Backend::kSqlite), BackendName);

TEST(SessionQuotaRecordTest, TheQuotaIsRecordedAndOldRecordsGetTheDefaults) {
  SessionSettings settings{.id = "s"};
  settings.limits.max_total_bytes = 12345;
  settings.limits.max_files = 67;
  Result<SessionRecord> round_trip = ParseSessionRecord(SessionRecordJson(settings, true, std::nullopt));
  ASSERT_TRUE(round_trip.ok()) << round_trip.status().ToString();
  EXPECT_EQ(round_trip->settings.limits.max_total_bytes, 12345u);
  EXPECT_EQ(round_trip->settings.limits.max_files, 67u);

  // A record written before the quota existed.
  Result<SessionRecord> old = ParseSessionRecord(
      R"({"id":"s","max_content_chars":48000,"max_depth":16,"max_segment_chars":80,"allowed_roots":[],)"
      R"("mounts":[],"mounts_applied":true})");
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  EXPECT_EQ(old->settings.limits.max_total_bytes, uint64_t{1} << 30);
  EXPECT_EQ(old->settings.limits.max_files, 100000u);

  Result<SessionRecord> damaged = ParseSessionRecord(
      R"({"id":"s","max_content_chars":48000,"max_depth":16,"max_segment_chars":80,"max_files":"many",)"
      R"("allowed_roots":[],"mounts":[],"mounts_applied":true})");
  ASSERT_FALSE(damaged.ok());
  EXPECT_THAT(damaged.status().message(), HasSubstr("max_files is not a positive integer"));
}

TEST(SessionQuotaRecordTest, TheSessionTableSetsTheQuota) {
  Result<Config> config = ParseConfig("[session]\nmax_total_bytes = 5000000\nmax_files = 50\n", "toolvfs.toml");
  ASSERT_TRUE(config.ok()) << config.status().message();
  SessionSettings settings = SessionSettingsFrom(config->session, "agent");
  EXPECT_EQ(settings.limits.max_total_bytes, 5000000u);
  EXPECT_EQ(settings.limits.max_files, 50u);
  Result<Config> zero = ParseConfig("[session]\nmax_files = 0\n", "toolvfs.toml");
  ASSERT_FALSE(zero.ok());
  EXPECT_THAT(zero.status().message(), HasSubstr("session.max_files"));
}

}  // namespace
}  // namespace toolvfs
