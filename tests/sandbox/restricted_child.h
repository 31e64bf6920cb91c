// Test helpers that really apply a Landlock ruleset: in a forked child, after
// PR_SET_NO_NEW_PRIVS, exactly as the launcher does, so the parent (the test
// process) stays unrestricted.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <functional>
#include <string>
#include <vector>

#include "sandbox/forked_child.h"
#include "sandbox/kernel_features.h"
#include "sandbox/landlock.h"

namespace toolvfs {

// The kernel's Landlock ABI, 0 without Landlock.
inline int KernelLandlockAbi() { return ProbeLandlock().version; }

// Skips the test, saying which ABI and feature it needs, when the kernel
// lacks them. Never skips for anything else.
#define SKIP_WITHOUT_LANDLOCK_ABI(needed_abi, feature)                                      \
  do {                                                                                      \
    const ::toolvfs::FeatureProbe landlock_probe_ = ::toolvfs::ProbeLandlock();             \
    if (!landlock_probe_.available || landlock_probe_.version < (needed_abi)) {             \
      GTEST_SKIP() << feature << " needs Landlock ABI " << (needed_abi)                     \
                   << "; this kernel: " << (landlock_probe_.available ? "ABI " : "")        \
                   << (landlock_probe_.available ? std::to_string(landlock_probe_.version) \
                                                 : landlock_probe_.detail);                 \
    }                                                                                       \
  } while (false)

// Exit codes of a restricted child that mean "the setup failed", not "the
// body returned this errno".
inline constexpr int kNoNewPrivilegesFailed = 250;
inline constexpr int kApplyFailed = 251;

// The child's side of RunRestricted: PR_SET_NO_NEW_PRIVS (unless told not
// to), then the ruleset, as the launcher does between fork and exec.
inline int RestrictSelf(const LandlockRuleset& ruleset, bool set_no_new_privileges) {
  if (set_no_new_privileges && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    return kNoNewPrivilegesFailed;
  }
  const int apply_error = ApplyLandlockRuleset(ruleset.fd());
  if (apply_error != 0) return apply_error == EPERM ? kApplyFailed : kApplyFailed + 1;
  return 0;
}

// Runs `body` in a forked child restricted by `ruleset`; returns what `body`
// returns (0, or the errno it saw; keep it below 250), one of the setup
// codes above, or 1000 + the signal number that killed the child.
inline int RunRestricted(const LandlockRuleset& ruleset, const std::function<int()>& body,
                         bool set_no_new_privileges = true) {
  const ForkedChildOutcome outcome = RunInForkedChild([&](int) {
    const int setup = RestrictSelf(ruleset, set_no_new_privileges);
    return setup != 0 ? setup : body();
  });
  return outcome.exited ? outcome.code : 1000 + outcome.signal;
}

struct RestrictedRun {
  int exit_code = -1;  // as RunRestricted; 127 when execve failed
  std::string output;  // stdout and stderr together
};

// Runs `argv` (argv[0] an absolute path) with `environment` under `ruleset`,
// capturing its output.
inline RestrictedRun RunProgramRestricted(const LandlockRuleset& ruleset,
                                          const std::vector<std::string>& argv,
                                          const std::vector<std::string>& environment) {
  std::vector<char*> argv_pointers;
  for (const std::string& argument : argv) argv_pointers.push_back(const_cast<char*>(argument.c_str()));
  argv_pointers.push_back(nullptr);
  std::vector<char*> environment_pointers;
  for (const std::string& entry : environment) {
    environment_pointers.push_back(const_cast<char*>(entry.c_str()));
  }
  environment_pointers.push_back(nullptr);
  const ForkedChildOutcome outcome = RunInForkedChild([&](int report_fd) {
    if (dup2(report_fd, 1) < 0 || dup2(report_fd, 2) < 0) return 126;
    const int setup = RestrictSelf(ruleset, /*set_no_new_privileges=*/true);
    if (setup != 0) return setup;
    execve(argv_pointers[0], argv_pointers.data(), environment_pointers.data());
    return 127;
  });
  return RestrictedRun{.exit_code = outcome.exited ? outcome.code : 1000 + outcome.signal,
                       .output = outcome.report};
}

}  // namespace toolvfs
