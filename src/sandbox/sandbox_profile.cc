#include "sandbox/sandbox_profile.h"

#include <algorithm>

#include "core/text.h"
#include "sandbox/kernel_features.h"

namespace toolvfs {

Result<SandboxMode> ParseSandboxMode(std::string_view name) {
  if (name == "require") return SandboxMode::kRequire;
  if (name == "best-effort") return SandboxMode::kBestEffort;
  return InvalidArgumentError("Unknown sandbox mode " + Quote(name) + "; expected require or best-effort");
}

namespace {
constexpr std::string_view kUnavailable = "the OS sandbox cannot be enforced: ";

// The user namespace probe forks, so it runs once per process: whether the
// kernel allows user namespaces does not change while toolvfs runs.
const FeatureProbe& UserNamespaceProbe() {
  static const FeatureProbe probe = ProbeUserNamespaces();
  return probe;
}
}  // namespace

bool IsSandboxUnavailable(const Status& status) {
  return status.code() == StatusCode::kUnsupported && status.message().starts_with(kUnavailable);
}

std::optional<sock_fprog> SandboxProfile::seccomp_program() const {
  if (!seccomp_) return std::nullopt;
  return seccomp_->program();
}

Result<SandboxProfile> SandboxProfile::Build(const SandboxRequest& request, SandboxMode mode) {
  SandboxProfile profile;
  profile.limits_ = request.limits;

  auto hidden = [&](std::string_view mechanism) {
    return std::find(request.hidden_for_testing.begin(), request.hidden_for_testing.end(), mechanism) !=
           request.hidden_for_testing.end();
  };
  TOOLVFS_ASSIGN_OR_RETURN(LandlockRules rules, ToolAccessRules(request.access));
  Result<LandlockRuleset> landlock =
      hidden("landlock") ? Result<LandlockRuleset>(Status(StatusCode::kUnsupported, "hidden for testing"))
                         : BuildLandlockRuleset(rules);
  if (landlock.ok()) {
    for (const std::string& missing : landlock->unenforced()) {
      if (mode == SandboxMode::kRequire) {
        return Status(StatusCode::kUnsupported,
                      std::string(kUnavailable) + "Landlock lacks " + missing +
                          " (--sandbox=best-effort runs without it)");
      }
      profile.unenforced_.push_back("Landlock: " + missing);
    }
    profile.landlock_ = std::move(landlock).value();
  } else if (landlock.status().code() == StatusCode::kUnsupported) {
    if (mode == SandboxMode::kRequire) {
      return Status(StatusCode::kUnsupported,
                    std::string(kUnavailable) + "Landlock: " + landlock.status().message() +
                        " (--sandbox=best-effort runs without it)");
    }
    profile.unenforced_.push_back("Landlock (filesystem and network confinement): " +
                                  landlock.status().message());
  } else {
    return std::move(landlock).status();
  }

  Result<SeccompProgram> seccomp =
      hidden("seccomp") ? Result<SeccompProgram>(Status(StatusCode::kUnsupported, "hidden for testing"))
                        : BuildSeccompProgram(request.seccomp);
  if (seccomp.ok()) {
    profile.seccomp_ = std::move(seccomp).value();
  } else if (seccomp.status().code() == StatusCode::kUnsupported && mode == SandboxMode::kBestEffort) {
    profile.unenforced_.push_back("seccomp (syscall filter): " + seccomp.status().message());
  } else if (seccomp.status().code() == StatusCode::kUnsupported) {
    return Status(StatusCode::kUnsupported, std::string(kUnavailable) + "seccomp: " +
                                                seccomp.status().message() +
                                                " (--sandbox=best-effort runs without it)");
  } else {
    return Status(seccomp.status().code(),
                  std::string(kUnavailable) + "seccomp: " + seccomp.status().message());
  }
  const FeatureProbe user_namespaces =
      hidden("namespaces") ? FeatureProbe{.available = false, .detail = "hidden for testing"}
                           : UserNamespaceProbe();
  if (user_namespaces.available) {
    profile.namespaces_ = NamespaceOptions{
        // vfs tools (no processes) skip it: seccomp already refuses them
        // every socket but AF_UNIX and Landlock every TCP connect, and a
        // network namespace costs ~0.5 ms per start. Programs that may
        // create processes (process.run children) get it as a backstop.
        .isolate_network = !request.access.network_allowed && request.seccomp.allow_process_creation,
        .own_process_tree = request.seccomp.allow_process_creation,
        // vfs tools skip them too: seccomp denies them every SysV IPC and
        // POSIX message-queue call and every mount call, so the two
        // namespaces would only cost ~80 µs per start and ~100 µs at exit.
        .isolate_ipc_and_mounts = request.seccomp.allow_process_creation,
    };
  } else {
    // Not a refusal under kRequire: namespaces are a backstop "where the
    // kernel allows them"; `toolvfs doctor` shows the probe.
    if (mode == SandboxMode::kBestEffort) {
      profile.unenforced_.push_back("namespaces (user, PID, network, IPC, mount): " +
                                    user_namespaces.detail);
    }
    if (profile.limits_.processes != ResourceLimits::kInherit) {
      profile.limits_.processes = ResourceLimits::kInherit;
      if (mode == SandboxMode::kBestEffort) {
        profile.unenforced_.push_back(
            "the process limit (max_processes): it needs a user namespace");
      }
    }
  }
  return profile;
}

}  // namespace toolvfs
