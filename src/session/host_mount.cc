#include "session/host_mount.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/io.h"
#include "policy/path_glob.h"
#include "project/fs_store.h"

namespace toolvfs {
namespace {

// The segments of an absolute host path, "." and empty ones dropped; an
// error for a relative path or a ".." segment (checked lexically, before
// anything on the host is touched, so ".." can never climb out of a root).
Result<std::vector<std::string>> AbsoluteHostSegments(std::string_view path,
                                                      std::string_view what) {
  if (path.empty() || path.front() != '/') {
    return InvalidArgumentError(std::string(what) + " '" + std::string(path) +
                                "': must be an absolute host path");
  }
  std::vector<std::string> segments;
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    const std::string_view segment = path.substr(start, end - start);
    start = end + 1;
    if (segment.empty() || segment == ".") continue;
    if (segment == "..") {
      return InvalidArgumentError(std::string(what) + " '" + std::string(path) +
                                  "': '..' segments are not allowed");
    }
    segments.emplace_back(segment);
  }
  return segments;
}

std::string JoinSegments(const std::vector<std::string>& segments, std::size_t first) {
  std::string joined;
  for (std::size_t index = first; index < segments.size(); ++index) {
    if (!joined.empty()) joined += '/';
    joined += segments[index];
  }
  return joined;
}

std::vector<PathGlob> NonBlankGlobs(const std::vector<std::string>& patterns) {
  std::vector<PathGlob> globs;
  for (const std::string& pattern : patterns) {
    if (pattern.find_first_not_of(" \t") == std::string::npos) continue;  // blank: ignored
    globs.push_back(PathGlob::Pattern(pattern));
  }
  return globs;
}

// The files the mounts before the one being read loaded.
struct SessionUsageSoFar {
  std::uint64_t bytes = 0;
  std::uint64_t files = 0;
};

struct AllowedRoot {
  std::string display;                    // as configured, for messages
  std::vector<std::string> segments;      // normalized
  std::unique_ptr<ProjectFiles> store;    // the host tree below it
};

// Reads one mount into memory: the files it would write, keyed by session
// path, checked against the session path rules and the byte budget.
class MountReader {
 public:
  // `earlier` is what the mounts before this one loaded, for the quota.
  MountReader(const HostMount& mount, std::string mount_name, ProjectFiles& root_store,
              const SessionPathLimits& limits, const HostMountQuota& quota, const SessionUsageSoFar& earlier)
      : mount_(mount),
        mount_name_(std::move(mount_name)),
        view_(mount.follow_symlinks ? root_store : root_store.WithoutSymlinks()),
        limits_(limits),
        quota_(quota),
        earlier_(earlier),
        include_(NonBlankGlobs(mount.include_glob)),
        exclude_(NonBlankGlobs(mount.exclude_glob)) {}

  // Reads the host entry `store_path` (a path inside the root store;
  // "" is the root) mounted at the normalized session path `mount_path`.
  Status ReadMount(const std::string& store_path, const std::string& mount_path) {
    Result<FileMetadata> metadata = view_.Metadata(store_path.empty() ? "." : store_path);
    if (!metadata.ok()) return Named(metadata.status());
    if (metadata->kind == EntryKind::kDirectory) return ReadDirectory(store_path, "", mount_path);
    // A single file: mounted at mount_path, or under its own name at the root.
    std::string target = mount_path;
    const std::string_view name =
        std::string_view(store_path).substr(store_path.find_last_of('/') + 1);
    if (target.empty()) {
      Result<std::string> normalized = CheckName(std::string(name));
      if (!normalized.ok()) return normalized.status();
      target = *normalized;
    }
    if (!Selected(std::string(name))) return OkStatus();
    return ReadFile(store_path, target, *metadata);
  }

  std::map<std::string, std::string>& staged() { return staged_; }
  std::uint64_t loaded_bytes() const { return loaded_bytes_; }

