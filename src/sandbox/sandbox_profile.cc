#include "sandbox/sandbox_profile.h"

#include <unistd.h>

#include <algorithm>
#include <mutex>
#include <utility>

#include "core/text.h"
#include "sandbox/kernel_features.h"
#include "sandbox/process_cgroup.h"

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
// Forks too; whether masks work does not change while toolvfs runs.
const FeatureProbe& MountMaskProbe() {
  static const FeatureProbe probe = UserNamespaceProbe().available
                                        ? ProbeMountMasks()
                                        : FeatureProbe{.available = false, .detail = "no user namespaces", .version = 0};
  return probe;
}
// The seccomp program depends on SeccompOptions alone and takes ~100 µs to
// build, so each variant is built once per process (issue 5: "once per
// tool configuration"); failures are not kept, the next build retries.
Result<std::shared_ptr<const SeccompProgram>> SharedSeccompProgram(const SeccompOptions& options) {
  static std::mutex mutex;
  static std::vector<std::pair<SeccompOptions, std::shared_ptr<const SeccompProgram>>> built;
  std::lock_guard lock(mutex);
  for (const auto& [built_options, program] : built) {
    if (built_options == options) return program;
  }
  TOOLVFS_ASSIGN_OR_RETURN(SeccompProgram program, BuildSeccompProgram(options));
  auto shared = std::make_shared<const SeccompProgram>(std::move(program));
  built.emplace_back(options, shared);
  return shared;
}
}  // namespace

bool MountMasksAvailable(const std::vector<std::string>& hidden_for_testing) {
  for (const std::string& mechanism : hidden_for_testing) {
    if (mechanism == "namespaces" || mechanism == "mount-masks") return false;
  }
  return MountMaskProbe().available;
}

bool IsSandboxUnavailable(const Status& status) {
  return status.code() == StatusCode::kUnsupported && status.message().starts_with(kUnavailable);
}

std::optional<sock_fprog> SandboxProfile::seccomp_program() const {
  if (!seccomp_) return std::nullopt;
  return seccomp_->program();
}

const std::string& SandboxProfile::process_cgroup_parent() const {
  static const std::string kNone;
  return geteuid() == process_cgroup_uid_ ? process_cgroup_parent_ : kNone;
}

int SandboxProfile::shared_user_namespace_fd() const {
  if (geteuid() != shared_user_namespace_uid_ || getegid() != shared_user_namespace_gid_) return -1;
  return shared_user_namespace_fd_;
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

  Result<std::shared_ptr<const SeccompProgram>> seccomp =
      hidden("seccomp")
          ? Result<std::shared_ptr<const SeccompProgram>>(Status(StatusCode::kUnsupported, "hidden for testing"))
          : SharedSeccompProgram(request.seccomp);
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
  // RLIMIT_NPROC does not bind root; a pids cgroup binds everyone.
  const bool process_limit_wanted = profile.limits_.processes != ResourceLimits::kInherit &&
                                    request.seccomp.allow_process_creation;
  const FeatureProbe cgroups = hidden("cgroups")
                                   ? FeatureProbe{.available = false, .detail = "hidden for testing"}
                                   : process_limit_wanted ? ProbeProcessCgroups() : FeatureProbe{};
  if (process_limit_wanted && cgroups.available) {
    profile.process_cgroup_parent_ = ProcessCgroupParent();
    profile.process_cgroup_uid_ = geteuid();
    profile.process_cgroup_max_tasks_ = profile.limits_.processes;
  }
  const bool limited_by_cgroup = !profile.process_cgroup_parent_.empty();

  const FeatureProbe user_namespaces =
      hidden("namespaces") ? FeatureProbe{.available = false, .detail = "hidden for testing"}
                           : UserNamespaceProbe();
  if (user_namespaces.available) {
    profile.namespaces_ = NamespaceOptions{
        // vfs tools (no processes) skip it: seccomp already refuses them
        // every socket (unix ones too) and Landlock every TCP connect, and a
        // network namespace costs ~0.5 ms per start. Programs that may
        // create processes (process.run children) get it as a backstop.
        .isolate_network = !request.access.network_allowed && request.seccomp.allow_process_creation,
        .own_process_tree = request.seccomp.allow_process_creation,
        // vfs tools skip them too: seccomp denies them every SysV IPC and
        // POSIX message-queue call and every mount call, so the two
        // namespaces would only cost ~80 µs per start and ~100 µs at exit.
        .isolate_ipc_and_mounts = request.seccomp.allow_process_creation,
    };
    if (*profile.namespaces_ == NamespaceOptions{.isolate_network = false,
                                                 .own_process_tree = false,
                                                 .isolate_ipc_and_mounts = false}) {
      // The user namespace alone (a vfs tool): joined, not created, per
      // start. Should making it fail, each start creates its own as before
      // and reports a failure there, naming the step.
      if (Result<int> shared = SharedUserNamespace(request.tool_name); shared.ok()) {
        profile.shared_user_namespace_fd_ = *shared;
        profile.shared_user_namespace_uid_ = geteuid();
        profile.shared_user_namespace_gid_ = getegid();
      }
    }
    // The supervisor and the init of the PID namespace are in the cgroup
    // too, as they count against RLIMIT_NPROC (launcher.cc): two more, so
    // the limit stays what the tool itself may have.
    if (limited_by_cgroup && profile.namespaces_->own_process_tree) {
      profile.process_cgroup_max_tasks_ += 2;
    }
    if (!request.mount_masks.empty()) {
      if (!profile.namespaces_->isolate_ipc_and_mounts || !MountMasksAvailable(request.hidden_for_testing)) {
        return InternalError("Cannot sandbox tool " + Quote(request.tool_name) +
                             ": mount masks were asked for where no mount namespace can carry them");
      }
      profile.mount_masks_ = request.mount_masks;
      profile.mount_mask_entries_ = PrepareMountMasks(profile.mount_masks_);
    }
  } else {
    if (!request.mount_masks.empty()) {
      return InternalError("Cannot sandbox tool " + Quote(request.tool_name) +
                           ": mount masks were asked for without user namespaces");
    }
    // Not a refusal under kRequire: namespaces are a backstop "where the
    // kernel allows them"; `toolvfs doctor` shows the probe.
    if (mode == SandboxMode::kBestEffort) {
      profile.unenforced_.push_back("namespaces (user, PID, network, IPC, mount): " +
                                    user_namespaces.detail);
    }
    if (profile.limits_.processes != ResourceLimits::kInherit) {
      profile.limits_.processes = ResourceLimits::kInherit;
      if (mode == SandboxMode::kBestEffort && !limited_by_cgroup) {
        profile.unenforced_.push_back(
            "the process limit (max_processes): it needs a user namespace or a pids cgroup");
      }
    }
    return profile;
  }
  if (process_limit_wanted && !limited_by_cgroup && getuid() == 0 &&
      mode == SandboxMode::kBestEffort) {
    profile.unenforced_.push_back(
        "the process limit (max_processes): the kernel exempts root from RLIMIT_NPROC, and no pids "
        "cgroup can be made here (" + cgroups.detail + ")");
  }
  return profile;
}

}  // namespace toolvfs
