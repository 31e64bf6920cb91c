// Mount masks: the step of the OS sandbox that hides the policy's exceptions
// inside an allowed prefix (SPEC.md §3, §5) in the tool's own mount
// namespace, so that Landlock can grant the prefix whole.
//
// Landlock can only allow, and a right on a directory covers everything
// below it. Without masks a project root that holds `toolvfs.toml` and
// `.toolvfs/` can only be granted entry by entry around them, and nothing
// can then be created at the root (project/allowed_subtrees.h). With masks,
// after the launcher child has entered its mount namespace, every denied
// entry is covered by a mount before Landlock and seccomp apply:
//   hidden     an empty file or directory of a private read-only tmpfs,
//              mode 000: open, list, write, chmod fail (EACCES, EROFS);
//   read-only  the entry bound onto itself read-only (EROFS on writes):
//              readable but not writable, e.g. `.git` in a writable root.
// A mount point cannot be renamed, removed (EBUSY) nor hard-linked
// (EXDEV, the cover is another mount), and the tool holds no capability
// afterwards (its bounding set is emptied), so even a tool that is root in
// its user namespace cannot read past mode 000 or clone the tree below the
// covers (open_tree needs CAP_SYS_ADMIN; mount calls are seccomp's too).
//
// Each mask names the inode the parent judged (device and inode number);
// the child opens the path without following symlinks and refuses to start
// (ESTALE) when it finds another inode there, so a path swapped between the
// parent's walk and the child's mount is never left uncovered.
//
// Kernel facts: the new mount API (fsopen, fsmount, open_tree,
// move_mount; Linux 5.2), mount_setattr (5.12) and openat2 (5.6), in a
// mount namespace of the tool's own user namespace. ProbeMountMasks asks
// the kernel once per process; where it fails, the caller keeps the
// entry-by-entry grants.
//
// Thread safety: ProbeMountMasks and PrepareMountMasks from any thread;
// ApplyMountMasks is for the launcher child between fork and exec:
// async-signal-safe, no allocation, errno values returned.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "sandbox/kernel_features.h"

namespace toolvfs {

enum class MountMaskKind {
  kHidden,    // not readable: covered by an empty mode-000 read-only entry
  kReadOnly,  // readable, not writable: bound onto itself read-only
};

struct MountMask {
  std::string path;  // absolute, canonical (no symlink on the way)
  MountMaskKind kind = MountMaskKind::kHidden;
  bool is_directory = false;
  dev_t device = 0;  // what the parent judged; the child checks it
  ino_t inode = 0;
};

// The child's view of one mask: plain data pointing into a MountMask.
struct MountMaskEntry {
  const char* path;
  MountMaskKind kind;
  bool is_directory;
  dev_t device;
  ino_t inode;
};

// The entries for `masks` (which must outlive them), ordered so that a
// directory's mask comes before the masks below it (a read-only `.git`
// before a hidden `.git/config`).
std::vector<MountMaskEntry> PrepareMountMasks(std::vector<MountMask>& masks);

// In the launcher child, inside its own (private) mount namespace: covers
// each entry as its kind says, then empties the capability bounding set.
// Returns 0 or errno (ESTALE: an entry is no longer the inode the parent
// judged).
int ApplyMountMasks(const MountMaskEntry* entries, size_t count) noexcept;

// Whether masks work here: a forked child enters a user and mount
// namespace as a tool start would and covers a file and a directory of a
// scratch directory. Forks; call once per process.
FeatureProbe ProbeMountMasks();

}  // namespace toolvfs
