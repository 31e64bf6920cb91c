// What the sqlite store does beyond the conformance suite (which runs on it
// unchanged): one file holding many workspaces, content stored once per
// address, chunked large files, read-only snapshot projects, URIs, bad
// files, several processes at once, crashes, and bounded growth.
#include <sqlite3.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "core/status.h"
#include "core/text.h"
#include "project/content/content_hash.h"
#include "project/project_files.h"
#include "project/sql/sql_schema.h"
#include "project/sql/sqlite_database.h"
#include "project/sql/sqlite_store.h"
#include "project/sql/workspace_uri.h"
#include "project/sqlite_query.h"
#include "project/status_assertions.h"
#include "project/test_util.h"

namespace toolvfs {
namespace {

template <typename T>
::testing::AssertionResult FailsWith(const Result<T>& result, StatusCode code, std::string_view fragment) {
  if (result.ok()) return ::testing::AssertionFailure() << "expected an error, got a value";
  const Status& status = result.status();
  if (status.code() != code || status.message().find(fragment) == std::string::npos) {
    return ::testing::AssertionFailure() << "expected " << StatusCodeName(code) << " containing '" << fragment
                                         << "', got " << status.ToString();
  }
  return ::testing::AssertionSuccess();
}
::testing::AssertionResult FailsWith(const Status& status, StatusCode code, std::string_view fragment) {
  if (status.ok()) return ::testing::AssertionFailure() << "expected an error, got OK";
  return FailsWith(Result<int>(status), code, fragment);
}

std::string RandomBytes(size_t size, uint32_t seed) {
  std::mt19937 generator(seed);
  std::string bytes(size, '\0');
  for (char& c : bytes) c = static_cast<char>(generator() & 0xff);
  return bytes;
}

std::string QueryText(const std::string& file, const char* sql) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(file.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* statement = nullptr;
  std::string value = "<no answer>";
  if (sqlite3_prepare_v2(db, sql, -1, &statement, nullptr) == SQLITE_OK && sqlite3_step(statement) == SQLITE_ROW) {
    value = reinterpret_cast<const char*>(sqlite3_column_text(statement, 0));
  } else {
    value = std::string("<error: ") + sqlite3_errmsg(db) + ">";
  }
  sqlite3_finalize(statement);
  sqlite3_close(db);
  return value;
}

void ExecuteSql(const std::string& file, const char* sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(file.c_str(), &db), SQLITE_OK);
  char* error = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql, nullptr, nullptr, &error), SQLITE_OK) << (error ? error : "");
  sqlite3_free(error);
  sqlite3_close(db);
}

class SqliteStoreTest : public ::testing::Test {
 protected:
  std::string File() const { return dir_.Join("store.db"); }
  std::string Uri(std::string_view workspace) const { return "sqlite:" + File() + "#" + std::string(workspace); }

  std::unique_ptr<ProjectFiles> Open(std::string_view workspace, StoreOptions options = {}) {
    Result<std::unique_ptr<ProjectFiles>> store = OpenProject(Uri(workspace), options);
    EXPECT_TRUE(IsOk(store));
    return store.ok() ? std::move(store).value() : nullptr;
  }

  TempDir dir_;
};

// ----- What an open creates ---------------------------------------------------------

TEST_F(SqliteStoreTest, WithoutCreateIfMissingNothingIsCreatedAndTheMissingPartIsNamed) {
  StoreOptions existing_only;
  existing_only.create_if_missing = false;
  EXPECT_TRUE(FailsWith(OpenProject(Uri("w"), existing_only), StatusCode::kNotFound,
                        "The store file '" + File() + "' does not exist"));
  EXPECT_FALSE(std::filesystem::exists(File()));

  ASSERT_TRUE(Open("w"));
  EXPECT_TRUE(FailsWith(OpenProject(Uri("typo"), existing_only), StatusCode::kNotFound,
                        "Workspace 'typo' does not exist in the store '" + File() + "'"));
  EXPECT_TRUE(IsOk(OpenProject(Uri("w"), existing_only)));
  Result<std::unique_ptr<SqliteStoreFile>> file = SqliteStoreFile::Open(File());
  ASSERT_TRUE(IsOk(file));
  EXPECT_EQ((*file)->ListWorkspaces()->size(), 1u) << "'typo' was not created";
}

TEST_F(SqliteStoreTest, OnCreateIsToldOfANewFileAndANewWorkspaceOnly) {
  std::vector<StoreCreation> told;
  StoreOptions options;
  options.on_create = [&](const StoreCreation& created) { told.push_back(created); };
  ASSERT_TRUE(Open("a", options));
  ASSERT_TRUE(Open("b", options));
  ASSERT_TRUE(Open("a", options));
  ASSERT_EQ(told.size(), 2u);
  EXPECT_EQ(told[0].workspace, "a");
  EXPECT_EQ(told[0].store, File());
  EXPECT_TRUE(told[0].new_store);
  EXPECT_EQ(told[1].workspace, "b");
  EXPECT_FALSE(told[1].new_store);
}

// ----- One file, many workspaces ----------------------------------------------

TEST_F(SqliteStoreTest, ContentSurvivesReopeningAndWorkspacesAreSeparate) {
  {
    auto one = Open("one");
    auto two = Open("two");
    ASSERT_TRUE(one && two);
    ASSERT_TRUE(IsOk(one->Write("a.txt", "in one")));
    ASSERT_TRUE(IsOk(two->Write("a.txt", "in two")));
    ASSERT_TRUE(IsOk(two->Write("empty/.keep", "")));
    ASSERT_TRUE(IsOk(two->Delete("empty/.keep")));
  }
  auto one = Open("one");
  auto two = Open("two");
  EXPECT_EQ(*one->Read("a.txt"), "in one");
  EXPECT_EQ(*two->Read("a.txt"), "in two");
  EXPECT_EQ(two->ListDir("empty")->size(), 0u) << "an empty directory survives";
  EXPECT_FALSE(*one->Exists("empty"));
}

