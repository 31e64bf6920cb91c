// PLACEHOLDER: replaced by the process.run work (issue 4).
#include "policy/command_policy.h"

namespace toolvfs {
CommandPolicy CommandPolicy::ForTool(const ToolConfig&) { return CommandPolicy(); }
PolicyDecision CommandPolicy::Check(std::string_view, std::span<const std::string>) const {
  return PolicyDecision::Uncovered("");
}
std::vector<std::string> CommandPolicy::ForwardableVariables(std::string_view) const { return {}; }
std::vector<std::string> CommandPolicy::Describe() const { return {}; }
bool IsLoaderVariable(std::string_view name) { return name.starts_with("LD_") || name.starts_with("DYLD_"); }
}  // namespace toolvfs
