// Copying a project tree into a real directory: what `toolvfs workspace
// import` (a host directory into a workspace's materialized copy) and
// `export` (a workspace into a host directory) share.
//
// A copy runs in two phases so that a conflict changes nothing: the source
// is walked and every target path checked first (a directory where a file
// goes, a file or a symbolic link where a directory goes, a symbolic link
// where a file goes), and only then is anything written. Files already in
// the target at the same path are replaced; other files of the target are
// left alone.
//
// Both sides may be written by someone else while the copy runs (an agent's
// workspace exported into a directory it can reach, an agent's directory
// imported), so neither side's symbolic links are ever followed: the source
// is read through its WithoutSymlinks() view, and the target is reached
// from one descriptor with opens that refuse every symbolic link
// (OpenWithoutSymlinks). A file is written as a temporary file beside its
// place and renamed over it: a failure leaves the old file whole, and a
// hard link in the target to a file elsewhere is replaced, never written
// through.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "project/project_files.h"

namespace toolvfs {

struct TransferReport;

// A file as the kernel knows it, whatever path reaches it.
struct FileId {
  dev_t device = 0;
  ino_t inode = 0;
  friend bool operator==(const FileId&, const FileId&) = default;
};

// The files where a sqlite store keeps its data: the store file and its
// companions (-wal, -shm, -journal). A copy never takes them from a source
// (an import would copy every workspace of the store) nor writes them in a
// target (an export would replace the store, or plant a -wal that SQLite
// replays into it on its next open).
struct StoreFiles {
  std::string shown;                // the store file as messages name it
  std::optional<FileId> directory;  // the directory that holds them; none: no store files
  std::vector<std::string> names;   // the store file's name and its companions', in `directory`
  std::vector<FileId> existing;     // those of them that exist now (a hard link elsewhere is the same file)

  // Whether the entry `name` of the directory `directory` is one of them:
  // by its place, whether it exists or not, or by the file it is.
  bool Holds(const FileId& directory, const std::string& name, const std::optional<FileId>& file) const;
  bool HoldsFile(const FileId& file) const;
};

// The store files of the sqlite store file `path` (as SQLite opens it,
// relative to the current directory), as they are now.
Result<StoreFiles> SqliteStoreFiles(const std::string& path);

struct TransferOptions {
  // Skip what the source's .gitignore and .ignore files ignore: an import
  // takes a directory the way grep searches it.
  bool skip_ignored = false;
  // With skip_ignored: take ignored files after all.
  bool include_ignored = false;
  // Skip, at any depth and in any case, `.git`, `.toolvfs` and
  // `toolvfs.toml`, listing each in TransferReport::tool_state: git's and
  // toolvfs's own state, not project content. Exported, git would run the
  // hooks and fsmonitor of a .git/config and toolvfs would take a
  // toolvfs.toml as its policy in a directory the user then works in, both
  // written by whoever wrote the workspace; imported, the workspace would
  // get the host's git state (remotes, credentials in .git/config) and a
  // toolvfs.toml that an export --include-tool-state or a materialized copy
  // hands back to git and toolvfs. The same rule both ways.
  bool skip_tool_state = false;
  // Never read from the source (left out, listed in
  // TransferReport::store_files) nor written in the target (refused).
  StoreFiles store_files;
  // The largest file read; a larger one fails with TooLarge.
  uint64_t max_file_bytes = std::numeric_limits<uint64_t>::max();
  // Called after each file written with the report so far and the number
  // of files the copy writes in all (for a progress line). Empty: none.
  std::function<void(const TransferReport& done, uint64_t files_total)> progress;
};

struct TransferReport {
  uint64_t files = 0;        // files written
  uint64_t directories = 0;  // directories created or already there
  uint64_t bytes = 0;        // bytes of the files written
  uint64_t ignored = 0;      // entries skipped as ignored (.gitignore, .ignore)
  // Entries a workspace cannot hold, skipped: symbolic links (the sqlite
  // store has none, and following one could leave the source directory),
  // including an entry replaced by one while the copy ran, and names that
  // are not valid project paths (control characters, invalid UTF-8).
  uint64_t skipped = 0;
  std::vector<std::string> tool_state;   // with skip_tool_state: the paths left out
  std::vector<std::string> store_files;  // source paths left out as StoreFiles
};

// Copies every file and directory of `source` into the directory
// `target_fd` (named `target` in messages), as described above. Files are
// read whole. Errors name the project path or target path and say why.
Result<TransferReport> CopyTreeInto(ProjectFiles& source, int target_fd, const std::string& target,
                                    const TransferOptions& options);

// Whether the directory `directory_fd` is the directory `ancestor` or lies
// below it, found by going up through "..".
Result<bool> IsAtOrBelow(int directory_fd, const FileId& ancestor);

FileId IdOf(const struct stat& status);

}  // namespace toolvfs
