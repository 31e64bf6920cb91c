// What tools/list says about a tool beyond its input schema: the MCP
// annotations (readOnlyHint, destructiveHint, idempotentHint,
// openWorldHint) and the output schema of a structured result. True for
// each builtin (written down here, next to the result shapes the builtin
// runtime and the session tools produce), and derived from the policy for
// a configured tool. docs/mcp.md, "Tool metadata".
#pragma once

#include <string>
#include <string_view>

#include "config/config.h"
#include "mcp/mcp_server.h"

namespace toolvfs {

struct McpToolTraits {
  McpToolAnnotations annotations;
  std::string output_schema_json;  // empty: the result is not structured
};

// The traits of the builtin `name` as it runs on this project: on a
// session workspace (`session_workspace`) list_directory, read_file,
// write_file and delete_file are the session suite's tools, with their own
// JSON results. Unknown names get no traits.
McpToolTraits BuiltinToolTraits(std::string_view name, bool session_workspace);

// The annotations of a configured tool run by a process (vfs or stdio), as
// its policy allows: no write grant (filesystem.writable false or empty;
// the programs it may run are confined to the same grants) is
// readOnlyHint; with write grants the tool may overwrite
// (destructiveHint); network grants are openWorldHint. idempotentHint is
// left out: nothing in the config says. A write the user allows through
// an approval is not a grant: the hints describe the configured policy.
McpToolAnnotations AnnotationsFromPolicy(const ToolConfig& tool);

}  // namespace toolvfs
