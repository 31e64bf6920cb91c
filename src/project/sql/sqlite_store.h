// The sqlite store: workspaces in one SQLite file (SPEC.md §2.4, §7).
//
// A store file holds any number of named workspaces; content is stored once
// per SHA-256 address across all of them and their snapshots. Each
// workspace is a ProjectFiles with per-file version and times, and with
// snapshots whose cost follows the change, never the workspace's size. The
// schema and the algorithms are described in docs/stores.md.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "project/project_files.h"

namespace toolvfs {

// Opens `uri` = "sqlite:FILE[#WORKSPACE[@SNAPSHOT]]": the workspace
// (default "default") of FILE, both created on first use; with @SNAPSHOT
// (an id, or a label no other snapshot has) the snapshot, read-only: every
// write fails with PermissionDenied naming it, and neither the file nor the
// workspace is created. InvalidArgument for a malformed URI; an error
// naming the file if it cannot be opened, is not a toolvfs store, or has a
// schema newer than this toolvfs knows.
Result<std::unique_ptr<ProjectFiles>> OpenSqliteStore(std::string_view uri, const StoreOptions& options);

// One workspace of a store file, as `toolvfs workspace` lists it.
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
  uint64_t file_bytes_before = 0;  // the store file's size before and after
  uint64_t file_bytes_after = 0;
};

// Operations on a whole store file rather than one workspace.
class SqliteStoreFile {
 public:
  // Opens an existing store file (never creates one). `file` is the path.
  static Result<std::unique_ptr<SqliteStoreFile>> Open(const std::string& file);
  virtual ~SqliteStoreFile() = default;

  // Every workspace, sorted by name.
  virtual Result<std::vector<WorkspaceSummary>> ListWorkspaces() = 0;

  // Deletes workspace `name` with its snapshots, freeing the content only it
  // held. NotFound naming it.
  virtual Status DeleteWorkspace(std::string_view name) = 0;

  // Frees what nothing references any more, then returns free pages to the
  // file system.
  virtual Result<GarbageReport> CollectGarbage() = 0;
};

}  // namespace toolvfs
