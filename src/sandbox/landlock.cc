#include "sandbox/landlock.h"

#include <fcntl.h>
#include <linux/landlock.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

#include "core/io.h"
#include "core/open_without_symlinks.h"
#include "sandbox/kernel_features.h"

// The generic syscall table numbers, the same on every architecture; the
// fallbacks only matter with old libc headers.
#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#endif
#ifndef SYS_landlock_add_rule
#define SYS_landlock_add_rule 445
#endif
#ifndef SYS_landlock_restrict_self
#define SYS_landlock_restrict_self 446
#endif

// Rights and scopes newer than the installed <linux/landlock.h> (Debian 12
// ships the ABI 2 header); the values are kernel ABI and never change.
#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER (1ULL << 13)
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)
#endif
#ifndef LANDLOCK_ACCESS_NET_BIND_TCP
#define LANDLOCK_ACCESS_NET_BIND_TCP (1ULL << 0)
#endif
#ifndef LANDLOCK_ACCESS_NET_CONNECT_TCP
#define LANDLOCK_ACCESS_NET_CONNECT_TCP (1ULL << 1)
#endif
#ifndef LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
#define LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#endif
#ifndef LANDLOCK_SCOPE_SIGNAL
#define LANDLOCK_SCOPE_SIGNAL (1ULL << 1)
#endif

