// Kernel feature probes: what the OS sandbox can use on this machine.
//
// Every probe asks the kernel with the syscall itself and never compares
// version numbers: distributions backport features, disable them at boot
// (lsm=, sysctls) or block them with a container's seccomp filter, so a
// version number says little. `toolvfs doctor` prints these; the sandbox
// uses them to decide what it can enforce and to say what it cannot.
//
// Thread safety: every function may be called from any thread. The user
// namespace probe forks; the child only calls unshare() and _exit().
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace toolvfs {

struct FeatureProbe {
  bool available = false;
  // One line for people: "ABI 6", "not built into this kernel (ENOSYS)".
  std::string detail;
  // A version the kernel reported (the Landlock ABI); 0 when not applicable
  // or when the feature is unavailable.
  int version = 0;
};

// Landlock: landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION)
// returns the ABI; ENOSYS means not built in, EOPNOTSUPP disabled at boot.
FeatureProbe ProbeLandlock();

// openat2() with RESOLVE_BENEATH on ".", which the fs store relies on for
// race-free path resolution (it falls back to an O_NOFOLLOW walk).
FeatureProbe ProbeOpenat2();

// seccomp filter mode with SECCOMP_RET_KILL_PROCESS; also says whether this
// process already runs under a filter (filters stack, so that is fine).
FeatureProbe ProbeSeccomp();

// Whether an unprivileged process may create a user namespace: a forked
// child tries unshare(CLONE_NEWUSER). Names the sysctl when one forbids it.
FeatureProbe ProbeUserNamespaces();

// clone3(), called with invalid arguments so it can never create a process:
// EINVAL means present, ENOSYS absent (or hidden by a seccomp filter).
FeatureProbe ProbeClone3();

// memfd_create(MFD_NOEXEC_SEAL) (Linux 6.3): the seccomp filter lets tools
// create only memfds that can never be executed, so where the kernel does
// not know the flag (EINVAL) no tool can create a memfd at all.
FeatureProbe ProbeMemfdNoExecSeal();

struct NamedFeatureProbe {
  std::string_view name;  // "landlock", "openat2", "seccomp", ...
  FeatureProbe probe;
};

// Every probe above and the pids cgroup's (process_cgroup.h), in a fixed
// order, for reports.
std::vector<NamedFeatureProbe> ProbeKernelFeatures();

}  // namespace toolvfs
