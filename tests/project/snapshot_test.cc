// The snapshot capability of ProjectFiles (SPEC.md §2.4, §7; the contract
// comments of Snapshot, Restore, ListSnapshots, Diff and DeleteSnapshot in
// project_files.h) and the per-file version and created time of the stores
// that keep them.
//
// Written against the ProjectFiles interface only, so the same cases run on
// every store that keeps snapshots: adding one is a line in
// INSTANTIATE_TEST_SUITE_P and a case in SnapshotTest::OpenBackend. Stores
// without snapshots (fs, null) are held to answering Unsupported at the end.

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "core/status.h"
#include "project/fault_injecting_store.h"
#include "project/forwarding_store.h"
#include "project/fs_store.h"
#include "project/null_store.h"
#include "project/project_files.h"
#include "project/sql/postgres_database.h"
#include "project/sql/postgres_store.h"
#include "project/sql/sqlite_store.h"
#include "project/sqlite_query.h"
#include "project/test_util.h"
#include "project/status_assertions.h"
#include "postgres_test_server.h"

namespace toolvfs {
namespace {

using namespace std::chrono_literals;
using Paths = std::vector<std::string>;

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}


// A whole workspace as a value: path -> content, "<dir>" for a directory.
using TreeContents = std::map<std::string, std::string>;
constexpr std::string_view kDirectory = "<dir>";

class SnapshotTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    std::string_view backend = GetParam();
    const bool forwarding = backend.starts_with("forwarding_");
    const bool faults = backend.starts_with("faults_");
    if (forwarding || faults) backend.remove_prefix(backend.find('_') + 1);
    Result<std::unique_ptr<ProjectFiles>> opened = OpenBackend(backend);
    ASSERT_TRUE(opened.ok()) << "cannot open the " << GetParam() << " store: " << opened.status().ToString();
    if (!forwarding && !faults) {
      store_ = std::move(*opened);
      return;
    }
    target_ = std::move(*opened);
    if (forwarding) {
      store_ = std::make_unique<ForwardingProjectFiles>(*target_);
    } else {
      store_ = std::make_unique<FaultInjectingProjectFiles>(*target_);
    }
  }

  // A new, empty workspace of `backend`.
  Result<std::unique_ptr<ProjectFiles>> OpenBackend(std::string_view backend) {
    if (backend == "memory") return OpenProject("memory:snapshots");
    if (backend == "sqlite") {
      sqlite_file_ = directory_.path() + "/store.db";
      return OpenProject("sqlite:" + sqlite_file_ + "#snapshots");
    }
    if (backend == "postgres") {
      postgres_workspace_ = NewTestPostgresWorkspace();
      return OpenProject(TestPostgresUri() + "#" + postgres_workspace_);
    }
    return InvalidArgumentError("no such backend in this suite: " + std::string(backend));
  }

  void Write(std::string_view path, std::string_view content, WriteMode mode = WriteMode::kOverwrite) {
    Status status = store_->Write(path, content, mode);
    ASSERT_TRUE(status.ok()) << path << ": " << status.ToString();
  }

  // An empty directory, made the only way the interface offers: a file
  // written into it and deleted again.
  void MakeEmptyDirectory(const std::string& path) {
    ASSERT_NO_FATAL_FAILURE(Write(path + "/.placeholder", ""));
    ASSERT_TRUE(store_->Delete(path + "/.placeholder").ok());
  }

  std::string Take(std::optional<std::string_view> label = std::nullopt) {
    Result<std::string> id = store_->Snapshot(label);
    EXPECT_TRUE(id.ok()) << id.status().ToString();
    return id.ok() ? *id : "<no snapshot>";
  }

  void RestoreTo(std::string_view id) {
    Status status = store_->Restore(id);
    ASSERT_TRUE(status.ok()) << id << ": " << status.ToString();
  }

  TreeDiff DiffOf(std::string_view from, std::optional<std::string_view> to = std::nullopt) {
    Result<TreeDiff> diff = store_->Diff(from, to);
    EXPECT_TRUE(diff.ok()) << diff.status().ToString();
    return diff.ok() ? *diff : TreeDiff{{"<error>"}, {}, {}};
  }

  // Every entry below the root, walked through ListDir and Read.
  TreeContents Contents() {
    TreeContents contents;
    Collect("", contents);
    return contents;
  }

  void Collect(const std::string& dir, TreeContents& out) {
    Result<std::vector<DirEntry>> entries = store_->ListDir(dir);
    if (!entries.ok()) {
      out[dir] = "<error: " + entries.status().ToString() + ">";
      return;
    }
    for (const DirEntry& entry : *entries) {
      const std::string path = dir.empty() ? entry.name : dir + "/" + entry.name;
      if (entry.kind == EntryKind::kDirectory) {
        out[path] = std::string(kDirectory);
        Collect(path, out);
      } else {
        Result<std::string> content = store_->Read(path);
        out[path] = content.ok() ? *content : "<error: " + content.status().ToString() + ">";
      }
    }
  }

  std::optional<uint64_t> VersionOf(std::string_view path) {
    Result<FileMetadata> metadata = store_->Metadata(path);
    EXPECT_TRUE(metadata.ok()) << path << ": " << metadata.status().ToString();
    return metadata.ok() ? metadata->version : std::nullopt;
  }

  std::optional<int64_t> CreatedOf(std::string_view path) {
    Result<FileMetadata> metadata = store_->Metadata(path);
    EXPECT_TRUE(metadata.ok()) << path << ": " << metadata.status().ToString();
    return metadata.ok() ? metadata->created_ms : std::nullopt;
  }

  // What the store keeps for this workspace, read from its tables: its
  // entry rows (every version of every path that some state holds), and
  // the contents they use. Not known for the memory store (nullopt), whose
  // snapshots share nodes that go with the last state holding them.
  struct StoredRows {
    int64_t entries = 0;
    int64_t contents = 0;
  };
  std::optional<StoredRows> Stored() {
    if (!sqlite_file_.empty()) {
      // The file holds this workspace alone, so every content is its own.
      return StoredRows{QueryInt(sqlite_file_, "SELECT count(*) FROM entries"),
                        QueryInt(sqlite_file_, "SELECT count(*) FROM contents")};
    }
    if (!postgres_workspace_.empty()) {
      // Other tests share the server's tables: only what this workspace's rows use.
      const std::string rows =
          " FROM entries e JOIN workspaces w ON w.id=e.workspace_id WHERE w.name='" + postgres_workspace_ + "'";
      return StoredRows{QueryPostgres("SELECT count(*)" + rows),
                        QueryPostgres("SELECT count(DISTINCT e.content_id)" + rows)};
    }
    return std::nullopt;
  }

  // The workspace's name and URI in the stores that open a snapshot as a
  // project of its own (URI@SNAPSHOT: sqlite, postgres); empty for memory.
  std::string WorkspaceName() const { return !sqlite_file_.empty() ? "snapshots" : postgres_workspace_; }
  // What every read of a snapshot project says once snapshot `id` went.
  std::string SnapshotDeletedMessage(const std::string& id) const {
    return "The snapshot '" + id + "' of workspace '" + WorkspaceName() + "' was deleted while it was open";
  }
  std::string WorkspaceUri() const {
    if (!sqlite_file_.empty()) return "sqlite:" + sqlite_file_ + "#snapshots";
    if (!postgres_workspace_.empty()) return TestPostgresUri() + "#" + postgres_workspace_;
    return "";
  }

  // The store holding the workspace (sqlite, postgres), to delete it.
  Result<std::unique_ptr<SqlStoreFile>> OpenStoreFile() {
    if (sqlite_file_.empty()) return OpenPostgresStoreFile(TestPostgresUri());
    Result<std::unique_ptr<SqliteStoreFile>> file = SqliteStoreFile::Open(sqlite_file_);
    if (!file.ok()) return file.status();
    return std::unique_ptr<SqlStoreFile>(std::move(file).value());
  }

  int64_t QueryPostgres(const std::string& sql) {
    Result<std::unique_ptr<PostgresConnection>> connection =
        PostgresConnection::Open(TestPostgresUri(), "test server");
    EXPECT_TRUE(connection.ok()) << connection.status().ToString();
    if (!connection.ok()) return -1;
    Result<PostgresResult> rows = (*connection)->Execute(sql.c_str());
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
    if (!rows.ok() || rows->rows() == 0) return -1;
    return rows->Int(0, 0);
  }

  TempDir directory_;                     // for stores that keep a file; outlives them
  std::string sqlite_file_;               // the sqlite store's file, else empty
  std::string postgres_workspace_;        // the postgres store's workspace, else empty
  std::unique_ptr<ProjectFiles> target_;  // behind a wrapper: declared first, outlives it
  std::unique_ptr<ProjectFiles> store_;
};

