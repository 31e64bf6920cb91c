#include "project/sql/sqlite_database.h"

#include <utility>

#include "core/text.h"

namespace toolvfs {
namespace {

// How long a call waits for another connection's write lock (another
// process writing the same file) before it fails with Timeout.
constexpr int kBusyTimeoutMs = 10'000;

}  // namespace

Status SqliteStatus(int code, std::string_view what, std::string_view detail) {
  std::string message(what);
  message += ": ";
  message += detail.empty() ? std::string_view(sqlite3_errstr(code)) : detail;
  switch (code & 0xff) {
    case SQLITE_FULL:
      return ResourceExhaustedError(message + " (the disk is full)");
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return TimeoutError(message + " (another program held the store's write lock for more than " +
                          std::to_string(kBusyTimeoutMs / 1000) + " s)");
    case SQLITE_READONLY:
    case SQLITE_PERM:
    case SQLITE_AUTH:
      return PermissionDeniedError(std::move(message));
    case SQLITE_NOTADB:
      return IoError(message + " (the file is not a SQLite database)");
    case SQLITE_CORRUPT:
      return IoError(message + " (the database file is corrupt)");
    case SQLITE_CONSTRAINT:
    case SQLITE_MISUSE:
    case SQLITE_RANGE:
      return InternalError(std::move(message));
    case SQLITE_TOOBIG:
      return TooLargeError(std::move(message));
    case SQLITE_NOMEM:
      return ResourceExhaustedError(std::move(message));
    default:
      return IoError(std::move(message));
  }
}

// ----- SqliteStatement ------------------------------------------------------

SqliteStatement::~SqliteStatement() {
  if (statement_ == nullptr) return;
  sqlite3_reset(statement_);
  sqlite3_clear_bindings(statement_);
}

SqliteStatement& SqliteStatement::Bind(int index, int64_t value) {
  sqlite3_bind_int64(statement_, index, value);
  return *this;
}

namespace {
// A zero-length value, not NULL, for empty text or bytes: SQLite binds NULL
// for a null data pointer, which an empty string_view may have.
const char* NonNullData(std::string_view bytes) {
  static const char kEmpty = 0;
  return bytes.data() != nullptr ? bytes.data() : &kEmpty;
}
}  // namespace

SqliteStatement& SqliteStatement::Bind(int index, std::string_view text) {
  // SQLITE_STATIC: the caller's bytes outlive the step (every caller binds
  // and steps within one scope); SQLite does not copy them.
  sqlite3_bind_text64(statement_, index, NonNullData(text), text.size(), SQLITE_STATIC, SQLITE_UTF8);
  return *this;
}

SqliteStatement& SqliteStatement::BindBlob(int index, std::string_view bytes) {
  sqlite3_bind_blob64(statement_, index, NonNullData(bytes), bytes.size(), SQLITE_STATIC);
  return *this;
}

SqliteStatement& SqliteStatement::BindNull(int index) {
  sqlite3_bind_null(statement_, index);
  return *this;
}

Result<bool> SqliteStatement::Step() {
  int code = sqlite3_step(statement_);
  if (code == SQLITE_ROW) return true;
  if (code == SQLITE_DONE) return false;
  return connection_->LastError("Cannot use the store " + Quote(connection_->display()));
}

Status SqliteStatement::Run() {
  while (true) {
    TOOLVFS_ASSIGN_OR_RETURN(bool row, Step());
    if (!row) return OkStatus();
  }
}

bool SqliteStatement::IsNull(int column) const {
  return sqlite3_column_type(statement_, column) == SQLITE_NULL;
}

int64_t SqliteStatement::Int(int column) const { return sqlite3_column_int64(statement_, column); }

std::optional<int64_t> SqliteStatement::OptionalInt(int column) const {
  if (IsNull(column)) return std::nullopt;
  return Int(column);
}

std::string_view SqliteStatement::Text(int column) const {
  const unsigned char* text = sqlite3_column_text(statement_, column);
  int size = sqlite3_column_bytes(statement_, column);
  if (text == nullptr) return {};
  return std::string_view(reinterpret_cast<const char*>(text), static_cast<size_t>(size));
}

std::string_view SqliteStatement::Blob(int column) const {
  const void* blob = sqlite3_column_blob(statement_, column);
  int size = sqlite3_column_bytes(statement_, column);
  if (blob == nullptr) return {};
  return std::string_view(static_cast<const char*>(blob), static_cast<size_t>(size));
}

// ----- SqliteConnection -----------------------------------------------------

Result<std::unique_ptr<SqliteConnection>> SqliteConnection::Open(const std::string& file, bool create,
                                                                 bool read_only, bool sync_writes,
                                                                 std::string display) {
  int flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE;
  flags |= read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE;
  if (create && !read_only) flags |= SQLITE_OPEN_CREATE;
  sqlite3* database = nullptr;
  int code = sqlite3_open_v2(file.c_str(), &database, flags, nullptr);
  if (code != SQLITE_OK) {
    std::string detail = database != nullptr ? sqlite3_errmsg(database) : sqlite3_errstr(code);
    sqlite3_close_v2(database);
    return SqliteStatus(code, "Cannot open the store " + Quote(display), detail);
  }
  std::unique_ptr<SqliteConnection> connection(new SqliteConnection(database, std::move(display)));
  sqlite3_busy_timeout(database, kBusyTimeoutMs);
  sqlite3_extended_result_codes(database, 1);
  TOOLVFS_RETURN_IF_ERROR(connection->Execute(sync_writes ? "PRAGMA synchronous=FULL"
                                                          : "PRAGMA synchronous=NORMAL"));
  // Reads through a memory map instead of read() into SQLite's own page
  // cache: a read of a small file touches two B-trees, and with 2 MiB of
  // cache they missed twice as often as a one-table store (store_bench).
  // The map is address space, not memory: pages stay in the page cache.
  TOOLVFS_RETURN_IF_ERROR(connection->Execute("PRAGMA mmap_size=268435456"));
  return connection;
}

SqliteConnection::~SqliteConnection() {
  for (auto& [sql, statement] : statements_) sqlite3_finalize(statement);
  sqlite3_close_v2(database_);
}

Result<SqliteStatement> SqliteConnection::Prepare(const char* sql) {
  auto cached = statements_.find(sql);
  if (cached != statements_.end()) return SqliteStatement(*this, cached->second);
  sqlite3_stmt* statement = nullptr;
  int code = sqlite3_prepare_v3(database_, sql, -1, SQLITE_PREPARE_PERSISTENT, &statement, nullptr);
  if (code != SQLITE_OK) {
    return SqliteStatus(code, "Cannot use the store " + Quote(display_), sqlite3_errmsg(database_));
  }
  statements_.emplace(sql, statement);
  return SqliteStatement(*this, statement);
}

Status SqliteConnection::Execute(const char* sql) {
  char* error = nullptr;
  int code = sqlite3_exec(database_, sql, nullptr, nullptr, &error);
  if (code == SQLITE_OK) return OkStatus();
  std::string detail = error != nullptr ? error : sqlite3_errstr(code);
  sqlite3_free(error);
  return SqliteStatus(sqlite3_extended_errcode(database_), "Cannot use the store " + Quote(display_),
                      detail);
}

Status SqliteConnection::LastError(std::string_view what) const {
  return SqliteStatus(sqlite3_extended_errcode(database_), what, sqlite3_errmsg(database_));
}

// ----- SqliteTransaction ----------------------------------------------------

// BEGIN, COMMIT and ROLLBACK run as cached prepared statements: through
// sqlite3_exec they were parsed again on every call, 39 % of a small
// read's instructions (store_bench).
namespace {
Status RunCached(SqliteConnection& connection, const char* sql) {
  TOOLVFS_ASSIGN_OR_RETURN(SqliteStatement statement, connection.Prepare(sql));
  return statement.Run();
}
}  // namespace

Result<SqliteTransaction> SqliteTransaction::Begin(SqliteConnection& connection, Kind kind) {
  TOOLVFS_RETURN_IF_ERROR(RunCached(connection, kind == Kind::kWrite ? "BEGIN IMMEDIATE" : "BEGIN"));
  return SqliteTransaction(connection);
}

SqliteTransaction::~SqliteTransaction() {
  if (connection_ == nullptr) return;
  // A failed statement may have rolled back already; ROLLBACK then fails
  // harmlessly, and there is nothing else to do with its error.
  if (!sqlite3_get_autocommit(connection_->handle())) (void)RunCached(*connection_, "ROLLBACK");
}

Status SqliteTransaction::Commit() {
  SqliteConnection* connection = connection_;
  Status status = RunCached(*connection, "COMMIT");
  if (status.ok()) connection_ = nullptr;
  return status;
}

}  // namespace toolvfs
