// An AccessGate with the default policy (a tool without a sandbox table:
// the project readable, everything else uncovered and denied without
// asking), for tests that exercise the methods rather than the policy.
#pragma once

#include <memory>
#include <optional>

#include "config/config.h"
#include "host/access_gate.h"
#include "policy/inquirer.h"
#include "policy/tool_policy.h"

namespace toolvfs {

struct DefaultGate {
  explicit DefaultGate(ToolConfig tool_config = {}) : tool(std::move(tool_config)) {}
  ToolConfig tool;
  ToolPolicy policy = ToolPolicy::ForTool(tool, std::nullopt);
  std::unique_ptr<Inquirer> inquirer = NewDenyingInquirer();
  AccessGate gate{policy, *inquirer};
};

}  // namespace toolvfs
