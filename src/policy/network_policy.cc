#include "policy/network_policy.h"

#include <algorithm>
#include <optional>

namespace toolvfs {
namespace {

constexpr std::string_view kMappedPrefix = "::ffff:";

// The same machine spelled the other way: "127.0.0.1" <-> "::ffff:127.0.0.1"
// (inet_ntop writes a mapped address with its IPv4 part dotted).
std::optional<NormalizedUrl> Ipv4Alias(const NormalizedUrl& url) {
  NormalizedUrl alias = url;
  if (url.host.starts_with(kMappedPrefix) && url.host.find('.') != std::string::npos) {
    alias.host = url.host.substr(kMappedPrefix.size());
    return alias;
  }
  bool is_ipv4 = !url.host.empty() && url.host.find_first_not_of("0123456789.") == std::string::npos;
  if (!is_ipv4) return std::nullopt;
  alias.host = std::string(kMappedPrefix) + url.host;
  return alias;
}

std::string RuleText(std::string_view key, std::string_view value) {
  return std::string(key) + " \"" + std::string(value) + "\"";
}

}  // namespace

NetworkPolicy NetworkPolicy::ForTool(const ToolConfig& tool) {
  NetworkPolicy policy;
  if (!tool.has_sandbox_table) return policy;
  auto add_rules = [&policy](const std::vector<std::string>& texts, std::string_view key,
                             std::vector<Rule>& rules) {
    for (const std::string& text : texts) {
      Result<NormalizedUrl> prefix = NormalizeUrl(text);
      if (!prefix.ok()) {
        policy.ignored_.push_back(RuleText(key, text) + " (ignored: " + prefix.status().message() + ")");
      } else if (!prefix->query.empty()) {  // the config parser rejects these already
        policy.ignored_.push_back(RuleText(key, text) + " (ignored: a prefix has no query)");
      } else {
        rules.push_back(Rule{std::move(prefix).value(), RuleText(key, text)});
      }
    }
  };
  add_rules(tool.sandbox.network_allow, "network.allow", policy.allow_);
  add_rules(tool.sandbox.network_deny, "network.deny", policy.deny_);
  policy.variables_ = tool.sandbox.network_envs;
  return policy;
}

const NetworkPolicy::Rule* NetworkPolicy::MostSpecific(const std::vector<Rule>& rules,
                                                       const NormalizedUrl& url) {
  const Rule* best = nullptr;
  for (const Rule& rule : rules) {
    if (!UrlPrefixCovers(rule.prefix, url)) continue;
    if (best == nullptr || rule.prefix.path.size() > best->prefix.path.size()) best = &rule;
  }
  return best;
}

PolicyDecision NetworkPolicy::Check(const NormalizedUrl& url) const {
  const Rule* deny = MostSpecific(deny_, url);
  if (deny == nullptr) {
    if (std::optional<NormalizedUrl> alias = Ipv4Alias(url)) deny = MostSpecific(deny_, *alias);
  }
  if (deny != nullptr) return PolicyDecision::Deny(deny->text);
  if (const Rule* allow = MostSpecific(allow_, url)) return PolicyDecision::Allow(allow->text);
  NormalizedUrl without_query = url;
  without_query.query.clear();
  std::string prefix = without_query.ToString();
  return PolicyDecision::Uncovered("add a prefix of \"" + prefix + "\" to network.allow",
                                   PolicyGrant{PolicyGrant::Kind::kNetwork, prefix});
}

bool NetworkPolicy::MayUseVariable(std::string_view name) const {
  return std::find(variables_.begin(), variables_.end(), name) != variables_.end();
}

std::vector<std::string> NetworkPolicy::Describe() const {
  std::vector<std::string> lines;
  for (const Rule& rule : allow_) lines.push_back(rule.text);
  if (allow_.empty()) lines.push_back("network.allow is empty: every URL is asked about");
  for (const Rule& rule : deny_) lines.push_back(rule.text);
  for (const std::string& variable : variables_) lines.push_back(RuleText("network.envs", variable));
  for (const std::string& line : ignored_) lines.push_back(line);
  return lines;
}

}  // namespace toolvfs
