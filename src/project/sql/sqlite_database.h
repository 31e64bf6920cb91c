// A thin RAII layer over SQLite's C API: a connection that owns its cached
// prepared statements, a statement lease that resets the statement when it
// goes out of scope, and a transaction guard that rolls back unless
// committed. Every SQLite result code becomes a Status here, in one place
// (SqliteStatus), so the store above never sees an int return code.
//
// Why our own layer and not SQLiteCpp: it is a few hundred lines, it maps
// errors straight to our status codes with the file's name in the message,
// and it keeps statements prepared once per connection, which is where the
// small-file speed of the store comes from.
//
// Threading: a connection is used by one thread at a time (the store keeps
// a pool and lends each connection to one call).
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"

namespace toolvfs {

// The Status for SQLite result code `code` (an extended code or a primary
// one) with the message "<what>: <SQLite's explanation>". Full disk is
// ResourceExhausted, a busy database after the busy timeout Timeout, a
// read-only file PermissionDenied, a corrupt file or one that is not a
// database Io, a constraint Internal (it is a bug of ours); the rest Io.
Status SqliteStatus(int code, std::string_view what, std::string_view detail = {});

class SqliteConnection;

// A prepared statement lent by a connection. Binding indexes are 1-based as
// in SQLite. The lease resets the statement and clears its bindings when
// destroyed, so the next user of the cached statement starts fresh.
class SqliteStatement {
 public:
  SqliteStatement(SqliteConnection& connection, sqlite3_stmt* statement)
      : connection_(&connection), statement_(statement) {}
  SqliteStatement(const SqliteStatement&) = delete;
  SqliteStatement& operator=(const SqliteStatement&) = delete;
  SqliteStatement(SqliteStatement&& other) noexcept
      : connection_(other.connection_), statement_(other.statement_) {
    other.statement_ = nullptr;
  }
  SqliteStatement& operator=(SqliteStatement&&) = delete;
  ~SqliteStatement();

  SqliteStatement& Bind(int index, int64_t value);
  SqliteStatement& Bind(int index, std::string_view text);  // as TEXT
  SqliteStatement& BindBlob(int index, std::string_view bytes);
  SqliteStatement& BindNull(int index);
  SqliteStatement& Bind(int index, std::optional<int64_t> value) {
    return value ? Bind(index, *value) : BindNull(index);
  }

  // Runs the statement to its next row: true with a row to read, false when
  // it is done. An error names what the connection was doing.
  Result<bool> Step();
  // Runs a statement that returns no row (or whose rows are not needed).
  Status Run();

  bool IsNull(int column) const;
  int64_t Int(int column) const;
  std::optional<int64_t> OptionalInt(int column) const;
  // TEXT or BLOB bytes, valid until the next Step or the end of the lease.
  std::string_view Text(int column) const;
  std::string_view Blob(int column) const;

 private:
  SqliteConnection* connection_;
  sqlite3_stmt* statement_;
};

class SqliteConnection {
 public:
  // Opens `file` (created if `create`), applies the connection settings:
  // busy timeout, synchronous=FULL or NORMAL. `display` names the file in
  // every message. The caller sets journal_mode once per file.
  static Result<std::unique_ptr<SqliteConnection>> Open(const std::string& file, bool create,
                                                        bool read_only, bool sync_writes,
                                                        std::string display);
  SqliteConnection(const SqliteConnection&) = delete;
  SqliteConnection& operator=(const SqliteConnection&) = delete;
  ~SqliteConnection();

  // The cached statement for `sql` (a string literal: the cache is keyed by
  // its address), prepared on first use.
  Result<SqliteStatement> Prepare(const char* sql);

  // Runs one or more statements without results (schema, pragmas).
  Status Execute(const char* sql);

  // The error of the last call on this connection, as SqliteStatus does.
  Status LastError(std::string_view what) const;

  const std::string& display() const { return display_; }
  sqlite3* handle() const { return database_; }

 private:
  SqliteConnection(sqlite3* database, std::string display)
      : database_(database), display_(std::move(display)) {}

  sqlite3* database_;
  std::string display_;
  std::map<const char*, sqlite3_stmt*> statements_;
};

// BEGIN (deferred, for a consistent read of several statements) or BEGIN
// IMMEDIATE (a write: takes the write lock at once, so two writers never
// deadlock upgrading from read to write); ROLLBACK when destroyed unless
// Commit() succeeded.
class SqliteTransaction {
 public:
  enum class Kind { kRead, kWrite };
  static Result<SqliteTransaction> Begin(SqliteConnection& connection, Kind kind);
  SqliteTransaction(SqliteTransaction&& other) noexcept : connection_(other.connection_) {
    other.connection_ = nullptr;
  }
  SqliteTransaction& operator=(SqliteTransaction&&) = delete;
  SqliteTransaction(const SqliteTransaction&) = delete;
  ~SqliteTransaction();

  Status Commit();

 private:
  explicit SqliteTransaction(SqliteConnection& connection) : connection_(&connection) {}
  SqliteConnection* connection_;
};

}  // namespace toolvfs
