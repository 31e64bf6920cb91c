// The session workspace's rules (SPEC.md §7), each with its boundary, on
// the memory store and on a sqlite workspace.
#include "session/session_workspace.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>

#include "project/fault_injecting_store.h"
#include "project/memory_store.h"
#include "project/sql/sqlite_store.h"
#include "protocol/base64.h"
#include "session/session_tools.h"
#include "session/snapshot_tools.h"
#include "session/session_test_store.h"

namespace toolvfs {
namespace {

using ::testing::HasSubstr;

// A clock the test moves by hand.
struct ManualClock {
  int64_t now_ms = 1'700'000'000'000;
  SessionClock Clock() {
    return [this] { return now_ms; };
  }
};

std::string Repeat(std::string_view piece, size_t times) {
  std::string text;
  for (size_t i = 0; i < times; ++i) text += piece;
  return text;
}

// The path with `segments` segments, each "s".
std::string DeepPath(size_t segments) {
  std::string path = "s";
  for (size_t i = 1; i < segments; ++i) path += "/s";
  return path;
}

class SessionWorkspaceTest : public SessionOnEachStoreTest {
 protected:
  void SetUp() override { CreateSession("session-test", {.id = "agent-1"}, clock_.Clock()); }

  Result<SessionWriteResult> Write(std::string path, std::string content,
                                   SessionWriteMode mode = SessionWriteMode::kCreate,
                                   std::optional<uint64_t> expected_version = std::nullopt) {
    return session_->WriteFile({.path = std::move(path),
                                .content = std::move(content),
                                .mode = mode,
                                .expected_version = expected_version});
  }

  ManualClock clock_;
};

TEST_P(SessionWorkspaceTest, PathRulesHaveTheirOwnMessages) {
  EXPECT_THAT(session_->CheckPath("/a", false).status().message(), HasSubstr("absolute paths are not allowed"));
  EXPECT_THAT(session_->CheckPath("a/../b", false).status().message(), HasSubstr("'..' segments"));
  EXPECT_THAT(session_->CheckPath("./b", false).status().message(), HasSubstr("'.' segments"));
  EXPECT_EQ(*session_->CheckPath("a//b/", false), "a/b");
  EXPECT_THAT(session_->CheckPath("", false).status().message(), HasSubstr("not the workspace root"));
  EXPECT_EQ(*session_->CheckPath("", true), "");
  EXPECT_THAT(session_->CheckPath(".toolvfs/session.json", false).status().message(), HasSubstr("reserved"));
}

TEST_P(SessionWorkspaceTest, SixteenSegmentsPassSeventeenFail) {
  EXPECT_TRUE(session_->CheckPath(DeepPath(16), false).ok());
  Result<std::string> deep = session_->CheckPath(DeepPath(17), false);
  ASSERT_FALSE(deep.ok());
  EXPECT_THAT(deep.status().message(), HasSubstr("more than 16 segments"));
}

TEST_P(SessionWorkspaceTest, EightyCharacterSegmentsPassEightyOneFail) {
  EXPECT_TRUE(session_->CheckPath(std::string(80, 'x'), false).ok());
  Result<std::string> longer = session_->CheckPath(std::string(81, 'x'), false);
  ASSERT_FALSE(longer.ok());
  EXPECT_THAT(longer.status().message(), HasSubstr("81 characters, more than the limit of 80"));
}

TEST_P(SessionWorkspaceTest, NonAsciiSegmentsFail) {
  EXPECT_TRUE(session_->CheckPath("notes/plan-v2 (final).md", false).ok());
  Result<std::string> accented = session_->CheckPath("notes/caf\xC3\xA9.md", false);
  ASSERT_FALSE(accented.ok());
  EXPECT_THAT(accented.status().message(), HasSubstr("must be printable ASCII"));
  EXPECT_FALSE(session_->CheckPath("a\tb", false).ok());
}

TEST_P(SessionWorkspaceTest, ContentLimitCountsCodePointsNotBytes) {
  // "é" is two bytes: 48,000 of them are 96,000 bytes and still fit.
  ASSERT_TRUE(Write("fits.txt", Repeat("\xC3\xA9", 48000)).ok());
  Result<SessionWriteResult> over = Write("over.txt", Repeat("\xC3\xA9", 48001));
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.status().code(), StatusCode::kTooLarge);
  EXPECT_THAT(over.status().message(), HasSubstr("48001 characters; at most 48000"));
  EXPECT_FALSE(*store_->Exists("over.txt"));
}

TEST_P(SessionWorkspaceTest, BinaryLimitCountsDecodedBytes) {
  std::string bytes(48000, '\xFF');
  ASSERT_TRUE(session_->WriteFile({.path = "b.bin", .content = Base64Encode(bytes), .encoding = SessionEncoding::kBinary}).ok());
  Result<SessionWriteResult> over = session_->WriteFile(
      {.path = "c.bin", .content = Base64Encode(bytes + "x"), .encoding = SessionEncoding::kBinary});
  ASSERT_FALSE(over.ok());
  EXPECT_THAT(over.status().message(), HasSubstr("48001 bytes; at most 48000"));
  Result<SessionRead> read = session_->ReadFile("b.bin", std::nullopt, std::nullopt);
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->info.encoding, SessionEncoding::kBinary);
  EXPECT_EQ(*Base64Decode(read->content), bytes);
}

