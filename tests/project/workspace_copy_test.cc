// CopyWorkspace between stores: memory -> sqlite -> memory keeps every
// state of the history (each snapshot's tree, labels, order) and the live
// tree, and leaves the source as it was.
#include "project/workspace_copy.h"

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "project/forwarding_store.h"
#include "project/memory_store.h"
#include "project/sql/sqlite_store.h"
#include "project/test_util.h"
#include "read_tree.h"

namespace toolvfs {
namespace {

using Tree = TreeState;

void ExpectOk(const Status& status) { ASSERT_TRUE(status.ok()) << status.ToString(); }

// The history the tests copy: three snapshots and a live state that add,
// change and delete files, make and remove empty directories, and turn a
// file into a directory and back.
struct History {
  std::vector<Tree> snapshot_trees;
  std::vector<std::optional<std::string>> labels;
  Tree live;
};

History BuildHistory(ProjectFiles& store) {
  History history;
  auto take = [&](std::optional<std::string> label) {
    std::optional<std::string_view> view;
    if (label) view = *label;
    Result<std::string> id = store.Snapshot(view);
    EXPECT_TRUE(id.ok()) << id.status().ToString();
    history.snapshot_trees.push_back(ReadTree(store));
    history.labels.push_back(std::move(label));
  };
  EXPECT_TRUE(store.Write("README.md", "# one\n").ok());
  EXPECT_TRUE(store.Write("src/main.cc", "int main() {}\n").ok());
  EXPECT_TRUE(store.Write("docs/empty/.keep", "").ok());
  EXPECT_TRUE(store.Delete("docs/empty/.keep").ok());  // docs/empty: an empty directory
  EXPECT_TRUE(store.Write("shape", "a file first").ok());
  take("first");
  EXPECT_TRUE(store.Write("README.md", "# two\n").ok());
  EXPECT_TRUE(store.Write("README.md", "more\n", WriteMode::kAppend).ok());
  EXPECT_TRUE(store.Delete("src", /*recursive=*/true).ok());
  EXPECT_TRUE(store.Delete("shape").ok());
  EXPECT_TRUE(store.Write("shape/inner.txt", "now a directory").ok());
  EXPECT_TRUE(store.Write("bin/tool", std::string("\0binary\xff", 8)).ok());
  take(std::nullopt);  // no label
  EXPECT_TRUE(store.Delete("docs", /*recursive=*/true).ok());
  EXPECT_TRUE(store.Write("later/empty/x", "").ok());
  EXPECT_TRUE(store.Delete("later/empty/x").ok());
  take("third");
  EXPECT_TRUE(store.Delete("shape", /*recursive=*/true).ok());
  EXPECT_TRUE(store.Write("shape", "a file again").ok());
  EXPECT_TRUE(store.Write("live-only.txt", "after the last snapshot").ok());
  history.live = ReadTree(store);
  return history;
}

// Every snapshot's tree, oldest first, read through `open`.
std::vector<Tree> SnapshotTrees(ProjectFiles& store, const SnapshotOpener& open) {
  std::vector<Tree> trees;
  Result<std::vector<SnapshotInfo>> snapshots = store.ListSnapshots();
  EXPECT_TRUE(snapshots.ok()) << snapshots.status().ToString();
  if (!snapshots.ok()) return trees;
  for (const SnapshotInfo& snapshot : *snapshots) {
    Result<std::unique_ptr<ProjectFiles>> opened = open(snapshot.id);
    EXPECT_TRUE(opened.ok()) << opened.status().ToString();
    if (opened.ok()) trees.push_back(ReadTree(**opened));
  }
  return trees;
}

// Every snapshot's tree of a memory store, read by restoring each in turn:
// it destroys the live state, so call it last.
std::vector<Tree> RestoredSnapshotTrees(ProjectFiles& store) {
  std::vector<Tree> trees;
  Result<std::vector<SnapshotInfo>> snapshots = store.ListSnapshots();
  EXPECT_TRUE(snapshots.ok());
  if (!snapshots.ok()) return trees;
  for (const SnapshotInfo& snapshot : *snapshots) {
    EXPECT_TRUE(store.Restore(snapshot.id).ok());
    trees.push_back(ReadTree(store));
  }
  return trees;
}

std::vector<std::optional<std::string>> Labels(ProjectFiles& store) {
  std::vector<std::optional<std::string>> labels;
  Result<std::vector<SnapshotInfo>> snapshots = store.ListSnapshots();
  EXPECT_TRUE(snapshots.ok());
  if (snapshots.ok()) {
    for (const SnapshotInfo& snapshot : *snapshots) labels.push_back(snapshot.label);
  }
  return labels;
}

TEST(WorkspaceCopyTest, MemoryToSqliteToMemoryKeepsEveryStateAndLabel) {
  TempDir dir;
  std::unique_ptr<ProjectFiles> memory = NewMemoryStore("source");
  History history = BuildHistory(*memory);
  ASSERT_EQ(history.snapshot_trees.size(), 3u);
  Result<std::vector<SnapshotInfo>> before = memory->ListSnapshots();
  ASSERT_TRUE(before.ok());
  Result<FileMetadata> readme_before = memory->Metadata("README.md");
  ASSERT_TRUE(readme_before.ok());

  // memory -> sqlite: the memory store has no snapshot projects, so the
  // copy restores each snapshot in turn and puts the live state back.
  const std::string sqlite_uri = "sqlite:" + dir.Join("store.db") + "#copied";
  Result<std::unique_ptr<ProjectFiles>> sqlite = OpenProject(sqlite_uri);
  ASSERT_TRUE(sqlite.ok()) << sqlite.status().ToString();
  Result<WorkspaceCopyReport> first = CopyWorkspace(*memory, **sqlite, {});
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_EQ(first->snapshots.size(), 3u);
  EXPECT_EQ(first->snapshots[0].label, "first");
  EXPECT_EQ(first->snapshots[1].label, std::nullopt);
  EXPECT_GE(first->directories_created, 2u);  // docs/empty, later/empty

  // The source is as it was: live tree, versions, snapshot list (the
  // temporary snapshot of its live state is gone).
  EXPECT_EQ(ReadTree(*memory), history.live);
  Result<std::vector<SnapshotInfo>> after = memory->ListSnapshots();
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(*after, *before);
  Result<FileMetadata> readme_after = memory->Metadata("README.md");
  ASSERT_TRUE(readme_after.ok());
  EXPECT_EQ(readme_after->version, readme_before->version);

  EXPECT_EQ(ReadTree(**sqlite), history.live);
  const SnapshotOpener sqlite_snapshots = SnapshotOpenerForUri(sqlite_uri, {});
  EXPECT_EQ(SnapshotTrees(**sqlite, sqlite_snapshots), history.snapshot_trees);
  EXPECT_EQ(Labels(**sqlite), history.labels);

  // sqlite -> memory, reading the snapshots as read-only snapshot projects.
  std::unique_ptr<ProjectFiles> back = NewMemoryStore("back");
  WorkspaceCopyOptions options;
  options.open_snapshot = sqlite_snapshots;
  Result<WorkspaceCopyReport> second = CopyWorkspace(**sqlite, *back, options);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(second->snapshots.size(), 3u);
  Result<std::vector<SnapshotInfo>> sqlite_snapshot_list = (*sqlite)->ListSnapshots();
  ASSERT_TRUE(sqlite_snapshot_list.ok());
  EXPECT_EQ(sqlite_snapshot_list->size(), 3u) << "the temporary snapshot of the live state is deleted";

  EXPECT_EQ(ReadTree(*back), history.live);
  EXPECT_EQ(Labels(*back), history.labels);
  EXPECT_EQ(RestoredSnapshotTrees(*back), history.snapshot_trees);
}

TEST(WorkspaceCopyTest, LaterStatesWriteOnlyWhatChanged) {
  std::unique_ptr<ProjectFiles> source = NewMemoryStore();
  for (int i = 0; i < 50; ++i) ExpectOk(source->Write("f" + std::to_string(i), "content"));
  ASSERT_TRUE(source->Snapshot().ok());
  ExpectOk(source->Write("f7", "changed"));
  ASSERT_TRUE(source->Snapshot().ok());
  ExpectOk(source->Delete("f8"));

  std::unique_ptr<ProjectFiles> target = NewMemoryStore();
  Result<WorkspaceCopyReport> report = CopyWorkspace(*source, *target, {});
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->files_written, 51u);  // 50 for the first state, 1 for the second, none for the live
  EXPECT_EQ(report->paths_deleted, 1u);
  EXPECT_EQ(ReadTree(*target), ReadTree(*source));
}

// Counts the comparisons a copy asks of the store it wraps.
class ComparisonCountingStore final : public ForwardingProjectFiles {
 public:
  using ForwardingProjectFiles::ForwardingProjectFiles;
  Result<TreeDiff> Diff(std::string_view from, std::optional<std::string_view> to) override {
    ++comparisons;
    return ForwardingProjectFiles::Diff(from, to);
  }
  Result<TreeChanges> DiffWithRewrites(std::string_view from, std::optional<std::string_view> to) override {
    ++comparisons;
    return ForwardingProjectFiles::DiffWithRewrites(from, to);
  }
  int comparisons = 0;
};

// Diff compares content only, so a file written again with the same bytes
// is no change to it; the copy still gives the target that write's version
// and times, in the snapshot after it and in the live state, whatever the
// source store (memory's used to be lost), comparing each state with the
// one before once.
class RewriteCopyTest : public ::testing::TestWithParam<std::string> {};

TEST_P(RewriteCopyTest, ARewriteWithTheSameBytesKeepsItsVersionAndTimes) {
  TempDir dir;
  const std::string source_uri =
      GetParam() == "memory" ? "memory:rewrites" : "sqlite:" + dir.Join("store.db") + "#src";
  Result<std::unique_ptr<ProjectFiles>> source = OpenProject(source_uri);
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  // The clock counts milliseconds: a pause makes each write's time its own.
  auto rewrite = [&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(3));
    ExpectOk((*source)->Write("f", "same bytes"));
  };
  std::vector<FileMetadata> wanted;  // at each snapshot, then live
  auto take = [&] {
    Result<FileMetadata> metadata = (*source)->Metadata("f");
    ASSERT_TRUE(metadata.ok()) << metadata.status().ToString();
    wanted.push_back(*metadata);
    ASSERT_TRUE((*source)->Snapshot().ok());
  };
  rewrite();
  ASSERT_NO_FATAL_FAILURE(take());
  rewrite();
  rewrite();  // version 3
  ASSERT_NO_FATAL_FAILURE(take());
  rewrite();  // version 4, live
  Result<FileMetadata> live = (*source)->Metadata("f");
  ASSERT_TRUE(live.ok());
  wanted.push_back(*live);
  ASSERT_EQ(wanted[0].version, 1u);
  ASSERT_EQ(wanted[1].version, 3u);
  ASSERT_EQ(wanted[2].version, 4u);