 private:
  // `relative` is the path below the mounted directory, what globs see.
  Status ReadDirectory(const std::string& store_path, const std::string& relative,
                       const std::string& mount_path) {
    Result<std::vector<DirEntry>> entries = view_.ListDir(store_path.empty() ? "." : store_path);
    if (!entries.ok()) return Named(entries.status());
    for (const DirEntry& entry : *entries) {
      const std::string child_store = JoinSessionPath(store_path, entry.name);
      const std::string child_relative = JoinSessionPath(relative, entry.name);
      if (entry.is_symlink() && !mount_.follow_symlinks) continue;  // never followed by default
      Result<std::string> child_target = CheckName(JoinSessionPath(mount_path, entry.name));
      if (!child_target.ok()) return child_target.status();
      // Metadata follows an in-root symlink; one that leaves the root is
      // PermissionDenied and one that dangles NotFound: both are skipped,
      // as the store would refuse to read through the first anyway.
      Result<FileMetadata> metadata = view_.Metadata(child_store);
      if (!metadata.ok()) {
        if (entry.is_symlink() && (metadata.status().code() == StatusCode::kPermissionDenied ||
                                   metadata.status().code() == StatusCode::kNotFound)) {
          continue;
        }
        return Named(metadata.status());
      }
      if (metadata->kind == EntryKind::kDirectory) {
        if (AnyMatch(exclude_, child_relative)) continue;
        if (Status status = ReadDirectory(child_store, child_relative, *child_target);
            !status.ok()) {
          return status;
        }
      } else if (metadata->kind == EntryKind::kFile && Selected(child_relative)) {
        if (Status status = ReadFile(child_store, *child_target, *metadata); !status.ok()) {
          if (entry.is_symlink() && status.code() == StatusCode::kPermissionDenied) continue;
          return status;
        }
      }
    }
    return OkStatus();
  }

  Status ReadFile(const std::string& store_path, const std::string& target,
                  const FileMetadata& metadata) {
    if (earlier_.files + staged_.size() + (staged_.contains(target) ? 0 : 1) > quota_.max_files) {
      return TooLargeError(mount_name_ + ": more than the session's max_files = " +
                           std::to_string(quota_.max_files) + " (reached at '" + store_path +
                           "'); nothing of this mount was loaded");
    }
    // Checked against the size first, so an over-budget file is never read.
    if (Status status = Charge(metadata.size, store_path); !status.ok()) return status;
    Result<std::string> content = view_.Read(store_path);
    if (!content.ok()) return Named(content.status());
    // The file may have grown since its size was taken: charge the difference.
    if (content->size() > metadata.size) {
      if (Status status = Charge(content->size() - metadata.size, store_path); !status.ok()) {
        return status;
      }
    }
    staged_[target] = std::move(*content);
    return OkStatus();
  }

  Status Charge(std::uint64_t bytes, const std::string& store_path) {
    loaded_bytes_ += bytes;
    if (mount_.max_bytes && loaded_bytes_ > *mount_.max_bytes) {
      return TooLargeError(mount_name_ + ": more than max_bytes = " +
                           std::to_string(*mount_.max_bytes) + " bytes (reached at '" + store_path +
                           "'); nothing of this mount was loaded");
    }
    if (earlier_.bytes + loaded_bytes_ > quota_.max_total_bytes) {
      return TooLargeError(mount_name_ + ": more than the session's max_total_bytes = " +
                           std::to_string(quota_.max_total_bytes) + " bytes (" + FormatBytes(quota_.max_total_bytes) +
                           ") with the mounts before it (reached at '" + store_path +
                           "'); nothing of this mount was loaded");
    }
    return OkStatus();
  }