TEST_P(SessionWorkspaceTest, InvalidUtf8UnderUtf8IsAnErrorAndBadEncodingNamesIt) {
  Result<SessionWriteResult> bad = Write("a.txt", "ok\xFF");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("not valid UTF-8"));
  EXPECT_THAT(ParseSessionEncoding("latin-1").status().message(), HasSubstr("'latin-1'"));
}

TEST_P(SessionWorkspaceTest, ConfiguredLimitsApply) {
  auto small_store = NewMemoryStore("small");
  auto small = SessionWorkspace::Create(
      *small_store, {.id = "s", .limits = {.max_content_chars = 3, .max_depth = 2, .max_segment_chars = 4}});
  ASSERT_TRUE(small.ok());
  EXPECT_TRUE((*small)->WriteFile({.path = "abcd/x", .content = "abc"}).ok());
  EXPECT_FALSE((*small)->WriteFile({.path = "y", .content = "abcd"}).ok());
  EXPECT_FALSE((*small)->WriteFile({.path = "a/b/c", .content = "a"}).ok());
  EXPECT_FALSE((*small)->WriteFile({.path = "abcde", .content = "a"}).ok());
}

TEST_P(SessionWorkspaceTest, VersionsAndTimestampsFollowTheInjectedClock) {
  Result<SessionWriteResult> created = Write("a.txt", "one\n");
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_EQ(created->info.version, 1u);
  EXPECT_EQ(created->info.created_ms, clock_.now_ms);
  EXPECT_EQ(created->info.updated_ms, clock_.now_ms);
  const int64_t created_at = clock_.now_ms;

  clock_.now_ms += 1500;
  Result<SessionWriteResult> overwritten = Write("a.txt", "two\n", SessionWriteMode::kOverwrite);
  ASSERT_TRUE(overwritten.ok());
  EXPECT_EQ(overwritten->info.version, 2u);
  EXPECT_EQ(overwritten->info.created_ms, created_at);
  EXPECT_EQ(overwritten->info.updated_ms, clock_.now_ms);

  clock_.now_ms += 10;
  Result<SessionWriteResult> appended = Write("a.txt", "three\n", SessionWriteMode::kAppend);
  ASSERT_TRUE(appended.ok());
  EXPECT_EQ(appended->info.version, 3u);
  EXPECT_EQ(appended->info.size_bytes, 10u);
  EXPECT_EQ(appended->info.updated_ms, clock_.now_ms);
  EXPECT_EQ(FormatTimestamp(appended->info.created_ms), "2023-11-14T22:13:20.000Z");
}