  const std::string target_uri = "sqlite:" + dir.Join("store.db") + "#dst";
  Result<std::unique_ptr<ProjectFiles>> target = OpenProject(target_uri);
  ASSERT_TRUE(target.ok()) << target.status().ToString();
  WorkspaceCopyOptions options;
  if (GetParam() != "memory") options.open_snapshot = SnapshotOpenerForUri(source_uri, {});
  ComparisonCountingStore counted(**source);
  Result<WorkspaceCopyReport> report = CopyWorkspace(counted, **target, options);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(counted.comparisons, 2) << "one per state after the first: the second snapshot and the live state";

  auto expect_metadata = [](ProjectFiles& copied, const FileMetadata& expected) {
    Result<FileMetadata> got = copied.Metadata("f");
    ASSERT_TRUE(got.ok()) << copied.DisplayRoot();
    EXPECT_EQ(got->version, expected.version) << copied.DisplayRoot();
    EXPECT_EQ(got->modified_ms, expected.modified_ms) << copied.DisplayRoot();
    EXPECT_EQ(got->created_ms, expected.created_ms) << copied.DisplayRoot();
  };
  for (size_t index = 0; index < 2; ++index) {
    Result<std::unique_ptr<ProjectFiles>> to = OpenProject(target_uri + "@" + std::to_string(index + 1));
    ASSERT_TRUE(to.ok()) << index;
    expect_metadata(**to, wanted[index]);
  }
  expect_metadata(**target, wanted[2]);
}

