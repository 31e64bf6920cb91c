// Copying a project tree into a real directory: what `toolvfs workspace
// import` (a host directory into a workspace's materialized copy) and
// `export` (a workspace into a host directory) share.
//
// A copy runs in two phases so that a conflict changes nothing: the source
// is walked and every target path checked first (a directory where a file
// goes, a file or a symbolic link where a directory goes, a symbolic link
// where a file goes), and only then is anything written. Files already in
// the target at the same path are overwritten; other files of the target
// are left alone.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "core/status.h"
#include "project/project_files.h"

namespace toolvfs {

struct TransferReport;

struct TransferOptions {
  // Skip what the source's .gitignore and .ignore files ignore, and .git/
  // and .toolvfs/ (git's and toolvfs's own state, never project content):
  // an import takes a directory the way grep searches it.
  bool skip_ignored = false;
  // With skip_ignored: still skip .git/ and .toolvfs/, but take ignored files.
  bool include_ignored = false;
  // Called after each file written with the report so far and the number
  // of files the copy writes in all (for a progress line). Empty: none.
  std::function<void(const TransferReport& done, uint64_t files_total)> progress;
};

struct TransferReport {
  uint64_t files = 0;        // files written
  uint64_t directories = 0;  // directories created or already there
  uint64_t bytes = 0;        // bytes of the files written
  uint64_t ignored = 0;      // entries skipped as ignored (.gitignore, .ignore, .git/, .toolvfs/)
  // Entries a workspace cannot hold, skipped: symbolic links (the sqlite
  // store has none, and following one could leave the source directory)
  // and names that are not valid project paths (control characters,
  // invalid UTF-8).
  uint64_t skipped = 0;
};

// Copies every file and directory of `source` into the existing directory
// `target`, as described above. Files are read whole, so `source` must be
// opened with a read limit that fits its largest file. Errors name the
// project path or target path and say why.
Result<TransferReport> CopyTreeInto(ProjectFiles& source, const std::string& target, const TransferOptions& options);

}  // namespace toolvfs