// A workspace with files at two depths and an empty directory.
const TreeContents kStart = {
    {"README", "hello\n"},
    {"empty", std::string(kDirectory)},
    {"src", std::string(kDirectory)},
    {"src/lib", std::string(kDirectory)},
    {"src/lib/util.c", "int util;\n"},
    {"src/main.c", "int main() {}\n"},
};

// ----- immutability -----------------------------------------------------------

TEST_P(SnapshotTest, ASnapshotNeverChangesWhateverIsDoneAfterIt) {
  ASSERT_NO_FATAL_FAILURE(Write("README", "hello\n"));
  ASSERT_NO_FATAL_FAILURE(Write("src/main.c", "int main() {}\n"));
  ASSERT_NO_FATAL_FAILURE(Write("src/lib/util.c", "int util;\n"));
  ASSERT_NO_FATAL_FAILURE(MakeEmptyDirectory("empty"));
  ASSERT_EQ(Contents(), kStart);
  const std::string id = Take("start");

  ASSERT_NO_FATAL_FAILURE(Write("README", "rewritten\n"));
  ASSERT_NO_FATAL_FAILURE(Write("src/main.c", "// more\n", WriteMode::kAppend));
  ASSERT_TRUE(store_->Delete("src/lib", /*recursive=*/true).ok());
  ASSERT_TRUE(store_->Rename("empty", "moved").ok());
  ASSERT_NO_FATAL_FAILURE(Write("new/file.txt", "new\n"));

  // The live state moved on; what the snapshot holds did not.
  EXPECT_EQ(DiffOf(id), (TreeDiff{{"moved", "new", "new/file.txt"},
                                  {"README", "src/main.c"},
                                  {"empty", "src/lib", "src/lib/util.c"}}));
  const std::string later = Take();
  EXPECT_EQ(DiffOf(id, later), DiffOf(id));
  EXPECT_EQ(DiffOf(id, id), TreeDiff{});
  RestoreTo(id);
  EXPECT_EQ(Contents(), kStart);

  // Changes after a restore do not reach the snapshot either.
  ASSERT_NO_FATAL_FAILURE(Write("src/lib/util.c", "changed after the restore\n"));
  ASSERT_TRUE(store_->Delete("README").ok());
  RestoreTo(id);
  EXPECT_EQ(Contents(), kStart);
  // Nor does restoring one snapshot change another.
  EXPECT_EQ(DiffOf(id, later), (TreeDiff{{"moved", "new", "new/file.txt"},
                                         {"README", "src/main.c"},
                                         {"empty", "src/lib", "src/lib/util.c"}}));
}

// An overwrite after a snapshot replaces the file's row with a new one
// (the SQL stores index only the new row's birth, not the old row's
// death). When that new row goes again (deleted in the same change
// interval, or freed with the only snapshot that saw it), the deletion of
// the original must still show in diff and restore.
TEST_P(SnapshotTest, AFileOverwrittenThenDeletedBetweenSnapshotsShowsAsDeleted) {
  ASSERT_NO_FATAL_FAILURE(Write("a", "1"));
  ASSERT_NO_FATAL_FAILURE(Write("keep", "k"));
  const std::string before = Take();
  ASSERT_NO_FATAL_FAILURE(Write("a", "2"));
  ASSERT_TRUE(store_->Delete("a", /*recursive=*/false).ok());
  const std::string after = Take();
  EXPECT_EQ(DiffOf(before, after), (TreeDiff{{}, {}, {"a"}}));
  EXPECT_EQ(DiffOf(after, before), (TreeDiff{{"a"}, {}, {}}));
  RestoreTo(before);
  EXPECT_EQ(Contents(), (TreeContents{{"a", "1"}, {"keep", "k"}}));
}

TEST_P(SnapshotTest, DeletingTheOnlySnapshotOfAnOverwriteKeepsTheDiffAroundIt) {
  ASSERT_NO_FATAL_FAILURE(Write("a", "1"));
  const std::string first = Take();
  ASSERT_NO_FATAL_FAILURE(Write("a", "2"));
  const std::string second = Take();
  ASSERT_TRUE(store_->Delete("a", /*recursive=*/false).ok());
  const std::string third = Take();
  ASSERT_TRUE(store_->DeleteSnapshot(second).ok());  // frees the row of "2"
  EXPECT_EQ(DiffOf(first, third), (TreeDiff{{}, {}, {"a"}}));
  EXPECT_EQ(DiffOf(first), (TreeDiff{{}, {}, {"a"}}));
  RestoreTo(first);
  EXPECT_EQ(Contents(), (TreeContents{{"a", "1"}}));
  RestoreTo(third);
  EXPECT_EQ(Contents(), TreeContents{});
  // And an overwrite whose snapshot goes while the new row lives on.
  ASSERT_NO_FATAL_FAILURE(Write("b", "1"));
  const std::string fourth = Take();
  ASSERT_NO_FATAL_FAILURE(Write("b", "2"));
  const std::string fifth = Take();
  ASSERT_NO_FATAL_FAILURE(Write("b", "3"));
  ASSERT_TRUE(store_->DeleteSnapshot(fifth).ok());
  EXPECT_EQ(DiffOf(fourth), (TreeDiff{{}, {"b"}, {}}));
  RestoreTo(fourth);
  EXPECT_EQ(Contents(), (TreeContents{{"b", "1"}}));
}

TEST_P(SnapshotTest, ASnapshotOfAnEmptyWorkspaceRestoresToEmpty) {
  const std::string empty = Take();
  EXPECT_EQ(DiffOf(empty), TreeDiff{});
  ASSERT_NO_FATAL_FAILURE(Write("a/b.txt", "b"));
  ASSERT_NO_FATAL_FAILURE(MakeEmptyDirectory("c"));
  EXPECT_EQ(DiffOf(empty), (TreeDiff{{"a", "a/b.txt", "c"}, {}, {}}));
  RestoreTo(empty);
  EXPECT_EQ(Contents(), TreeContents{});
  Result<std::vector<DirEntry>> root = store_->ListDir("");
  ASSERT_TRUE(root.ok()) << root.status().ToString();
  EXPECT_TRUE(root->empty());
  // The workspace is usable afterwards.
  ASSERT_NO_FATAL_FAILURE(Write("a/b.txt", "again"));
  EXPECT_EQ(Contents(), (TreeContents{{"a", std::string(kDirectory)}, {"a/b.txt", "again"}}));
}

