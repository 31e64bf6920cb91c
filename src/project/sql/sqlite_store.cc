// The sqlite store: opening a SQLite file as the shared SQL store. All the
// store's logic is in sql_store.cc; the engine in sqlite_database.cc; the
// migrations of older SQLite files in sqlite_migration.cc.
#include "project/sql/sqlite_store.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <optional>
#include <string>
#include <utility>

#include "core/text.h"
#include "project/sql/sql_schema.h"
#include "project/sql/sqlite_database.h"
#include "project/sql/sqlite_migration.h"
#include "project/sql/workspace_uri.h"

namespace toolvfs {
namespace {

// Opens `file` and brings its schema up to date.
Result<std::shared_ptr<SqliteDatabase>> OpenStoreFile(const std::string& file, bool create, bool sync_writes,
                                                      const std::string& display) {
  TOOLVFS_ASSIGN_OR_RETURN(std::unique_ptr<SqliteDatabase> database,
                           SqliteDatabase::Open(file, create, sync_writes, display));
  {
    TOOLVFS_ASSIGN_OR_RETURN(SqlLease connection, database->Connect());
    TOOLVFS_RETURN_IF_ERROR(PrepareSqlSchema(*connection, MigrateSqliteSchema));
  }
  return std::shared_ptr<SqliteDatabase>(std::move(database));
}

// The file `path` names, by device and inode; nullopt when it names none.
std::optional<std::pair<dev_t, ino_t>> FileIdentity(const std::string& path) {
  struct stat info;
  if (::stat(path.c_str(), &info) != 0) return std::nullopt;
  return std::pair{info.st_dev, info.st_ino};
}

// Whether `connection` holds what a store file is kept for: a workspace,
// or tables that are not a toolvfs store's at all.
Result<bool> HoldsAnything(SqliteConnection& connection) {
  TOOLVFS_ASSIGN_OR_RETURN(bool has_workspaces, connection.HasTable("workspaces"));
  if (!has_workspaces) return connection.HasAnyTable();
  TOOLVFS_ASSIGN_OR_RETURN(SqlStatement statement, connection.Prepare("SELECT 1 FROM workspaces LIMIT 1"));
  return statement.Step();
}

}  // namespace

Result<bool> DeleteSqliteFileIfUnused(const std::string& file) {
  const std::optional<std::pair<dev_t, ino_t>> identity = FileIdentity(file);
  if (!identity) return false;
  TOOLVFS_ASSIGN_OR_RETURN(std::unique_ptr<SqliteConnection> connection,
                           SqliteConnection::Open(file, /*create=*/false, /*read_only=*/false,
                                                  /*sync_writes=*/true, file));
  // Another connection's lock is an answer, not something to wait for:
  // the file is in use, so it stays.
  sqlite3_busy_handler(connection->handle(), nullptr, nullptr);
  // A file that holds something is left as it is, journal mode and all.
  TOOLVFS_ASSIGN_OR_RETURN(bool held, HoldsAnything(*connection));
  if (held) return false;
  // Leaving WAL needs the only connection to the file (every connection
  // in WAL mode holds a shared lock on it while open); in rollback mode the
  // exclusive lock below then keeps every other connection out, readers
  // too, until the file is gone from its path. One that opened the file
  // but took no lock yet finds it deleted when it writes (SQLite refuses
  // to write a moved database: SQLITE_READONLY_DBMOVED).
  const auto journal_mode = [&]() -> Result<std::string> {
    TOOLVFS_ASSIGN_OR_RETURN(SqlStatement statement, connection->Prepare("PRAGMA journal_mode"));
    TOOLVFS_ASSIGN_OR_RETURN(bool row, statement.Step());
    return row ? std::string(statement.Text(0)) : std::string();
  };
  if (!connection->Execute("PRAGMA journal_mode=DELETE").ok()) return false;
  if (!connection->Execute("BEGIN EXCLUSIVE").ok()) return false;
  Result<std::string> mode = journal_mode();
  Result<bool> holds = HoldsAnything(*connection);
  bool deletable = mode.ok() && *mode == "delete" && holds.ok() && !*holds && FileIdentity(file) == identity;
  Status deleted;
  if (deletable) {
    // Its companions first: with the file gone, the names are free for a
    // new store that another process may create at once.
    for (const char* suffix : {"-wal", "-shm", "-journal"}) {
      const std::string companion = file + suffix;
      if (::unlink(companion.c_str()) != 0 && errno != ENOENT) {
        deleted = ErrnoToStatus(errno, "Cannot delete " + Quote(companion));
        break;
      }
    }
    if (deleted.ok() && ::unlink(file.c_str()) != 0) deleted = ErrnoToStatus(errno, "Cannot delete " + Quote(file));
  }
  connection->Rollback();
  TOOLVFS_RETURN_IF_ERROR(deleted);
  if (!holds.ok()) return holds.status();
  return deletable;
}

Result<std::unique_ptr<SqliteStoreFile>> SqliteStoreFile::Open(const std::string& file) {
  TOOLVFS_ASSIGN_OR_RETURN(std::shared_ptr<SqliteDatabase> database,
                           OpenStoreFile(file, /*create=*/false, /*sync_writes=*/true, file));
  return std::make_unique<SqliteStoreFile>(std::move(database), file);
}

Result<std::unique_ptr<ProjectFiles>> OpenSqliteStore(std::string_view uri, const StoreOptions& options) {
  TOOLVFS_ASSIGN_OR_RETURN(WorkspaceAddress address, ParseWorkspaceAddress(uri, uri.substr(uri.find(':') + 1)));
  if (address.location.find('@') != std::string::npos) {
    return InvalidArgumentError("Invalid project " + Quote(uri) +
                                ": '@' before '#'; a snapshot is named after the workspace, as "
                                "sqlite:FILE#WORKSPACE@SNAPSHOT");
  }
  std::string display = "sqlite:" + address.location + "#" + address.workspace;
  if (address.snapshot) display += "@" + *address.snapshot;
  const bool create = !address.snapshot && (options.create_if_missing || options.create_new_workspace);
  // Whether this open makes the file, for on_create (another process may
  // make it at the same moment; then both say so, which only informs).
  const bool new_file = create && options.on_create && !FileIdentity(address.location);
  TOOLVFS_ASSIGN_OR_RETURN(std::shared_ptr<SqliteDatabase> database,
                           OpenStoreFile(address.location, create, options.sync_writes, display));
  std::string location = address.location;
  if (!new_file) return OpenSqlStore(std::move(database), std::move(location), address, std::move(display), options);
  StoreOptions told_of_new_file = options;
  told_of_new_file.on_create = [report = options.on_create](const StoreCreation& created) {
    StoreCreation with_file = created;
    with_file.new_store = true;
    report(with_file);
  };
  return OpenSqlStore(std::move(database), std::move(location), address, std::move(display), told_of_new_file);
}

}  // namespace toolvfs
