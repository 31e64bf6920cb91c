// PLACEHOLDER: replaced by the http work (issue 4).
#include "policy/network_policy.h"

namespace toolvfs {
NetworkPolicy NetworkPolicy::ForTool(const ToolConfig&) { return NetworkPolicy(); }
PolicyDecision NetworkPolicy::Check(const NormalizedUrl&) const { return PolicyDecision::Uncovered(""); }
bool NetworkPolicy::MayUseVariable(std::string_view) const { return false; }
std::vector<std::string> NetworkPolicy::Describe() const { return {}; }
}  // namespace toolvfs