// ----- restore ----------------------------------------------------------------

TEST_P(SnapshotTest, RestoreGoesToAnyOfThreeSnapshotsInAnyOrder) {
  ASSERT_NO_FATAL_FAILURE(Write("a.txt", "one"));
  const TreeContents first_state = Contents();
  const std::string first = Take("one");
  ASSERT_NO_FATAL_FAILURE(Write("a.txt", "two"));
  ASSERT_NO_FATAL_FAILURE(Write("dir/b.txt", "two"));
  const TreeContents second_state = Contents();
  const std::string second = Take("two");
  ASSERT_TRUE(store_->Delete("a.txt").ok());
  ASSERT_NO_FATAL_FAILURE(Write("dir/b.txt", "three", WriteMode::kAppend));
  ASSERT_NO_FATAL_FAILURE(Write("c.txt", "three"));
  const TreeContents third_state = Contents();
  const std::string third = Take("three");
  ASSERT_NE(first_state, second_state);
  ASSERT_NE(second_state, third_state);

  const std::vector<std::pair<std::string, const TreeContents*>> order = {
      {first, &first_state},  {third, &third_state},  {second, &second_state}, {first, &first_state},
      {second, &second_state}, {third, &third_state}, {third, &third_state},   {second, &second_state}};
  for (const auto& [id, expected] : order) {
    RestoreTo(id);
    EXPECT_EQ(Contents(), *expected) << "after restoring " << id;
    EXPECT_EQ(DiffOf(id), TreeDiff{}) << id;
  }
  Result<std::vector<SnapshotInfo>> listed = store_->ListSnapshots();
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(listed->size(), 3u);  // restoring takes no snapshot and deletes none
}

TEST_P(SnapshotTest, RestoreBringsBackDeletedFilesAndDeletedEmptyDirectories) {
  ASSERT_NO_FATAL_FAILURE(Write("keep/a.txt", "a"));
  ASSERT_NO_FATAL_FAILURE(Write("gone/deep/b.txt", "b"));
  ASSERT_NO_FATAL_FAILURE(MakeEmptyDirectory("empty"));
  ASSERT_NO_FATAL_FAILURE(MakeEmptyDirectory("keep/empty_inside"));
  const TreeContents before = Contents();
  const std::string id = Take();

  ASSERT_TRUE(store_->Delete("gone", /*recursive=*/true).ok());
  ASSERT_TRUE(store_->Delete("empty").ok());
  ASSERT_TRUE(store_->Delete("keep/empty_inside").ok());
  ASSERT_TRUE(store_->Delete("keep/a.txt").ok());
  EXPECT_EQ(Contents(), (TreeContents{{"keep", std::string(kDirectory)}}));

  RestoreTo(id);
  EXPECT_EQ(Contents(), before);
  Result<FileMetadata> empty = store_->Metadata("empty");
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  EXPECT_EQ(empty->kind, EntryKind::kDirectory);
}

TEST_P(SnapshotTest, RestoreRemovesFilesAndDirectoriesCreatedSince) {
  ASSERT_NO_FATAL_FAILURE(Write("old.txt", "old"));
  const std::string id = Take();
  ASSERT_NO_FATAL_FAILURE(Write("new.txt", "new"));
  ASSERT_NO_FATAL_FAILURE(Write("made/deep/down/file.txt", "new"));
  ASSERT_NO_FATAL_FAILURE(MakeEmptyDirectory("made/empty"));
  ASSERT_NO_FATAL_FAILURE(MakeEmptyDirectory("lonely"));

  RestoreTo(id);
  EXPECT_EQ(Contents(), (TreeContents{{"old.txt", "old"}}));
  for (std::string_view path : {"new.txt", "made", "made/deep/down/file.txt", "lonely"}) {
    Result<bool> exists = store_->Exists(path);
    ASSERT_TRUE(exists.ok());
    EXPECT_FALSE(*exists) << path;
  }
}

TEST_P(SnapshotTest, RestoreUndoesARenameOfADirectory) {
  ASSERT_NO_FATAL_FAILURE(Write("from/a.txt", "a"));
  ASSERT_NO_FATAL_FAILURE(Write("from/sub/b.txt", "b"));
  const TreeContents before = Contents();
  const std::string id = Take();
  ASSERT_TRUE(store_->Rename("from", "to/elsewhere").ok());
  EXPECT_EQ(DiffOf(id), (TreeDiff{{"to", "to/elsewhere", "to/elsewhere/a.txt", "to/elsewhere/sub",
                                   "to/elsewhere/sub/b.txt"},
                                  {},
                                  {"from", "from/a.txt", "from/sub", "from/sub/b.txt"}}));
  RestoreTo(id);
  EXPECT_EQ(Contents(), before);
}

// ----- diff -------------------------------------------------------------------

TEST_P(SnapshotTest, DiffInBothDirectionsSwapsAddedAndDeleted) {
  ASSERT_NO_FATAL_FAILURE(Write("same.txt", "same"));
  ASSERT_NO_FATAL_FAILURE(Write("changed.txt", "before"));
  ASSERT_NO_FATAL_FAILURE(Write("removed/r.txt", "r"));
  const std::string before = Take();
  ASSERT_NO_FATAL_FAILURE(Write("changed.txt", "after"));
  ASSERT_TRUE(store_->Delete("removed", /*recursive=*/true).ok());
  ASSERT_NO_FATAL_FAILURE(Write("added/x.txt", "x"));
  ASSERT_NO_FATAL_FAILURE(Write("b.txt", "b"));
  const std::string after = Take();

  const TreeDiff forward{{"added", "added/x.txt", "b.txt"}, {"changed.txt"}, {"removed", "removed/r.txt"}};
  EXPECT_EQ(DiffOf(before, after), forward);
  EXPECT_EQ(DiffOf(after, before), (TreeDiff{forward.deleted, forward.modified, forward.added}));
  EXPECT_EQ(DiffOf(before), forward);  // the live state is `after`
  EXPECT_EQ(DiffOf(after), TreeDiff{});
  ASSERT_NO_FATAL_FAILURE(Write("same.txt", "not any more"));
  EXPECT_EQ(DiffOf(after), (TreeDiff{{}, {"same.txt"}, {}}));
}

TEST_P(SnapshotTest, DiffListsAChangeOfKindAsModified) {
  ASSERT_NO_FATAL_FAILURE(Write("x", "a file"));
  ASSERT_NO_FATAL_FAILURE(Write("y/inside.txt", "in a directory"));
  const std::string id = Take();
  ASSERT_TRUE(store_->Delete("x").ok());
  ASSERT_NO_FATAL_FAILURE(Write("x/now_a_directory.txt", "d"));
  ASSERT_TRUE(store_->Delete("y", /*recursive=*/true).ok());
  ASSERT_NO_FATAL_FAILURE(Write("y", "now a file"));
  EXPECT_EQ(DiffOf(id), (TreeDiff{{"x/now_a_directory.txt"}, {"x", "y"}, {"y/inside.txt"}}));
}

