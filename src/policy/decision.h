// The outcome of checking one request against a tool's policy (SPEC.md §3.2).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace toolvfs {

enum class Decision {
  kAllow,      // a rule allows it
  kDeny,       // a rule (or a built-in sensitive path) forbids it
  kUncovered,  // no rule says: the inquirer decides
};

// "allow" | "deny" | "uncovered".
std::string_view DecisionName(Decision decision);

// What a rule would have to grant for a request to be allowed, as data:
// for front ends that grant it another way than a config rule (`toolvfs
// exec`'s --allow-* flags, ExecFlagHint).
struct PolicyGrant {
  enum class Kind { kRead, kWrite, kNetwork, kCommand };
  Kind kind = Kind::kRead;
  // A project path ("" = the whole project), a URL prefix, a program name.
  std::string value;
};

struct PolicyDecision {
  Decision decision = Decision::kUncovered;
  // The rule that decided, in config terms, for the audit log and messages:
  //   filesystem.allow "src"         filesystem.deny "secrets"
  //   filesystem.writable "out"      filesystem.writable = true
  //   sensitive path "**/.env"       default: project readable
  //   network.allow "https://api.github.com/repos/"
  //   commands.rg args ["-n", "**"]  commands.rm = false
  // Empty for kUncovered.
  std::string rule;
  // kUncovered and kDeny: how a user could allow this, naming the config
  // key, e.g. `add "src/gen" to filesystem.writable`. Shown in the
  // non-interactive denial message. Empty when nothing can allow it.
  std::string hint;
  // The grant `hint` describes, when one rule entry would allow the request
  // (not for a deny rule to remove, or an environment variable to list).
  std::optional<PolicyGrant> grant;

  static PolicyDecision Allow(std::string rule) { return {Decision::kAllow, std::move(rule), {}, {}}; }
  static PolicyDecision Deny(std::string rule, std::string hint = {}, std::optional<PolicyGrant> grant = {}) {
    return {Decision::kDeny, std::move(rule), std::move(hint), std::move(grant)};
  }
  static PolicyDecision Uncovered(std::string hint, std::optional<PolicyGrant> grant = {}) {
    return {Decision::kUncovered, {}, std::move(hint), std::move(grant)};
  }
};

}  // namespace toolvfs
