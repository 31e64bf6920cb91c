// The SQLite store's VFS (sqlite_wal_vfs.h): a commit's WAL frames reach
// the kernel in one write, and nothing a reader can see is ever held back.
// The store's own tests (sqlite_store_test.cc: processes at once, writers
// killed at random points, a full disk) run on it too.
#include "project/sql/sqlite_wal_vfs.h"

#include <sqlite3.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <filesystem>
#include <random>
#include <string>

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

  // The result code of running `sql`.
  int Try(const std::string& sql) { return sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, nullptr); }

  void Run(const std::string& sql) {
    char* error = nullptr;
    EXPECT_EQ(sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK)
        << sql << ": " << (error ? error : "");
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

  // What SQLITE_FCNTL_VFSNAME reports for the main database file, or
  // with `of_wal` for its WAL (through its file's own xFileControl, which
  // sqlite3_file_control does not reach); "(none)" when it reports nothing.
  std::string VfsNames(bool of_wal = false) {
    char* names = nullptr;
    int code = SQLITE_OK;
    if (of_wal) {
      sqlite3_file* wal = nullptr;
      EXPECT_EQ(sqlite3_file_control(db_, "main", SQLITE_FCNTL_JOURNAL_POINTER, &wal), SQLITE_OK);
      if (wal == nullptr || wal->pMethods == nullptr) return "(no WAL open)";
      code = wal->pMethods->xFileControl(wal, SQLITE_FCNTL_VFSNAME, &names);
    } else {
      code = sqlite3_file_control(db_, "main", SQLITE_FCNTL_VFSNAME, &names);
    }
    EXPECT_EQ(code, SQLITE_OK);
    std::string result = names != nullptr ? names : "(none)";
    sqlite3_free(names);  // the caller's to free, by the file control's contract
    return result;
  }

 private:
  sqlite3* db_ = nullptr;
};

// The write calls of SQLite's default VFS, counted and made to fail at
// will while one of these lives (its system call hooks, xSetSystemCall).
// The unix VFS writes with pwrite, pwrite64 or write, as it was built: all
// three are hooked.
class WriteCallHook {
 public:
  WriteCallHook() : unix_(sqlite3_vfs_find("unix")) {
    EXPECT_NE(unix_, nullptr);
    for (int i = 0; i < 3; ++i) {
      Hooked& hooked = hooks_[i];
      hooked.original = originals_[i] = unix_->xGetSystemCall(unix_, hooked.name);
      if (hooked.original != nullptr) unix_->xSetSystemCall(unix_, hooked.name, hooked.replacement);
    }
    calls = 0;
    fail = false;
  }
  WriteCallHook(const WriteCallHook&) = delete;
  WriteCallHook& operator=(const WriteCallHook&) = delete;
  ~WriteCallHook() {
    for (Hooked& hooked : hooks_) {
      if (hooked.original != nullptr) unix_->xSetSystemCall(unix_, hooked.name, hooked.original);
    }
  }

  static inline int calls = 0;
  static inline bool fail = false;  // every write fails with ENOSPC

 private:
  struct Hooked {
    const char* name;
    sqlite3_syscall_ptr replacement;
    sqlite3_syscall_ptr original = nullptr;
  };
  template <int kIndex, typename... Arguments>
  static ssize_t Replacement(int fd, const void* bytes, size_t size, Arguments... offset) {
    ++calls;
    if (fail) {
      errno = ENOSPC;
      return -1;
    }
    using Call = ssize_t (*)(int, const void*, size_t, Arguments...);
    return reinterpret_cast<Call>(originals_[kIndex])(fd, bytes, size, offset...);
  }

  sqlite3_vfs* unix_;
  static inline sqlite3_syscall_ptr originals_[3] = {};
  Hooked hooks_[3] = {
      {"pwrite", reinterpret_cast<sqlite3_syscall_ptr>(&Replacement<0, off_t>)},
      {"pwrite64", reinterpret_cast<sqlite3_syscall_ptr>(&Replacement<1, off_t>)},
      {"write", reinterpret_cast<sqlite3_syscall_ptr>(&Replacement<2>)},
  };
};

std::string RandomBytes(size_t size, std::mt19937& generator) {
  std::string bytes(size, '\0');
  for (char& c : bytes) c = static_cast<char>(generator() & 0xff);
  return bytes;
}

// The database file and its WAL, copied as a crash would leave them (no
// WAL index), opened on the default VFS: what a recovery finds on disk.
std::string StateAfterACrash(const std::string& file, const std::string& copy, const std::string& state_sql) {
  std::filesystem::copy_file(file, copy, std::filesystem::copy_options::overwrite_existing);
  std::filesystem::remove(copy + "-wal");
  std::filesystem::remove(copy + "-shm");
  if (std::filesystem::exists(file + "-wal")) std::filesystem::copy_file(file + "-wal", copy + "-wal");
  Connection recovered(copy, nullptr);
  return recovered.Text(state_sql);
}

