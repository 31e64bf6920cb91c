// PLACEHOLDER: replaced by the file-policy work (issue 4).
#include "policy/file_policy.h"

namespace toolvfs {
std::string_view FileAccessName(FileAccess access) { return access == FileAccess::kRead ? "read" : "write"; }
const std::vector<std::string>& BuiltinSensitivePatterns() { static const std::vector<std::string> none; return none; }
FilePolicy FilePolicy::ForTool(const ToolConfig& tool, std::optional<std::string> config_project_path) {
  FilePolicy policy;
  policy.has_sandbox_table_ = tool.has_sandbox_table;
  policy.config_project_path_ = std::move(config_project_path);
  return policy;
}
PolicyDecision FilePolicy::Check(FileAccess access, std::string_view) const {
  if (access == FileAccess::kRead) return PolicyDecision::Allow("default: project readable");
  return PolicyDecision::Uncovered("");
}
bool FilePolicy::IsSensitive(std::string_view) const { return false; }
std::vector<std::string> FilePolicy::Describe() const { return {}; }
}  // namespace toolvfs
