#include "project/sql/sqlite_database.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <atomic>
#include <chrono>
#include <iterator>
#include <map>
#include <thread>
#include <utility>

#include "core/text.h"
#include "project/sql/sqlite_wal_vfs.h"

namespace toolvfs {
namespace {

// How long a call waits for another connection's write lock (another
// process writing the same file) before it fails with Timeout.
constexpr int kBusyTimeoutMs = 10'000;

std::atomic<uint64_t> busy_waits{0};

// SQLite's busy handler: whether to try the lock again after a pause,
// with SQLite's own schedule (sqliteDefaultBusyCallback: 1, 2, 5, 10, 15,
// 20, 25, 25, 25, 50, 50, then 100 ms) up to kBusyTimeoutMs in all, each
// pause counted (SqliteBusyWaits). `count` is the number of calls so far
// for this lock.
int WaitForTheLock(void*, int count) {
  static constexpr int kPausesMs[] = {1, 2, 5, 10, 15, 20, 25, 25, 25, 50, 50, 100};
  static constexpr int kPauses = static_cast<int>(std::size(kPausesMs));
  int waited = 0;
  for (int i = 0; i < std::min(count, kPauses); ++i) waited += kPausesMs[i];
  if (count > kPauses) waited += (count - kPauses) * kPausesMs[kPauses - 1];
  const int pause = std::min(kPausesMs[std::min(count, kPauses - 1)], kBusyTimeoutMs - waited);
  if (pause <= 0) return 0;
  busy_waits.fetch_add(1, std::memory_order_relaxed);
  std::this_thread::sleep_for(std::chrono::milliseconds(pause));
  return 1;
}

// The write turn of `file` in this process, shared by every SqliteDatabase
// open on it (by device and inode, so that two spellings of one path meet),
// as long as one is open.
std::shared_ptr<std::mutex> WriteTurnOf(const std::string& file) {
  struct stat info;
  if (::stat(file.c_str(), &info) != 0) return std::make_shared<std::mutex>();  // opened, so rare: a turn of its own
  static std::mutex registry_mutex;
  static std::map<std::pair<dev_t, ino_t>, std::weak_ptr<std::mutex>> registry;
  std::lock_guard lock(registry_mutex);
  std::weak_ptr<std::mutex>& entry = registry[{info.st_dev, info.st_ino}];
  std::shared_ptr<std::mutex> turn = entry.lock();
  if (!turn) {
    turn = std::make_shared<std::mutex>();
    entry = turn;
  }
  // Forget the files no longer open, so the registry stays as small as
  // what is open.
  std::erase_if(registry, [](const auto& item) { return item.second.expired(); });
  return turn;
}

}  // namespace

uint64_t SqliteBusyWaits() { return busy_waits.load(std::memory_order_relaxed); }

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

// ----- The cursor -------------------------------------------------------------

namespace {
// A zero-length value, not NULL, for empty text or bytes: SQLite binds NULL
// for a null data pointer, which an empty string_view may have.
const char* NonNullData(std::string_view bytes) {
  static const char kEmpty = 0;
  return bytes.data() != nullptr ? bytes.data() : &kEmpty;
}
}  // namespace

class SqliteConnection::Cursor final : public SqlCursor {
 public:
  Cursor(SqliteConnection& connection, sqlite3_stmt* statement)
      : connection_(connection), statement_(statement) {}
  Cursor(const Cursor&) = delete;
  Cursor& operator=(const Cursor&) = delete;
  ~Cursor() override { sqlite3_finalize(statement_); }

  void BindInt(int index, int64_t value) override { sqlite3_bind_int64(statement_, index, value); }
  // SQLITE_STATIC: the caller's bytes outlive the step (the contract of
  // SqlCursor); SQLite does not copy them.
  void BindText(int index, std::string_view text) override {
    sqlite3_bind_text64(statement_, index, NonNullData(text), text.size(), SQLITE_STATIC, SQLITE_UTF8);
  }
  void BindBytes(int index, std::string_view bytes) override {
    sqlite3_bind_blob64(statement_, index, NonNullData(bytes), bytes.size(), SQLITE_STATIC);
  }
  void BindNull(int index) override { sqlite3_bind_null(statement_, index); }

