// An AccessGate with the default policy, or the policy of `tool_config` (a tool without a sandbox table:
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

// A tool whose policy lets it read and write the whole project (sensitive
// paths excepted): for tests of what the methods do once allowed.
inline ToolConfig ProjectWritableTool() {
  ToolConfig tool;
  tool.name = "test";
  tool.has_sandbox_table = true;
  tool.sandbox.filesystem_allow = {""};
  tool.sandbox.filesystem_writable.all = true;
  return tool;
}

struct DefaultGate {
  explicit DefaultGate(ToolConfig tool_config = {}) : tool(std::move(tool_config)) {}
  ToolConfig tool;
  ToolPolicy policy = ToolPolicy::ForTool(tool, std::nullopt);
  std::unique_ptr<Inquirer> inquirer = NewDenyingInquirer();
  AccessGate gate{policy, *inquirer};
};

}  // namespace toolvfs