constexpr const char* kState = "SELECT count(*) || ':' || coalesce(group_concat(hex(bytes), ','), '') FROM t";
constexpr const char* kSpillingSetup =
    "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA wal_autocheckpoint=0; PRAGMA cache_size=10;"
    "CREATE TABLE IF NOT EXISTS t(id INTEGER PRIMARY KEY, bytes BLOB)";

// Rows [first, last] of 3,000 random bytes each into `table`, as one
// statement.
std::string InsertRows(int first, int last, const std::string& table = "t") {
  return "WITH RECURSIVE n(i) AS (SELECT " + std::to_string(first) + " UNION ALL SELECT i+1 FROM n WHERE i<" +
         std::to_string(last) + ") INSERT INTO " + table + " SELECT i, randomblob(3000) FROM n";
}

TEST(SqliteWalVfsTest, IsRegisteredBesideTheDefault) {
  const char* name = SqliteWalVfsName();
  ASSERT_NE(name, nullptr);
  EXPECT_NE(sqlite3_vfs_find(name), nullptr);
  EXPECT_NE(sqlite3_vfs_find(nullptr), sqlite3_vfs_find(name)) << "it must not become the default";
}

// SQLITE_FCNTL_VFSNAME names every VFS of the stack, shims first: this
// one above the default it builds on, for the database file and its WAL.
TEST(SqliteWalVfsTest, ReportsItsOwnNameAboveTheDefaultVfsName) {
  TempDir dir;
  const std::string base_name = sqlite3_vfs_find(nullptr)->zName;
  Connection db(dir.path() + "/named.db", SqliteWalVfsName());
  db.Run(kSpillingSetup);
  db.Insert(1, "bytes");
  EXPECT_EQ(db.VfsNames(), std::string(SqliteWalVfsName()) + "/" + base_name);
  EXPECT_EQ(db.VfsNames(/*of_wal=*/true), std::string(SqliteWalVfsName()) + "/" + base_name);
  Connection plain(dir.path() + "/plain.db", nullptr);
  EXPECT_EQ(plain.VfsNames(), base_name) << "the default VFS's own files are not ours";
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
    WriteCallHook hook;
    db.Run("BEGIN");
    for (int64_t id = 1; id <= 4; ++id) db.Insert(id, RandomBytes(3000, generator));  // four pages or more
    db.Run("COMMIT");
    return WriteCallHook::calls;
  };
  EXPECT_EQ(writes_per_commit(SqliteWalVfsName(), dir.Join("batched.db")), 1);
  EXPECT_GE(writes_per_commit(nullptr, dir.Join("default.db")), 8) << "the measure itself is off";
}

// A full disk at the commit fails the commit, as on the default VFS: the
// commit's frames go out inside SQLite's write of its last one. Readers
// keep the state before it, and the next commit works.
TEST(SqliteWalVfsTest, AWriteFailingAtTheCommitFailsTheCommitAndLosesNothing) {
  TempDir dir;
  const std::string file = dir.Join("store.db");
  Connection writer(file, SqliteWalVfsName());
  writer.Run(kSpillingSetup);
  writer.Run("INSERT INTO t VALUES(1, x'01')");
  Connection reader(file, nullptr);
  const std::string before = reader.Text(kState);
  {
    WriteCallHook hook;
    writer.Run("BEGIN; " + InsertRows(10, 13));
    WriteCallHook::fail = true;
    EXPECT_EQ(writer.Try("COMMIT"), SQLITE_FULL);
    WriteCallHook::fail = false;
    writer.Try("ROLLBACK");
  }
  EXPECT_EQ(reader.Text(kState), before);
  EXPECT_EQ(StateAfterACrash(file, dir.Join("copy.db"), kState), before);
  writer.Run(InsertRows(20, 23));
  EXPECT_EQ(reader.Text("SELECT count(*) FROM t"), "5");
  EXPECT_EQ(reader.Text("PRAGMA integrity_check"), "ok");
}

