#include "project/workspace_copy.h"

#include <algorithm>
#include <utility>

#include "core/text.h"

namespace toolvfs {
namespace {

// ProjectFiles has no "make directory": a write creates missing parents and
// a delete leaves them, so an empty directory is made by writing this file
// into it and deleting it again.
constexpr std::string_view kPlaceholderName = ".toolvfs-copy-directory";

// The label of the snapshot that freezes the source's live state for the
// copy; deleted when the copy ends.
constexpr std::string_view kLiveStateLabel = "toolvfs workspace copy: live state";

bool IsUnsupported(const Status& status) { return status.code() == StatusCode::kUnsupported; }

std::string JoinPath(const std::string& directory, std::string_view name) {
  return directory.empty() ? std::string(name) : directory + "/" + std::string(name);
}

// Writes states of the source into the target and counts what it did.
class StateWriter {
 public:
  StateWriter(ProjectFiles& target, WorkspaceCopyReport& report,
              const std::function<void(const WorkspaceCopyReport&)>& progress)
      : target_(target), report_(report), progress_(progress) {}

  // Copies every entry of `state` into the target, which is empty.
  Status CopyWhole(ProjectFiles& state) {
    std::vector<std::string> directories;
    std::vector<std::string> pending = {""};
    while (!pending.empty()) {
      std::string directory = std::move(pending.back());
      pending.pop_back();
      TOOLVFS_ASSIGN_OR_RETURN(std::vector<DirEntry> entries, state.ListDir(directory));
      for (const DirEntry& entry : entries) {
        std::string path = JoinPath(directory, entry.name);
        if (entry.is_symlink()) {
          ++report_.symlinks_skipped;
        } else if (entry.kind == EntryKind::kDirectory) {
          directories.push_back(path);
          pending.push_back(std::move(path));
        } else {
          TOOLVFS_RETURN_IF_ERROR(CopyFile(state, path));
        }
      }
    }
    return MakeMissingDirectories(directories);
  }

  // Makes the target, equal to the state before, equal to `state`, given
  // what the source's Diff says changed in between and which files were
  // `rewritten` with the same content (for their versions and times).
  Status Apply(ProjectFiles& state, const TreeDiff& diff, const std::vector<std::string>& rewritten) {
    // Deepest first, so a directory's entries go before it; one already
    // gone with its directory is fine.
    for (auto path = diff.deleted.rbegin(); path != diff.deleted.rend(); ++path) {
      Status deleted = target_.Delete(*path, /*recursive=*/true);
      if (!deleted.ok() && deleted.code() != StatusCode::kNotFound) return deleted;
      if (deleted.ok()) ++report_.paths_deleted;
    }
    std::vector<std::string> changed = diff.added;
    changed.insert(changed.end(), diff.modified.begin(), diff.modified.end());
    std::sort(changed.begin(), changed.end());  // a directory before its entries
    std::vector<std::string> directories;
    for (const std::string& path : changed) {
      TOOLVFS_ASSIGN_OR_RETURN(FileMetadata wanted, state.Metadata(path));
      Result<FileMetadata> present = target_.Metadata(path);
      if (!present.ok() && present.status().code() != StatusCode::kNotFound) return present.status();
      // A path whose kind changed: the old entry goes first.
      if (present.ok() && present->kind != wanted.kind) {
        TOOLVFS_RETURN_IF_ERROR(target_.Delete(path, /*recursive=*/true));
        ++report_.paths_deleted;
      }
      if (wanted.kind == EntryKind::kDirectory) {
        directories.push_back(path);
      } else {
        TOOLVFS_RETURN_IF_ERROR(CopyFile(state, path));
      }
    }
    for (const std::string& path : rewritten) TOOLVFS_RETURN_IF_ERROR(CopyFile(state, path));
    return MakeMissingDirectories(directories);
  }

