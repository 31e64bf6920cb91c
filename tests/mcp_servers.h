// Where scripts/install-mcp-servers.sh puts the official MCP reference
// servers (@modelcontextprotocol/server-everything, server-filesystem), found
// the way the script finds it: $TOOLVFS_MCP_SERVERS_DIR, else
// ${XDG_CACHE_HOME:-$HOME/.cache}/toolvfs/npm, else (with neither variable
// set) the directory CMake saw at configure time, if the including target
// defines TOOLVFS_MCP_SERVERS_DEFAULT_DIR. Shared by the MCP client tests
// and protocol_bench, which measures server-filesystem for scale.
#pragma once

#include <cstdlib>
#include <string>
#include <string_view>

namespace toolvfs {

inline std::string McpServersDirectory() {
  const auto set = [](const char* name) -> const char* {
    const char* value = std::getenv(name);
    return value != nullptr && value[0] != '\0' ? value : nullptr;
  };
  if (const char* configured = set("TOOLVFS_MCP_SERVERS_DIR")) return configured;
  if (const char* cache = set("XDG_CACHE_HOME")) return std::string(cache) + "/toolvfs/npm";
  if (const char* home = set("HOME")) return std::string(home) + "/.cache/toolvfs/npm";
#ifdef TOOLVFS_MCP_SERVERS_DEFAULT_DIR
  return TOOLVFS_MCP_SERVERS_DEFAULT_DIR;
#else
  return "";
#endif
}

// The entry script of one server package, e.g. "server-filesystem".
inline std::string McpServerScript(std::string_view package) {
  return McpServersDirectory() + "/node_modules/@modelcontextprotocol/" + std::string(package) + "/dist/index.js";
}

}  // namespace toolvfs
