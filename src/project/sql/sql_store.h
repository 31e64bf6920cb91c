// The shared store of the SQL engines (SPEC.md §2.4, §7): workspaces in one
// database, written once against the engine interface of sql_connection.h.
// SQLite (sqlite_store.*) and PostgreSQL open their database and hand it
// here; everything else — the operations of ProjectFiles, per-file
// versions and times, content stored once per SHA-256 address, chunked
// ranged reads and appends, snapshots, restore, diff, materialized copies,
// garbage collection — is this file's.
//
// A database holds any number of named workspaces; content is stored once
// per address across all of them and their snapshots. The schema and the
// algorithms are described in docs/stores.md.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "project/project_files.h"
#include "project/sql/sql_connection.h"
#include "project/sql/workspace_uri.h"

namespace toolvfs {

// Opens workspace `address.workspace` of `database`, whose schema is
// prepared (PrepareSqlSchema), creating it unless `address.snapshot` is
// set or `options` says not to (create_if_missing; on_create is told when
// it is created); with a snapshot (an id, or a label no other snapshot has) the
// snapshot, read-only: every write fails with PermissionDenied naming it,
// and every read once another handle deleted the snapshot (or the
// workspace) with NotFound saying so, never with rows of another state.
// `location` names the database in messages ("does not exist in the store
// 'x.db'"); `display` is the project's DisplayRoot() (the URI, without a
// password). NotFound for a missing workspace or snapshot.
Result<std::unique_ptr<ProjectFiles>> OpenSqlStore(std::shared_ptr<SqlDatabase> database, std::string location,
                                                  const WorkspaceAddress& address, std::string display,
                                                  const StoreOptions& options);

// Deletes the workspace `project` is, with its snapshots, as
// SqlStoreFile::DeleteWorkspace does; for undoing a fill that failed.
// `project` must come from OpenSqlStore with StoreOptions::
// create_new_workspace, and the workspace is found by the row that open
// inserted, never by name: one another process created under the same name
// after this one was deleted stays. NotFound when it is gone;
// InvalidArgument for any other project.
Status DeleteCreatedWorkspace(std::unique_ptr<ProjectFiles> project);

// One workspace of a store, as `toolvfs workspace` lists it.
struct WorkspaceSummary {
  std::string name;
  int64_t created_ms = 0;
  uint64_t files = 0;        // live files
  uint64_t bytes = 0;        // their total size
  uint64_t snapshots = 0;
};

// What garbage collection freed.
struct GarbageReport {
  uint64_t entries = 0;        // entry versions no snapshot or live state held
  uint64_t contents = 0;       // contents no entry referenced
  uint64_t bytes = 0;          // their bytes
  uint64_t file_bytes_before = 0;  // the store's size on disk before and after (0 when unknown)
  uint64_t file_bytes_after = 0;
};

// Operations on a whole store rather than one workspace.
class SqlStoreFile {
 public:
  // `database` with its schema prepared; `location` as for OpenSqlStore.
  SqlStoreFile(std::shared_ptr<SqlDatabase> database, std::string location)
      : database_(std::move(database)), location_(std::move(location)) {}
  SqlStoreFile(const SqlStoreFile&) = delete;
  SqlStoreFile& operator=(const SqlStoreFile&) = delete;
  virtual ~SqlStoreFile() = default;

  // Every workspace, sorted by name.
  Result<std::vector<WorkspaceSummary>> ListWorkspaces();

  // Deletes workspace `name` with its snapshots, freeing the content only it
  // held, in one transaction. NotFound naming it.
  Status DeleteWorkspace(std::string_view name);

  // Frees what nothing references any more (one transaction), then gives
  // free space back (SqlDatabase::Compact).
  Result<GarbageReport> CollectGarbage();

 private:
  std::shared_ptr<SqlDatabase> database_;
  std::string location_;
};

}  // namespace toolvfs