 private:
  Status CopyFile(ProjectFiles& state, const std::string& path) {
    Result<std::string> content = state.Read(path);
    if (!content.ok()) {
      return Status(content.status().code(), "Cannot copy " + Quote(path) + ": " + content.status().message());
    }
    // With the source's version and times where both stores keep them.
    Result<FileMetadata> metadata = state.Metadata(path);
    if (!metadata.ok()) return metadata.status();
    Status written = target_.WriteWithMetadata(path, *content, *metadata);
    if (IsUnsupported(written)) written = target_.Write(path, *content, WriteMode::kOverwrite);
    if (!written.ok()) return Status(written.code(), "Cannot copy " + Quote(path) + ": " + written.message());
    ++report_.files_written;
    report_.bytes_written += content->size();
    if (progress_) progress_(report_);
    return OkStatus();
  }

  // The directories of `directories` that writing the files did not make
  // (the empty ones), made now.
  Status MakeMissingDirectories(const std::vector<std::string>& directories) {
    for (const std::string& directory : directories) {
      TOOLVFS_ASSIGN_OR_RETURN(bool exists, target_.Exists(directory));
      if (exists) continue;
      const std::string placeholder = JoinPath(directory, kPlaceholderName);
      TOOLVFS_RETURN_IF_ERROR(target_.Write(placeholder, "", WriteMode::kCreate));
      TOOLVFS_RETURN_IF_ERROR(target_.Delete(placeholder));
      ++report_.directories_created;
    }
    return OkStatus();
  }

