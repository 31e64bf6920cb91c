// Command decisions for one tool (SPEC.md §3.1 `commands.*`, §3.2, §3.3):
// which programs `process.run` may start, with which arguments, and which
// variables each may receive.
//
// Thread safety: immutable after construction.
#pragma once

#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"
#include "policy/decision.h"

namespace toolvfs {

class CommandPolicy {
 public:
  static CommandPolicy ForTool(const ToolConfig& tool);

  // `program_name` is the name rules are keyed by: the bare name ("rg")
  // when the program is the one the host's PATH finds for that name (the
  // caller resolves; "/usr/bin/rg" passes "rg" if PATH finds that file),
  // else the absolute path as requested, which only a rule keyed by that
  // exact path covers, and which `commands.BASENAME = false` still denies.
  //   commands.NAME = false                     -> deny
  //   no rule for NAME                          -> uncovered, hint
  //                                                 `add a commands.NAME rule`
  //   a rule without `args`                     -> allow, any arguments
  //   a rule whose `args` has a list that equals `args`, or whose list ends
  //   in "**" and the rest is a prefix of `args` -> allow
  //   otherwise                                  -> uncovered, hint
  //                        `add ["--pre", "x"] to commands.NAME.args`
  //                        (exactly the arguments asked for)
  // Arguments are compared as exact strings: `--pre=x` is not `--pre`, and
  // "**" is a wildcard only as the last element of a rule's list.
  PolicyDecision Check(std::string_view program_name, std::span<const std::string> args) const;

  // The variables `program_name` may receive: the rule's `envs` minus loader
  // variables (LD_*, DYLD_*), which are never forwarded.
  std::vector<std::string> ForwardableVariables(std::string_view program_name) const;

  // Whether a request for `program_name` may ask for `requested` variables:
  // allow ("commands.NAME.envs") when each is forwardable or a loader
  // variable (accepted, dropped: SPEC.md §3.2), else deny naming the first
  // other one, e.g. rule "commands.env.envs", hint `"TOKEN" is not listed;
  // add it to commands.env.envs to forward it`. The user is never asked: a
  // secret is forwarded by the config or not at all.
  PolicyDecision CheckEnvironment(std::string_view program_name,
                                  std::span<const std::string> requested) const;

  // One line per rule, for `toolvfs check`, e.g.
  //   commands.cargo args [["check", "**"]] envs ["CARGO_TERM_COLOR"]
  std::vector<std::string> Describe() const;

 private:
  const CommandRule* FindRule(std::string_view program_name) const;

  std::map<std::string, CommandRule, std::less<>> rules_;
};

// Whether `name` is a loader variable that is never forwarded (LD_*, DYLD_*).
bool IsLoaderVariable(std::string_view name);

}  // namespace toolvfs
