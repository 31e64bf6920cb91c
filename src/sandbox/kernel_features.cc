#include "sandbox/kernel_features.h"

#include <fcntl.h>
#include <linux/landlock.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>

#include "sandbox/mount_masks.h"
#include "sandbox/process_cgroup.h"

// Syscall numbers are the same on every architecture for these (the
// "generic" table); the fallbacks only matter with old libc headers.
#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#endif
#ifndef SYS_openat2
#define SYS_openat2 437
#endif
#ifndef SYS_clone3
#define SYS_clone3 435
#endif
#ifndef LANDLOCK_CREATE_RULESET_VERSION
#define LANDLOCK_CREATE_RULESET_VERSION (1U << 0)
#endif

namespace toolvfs {
namespace {

// "EPERM" (or "errno 1234" for a number glibc does not know).
std::string ErrnoName(int error_number) {
  const char* name = strerrorname_np(error_number);
  return name != nullptr ? name : "errno " + std::to_string(error_number);
}

// memfd_create's MFD_NOEXEC_SEAL (Linux 6.3), missing from older headers.
constexpr unsigned kMemfdNoExecSeal = 0x0008U;

// "Operation not permitted (EPERM)".
std::string DescribeErrno(int error_number) {
  return std::string(std::strerror(error_number)) + " (" + ErrnoName(error_number) + ")";
}

FeatureProbe Available(std::string detail, int version = 0) {
  return FeatureProbe{.available = true, .detail = std::move(detail), .version = version};
}

FeatureProbe Unavailable(std::string detail) {
  return FeatureProbe{.available = false, .detail = std::move(detail), .version = 0};
}

// The first line of a small /proc file with the trailing newline removed;
// nullopt if it does not exist or cannot be read.
std::optional<std::string> ReadSysctl(const char* path) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  char buffer[64];
  ssize_t length;
  do {
    length = read(fd, buffer, sizeof buffer);
  } while (length < 0 && errno == EINTR);
  close(fd);
  if (length < 0) return std::nullopt;
  std::string value(buffer, static_cast<size_t>(length));
  while (!value.empty() && (value.back() == '\n' || value.back() == ' ')) value.pop_back();
  return value;
}

}  // namespace

FeatureProbe ProbeLandlock() {
  long abi = syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
  if (abi >= 0) return Available("ABI " + std::to_string(abi), static_cast<int>(abi));
  int error_number = errno;
  switch (error_number) {
    case ENOSYS:
      return Unavailable("not built into this kernel, or blocked by a seccomp filter (ENOSYS)");
    case EOPNOTSUPP:
      return Unavailable("built in but disabled at boot; add landlock to the lsm= kernel parameter (EOPNOTSUPP)");
    default:
      return Unavailable("landlock_create_ruleset failed: " + DescribeErrno(error_number));
  }
}

FeatureProbe ProbeOpenat2() {
  struct open_how how;
  std::memset(&how, 0, sizeof how);
  how.flags = O_PATH | O_CLOEXEC;
  how.resolve = RESOLVE_BENEATH;
  long fd = syscall(SYS_openat2, AT_FDCWD, ".", &how, sizeof how);
  if (fd >= 0) {
    close(static_cast<int>(fd));
    return Available("RESOLVE_BENEATH works");
  }
  int error_number = errno;
  if (error_number == ENOSYS) {
    return Unavailable(
        "not in this kernel, or blocked by a seccomp filter (ENOSYS); "
        "the fs store uses its O_NOFOLLOW walk instead");
  }
  return Unavailable("openat2 failed: " + DescribeErrno(error_number) +
                     "; the fs store uses its O_NOFOLLOW walk instead");
}

FeatureProbe ProbeSeccomp() {
  int mode = prctl(PR_GET_SECCOMP, 0, 0, 0, 0);
  if (mode < 0) {
    int error_number = errno;
    if (error_number == EINVAL) return Unavailable("not built into this kernel (PR_GET_SECCOMP: EINVAL)");
    return Unavailable("PR_GET_SECCOMP failed: " + DescribeErrno(error_number));
  }
  unsigned int action = SECCOMP_RET_KILL_PROCESS;
  if (syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) != 0) {
    int error_number = errno;
    if (error_number == EINVAL) {
      return Unavailable("filter mode not built in, or SECCOMP_RET_KILL_PROCESS unsupported (EINVAL)");
    }
    return Unavailable("SECCOMP_GET_ACTION_AVAIL failed: " + DescribeErrno(error_number));
  }
  std::string detail = "filter mode with SECCOMP_RET_KILL_PROCESS";
  // Mode 2: a container runtime or a parent already filters us; ours stacks on top.
  if (mode == SECCOMP_MODE_FILTER) detail += " (this process already runs under a filter)";
  return Available(std::move(detail));
}