  Result<bool> Step() override {
    int code = sqlite3_step(statement_);
    if (code == SQLITE_ROW) return true;
    if (code == SQLITE_DONE) return false;
    return StepError();
  }

  Status ForEachIntTextRow(IntTextRowVisitor& visitor) override {
    while (true) {
      const int code = sqlite3_step(statement_);
      if (code != SQLITE_ROW) return code == SQLITE_DONE ? OkStatus() : StepError();
      const unsigned char* text = sqlite3_column_text(statement_, 1);
      const int size = sqlite3_column_bytes(statement_, 1);
      const std::string_view view =
          text == nullptr ? std::string_view()
                          : std::string_view(reinterpret_cast<const char*>(text), static_cast<size_t>(size));
      visitor.Row(sqlite3_column_int64(statement_, 0), view);
    }
  }

  bool IsNull(int column) const override { return sqlite3_column_type(statement_, column) == SQLITE_NULL; }
  int64_t Int(int column) const override { return sqlite3_column_int64(statement_, column); }
  std::string_view Text(int column) const override {
    const unsigned char* text = sqlite3_column_text(statement_, column);
    int size = sqlite3_column_bytes(statement_, column);
    if (text == nullptr) return {};
    return std::string_view(reinterpret_cast<const char*>(text), static_cast<size_t>(size));
  }
  std::string_view Bytes(int column) const override {
    const void* blob = sqlite3_column_blob(statement_, column);
    int size = sqlite3_column_bytes(statement_, column);
    if (blob == nullptr) return {};
    return std::string_view(static_cast<const char*>(blob), static_cast<size_t>(size));
  }
  void Reset() override {
    sqlite3_reset(statement_);
    sqlite3_clear_bindings(statement_);
  }

 private:
  // A step that ended with neither a row nor the end: the store named.
  Status StepError() const { return connection_.LastError("Cannot use the store " + Quote(connection_.display())); }