TEST_P(SessionWorkspaceTest, EachModeOnExistingAndMissingFiles) {
  EXPECT_EQ(Write("m.txt", "x", SessionWriteMode::kOverwrite).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(Write("m.txt", "x", SessionWriteMode::kAppend).status().code(), StatusCode::kNotFound);
  EXPECT_THAT(Write("m.txt", "x", SessionWriteMode::kAppend).status().message(), HasSubstr("use mode \"create\""));
  ASSERT_TRUE(Write("m.txt", "x").ok());
  Result<SessionWriteResult> again = Write("m.txt", "y");
  EXPECT_EQ(again.status().code(), StatusCode::kAlreadyExists);
  EXPECT_THAT(again.status().message(), HasSubstr("use mode \"overwrite\" or \"append\""));
  EXPECT_TRUE(Write("m.txt", "y", SessionWriteMode::kOverwrite).ok());
  EXPECT_TRUE(Write("m.txt", "z", SessionWriteMode::kAppend).ok());
  EXPECT_EQ(*store_->Read("m.txt"), "yz");
  ASSERT_TRUE(Write("dir/f.txt", "x").ok());
  EXPECT_EQ(Write("dir", "x", SessionWriteMode::kOverwrite).status().code(), StatusCode::kIsDirectory);
}

TEST_P(SessionWorkspaceTest, ExpectedVersionConflictsChangeNothing) {
  ASSERT_TRUE(Write("v.txt", "1").ok());
  ASSERT_TRUE(Write("v.txt", "2", SessionWriteMode::kOverwrite, 1).ok());
  Result<SessionWriteResult> stale = Write("v.txt", "stale", SessionWriteMode::kOverwrite, 1);
  ASSERT_FALSE(stale.ok());
  EXPECT_EQ(stale.status().code(), StatusCode::kChanged);
  EXPECT_THAT(stale.status().message(), HasSubstr("expected version 1 but the file is at version 2"));
  EXPECT_EQ(*store_->Read("v.txt"), "2");
  EXPECT_FALSE(Write("new.txt", "x", SessionWriteMode::kCreate, 1).ok());
  EXPECT_FALSE(*store_->Exists("new.txt"));
}

TEST_P(SessionWorkspaceTest, ListingIsShallowSortedAndHidesTheRecord) {
  ASSERT_TRUE(Write("b.txt", "x").ok());
  ASSERT_TRUE(Write("a/inner.txt", "x").ok());
  Result<std::vector<SessionEntry>> root = session_->ListDirectory("");
  ASSERT_TRUE(root.ok());
  ASSERT_EQ(root->size(), 2u);
  EXPECT_EQ((*root)[0].name, "a");
  EXPECT_TRUE((*root)[0].is_directory);
  EXPECT_EQ((*root)[1].name, "b.txt");
  EXPECT_EQ(session_->ListDirectory("b.txt").status().code(), StatusCode::kNotDirectory);
  EXPECT_EQ(session_->ListDirectory("missing").status().code(), StatusCode::kNotFound);
}

TEST_P(SessionWorkspaceTest, ReadWindowsCountLines) {
  std::string text;
  for (int i = 1; i <= 5; ++i) text += "line " + std::to_string(i) + "\n";
  ASSERT_TRUE(Write("t.txt", text).ok());
  Result<SessionRead> window = session_->ReadFile("t.txt", 2, 2);
  ASSERT_TRUE(window.ok());
  EXPECT_EQ(window->content, "line 2\nline 3\n");
  EXPECT_EQ(window->total_lines, 5u);
  EXPECT_EQ(window->lines_returned, 2u);
  EXPECT_EQ(session_->ReadFile("t.txt", 1, 2001).status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(session_->ReadFile("t.txt", 1, 2000).ok());
  EXPECT_EQ(session_->ReadFile("missing.txt", std::nullopt, std::nullopt).status().code(), StatusCode::kNotFound);
}

TEST_P(SessionWorkspaceTest, DirectoryDeletionIsSegmentWise) {
  ASSERT_TRUE(Write("a/b/one.txt", "1").ok());
  ASSERT_TRUE(Write("a/b/deeper/two.txt", "2").ok());
  ASSERT_TRUE(Write("a/bc/keep.txt", "3").ok());
  Result<SessionDeleteResult> deleted = session_->DeleteFile("a/b");
  ASSERT_TRUE(deleted.ok()) << deleted.status().ToString();
  EXPECT_EQ(deleted->files_deleted, 2u);
  EXPECT_TRUE(deleted->was_directory);
  EXPECT_FALSE(*store_->Exists("a/b"));
  EXPECT_EQ(*store_->Read("a/bc/keep.txt"), "3");
  EXPECT_EQ(session_->DeleteFile("a/b").status().code(), StatusCode::kNotFound);
  EXPECT_THAT(session_->DeleteFile("").status().message(), HasSubstr("root cannot be deleted"));
  // A file deleted and made again starts over at version 1.
  ASSERT_TRUE(session_->DeleteFile("a/bc/keep.txt").ok());
  EXPECT_EQ(Write("a/bc/keep.txt", "new")->info.version, 1u);
}

TEST_P(SessionWorkspaceTest, SessionMismatchNamesBoth) {
  Status mismatch = session_->CheckSession("agent-2");
  EXPECT_EQ(mismatch.code(), StatusCode::kPermissionDenied);
  EXPECT_THAT(mismatch.message(), HasSubstr("'agent-2'"));
  EXPECT_THAT(mismatch.message(), HasSubstr("'agent-1'"));
  EXPECT_TRUE(session_->CheckSession("agent-1").ok());
}

TEST_P(SessionWorkspaceTest, SnapshotRestoreAndDiffThroughTheTools) {
  ASSERT_TRUE(RunSessionTool(*session_, "write_file", {{"path", "a.txt"}, {"content", "one"}}).ok());
  Result<std::string> snapshot = session_->Snapshot("before");
  ASSERT_TRUE(snapshot.ok()) << snapshot.status().ToString();
  ASSERT_TRUE(RunSessionTool(*session_, "write_file", {{"path", "a.txt"}, {"content", "two"}, {"mode", "overwrite"}}).ok());
  ASSERT_TRUE(RunSessionTool(*session_, "write_file", {{"path", "b.txt"}, {"content", "new"}}).ok());
  Result<TreeDiff> diff = session_->Diff(*snapshot, std::nullopt);
  ASSERT_TRUE(diff.ok());
  EXPECT_EQ(diff->added, std::vector<std::string>{"b.txt"});
  EXPECT_EQ(diff->modified, std::vector<std::string>{"a.txt"});
  ASSERT_TRUE(session_->Restore(*snapshot).ok());
  Result<std::string> read = RunSessionTool(*session_, "read_file", {{"path", "a.txt"}});
  ASSERT_TRUE(read.ok());
  EXPECT_THAT(*read, HasSubstr("\"content\":\"one\""));
  EXPECT_THAT(*read, HasSubstr("\"version\":1"));
  EXPECT_FALSE(RunSessionTool(*session_, "read_file", {{"path", "b.txt"}}).ok());
  // Restoring never changes the snapshot: a second restore gives the same.
  ASSERT_TRUE(RunSessionTool(*session_, "delete_file", {{"path", "a.txt"}}).ok());
  ASSERT_TRUE(session_->Restore(*snapshot).ok());
  EXPECT_EQ(*store_->Read("a.txt"), "one");
  ASSERT_EQ(session_->Snapshots()->size(), 1u);
  EXPECT_EQ((*session_->Snapshots())[0].label, "before");
}

// Writes `path` through `session` on another thread, as another MCP call
// would, and waits for it: a check running now must not hold it up.
void WriteAsAnotherCall(SessionWorkspace& session, const std::string& path) {
  std::thread writer(
      [&] { EXPECT_TRUE(RunSessionTool(session, "write_file", {{"path", path}, {"content", "late"}}).ok()); });
  writer.join();
}

// snapshot_restore never undoes a path its check did not see: a write by
// another call (its own SessionWorkspace on the same store, as each
// builtin call opens one) while the check runs (outside the lock: it may
// wait for the user) is found when the restore lists again under the
// lock, and checked before anything changes; refusing it changes nothing.
TEST_P(SessionWorkspaceTest, AWriteDuringARestoresCheckIsCheckedBeforeItIsUndone) {
  ASSERT_TRUE(Write("a.txt", "one").ok());
  Result<std::string> snapshot = session_->Snapshot("before");
  ASSERT_TRUE(snapshot.ok()) << snapshot.status().ToString();
  ASSERT_TRUE(Write("b.txt", "new").ok());
  Result<std::unique_ptr<SessionWorkspace>> other = SessionWorkspace::Open(*store_);
  ASSERT_TRUE(other.ok()) << other.status().ToString();

  std::vector<std::vector<std::string>> checked;
  auto check_with_late_write = [&](bool refuse_late) -> RestoreCheck {
    return [&checked, &other, refuse_late](const std::vector<std::string>& paths) -> Status {
      checked.push_back(paths);
      if (checked.size() == 1) {
        WriteAsAnotherCall(**other, "secret.txt");
        return OkStatus();
      }
      return refuse_late ? PermissionDeniedError("secret.txt is not yours") : OkStatus();
    };
  };
  Result<std::string> refused =
      RunSnapshotTool(*store_, session_.get(), "snapshot_restore", {{"id", *snapshot}}, check_with_late_write(true));
  EXPECT_EQ(refused.status().code(), StatusCode::kPermissionDenied);
  ASSERT_EQ(checked.size(), 2u);
  EXPECT_EQ(checked[0], std::vector<std::string>{"b.txt"});
  EXPECT_EQ(checked[1], std::vector<std::string>{"secret.txt"});
  EXPECT_TRUE(*store_->Exists("b.txt"));
  EXPECT_TRUE(*store_->Exists("secret.txt"));

  ASSERT_TRUE(RunSessionTool(*session_, "delete_file", {{"path", "secret.txt"}}).ok());
  checked.clear();
  Result<std::string> restored =
      RunSnapshotTool(*store_, session_.get(), "snapshot_restore", {{"id", *snapshot}}, check_with_late_write(false));
  ASSERT_TRUE(restored.ok()) << restored.status().ToString();
  EXPECT_THAT(*restored, HasSubstr(R"("removed":2,"restored":0,"reverted":0})"));
  ASSERT_EQ(checked.size(), 2u);
  EXPECT_FALSE(*store_->Exists("b.txt"));
  EXPECT_FALSE(*store_->Exists("secret.txt"));
}

// The same for delete_file on a directory: a file written into it while
// the check runs is checked before it is deleted with the rest.
TEST_P(SessionWorkspaceTest, AFileWrittenDuringADeletesCheckIsCheckedBeforeItIsDeleted) {
  ASSERT_TRUE(Write("d/a.txt", "one").ok());
  Result<std::unique_ptr<SessionWorkspace>> other = SessionWorkspace::Open(*store_);
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  std::vector<std::vector<std::string>> checked;
  Result<SessionDeleteResult> deleted = session_->DeleteFile("d", [&](const std::vector<std::string>& files) {
    checked.push_back(files);
    if (checked.size() == 1) WriteAsAnotherCall(**other, "d/b.txt");
    return OkStatus();
  });
  ASSERT_TRUE(deleted.ok()) << deleted.status().ToString();
  EXPECT_EQ(deleted->files_deleted, 2u);
  ASSERT_EQ(checked.size(), 2u);
  EXPECT_EQ(checked[0], std::vector<std::string>{"d/a.txt"});
  EXPECT_EQ(checked[1], std::vector<std::string>{"d/b.txt"});
  EXPECT_FALSE(*store_->Exists("d"));
}

TEST_P(SessionWorkspaceTest, ResetEmptiesButKeepsTheSession) {
  ASSERT_TRUE(Write("a/b.txt", "x").ok());
  ASSERT_TRUE(session_->Reset().ok());
  EXPECT_TRUE(session_->ListDirectory("")->empty());
  EXPECT_TRUE(session_->ListAllFiles()->empty());
  Result<std::unique_ptr<SessionWorkspace>> reopened = SessionWorkspace::Open(*store_);
  ASSERT_TRUE(reopened.ok());
  EXPECT_EQ((*reopened)->id(), "agent-1");
}

TEST_P(SessionWorkspaceTest, ListAllFilesIsSortedWithMetadata) {
  ASSERT_TRUE(Write("z.txt", "zz").ok());
  ASSERT_TRUE(Write("a/b.txt", "b").ok());
  ASSERT_TRUE(session_->WriteFile({.path = "a/c.bin", .content = Base64Encode("\x01\x02"), .encoding = SessionEncoding::kBinary}).ok());
  Result<std::vector<SessionFileInfo>> all = session_->ListAllFiles();
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[0].path, "a/b.txt");
  EXPECT_EQ((*all)[1].path, "a/c.bin");
  EXPECT_EQ((*all)[1].encoding, SessionEncoding::kBinary);
  EXPECT_EQ((*all)[2].size_bytes, 2u);
  std::string json = SessionFilesJson(*all);
  EXPECT_THAT(json, HasSubstr("\"path\":\"a/b.txt\",\"version\":1,\"created_at\":\"2023-11-14T22:13:20.000Z\""));
  EXPECT_THAT(json, ::testing::Not(HasSubstr("content")));
}

// A write is two store commits, the file and then its sidecar (times and
// encoding). New content beside the sidecar of the content before (a
// crash between the two, a failed sidecar write) is read like a file
// without a sidecar, never with the encoding of the content before; and a
// failed sidecar write answers the write as done, since it is.
TEST_P(SessionWorkspaceTest, ASidecarOfOtherContentIsIgnored) {
  const std::string binary("\xff\xfe\x00", 3);
  ASSERT_TRUE(Write("a.txt", "text\n").ok());
  // What a crash after the file's commit of a binary overwrite leaves.
  ASSERT_TRUE(store_->Write("a.txt", binary).ok());
  Result<SessionRead> read = session_->ReadFile("a.txt", std::nullopt, std::nullopt);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->info.encoding, SessionEncoding::kBinary);
  EXPECT_EQ(read->content, Base64Encode(binary));
  EXPECT_EQ(read->info.version, 2u);

  FaultInjectingProjectFiles faulty(*store_);
  Result<std::unique_ptr<SessionWorkspace>> opened = SessionWorkspace::Open(faulty, nullptr, clock_.Clock());
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  ASSERT_TRUE((*opened)->WriteFile({.path = "b.txt", .content = "one\n"}).ok());
  const uint64_t writes_before = faulty.calls(StoreOperation::kWrite);
  faulty.FailNthCall(2, StatusCode::kUnavailable, "disk on fire", StoreOperation::kWrite);
  Result<SessionWriteResult> overwritten = (*opened)->WriteFile({.path = "b.txt",
                                                                 .content = Base64Encode(binary),
                                                                 .mode = SessionWriteMode::kOverwrite,
                                                                 .encoding = SessionEncoding::kBinary});
  ASSERT_TRUE(overwritten.ok()) << overwritten.status().ToString();
  EXPECT_EQ(faulty.calls(StoreOperation::kWrite), writes_before + 2);
  EXPECT_EQ(faulty.failed_calls(), 1u) << "the sidecar's write failed";
  EXPECT_EQ(overwritten->info.encoding, SessionEncoding::kBinary);
  EXPECT_EQ(overwritten->info.version, 2u);
  read = session_->ReadFile("b.txt", std::nullopt, std::nullopt);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->info.encoding, SessionEncoding::kBinary);
  EXPECT_EQ(read->content, Base64Encode(binary));
}

