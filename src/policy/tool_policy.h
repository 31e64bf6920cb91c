// Everything the host checks a tool's requests against: its filesystem,
// network and command rules, built once per tool configuration.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "policy/command_policy.h"
#include "policy/file_policy.h"
#include "policy/network_policy.h"

namespace toolvfs {

struct ToolPolicy {
  std::string tool_name;
  bool has_sandbox_table = false;
  bool ad_hoc = false;  // ToolConfig::ad_hoc: hints name exec's --allow-* flags
  FilePolicy files;
  NetworkPolicy network;
  CommandPolicy commands;

  // `config_project_path`: see FilePolicy::ForTool.
  static ToolPolicy ForTool(const ToolConfig& tool,
                            std::optional<std::string> config_project_path);

  // The effective policy, one rule per line, as `toolvfs check` prints it.
  std::vector<std::string> Describe() const;
};

// A tool's policy built once by a caller that runs many calls of its tools
// (the MCP server builds one per tool when it loads the config), handed to
// a runtime so that a call does not build it again (building compiles the
// tool's path globs: a fifth of an MCP read_file's instructions;
// docs/benchmarks.md). Not owned; both must outlive the runtime.
struct PrebuiltToolPolicy {
  const ToolPolicy* policy = nullptr;
  const ToolConfig* tool = nullptr;  // the config `policy` was built from

  // The policy a call of `called` is judged by: `policy` when it was built
  // from that very ToolConfig object (compared by address, so it never
  // judges a tool it was not built from, not even one of the same name
  // from another config), else ToolPolicy::ForTool built into `built`.
  const ToolPolicy& For(const ToolConfig& called, const std::optional<std::string>& config_project_path,
                        std::optional<ToolPolicy>& built) const;
};

}  // namespace toolvfs