// Modified means other content: writing the same bytes again, or a
// directory whose entries changed, is not a modification of that path.
TEST_P(SnapshotTest, DiffComparesContentNotWrites) {
  ASSERT_NO_FATAL_FAILURE(Write("dir/a.txt", "same bytes"));
  const std::string id = Take();
  ASSERT_NO_FATAL_FAILURE(Write("dir/a.txt", "other bytes"));
  ASSERT_NO_FATAL_FAILURE(Write("dir/a.txt", "same bytes"));
  ASSERT_NO_FATAL_FAILURE(Write("dir/b.txt", "new"));
  EXPECT_EQ(DiffOf(id), (TreeDiff{{"dir/b.txt"}, {}, {}}));
}

// ----- ids, listing, labels ---------------------------------------------------

TEST_P(SnapshotTest, UnknownIdsAreNotFoundNamingTheId) {
  const std::string known = Take();
  for (std::string_view unknown : {"999", "0", "01", "abc", "", "1 ", "-1", "a\nb"}) {
    if (unknown == known) continue;
    // Named with the workspace it was looked for in.
    const std::string message = (unknown == "a\nb" ? "Snapshot 'a\\nb'" : "Snapshot '" + std::string(unknown) + "'") +
                                " does not exist in '" + store_->DisplayRoot() + "'";
    EXPECT_TRUE(IsError(store_->Restore(unknown), StatusCode::kNotFound, message)) << unknown;
    EXPECT_TRUE(IsError(store_->Diff(unknown), StatusCode::kNotFound, message)) << unknown;
    EXPECT_TRUE(IsError(store_->Diff(known, unknown), StatusCode::kNotFound, message)) << unknown;
    EXPECT_TRUE(IsError(store_->Diff(unknown, known), StatusCode::kNotFound, message)) << unknown;
    EXPECT_TRUE(IsError(store_->DeleteSnapshot(unknown), StatusCode::kNotFound, message)) << unknown;
  }
  EXPECT_EQ(store_->ListSnapshots()->size(), 1u);
}

TEST_P(SnapshotTest, ADeletedSnapshotIsUnknownAndTheOthersStillWork) {
  ASSERT_NO_FATAL_FAILURE(Write("a.txt", "1"));
  const std::string first = Take("first");
  ASSERT_NO_FATAL_FAILURE(Write("a.txt", "2"));
  const std::string second = Take("second");
  ASSERT_NO_FATAL_FAILURE(Write("a.txt", "3"));
  const std::string third = Take("third");

  ASSERT_TRUE(store_->DeleteSnapshot(second).ok());
  const std::string gone = "Snapshot '" + second + "' does not exist in '" + store_->DisplayRoot() + "'";
  EXPECT_TRUE(IsError(store_->Restore(second), StatusCode::kNotFound, gone));
  EXPECT_TRUE(IsError(store_->Diff(second), StatusCode::kNotFound, gone));
  EXPECT_TRUE(IsError(store_->DeleteSnapshot(second), StatusCode::kNotFound, gone));

  EXPECT_EQ(DiffOf(first, third), (TreeDiff{{}, {"a.txt"}, {}}));
  RestoreTo(first);
  EXPECT_EQ(Contents(), (TreeContents{{"a.txt", "1"}}));
  RestoreTo(third);
  EXPECT_EQ(Contents(), (TreeContents{{"a.txt", "3"}}));

  Result<std::vector<SnapshotInfo>> listed = store_->ListSnapshots();
  ASSERT_TRUE(listed.ok());
  std::vector<std::string> ids;
  for (const SnapshotInfo& info : *listed) ids.push_back(info.id);
  EXPECT_EQ(ids, (std::vector<std::string>{first, third}));

  // Deleting the snapshot the workspace was restored from changes nothing live.
  ASSERT_TRUE(store_->DeleteSnapshot(third).ok());
  EXPECT_EQ(Contents(), (TreeContents{{"a.txt", "3"}}));
  ASSERT_NO_FATAL_FAILURE(Write("a.txt", "4"));
  EXPECT_EQ(DiffOf(first), (TreeDiff{{}, {"a.txt"}, {}}));
}

// ----- a snapshot project whose snapshot is deleted -------------------------------------

