// The sqlite store: workspaces in one SQLite file (SPEC.md §2.4, §7), the
// shared SQL store (sql_store.h) over the SQLite engine (sqlite_database.h).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "core/status.h"
#include "project/project_files.h"
#include "project/sql/sql_store.h"

namespace toolvfs {

// Opens `uri` = "sqlite:FILE[#WORKSPACE[@SNAPSHOT]]": the workspace
// (default "default") of FILE, both created on first use; with @SNAPSHOT
// (an id, or a label no other snapshot has) the snapshot, read-only: every
// write fails with PermissionDenied naming it, and neither the file nor the
// workspace is created. InvalidArgument for a malformed URI; an error
// naming the file if it cannot be opened, is not a toolvfs store, or has a
// schema newer than this toolvfs knows. A file of an older schema is
// migrated (one transaction) when opened.
Result<std::unique_ptr<ProjectFiles>> OpenSqliteStore(std::string_view uri, const StoreOptions& options);

// Operations on a whole store file (SqlStoreFile) of the sqlite engine.
class SqliteStoreFile final : public SqlStoreFile {
 public:
  // Opens an existing store file (never creates one); `file` is the path.
  static Result<std::unique_ptr<SqliteStoreFile>> Open(const std::string& file);
  using SqlStoreFile::SqlStoreFile;
};

// Deletes the store file `file`, with its -wal, -shm and -journal, if it
// holds no workspace and no other connection has it open; for a command
// that created the file and then failed, so that it leaves no empty store
// behind. The caller must have closed its own connections to it. Whether
// it was deleted: false, with nothing touched, when the file is missing,
// holds a workspace or tables of no toolvfs store, or is open elsewhere
// (another process may be about to create a workspace in it). An error
// naming the file when it cannot be opened or deleted.
Result<bool> DeleteSqliteFileIfUnused(const std::string& file);

}  // namespace toolvfs