// A transaction too big for SQLite's cache writes pages to the WAL before
// its commit. If it then rolls back, those frames must not go out later,
// over the frames another writer committed at the same place.
TEST(SqliteWalVfsTest, FramesOfARolledBackTransactionNeverLandOnAnotherWritersCommit) {
  TempDir dir;
  const std::string file = dir.Join("store.db");
  Connection first(file, SqliteWalVfsName());
  Connection second(file, SqliteWalVfsName());
  first.Run(kSpillingSetup);
  first.Run("INSERT INTO t VALUES(1, zeroblob(100)); PRAGMA wal_checkpoint(TRUNCATE)");
  first.Run("BEGIN; " + InsertRows(100, 130) + "; ROLLBACK");
  second.Run("BEGIN; " + InsertRows(200, 230) + "; COMMIT");
  EXPECT_EQ(first.Text("SELECT count(*) FROM t"), "32");  // anything held would go out now
  Connection reader(file, nullptr);
  EXPECT_EQ(reader.Text("PRAGMA integrity_check"), "ok");
  EXPECT_EQ(reader.Text("SELECT count(*) FROM t"), "32");
  EXPECT_EQ(StateAfterACrash(file, dir.Join("copy.db"), "SELECT count(*) FROM t"), "32");
}

// A commit that changes again a page it wrote to the WAL early makes SQLite
// rewrite that frame and then the checksums of the frames after it,
// commit frame included. Those rewrites go out before the commit is
// published: a writer that dies right after its COMMIT loses nothing, and
// nothing it held lands in a WAL that another connection restarted.
TEST(SqliteWalVfsTest, ACommitWhoseChecksumsAreRewrittenSurvivesTheWriterDying) {
  TempDir dir;
  const std::string file = dir.Join("store.db");
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    sqlite3* first = nullptr;
    sqlite3* second = nullptr;
    auto run = [](sqlite3* db, const std::string& sql) {
      return sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr);
    };
    int code = sqlite3_open_v2(file.c_str(), &first, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, SqliteWalVfsName());
    code |= run(first, kSpillingSetup);
    code |= sqlite3_open_v2(file.c_str(), &second, SQLITE_OPEN_READWRITE, SqliteWalVfsName());
    code |= run(first, "INSERT INTO t VALUES(1, zeroblob(100))");
    code |= run(first, "BEGIN; " + InsertRows(100, 160) +
                           "; UPDATE t SET bytes = randomblob(3000) WHERE id BETWEEN 100 AND 103; COMMIT");
    code |= run(second, "PRAGMA wal_checkpoint(RESTART)");
    code |= run(second, "BEGIN; " + InsertRows(300, 399) + "; COMMIT");
    code |= run(first, "SELECT count(*) FROM t");  // anything first held would go out now
    _exit(code == SQLITE_OK ? 0 : 1);             // dies without closing
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  Connection reader(file, nullptr);
  EXPECT_EQ(reader.Text("SELECT count(*) FROM t"), "162");
  EXPECT_EQ(reader.Text("PRAGMA integrity_check"), "ok");
}

// The WAL of an attached database pairs with its own database file: its
// commits are one write call too.
TEST(SqliteWalVfsTest, AnAttachedDatabasesCommitIsOneWriteCall) {
  TempDir dir;
  Connection db(dir.Join("main.db"), SqliteWalVfsName());
  db.Run("ATTACH '" + dir.Join("other.db") + "' AS other; PRAGMA other.journal_mode=WAL;"
         " PRAGMA other.synchronous=NORMAL; PRAGMA other.wal_autocheckpoint=0;"
         " CREATE TABLE other.t(id INTEGER PRIMARY KEY, bytes BLOB); INSERT INTO other.t VALUES(0, x'00')");
  WriteCallHook hook;
  db.Run("BEGIN; " + InsertRows(1, 4, "other.t") + "; COMMIT");
  EXPECT_EQ(WriteCallHook::calls, 1);
}

// With locking_mode=EXCLUSIVE SQLite keeps the WAL index in its own memory
// and takes no shared-memory locks: nothing is held, and every commit is
// on disk at once.
TEST(SqliteWalVfsTest, InExclusiveLockingModeEveryCommitIsOnDiskAtOnce) {
  TempDir dir;
  const std::string file = dir.Join("store.db");
  Connection writer(file, SqliteWalVfsName());
  writer.Run("PRAGMA locking_mode=EXCLUSIVE; " + std::string(kSpillingSetup));
  for (int round = 0; round < 5; ++round) {
    writer.Run("BEGIN; " + InsertRows(100 * round, 100 * round + 20));
    const std::string inside = writer.Text(kState);
    writer.Run("COMMIT");
    ASSERT_EQ(StateAfterACrash(file, dir.Join("copy.db"), kState), inside) << "round " << round;
  }
}

