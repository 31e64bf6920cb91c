// Network decisions for one tool (SPEC.md §3.1 `network.*`, §3.2).
//
// Thread safety: immutable after construction.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"
#include "policy/decision.h"
#include "policy/url.h"

namespace toolvfs {

class NetworkPolicy {
 public:
  // The tool's `network` rules; a tool without a sandbox table has none
  // (every URL uncovered). Prefixes were validated by the config parser;
  // one that still fails to normalize is kept out and never matches.
  static NetworkPolicy ForTool(const ToolConfig& tool);

  // Deny if a deny prefix covers `url`; allow if an allow prefix does
  // (deny wins, whatever the lengths); otherwise uncovered, with a hint
  // naming `network.allow`.
  PolicyDecision Check(const NormalizedUrl& url) const;

  // Whether ${name} may be substituted into header values.
  bool MayUseVariable(std::string_view name) const;

  // Whether any URL at all can be allowed without asking (the stdio
  // runtime's sandbox opens the network only then).
  bool AllowsAny() const { return !allow_.empty(); }

  std::vector<std::string> Describe() const;

 private:
  std::vector<NormalizedUrl> allow_;
  std::vector<std::string> allow_text_;
  std::vector<NormalizedUrl> deny_;
  std::vector<std::string> deny_text_;
  std::vector<std::string> variables_;
};

}  // namespace toolvfs
