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

}  // namespace toolvfs
