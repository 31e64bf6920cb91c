// The one table of toolvfs subcommands (like ninja's subtool table). A new
// command is one line here plus its New*Command() factory.
#include <iterator>

#include "cli/command.h"

namespace toolvfs {

std::span<const CommandInfo> Commands() {
  static const CommandInfo kCommands[] = {
      {"run", "Run a configured tool (from toolvfs.toml) once and print its result", NewRunCommand},
      {"exec", "Run a program as an ad-hoc vfs tool, without a config", NewExecCommand},
      {"tools", "List the configured tools with their runtime and source", NewToolsCommand},
      {"check", "Validate toolvfs.toml and print each tool's effective policy", NewCheckCommand},
      {"grep", "Search file contents with a regular expression (RE2 syntax)", NewGrepCommand},
      {"doctor", "Show which sandbox features this machine's kernel provides", NewDoctorCommand},
      {"workspace",
       "Durable workspaces: init, ls, cat, snapshot, snapshots, restore, snapshot-rm, diff, export, import, "
       "copy, rm, gc, reset, prompt, materialize",
       NewWorkspaceCommand},
      {"audit", "Print the audit log as a timeline, optionally only a tool's or the denied requests", NewAuditCommand},
      {"vfsd", "Serve one client files, pipes and temp files by handle over length-prefixed JSON frames", NewVfsdCommand},
      {"mcp", "Serve the configured and builtin tools to an MCP client over stdio or Streamable HTTP", NewMcpCommand},
  };
  return kCommands;
}

}  // namespace toolvfs