// Every read a project offers, each expected to fail with NotFound and
// `message` (Materialize: after its "Cannot materialize '...': "). The
// project holds "a", "dir/b" and "dir/c" in some state, so no read fails
// for a missing path; `other` is another snapshot, to diff from.
void ExpectEveryReadSays(ProjectFiles& project, const std::string& message, std::string_view other) {
  for (std::string_view path : {"a", "dir/b", "dir/c", "missing"}) {
    EXPECT_TRUE(IsError(project.Read(path), StatusCode::kNotFound, message)) << path;
    EXPECT_TRUE(IsError(project.ReadRange(path, 1, 1), StatusCode::kNotFound, message)) << path;
    EXPECT_TRUE(IsError(project.Metadata(path), StatusCode::kNotFound, message)) << path;
    EXPECT_TRUE(IsError(project.Exists(path), StatusCode::kNotFound, message)) << path;
  }
  for (std::string_view path : {"", "dir", "missing"}) {
    EXPECT_TRUE(IsError(project.ListDir(path), StatusCode::kNotFound, message)) << "'" << path << "'";
  }
  GrepOptions in_dir;
  in_dir.paths = {"dir"};
  EXPECT_TRUE(IsError(project.Grep("0", in_dir), StatusCode::kNotFound, message));
  EXPECT_TRUE(IsError(project.Grep("0", GrepOptions{}), StatusCode::kNotFound, message)) << "the whole project";
  EXPECT_TRUE(IsError(project.Diff(other), StatusCode::kNotFound, message));
  Result<std::unique_ptr<MaterializedView>> view = project.Materialize();
  ASSERT_FALSE(view.ok()) << "materialized into " << (*view)->path();
  EXPECT_EQ(view.status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(view.status().message().ends_with("': " + message)) << view.status().ToString();
}

// The cases that need the workspace in a store file of its own, which a
// snapshot project (URI@SNAPSHOT) opens and SqlStoreFile deletes from: the
// stores that keep one (memory keeps none, so it is not instantiated here).
class StoreFileSnapshotTest : public SnapshotTest {};

// Deleting the newest snapshot moves the live generation back to its own
// (DeletingTheNewestSnapshot... above), so a project still open on it
// would read the live state; it says the snapshot went instead.
TEST_P(StoreFileSnapshotTest, ASnapshotProjectWhoseNewestSnapshotIsDeletedSaysSoOnEveryRead) {
  const std::string uri = WorkspaceUri();
  ASSERT_NO_FATAL_FAILURE(Write("a", "a0"));
  ASSERT_NO_FATAL_FAILURE(Write("dir/b", "b0"));
  const std::string older = Take();
  ASSERT_NO_FATAL_FAILURE(Write("a", "a1"));
  const std::string newest = Take();
  Result<std::unique_ptr<ProjectFiles>> frozen = OpenProject(uri + "@" + newest);
  ASSERT_TRUE(IsOk(frozen));
  ASSERT_EQ(*(*frozen)->Read("a"), "a1");
  ASSERT_NO_FATAL_FAILURE(Write("a", "a2"));
  ASSERT_NO_FATAL_FAILURE(Write("dir/c", "c2"));
  ASSERT_TRUE(store_->Delete("dir/b").ok());

  ASSERT_TRUE(IsOk(store_->DeleteSnapshot(newest)));
  ExpectEveryReadSays(**frozen, SnapshotDeletedMessage(newest), older);
  // The older snapshot and the live state read as before.
  Result<std::unique_ptr<ProjectFiles>> kept = OpenProject(uri + "@" + older);
  ASSERT_TRUE(IsOk(kept));
  EXPECT_EQ(*(*kept)->Read("a"), "a0");
  EXPECT_TRUE(*(*kept)->Exists("dir/b"));
  EXPECT_EQ(Contents(), (TreeContents{{"a", "a2"}, {"dir", std::string(kDirectory)}, {"dir/c", "c2"}}));
}

// Deleting an older snapshot frees the rows only it saw, so a project
// still open on it would see files vanish; it says the snapshot went.
TEST_P(StoreFileSnapshotTest, ASnapshotProjectWhoseOlderSnapshotIsDeletedSaysSoOnEveryRead) {
  const std::string uri = WorkspaceUri();
  ASSERT_NO_FATAL_FAILURE(Write("a", "a0"));
  ASSERT_NO_FATAL_FAILURE(Write("dir/b", "b0"));
  const std::string older = Take();
  Result<std::unique_ptr<ProjectFiles>> frozen = OpenProject(uri + "@" + older);
  ASSERT_TRUE(IsOk(frozen));
  ASSERT_NO_FATAL_FAILURE(Write("a", "a1"));
  ASSERT_TRUE(store_->Delete("dir/b").ok());
  ASSERT_NO_FATAL_FAILURE(Write("dir/c", "c1"));
  const std::string newer = Take();
  ASSERT_EQ(*(*frozen)->Read("a"), "a0");

  ASSERT_TRUE(IsOk(store_->DeleteSnapshot(older)));
  ExpectEveryReadSays(**frozen, SnapshotDeletedMessage(older), newer);
  Result<std::unique_ptr<ProjectFiles>> kept = OpenProject(uri + "@" + newer);
  ASSERT_TRUE(IsOk(kept));
  EXPECT_EQ(*(*kept)->Read("a"), "a1");
  EXPECT_FALSE(*(*kept)->Exists("dir/b"));
}

// Reads of a snapshot project racing the deletion of its snapshot (the
// newest, whose deletion moves the live rows to its generation in the same
// transaction): each answers with the snapshot's state or says it went,
// never with the live state, and every read after the deletion says it.
TEST_P(StoreFileSnapshotTest, ReadsRacingTheDeletionOfTheirSnapshotSeeItOrAreToldItWent) {
  const std::string uri = WorkspaceUri();
  for (int round = 0; round < 5; ++round) {
    const std::string frozen_content = "in the snapshot, round " + std::to_string(round);
    ASSERT_NO_FATAL_FAILURE(Write("a", frozen_content));
    ASSERT_NO_FATAL_FAILURE(Write("dir/b", frozen_content));
    const std::string id = Take();
    Result<std::unique_ptr<ProjectFiles>> frozen = OpenProject(uri + "@" + id);
    ASSERT_TRUE(IsOk(frozen));
    ASSERT_NO_FATAL_FAILURE(Write("a", "live"));
    ASSERT_NO_FATAL_FAILURE(Write("dir/c", "live"));
    ASSERT_TRUE(store_->Delete("dir/b").ok());

    std::atomic<bool> deleted = false;
    std::thread deleter([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(1 + round));
      EXPECT_TRUE(IsOk(store_->DeleteSnapshot(id)));
      deleted = true;
    });
    const std::string gone = SnapshotDeletedMessage(id);
    int reads_after = 0;
    while (reads_after < 3) {
      const bool after = deleted.load();
      Result<std::string> a = (*frozen)->Read("a");
      Result<std::vector<DirEntry>> listed = (*frozen)->ListDir("dir");
      Result<bool> c = (*frozen)->Exists("dir/c");
      if (a.ok() && !after) {
        EXPECT_EQ(*a, frozen_content);
      } else {
        EXPECT_TRUE(IsError(a, StatusCode::kNotFound, gone));
      }
      if (listed.ok() && !after) {
        EXPECT_TRUE(listed->size() == 1 && (*listed)[0].name == "b") << listed->size() << " entries";
      } else {
        EXPECT_TRUE(IsError(listed, StatusCode::kNotFound, gone));
      }
      if (c.ok() && !after) {
        EXPECT_FALSE(*c);
      } else {
        EXPECT_TRUE(IsError(c, StatusCode::kNotFound, gone));
      }
      if (after) ++reads_after;
    }
    deleter.join();
    ASSERT_TRUE(store_->Delete("dir/c").ok());
  }
}

// A deleted workspace took every path with it: Exists says so like every
// other read, of the live state and of a snapshot project, and never "no".
TEST_P(StoreFileSnapshotTest, EveryReadOfADeletedWorkspaceOrOfItsSnapshotSaysItWasDeleted) {
  const std::string uri = WorkspaceUri();
  ASSERT_NO_FATAL_FAILURE(Write("a", "a0"));
  ASSERT_NO_FATAL_FAILURE(Write("dir/b", "b0"));
  ASSERT_NO_FATAL_FAILURE(Write("dir/c", "c0"));
  const std::string older = Take();
  Result<std::unique_ptr<ProjectFiles>> frozen = OpenProject(uri + "@" + older);
  ASSERT_TRUE(IsOk(frozen));
  Result<std::unique_ptr<SqlStoreFile>> file = OpenStoreFile();
  ASSERT_TRUE(IsOk(file));
  ASSERT_TRUE(IsOk((*file)->DeleteWorkspace(WorkspaceName())));

  const std::string deleted = "' was deleted while it was open";
  // Grep, Diff and Materialize of the live state too: a walk that skips
  // what it cannot list, an id looked up among snapshots that went, and a
  // copy of no rows used to answer as if the workspace were empty.
  const std::string message = "The workspace '" + uri + deleted;
  ExpectEveryReadSays(*store_, message, older);
  // The snapshots went with the workspace: it says so, not "none" or "no such id".
  EXPECT_TRUE(IsError(store_->ListSnapshots(), StatusCode::kNotFound, message));
  EXPECT_TRUE(IsError(store_->DiffWithRewrites(older, std::nullopt), StatusCode::kNotFound, message));
  EXPECT_TRUE(IsError(store_->Restore(older), StatusCode::kNotFound, message));
  EXPECT_TRUE(IsError(store_->DeleteSnapshot(older), StatusCode::kNotFound, message));
  EXPECT_TRUE(IsError(store_->Snapshot(), StatusCode::kNotFound, message));
  // Writes, which never recreate it.
  EXPECT_TRUE(IsError(store_->Write("a", "again"), StatusCode::kNotFound, message));
  EXPECT_TRUE(IsError(store_->Write("new", "new"), StatusCode::kNotFound, message));
  EXPECT_TRUE(IsError(store_->Delete("dir", /*recursive=*/true), StatusCode::kNotFound, message));
  EXPECT_TRUE(IsError(store_->Rename("a", "b"), StatusCode::kNotFound, message));
  FileMetadata metadata{EntryKind::kFile, 0, 1};
  metadata.version = 7;
  EXPECT_TRUE(IsError(store_->WriteWithMetadata("a", "kept", metadata), StatusCode::kNotFound, message));
  EXPECT_TRUE(IsError(store_->ReadAuthorized("a", std::nullopt, [](std::string_view) { return OkStatus(); }),
                      StatusCode::kNotFound, message));
  // (ResolvePath only normalizes, with no look at the store; the act that follows it says so.)
  // The snapshot went with the workspace, which the message names.
  const std::string frozen_message = "The workspace '" + uri + "@" + older + deleted;
  ExpectEveryReadSays(**frozen, frozen_message, older);
  EXPECT_TRUE(IsError((*frozen)->ListSnapshots(), StatusCode::kNotFound, frozen_message));
}

