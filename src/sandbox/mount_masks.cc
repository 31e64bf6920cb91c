#include "sandbox/mount_masks.h"

#include <fcntl.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/status.h"
#include "sandbox/namespaces.h"

namespace toolvfs {
namespace {

// The scratch tmpfs the hidden covers are cloned from: as small as the
// kernel allows, two entries, never executable, devices or setuid.
constexpr const char* kCoverFile = "f";
constexpr const char* kCoverDirectory = "d";

// Closes `fd` keeping errno: the callers report the error that mattered.
void CloseKeepingErrno(int fd) noexcept {
  const int saved = errno;
  close(fd);
  errno = saved;
}

// The detached, read-only tmpfs holding the empty mode-000 file and
// directory the hidden masks are cloned from; -1 with errno.
int CreateCoverMount() noexcept {
  const int filesystem = static_cast<int>(syscall(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC));
  if (filesystem < 0) return -1;
  const bool configured =
      syscall(SYS_fsconfig, filesystem, FSCONFIG_SET_STRING, "size", "4k", 0) == 0 &&
      syscall(SYS_fsconfig, filesystem, FSCONFIG_SET_STRING, "nr_inodes", "4", 0) == 0 &&
      syscall(SYS_fsconfig, filesystem, FSCONFIG_SET_STRING, "mode", "0700", 0) == 0 &&
      syscall(SYS_fsconfig, filesystem, FSCONFIG_CMD_CREATE, nullptr, nullptr, 0) == 0;
  if (!configured) {
    CloseKeepingErrno(filesystem);
    return -1;
  }
  const int mount_fd = static_cast<int>(
      syscall(SYS_fsmount, filesystem, FSMOUNT_CLOEXEC,
              MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC));
  CloseKeepingErrno(filesystem);
  if (mount_fd < 0) return -1;
  const int file = openat(mount_fd, kCoverFile, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0);
  if (file < 0 || mkdirat(mount_fd, kCoverDirectory, 0) != 0) {
    if (file >= 0) CloseKeepingErrno(file);
    CloseKeepingErrno(mount_fd);
    return -1;
  }
  close(file);
  mount_attr read_only{};
  read_only.attr_set = MOUNT_ATTR_RDONLY;
  if (syscall(SYS_mount_setattr, mount_fd, "", AT_EMPTY_PATH | AT_RECURSIVE, &read_only,
              sizeof read_only) != 0) {
    CloseKeepingErrno(mount_fd);
    return -1;
  }
  return mount_fd;
}

// The entry at `entry.path`, opened without following any symlink, when it
// is still the inode the parent judged; -1 with errno (ESTALE: another).
int OpenJudgedEntry(const MountMaskEntry& entry) noexcept {
  open_how how{};
  how.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC;
  how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  int fd;
  do {
    fd = static_cast<int>(syscall(SYS_openat2, AT_FDCWD, entry.path, &how, sizeof how));
  } while (fd < 0 && (errno == EAGAIN || errno == EINTR));
  if (fd < 0) return -1;
  struct stat status;
  if (fstat(fd, &status) != 0) {
    CloseKeepingErrno(fd);
    return -1;
  }
  if (status.st_dev != entry.device || status.st_ino != entry.inode ||
      S_ISDIR(status.st_mode) != entry.is_directory) {
    close(fd);
    errno = ESTALE;
    return -1;
  }
  return fd;
}

// Mounts the detached tree `tree` onto the entry `target`; 0 or errno.
int MoveOnto(int tree, int target) noexcept {
  if (syscall(SYS_move_mount, tree, "", target, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) != 0) {
    return errno;
  }
  return 0;
}

int ApplyOne(const MountMaskEntry& entry, int cover_mount) noexcept {
  const int target = OpenJudgedEntry(entry);
  if (target < 0) return errno;
  int tree;
  if (entry.kind == MountMaskKind::kHidden) {
    tree = static_cast<int>(syscall(SYS_open_tree, cover_mount,
                                    entry.is_directory ? kCoverDirectory : kCoverFile,
                                    OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC));
  } else {
    // The entry with whatever is mounted below it, all read-only.
    tree = static_cast<int>(syscall(SYS_open_tree, target, "",
                                    OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE));
    mount_attr read_only{};
    read_only.attr_set = MOUNT_ATTR_RDONLY;
    if (tree >= 0 && syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &read_only,
                             sizeof read_only) != 0) {
      CloseKeepingErrno(tree);
      tree = -1;
    }
  }
  if (tree < 0) {
    const int error = errno;
    close(target);
    return error;
  }
  const int error = MoveOnto(tree, target);
  close(tree);
  close(target);
  return error;
}

// Empties the capability bounding set, so that after execve the tool holds
// no capability even as root in its user namespace: no reading past the
// covers' mode 000 (CAP_DAC_OVERRIDE), no cloning the tree below them
// (open_tree needs CAP_SYS_ADMIN). Capabilities the kernel does not know
// answer EINVAL, which ends the loop.
int DropBoundingSet() noexcept {
  for (int capability = 0; capability < 64; ++capability) {
    if (prctl(PR_CAPBSET_DROP, capability, 0, 0, 0) != 0) {
      if (errno == EINVAL) break;
      return errno;
    }
  }
  return 0;
}

}  // namespace