// With psow=0 and synchronous=FULL SQLite pads a commit to the disk's
// sector with copies of its last frame, each marked as a commit, and with
// journal_size_limit it truncates the WAL at a restart; a connection that
// leaves WAL mode and comes back opens a new WAL, which pairs again (one
// write call per commit). Every commit is on disk at once throughout.
TEST(SqliteWalVfsTest, PaddedCommitsTruncatedWalsAndAReopenedWalKeepEveryCommit) {
  TempDir dir;
  const std::string file = dir.Join("store.db");
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open_v2(("file:" + file + "?psow=0").c_str(), &raw,
                            SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_URI, SqliteWalVfsName()),
            SQLITE_OK);
  auto run = [&](const std::string& sql) {
    EXPECT_EQ(sqlite3_exec(raw, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK)
        << sql << ": " << sqlite3_errmsg(raw);
  };
  auto state = [&] {
    Connection reader(file, nullptr);
    return reader.Text(kState);
  };
  run("PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA journal_size_limit=0; PRAGMA wal_autocheckpoint=8;"
      "CREATE TABLE t(id INTEGER PRIMARY KEY, bytes BLOB)");
  for (int round = 0; round < 12; ++round) {
    run("BEGIN; " + InsertRows(10 * round, 10 * round + round % 4) + "; COMMIT");
    ASSERT_EQ(StateAfterACrash(file, dir.Join("copy.db"), kState), state()) << "round " << round;
  }
  run("PRAGMA journal_mode=DELETE; PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA wal_autocheckpoint=0");
  run("INSERT INTO t VALUES(1000, x'00')");
  {
    WriteCallHook hook;
    run("BEGIN; " + InsertRows(2000, 2003) + "; COMMIT");
    EXPECT_EQ(WriteCallHook::calls, 1) << "the reopened WAL did not pair with its database";
  }
  EXPECT_EQ(StateAfterACrash(file, dir.Join("copy.db"), kState), state());
  sqlite3_close_v2(raw);
}

// Every commit is seen at once, and whole, by a connection of the default
// VFS (another program, or a process without this VFS), and is on disk
// (a copy of the files as a crash would leave them holds it): at NORMAL,
// where no sync makes the frames go out, through WAL restarts (a
// checkpoint every few pages), rolled-back transactions, and transactions
// larger than the VFS holds back and than SQLite's cache (whose pages
// spill into the WAL before the commit and are read back and rewritten
// there). Page sizes at both ends of SQLite's range and its default.
class SqliteWalVfsPageSizeTest : public ::testing::TestWithParam<int> {};

TEST_P(SqliteWalVfsPageSizeTest, EveryCommitIsSeenWholeByTheDefaultVfsAndIsOnDisk) {
  TempDir dir;
  const std::string file = dir.Join("store.db");
  Connection writer(file, SqliteWalVfsName());
  writer.Run("PRAGMA page_size=" + std::to_string(GetParam()) +
             "; PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA wal_autocheckpoint=20;"
             " PRAGMA cache_size=-256; CREATE TABLE t(id INTEGER PRIMARY KEY, bytes BLOB)");
  Connection reader(file, nullptr);
  std::mt19937 generator(GetParam());
  std::string committed = writer.Text(kState);
  for (int round = 0; round < 60; ++round) {
    const bool large = round % 20 == 7;  // 1.2 MB: past what is held back and past the cache
    const bool rolled_back = round % 9 == 4;
    writer.Run("BEGIN");
    const int rows = large ? 200 : 1 + round % 5;
    for (int i = 0; i < rows; ++i) {
      const int64_t id = (round * 37 + i * 101) % 700;  // new rows and replaced ones
      writer.Insert(id, RandomBytes(large ? 6000 : 100 + (round * 131 + i * 17) % 5000, generator));
    }
    if (large) writer.Run("UPDATE t SET bytes = bytes || x'00' WHERE id % 3 = 0");  // pages written twice
    const std::string inside = writer.Text(kState);
    writer.Run(rolled_back ? "ROLLBACK" : "COMMIT");
    if (!rolled_back) committed = inside;
    if (round % 10 == 9) {
      writer.Run(round % 20 == 9 ? "PRAGMA wal_checkpoint(TRUNCATE)" : "PRAGMA wal_checkpoint(RESTART)");
    }
    // The writer does nothing more before these (a read of its own would
    // make it write what it might still hold).
    ASSERT_EQ(StateAfterACrash(file, dir.Join("copy.db"), kState), committed) << "round " << round;
    ASSERT_EQ(reader.Text(kState), committed) << "round " << round;
  }
  EXPECT_EQ(reader.Text("PRAGMA integrity_check"), "ok");
  EXPECT_EQ(writer.Text("PRAGMA integrity_check"), "ok");
}

INSTANTIATE_TEST_SUITE_P(PageSizes, SqliteWalVfsPageSizeTest, ::testing::Values(512, 4096, 65536),
                         [](const ::testing::TestParamInfo<int>& param) {
                           return "Page" + std::to_string(param.param);
                         });

}  // namespace
}  // namespace toolvfs
