// Network decisions for one tool (SPEC.md §3.1 `network.*`, §3.2).
//
// Thread safety: immutable after construction.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"
#include "policy/decision.h"
#include "core/url.h"

namespace toolvfs {

class NetworkPolicy {
 public:
  // The tool's `network` rules; a tool without a sandbox table has none
  // (every URL uncovered). Prefixes were validated by the config parser;
  // one that still fails to normalize is kept out and never matches.
  static NetworkPolicy ForTool(const ToolConfig& tool);

  // Deny if a deny prefix covers `url`; allow if an allow prefix does
  // (deny wins, whatever the lengths); otherwise uncovered, with a hint
  // naming `network.allow`. Prefixes match textually on the normalized
  // host, except that a deny rule for an IPv4 address also covers its
  // IPv4-mapped IPv6 form and the other way round (both reach the same
  // machine); an allow rule covers only the form it names.
  PolicyDecision Check(const NormalizedUrl& url) const;

  // Whether ${name} may be substituted into header values.
  bool MayUseVariable(std::string_view name) const;

  // Whether any URL at all can be allowed without asking (the stdio
  // runtime's sandbox opens the network only then).
  bool AllowsAny() const { return !allow_.empty(); }

  std::vector<std::string> Describe() const;

 private:
  struct Rule {
    NormalizedUrl prefix;
    std::string text;  // as written in the config, for messages
  };

  // The most specific rule of `rules` covering `url`, or null.
  static const Rule* MostSpecific(const std::vector<Rule>& rules, const NormalizedUrl& url);

  std::vector<Rule> allow_;
  std::vector<Rule> deny_;
  std::vector<std::string> variables_;
  std::vector<std::string> ignored_;  // prefixes that failed to normalize, with why
};

}  // namespace toolvfs