  // The session path for a host file, or an error naming the host file:
  // names that break the session path rules fail the mount rather than
  // vanish silently.
  Result<std::string> CheckName(const std::string& session_path) {
    Result<std::string> normalized = NormalizeSessionPath(session_path, limits_);
    if (!normalized.ok()) {
      return InvalidArgumentError(mount_name_ + ": host file cannot be mounted: " +
                                  normalized.status().message());
    }
    return normalized;
  }

  bool Selected(const std::string& relative) const {
    if (!include_.empty() && !AnyMatch(include_, relative)) return false;
    return !AnyMatch(exclude_, relative);
  }

  static bool AnyMatch(const std::vector<PathGlob>& globs, const std::string& path) {
    for (const PathGlob& glob : globs) {
      if (glob.Matches(path)) return true;
    }
    return false;
  }

  Status Named(const Status& status) const {
    return Status(status.code(), mount_name_ + ": " + status.message());
  }

  const HostMount& mount_;
  std::string mount_name_;
  ProjectFiles& view_;
  SessionPathLimits limits_;
  const HostMountQuota& quota_;
  SessionUsageSoFar earlier_;
  std::vector<PathGlob> include_, exclude_;
  std::uint64_t loaded_bytes_ = 0;
  std::map<std::string, std::string> staged_;
};

}  // namespace

Status LoadHostMounts(const std::vector<HostMount>& mounts,
                      const std::vector<std::string>& allowed_roots,
                      const SessionPathLimits& limits, ProjectFiles& files,
                      const HostMountQuota& quota) {
  if (mounts.empty()) return OkStatus();
  if (allowed_roots.empty()) {
    return InvalidArgumentError("Host mount '" + mounts.front().host_path +
                                "': no allowed host roots are configured, so nothing may be "
                                "mounted");
  }
  std::vector<AllowedRoot> roots;
  for (const std::string& root : allowed_roots) {
    Result<std::vector<std::string>> segments = AbsoluteHostSegments(root, "Allowed host root");
    if (!segments.ok()) return segments.status();
    Result<std::unique_ptr<ProjectFiles>> store = OpenFsStore(root, StoreOptions{
        .max_read_bytes = UINT64_MAX, .sync_writes = false});
    if (!store.ok()) {
      return Status(store.status().code(),
                    "Allowed host root '" + root + "': " + store.status().message());
    }
    roots.push_back({root, std::move(*segments), std::move(*store)});
  }
  SessionUsageSoFar loaded;  // counted as if no mount overwrote another's file
  for (const HostMount& mount : mounts) {
    const std::string mount_name =
        "Host mount '" + mount.host_path + "' at '" + mount.mount_path + "'";
    Result<std::vector<std::string>> host = AbsoluteHostSegments(mount.host_path, "Host mount");
    if (!host.ok()) return host.status();
    Result<std::string> mount_path = NormalizeSessionPath(mount.mount_path, limits);
    if (!mount_path.ok()) {
      return InvalidArgumentError(mount_name + ": mount_path: " + mount_path.status().message());
    }
    AllowedRoot* containing = nullptr;
    for (AllowedRoot& root : roots) {
      if (root.segments.size() <= host->size() &&
          std::equal(root.segments.begin(), root.segments.end(), host->begin())) {
        containing = &root;
        break;
      }
    }
    if (containing == nullptr) {
      return InvalidArgumentError(mount_name + ": the host path lies outside every allowed root");
    }
    MountReader reader(mount, mount_name, *containing->store, limits, quota, loaded);
    if (Status status =
            reader.ReadMount(JoinSegments(*host, containing->segments.size()), *mount_path);
        !status.ok()) {
      return status;
    }
    for (auto& [path, content] : reader.staged()) {
      if (Status status = files.Write(path, content, WriteMode::kOverwrite); !status.ok()) {
        return Status(status.code(), mount_name + ": cannot write '" + path +
                                         "' into the workspace: " + status.message());
      }
    }
    loaded.bytes += reader.loaded_bytes();
    loaded.files += reader.staged().size();
  }
  return OkStatus();
}

}  // namespace toolvfs
