// Landlock: the filesystem, TCP and scoping restrictions of a tool process
// (SPEC.md §5).
//
// Two halves, kept apart like the rest of the launcher:
//  - Parent side: BuildLandlockRuleset() turns plain rules (paths with
//    read/write/execute, "deny TCP", "scope signals and abstract sockets")
//    into a kernel ruleset fd, once per tool configuration, using whatever
//    ABI this kernel offers. It allocates, opens files and returns a Status.
//  - Child side: ApplyLandlockRuleset() is the only function that may run
//    between fork and exec. It is async-signal-safe: one prctl check and one
//    syscall, no allocation, no logging; it returns an errno, which the
//    launcher reports as the failed step.
//
// What is denied is everything the rules do not grant, for every access
// right the kernel can restrict ("handled"): the domain is default-deny.
// Landlock rights are inherited down a directory tree, so a rule on a
// directory covers everything beneath it; rules attach to inodes, so a path
// reached through a symlink or a bind mount is governed by its target.
//
// Thread safety: BuildLandlockRuleset() may be called from any thread; a
// LandlockRuleset is immutable once built and may be shared (const) by
// launches on several threads, as long as it outlives every fork that uses
// its fd.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "core/unique_fd.h"

namespace toolvfs {

// Access to one file or directory tree. A directory rule covers the whole
// tree beneath it. A rule on a file gets only the file rights (the kernel
// rejects directory rights on a file).
struct LandlockPathRule {
  std::string path;
  bool read = false;     // read files; list directories
  bool write = false;    // write and truncate files; create, remove, rename
                         // entries (not device nodes) in directories
  bool execute = false;  // execve files (and ld.so / shared objects as the
                         // kernel maps them during exec)
  // true: the rule lands on what the path resolves to (system paths such as
  // /lib -> usr/lib). false: no symlink anywhere in the path is followed
  // (OpenWithoutSymlinks), and a path that has one grants nothing.
  // For project paths, which were checked against the policy by walking
  // the tree: an entry swapped for a symlink after that walk must not
  // carry the grant to its target.
  bool follow_symlinks = true;

  friend bool operator==(const LandlockPathRule&, const LandlockPathRule&) = default;
};

struct LandlockRules {
  std::vector<LandlockPathRule> paths;
  // bind() and connect() on TCP sockets fail with EACCES (ABI >= 4). UDP and
  // other families are the seccomp filter's job.
  bool deny_tcp_bind_connect = true;
  // kill() of a process outside the sandbox fails with EPERM, and connect()
  // to an abstract unix socket created outside with EPERM (ABI >= 6).
  bool scope_signals_and_abstract_unix_sockets = true;

  friend bool operator==(const LandlockRules&, const LandlockRules&) = default;
};

// What a built ruleset enforces on this kernel.
struct LandlockCoverage {
  int abi = 0;              // the Landlock ABI used; 0: Landlock unavailable
  bool filesystem = false;  // read/write/execute/create/remove (ABI >= 1)
  bool rename_across_directories = false;  // LANDLOCK_ACCESS_FS_REFER (ABI >= 2)
  bool truncate = false;                   // truncate(2), O_TRUNC (ABI >= 3)
  bool tcp = false;                        // TCP bind/connect denial (ABI >= 4)
  bool device_ioctl = false;               // ioctl on opened devices (ABI >= 5)
  bool scoping = false;  // signals and abstract unix sockets (ABI >= 6)

  friend bool operator==(const LandlockCoverage&, const LandlockCoverage&) = default;
};

// What Landlock can enforce at `abi` (0 or negative: nothing), for rules that
// ask for everything; for `toolvfs doctor`.
LandlockCoverage LandlockCoverageForAbi(int abi);

// A kernel ruleset, ready to apply in a child. Move-only; the fd is
// close-on-exec, so it never reaches the tool even if the launcher keeps it
// open across its close-every-fd step (which it must, see ApplyLandlockRuleset).
class LandlockRuleset {
 public:
  LandlockRuleset(LandlockRuleset&&) noexcept = default;
  LandlockRuleset& operator=(LandlockRuleset&&) noexcept = default;
  LandlockRuleset(const LandlockRuleset&) = delete;
  LandlockRuleset& operator=(const LandlockRuleset&) = delete;

  // The ruleset fd to hand to ApplyLandlockRuleset() in the child.
  int fd() const { return fd_.get(); }

  // What this ruleset enforces (what the rules asked for, within the ABI).
  const LandlockCoverage& coverage() const { return coverage_; }

  // One line per thing the rules asked for explicitly (TCP denial, scoping)
  // that this kernel cannot enforce, e.g. "TCP bind/connect denial (needs
  // Landlock ABI 4; this kernel has ABI 3)"; empty when all is enforced. For
  // --sandbox=best-effort warnings and --sandbox=require refusals. Finer
  // filesystem rights an older ABI lacks (cross-directory rename on ABI 1,
  // truncation below 3, device ioctl below 5) are not listed, so that
  // `require` still runs on Debian 12's ABI 2; coverage() has them, for
  // `toolvfs doctor`.
  const std::vector<std::string>& unenforced() const { return unenforced_; }

 private:
  friend Result<LandlockRuleset> BuildLandlockRulesetForAbi(const LandlockRules& rules, int abi);
  LandlockRuleset(UniqueFd fd, LandlockCoverage coverage, std::vector<std::string> unenforced)
      : fd_(std::move(fd)), coverage_(coverage), unenforced_(std::move(unenforced)) {}

  UniqueFd fd_;
  LandlockCoverage coverage_;
  std::vector<std::string> unenforced_;
};

// Builds the ruleset with the ABI the kernel reports (ProbeLandlock()).
// Paths that do not exist are skipped: a rule can only grant, so a missing
// path grants nothing. Fails with:
//  - Unsupported, naming why, when the kernel has no usable Landlock (the
//    caller decides whether that is fatal: --sandbox=require vs best-effort);
//  - an errno status naming the path when a path exists but cannot be opened
//    or the kernel rejects its rule;
//  - InvalidArgument for an empty or relative path (rules are absolute).
Result<LandlockRuleset> BuildLandlockRuleset(const LandlockRules& rules);

// The same with an explicit ABI instead of the probed one: the test seam for
// older kernels. `abi` must be between 1 and the kernel's ABI (a higher one
// makes the kernel reject the unknown rights with EINVAL).
Result<LandlockRuleset> BuildLandlockRulesetForAbi(const LandlockRules& rules, int abi);

// Child side, between fork and exec: restricts the calling thread (the only
// thread of a freshly forked child) and everything it later executes to the
// ruleset. Async-signal-safe; no allocation. Returns 0 or an errno:
//  - EPERM if PR_SET_NO_NEW_PRIVS is not set yet. The launcher sets it in the
//    step before; this function checks rather than relying on CAP_SYS_ADMIN,
//    so a launcher that forgot the step fails closed as root too.
//  - whatever landlock_restrict_self(2) reports (EBADF for a closed fd,
//    E2BIG when 16 domains are already stacked, ...).
// The fd is left open (it is close-on-exec). Landlock domains stack: a tool
// launched from an already restricted process gets the intersection.
int ApplyLandlockRuleset(int ruleset_fd) noexcept;

}  // namespace toolvfs