std::vector<MountMaskEntry> PrepareMountMasks(std::vector<MountMask>& masks) {
  // An ancestor's path is a prefix of its descendants', so it sorts first.
  std::sort(masks.begin(), masks.end(),
            [](const MountMask& a, const MountMask& b) { return a.path < b.path; });
  std::vector<MountMaskEntry> entries;
  entries.reserve(masks.size());
  for (const MountMask& mask : masks) {
    entries.push_back({mask.path.c_str(), mask.kind, mask.is_directory, mask.device, mask.inode});
  }
  return entries;
}

int ApplyMountMasks(const MountMaskEntry* entries, size_t count) noexcept {
  int cover_mount = -1;
  for (size_t index = 0; index < count; ++index) {
    if (entries[index].kind == MountMaskKind::kHidden) {
      cover_mount = CreateCoverMount();
      if (cover_mount < 0) return errno;
      break;
    }
  }
  for (size_t index = 0; index < count; ++index) {
    if (const int error = ApplyOne(entries[index], cover_mount); error != 0) {
      if (cover_mount >= 0) close(cover_mount);
      return error;
    }
  }
  if (cover_mount >= 0) close(cover_mount);
  return DropBoundingSet();
}

FeatureProbe ProbeMountMasks() {
  const auto unavailable = [](std::string detail) {
    return FeatureProbe{.available = false, .detail = std::move(detail), .version = 0};
  };
  char scratch[] = "/tmp/toolvfs-mask-probe-XXXXXX";
  if (mkdtemp(scratch) == nullptr) {
    return unavailable(std::string("cannot probe: mkdtemp failed: ") + std::strerror(errno));
  }
  const std::string directory = scratch;
  const std::string file = directory + "/file";
  const std::string subdirectory = directory + "/directory";
  std::vector<MountMask> masks;
  const int created = open(file.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
  if (created >= 0) close(created);
  struct stat file_status;
  struct stat directory_status;
  const bool made = created >= 0 && mkdir(subdirectory.c_str(), 0700) == 0 &&
                    stat(file.c_str(), &file_status) == 0 &&
                    stat(subdirectory.c_str(), &directory_status) == 0;
  const int made_errno = errno;
  if (made) {
    masks.push_back({file, MountMaskKind::kHidden, false, file_status.st_dev, file_status.st_ino});
    masks.push_back({subdirectory, MountMaskKind::kReadOnly, true, directory_status.st_dev,
                     directory_status.st_ino});
  }
  const std::vector<MountMaskEntry> entries = PrepareMountMasks(masks);
  const NamespacePlan plan = PlanNamespaces(NamespaceOptions{
      .isolate_network = false, .own_process_tree = false, .isolate_ipc_and_mounts = true});
  pid_t child = made ? ForkWithoutHandlers() : -1;
  const int fork_errno = errno;
  if (child == 0) {
    // No allocation: the answer is the exit status (an errno value).
    int error = EnterUserNamespace(plan);
    if (error == 0) error = EnterNamespaces(plan);
    if (error == 0) error = ApplyMountMasks(entries.data(), entries.size());
    _exit(error > 0 && error < 256 ? error : (error == 0 ? 0 : 255));
  }
  int wait_status = 0;
  if (child > 0) {
    while (waitpid(child, &wait_status, 0) < 0 && errno == EINTR) {
    }
  }
  unlink(file.c_str());
  rmdir(subdirectory.c_str());
  rmdir(directory.c_str());
  if (!made) return unavailable(std::string("cannot probe: scratch files: ") + std::strerror(made_errno));
  if (child < 0) return unavailable(std::string("cannot probe: fork failed: ") + std::strerror(fork_errno));
  if (!WIFEXITED(wait_status)) return unavailable("the probe process was killed (a seccomp filter?)");
  const int error = WEXITSTATUS(wait_status);
  if (error == 0) {
    return FeatureProbe{.available = true,
                        .detail = "mount namespace covers (fsmount, open_tree, move_mount) work",
                        .version = 0};
  }
  return unavailable(std::string("covering a path in a mount namespace failed: ") +
                     (error == 255 ? "unknown error" : std::strerror(error)));
}

}  // namespace toolvfs
