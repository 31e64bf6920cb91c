// Copying a workspace with its snapshots from one store to another
// (`toolvfs workspace copy FROM_URI TO_URI`): sqlite to postgres to move a
// workspace onto the shared server, and back, or between any two stores.
//
// The copy goes through ProjectFiles only, so any pair of stores works. It
// replays the source's history in order: for each snapshot, oldest first,
// it makes the target equal to that snapshot's state and takes a snapshot
// of the target with the same label; then it makes the target equal to the
// live state. The first state is copied whole; each later one only where
// the source's DiffWithRewrites says it differs from the state before
// (there also where a file was written again with the same bytes, for its
// version and times), one comparison per state, so the cost follows the
// history's changes, not (snapshots × workspace size).
//
// What is kept: the tree (files, their bytes, directories, empty ones
// included), the snapshots' order and labels, and each file's version and
// times where both stores keep them (WriteWithMetadata). What is not:
// snapshot ids (the target numbers its own; the report maps old to new),
// snapshot and directory times. Decided in docs/stores.md#workspace-copy.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "project/project_files.h"

namespace toolvfs {

// Opens snapshot `id` of the source as a read-only project of its own.
using SnapshotOpener = std::function<Result<std::unique_ptr<ProjectFiles>>(std::string_view id)>;

// The opener for a source opened by a SQL store URI (sqlite:FILE#WS,
// postgres://...#WS): `URI@ID`, the store's read-only snapshot project,
// opened with `options`. A URI without '#' names the default workspace.
SnapshotOpener SnapshotOpenerForUri(std::string uri, StoreOptions options);

struct WorkspaceCopyReport;

struct WorkspaceCopyOptions {
  // The snapshots too (false: the live state only, e.g. when the source is
  // itself a snapshot project).
  bool snapshots = true;
  // How the source's snapshots are read. Empty: by restoring the source to
  // each in turn and then back to its live state (which it snapshots
  // first); for stores without snapshot projects (memory). The source must
  // then not be written by anyone else during the copy.
  SnapshotOpener open_snapshot;
  // Called after each file written, with the report so far (for a
  // progress line). Empty: none.
  std::function<void(const WorkspaceCopyReport& so_far)> progress;
};

struct CopiedSnapshot {
  std::string source_id;
  std::string target_id;
  std::optional<std::string> label;
};

struct WorkspaceCopyReport {
  std::vector<CopiedSnapshot> snapshots;  // oldest first
  uint64_t files_written = 0;             // over all states
  uint64_t bytes_written = 0;
  uint64_t directories_created = 0;       // empty directories made explicitly
  uint64_t paths_deleted = 0;             // between states
  uint64_t symlinks_skipped = 0;          // a workspace holds none (fs source)
};

// Copies `source` into `target`, which must be empty (no entries, no
// snapshots): AlreadyExists naming it otherwise. Unsupported, naming the
// target, when the source has snapshots and the target keeps none. Files
// are read whole, so `source` must be opened with a read limit that fits
// its largest file. On an error the target may hold part of the history;
// the caller removes it (the CLI deletes a workspace it created).
Result<WorkspaceCopyReport> CopyWorkspace(ProjectFiles& source, ProjectFiles& target,
                                          const WorkspaceCopyOptions& options);

}  // namespace toolvfs