namespace toolvfs {
namespace {

// struct landlock_ruleset_attr as of ABI 6. Older headers declare only the
// first field, so the full layout is spelled out here. Older kernels accept
// this larger struct as long as the fields they do not know are zero, which
// the ABI gating below guarantees.
struct RulesetAttributes {
  uint64_t handled_access_fs;
  uint64_t handled_access_net;
  uint64_t scoped;
};

constexpr uint64_t kReadFileRights = LANDLOCK_ACCESS_FS_READ_FILE;
constexpr uint64_t kReadDirectoryRights = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR;
constexpr uint64_t kWriteFileRights = LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_TRUNCATE;
// Device nodes (MAKE_CHAR, MAKE_BLOCK) are never granted: a tool has no
// business creating them.
constexpr uint64_t kWriteDirectoryRights =
    kWriteFileRights | LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE |
    LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_MAKE_SOCK |
    LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_SYM | LANDLOCK_ACCESS_FS_REFER;
constexpr uint64_t kExecuteRights = LANDLOCK_ACCESS_FS_EXECUTE;
// The rights the kernel accepts in a rule on a non-directory.
constexpr uint64_t kFileRights = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE |
                                 LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_TRUNCATE |
                                 LANDLOCK_ACCESS_FS_IOCTL_DEV;

// Every filesystem right the kernel knows at `abi`: handling all of them is
// what makes the domain default-deny.
uint64_t HandledFilesystemRights(int abi) {
  uint64_t rights = (LANDLOCK_ACCESS_FS_MAKE_SYM << 1) - 1;  // ABI 1: bits 0..12
  if (abi >= 2) rights |= LANDLOCK_ACCESS_FS_REFER;
  if (abi >= 3) rights |= LANDLOCK_ACCESS_FS_TRUNCATE;
  if (abi >= 5) rights |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
  return rights;
}

std::string NeedsAbi(int needed, int abi) {
  return "needs Landlock ABI " + std::to_string(needed) + "; this kernel has ABI " +
         std::to_string(abi);
}

// Adds one path rule; a path that does not exist grants nothing and is
// skipped.
Status AddPathRule(int ruleset_fd, const LandlockPathRule& rule, uint64_t handled) {
  if (rule.path.empty() || rule.path.front() != '/') {
    return InvalidArgumentError("Landlock rule for '" + rule.path +
                                "': the path must be absolute");
  }
  // O_PATH: no read permission needed, and opening a FIFO or device does not
  // block or have side effects. Following symlinks, the rule lands on the
  // target, which is what the kernel checks on access.
  UniqueFd path_fd;
  if (rule.follow_symlinks) {
    path_fd.reset(open(rule.path.c_str(), O_PATH | O_CLOEXEC));
  } else {
    path_fd = OpenWithoutSymlinks(AT_FDCWD, rule.path, O_PATH | O_NOFOLLOW, /*beneath=*/false);
    // A symlink on the way to the last component: not the entry that was
    // checked; nothing granted.
    if (!path_fd && errno == ELOOP) return OkStatus();
  }
  if (!path_fd) {
    if (errno == ENOENT || errno == ENOTDIR) return OkStatus();
    return ErrnoToStatus(errno, "Cannot open '" + rule.path + "' for a Landlock rule");
  }
  struct stat info;
  if (fstat(path_fd.get(), &info) != 0) {
    return ErrnoToStatus(errno, "Cannot stat '" + rule.path + "' for a Landlock rule");
  }
  // The last component a symlink (O_NOFOLLOW opened the link itself):
  // not what was checked, nothing granted.
  if (!rule.follow_symlinks && S_ISLNK(info.st_mode)) return OkStatus();
  const bool directory = S_ISDIR(info.st_mode);
  uint64_t rights = 0;
  if (rule.read) rights |= directory ? kReadDirectoryRights : kReadFileRights;
  if (rule.write) rights |= directory ? kWriteDirectoryRights : kWriteFileRights;
  if (rule.execute) rights |= kExecuteRights;
  if (!directory) rights &= kFileRights;
  rights &= handled;
  if (rights == 0) return OkStatus();  // the kernel rejects an empty rule (ENOMSG)

  struct landlock_path_beneath_attr path_beneath;
  path_beneath.allowed_access = rights;
  path_beneath.parent_fd = path_fd.get();
  if (syscall(SYS_landlock_add_rule, ruleset_fd, LANDLOCK_RULE_PATH_BENEATH, &path_beneath, 0) !=
      0) {
    return ErrnoToStatus(errno, "Landlock refused the rule for '" + rule.path + "'");
  }
  return OkStatus();
}

}  // namespace

LandlockCoverage LandlockCoverageForAbi(int abi) {
  if (abi <= 0) return LandlockCoverage{};
  return LandlockCoverage{
      .abi = abi,
      .filesystem = true,
      .rename_across_directories = abi >= 2,
      .truncate = abi >= 3,
      .tcp = abi >= 4,
      .device_ioctl = abi >= 5,
      .scoping = abi >= 6,
  };
}

Result<LandlockRuleset> BuildLandlockRuleset(const LandlockRules& rules) {
  const FeatureProbe probe = ProbeLandlock();
  if (!probe.available) return UnsupportedError("Landlock is not available: " + probe.detail);
  return BuildLandlockRulesetForAbi(rules, probe.version);
}

Result<LandlockRuleset> BuildLandlockRulesetForAbi(const LandlockRules& rules, int abi) {
  if (abi < 1) {
    return InvalidArgumentError("Landlock ABI " + std::to_string(abi) + " is not a valid ABI");
  }
  const LandlockCoverage possible = LandlockCoverageForAbi(abi);
  LandlockCoverage coverage = possible;
  // Filesystem rights newer than the ABI are simply not restricted; that
  // shows in the coverage, not here (see unenforced()).
  std::vector<std::string> unenforced;

  RulesetAttributes attributes{};
  attributes.handled_access_fs = HandledFilesystemRights(abi);
  if (rules.deny_tcp_bind_connect) {
    if (possible.tcp) {
      // Handled with no net rule added: every TCP bind and connect is denied.
      attributes.handled_access_net =
          LANDLOCK_ACCESS_NET_BIND_TCP | LANDLOCK_ACCESS_NET_CONNECT_TCP;
    } else {
      unenforced.push_back("TCP bind/connect denial (" + NeedsAbi(4, abi) + ")");
    }
  } else {
    coverage.tcp = false;
  }
  if (rules.scope_signals_and_abstract_unix_sockets) {
    if (possible.scoping) {
      attributes.scoped = LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL;
    } else {
      unenforced.push_back("signal and abstract unix socket scoping (" + NeedsAbi(6, abi) + ")");
    }
  } else {
    coverage.scoping = false;
  }

  const long ruleset_fd =
      syscall(SYS_landlock_create_ruleset, &attributes, sizeof attributes, 0);
  if (ruleset_fd < 0) {
    return ErrnoToStatus(errno,
                         "Cannot create a Landlock ruleset for ABI " + std::to_string(abi));
  }
  UniqueFd ruleset(static_cast<int>(ruleset_fd));  // the kernel sets O_CLOEXEC
  // The launcher child keeps it open across its dup2 onto 0-2.
  TOOLVFS_RETURN_IF_ERROR(MoveAboveStandardStreams(ruleset, "Cannot keep the Landlock ruleset"));
  for (const LandlockPathRule& rule : rules.paths) {
    TOOLVFS_RETURN_IF_ERROR(AddPathRule(ruleset.get(), rule, attributes.handled_access_fs));
  }
  return LandlockRuleset(std::move(ruleset), coverage, std::move(unenforced));
}

int ApplyLandlockRuleset(int ruleset_fd) noexcept {
  const int no_new_privileges = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);
  if (no_new_privileges < 0) return errno;
  if (no_new_privileges != 1) return EPERM;
  if (syscall(SYS_landlock_restrict_self, ruleset_fd, 0) != 0) return errno;
  return 0;
}

}  // namespace toolvfs