INSTANTIATE_TEST_SUITE_P(Sources, RewriteCopyTest, ::testing::Values("memory", "sqlite"),
                         [](const auto& test) { return test.param; });

// `workspace copy` and `init` create their workspace exclusively and, when
// filling it fails, delete it by the row their open inserted: a workspace
// another command created under the same name after that one was deleted
// is left alone.
TEST(WorkspaceCopyTest, ACreatedWorkspaceIsExclusiveAndItsDeletionSparesALaterNamesake) {
  TempDir dir;
  const std::string file = dir.Join("store.db");
  const std::string uri = "sqlite:" + file + "#t";
  StoreOptions create;
  create.create_new_workspace = true;
  Result<std::unique_ptr<ProjectFiles>> first = OpenProject(uri, create);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  Result<std::unique_ptr<ProjectFiles>> refused = OpenProject(uri, create);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(refused.status().message(), "Workspace 't' already exists in the store '" + file + "'");

  // Deleted by someone else; another command creates and fills its own
  // (sqlite may give it the same id: the creation time tells them apart).
  Result<std::unique_ptr<SqliteStoreFile>> store = SqliteStoreFile::Open(file);
  ASSERT_TRUE(store.ok());
  ExpectOk((*store)->DeleteWorkspace("t"));
  std::this_thread::sleep_for(std::chrono::milliseconds(3));
  Result<std::unique_ptr<ProjectFiles>> namesake = OpenProject(uri, create);
  ASSERT_TRUE(namesake.ok()) << namesake.status().ToString();
  ExpectOk((*namesake)->Write("kept", "theirs"));
  EXPECT_EQ(DeleteCreatedWorkspace(std::move(*first)).code(), StatusCode::kNotFound);
  Result<std::string> kept = (*namesake)->Read("kept");
  ASSERT_TRUE(kept.ok()) << kept.status().ToString();
  EXPECT_EQ(*kept, "theirs");

  Result<std::unique_ptr<ProjectFiles>> opened = OpenProject(uri);
  ASSERT_TRUE(opened.ok());
  EXPECT_EQ(DeleteCreatedWorkspace(std::move(*opened)).code(), StatusCode::kInvalidArgument)
      << "only an open that created the workspace may delete it this way";
  ExpectOk(DeleteCreatedWorkspace(std::move(*namesake)));
  Result<std::vector<WorkspaceSummary>> left = (*store)->ListWorkspaces();
  ASSERT_TRUE(left.ok());
  EXPECT_TRUE(left->empty());
}

