// The SQLite engine of the SQL stores (sql_connection.h): a thin RAII layer
// over SQLite's C API. A connection owns its cached prepared statements
// (prepared once, SQLITE_PREPARE_PERSISTENT); transactions are BEGIN
// (reads) and BEGIN IMMEDIATE (writes: the write lock at once, so two
// writers never deadlock upgrading from read to write); every SQLite
// result code becomes a Status in one place (SqliteStatus).
//
// Why our own layer and not SQLiteCpp: it is a few hundred lines, it maps
// errors straight to our status codes with the file's name in the message,
// and it keeps statements prepared once per connection, which is where the
// small-file speed of the store comes from.
//
// Threading: a connection is used by one thread at a time; SqliteDatabase
// lends connections to any thread.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "project/sql/sql_connection.h"

namespace toolvfs {

// The Status for SQLite result code `code` (an extended code or a primary
// one) with the message "<what>: <SQLite's explanation>". Full disk is
// ResourceExhausted, a busy database after the busy timeout Timeout, a
// read-only file PermissionDenied, a corrupt file or one that is not a
// database Io, a constraint Internal (it is a bug of ours); the rest Io.
Status SqliteStatus(int code, std::string_view what, std::string_view detail = {});

// SQLite's spelling of the shared schema.
const SqlDialect& SqliteDialect();

class SqliteConnection final : public SqlConnection {
 public:
  // Opens `file` (created if `create`), applies the connection settings:
  // busy timeout, synchronous=FULL or NORMAL, a memory map for reads.
  // `display` names the file in every message. SqliteDatabase sets the
  // per-file settings (WAL, auto-vacuum) once.
  static Result<std::unique_ptr<SqliteConnection>> Open(const std::string& file, bool create, bool read_only,
                                                        bool sync_writes, std::string display);
  SqliteConnection(const SqliteConnection&) = delete;
  SqliteConnection& operator=(const SqliteConnection&) = delete;
  ~SqliteConnection() override;

  Result<SqlStatement> Prepare(const char* sql) override;
  Status Execute(std::string_view sql) override;
  Status Begin(SqlTransactionKind kind) override;
  Status Commit() override;
  void Rollback() override;
  Result<bool> HasTable(std::string_view name) override;
  Result<bool> HasAnyTable() override;
  const SqlDialect& dialect() const override { return SqliteDialect(); }
  const std::string& display() const override { return display_; }

  // The error of the last call on this connection, as SqliteStatus does.
  Status LastError(std::string_view what) const;
  sqlite3* handle() const { return database_; }

 private:
  class Cursor;
  SqliteConnection(sqlite3* database, std::string display);
  Status RunCached(const char* sql);

  sqlite3* database_;
  std::string display_;
  std::map<const char*, std::unique_ptr<Cursor>> statements_;
};

// A store file: its connections, lent one operation at a time, so reads
// run in parallel (WAL lets readers go on while one connection writes).
class SqliteDatabase final : public SqlDatabase {
 public:
  // Opens `file` (created if `create`; else it must exist), sets WAL and
  // incremental auto-vacuum, and returns the database with that first
  // connection kept. The schema is not looked at here (PrepareSqliteSchema).
  static Result<std::unique_ptr<SqliteDatabase>> Open(const std::string& file, bool create, bool sync_writes,
                                                      std::string display);

  Result<SqlLease> Connect() override;
  // One write transaction of this process on the file at a time: every
  // SqliteDatabase open on the file in this process (one per store handle:
  // sessions, copies, grep trees of other workspaces) takes the file's
  // write turn before it asks SQLite for the write lock. Without it they
  // met only at the lock, each polling for it on the busy handler's
  // schedule, and a writer could miss every turn for the whole busy
  // timeout and fail with Timeout while the others went on.
  Status RunWriteTransaction(const std::function<Status(SqlConnection&)>& body) override;
  Status Compact() override;
  uint64_t StorageBytes() override;
  const std::string& display() const override { return display_; }

 protected:
  void GiveBack(std::unique_ptr<SqlConnection> connection) override;

 private:
  SqliteDatabase(std::string file, std::string display, bool sync_writes)
      : file_(std::move(file)), display_(std::move(display)), sync_writes_(sync_writes) {}

  // Idle connections kept: enough for grep's threads; more are closed.
  static constexpr size_t kMaxIdle = 16;

  const std::string file_;
  const std::string display_;
  const bool sync_writes_;
  std::shared_ptr<std::mutex> write_turn_;  // the file's, shared in this process (RunWriteTransaction)
  std::mutex mutex_;
  std::vector<std::unique_ptr<SqlConnection>> idle_;
};

// How many times a connection of this process paused for another's write
// lock on its file (SQLite's busy handler): another process writing, or a
// lock taken outside RunWriteTransaction. What tests see turns by.
uint64_t SqliteBusyWaits();

}  // namespace toolvfs