// ----- what deleting a snapshot frees, without gc ------------------------------------------

// The SQLite-store issue's requirement: a loop of overwrite + snapshot +
// delete-snapshot does not grow the store. Deleting the newest snapshot
// used to leave the live rows it saw as if a snapshot still saw them, so
// their next overwrite or deletion kept the old row and its content until
// `workspace gc`. With no snapshot left, the store holds the live state
// and nothing else.
TEST_P(SnapshotTest, DeletingTheNewestSnapshotThenWritingKeepsNothingNoStateSees) {
  ASSERT_NO_FATAL_FAILURE(Write("f", "f0"));
  ASSERT_NO_FATAL_FAILURE(Write("dir/g", "g0"));
  for (int round = 1; round <= 8; ++round) {
    const std::string id = Take();
    ASSERT_TRUE(store_->DeleteSnapshot(id).ok());
    ASSERT_NO_FATAL_FAILURE(Write("f", "f" + std::to_string(round)));
    if (round % 2 == 1) {
      ASSERT_TRUE(store_->Delete("dir/g").ok());
    } else {
      ASSERT_NO_FATAL_FAILURE(Write("dir/g", "g" + std::to_string(round)));
    }
    const bool has_g = round % 2 == 0;
    TreeContents expected = {{"dir", std::string(kDirectory)}, {"f", "f" + std::to_string(round)}};
    if (has_g) expected["dir/g"] = "g" + std::to_string(round);
    ASSERT_EQ(Contents(), expected) << "round " << round;
    if (std::optional<StoredRows> stored = Stored()) {
      // f, dir and (every other round) dir/g; one content per file.
      EXPECT_EQ(stored->entries, has_g ? 3 : 2) << "round " << round;
      EXPECT_EQ(stored->contents, has_g ? 2 : 1) << "round " << round;
    }
  }
  // The workspace writes in place again, as before its first snapshot.
  ASSERT_NO_FATAL_FAILURE(Write("f", "last"));
  const std::string id = Take();
  ASSERT_NO_FATAL_FAILURE(Write("f", "after"));
  EXPECT_EQ(DiffOf(id), (TreeDiff{{}, {"f"}, {}}));
  RestoreTo(id);
  EXPECT_EQ(Contents(), (TreeContents{{"dir", std::string(kDirectory)}, {"dir/g", "g8"}, {"f", "last"}}));
}

// The same with an older snapshot kept throughout: the rows only the
// deleted newer one saw go, what the kept one holds stays readable.
TEST_P(SnapshotTest, DeletingTheNewerOfTwoSnapshotsKeepsOnlyWhatTheOlderAndTheLiveStateSee) {
  ASSERT_NO_FATAL_FAILURE(Write("f", "kept f"));
  ASSERT_NO_FATAL_FAILURE(Write("g", "kept g"));
  const std::string kept = Take("kept");
  for (int round = 1; round <= 8; ++round) {
    ASSERT_NO_FATAL_FAILURE(Write("f", "f" + std::to_string(round)));
    const std::string id = Take();
    ASSERT_NO_FATAL_FAILURE(Write("g", "g" + std::to_string(round)));
    ASSERT_TRUE(store_->DeleteSnapshot(id).ok());
    ASSERT_NO_FATAL_FAILURE(Write("f", "f" + std::to_string(round) + "'"));
    if (std::optional<StoredRows> stored = Stored()) {
      // Two states (kept, live) of two files, no row shared.
      EXPECT_EQ(stored->entries, 4) << "round " << round;
      EXPECT_EQ(stored->contents, 4) << "round " << round;
    }
  }
  EXPECT_EQ(DiffOf(kept), (TreeDiff{{}, {"f", "g"}, {}}));
  RestoreTo(kept);
  EXPECT_EQ(Contents(), (TreeContents{{"f", "kept f"}, {"g", "kept g"}}));
  if (std::optional<StoredRows> stored = Stored()) {
    EXPECT_EQ(stored->entries, 4) << "the restored rows are the kept snapshot's, copied";
  }
}

// Overwrites, deletions, snapshots and deletions of the newest or an older
// snapshot in a pseudo-random order: every snapshot left holds what it
// held, and the store never keeps more rows than its states see (each
// state sees at most one row per path), which any row seen by no state
// would break sooner or later.
TEST_P(SnapshotTest, AnyMixOfWritesSnapshotsAndSnapshotDeletionsStaysBounded) {
  const std::vector<std::string> files = {"a", "b", "d/c"};
  TreeContents live;
  for (const std::string& file : files) {
    ASSERT_NO_FATAL_FAILURE(Write(file, file + " start"));
    live[file] = file + " start";
  }
  live["d"] = std::string(kDirectory);
  std::vector<std::pair<std::string, TreeContents>> snapshots = {{Take("kept"), live}};
  uint32_t random = 12345;
  for (int step = 0; step < 150; ++step) {
    random = random * 1103515245u + 12345u;
    const uint32_t pick = (random >> 16) % 100;
    const std::string& file = files[(random >> 8) % files.size()];
    if (pick < 40) {
      const std::string content = file + " " + std::to_string(step);
      ASSERT_NO_FATAL_FAILURE(Write(file, content));
      live[file] = content;
    } else if (pick < 55) {
      if (live.erase(file) == 1) {
        ASSERT_TRUE(store_->Delete(file).ok()) << file;
      }
    } else if (pick < 75) {
      if (snapshots.size() < 4) snapshots.emplace_back(Take(), live);
    } else if (snapshots.size() > 1) {
      // The newest mostly, sometimes one in the middle; the first stays.
      const size_t index = pick < 90 ? snapshots.size() - 1 : 1 + (random >> 4) % (snapshots.size() - 1);
      ASSERT_TRUE(store_->DeleteSnapshot(snapshots[index].first).ok()) << "step " << step;
      snapshots.erase(snapshots.begin() + static_cast<std::ptrdiff_t>(index));
    }
    if (std::optional<StoredRows> stored = Stored()) {
      const auto states = static_cast<int64_t>(snapshots.size() + 1);
      ASSERT_LE(stored->entries, states * 4) << "step " << step << ": rows no state sees are kept";
      ASSERT_LE(stored->contents, states * 3) << "step " << step;
    }
  }
  ASSERT_EQ(Contents(), live);
  for (const auto& [id, contents] : snapshots) {
    EXPECT_EQ(DiffOf(id).added.size() + DiffOf(id).modified.size() + DiffOf(id).deleted.size() == 0,
              contents == live)
        << "snapshot " << id;
  }
  for (auto it = snapshots.rbegin(); it != snapshots.rend(); ++it) {
    RestoreTo(it->first);
    EXPECT_EQ(Contents(), it->second) << "snapshot " << it->first;
  }
}

// Ids are "1", "2", ...: decimal, increasing, and never given out twice,
// not even once the snapshot that had one is deleted.
TEST_P(SnapshotTest, IdsAreIncreasingDecimalNumbersNeverReused) {
  std::vector<uint64_t> numbers;
  for (int round = 0; round < 5; ++round) {
    const std::string id = Take();
    uint64_t number = 0;
    auto [end, error] = std::from_chars(id.data(), id.data() + id.size(), number);
    ASSERT_TRUE(error == std::errc() && end == id.data() + id.size() && id.front() != '0') << id;
    EXPECT_EQ(std::to_string(number), id);
    if (!numbers.empty()) {
      EXPECT_GT(number, numbers.back()) << id;
    }
    numbers.push_back(number);
    ASSERT_TRUE(store_->DeleteSnapshot(id).ok()) << id;  // the newest, deleted at once
  }
}