// A command that created a sqlite file and then failed deletes it with
// DeleteSqliteFileIfUnused: with its companions, and only while it holds no
// workspace and no other connection has it open.
TEST(WorkspaceCopyTest, AStoreFileIsDeletedOnlyWhenItHoldsNoWorkspaceAndNoOneHasItOpen) {
  TempDir dir;
  const std::string file = dir.Join("store.db");
  auto deleted = [&] {
    Result<bool> answer = DeleteSqliteFileIfUnused(file);
    EXPECT_TRUE(answer.ok()) << answer.status().ToString();
    return answer.ok() && *answer;
  };
  StoreOptions create;
  create.create_new_workspace = true;
  Result<std::unique_ptr<ProjectFiles>> created = OpenProject("sqlite:" + file + "#t", create);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  ExpectOk((*created)->Write("kept", "theirs"));
  EXPECT_FALSE(deleted()) << "it holds a workspace, open";
  created->reset();
  EXPECT_FALSE(deleted()) << "it holds a workspace";
  Result<std::unique_ptr<ProjectFiles>> reopened = OpenProject("sqlite:" + file + "#t");
  ASSERT_TRUE(reopened.ok()) << reopened.status().ToString();
  Result<std::string> kept = (*reopened)->Read("kept");
  ASSERT_TRUE(kept.ok()) << kept.status().ToString();
  EXPECT_EQ(*kept, "theirs");
  reopened->reset();

  // Empty, but open elsewhere: someone may be about to create a workspace.
  Result<std::unique_ptr<SqliteStoreFile>> open_elsewhere = SqliteStoreFile::Open(file);
  ASSERT_TRUE(open_elsewhere.ok()) << open_elsewhere.status().ToString();
  ExpectOk((*open_elsewhere)->DeleteWorkspace("t"));
  EXPECT_FALSE(deleted()) << "another connection has it open";
  EXPECT_TRUE(RealPathExists(file));
  Result<std::vector<WorkspaceSummary>> listed = (*open_elsewhere)->ListWorkspaces();
  ASSERT_TRUE(listed.ok()) << listed.status().ToString() << ": the store still works";
  EXPECT_TRUE(listed->empty());
  open_elsewhere->reset();

  EXPECT_TRUE(deleted());
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) EXPECT_FALSE(RealPathExists(file + suffix)) << suffix;
  EXPECT_FALSE(deleted()) << "nothing is there";
}