// Store handles of one file in one process (sessions, copies, other
// workspaces) take turns to write: none waits on SQLite's lock, where a
// writer polling on the busy handler's schedule could miss every turn for
// the whole busy timeout (a reviewer saw Timeout failures with seven
// handles busy at once). One handle reaches the file by another spelling
// of its path.
TEST_F(SqliteStoreTest, HandlesOfOneFileInOneProcessTakeTurnsWithoutWaitingOnTheLock) {
  StoreOptions options;
  options.sync_writes = false;  // the turns are the point, not the disk
  std::vector<std::unique_ptr<ProjectFiles>> handles;
  for (const char* workspace : {"shared", "shared", "shared", "one", "two"}) {
    handles.push_back(Open(workspace, options));
  }
  Result<std::unique_ptr<ProjectFiles>> other_spelling =
      OpenProject("sqlite:" + dir_.Join(".") + "/store.db#shared", options);
  ASSERT_TRUE(IsOk(other_spelling));
  handles.push_back(std::move(other_spelling).value());
  for (const auto& handle : handles) ASSERT_TRUE(handle);
  const uint64_t waits_before = SqliteBusyWaits();
  constexpr int kWrites = 60;
  std::vector<std::thread> threads;
  std::vector<Status> failures(handles.size());
  for (size_t writer = 0; writer < handles.size(); ++writer) {
    threads.emplace_back([&, writer] {
      for (int i = 0; i < kWrites && failures[writer].ok(); ++i) {
        failures[writer] = handles[writer]->Write("by-" + std::to_string(writer), std::to_string(i));
        if (failures[writer].ok()) failures[writer] = handles[writer]->Write("log", "x", WriteMode::kAppend);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const Status& failure : failures) EXPECT_TRUE(IsOk(failure));
  EXPECT_EQ(SqliteBusyWaits(), waits_before) << "a writer waited on SQLite's lock for another handle of this process";
  EXPECT_EQ(handles[0]->Read("log")->size(), 4u * kWrites) << "shared: handles 0-2 and 5";
  EXPECT_EQ(handles[3]->Read("log")->size(), 1u * kWrites);
  EXPECT_EQ(*handles[0]->Read("by-5"), std::to_string(kWrites - 1));
}

TEST_F(SqliteStoreTest, NoFragmentOpensTheDefaultWorkspace) {
  Result<std::unique_ptr<ProjectFiles>> store = OpenProject("sqlite:" + File());
  ASSERT_TRUE(IsOk(store));
  EXPECT_EQ((*store)->DisplayRoot(), "sqlite:" + File() + "#default");
  ASSERT_TRUE(IsOk((*store)->Write("x", "y")));
  EXPECT_EQ(*Open("default")->Read("x"), "y");
}

TEST_F(SqliteStoreTest, EqualContentIsStoredOnceAcrossWorkspaces) {
  const std::string content = RandomBytes(10'000, 1);
  auto one = Open("one");
  auto two = Open("two");
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(IsOk(one->Write("copy" + std::to_string(i), content)));
    ASSERT_TRUE(IsOk(two->Write("copy" + std::to_string(i), content)));
  }
  EXPECT_EQ(QueryInt(File(), "SELECT count(*) FROM contents WHERE size=10000"), 1);
  EXPECT_EQ(QueryInt(File(), "SELECT reference_count FROM contents WHERE size=10000"), 10);
  // Deleting every user frees it.
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(IsOk(one->Delete("copy" + std::to_string(i))));
    ASSERT_TRUE(IsOk(two->Delete("copy" + std::to_string(i))));
  }
  EXPECT_EQ(QueryInt(File(), "SELECT count(*) FROM contents"), 0);
}

TEST_F(SqliteStoreTest, VersionsAndTimesAreKept) {
  auto store = Open("w");
  ASSERT_TRUE(IsOk(store->Write("f", "1")));
  Result<FileMetadata> first = store->Metadata("f");
  ASSERT_TRUE(IsOk(first));
  EXPECT_EQ(first->version, 1u);
  ASSERT_TRUE(first->created_ms.has_value());
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_TRUE(IsOk(store->Write("f", "2")));
  ASSERT_TRUE(IsOk(store->Write("f", "3", WriteMode::kAppend)));
  Result<FileMetadata> third = store->Metadata("f");
  EXPECT_EQ(third->version, 3u);
  EXPECT_EQ(third->created_ms, first->created_ms) << "created_at is set once";
  EXPECT_GT(third->modified_ms, first->modified_ms);
  // A rename onto an existing file continues the replaced file's count.
  ASSERT_TRUE(IsOk(store->Write("g", "new")));
  ASSERT_TRUE(IsOk(store->Rename("g", "f", /*overwrite=*/true)));
  EXPECT_EQ(store->Metadata("f")->version, 4u);
  EXPECT_EQ(*store->Read("f"), "new");
  // A moved file keeps its version.
  ASSERT_TRUE(IsOk(store->Rename("f", "dir/h")));
  EXPECT_EQ(store->Metadata("dir/h")->version, 4u);
  EXPECT_FALSE(store->Metadata("dir")->version.has_value()) << "a directory has no version";
}

// ----- Large files --------------------------------------------------------------

TEST_F(SqliteStoreTest, LargeFilesAreChunkedForRangedReadsAndAppends) {
  StoreOptions options;
  options.max_read_bytes = 64 * 1024 * 1024;
  auto store = Open("w", options);
  const std::string content = RandomBytes(1'000'000, 2);
  ASSERT_TRUE(IsOk(store->Write("big.bin", content)));
  EXPECT_EQ(*store->Read("big.bin"), content);
  const int64_t chunks = QueryInt(File(), "SELECT count(*) FROM content_chunks");
  EXPECT_EQ(chunks, static_cast<int64_t>((content.size() + kChunkBytes - 1) / kChunkBytes));

  for (uint64_t offset : {uint64_t{0}, uint64_t{1}, kChunkBytes - 1, kChunkBytes, 3 * kChunkBytes + 17,
                          uint64_t{999'990}}) {
    Result<FileRange> range = store->ReadRange("big.bin", offset, 100'000);
    ASSERT_TRUE(IsOk(range)) << offset;
    EXPECT_EQ(range->content, content.substr(offset, 100'000)) << offset;
    EXPECT_EQ(range->file_size, content.size());
  }

  // An append adds chunks; it does not rewrite the ones before the last.
  const int64_t chunk_rows_before = QueryInt(File(), "SELECT count(*) FROM contents WHERE data IS NOT NULL");
  const std::string extra = RandomBytes(200'000, 3);
  ASSERT_TRUE(IsOk(store->Write("big.bin", extra, WriteMode::kAppend)));
  EXPECT_EQ(*store->Read("big.bin"), content + extra);
  const int64_t chunk_rows_after = QueryInt(File(), "SELECT count(*) FROM contents WHERE data IS NOT NULL");
  // The old content's chunks are gone with it (no snapshot holds it) but
  // for the shared prefix; new: the rewritten last chunk and what follows.
  EXPECT_LE(chunk_rows_after, chunk_rows_before + 5);

  // The same bytes written whole get the same address as the appended file.
  ASSERT_TRUE(IsOk(store->Write("copy.bin", content + extra)));
  EXPECT_EQ(QueryInt(File(), "SELECT count(*) FROM contents WHERE data IS NULL"), 1)
      << "one chunk list for both files";
}

// gc deleted an unreferenced chunk list with its links but left the counts
// of its chunks as they were: a chunk that another list shared then
// outlived that list too, until the next gc.
TEST_F(SqliteStoreTest, GcTakesAnUnreferencedChunkListsReferencesOffItsChunks) {
  auto store = Open("w");
  const std::string shared = RandomBytes(2 * kChunkBytes, 4);
  ASSERT_TRUE(IsOk(store->Write("a.bin", shared + "a")));
  ASSERT_TRUE(IsOk(store->Write("b.bin", shared + "b")));
  ASSERT_EQ(QueryInt(File(), "SELECT count(*) FROM contents WHERE data IS NULL"), 2);
  // a.bin's list left with no entry and its count as it was, as a crash
  // of an older version could leave it.
  ExecuteSql(File(), "DELETE FROM entries WHERE path='a.bin'");
  {
    Result<std::unique_ptr<SqliteStoreFile>> file = SqliteStoreFile::Open(File());
    ASSERT_TRUE(IsOk(file));
    Result<GarbageReport> garbage = (*file)->CollectGarbage();
    ASSERT_TRUE(IsOk(garbage));
    EXPECT_EQ(garbage->contents, 2u) << "a.bin's list and its last chunk";
  }
  ASSERT_TRUE(IsOk(store->Delete("b.bin")));
  EXPECT_EQ(QueryInt(File(), "SELECT count(*) FROM contents"), 0) << "the shared chunks went with b.bin";
}

// ----- Snapshot projects ------------------------------------------------------------

TEST_F(SqliteStoreTest, ASnapshotOpensReadOnlyByIdOrLabel) {
  auto store = Open("w");
  ASSERT_TRUE(IsOk(store->Write("f.txt", "before")));
  Result<std::string> id = store->Snapshot("before-change");
  ASSERT_TRUE(IsOk(id));
  ASSERT_TRUE(IsOk(store->Write("f.txt", "after")));
  ASSERT_TRUE(IsOk(store->Write("new.txt", "new")));

  for (const std::string& reference : {*id, std::string("before-change")}) {
    Result<std::unique_ptr<ProjectFiles>> past = OpenProject(Uri("w") + "@" + reference);
    ASSERT_TRUE(IsOk(past)) << reference;
    EXPECT_EQ(*(*past)->Read("f.txt"), "before");
    EXPECT_FALSE(*(*past)->Exists("new.txt"));
    EXPECT_TRUE(FailsWith((*past)->Write("f.txt", "x"), StatusCode::kPermissionDenied,
                          "is snapshot '" + *id + "', which is read-only"));
    EXPECT_TRUE(FailsWith((*past)->Delete("f.txt"), StatusCode::kPermissionDenied, "read-only"));
    EXPECT_TRUE(FailsWith((*past)->Snapshot(), StatusCode::kPermissionDenied, "read-only"));
    Result<GrepResult> grep = (*past)->Grep("before", GrepOptions{});
    ASSERT_TRUE(IsOk(grep));
    EXPECT_EQ(grep->matches.size(), 1u);
  }
  EXPECT_EQ(*store->Read("f.txt"), "after") << "the live state is untouched";
  EXPECT_TRUE(FailsWith(OpenProject(Uri("w") + "@99"), StatusCode::kNotFound,
                        "Snapshot '99' does not exist"));
}

TEST_F(SqliteStoreTest, AMaterializedSnapshotRefusesToSyncChanges) {
  auto store = Open("w");
  ASSERT_TRUE(IsOk(store->Write("f.txt", "kept")));
  Result<std::string> id = store->Snapshot();
  ASSERT_TRUE(IsOk(id));
  Result<std::unique_ptr<ProjectFiles>> past = OpenProject(Uri("w") + "@" + *id);
  ASSERT_TRUE(IsOk(past));
  {
    Result<std::unique_ptr<MaterializedView>> view = (*past)->Materialize();
    ASSERT_TRUE(IsOk(view));
    EXPECT_TRUE(IsOk((*view)->Release())) << "an unchanged copy releases cleanly";
  }
  Result<std::unique_ptr<MaterializedView>> view = (*past)->Materialize();
  ASSERT_TRUE(IsOk(view));
  const std::string copy = (*view)->path();
  WriteRealFile(copy + "/f.txt", "changed");
  Status released = (*view)->Release();
  EXPECT_TRUE(FailsWith(released, StatusCode::kPermissionDenied, "the copy is kept"));
  EXPECT_TRUE(RealPathExists(copy)) << "nothing is lost";
  TempDir::RemoveAll(copy);
}

// ----- URIs and names -------------------------------------------------------------------

TEST_F(SqliteStoreTest, MalformedUrisAreRefusedNamingTheProblem) {
  const std::string file = File();
  struct Case {
    std::string uri;
    std::string fragment;
  };
  const std::vector<Case> cases = {
      {"sqlite:", "no store before '#'"},
      {"sqlite:#ws", "no store before '#'"},
      {"sqlite:" + file + "#", "no workspace name after '#'"},
      {"sqlite:" + file + "#a#b", "more than one '#'"},
      {"sqlite:" + file + "#ws@", "no snapshot after '@'"},
      {"sqlite:" + file + "#ws@1@2", "more than one '@'"},
      {"sqlite:" + file + "@3", "'@' before '#'"},
      {"sqlite:" + file + "#a\tb", "control character"},
      {"sqlite:" + file + "#a\u0085b", "control character"},      // C1: next line
      {"sqlite:" + file + "#a\u009b[31mb", "control character"},  // C1: a terminal's escape
      {"sqlite:" + file + "#a\u2028b", "line separator"},
      {"sqlite:" + file + "#ws@a\u2029b", "line separator"},
      {"sqlite:" + file + "#" + std::string(256, 'w'), "more than the limit of 255"},
  };
  for (const Case& c : cases) {
    EXPECT_TRUE(FailsWith(OpenProject(c.uri), StatusCode::kInvalidArgument, c.fragment)) << c.uri;
  }
  EXPECT_TRUE(IsOk(OpenProject("sqlite:" + file + "#" + std::string(255, 'w'))));
  EXPECT_TRUE(IsOk(OpenProject("sqlite:" + file + "#espace de travail é")));
  EXPECT_TRUE(IsOk(OpenProject("sqlite:" + file + "#\u00a0\u2027\u202a")));  // next to the refused ones
}

// Found by fuzz/workspace_uri_fuzzer.cc: a bad name was refused as "Invalid
// workspace name 'a\tb': ...", without the URI the contract promises.
TEST(WorkspaceUriTest, ABadWorkspaceOrSnapshotNameIsRefusedNamingTheUri) {
  const std::string long_name(256, 'w');
  for (const std::string& rest : {std::string("w.db#a\tb"), std::string("w.db#ws@a\nb"), "w.db#" + long_name,
                                  std::string("w.db#ws@\xff")}) {
    const std::string uri = "sqlite:" + rest;
    Result<WorkspaceAddress> address = ParseWorkspaceAddress(uri, rest);
    EXPECT_TRUE(FailsWith(address, StatusCode::kInvalidArgument, "Invalid project " + Quote(uri) + ": invalid "))
        << rest;
  }
  EXPECT_TRUE(FailsWith(ParseWorkspaceAddress("sqlite:w.db#a\tb", "w.db#a\tb"), StatusCode::kInvalidArgument,
                        "invalid workspace name: it contains a control character"));
  EXPECT_TRUE(FailsWith(ParseWorkspaceAddress("sqlite:w.db#ws@\xff", "w.db#ws@\xff"), StatusCode::kInvalidArgument,
                        "invalid snapshot: it is not valid UTF-8"));
  // ValidateWorkspaceName on its own keeps naming the name.
  EXPECT_TRUE(FailsWith(ValidateWorkspaceName("workspace name", long_name), StatusCode::kInvalidArgument,
                        "Invalid workspace name '" + std::string(40, 'w') + "'...: it is 256 bytes long"));
}

TEST_F(SqliteStoreTest, SnapshotLabelsAreValidated) {
  auto store = Open("w");
  EXPECT_TRUE(FailsWith(store->Snapshot(std::string(256, 'x')), StatusCode::kInvalidArgument, "255"));
  EXPECT_TRUE(FailsWith(store->Snapshot("a\nb"), StatusCode::kInvalidArgument, "control character"));
  EXPECT_TRUE(IsOk(store->Snapshot(std::string(255, 'x'))));
}

// ----- Bad files ------------------------------------------------------------------------

TEST_F(SqliteStoreTest, AFileThatIsNotADatabaseIsRefusedAndKept) {
  const std::string garbage(10'000, 'g');
  WriteRealFile(File(), garbage);
  EXPECT_TRUE(FailsWith(OpenProject(Uri("w")), StatusCode::kIo, "not a SQLite database"));
  EXPECT_EQ(ReadRealFile(File()), garbage) << "nothing was changed";
}

TEST_F(SqliteStoreTest, AnotherProgramsDatabaseIsRefusedAndKept) {
  ExecuteSql(File(), "CREATE TABLE mine(x); INSERT INTO mine VALUES(1);");
  EXPECT_TRUE(FailsWith(OpenProject(Uri("w")), StatusCode::kInvalidArgument, "of another program"));
  EXPECT_EQ(QueryInt(File(), "SELECT count(*) FROM mine"), 1);
}

TEST_F(SqliteStoreTest, ANewerSchemaIsRefusedNamingBothVersions) {
  ASSERT_TRUE(Open("w"));
  ExecuteSql(File(), "UPDATE schema_version SET version=99");
  EXPECT_TRUE(FailsWith(OpenProject(Uri("w")), StatusCode::kUnsupported,
                        "has schema version 99, newer than version 6"));
}

// tests/project/fixtures/schema_v1.db ... schema_v5.db were written by
// toolvfs at schema versions 1 (commit e2096d9), 2 (commit 5360ebe), 3
// (commit ea88142), 4 (commit 8793878) and 5 (commit bf6130b) with
// the same commands (fixtures/README.md): workspace "main" imported a.txt
// ("alpha 1"), big.txt (70,000 bytes: two chunks), src/main.c and an empty
// docs/; snapshot 1 "first"; a.txt = "alpha 2" and b.txt = "beta"
// imported; snapshot 2 "second"; a.txt = "alpha 3" imported. Workspace
// "other" holds a.txt = "alpha 3" (shared content). The source tree is
// compiled in (TOOLVFS_TEST_SOURCE_DIR), since ctest runs project_test
// without TOOLVFS_SOURCE_DIR in its environment.
std::string Fixture(const std::string& name) {
  const char* source = std::getenv("TOOLVFS_SOURCE_DIR");
  return std::string(source != nullptr ? source : TOOLVFS_TEST_SOURCE_DIR) + "/tests/project/fixtures/" + name;
}

std::string FixtureBigText() {
  std::string text(70000, 'a');
  for (size_t i = 0; i < text.size(); ++i) text[i] = static_cast<char>('a' + (i * 7) % 26);
  return text;
}

// A fixture's times of a.txt, which differ between the two files.
struct FixtureTimes {
  int64_t created_ms;
  int64_t modified_ms;
};

class SqliteMigrationTest : public SqliteStoreTest {
 protected:
  // Opens fixture `name` of schema version `version` (migrating it) and
  // checks that everything it held is there and goes on working.
  void ExpectMigrated(const std::string& name, int64_t version, FixtureTimes times) {
    const std::string fixture = ReadRealFile(Fixture(name));
    ASSERT_FALSE(fixture.empty()) << "missing " << Fixture(name) << " (TOOLVFS_SOURCE_DIR)";
    WriteRealFile(File(), fixture);
    ASSERT_EQ(QueryInt(File(), "SELECT version FROM schema_version"), version);

    auto main = Open("main");
    ASSERT_TRUE(main);
    EXPECT_EQ(QueryInt(File(), "SELECT version FROM schema_version"), kSqlSchemaVersion);
    EXPECT_EQ(QueryText(File(), "PRAGMA integrity_check"), "ok");
    EXPECT_EQ(QueryInt(File(), "SELECT count(*) FROM sqlite_schema WHERE name IN ('entries_v1', 'contents_v1', "
                               "'content_chunks_v1', 'contents_v3', 'content_chunks_v3', 'content_collisions', "
                               "'workspaces_v6')"),
              0)
        << "no table of the migration is left";
    EXPECT_EQ(QueryInt(File(), "SELECT count(*) FROM contents"),
              QueryInt(File(), "SELECT count(*) FROM content_addresses"))
        << "every content has its address";

    EXPECT_EQ(*main->Read("a.txt"), "alpha 3\n");
    EXPECT_EQ(*main->Read("b.txt"), "beta\n");
    EXPECT_EQ(*main->Read("src/main.c"), "int main() { return 0; }\n");
    EXPECT_EQ(*main->Read("big.txt"), FixtureBigText());
    EXPECT_EQ(main->ReadRange("big.txt", 65530, 12)->content, FixtureBigText().substr(65530, 12));
    EXPECT_EQ(main->ListDir("docs")->size(), 0u) << "the empty directory survives";
    Result<FileMetadata> a = main->Metadata("a.txt");
    ASSERT_TRUE(IsOk(a));
    EXPECT_EQ(a->version, 3u);
    EXPECT_EQ(a->created_ms, times.created_ms);
    EXPECT_EQ(a->modified_ms, times.modified_ms);

    Result<std::vector<SnapshotInfo>> snapshots = main->ListSnapshots();
    ASSERT_TRUE(IsOk(snapshots));
    ASSERT_EQ(snapshots->size(), 2u);
    EXPECT_EQ((*snapshots)[0].id, "1");
    EXPECT_EQ((*snapshots)[0].label, "first");
    EXPECT_EQ((*snapshots)[1].id, "2");
    EXPECT_EQ((*snapshots)[1].label, "second");
    Result<TreeDiff> diff = main->Diff("1", "2");
    ASSERT_TRUE(IsOk(diff));
    EXPECT_EQ(diff->added, std::vector<std::string>{"b.txt"});
    EXPECT_EQ(diff->modified, std::vector<std::string>{"a.txt"});
    EXPECT_TRUE(diff->deleted.empty());

    auto first = OpenProject(Uri("main@1"));
    ASSERT_TRUE(IsOk(first));
    EXPECT_EQ(*(*first)->Read("a.txt"), "alpha 1\n");
    EXPECT_FALSE(*(*first)->Exists("b.txt"));
    EXPECT_EQ(*Open("other")->Read("a.txt"), "alpha 3\n");

    // The migrated file goes on as any other: counts carried over, so
    // garbage collection finds nothing to free and restore works; new
    // content finds the migrated content by address.
    ASSERT_TRUE(IsOk(main->Write("a.txt", "alpha 4\n")));
    EXPECT_EQ(main->Metadata("a.txt")->version, 4u);
    ASSERT_TRUE(IsOk(main->Write("copy.txt", "beta\n")));
    EXPECT_EQ(QueryInt(File(), "SELECT count(*) FROM contents WHERE data=CAST('beta' || char(10) AS BLOB)"), 1);
    ASSERT_TRUE(IsOk(main->Restore("1")));
    EXPECT_EQ(*main->Read("a.txt"), "alpha 1\n");
    EXPECT_FALSE(*main->Exists("b.txt"));
    EXPECT_EQ(*main->Snapshot("after"), "3");
    main.reset();
    Result<std::unique_ptr<SqliteStoreFile>> file = SqliteStoreFile::Open(File());
    ASSERT_TRUE(IsOk(file));
    Result<GarbageReport> garbage = (*file)->CollectGarbage();
    ASSERT_TRUE(IsOk(garbage));
    EXPECT_EQ(garbage->contents, 0u) << "reference counts survived the migration";
    EXPECT_EQ(*Open("main")->Read("big.txt"), FixtureBigText());

    // Version 6: the id of a deleted workspace, the largest, is not given again.
    const int64_t largest = QueryInt(File(), "SELECT max(id) FROM workspaces");
    ASSERT_EQ(QueryInt(File(), "SELECT id FROM workspaces WHERE name='other'"), largest);
    ASSERT_TRUE(IsOk((*file)->DeleteWorkspace("other")));
    EXPECT_TRUE(Open("next"));
    EXPECT_EQ(QueryInt(File(), "SELECT id FROM workspaces WHERE name='next'"), largest + 1);
  }
};

TEST_F(SqliteMigrationTest, AVersion1FileIsMigratedKeepingContentVersionsAndSnapshots) {
  ExpectMigrated("schema_v1.db", 1, {1795733847621, 1795733848296});
}

TEST_F(SqliteMigrationTest, AVersion2FileIsMigratedKeepingContentVersionsAndSnapshots) {
  ExpectMigrated("schema_v2.db", 2, {1795746204714, 1795746205589});
}

TEST_F(SqliteMigrationTest, AVersion3FileIsMigratedKeepingContentVersionsAndSnapshots) {
  ExpectMigrated("schema_v3.db", 3, {1795756931023, 1795756931689});
}

TEST_F(SqliteMigrationTest, AVersion4FileIsMigratedKeepingContentVersionsAndSnapshots) {
  ExpectMigrated("schema_v4.db", 4, {1795767992346, 1795767992658});
}

TEST_F(SqliteMigrationTest, AVersion5FileIsMigratedKeepingContentVersionsAndSnapshots) {
  ExpectMigrated("schema_v5.db", 5, {1795807576251, 1795807576985});
}

// Rows that name a workspace id no workspace has (left by a deletion that
// did not finish, or by hand) keep that id from being given by the
// migrated file: the next id is above every id still named anywhere.
TEST_F(SqliteMigrationTest, TheMigrationToVersion6GivesNoIdThatRowsStillName) {
  WriteRealFile(File(), ReadRealFile(Fixture("schema_v5.db")));
  ExecuteSql(File(), "INSERT INTO snapshots(workspace_id, id, generation, label, created_ms) VALUES(9, 1, 1, NULL, 0);"
                     "INSERT INTO entries(workspace_id, parent, name, born, path, kind, size, created_ms, modified_ms) "
                     "VALUES(7, '', 'x', 1, 'x', 1, 0, 0, 0);");
  EXPECT_TRUE(Open("next"));
  EXPECT_EQ(QueryInt(File(), "SELECT version FROM schema_version"), kSqlSchemaVersion);
  EXPECT_EQ(QueryInt(File(), "SELECT id FROM workspaces WHERE name='next'"), 10);
  EXPECT_EQ(QueryText(File(), "PRAGMA integrity_check"), "ok");
}

// Version 4's birth index leaves out generation 1 (the rows written before
// the first snapshot: one B-tree page fewer per write); what is born later
// is in it, and restore and diff find it.
TEST_F(SqliteStoreTest, TheBirthIndexLeavesOutWhatWasWrittenBeforeTheFirstSnapshot) {
  auto store = Open("w");
  ASSERT_TRUE(store);
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(IsOk(store->Write("d/f" + std::to_string(i), "before")));
  const char* indexed = "SELECT coalesce(sum(ncell), 0) FROM dbstat WHERE name='entries_by_birth' AND pagetype='leaf'";
  EXPECT_EQ(QueryInt(File(), indexed), 0);
  ASSERT_TRUE(IsOk(store->Snapshot()));
  ASSERT_TRUE(IsOk(store->Write("d/f3", "after")));
  ASSERT_TRUE(IsOk(store->Write("d/new", "after")));
  EXPECT_EQ(QueryInt(File(), indexed), 2);
  Result<TreeDiff> diff = store->Diff("1");
  ASSERT_TRUE(IsOk(diff));
  EXPECT_EQ(diff->added, std::vector<std::string>{"d/new"});
  EXPECT_EQ(diff->modified, std::vector<std::string>{"d/f3"});
  ASSERT_TRUE(IsOk(store->Restore("1")));
  EXPECT_EQ(*store->Read("d/f3"), "before");
  EXPECT_FALSE(*store->Exists("d/new"));
  EXPECT_EQ(*store->Read("d/f19"), "before");
}

// A live listing reads a never-snapshotted workspace without its per-row
// `died` test (kListLiveChildrenByGeneration) and tests the generation in
// the same statement, so a snapshot another connection took, and the dead
// rows it makes possible, are seen at once; names stay in byte order.
TEST_F(SqliteStoreTest, LiveListingsSeeAnotherConnectionsFirstSnapshotAndItsDeadRows) {
  auto lister = Open("w");
  auto writer = Open("w");  // another database object: its own connections, as another process has
  ASSERT_TRUE(lister && writer);
  for (const char* name : {"d/b", "d/a", "d/C", "d/c"}) ASSERT_TRUE(IsOk(writer->Write(name, "x")));
  ASSERT_TRUE(IsOk(writer->Write("d/sub/e", "x")));
  ASSERT_TRUE(IsOk(writer->Delete("d/c")));  // born in generation 1: its row goes
  const auto names = [&](ProjectFiles& store) {
    std::vector<std::string> listed;
    Result<std::vector<DirEntry>> entries = store.ListDir("d");
    EXPECT_TRUE(IsOk(entries));
    if (entries.ok()) {
      for (const DirEntry& entry : *entries) listed.push_back(entry.name);
    }
    return listed;
  };
  EXPECT_EQ(names(*lister), (std::vector<std::string>{"C", "a", "b", "sub"}));
  EXPECT_EQ(QueryInt(File(), "SELECT count(*) FROM entries WHERE died IS NOT NULL"), 0);

  ASSERT_TRUE(IsOk(writer->Snapshot()));
  ASSERT_TRUE(IsOk(writer->Delete("d/a")));             // retired: a dead row the snapshot sees
  ASSERT_TRUE(IsOk(writer->Write("d/b", "changed")));  // replaced: the old row dead, a new one live
  EXPECT_EQ(QueryInt(File(), "SELECT count(*) FROM entries WHERE died IS NOT NULL"), 2);
  EXPECT_EQ(names(*lister), (std::vector<std::string>{"C", "b", "sub"}));
  EXPECT_EQ(names(*writer), (std::vector<std::string>{"C", "b", "sub"}));
  Result<std::vector<DirEntry>> entries = lister->ListDir("d");
  ASSERT_TRUE(IsOk(entries));
  EXPECT_EQ(entries->back().kind, EntryKind::kDirectory);
  EXPECT_EQ(entries->front().kind, EntryKind::kFile);
}

// Address rows whose content has their bytes (the rest are former
// addresses that in-place rewrites left: AnOverwriteInPlaceLeaves...).
constexpr const char* kAddressedContents =
    "SELECT count(*) FROM content_addresses a JOIN contents c ON c.id=a.content_id AND c.hash=a.hash";

// An overwrite of a file no snapshot sees rewrites its content's row in
// place when nothing else uses it (ExchangeContent): same id, new address,
// the old address's row left (schema version 5). Shared content and what a snapshot sees are never
// rewritten, and a materialized copy still tells such a change from none.
TEST_F(SqliteStoreTest, AnOverwriteRewritesUnsharedContentInPlaceAndNothingElse) {
  auto store = Open("w");
  ASSERT_TRUE(store);
  const char* a_content = "SELECT content_id FROM entries WHERE path='a.txt' AND died IS NULL";
  const char* addressed = kAddressedContents;
  ASSERT_TRUE(IsOk(store->Write("a.txt", "one")));
  const int64_t first_id = QueryInt(File(), a_content);
  ASSERT_TRUE(IsOk(store->Write("a.txt", "two")));
  EXPECT_EQ(QueryInt(File(), a_content), first_id) << "rewritten in place";
  EXPECT_EQ(QueryInt(File(), "SELECT count(*) FROM contents"), 1);
  EXPECT_EQ(QueryInt(File(), "SELECT count(*) FROM content_addresses"), 2) << "the former address's row is left";
  EXPECT_EQ(QueryInt(File(), addressed), 1) << "the address is the new bytes'";
  EXPECT_EQ(*store->Read("a.txt"), "two");
  EXPECT_EQ(store->Metadata("a.txt")->version, 2u);

  ASSERT_TRUE(IsOk(store->Write("b.txt", "shared")));
  ASSERT_TRUE(IsOk(store->Write("c.txt", "shared")));
  ASSERT_TRUE(IsOk(store->Write("b.txt", "b's own")));
  EXPECT_EQ(*store->Read("c.txt"), "shared") << "a shared content is not rewritten";
  ASSERT_TRUE(IsOk(store->Write("a.txt", "shared")));
  EXPECT_EQ(QueryInt(File(), "SELECT count(*) FROM contents"), 2) << "'two' freed, 'shared' found by address";
  EXPECT_EQ(QueryInt(File(), "SELECT reference_count FROM contents WHERE data=CAST('shared' AS BLOB)"), 2);

  ASSERT_TRUE(IsOk(store->Write("m.txt", "before the snapshot")));
  ASSERT_TRUE(IsOk(store->Snapshot()));
  ASSERT_TRUE(IsOk(store->Write("m.txt", "m1")));
  ASSERT_TRUE(IsOk(store->Write("m.txt", "m2")));
  EXPECT_EQ(*(*OpenProject(Uri("w@1")))->Read("m.txt"), "before the snapshot") << "the snapshot's row is kept";

  Result<std::unique_ptr<MaterializedView>> view = store->Materialize();
  ASSERT_TRUE(IsOk(view));
  ASSERT_TRUE(IsOk(store->Write("m.txt", "m3")));  // in place: the content keeps its id
  ASSERT_EQ(::unlink(((*view)->path() + "/m.txt").c_str()), 0);
  ASSERT_TRUE(IsOk((*view)->Release()));
  EXPECT_EQ(*store->Read("m.txt"), "m3") << "the store's change wins over the copy's deletion";
  EXPECT_EQ(QueryInt(File(), addressed), QueryInt(File(), "SELECT count(*) FROM contents"));
  EXPECT_EQ(QueryText(File(), "PRAGMA integrity_check"), "ok");
}

// An overwrite in place leaves the row of the address it replaces (one
// B-tree page fewer per commit), at most one per content: the bytes of a
// former address are stored once when written again, the row goes with
// its content, and garbage collection removes what is left.
TEST_F(SqliteStoreTest, AnOverwriteInPlaceLeavesAtMostOneFormerAddressPerContent) {
  auto store = Open("w");
  ASSERT_TRUE(store);
  const char* addresses = "SELECT count(*) FROM content_addresses";
  const char* addressed = kAddressedContents;
  const char* contents = "SELECT count(*) FROM contents";
  for (int i = 0; i <= 20; ++i) ASSERT_TRUE(IsOk(store->Write("a.txt", "v" + std::to_string(i))));
  EXPECT_EQ(*store->Read("a.txt"), "v20");
  EXPECT_EQ(QueryInt(File(), contents), 1);
  EXPECT_EQ(QueryInt(File(), addresses), 2) << "v0's row left, the others deleted";
  EXPECT_EQ(QueryInt(File(), addressed), 1);

  // Back to the former bytes: that row is the content's address again.
  ASSERT_TRUE(IsOk(store->Write("a.txt", "v0")));
  EXPECT_EQ(*store->Read("a.txt"), "v0");
  EXPECT_EQ(QueryInt(File(), addresses), 1);
  EXPECT_EQ(QueryInt(File(), addressed), 1);
  EXPECT_EQ(QueryInt(File(), "SELECT count(*) FROM contents WHERE former_hash IS NOT NULL"), 0);

  // Another file with a content's former bytes: stored once, the row taken over.
  ASSERT_TRUE(IsOk(store->Write("a.txt", "v1")));
  ASSERT_TRUE(IsOk(store->Write("b.txt", "v0")));
  ASSERT_TRUE(IsOk(store->Write("c.txt", "v0")));
  EXPECT_EQ(QueryInt(File(), contents), 2);
  EXPECT_EQ(QueryInt(File(), "SELECT reference_count FROM contents WHERE data=CAST('v0' AS BLOB)"), 2)
      << "found by the address it took over";
  EXPECT_EQ(QueryInt(File(), addresses), 2);
  EXPECT_EQ(QueryInt(File(), addressed), 2);
  ASSERT_TRUE(IsOk(store->Delete("a.txt", false)));  // its content goes, and only its own address row
  EXPECT_EQ(QueryInt(File(), contents), 1);
  EXPECT_EQ(QueryInt(File(), addresses), 1);
  EXPECT_EQ(*store->Read("b.txt"), "v0");
  ASSERT_TRUE(IsOk(store->Write("d.txt", "v0")));
  EXPECT_EQ(QueryInt(File(), "SELECT reference_count FROM contents WHERE data=CAST('v0' AS BLOB)"), 3);

  // What a rewrite left, garbage collection removes.
  ASSERT_TRUE(IsOk(store->Write("e.txt", "e1")));
  ASSERT_TRUE(IsOk(store->Write("e.txt", "e2")));
  EXPECT_EQ(QueryInt(File(), addresses), QueryInt(File(), contents) + 1);
  store.reset();
  Result<std::unique_ptr<SqliteStoreFile>> file = SqliteStoreFile::Open(File());
  ASSERT_TRUE(IsOk(file));
  ASSERT_TRUE(IsOk((*file)->CollectGarbage()));
  EXPECT_EQ(QueryInt(File(), addresses), QueryInt(File(), contents));
  EXPECT_EQ(QueryInt(File(), addressed), QueryInt(File(), contents));
  EXPECT_EQ(QueryInt(File(), "SELECT count(*) FROM contents WHERE former_hash IS NOT NULL"), 0);
  store = Open("w");
  EXPECT_EQ(*store->Read("e.txt"), "e2");
  ASSERT_TRUE(IsOk(store->Write("f.txt", "e1")));
  EXPECT_EQ(*store->Read("f.txt"), "e1");
  EXPECT_EQ(QueryText(File(), "PRAGMA integrity_check"), "ok");
}

TEST_F(SqliteStoreTest, ContentIsFoundByItsWholeAddressAndStoredOnce) {
  ASSERT_TRUE(Open("w"));
  const std::string content = "the content next to a near twin";
  ContentHash twin = ContentAddress(content);
  twin.back() ^= 1;  // the same address but for its last bit
  std::string hex;
  for (uint8_t byte : twin) {
    char two[3];
    std::snprintf(two, sizeof two, "%02x", byte);
    hex += two;
  }
  ExecuteSql(File(), ("INSERT INTO contents(hash, size, reference_count, data) VALUES(x'" + hex +
                      "', 5, 1, 'other'); INSERT INTO content_addresses(hash, content_id) VALUES(x'" + hex +
                      "', last_insert_rowid())")
                         .c_str());
  auto store = Open("w");
  ASSERT_TRUE(IsOk(store->Write("a", content)));
  ASSERT_TRUE(IsOk(store->Write("b", content)));
  EXPECT_EQ(*store->Read("a"), content);
  EXPECT_EQ(*store->Read("b"), content);
  EXPECT_EQ(QueryInt(File(), "SELECT count(*) FROM contents WHERE size=31"), 1) << "stored once";
  EXPECT_EQ(QueryInt(File(), "SELECT reference_count FROM contents WHERE size=31"), 2);
  EXPECT_EQ(QueryInt(File(), "SELECT count(*) FROM content_addresses"), 2);
  ASSERT_TRUE(IsOk(store->Delete("a", false)));
  ASSERT_TRUE(IsOk(store->Delete("b", false)));
  EXPECT_EQ(QueryInt(File(), "SELECT count(*) FROM contents WHERE size=31"), 0);
  EXPECT_EQ(QueryInt(File(), "SELECT count(*) FROM content_addresses"), 1) << "its address went with it";
  EXPECT_EQ(QueryText(File(), "SELECT data FROM contents"), "other") << "the twin is untouched";
}

TEST_F(SqliteStoreTest, ACorruptFileGivesAClearErrorNotACrash) {
  {
    auto store = Open("w");
    for (int i = 0; i < 200; ++i) {
      ASSERT_TRUE(IsOk(store->Write("dir" + std::to_string(i % 10) + "/f" + std::to_string(i), RandomBytes(3000, i))));
    }
  }
  ExecuteSql(File(), "PRAGMA wal_checkpoint(TRUNCATE)");
  // Overwrite pages in the middle of the file (not the header).
  std::string bytes = ReadRealFile(File());
  ASSERT_GT(bytes.size(), 64u * 1024);
  for (size_t i = 8192; i < bytes.size() - 4096; i += 4096) {
    for (size_t j = 0; j < 200; ++j) bytes[i + j] = static_cast<char>(0x5a);
  }
  WriteRealFile(File(), bytes);
  EXPECT_NE(QueryText(File(), "PRAGMA quick_check"), "ok");
  Result<std::unique_ptr<ProjectFiles>> store = OpenProject(Uri("w"));
  if (!store.ok()) {
    EXPECT_NE(store.status().message().find(File()), std::string::npos) << store.status().ToString();
    return;
  }
  // Opened: every operation answers, some with an error naming the store.
  int errors = 0;
  for (int i = 0; i < 200; ++i) {
    Result<std::string> read = (*store)->Read("dir" + std::to_string(i % 10) + "/f" + std::to_string(i));
    if (!read.ok()) {
      ++errors;
      EXPECT_NE(read.status().message().find("corrupt"), std::string::npos) << read.status().ToString();
    }
  }
  Result<std::vector<DirEntry>> listing = (*store)->ListDir("");
  if (!listing.ok()) ++errors;
  EXPECT_GT(errors, 0) << "the damage was not noticed";
}

// ----- Growth --------------------------------------------------------------------------

TEST_F(SqliteStoreTest, OverwriteSnapshotDeleteLoopDoesNotGrowTheFile) {
  auto store = Open("w");
  auto file_size = [&] {
    struct stat info {};
    ::stat(File().c_str(), &info);
    struct stat wal {};
    ::stat((File() + "-wal").c_str(), &wal);
    return static_cast<uint64_t>(info.st_size);
  };
  uint64_t size_after_warm_up = 0;
  for (int round = 0; round < 150; ++round) {
    ASSERT_TRUE(IsOk(store->Write("data.bin", RandomBytes(200'000, round))));
    Result<std::string> id = store->Snapshot();
    ASSERT_TRUE(IsOk(id));
    ASSERT_TRUE(IsOk(store->Write("data.bin", RandomBytes(200'000, 10'000 + round))));
    ASSERT_TRUE(IsOk(store->DeleteSnapshot(*id)));
    if (round == 20) {
      ExecuteSql(File(), "PRAGMA wal_checkpoint(TRUNCATE)");
      size_after_warm_up = file_size();
    }
  }
  ExecuteSql(File(), "PRAGMA wal_checkpoint(TRUNCATE)");
  EXPECT_LE(file_size(), size_after_warm_up + 1024 * 1024) << "freed pages are reused";
  EXPECT_EQ(QueryInt(File(), "SELECT count(*) FROM entries"), 1) << "no dead rows are kept";
  EXPECT_EQ(QueryInt(File(), "SELECT count(*) FROM contents WHERE data IS NULL"), 1);
}

TEST_F(SqliteStoreTest, GarbageCollectionAndWorkspaceDeletionFreeContent) {
  {
    auto store = Open("doomed");
    ASSERT_TRUE(IsOk(store->Write("a", RandomBytes(100'000, 7))));
    ASSERT_TRUE(IsOk(store->Snapshot()));
    ASSERT_TRUE(IsOk(store->Write("a", RandomBytes(100'000, 8))));
    auto kept = Open("kept");
    ASSERT_TRUE(IsOk(kept->Write("b", "kept")));
  }
  Result<std::unique_ptr<SqliteStoreFile>> file = SqliteStoreFile::Open(File());
  ASSERT_TRUE(IsOk(file));
  Result<std::vector<WorkspaceSummary>> workspaces = (*file)->ListWorkspaces();
  ASSERT_TRUE(IsOk(workspaces));
  ASSERT_EQ(workspaces->size(), 2u);
  EXPECT_EQ((*workspaces)[0].name, "doomed");
  EXPECT_EQ((*workspaces)[0].files, 1u);
  EXPECT_EQ((*workspaces)[0].bytes, 100'000u);
  EXPECT_EQ((*workspaces)[0].snapshots, 1u);
  ASSERT_TRUE(IsOk((*file)->DeleteWorkspace("doomed")));
  EXPECT_TRUE(FailsWith((*file)->DeleteWorkspace("doomed"), StatusCode::kNotFound, "'doomed' does not exist"));
  EXPECT_EQ(QueryInt(File(), "SELECT count(*) FROM contents"), 1) << "only 'kept' remains";
  // Leak a reference on purpose: gc recomputes them and frees the content.
  ExecuteSql(File(), "INSERT INTO contents(hash, size, reference_count, data) VALUES(x'00', 5, 3, x'0102030405')");
  Result<GarbageReport> report = (*file)->CollectGarbage();
  ASSERT_TRUE(IsOk(report));
  EXPECT_EQ(report->contents, 1u);
  EXPECT_EQ(report->bytes, 5u);
  EXPECT_EQ(*Open("kept")->Read("b"), "kept");
  EXPECT_EQ(QueryText(File(), "PRAGMA integrity_check"), "ok");
}

// Workspace ids are never given again (schema version 6): SQLite used to
// give a deleted workspace's id, the largest, to the next one created, and
// a store still open on the deleted workspace, which knows it by id, then
// read and wrote that one. Now every use of it, a pending sync of its
// materialized copy and its snapshot projects included, says it was
// deleted, and the new workspace holds its own files alone.
TEST_F(SqliteStoreTest, AStoreOpenOnADeletedWorkspaceNeverReachesTheNextOneCreated) {
  auto first = Open("w1");
  auto alpha = Open("alpha");
  ASSERT_TRUE(first && alpha);
  ASSERT_TRUE(IsOk(alpha->Write("alpha.txt", "alpha")));
  ASSERT_TRUE(IsOk(alpha->Snapshot()));
  auto alpha_snapshot = OpenProject(Uri("alpha@1"));
  ASSERT_TRUE(IsOk(alpha_snapshot));
  Result<std::unique_ptr<MaterializedView>> view = alpha->Materialize();
  ASSERT_TRUE(IsOk(view));
  WriteRealFile((*view)->path() + "/from-the-copy.txt", "written in alpha's copy");
  const int64_t alpha_id = QueryInt(File(), "SELECT id FROM workspaces WHERE name='alpha'");

  Result<std::unique_ptr<SqliteStoreFile>> file = SqliteStoreFile::Open(File());
  ASSERT_TRUE(IsOk(file));
  ASSERT_TRUE(IsOk((*file)->DeleteWorkspace("alpha")));
  auto beta = Open("beta");
  ASSERT_TRUE(beta);
  ASSERT_TRUE(IsOk(beta->Write("beta.txt", "beta's own file")));
  EXPECT_GT(QueryInt(File(), "SELECT id FROM workspaces WHERE name='beta'"), alpha_id);

  const std::string_view deleted = "#alpha' was deleted while it was open";
  EXPECT_TRUE(FailsWith(alpha->Write("through-alpha.txt", "lost"), StatusCode::kNotFound, deleted));
  EXPECT_TRUE(FailsWith(alpha->Read("beta.txt"), StatusCode::kNotFound, deleted));
  EXPECT_TRUE(FailsWith(alpha->ListDir(""), StatusCode::kNotFound, deleted));
  EXPECT_TRUE(FailsWith(alpha->Snapshot(), StatusCode::kNotFound, deleted));
  EXPECT_TRUE(FailsWith((*view)->Release(), StatusCode::kNotFound, deleted));
  std::filesystem::remove_all((*view)->path());  // a copy that could not be synced is kept
  // A snapshot project names its snapshot too: the words without the name.
  const std::string_view gone = "was deleted while it was open";
  EXPECT_TRUE(FailsWith((*alpha_snapshot)->Read("alpha.txt"), StatusCode::kNotFound, gone));
  EXPECT_TRUE(FailsWith((*alpha_snapshot)->ListDir(""), StatusCode::kNotFound, gone));

  Result<std::vector<DirEntry>> listed = beta->ListDir("");
  ASSERT_TRUE(IsOk(listed));
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].name, "beta.txt");
  EXPECT_EQ(*beta->Read("beta.txt"), "beta's own file");
  EXPECT_TRUE(first->ListDir("")->empty()) << "the other workspace is untouched";
}

// ----- Several processes ------------------------------------------------------------------

// Runs `body` in `count` child processes at once; each opens its own store.
// Returns how many failed.
template <typename Body>
int RunInProcesses(int count, Body body) {
  std::vector<pid_t> children;
  for (int i = 0; i < count; ++i) {
    pid_t pid = ::fork();
    if (pid == 0) _exit(body(i) ? 0 : 1);
    children.push_back(pid);
  }
  int failed = 0;
  for (pid_t pid : children) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failed;
  }
  return failed;
}

TEST_F(SqliteStoreTest, SeveralProcessesWriteOneWorkspaceWithoutLosingAnything) {
  ASSERT_TRUE(Open("shared"));
  constexpr int kProcesses = 4;
  constexpr int kRounds = 60;
  const std::string uri = Uri("shared");
  int failed = RunInProcesses(kProcesses, [&](int process) {
    Result<std::unique_ptr<ProjectFiles>> store = OpenProject(uri);
    if (!store.ok()) return false;
    for (int round = 0; round < kRounds; ++round) {
      const std::string line = "p" + std::to_string(process) + "r" + std::to_string(round) + "\n";
      if (!(*store)->Write("own/" + std::to_string(process) + "/" + std::to_string(round), line).ok()) return false;
      if (!(*store)->Write("log.txt", line, WriteMode::kAppend).ok()) return false;
      if (!(*store)->Write("last.txt", line).ok()) return false;
    }
    return true;
  });
  EXPECT_EQ(failed, 0);
  auto store = Open("shared");
  std::string log = *store->Read("log.txt");
  EXPECT_EQ(std::count(log.begin(), log.end(), '\n'), kProcesses * kRounds) << "no append was lost";
  EXPECT_EQ(store->Metadata("log.txt")->version, uint64_t{kProcesses * kRounds});
  EXPECT_EQ(store->Metadata("last.txt")->version, uint64_t{kProcesses * kRounds}) << "one version per write";
  for (int process = 0; process < kProcesses; ++process) {
    EXPECT_EQ(store->ListDir("own/" + std::to_string(process))->size(), size_t{kRounds});
  }
}

TEST_F(SqliteStoreTest, AWriterKilledAtRandomPointsLeavesOldOrNewContent) {
  ASSERT_TRUE(Open("crash"));
  const std::string uri = Uri("crash");
  const std::string small_a(1000, 'a'), small_b(1000, 'b');
  const std::string large_a(300'000, 'A'), large_b(300'000, 'B');
  std::mt19937 random(42);
  constexpr int kKills = 150;
  for (int kill = 0; kill < kKills; ++kill) {
    pid_t pid = ::fork();
    if (pid == 0) {
      Result<std::unique_ptr<ProjectFiles>> store = OpenProject(uri);
      if (!store.ok()) _exit(1);
      for (int i = 0;; ++i) {
        (void)(*store)->Write("small.txt", i % 2 ? small_a : small_b);
        (void)(*store)->Write("large.bin", i % 2 ? large_a : large_b);
        (void)(*store)->Write("log.txt", "0123456789", WriteMode::kAppend);
        if (i % 7 == 0) (void)(*store)->Snapshot();
      }
    }
    std::this_thread::sleep_for(std::chrono::microseconds(2000 + random() % 30'000));
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
  }
  EXPECT_EQ(QueryText(File(), "PRAGMA integrity_check"), "ok");
  auto store = Open("crash");
  Result<std::string> small = store->Read("small.txt");
  if (small.ok()) {
    EXPECT_TRUE(*small == small_a || *small == small_b);
  }
  Result<std::string> large = store->Read("large.bin");
  if (large.ok()) {
    EXPECT_TRUE(*large == large_a || *large == large_b);
  }
  Result<std::string> log = store->Read("log.txt");
  if (log.ok()) {
    EXPECT_EQ(log->size() % 10, 0u) << "an append is whole or absent";
    EXPECT_EQ(store->Metadata("log.txt")->version, log->size() / 10);
  }
  // Every snapshot the children took still opens and reads.
  Result<std::vector<SnapshotInfo>> snapshots = store->ListSnapshots();
  ASSERT_TRUE(IsOk(snapshots));
  for (const SnapshotInfo& snapshot : *snapshots) {
    Result<std::unique_ptr<ProjectFiles>> past = OpenProject(uri + "@" + snapshot.id);
    ASSERT_TRUE(IsOk(past));
    Result<std::string> past_large = (*past)->Read("large.bin");
    if (past_large.ok()) {
    EXPECT_TRUE(*past_large == large_a || *past_large == large_b);
  }
  }
}

// ----- Full and read-only disks -----------------------------------------------------------

// Runs `body(mount_point)` in a child process with a private mount
// namespace and a 2 MiB tmpfs mounted at a fresh directory below `dir`;
// the child's exit status says whether the body's expectations held (gtest
// assertions do not cross the fork). Nullopt if the machine cannot give
// such a namespace.
std::optional<int> RunOnSmallTmpfs(const TempDir& dir, const std::function<bool(const std::string&)>& body) {
  const std::string mount_point = dir.Join("small");
  if (::mkdir(mount_point.c_str(), 0700) != 0) return 1;
  pid_t pid = ::fork();
  if (pid == 0) {
    if (::unshare(CLONE_NEWNS) != 0) _exit(77);
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) _exit(77);
    if (::mount("tmpfs", mount_point.c_str(), "tmpfs", 0, "size=2m") != 0) _exit(77);
    _exit(body(mount_point) ? 0 : 1);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  int exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (exit_code == 77) return std::nullopt;
  return exit_code;
}

TEST_F(SqliteStoreTest, AFullDiskIsResourceExhaustedAndLosesNothing) {
  std::optional<int> exit_code = RunOnSmallTmpfs(dir_, [](const std::string& mount_point) {
    const std::string uri = "sqlite:" + mount_point + "/store.db#w";
    Result<std::unique_ptr<ProjectFiles>> store = OpenProject(uri);
    if (!store.ok()) return false;
    if (!(*store)->Write("kept.txt", "kept").ok()) return false;
    Status full;
    for (int i = 0; i < 100 && full.ok(); ++i) {
      full = (*store)->Write("fill" + std::to_string(i), RandomBytes(100'000, i));
    }
    if (full.code() != StatusCode::kResourceExhausted) {
      std::fprintf(stderr, "expected resource_exhausted, got %s\n", full.ToString().c_str());
      return false;
    }
    if (full.message().find("disk is full") == std::string::npos) return false;
    Result<std::string> kept = (*store)->Read("kept.txt");
    return kept.ok() && *kept == "kept";
  });
  if (!exit_code) GTEST_SKIP() << "needs mount namespaces (unshare(CLONE_NEWNS)) to mount a small tmpfs";
  EXPECT_EQ(*exit_code, 0);
}

TEST_F(SqliteStoreTest, AReadOnlyFileSystemGivesAClearError) {
  std::optional<int> exit_code = RunOnSmallTmpfs(dir_, [](const std::string& mount_point) {
    const std::string uri = "sqlite:" + mount_point + "/store.db#w";
    {
      Result<std::unique_ptr<ProjectFiles>> store = OpenProject(uri);
      if (!store.ok() || !(*store)->Write("f", "x").ok()) return false;
    }
    if (::mount(nullptr, mount_point.c_str(), nullptr, MS_REMOUNT | MS_RDONLY, nullptr) != 0) return false;
    Result<std::unique_ptr<ProjectFiles>> store = OpenProject(uri);
    if (store.ok()) {
      Status write = (*store)->Write("g", "y");
      std::fprintf(stderr, "%s\n", write.ToString().c_str());
      return !write.ok() && write.message().find(mount_point) != std::string::npos;
    }
    std::fprintf(stderr, "%s\n", store.status().ToString().c_str());
    return store.status().message().find(mount_point) != std::string::npos;
  });
  if (!exit_code) GTEST_SKIP() << "needs mount namespaces (unshare(CLONE_NEWNS)) to mount a small tmpfs";
  EXPECT_EQ(*exit_code, 0);
}

}  // namespace
}  // namespace toolvfs