TEST_P(SnapshotTest, ListSnapshotsIsOldestFirstWithLabelsAndTimes) {
  Result<std::vector<SnapshotInfo>> none = store_->ListSnapshots();
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_TRUE(none->empty());

  const int64_t before = NowMs();
  const std::string first = Take("before the refactor");
  const std::string second = Take();
  const std::string third = Take("étape 3 ✓");
  const int64_t after = NowMs();

  Result<std::vector<SnapshotInfo>> listed = store_->ListSnapshots();
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  ASSERT_EQ(listed->size(), 3u);
  EXPECT_EQ((*listed)[0].id, first);
  EXPECT_EQ((*listed)[0].label, "before the refactor");
  EXPECT_EQ((*listed)[1].id, second);
  EXPECT_EQ((*listed)[1].label, std::nullopt);
  EXPECT_EQ((*listed)[2].id, third);
  EXPECT_EQ((*listed)[2].label, "étape 3 ✓");
  for (const SnapshotInfo& info : *listed) {
    EXPECT_GE(info.created_ms, before) << info.id;
    EXPECT_LE(info.created_ms, after) << info.id;
  }
  EXPECT_LE((*listed)[0].created_ms, (*listed)[2].created_ms);
}

TEST_P(SnapshotTest, LabelsAreCheckedAndARefusedLabelTakesNoSnapshot) {
  const std::string longest(255, 'x');
  EXPECT_TRUE(store_->Snapshot(longest).ok());
  EXPECT_TRUE(store_->Snapshot("").ok());  // empty is a label like any other, kept as given

  EXPECT_TRUE(IsError(store_->Snapshot(std::string(256, 'x')), StatusCode::kInvalidArgument,
                      "Invalid snapshot label '" + std::string(48, 'x') +
                          "'... (256 bytes): longer than the limit of 255 bytes"));
  EXPECT_TRUE(IsError(store_->Snapshot("two\nlines"), StatusCode::kInvalidArgument,
                      "Invalid snapshot label 'two\\nlines': contains a control character"));
  EXPECT_TRUE(IsError(store_->Snapshot(std::string("nul\0byte", 8)), StatusCode::kInvalidArgument,
                      "Invalid snapshot label 'nul\\x00byte': contains a control character"));
  EXPECT_TRUE(IsError(store_->Snapshot("del\x7f"), StatusCode::kInvalidArgument,
                      "Invalid snapshot label 'del\\x7f': contains a control character"));
  EXPECT_TRUE(IsError(store_->Snapshot("bad \xff byte"), StatusCode::kInvalidArgument,
                      "Invalid snapshot label 'bad \\xff byte': is not valid UTF-8"));

  Result<std::vector<SnapshotInfo>> listed = store_->ListSnapshots();
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 2u);
  EXPECT_EQ((*listed)[0].label, longest);
  EXPECT_EQ((*listed)[1].label, "");
}

// ----- versions and created times ---------------------------------------------

TEST_P(SnapshotTest, AFileIsVersionOneWhenCreatedAndRisesWithEveryWrite) {
  const int64_t before = NowMs();
  ASSERT_NO_FATAL_FAILURE(Write("dir/a.txt", "1", WriteMode::kCreate));
  const int64_t after_creation = NowMs();
  EXPECT_EQ(VersionOf("dir/a.txt"), 1u);
  std::optional<int64_t> created = CreatedOf("dir/a.txt");
  ASSERT_TRUE(created.has_value());
  EXPECT_GE(*created, before);
  EXPECT_LE(*created, after_creation);

  std::this_thread::sleep_for(5ms);  // so a later write has a later time
  ASSERT_NO_FATAL_FAILURE(Write("dir/a.txt", "2"));
  EXPECT_EQ(VersionOf("dir/a.txt"), 2u);
  ASSERT_NO_FATAL_FAILURE(Write("dir/a.txt", "3", WriteMode::kAppend));
  EXPECT_EQ(VersionOf("dir/a.txt"), 3u);
  ASSERT_NO_FATAL_FAILURE(Write("dir/a.txt", "23", WriteMode::kOverwrite));  // same bytes: still a write
  EXPECT_EQ(VersionOf("dir/a.txt"), 4u);
  Result<FileMetadata> metadata = store_->Metadata("dir/a.txt");
  ASSERT_TRUE(metadata.ok());
  EXPECT_EQ(metadata->created_ms, created);  // set once
  EXPECT_GT(metadata->modified_ms, *created);

  // A failed write is no write.
  EXPECT_FALSE(store_->Write("dir/a.txt", "x", WriteMode::kCreate).ok());
  EXPECT_EQ(VersionOf("dir/a.txt"), 4u);
  // A file created again after a delete starts over.
  ASSERT_TRUE(store_->Delete("dir/a.txt").ok());
  ASSERT_NO_FATAL_FAILURE(Write("dir/a.txt", "again", WriteMode::kAppend));
  EXPECT_EQ(VersionOf("dir/a.txt"), 1u);
}

TEST_P(SnapshotTest, DirectoriesHaveACreatedTimeAndNoVersion) {
  const int64_t before = NowMs();
  ASSERT_NO_FATAL_FAILURE(Write("dir/sub/a.txt", "a"));
  for (std::string_view path : {"dir", "dir/sub"}) {
    Result<FileMetadata> metadata = store_->Metadata(path);
    ASSERT_TRUE(metadata.ok()) << path;
    EXPECT_EQ(metadata->version, std::nullopt) << path;
    ASSERT_TRUE(metadata->created_ms.has_value()) << path;
    EXPECT_GE(*metadata->created_ms, before) << path;
    EXPECT_LE(*metadata->created_ms, NowMs()) << path;
  }
}

TEST_P(SnapshotTest, ARenameKeepsTheVersionAndOntoAFileContinuesTheReplacedFilesCount) {
  ASSERT_NO_FATAL_FAILURE(Write("moving.txt", "1"));
  ASSERT_NO_FATAL_FAILURE(Write("moving.txt", "2"));
  const std::optional<int64_t> moving_created = CreatedOf("moving.txt");
  ASSERT_TRUE(store_->Rename("moving.txt", "dir/moved.txt").ok());
  EXPECT_EQ(VersionOf("dir/moved.txt"), 2u);
  EXPECT_EQ(CreatedOf("dir/moved.txt"), moving_created);

  // Files inside a moved directory keep theirs too.
  ASSERT_TRUE(store_->Rename("dir", "renamed_dir").ok());
  EXPECT_EQ(VersionOf("renamed_dir/moved.txt"), 2u);

  ASSERT_NO_FATAL_FAILURE(Write("target.txt", "1"));
  for (int write = 0; write < 4; ++write) ASSERT_NO_FATAL_FAILURE(Write("target.txt", "more", WriteMode::kAppend));
  ASSERT_EQ(VersionOf("target.txt"), 5u);
  const std::optional<int64_t> target_created = CreatedOf("target.txt");
  std::this_thread::sleep_for(5ms);  // so the newcomer's created time differs
  ASSERT_NO_FATAL_FAILURE(Write("newcomer.txt", "replaces it"));
  ASSERT_NE(CreatedOf("newcomer.txt"), target_created);
  ASSERT_TRUE(store_->Rename("newcomer.txt", "target.txt", /*overwrite=*/true).ok());
  // To a reader of target.txt this was an overwrite: its count goes on,
  // and it keeps the time it was created.
  EXPECT_EQ(VersionOf("target.txt"), 6u);
  EXPECT_EQ(CreatedOf("target.txt"), target_created);
  Result<std::string> content = store_->Read("target.txt");
  ASSERT_TRUE(content.ok());
  EXPECT_EQ(*content, "replaces it");
}

