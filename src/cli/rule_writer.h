// The "s" answer of a question on the terminal: an allow rule written into
// the run's toolvfs.toml, with the file's formatting kept
// (config/config_edit.h). docs/policy.md describes what is written where.
#pragma once

#include <memory>
#include <string>

#include "policy/inquirer.h"

namespace toolvfs {

// A RuleWriter for the config file at `config_path`: a read is saved in
// filesystem.allow, a write in filesystem.writable (the exact path; "."
// for the root), a GET or POST in network.allow (the URL without query or
// fragment). The proposal is refused when the edited text would not parse
// (CheckConfigText); Apply writes a temporary file next to the config
// (same mode) and renames it over the file the path leads to, after
// checking the file did not change since Propose read it.
std::unique_ptr<RuleWriter> NewConfigRuleWriter(std::string config_path);

}  // namespace toolvfs
