#include "policy/tool_policy.h"

namespace toolvfs {

ToolPolicy ToolPolicy::ForTool(const ToolConfig& tool,
                               std::optional<std::string> config_project_path) {
  ToolPolicy policy{
      .tool_name = tool.name,
      .has_sandbox_table = tool.has_sandbox_table,
      .ad_hoc = tool.ad_hoc,
      .files = FilePolicy::ForTool(tool, std::move(config_project_path)),
      .network = NetworkPolicy::ForTool(tool),
      .commands = CommandPolicy::ForTool(tool),
  };
  return policy;
}

std::vector<std::string> ToolPolicy::Describe() const {
  std::vector<std::string> lines;
  if (!has_sandbox_table) lines.push_back("no sandbox table: the default policy");
  for (std::vector<std::string> section : {files.Describe(), network.Describe(), commands.Describe()}) {
    for (std::string& line : section) lines.push_back(std::move(line));
  }
  return lines;
}

const ToolPolicy& PrebuiltToolPolicy::For(const ToolConfig& called,
                                          const std::optional<std::string>& config_project_path,
                                          std::optional<ToolPolicy>& built) const {
  if (policy != nullptr && tool == &called) return *policy;
  return built.emplace(ToolPolicy::ForTool(called, config_project_path));
}

}  // namespace toolvfs