TEST_P(SnapshotTest, RestoreBringsBackTheSnapshotsVersionsAndCreatedTimes) {
  ASSERT_NO_FATAL_FAILURE(Write("a.txt", "1"));
  ASSERT_NO_FATAL_FAILURE(Write("a.txt", "2"));
  ASSERT_NO_FATAL_FAILURE(Write("deleted.txt", "d"));
  const std::optional<int64_t> a_created = CreatedOf("a.txt");
  const std::optional<int64_t> deleted_created = CreatedOf("deleted.txt");
  const std::string id = Take();

  ASSERT_NO_FATAL_FAILURE(Write("a.txt", "3"));
  ASSERT_NO_FATAL_FAILURE(Write("a.txt", "4"));
  ASSERT_EQ(VersionOf("a.txt"), 4u);
  ASSERT_TRUE(store_->Delete("deleted.txt").ok());
  std::this_thread::sleep_for(5ms);
  ASSERT_NO_FATAL_FAILURE(Write("deleted.txt", "recreated"));
  ASSERT_NE(CreatedOf("deleted.txt"), deleted_created);

  RestoreTo(id);
  EXPECT_EQ(VersionOf("a.txt"), 2u);
  EXPECT_EQ(CreatedOf("a.txt"), a_created);
  EXPECT_EQ(VersionOf("deleted.txt"), 1u);
  EXPECT_EQ(CreatedOf("deleted.txt"), deleted_created);
  // And counting goes on from there.
  ASSERT_NO_FATAL_FAILURE(Write("a.txt", "3 again"));
  EXPECT_EQ(VersionOf("a.txt"), 3u);
}

// What a subprocess tool changes in a materialized copy reaches the store
// as writes: a modified file goes up by one, a new one starts at 1, an
// untouched one keeps its version.
TEST_P(SnapshotTest, AMaterializedViewsChangesCountAsWrites) {
  ASSERT_NO_FATAL_FAILURE(Write("edited.txt", "before"));
  ASSERT_NO_FATAL_FAILURE(Write("edited.txt", "before, twice"));
  ASSERT_NO_FATAL_FAILURE(Write("untouched.txt", "same"));
  Result<std::unique_ptr<MaterializedView>> view = store_->Materialize();
  ASSERT_TRUE(view.ok()) << view.status().ToString();
  WriteRealFile((*view)->path() + "/edited.txt", "edited by a tool");
  WriteRealFile((*view)->path() + "/added.txt", "added by a tool");
  ASSERT_TRUE((*view)->Release().ok());

  EXPECT_EQ(VersionOf("edited.txt"), 3u);
  EXPECT_EQ(VersionOf("added.txt"), 1u);
  EXPECT_EQ(VersionOf("untouched.txt"), 1u);
}

// A snapshot is one atomic step: taken while writers run, it holds each
// writer's files up to some point, never a later file without an earlier
// one (each writer creates f0, f1, ... in order).
TEST_P(SnapshotTest, SnapshotsTakenWhileWritersRunAreEachOnePointInTime) {
  constexpr int kWriters = 3;
  constexpr int kFilesPerWriter = 150;
  std::atomic<int> finished_writers = 0;
  std::vector<std::thread> writers;
  for (int writer = 0; writer < kWriters; ++writer) {
    writers.emplace_back([this, writer, &finished_writers] {
      for (int file = 0; file < kFilesPerWriter; ++file) {
        const std::string path = "w" + std::to_string(writer) + "/f" + std::to_string(file);
        EXPECT_TRUE(store_->Write(path, std::to_string(file)).ok()) << path;
      }
      ++finished_writers;
    });
  }
  // As many snapshots as fit while the writers run (at most 100).
  std::vector<std::string> ids;
  while (finished_writers < kWriters && ids.size() < 100) ids.push_back(Take());
  for (std::thread& writer : writers) writer.join();
  ids.push_back(Take());  // and one with everything

  for (const std::string& id : ids) {
    RestoreTo(id);
    const TreeContents contents = Contents();
    for (int writer = 0; writer < kWriters; ++writer) {
      const std::string dir = "w" + std::to_string(writer);
      int present = 0;
      while (contents.contains(dir + "/f" + std::to_string(present))) ++present;
      for (int file = present; file < kFilesPerWriter; ++file) {
        EXPECT_FALSE(contents.contains(dir + "/f" + std::to_string(file)))
            << "snapshot " << id << " has " << dir << "/f" << file << " without f" << present;
      }
    }
  }
  RestoreTo(ids.back());
  EXPECT_EQ(Contents().size(), size_t{kWriters} * (kFilesPerWriter + 1));  // each file and its directory
}

std::string BackendName(const ::testing::TestParamInfo<std::string>& info) { return info.param; }

INSTANTIATE_TEST_SUITE_P(Stores, StoreFileSnapshotTest, ::testing::Values("sqlite", "postgres", "faults_sqlite"),
                         BackendName);

// Every store that keeps snapshots. "forwarding_X" and "faults_X" are X
// behind a ForwardingProjectFiles and a FaultInjectingProjectFiles with no
// fault set: both must pass unchanged.
INSTANTIATE_TEST_SUITE_P(Stores, SnapshotTest,
                         ::testing::Values("memory", "sqlite", "postgres", "forwarding_memory", "faults_memory",
                                           "faults_sqlite"),
                         BackendName);

// ----- stores without snapshots -----------------------------------------------

TEST(SnapshotsUnsupportedTest, FsAndNullStoresAnswerUnsupportedNamingTheStore) {
  TempDir dir;
  Result<std::unique_ptr<ProjectFiles>> fs = OpenFsStore(dir.path());
  ASSERT_TRUE(fs.ok()) << fs.status().ToString();
  std::unique_ptr<ProjectFiles> null = NewNullStore();
  for (ProjectFiles* store : {fs->get(), null.get()}) {
    const std::string message = "The project '" + store->DisplayRoot() +
                                "' does not keep snapshots; a memory:, sqlite: or postgres:// workspace does";
    EXPECT_TRUE(IsError(store->Snapshot("label"), StatusCode::kUnsupported, message));
    EXPECT_TRUE(IsError(store->Restore("1"), StatusCode::kUnsupported, message));
    EXPECT_TRUE(IsError(store->ListSnapshots(), StatusCode::kUnsupported, message));
    EXPECT_TRUE(IsError(store->Diff("1"), StatusCode::kUnsupported, message));
    EXPECT_TRUE(IsError(store->Diff("1", "2"), StatusCode::kUnsupported, message));
    EXPECT_TRUE(IsError(store->DeleteSnapshot("1"), StatusCode::kUnsupported, message));
  }
  EXPECT_TRUE(ListRealDirectory(dir.path()).empty());  // nothing was written into the directory
}

}  // namespace
}  // namespace toolvfs
