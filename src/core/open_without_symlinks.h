// Opening a path without following any symlink on the way, on every kernel.
//
// The sandbox's rules are built from paths the policy checked: a Landlock
// rule lands on the inode its path resolves to, and a symlink on the way
// would move the grant onto whatever the link points at. So the rule
// builders (AllowedSubtrees, Landlock's path rules) open their paths with
// this, and a path through a symlink grants nothing.
//
// openat2(RESOLVE_NO_SYMLINKS) does it in one call where the kernel has it
// (Linux 5.6) and no seccomp filter of a container refuses it (ENOSYS, or
// EPERM for every path); otherwise the path is walked one component at a
// time with O_NOFOLLOW, which gives the same answers with one openat per
// component. Once refused, openat2 is not tried again in this process.
//
// Thread safety: safe from any thread.
#pragma once

#include <cstdint>
#include <string_view>

#include "core/unique_fd.h"

namespace toolvfs {

// One openat2(directory_fd, path, {flags | O_CLOEXEC, resolve}), retried
// on EAGAIN (a concurrent rename) and EINTR. An empty fd on failure, errno
// telling why; ENOSYS means openat2 is not usable in this process: the
// kernel lacks it, or a seccomp filter refuses it for every path (once
// seen, later calls fail with ENOSYS at once). Callers then resolve the
// path their own way.
UniqueFd Openat2(int directory_fd, const char* path, int flags, uint64_t resolve);

enum class SymlinkFreeMethod {
  kAuto,  // openat2 where it works, else the walk
  kWalk,  // always the walk (tests cover both)
};

// Opens `path` with `flags` | O_CLOEXEC: a relative path from
// `directory_fd` (AT_FDCWD for the working directory), an absolute one from
// "/". Empty components and "." are skipped, except that a trailing "/" or
// "/." asks for a directory, as in open(2). On failure an empty fd, with
// errno telling why:
//   ELOOP   a component before the last is a symlink;
//   EXDEV   with `beneath`: a ".." component, or an absolute path (the
//           result could lie outside `directory_fd`);
//   ENOTDIR a component before the last is not a directory (or the last,
//           when a directory is asked for; ELOOP if it is a symlink);
//   else    what openat says (ENOENT, EACCES, ...).
// The last component is opened as open(2) does with `flags`: a symlink
// there fails with ELOOP, or, with O_PATH | O_NOFOLLOW, is opened as the
// link itself (the caller sees S_ISLNK). `flags` must include O_NOFOLLOW.
UniqueFd OpenWithoutSymlinks(int directory_fd, std::string_view path, int flags, bool beneath,
                             SymlinkFreeMethod method = SymlinkFreeMethod::kAuto);

}  // namespace toolvfs
