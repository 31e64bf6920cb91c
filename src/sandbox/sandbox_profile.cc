#include "sandbox/sandbox_profile.h"

#include <algorithm>

#include "core/text.h"

namespace toolvfs {

Result<SandboxMode> ParseSandboxMode(std::string_view name) {
  if (name == "require") return SandboxMode::kRequire;
  if (name == "best-effort") return SandboxMode::kBestEffort;
  return InvalidArgumentError("Unknown sandbox mode " + Quote(name) + "; expected require or best-effort");
}

namespace {
constexpr std::string_view kUnavailable = "the OS sandbox cannot be enforced: ";
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
  return profile;
}

}  // namespace toolvfs
