// The SQLite store's VFS (sqlite_wal_vfs.h): a commit's WAL frames reach
// the kernel in one write, and nothing a reader can see is ever held back.
// The store's own tests (sqlite_store_test.cc: processes at once, writers
// killed at random points, a full disk) run on it too.
#include "project/sql/sqlite_wal_vfs.h"

#include <sqlite3.h>

#include <cstdint>
#include <fstream>
#include <random>
#include <string>
#include <tuple>

#include <gtest/gtest.h>

#include "project/test_util.h"

namespace toolvfs {
namespace {

// A raw SQLite connection, closed on destruction.
class Connection {
 public:
  Connection(const std::string& file, const char* vfs) {
    EXPECT_EQ(sqlite3_open_v2(file.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, vfs), SQLITE_OK);
    sqlite3_busy_timeout(db_, 5000);
  }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  ~Connection() { sqlite3_close_v2(db_); }

  void Run(const std::string& sql) {
    char* error = nullptr;
    EXPECT_EQ(sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK) << sql << ": " << (error ? error : "");
    sqlite3_free(error);
  }

  // The first column of the first row as text ("" when there is no row).
  std::string Text(const std::string& sql) {
    sqlite3_stmt* statement = nullptr;
    std::string value;
    EXPECT_EQ(sqlite3_prepare_v3(db_, sql.c_str(), -1, 0, &statement, nullptr), SQLITE_OK) << sql;
    int step = sqlite3_step(statement);
    EXPECT_TRUE(step == SQLITE_ROW || step == SQLITE_DONE) << sql << ": " << sqlite3_errmsg(db_);
    if (step == SQLITE_ROW && sqlite3_column_type(statement, 0) != SQLITE_NULL) {
      value = reinterpret_cast<const char*>(sqlite3_column_text(statement, 0));
    }
    sqlite3_finalize(statement);
    return value;
  }

  void Insert(int64_t id, const std::string& bytes) {
    sqlite3_stmt* statement = nullptr;
    ASSERT_EQ(sqlite3_prepare_v3(db_, "INSERT OR REPLACE INTO t(id, bytes) VALUES(?1, ?2)", -1, 0, &statement,
                                 nullptr),
              SQLITE_OK);
    sqlite3_bind_int64(statement, 1, id);
    sqlite3_bind_blob64(statement, 2, bytes.data(), bytes.size(), SQLITE_TRANSIENT);
    EXPECT_EQ(sqlite3_step(statement), SQLITE_DONE) << sqlite3_errmsg(db_);
    sqlite3_finalize(statement);
  }

 private:
  sqlite3* db_ = nullptr;
};

// Write system calls this process has made (/proc/self/io).
int64_t WriteCalls() {
  std::ifstream io("/proc/self/io");
  std::string key;
  int64_t value = 0;
  while (io >> key >> value) {
    if (key == "syscw:") return value;
  }
  ADD_FAILURE() << "no syscw in /proc/self/io";
  return 0;
}

std::string RandomBytes(size_t size, std::mt19937& generator) {
  std::string bytes(size, '\0');
  for (char& c : bytes) c = static_cast<char>(generator() & 0xff);
  return bytes;
}

TEST(SqliteWalVfsTest, IsRegisteredBesideTheDefault) {
  const char* name = SqliteWalVfsName();
  ASSERT_NE(name, nullptr);
  EXPECT_NE(sqlite3_vfs_find(name), nullptr);
  EXPECT_NE(sqlite3_vfs_find(nullptr), sqlite3_vfs_find(name)) << "it must not become the default";
}

// What the VFS is for: a commit of several pages is one write call where
// the default VFS makes two per page.
TEST(SqliteWalVfsTest, ACommitOfSeveralPagesIsOneWriteCall) {
  TempDir dir;
  std::mt19937 generator(7);
  auto writes_per_commit = [&](const char* vfs, const std::string& file) {
    Connection db(file, vfs);
    db.Run("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA wal_autocheckpoint=0;"
           "CREATE TABLE t(id INTEGER PRIMARY KEY, bytes BLOB)");
    db.Insert(0, "first");
    const int64_t before = WriteCalls();
    db.Run("BEGIN");
    for (int64_t id = 1; id <= 4; ++id) db.Insert(id, RandomBytes(3000, generator));  // four pages or more
    db.Run("COMMIT");
    return WriteCalls() - before;
  };
  EXPECT_EQ(writes_per_commit(SqliteWalVfsName(), dir.Join("batched.db")), 1);
  EXPECT_GE(writes_per_commit(nullptr, dir.Join("default.db")), 8) << "the measure itself is off";
}

// Every commit is seen at once, and whole, by a connection of the default
// VFS (another program, or a process without this VFS): at NORMAL, where
// no sync makes the frames go out, through WAL restarts (a checkpoint every
// few pages), rolled-back transactions, and transactions larger than the
// VFS holds back and than SQLite's cache (whose pages spill into the WAL
// before the commit and are read back and rewritten there). Page sizes at
// both ends of SQLite's range and its default.
class SqliteWalVfsPageSizeTest : public ::testing::TestWithParam<int> {};

TEST_P(SqliteWalVfsPageSizeTest, EveryCommitIsSeenWholeByTheDefaultVfs) {
  TempDir dir;
  const std::string file = dir.Join("store.db");
  Connection writer(file, SqliteWalVfsName());
  writer.Run("PRAGMA page_size=" + std::to_string(GetParam()) +
             "; PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA wal_autocheckpoint=20;"
             " PRAGMA cache_size=-256; CREATE TABLE t(id INTEGER PRIMARY KEY, bytes BLOB)");
  Connection reader(file, nullptr);
  std::mt19937 generator(GetParam());
  // Every row, in order: what a reader must see after each commit.
  const std::string kState = "SELECT count(*) || ':' || coalesce(group_concat(hex(bytes), ','), '') FROM t";
  std::string committed = writer.Text(kState);
  for (int round = 0; round < 60; ++round) {
    const bool large = round % 20 == 7;  // 2.4 MB: past what is held back and past the cache
    const bool rolled_back = round % 9 == 4;
    writer.Run("BEGIN");
    const int rows = large ? 400 : 1 + round % 5;
    for (int i = 0; i < rows; ++i) {
      const int64_t id = (round * 37 + i * 101) % 700;  // new rows and replaced ones
      writer.Insert(id, RandomBytes(large ? 6000 : 100 + (round * 131 + i * 17) % 5000, generator));
    }
    if (large) writer.Run("UPDATE t SET bytes = bytes || x'00' WHERE id % 3 = 0");  // pages written twice
    writer.Run(rolled_back ? "ROLLBACK" : "COMMIT");
    if (!rolled_back) committed = writer.Text(kState);
    ASSERT_EQ(reader.Text(kState), committed) << "round " << round;
  }
  EXPECT_EQ(reader.Text("PRAGMA integrity_check"), "ok");
  EXPECT_EQ(writer.Text("PRAGMA integrity_check"), "ok");
}

INSTANTIATE_TEST_SUITE_P(PageSizes, SqliteWalVfsPageSizeTest, ::testing::Values(512, 4096, 65536),
                         [](const ::testing::TestParamInfo<int>& param) { return "Page" + std::to_string(param.param); });

}  // namespace
}  // namespace toolvfs
