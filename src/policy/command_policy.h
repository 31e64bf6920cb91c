// Command decisions for one tool (SPEC.md §3.1 `commands.*`, §3.2, §3.3):
// which programs `process.run` may start, with which arguments, and which
// variables each may receive.
//
// Thread safety: immutable after construction.
#pragma once

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

  // `program` is what the tool asked for: a bare name ("rg") is looked up
  // by name; a path ("/usr/bin/rg", "./x") is matched by its last
  // component only if that rule exists AND the caller resolved it to the
  // same file (the caller passes the bare name it resolved from).
  //   commands.NAME = false                     -> deny
  //   no rule for NAME                          -> uncovered
  //   a rule without `args`                     -> allow, any arguments
  //   a rule whose `args` has a list that equals `args`, or whose list ends
  //   in "**" and the rest is a prefix of `args` -> allow
  //   otherwise                                  -> uncovered, hint naming
  //                                                 commands.NAME.args
  // Arguments are compared as exact strings: `--pre=x` is not `--pre`.
  PolicyDecision Check(std::string_view program_name, std::span<const std::string> args) const;

  // The variables `program_name` may receive: the rule's `envs` minus loader
  // variables (LD_*, DYLD_*), which are never forwarded.
  std::vector<std::string> ForwardableVariables(std::string_view program_name) const;

  std::vector<std::string> Describe() const;

 private:
  std::map<std::string, CommandRule> rules_;
};

// Whether `name` is a loader variable that is never forwarded (LD_*, DYLD_*).
bool IsLoaderVariable(std::string_view name);

}  // namespace toolvfs
