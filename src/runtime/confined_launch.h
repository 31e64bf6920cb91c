// Starting a tool process under the OS sandbox (SPEC.md §5), shared by every
// runtime that launches one: vfs tools, their process.run children, and
// stdio tools. The tool's policy is translated here, in one place, into the
// plain lists ToolAccessRules takes.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "core/status.h"
#include "sandbox/launcher.h"
#include "sandbox/sandbox_profile.h"
#include "sandbox/tool_access.h"

namespace toolvfs {

// How strictly to confine, and where to say what is not enforced.
struct ConfinementOptions {
  // kRequire fails the launch when a mechanism is missing, kBestEffort
  // launches without it (and calls `warn`); nullopt: no sandbox at all.
  std::optional<SandboxMode> sandbox = SandboxMode::kRequire;
  std::vector<std::string> hidden_for_testing;  // SandboxRequest::hidden_for_testing
  // Receives one-line warnings (mechanisms not enforced). Empty: dropped.
  std::function<void(const std::string&)> warn;
};

// What LaunchConfined asks SandboxProfile::Build for (bench/spawn builds
// the same profile once to time the starts alone).
SandboxRequest ConfinementRequest(const LaunchSpec& spec, const ToolConfig& tool, ToolKind kind,
                                  const std::string& project_directory);

// Starts `spec` as a process of `kind` for `tool` under `confinement`.
// `project_directory` is the project's real (possibly materialized)
// directory; empty when the store has none. For kStdio and kProcessChild
// the project prefixes come from the tool's filesystem policy (without a
// sandbox table: the project readable, nothing writable): readable =
// filesystem.allow, writable = filesystem.writable (or everything readable
// when writable = true); network only when network.allow is non-empty.
// vfs tools get none of the project and no network. Files named by
// arguments are readable only for words of the configured command line
// (not a rendered `{{ }}` word, not a process.run child's arguments). Fails as
// SandboxProfile::Build or Launch do.
Result<ChildProcess> LaunchConfined(const LaunchSpec& spec, const ToolConfig& tool, ToolKind kind,
                                    const std::string& project_directory,
                                    const ConfinementOptions& confinement);

}  // namespace toolvfs