// A store that wrote but fails the lookup after the write (a server gone
// between two calls): the write is answered as done, with the figures it
// made, so that a tool does not append the same bytes again.
TEST_P(SessionWorkspaceTest, AWriteWhoseLookupAfterwardsFailsIsStillAnsweredAsDone) {
  ASSERT_TRUE(Write("log.txt", "one\n").ok());
  FaultInjectingProjectFiles faulty(*store_);
  Result<std::unique_ptr<SessionWorkspace>> opened = SessionWorkspace::Open(faulty, nullptr, clock_.Clock());
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  // The quota's count, walked once per opened session, is not what this is about.
  ASSERT_TRUE((*opened)->Usage().ok());
  // The lookup before the write answers; the next three, all the write
  // makes after it, fail.
  const auto fail_lookups_after_the_write = [&faulty] {
    faulty.ClearFaults();
    for (uint64_t n = 2; n <= 4; ++n) {
      faulty.FailNthCall(n, StatusCode::kUnavailable, "server gone", StoreOperation::kMetadata);
    }
  };
  fail_lookups_after_the_write();
  Result<SessionWriteResult> appended =
      (*opened)->WriteFile({.path = "log.txt", .content = "two\n", .mode = SessionWriteMode::kAppend});
  ASSERT_TRUE(appended.ok()) << appended.status().ToString();
  EXPECT_GE(faulty.failed_calls(), 1u);
  EXPECT_EQ(appended->info.path, "log.txt");
  EXPECT_EQ(appended->info.version, 2u);
  EXPECT_EQ(appended->info.size_bytes, 8u);
  EXPECT_EQ(*store_->Read("log.txt"), "one\ntwo\n");
  EXPECT_EQ(appended->info.version, *store_->Metadata("log.txt")->version);

  fail_lookups_after_the_write();
  Result<SessionWriteResult> overwritten =
      (*opened)->WriteFile({.path = "log.txt", .content = "three\n", .mode = SessionWriteMode::kOverwrite});
  ASSERT_TRUE(overwritten.ok()) << overwritten.status().ToString();
  EXPECT_EQ(overwritten->info.version, 3u);
  EXPECT_EQ(overwritten->info.size_bytes, 6u);
  EXPECT_EQ(overwritten->info.version, *store_->Metadata("log.txt")->version);
  EXPECT_EQ(*store_->Read("log.txt"), "three\n");

  fail_lookups_after_the_write();
  Result<SessionWriteResult> created = (*opened)->WriteFile({.path = "new.txt", .content = "abc"});
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_EQ(created->info.version, 1u);
  EXPECT_EQ(created->info.size_bytes, 3u);
}

