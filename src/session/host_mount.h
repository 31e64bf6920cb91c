// Host mounts (SPEC.md §7, issue 19 item 5): copying host directories or
// files into a session's workspace when the session starts.
//
// The host tree is read through an fs store rooted at the allowed root the
// mount lies in, never with path-based OS calls: the store resolves every
// path beneath its root descriptor (openat2 RESOLVE_BENEATH or an O_NOFOLLOW
// walk), so no symlink, not even one swapped in while the mount is read, can
// pull in a file outside the allowed root. Without follow_symlinks the tree
// is read through the store's WithoutSymlinks() view, so a symlink is never
// followed at all. See docs/sessions.md "Host mounts".
//
// Thread safety: LoadHostMounts is a free function; `files` must not be
// written concurrently by others while it runs if the caller wants the
// mounts' content exactly.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "project/project_files.h"
#include "session/session_path.h"

namespace toolvfs {

struct HostMount {
  std::string host_path;
  std::string mount_path /* "" = root */;
  std::vector<std::string> include_glob, exclude_glob;
  std::optional<std::uint64_t> max_bytes;
  bool follow_symlinks = false;
};

// The quota of the session the mounts load into (SessionWorkspaceLimits), for all
// the mounts of one load together: a file that would take them over it
// fails its mount before the file is read, so nothing of that mount is
// written. The default is no quota.
struct HostMountQuota {
  std::uint64_t max_total_bytes = UINT64_MAX;
  std::uint64_t max_files = UINT64_MAX;
};

// Loads every mount, in order, into `files` (the session's workspace);
// all-or-nothing per mount.
//
// Each mount is read completely (and checked against its max_bytes) before
// anything of it is written, so a failing mount writes nothing; mounts
// before it stay loaded. Later mounts overwrite earlier files at the same
// path; directories merge. Errors, each naming the mount:
//   InvalidArgument   no allowed roots while mounts are asked for; a
//                     host_path that is not absolute, holds a '..'
//                     segment, or lies outside every allowed root; a
//                     mount_path or host file name that breaks the session
//                     path rules;
//   NotFound          an allowed root or the host_path is missing;
//   TooLarge          the mount's files exceed its max_bytes, or the
//                     mounts' files together the quota;
//   else              what the stores say.
Status LoadHostMounts(const std::vector<HostMount>& mounts,
                      const std::vector<std::string>& allowed_roots,
                      const SessionPathLimits& limits, ProjectFiles& files,
                      const HostMountQuota& quota = {});

}  // namespace toolvfs
