// Starting a tool process under the OS sandbox (SPEC.md §5), shared by every
// runtime that launches one: vfs tools, their process.run children, and
// stdio tools. The tool's policy is translated here, in one place, into the
// plain lists ToolAccessRules takes.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"
#include "core/status.h"
#include "policy/file_policy.h"
#include "project/project_files.h"
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
  // The project path of the toolvfs.toml in use when it lies inside the
  // project: sensitive, so a tool's process can never read or change it.
  std::optional<std::string> config_project_path;
};

// The project as a tool's own process of `kind` may touch it directly
// (SPEC.md §5), translated from the tool's policy in this one place: for
// stdio tools, MCP servers and process.run children, readable =
// filesystem.allow (the whole project, "", without a sandbox table),
// writable = filesystem.writable (everything readable when `true`), network
// when network.allow is non-empty; vfs tools get nothing.
struct DirectProjectAccess {
  std::vector<std::string> readable_prefixes;  // project-relative, "" = all
  std::vector<std::string> writable_prefixes;
  bool network = false;
};
DirectProjectAccess DirectAccessOf(const ToolConfig& tool, ToolKind kind);

// How the policy of `tool` maps to what its own process of `kind` may touch
// of the project at `project_directory` directly, for `toolvfs check`: one
// line per fact, the grants first, e.g.
//   "process reads . and writes . (granted whole; its own mount namespace covers 5 entries)"
//   "  hidden (mode 000, read-only): .env, .git/config, .toolvfs, alias.txt, toolvfs.toml"
//   "  read-only: .git"
// or, where the kernel cannot cover paths, the entries granted one by one
// around the exceptions; where a writable root lacks toolvfs.toml, .toolvfs
// or .git, the reads granted whole and the writes, on a line of their own,
// entry by entry. vfs tools: nothing of the project. Fails as the walk does.
Result<std::vector<std::string>> DescribeDirectAccess(const ToolConfig& tool, ToolKind kind,
                                                      const std::string& project_directory,
                                                      const ConfinementOptions& confinement);

// What LaunchConfined asks SandboxProfile::Build for (bench/spawn builds
// the same profile once to time the starts alone).
SandboxRequest ConfinementRequest(const LaunchSpec& spec, const ToolConfig& tool, ToolKind kind,
                                  const std::string& project_directory);

// Starts `spec` as a process of `kind` for `tool` under `confinement`.
// `project_directory` is the project's real (possibly materialized)
// directory; empty when the store has none. The project prefixes and the
// network come from DirectAccessOf, narrowed to what the file policy
// allows entry by entry (AllowedSubtrees): a deny rule or a sensitive path
// inside an allowed prefix is left out of the Landlock rules, so the
// process cannot read or change an existing `.env`, `.toolvfs/` or denied
// directory (it could create a new file there in a writable directory). Files named by arguments are readable
// only for words of the configured command line (not a rendered `{{ }}`
// word, not a process.run child's arguments). Fails as
// SandboxProfile::Build or Launch do.
Result<ChildProcess> LaunchConfined(const LaunchSpec& spec, const ToolConfig& tool, ToolKind kind,
                                    const std::string& project_directory,
                                    const ConfinementOptions& confinement);

// The sync-back filter of a materialized copy that tools' processes write
// directly (MaterializedView::FilterChanges): a change is kept when the
// write policy of a tool that ran in the copy allows the entry
// (FilePolicy::CheckEntry), else refused with the first policy's reason.
// The sandbox already keeps a tool from changing what its policy denies,
// but not from creating a new `.env` or `sub/.git/config` in a directory
// granted whole; this keeps such an entry out of the store. Several
// policies for the MCP servers that share one copy.
// Thread safety: Add and Refusal may be called from any thread.
class ToolWritePolicies final : public CopyChangeFilter {
 public:
  // Adds the write policy of `tool`; `config_project_path` as in
  // ConfinementOptions.
  void Add(const ToolConfig& tool, const std::optional<std::string>& config_project_path);

  std::optional<std::string> Refusal(std::string_view path) const override;

 private:
  mutable std::mutex mutex_;
  std::vector<FilePolicy> policies_;
};

}  // namespace toolvfs