// What a read and an overwrite ask of the store: a file the tools did not
// write (no sidecar) is read once, not again to tell its encoding; an
// overwrite looks up the file's metadata before and after, not twice before.
TEST_P(SessionWorkspaceTest, AReadAndAnOverwriteAskTheStoreNothingTwice) {
  ASSERT_TRUE(store_->Write("mounted.txt", "from a mount\n").ok());
  ASSERT_TRUE(Write("own.txt", "one\n").ok());
  FaultInjectingProjectFiles counted(*store_);
  Result<std::unique_ptr<SessionWorkspace>> opened = SessionWorkspace::Open(counted, nullptr, clock_.Clock());
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  // The quota's count, walked once per opened session, is not what this is about.
  ASSERT_TRUE((*opened)->Usage().ok());
  const uint64_t reads = counted.calls(StoreOperation::kRead);
  const uint64_t lookups = counted.calls(StoreOperation::kMetadata);
  Result<SessionRead> read = (*opened)->ReadFile("mounted.txt", std::nullopt, std::nullopt);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->info.encoding, SessionEncoding::kUtf8);
  EXPECT_EQ(counted.calls(StoreOperation::kRead) - reads, 2u) << "the file and its (missing) sidecar";
  EXPECT_EQ(counted.calls(StoreOperation::kMetadata) - lookups, 1u);

  const uint64_t lookups_before_write = counted.calls(StoreOperation::kMetadata);
  ASSERT_TRUE((*opened)->WriteFile({.path = "own.txt", .content = "two\n", .mode = SessionWriteMode::kOverwrite}).ok());
  EXPECT_EQ(counted.calls(StoreOperation::kMetadata) - lookups_before_write, 2u) << "before and after the write";
  EXPECT_EQ(*store_->Read("own.txt"), "two\n");
}

