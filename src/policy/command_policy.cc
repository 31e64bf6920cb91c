#include "policy/command_policy.h"

#include <algorithm>
#include <iterator>

#include "config/config_edit.h"

namespace toolvfs {
namespace {

constexpr std::string_view kAnyRemainder = "**";

// ["-n", "**"]
std::string TomlStringArray(std::span<const std::string> items) {
  std::string text = "[";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) text += ", ";
    text += TomlString(items[i]);
  }
  return text + "]";
}

// The config key of the rule for `program_name`: commands.rg, or
// commands."/opt/x/tool" when the name is not a bare TOML key.
std::string RuleKey(std::string_view program_name) {
  bool bare = !program_name.empty() && std::all_of(program_name.begin(), program_name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
  return "commands." + (bare ? std::string(program_name) : TomlString(program_name));
}

// Whether one allowed list admits `args`: equal, or a prefix followed by a
// final "**" (which also admits nothing after the prefix).
bool ListAdmits(const std::vector<std::string>& allowed, std::span<const std::string> args) {
  bool open_ended = !allowed.empty() && allowed.back() == kAnyRemainder;
  size_t fixed = open_ended ? allowed.size() - 1 : allowed.size();
  if (open_ended ? args.size() < fixed : args.size() != fixed) return false;
  return std::equal(allowed.begin(), allowed.begin() + static_cast<std::ptrdiff_t>(fixed), args.begin());
}

std::string_view BaseName(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

}  // namespace

CommandPolicy CommandPolicy::ForTool(const ToolConfig& tool) {
  CommandPolicy policy;
  policy.rules_.insert(tool.sandbox.commands.begin(), tool.sandbox.commands.end());
  return policy;
}

const CommandRule* CommandPolicy::FindRule(std::string_view program_name) const {
  auto rule = rules_.find(program_name);
  return rule == rules_.end() ? nullptr : &rule->second;
}

PolicyDecision CommandPolicy::Check(std::string_view program_name, std::span<const std::string> args) const {
  const CommandRule* rule = FindRule(program_name);
  std::string key = RuleKey(program_name);
  if (rule == nullptr) {
    // A copy of a denied program elsewhere is still that program.
    std::string_view base = BaseName(program_name);
    const CommandRule* base_rule = base == program_name ? nullptr : FindRule(base);
    if (base_rule != nullptr && base_rule->denied) return PolicyDecision::Deny(RuleKey(base) + " = false");
    return PolicyDecision::Uncovered("add a " + key + " rule",
                                     PolicyGrant{PolicyGrant::Kind::kCommand, std::string(program_name)});
  }
  if (rule->denied) return PolicyDecision::Deny(key + " = false");
  if (!rule->args) return PolicyDecision::Allow(key);
  for (const std::vector<std::string>& allowed : *rule->args) {
    if (ListAdmits(allowed, args)) return PolicyDecision::Allow(key + " args " + TomlStringArray(allowed));
  }
  return PolicyDecision::Uncovered("add " + TomlStringArray(args) + " to " + key + ".args",
                                   PolicyGrant{PolicyGrant::Kind::kCommand, std::string(program_name)});
}

std::vector<std::string> CommandPolicy::ForwardableVariables(std::string_view program_name) const {
  const CommandRule* rule = FindRule(program_name);
  if (rule == nullptr || rule->denied) return {};
  std::vector<std::string> names;
  for (const std::string& name : rule->envs) {
    if (!IsLoaderVariable(name)) names.push_back(name);
  }
  return names;
}

PolicyDecision CommandPolicy::CheckEnvironment(std::string_view program_name,
                                               std::span<const std::string> requested) const {
  std::vector<std::string> forwardable = ForwardableVariables(program_name);
  std::string key = RuleKey(program_name) + ".envs";
  for (const std::string& name : requested) {
    if (IsLoaderVariable(name)) continue;
    if (std::find(forwardable.begin(), forwardable.end(), name) != forwardable.end()) continue;
    return PolicyDecision::Deny(key,
                                TomlString(name) + " is not listed; add it to " + key + " to forward it");
  }
  return PolicyDecision::Allow(key);
}

std::vector<std::string> CommandPolicy::Describe() const {
  if (rules_.empty()) return {"commands: no rules (every program is uncovered)"};
  std::vector<std::string> lines;
  for (const auto& [program_name, rule] : rules_) {
    std::string line = RuleKey(program_name);
    if (rule.denied) {
      lines.push_back(line + " = false");
      continue;
    }
    if (!rule.args) {
      line += " any arguments";
    } else if (rule.args->empty()) {
      line += " args [] (no arguments allowed: every call is uncovered)";
    } else {
      line += " args [";
      for (size_t i = 0; i < rule.args->size(); ++i) {
        if (i > 0) line += ", ";
        line += TomlStringArray((*rule.args)[i]);
      }
      line += "]";
    }
    std::vector<std::string> forwardable = ForwardableVariables(program_name);
    if (!forwardable.empty()) line += " envs " + TomlStringArray(forwardable);
    std::vector<std::string> ignored;
    std::copy_if(rule.envs.begin(), rule.envs.end(), std::back_inserter(ignored), IsLoaderVariable);
    if (!ignored.empty()) line += " (ignored, loader variables: " + TomlStringArray(ignored) + ")";
    lines.push_back(std::move(line));
  }
  return lines;
}

bool IsLoaderVariable(std::string_view name) { return name.starts_with("LD_") || name.starts_with("DYLD_"); }

}  // namespace toolvfs
