// The options of `toolvfs mcp --http` (mcp_http_serve.h), apart from the
// transport: both programs declare them (toolvfs hands --http over to
// toolvfs-mcp-http, mcp_http_handoff.cc).
#include <CLI/CLI.hpp>

#include "cli/mcp_http_serve.h"

namespace toolvfs {

void AddMcpHttpOptions(CLI::App& app, McpHttpCommandOptions& options) {
  // The others mean nothing over stdio: given without --http they are a
  // usage error rather than silently ignored.
  CLI::Option* http = app.add_option("--http", options.listen,
                                     "Serve MCP over Streamable HTTP at ADDR:PORT (endpoint /mcp) instead of "
                                     "stdio; port 0 picks a free one")
                          ->type_name("ADDR:PORT");
  app.add_option("--session-store", options.session_store,
                 "With --http: where each MCP session's workspace lives: memory: (default), sqlite:FILE or "
                 "postgres://… (one workspace per session, named after its id)")
      ->type_name("URI")
      ->needs(http);
  app.add_option("--token-file", options.token_file,
                 "With --http: every request must carry Authorization: Bearer <the token in FILE> "
                 "(required to listen beyond loopback)")
      ->type_name("FILE")
      ->needs(http);
  app.add_option("--allow-origin", options.allowed_origins,
                 "With --http: also accept requests from this browser origin (scheme://host[:port]; "
                 "repeatable; loopback origins are always accepted)")
      ->type_name("ORIGIN")
      ->needs(http);
  app.add_flag("--keep-sessions", options.keep_sessions,
               "With --http: keep a session's workspace in the session store when the session ends")
      ->needs(http);
  app.add_option("--max-body-bytes", options.max_body_bytes,
                 "With --http: refuse request bodies beyond this size with 413 (default 4194304)")
      ->check(CLI::PositiveNumber)
      ->needs(http);
  app.add_option("--session-idle-timeout", options.session_idle_timeout_seconds,
                 "With --http: end a session unused for this many seconds (default 1800)")
      ->check(CLI::PositiveNumber)
      ->needs(http);
  app.add_option("--header-timeout", options.header_timeout_seconds,
                 "With --http: end a connection whose request line and headers have not all arrived this many "
                 "seconds after the request began, with 408 (default 10)")
      ->check(CLI::PositiveNumber)
      ->needs(http);
  app.add_option("--max-sessions", options.max_sessions,
                 "With --http: sessions open at once; initialize beyond gets 503 (default 32)")
      ->check(CLI::PositiveNumber)
      ->needs(http);
}

}  // namespace toolvfs