TEST_P(SessionWorkspaceTest, ReopeningKeepsTheSettingsAndRefusesASecondCreate) {
  EXPECT_EQ(SessionWorkspace::Create(*store_, {.id = "again"}).status().code(), StatusCode::kAlreadyExists);
  auto plain = NewMemoryStore("plain");
  EXPECT_THAT(SessionWorkspace::Open(*plain).status().message(), HasSubstr("not a session workspace"));
}

TEST_P(SessionWorkspaceTest, ToolErrorsChangeNothing) {
  ASSERT_TRUE(RunSessionTool(*session_, "write_file", {{"path", "a.txt"}, {"content", "one"}}).ok());
  EXPECT_FALSE(RunSessionTool(*session_, "write_file", {{"path", "/abs"}, {"content", "x"}}).ok());
  EXPECT_FALSE(RunSessionTool(*session_, "write_file", {{"path", "a.txt"}, {"content", "x"}, {"encoding", "latin-1"}}).ok());
  EXPECT_FALSE(RunSessionTool(*session_, "delete_file", {{"path", "nothing"}}).ok());
  EXPECT_EQ(*store_->Read("a.txt"), "one");
  EXPECT_EQ(store_->Metadata("a.txt")->version, 1u);
}

INSTANTIATE_TEST_SUITE_P(Stores, SessionWorkspaceTest, ::testing::Values(Backend::kMemory, Backend::kSqlite),
                         BackendName);

