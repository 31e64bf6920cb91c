// The sqlite store: opening a SQLite file as the shared SQL store. All the
// store's logic is in sql_store.cc; the engine in sqlite_database.cc; the
// migrations of older SQLite files in sqlite_migration.cc.
#include "project/sql/sqlite_store.h"

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

}  // namespace

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
  TOOLVFS_ASSIGN_OR_RETURN(
      std::shared_ptr<SqliteDatabase> database,
      OpenStoreFile(address.location, /*create=*/!address.snapshot, options.sync_writes, display));
  std::string location = address.location;
  return OpenSqlStore(std::move(database), std::move(location), address, std::move(display), options);
}

}  // namespace toolvfs
