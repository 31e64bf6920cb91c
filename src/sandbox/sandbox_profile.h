// Everything that confines one kind of tool process (SPEC.md §5), prepared
// in the parent once per tool configuration so that a start only applies it:
// the resource limits, the Landlock ruleset and the seccomp program.
//
// Launch (launcher.h) applies a profile between fork and exec in this fixed
// order, each step in its own file: the user namespace (namespaces.h),
// resource limits (resource_limits.h), the other namespaces,
// PR_SET_NO_NEW_PRIVS, Landlock (landlock.h), seccomp (seccomp_filter.h,
// last, so it need not allow the setup syscalls).
//
// Thread safety: immutable after Build; one profile may serve concurrent
// Launch calls.
#pragma once

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "sandbox/landlock.h"
#include "sandbox/mount_masks.h"
#include "sandbox/namespaces.h"
#include "sandbox/resource_limits.h"
#include "sandbox/seccomp_filter.h"
#include "sandbox/tool_access.h"

namespace toolvfs {

// --sandbox=require (the default): a mechanism the kernel does not offer is
// an error naming it. --sandbox=best-effort: the tool runs without it and
// the profile lists what is not enforced.
enum class SandboxMode { kRequire, kBestEffort };

// Parses "require" | "best-effort"; InvalidArgument naming the value.
Result<SandboxMode> ParseSandboxMode(std::string_view name);

// Whether `status` is Build's refusal under kRequire (the CLI's exit code 4).
bool IsSandboxUnavailable(const Status& status);

struct SandboxRequest {
  ToolAccessRequest access;  // what the process may touch (Landlock)
  SeccompOptions seccomp;
  ResourceLimits limits;
  // Which tool this is: the starts of one vfs tool share a user namespace
  // (namespaces.h, SharedUserNamespace).
  std::string tool_name;
  // Test seam: mechanisms ("landlock", "seccomp", "namespaces", "cgroups") treated as if the kernel
  // lacked them, so --sandbox=require/best-effort can be tested on a
  // kernel that has everything. The CLI fills it from the environment
  // variable TOOLVFS_TEST_HIDE_SANDBOX (comma-separated).
  std::vector<std::string> hidden_for_testing;
  // Entries inside the granted project prefixes to cover in the tool's
  // mount namespace (mount_masks.h). Only for a request that may create
  // processes (it gets a mount namespace) and where MountMasksAvailable.
  std::vector<MountMask> mount_masks;
};

// Whether mount masks can be applied here: user namespaces work and
// ProbeMountMasks succeeded (probed once per process), and neither
// "namespaces" nor "mount-masks" is hidden for testing. The caller decides
// with it between masks and entry-by-entry grants before building.
bool MountMasksAvailable(const std::vector<std::string>& hidden_for_testing);

class SandboxProfile {
 public:
  // Builds the ruleset and the program. Under kRequire, Unsupported with a
  // message naming the missing mechanism ("the OS sandbox cannot be
  // enforced: Landlock: ..."); under kBestEffort, the missing parts are
  // skipped and listed in unenforced(). Other failures (a bad rule, an
  // interpreter that does not exist) are errors in both modes.
  //
  // Namespaces are "where the kernel allows them" (SPEC.md §5), never
  // required: when user namespaces are unavailable (probed once per
  // process), the profile has none in either mode, limits().processes
  // becomes kInherit (RLIMIT_NPROC would cap the host's user, not the
  // tool), and under kBestEffort both are listed in unenforced(). Network
  // is isolated unless request.access.network_allowed (vfs tools: never);
  // a PID namespace is created when request.seccomp.allow_process_creation.
  //
  // The process limit of a process that may create processes
  // (request.seccomp.allow_process_creation) is also held by a pids cgroup
  // per start where the host can make one (process_cgroup.h): it is the
  // only limit that holds when the host runs as root, whom the kernel
  // exempts from RLIMIT_NPROC. As root without one the limit is not
  // enforced; that is not a refusal under kRequire either (like the
  // namespaces, a backstop: the PID namespace still ends the whole tree
  // with the run, and `toolvfs doctor` says which mechanism holds it), and
  // under kBestEffort it is listed in unenforced().
  static Result<SandboxProfile> Build(const SandboxRequest& request, SandboxMode mode);

  SandboxProfile(SandboxProfile&&) noexcept = default;
  SandboxProfile& operator=(SandboxProfile&&) noexcept = default;

  // One line per mechanism that is not enforced (best-effort only).
  const std::vector<std::string>& unenforced() const { return unenforced_; }

  // For the child: -1 when Landlock is not applied.
  int landlock_ruleset_fd() const { return landlock_ ? landlock_->fd() : -1; }
  // For the child: nullopt when seccomp is not applied.
  std::optional<sock_fprog> seccomp_program() const;
  const ResourceLimits& limits() const { return limits_; }
  // For the child: nullopt when no namespaces are created.
  const std::optional<NamespaceOptions>& namespaces() const { return namespaces_; }
  // For the child: the user namespace to join instead of creating one (a
  // vfs tool's, shared by its starts), or -1. Also -1 when the calling
  // process's effective ids are no longer those the namespace maps (a
  // process that changed uid after building the profile creates its own).
  int shared_user_namespace_fd() const;
  // Where each start creates its pids cgroup (process_cgroup.h); empty:
  // none. Also empty when the calling process's effective uid is no longer
  // the one that built the profile (and probed the directory writable): a
  // process that dropped root has RLIMIT_NPROC instead.
  const std::string& process_cgroup_parent() const;
  // Its pids.max: the process limit, plus the PID namespace's supervisor
  // and init when there is one.
  uint64_t process_cgroup_max_tasks() const { return process_cgroup_max_tasks_; }
  // For the child: the mount masks to apply after entering the mount
  // namespace, parents first (mount_masks.h); empty: none.
  const std::vector<MountMaskEntry>& mount_mask_entries() const { return mount_mask_entries_; }

 private:
  SandboxProfile() = default;
  ResourceLimits limits_;
  std::optional<LandlockRuleset> landlock_;
  // Shared: one program per SeccompOptions is built per process.
  std::shared_ptr<const SeccompProgram> seccomp_;
  std::optional<NamespaceOptions> namespaces_;
  int shared_user_namespace_fd_ = -1;
  uid_t shared_user_namespace_uid_ = 0;
  gid_t shared_user_namespace_gid_ = 0;
  std::string process_cgroup_parent_;
  uid_t process_cgroup_uid_ = 0;
  uint64_t process_cgroup_max_tasks_ = 0;
  std::vector<std::string> unenforced_;
  // The entries point into the masks' strings. A moved vector hands over
  // its buffer (the elements do not move), so they stay valid when the
  // profile moves; the profile is not copyable.
  std::vector<MountMask> mount_masks_;
  std::vector<MountMaskEntry> mount_mask_entries_;
};

}  // namespace toolvfs