TEST(SessionWorkspaceStoreTest, StoresWithoutSnapshotsAreRefused) {
  auto directory = std::filesystem::temp_directory_path() / ("toolvfs-session-fs-" + std::to_string(::getpid()));
  std::filesystem::create_directories(directory);
  Result<std::unique_ptr<ProjectFiles>> fs = OpenProject(directory.string());
  ASSERT_TRUE(fs.ok());
  EXPECT_EQ(SessionWorkspace::Create(**fs, {.id = "x"}).status().code(), StatusCode::kUnsupported);
  std::filesystem::remove_all(directory);
}

// A mount loader that writes 25 files under the mount's path and counts
// its calls: the session's side of mounts (when they load, and again after
// a reset) without the host-mount component.
struct CountingLoader {
  int calls = 0;
  MountLoader Loader() {
    return [this](const SessionSettings& settings, ProjectFiles& files) -> Status {
      ++calls;
      for (const SessionMount& mount : settings.mounts) {
        for (int i = 0; i < 25; ++i) {
          char name[16];
          std::snprintf(name, sizeof name, "f%02d.txt", i);
          TOOLVFS_RETURN_IF_ERROR(files.Write(mount.mount_path + "/" + name, "mounted"));
        }
      }
      return OkStatus();
    };
  }
};