FeatureProbe ProbeUserNamespaces() {
  // Sysctls that forbid unprivileged user namespaces, named when they do.
  std::string restriction;
  if (auto value = ReadSysctl("/proc/sys/kernel/unprivileged_userns_clone"); value && *value == "0") {
    restriction = "kernel.unprivileged_userns_clone = 0";
  } else if (auto max = ReadSysctl("/proc/sys/user/max_user_namespaces"); max && *max == "0") {
    restriction = "user.max_user_namespaces = 0";
  }
  std::string apparmor_note;
  if (auto value = ReadSysctl("/proc/sys/kernel/apparmor_restrict_unprivileged_userns");
      value && *value == "1") {
    apparmor_note = "; AppArmor may restrict what it can do (kernel.apparmor_restrict_unprivileged_userns = 1)";
  }
  std::string root_note = geteuid() == 0 ? "; probed as root, an unprivileged user may be refused" : "";

  pid_t child = fork();
  if (child < 0) return Unavailable("cannot probe: fork failed: " + DescribeErrno(errno));
  if (child == 0) {
    // Child: no allocation, no stdio; the answer is the exit status.
    if (unshare(CLONE_NEWUSER) == 0) _exit(0);
    _exit(errno > 0 && errno < 256 ? errno : 255);
  }
  int wait_status = 0;
  pid_t waited;
  do {
    waited = waitpid(child, &wait_status, 0);
  } while (waited < 0 && errno == EINTR);
  if (waited < 0) return Unavailable("cannot probe: waitpid failed: " + DescribeErrno(errno));
  if (!WIFEXITED(wait_status)) {
    return Unavailable("the probe process was killed by signal " +
                       std::to_string(WTERMSIG(wait_status)) + " (a seccomp filter?)");
  }
  int exit_code = WEXITSTATUS(wait_status);
  if (exit_code == 0) return Available("unshare(CLONE_NEWUSER) works" + apparmor_note + root_note);
  std::string detail = "unshare(CLONE_NEWUSER) failed: " +
                       (exit_code == 255 ? std::string("unknown error") : DescribeErrno(exit_code));
  if (!restriction.empty()) detail += "; " + restriction;
  return Unavailable(detail + apparmor_note);
}

FeatureProbe ProbeClone3() {
  // Size 0 is below CLONE_ARGS_SIZE_VER0, so the kernel rejects the call
  // before it could create anything.
  long result = syscall(SYS_clone3, nullptr, 0);
  if (result == 0) _exit(0);  // cannot happen; never let a stray child run on
  if (result > 0) return Available("present");
  int error_number = errno;
  if (error_number == ENOSYS) {
    return Unavailable("not in this kernel, or hidden by a seccomp filter (ENOSYS)");
  }
  return Available("present (invalid arguments rejected with " + ErrnoName(error_number) + ")");
}

FeatureProbe ProbeMemfdNoExecSeal() {
  const int fd = memfd_create("toolvfs-probe", MFD_CLOEXEC | kMemfdNoExecSeal);
  if (fd >= 0) {
    close(fd);
    return Available("MFD_NOEXEC_SEAL works; tools may create memfds with it, never executable ones");
  }
  const int error_number = errno;
  if (error_number == EINVAL) {
    return Unavailable(
        "not in this kernel (EINVAL; Linux 6.3+): the seccomp filter refuses tools every memfd");
  }
  return Unavailable("memfd_create failed: " + DescribeErrno(error_number) +
                     "; the seccomp filter refuses tools every memfd but non-executable ones");
}

std::vector<NamedFeatureProbe> ProbeKernelFeatures() {
  std::vector<NamedFeatureProbe> probes;
  probes.push_back({"landlock", ProbeLandlock()});
  probes.push_back({"openat2", ProbeOpenat2()});
  probes.push_back({"seccomp", ProbeSeccomp()});
  probes.push_back({"user namespaces", ProbeUserNamespaces()});
  probes.push_back({"mount masks", ProbeMountMasks()});
  probes.push_back({"clone3", ProbeClone3()});
  probes.push_back({"memfd noexec seal", ProbeMemfdNoExecSeal()});
  probes.push_back({"pids cgroup", ProbeProcessCgroups()});
  return probes;
}

}  // namespace toolvfs