  SqliteConnection& connection_;
  sqlite3_stmt* statement_;
};

const SqlDialect& SqliteDialect() {
  static const SqlDialect kDialect{
      .blob_type = "BLOB",
      .key_text_type = "TEXT",  // BINARY collation: memcmp, the bytewise order listings promise
      .integer_type = "INTEGER",
      .identity_key = "INTEGER PRIMARY KEY",
      .never_reused_key = "INTEGER PRIMARY KEY AUTOINCREMENT",
      .clustered_suffix = " WITHOUT ROWID",
      .list_by_generation = true,
  };
  return kDialect;
}

// ----- SqliteConnection -----------------------------------------------------

SqliteConnection::SqliteConnection(sqlite3* database, std::string display)
    : database_(database), display_(std::move(display)) {}

Result<std::unique_ptr<SqliteConnection>> SqliteConnection::Open(const std::string& file, bool create,
                                                                 bool read_only, bool sync_writes,
                                                                 std::string display) {
  int flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE;
  flags |= read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE;
  if (create && !read_only) flags |= SQLITE_OPEN_CREATE;
  sqlite3* database = nullptr;
  int code = sqlite3_open_v2(file.c_str(), &database, flags, SqliteWalVfsName());
  if (code != SQLITE_OK) {
    std::string detail = database != nullptr ? sqlite3_errmsg(database) : sqlite3_errstr(code);
    sqlite3_close_v2(database);
    return SqliteStatus(code, "Cannot open the store " + Quote(display), detail);
  }
  std::unique_ptr<SqliteConnection> connection(new SqliteConnection(database, std::move(display)));
  sqlite3_busy_handler(database, WaitForTheLock, nullptr);
  sqlite3_extended_result_codes(database, 1);
  TOOLVFS_RETURN_IF_ERROR(connection->Execute(sync_writes ? "PRAGMA synchronous=FULL"
                                                          : "PRAGMA synchronous=NORMAL"));
  // Reads through a memory map instead of read() into SQLite's own page
  // cache: a read of a small file touches two B-trees, and with 2 MiB of
  // cache they missed twice as often as a one-table store (store_bench).
  // The map is address space, not memory: pages stay in the page cache.
  TOOLVFS_RETURN_IF_ERROR(connection->Execute("PRAGMA mmap_size=268435456"));
  // A checkpoint every 4,000 WAL pages (16 MiB) instead of 1,000: a page
  // that many writes dirty (a directory's entries, the last page of
  // contents) is copied into the file once per checkpoint, so this writes
  // it a quarter as often (store_bench). 4,000 frames still fit the first
  // block of the WAL index (4,096), where a read looks a page up.
  TOOLVFS_RETURN_IF_ERROR(connection->Execute("PRAGMA wal_autocheckpoint=4000"));
  // The live listing has no ORDER BY and relies on SQLite reading the
  // entries key forward (kListLiveChildrenByGeneration); a library built
  // with SQLITE_REVERSE_UNORDERED_SELECTS would read it backward.
  TOOLVFS_RETURN_IF_ERROR(connection->Execute("PRAGMA reverse_unordered_selects=0"));
  return connection;
}

SqliteConnection::~SqliteConnection() {
  statements_.clear();  // finalized before the connection closes
  sqlite3_close_v2(database_);
}

Result<SqlStatement> SqliteConnection::Prepare(const char* sql) {
  auto cached = statements_.find(sql);
  if (cached != statements_.end()) return SqlStatement(*cached->second);
  sqlite3_stmt* statement = nullptr;
  int code = sqlite3_prepare_v3(database_, sql, -1, SQLITE_PREPARE_PERSISTENT, &statement, nullptr);
  if (code != SQLITE_OK) {
    return SqliteStatus(code, "Cannot use the store " + Quote(display_), sqlite3_errmsg(database_));
  }
  auto cursor = std::make_unique<Cursor>(*this, statement);
  Cursor& kept = *cursor;
  statements_.emplace(sql, std::move(cursor));
  return SqlStatement(kept);
}

Status SqliteConnection::Execute(std::string_view sql) {
  const std::string text(sql);
  char* error = nullptr;
  int code = sqlite3_exec(database_, text.c_str(), nullptr, nullptr, &error);
  if (code == SQLITE_OK) return OkStatus();
  std::string detail = error != nullptr ? error : sqlite3_errstr(code);
  sqlite3_free(error);
  return SqliteStatus(sqlite3_extended_errcode(database_), "Cannot use the store " + Quote(display_),
                      detail);
}

Status SqliteConnection::LastError(std::string_view what) const {
  return SqliteStatus(sqlite3_extended_errcode(database_), what, sqlite3_errmsg(database_));
}

// BEGIN, COMMIT and ROLLBACK run as cached prepared statements: through
// sqlite3_exec they were parsed again on every call, 39 % of a small
// read's instructions (store_bench).
Status SqliteConnection::RunCached(const char* sql) {
  TOOLVFS_ASSIGN_OR_RETURN(SqlStatement statement, Prepare(sql));
  return statement.Run();
}

Status SqliteConnection::Begin(SqlTransactionKind kind) {
  return RunCached(kind == SqlTransactionKind::kWrite ? "BEGIN IMMEDIATE" : "BEGIN");
}

Status SqliteConnection::Commit() { return RunCached("COMMIT"); }

void SqliteConnection::Rollback() {
  // A failed statement may have rolled back already; then there is nothing
  // to do, and nothing to do with ROLLBACK's own error either.
  if (!sqlite3_get_autocommit(database_)) (void)RunCached("ROLLBACK");
}

Result<bool> SqliteConnection::HasTable(std::string_view name) {
  TOOLVFS_ASSIGN_OR_RETURN(SqlStatement statement,
                           Prepare("SELECT 1 FROM sqlite_schema WHERE type='table' AND name=?1"));
  statement.Bind(1, name);
  return statement.Step();
}

Result<bool> SqliteConnection::HasAnyTable() {
  TOOLVFS_ASSIGN_OR_RETURN(SqlStatement statement, Prepare("SELECT 1 FROM sqlite_schema LIMIT 1"));
  return statement.Step();
}

// ----- SqliteDatabase ---------------------------------------------------------

Result<std::unique_ptr<SqliteDatabase>> SqliteDatabase::Open(const std::string& file, bool create,
                                                             bool sync_writes, std::string display) {
  if (!create) {
    struct stat info;
    if (::stat(file.c_str(), &info) != 0) {
      if (errno == ENOENT) return NotFoundError("The store file " + Quote(file) + " does not exist");
      return ErrnoToStatus(errno, "Cannot open the store " + Quote(file));
    }
  }
  TOOLVFS_ASSIGN_OR_RETURN(std::unique_ptr<SqliteConnection> connection,
                           SqliteConnection::Open(file, create, /*read_only=*/false, sync_writes, display));
  // No auto-vacuum (SQLite's default, said for the reader): with it, every
  // page a write adds or frees also dirtied a pointer-map page, a WAL frame
  // more per few writes. Freed pages go to the free list, and later writes
  // reuse them; `workspace gc` gives them back to the file system
  // (Compact). Files made before schema version 4 keep their incremental
  // auto-vacuum (it is chosen when the first table is made).
  TOOLVFS_RETURN_IF_ERROR(connection->Execute("PRAGMA auto_vacuum=NONE"));
  TOOLVFS_RETURN_IF_ERROR(connection->Execute("PRAGMA journal_mode=WAL"));
  std::unique_ptr<SqliteDatabase> database(new SqliteDatabase(file, std::move(display), sync_writes));
  database->write_turn_ = WriteTurnOf(file);
  database->idle_.push_back(std::move(connection));
  return database;
}

Status SqliteDatabase::RunWriteTransaction(const std::function<Status(SqlConnection&)>& body) {
  std::lock_guard turn(*write_turn_);
  return SqlDatabase::RunWriteTransaction(body);
}

Result<SqlLease> SqliteDatabase::Connect() {
  {
    std::lock_guard lock(mutex_);
    if (!idle_.empty()) {
      std::unique_ptr<SqlConnection> connection = std::move(idle_.back());
      idle_.pop_back();
      return SqlLease(*this, std::move(connection));
    }
  }
  TOOLVFS_ASSIGN_OR_RETURN(std::unique_ptr<SqliteConnection> connection,
                           SqliteConnection::Open(file_, /*create=*/false, /*read_only=*/false, sync_writes_,
                                                  display_));
  return SqlLease(*this, std::move(connection));
}

void SqliteDatabase::GiveBack(std::unique_ptr<SqlConnection> connection) {
  std::lock_guard lock(mutex_);
  if (idle_.size() < kMaxIdle) idle_.push_back(std::move(connection));
}

namespace {

Result<int64_t> PragmaValue(SqlConnection& connection, const char* pragma) {
  TOOLVFS_ASSIGN_OR_RETURN(SqlStatement statement, connection.Prepare(pragma));
  TOOLVFS_ASSIGN_OR_RETURN(bool row, statement.Step());
  return row ? statement.Int(0) : 0;
}

}  // namespace

// A file with incremental auto-vacuum (made before schema version 4)
// gives its free pages back cheaply. Any other is rewritten by VACUUM,
// which costs the whole file, so only when at least a quarter of it is
// free; with less, the free pages are left for later writes.
Status SqliteDatabase::Compact() {
  TOOLVFS_ASSIGN_OR_RETURN(SqlLease connection, Connect());
  constexpr int64_t kIncrementalAutoVacuum = 2;
  TOOLVFS_ASSIGN_OR_RETURN(int64_t auto_vacuum, PragmaValue(*connection, "PRAGMA auto_vacuum"));
  if (auto_vacuum == kIncrementalAutoVacuum) {
    TOOLVFS_RETURN_IF_ERROR(connection->Execute("PRAGMA incremental_vacuum"));
  } else {
    TOOLVFS_ASSIGN_OR_RETURN(int64_t free_pages, PragmaValue(*connection, "PRAGMA freelist_count"));
    TOOLVFS_ASSIGN_OR_RETURN(int64_t pages, PragmaValue(*connection, "PRAGMA page_count"));
    if (free_pages > 0 && free_pages * 4 >= pages) TOOLVFS_RETURN_IF_ERROR(connection->Execute("VACUUM"));
  }
  return connection->Execute("PRAGMA wal_checkpoint(TRUNCATE)");
}

uint64_t SqliteDatabase::StorageBytes() {
  uint64_t total = 0;
  for (const std::string& path : {file_, file_ + "-wal"}) {
    struct stat info;
    if (::stat(path.c_str(), &info) == 0) total += static_cast<uint64_t>(info.st_size);
  }
  return total;
}

}  // namespace toolvfs