TEST(SessionMountsTest, MountsLoadAtCreationAndAgainOnTheFirstUseAfterAReset) {
  auto store = NewMemoryStore("mounts");
  CountingLoader loader;
  auto session = SessionWorkspace::Create(
      *store, {.id = "m", .mounts = {{.host_path = "/srv/app", .mount_path = "app"}}}, loader.Loader());
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  EXPECT_EQ(loader.calls, 1);
  Result<std::vector<SessionFileInfo>> files = (*session)->ListAllFiles();
  ASSERT_EQ(files->size(), 25u);
  EXPECT_EQ((*files)[0].version, 1u);
  EXPECT_EQ((*files)[0].encoding, SessionEncoding::kUtf8);
  ASSERT_TRUE((*session)->Reset().ok());
  EXPECT_EQ(loader.calls, 1);  // not at the reset itself
  EXPECT_EQ((*session)->ListDirectory("app")->size(), 25u);
  EXPECT_EQ(loader.calls, 2);
  EXPECT_EQ((*session)->ListDirectory("app")->size(), 25u);
  EXPECT_EQ(loader.calls, 2);  // once per reset
  // A session reopened later (another process) finds them applied.
  auto reopened = SessionWorkspace::Open(*store, loader.Loader());
  ASSERT_TRUE(reopened.ok());
  EXPECT_TRUE((*reopened)->ReadFile("app/f00.txt", std::nullopt, std::nullopt).ok());
  EXPECT_EQ(loader.calls, 2);
}

TEST(SessionMountsTest, GuidanceListsEachMountWithUpToTwentyEntries) {
  auto store = NewMemoryStore("guided");
  CountingLoader loader;
  auto session = SessionWorkspace::Create(
      *store, {.id = "g", .mounts = {{.host_path = "/srv/app", .mount_path = "app"}}}, loader.Loader());
  ASSERT_TRUE(session.ok());
  Result<std::string> guidance = SessionGuidance(**session);
  ASSERT_TRUE(guidance.ok());
  EXPECT_THAT(*guidance, HasSubstr("`app` (from the host folder /srv/app)"));
  EXPECT_THAT(*guidance, HasSubstr("app/f19.txt"));
  EXPECT_THAT(*guidance, ::testing::Not(HasSubstr("app/f20.txt")));
  EXPECT_THAT(*guidance, HasSubstr("and 5 more"));
}

TEST(SessionMountsTest, MountsThatFailToLoadCreateNothing) {
  auto store = NewMemoryStore("refused");
  // The default loader: host mounts, and no allowed root is configured.
  SessionSettings settings{.id = "x", .mounts = {{.host_path = "/srv/app"}}};
  EXPECT_THAT(SessionWorkspace::Create(*store, settings).status().message(), HasSubstr("/srv/app"));
  EXPECT_FALSE(*SessionWorkspace::IsSession(*store));
  Result<std::unique_ptr<SessionWorkspace>> failed = SessionWorkspace::Create(
      *store, settings, [](const SessionSettings&, ProjectFiles&) { return NotFoundError("root '/srv' is missing"); });
  EXPECT_THAT(failed.status().message(), HasSubstr("root '/srv' is missing"));
  EXPECT_FALSE(*SessionWorkspace::IsSession(*store));
}

TEST(SessionToolsTest, SchemasAreSortedAndWrittenForAModel) {
  const auto& tools = SessionTools();
  ASSERT_EQ(tools.size(), 4u);
  EXPECT_EQ(tools[0].name, "delete_file");
  EXPECT_EQ(tools[3].name, "write_file");
  for (const SessionToolInfo& tool : tools) EXPECT_GT(tool.description.size(), 100u) << tool.name;
}

TEST(SessionToolsTest, GuidanceHasTheSevenPointsAndTheMounts) {
  auto store = NewMemoryStore("guidance");
  auto session = SessionWorkspace::Create(*store, {.id = "g"});
  ASSERT_TRUE(session.ok());
  Result<std::string> guidance = SessionGuidance(**session);
  ASSERT_TRUE(guidance.ok());
  for (int point = 1; point <= 7; ++point) EXPECT_THAT(*guidance, HasSubstr(std::to_string(point) + ". "));
  EXPECT_THAT(*guidance, HasSubstr("expected_version"));
  EXPECT_THAT(*guidance, HasSubstr("No host folders are mounted"));
}

}  // namespace
}  // namespace toolvfs