TEST(WorkspaceCopyTest, ANonEmptyTargetIsRefusedAndLeftAlone) {
  std::unique_ptr<ProjectFiles> source = NewMemoryStore();
  ExpectOk(source->Write("a", "1"));
  std::unique_ptr<ProjectFiles> target = NewMemoryStore("busy");
  ExpectOk(target->Write("mine", "keep"));
  Result<WorkspaceCopyReport> refused = CopyWorkspace(*source, *target, {});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(refused.status().message(),
            "Cannot copy into 'memory:busy': it is not empty ('mine' at the top); copy into a new workspace");
  EXPECT_EQ(ReadTree(*target), (Tree{{"mine", "file:keep"}}));

  std::unique_ptr<ProjectFiles> snapshotted = NewMemoryStore("snapshotted");
  ASSERT_TRUE(snapshotted->Snapshot().ok());
  Result<WorkspaceCopyReport> also_refused = CopyWorkspace(*source, *snapshotted, {});
  ASSERT_FALSE(also_refused.ok());
  EXPECT_EQ(also_refused.status().code(), StatusCode::kAlreadyExists);
  EXPECT_NE(also_refused.status().message().find("1 snapshots"), std::string::npos);
}

TEST(WorkspaceCopyTest, SnapshotsIntoAStoreWithoutThemAreRefusedBeforeAnythingIsWritten) {
  TempDir dir;
  MakeDirectory(dir.Join("target"));
  std::unique_ptr<ProjectFiles> source = NewMemoryStore("with-history");
  ExpectOk(source->Write("a", "1"));
  ASSERT_TRUE(source->Snapshot().ok());
  Result<std::unique_ptr<ProjectFiles>> target = OpenProject("fs:" + dir.Join("target"));
  ASSERT_TRUE(target.ok());
  Result<WorkspaceCopyReport> refused = CopyWorkspace(*source, **target, {});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(refused.status().message().find("keeps no snapshots"), std::string::npos) << refused.status().message();
  EXPECT_TRUE(ListRealDirectory(dir.Join("target")).empty());

  // The live state alone may go there.
  WorkspaceCopyOptions live_only;
  live_only.snapshots = false;
  Result<WorkspaceCopyReport> copied = CopyWorkspace(*source, **target, live_only);
  ASSERT_TRUE(copied.ok()) << copied.status().ToString();
  EXPECT_EQ(ReadRealFile(dir.Join("target/a")), "1");
}

TEST(WorkspaceCopyTest, ADirectorySourceIsCopiedWithoutItsSymlinks) {
  TempDir dir;
  WriteRealFile(dir.Join("src/a.txt"), "alpha");
  MakeDirectory(dir.Join("src/empty"));
  MakeSymlink("a.txt", dir.Join("src/link"));
  Result<std::unique_ptr<ProjectFiles>> source = OpenProject("fs:" + dir.Join("src"));
  ASSERT_TRUE(source.ok());
  std::unique_ptr<ProjectFiles> target = NewMemoryStore();
  Result<WorkspaceCopyReport> report = CopyWorkspace(**source, *target, {});
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->symlinks_skipped, 1u);
  EXPECT_EQ(ReadTree(*target), (Tree{{"a.txt", "file:alpha"}, {"empty", "dir"}}));
}

}  // namespace
}  // namespace toolvfs