  ProjectFiles& target_;
  WorkspaceCopyReport& report_;
  const std::function<void(const WorkspaceCopyReport&)>& progress_;
};

// The target must hold nothing yet: a copy into a workspace in use would
// mix two histories.
Result<bool> CheckTargetIsEmpty(ProjectFiles& target) {
  TOOLVFS_ASSIGN_OR_RETURN(std::vector<DirEntry> entries, target.ListDir(""));
  if (!entries.empty()) {
    std::string held = Quote(entries.front().name);
    if (entries.size() > 1) held += " and " + std::to_string(entries.size() - 1) + " more";
    return AlreadyExistsError("Cannot copy into " + Quote(target.DisplayRoot()) + ": it is not empty (" + held +
                              " at the top); copy into a new workspace");
  }
  Result<std::vector<SnapshotInfo>> snapshots = target.ListSnapshots();
  if (!snapshots.ok()) {
    if (IsUnsupported(snapshots.status())) return false;
    return snapshots.status();
  }
  if (!snapshots->empty()) {
    return AlreadyExistsError("Cannot copy into " + Quote(target.DisplayRoot()) + ": it has " +
                              std::to_string(snapshots->size()) + " snapshots; copy into a new workspace");
  }
  return true;
}

// What changed in `source` from snapshot `from` to snapshot `to` (or the
// live state), in one comparison. Diff compares content only: a file
// written again with the same bytes has another version and times, which
// the target must get too, so the rewritten files come with it. A source
// that cannot tell them gives its Diff alone.
Result<TreeChanges> ChangesBetween(ProjectFiles& source, const std::string& from,
                                   const std::optional<std::string>& to) {
  std::optional<std::string_view> until;
  if (to) until = *to;
  Result<TreeChanges> changes = source.DiffWithRewrites(from, until);
  if (!changes.ok() && IsUnsupported(changes.status())) {
    TOOLVFS_ASSIGN_OR_RETURN(TreeDiff diff, source.Diff(from, until));
    return TreeChanges{std::move(diff), {}};
  }
  return changes;
}

// The states to copy, oldest first: each snapshot, then the live state
// (`live_id`: its frozen snapshot, or nullopt to read it directly).
Status CopyStates(ProjectFiles& source, ProjectFiles& target, const std::vector<SnapshotInfo>& history,
                  const std::optional<std::string>& live_id, const WorkspaceCopyOptions& options,
                  WorkspaceCopyReport& report) {
  StateWriter writer(target, report, options.progress);
  std::optional<std::string> previous;
  for (size_t index = 0; index <= history.size(); ++index) {
    const bool live = index == history.size();
    const std::optional<std::string> id = live ? live_id : std::optional<std::string>(history[index].id);

    std::unique_ptr<ProjectFiles> opened;
    ProjectFiles* state = &source;
    if (id && options.open_snapshot) {
      Result<std::unique_ptr<ProjectFiles>> snapshot = options.open_snapshot(*id);
      if (!snapshot.ok()) return snapshot.status();
      opened = std::move(snapshot).value();
      state = opened.get();
    } else if (id) {
      TOOLVFS_RETURN_IF_ERROR(source.Restore(*id));
    }

    if (index == 0) {
      TOOLVFS_RETURN_IF_ERROR(writer.CopyWhole(*state));
    } else {
      TOOLVFS_ASSIGN_OR_RETURN(TreeChanges changes, ChangesBetween(source, *previous, id));
      TOOLVFS_RETURN_IF_ERROR(writer.Apply(*state, changes.diff, changes.rewritten));
    }
    if (!live) {
      const SnapshotInfo& snapshot = history[index];
      std::optional<std::string_view> label;
      if (snapshot.label) label = *snapshot.label;
      TOOLVFS_ASSIGN_OR_RETURN(std::string target_id, target.Snapshot(label));
      report.snapshots.push_back(CopiedSnapshot{snapshot.id, std::move(target_id), snapshot.label});
    }
    previous = id;
  }
  return OkStatus();
}

}  // namespace

SnapshotOpener SnapshotOpenerForUri(std::string uri, StoreOptions options) {
  if (uri.find('#') == std::string::npos) uri += "#default";
  return [uri = std::move(uri), options](std::string_view id) {
    return OpenProject(uri + "@" + std::string(id), options);
  };
}

Result<WorkspaceCopyReport> CopyWorkspace(ProjectFiles& source, ProjectFiles& target,
                                          const WorkspaceCopyOptions& options) {
  TOOLVFS_ASSIGN_OR_RETURN(bool target_keeps_snapshots, CheckTargetIsEmpty(target));
  std::vector<SnapshotInfo> history;
  if (options.snapshots) {
    Result<std::vector<SnapshotInfo>> listed = source.ListSnapshots();
    if (listed.ok()) {
      history = std::move(listed).value();
    } else if (!IsUnsupported(listed.status())) {
      return listed.status();
    }
  }
  if (!history.empty() && !target_keeps_snapshots) {
    return UnsupportedError("Cannot copy the " + std::to_string(history.size()) + " snapshots of " +
                            Quote(source.DisplayRoot()) + " into " + Quote(target.DisplayRoot()) +
                            ": that store keeps no snapshots; copy into a sqlite: or postgres:// workspace, "
                            "or export the live tree with toolvfs workspace export");
  }

  // Freeze the live state, so it is copied as it was at one instant while
  // others may go on writing (and, when restoring, so it can come back). A
  // source that cannot take a snapshot (read-only, or a store without
  // them) is read as it is.
  const bool restoring = !options.open_snapshot && !history.empty();
  std::optional<std::string> live_id;
  if (options.open_snapshot || restoring) {
    Result<std::string> frozen = source.Snapshot(kLiveStateLabel);
    if (frozen.ok()) {
      live_id = std::move(frozen).value();
    } else if (restoring) {
      return Status(frozen.status().code(), "Cannot copy the snapshots of " + Quote(source.DisplayRoot()) +
                                                ": its live state cannot be kept while they are read: " +
                                                frozen.status().message());
    }
  }

  WorkspaceCopyReport report;
  Status copied = CopyStates(source, target, history, live_id, options, report);
  if (live_id) {
    // The live state is put back even when the copy failed.
    if (restoring) {
      Status back = source.Restore(*live_id);
      if (!back.ok()) {
        return InternalError("Cannot put the live state of " + Quote(source.DisplayRoot()) +
                             " back after the copy: " + back.message() + "; it is kept in snapshot " +
                             Quote(*live_id) + (copied.ok() ? "" : "; the copy failed too: " + copied.message()));
      }
    }
    Status dropped = source.DeleteSnapshot(*live_id);
    if (!dropped.ok() && copied.ok()) {
      return Status(dropped.code(), "Copied, but cannot delete the temporary snapshot " + Quote(*live_id) +
                                        " of " + Quote(source.DisplayRoot()) + ": " + dropped.message());
    }
  }
  if (!copied.ok()) return copied;
  return report;
}

}  // namespace toolvfs
