// `toolvfs mcp --http ADDR:PORT`: the Streamable HTTP front of the MCP
// server (src/mcp/mcp_http_transport.h), with one session workspace per
// MCP session in the store of --session-store (docs/mcp.md, "Streamable
// HTTP"). mcp_command.cc declares these options and hands over how a
// session's tools are made.
#pragma once

#include <CLI/CLI.hpp>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/command.h"
#include "mcp/mcp_server.h"
#include "project/project_files.h"
#include "session/session_workspace.h"

namespace toolvfs {

struct McpHttpCommandOptions {
  std::optional<std::string> listen;  // --http ADDR:PORT; absent: stdio
  std::string session_store = "memory:";
  std::optional<std::string> token_file;
  std::vector<std::string> allowed_origins;
  bool keep_sessions = false;
  size_t max_body_bytes = size_t{4} << 20;
  double session_idle_timeout_seconds = 1800;
  double header_timeout_seconds = 10;
  size_t max_sessions = 32;
};

// Declares --http and the options that only apply with it.
void AddMcpHttpOptions(CLI::App& app, McpHttpCommandOptions& options);

// The tools one session serves, over that session's workspace; both
// outlive the returned host.
using McpSessionToolsFactory =
    std::function<std::unique_ptr<McpToolHost>(ProjectFiles& store, SessionWorkspace& workspace)>;

// Serves until SIGINT or SIGTERM; returns the exit code. Defined twice:
// mcp_http_serve.cc serves, in the toolvfs-mcp-http program;
// mcp_http_handoff.cc, in toolvfs, runs that program in its place with the
// same command line (the transport's library costs 3 MB resident that no
// other command needs: docs/install.md, "Libraries loaded on first use"). Errors in the
// options (address, token file, a non-loopback address without a token,
// an unknown session store) are one line on stderr and kExitUsage before
// anything listens. Prints "toolvfs mcp: listening on http://HOST:PORT/mcp"
// on stderr once it accepts connections.
int ServeMcpHttp(const McpHttpCommandOptions& options, const std::optional<SessionConfig>& session_config,
                 McpServerOptions server_options, McpSessionToolsFactory make_tools);

// Whether this program serves HTTP itself (toolvfs-mcp-http) or hands
// over to the program that does (toolvfs): the one that hands over does
// so before loading anything, so the config's warnings and the audit log's
// opening happen once, in the helper.
extern const bool kMcpHttpServedInThisProgram;

}  // namespace toolvfs
