// The Streamable HTTP transport of `toolvfs mcp --http` (MCP specification
// 2025-11-25, "Transports"; SPEC.md §9; docs/mcp.md, "Streamable HTTP").
//
// One endpoint, /mcp:
//   POST    one JSON-RPC message. A request is answered with JSON when its
//           answer is ready at once, else with an SSE stream that carries
//           what the server sends about it (progress, questions) and ends
//           with the answer; a notification or a response gets 202.
//   GET     the session's own SSE stream, for server messages that belong
//           to no open POST (one per session; 409 for a second).
//   DELETE  ends the session (its running calls are cancelled).
// `initialize` without a session makes one: the answer carries its
// `Mcp-Session-Id`, every later request must carry it (400 without, 404
// for an unknown or ended one). An `MCP-Protocol-Version` header must
// name a version this server speaks (400 otherwise). Resumption
// (Last-Event-ID) is not offered.
//
// Each session has its own McpServer over its own tool host, made by the
// McpHttpSessionFactory at initialize and destroyed when the session ends
// (DELETE, idle expiry, shutdown). The transport talks to the server only
// through Submit and the McpSend it hands it.
//
// Before any of that every request passes the checks of
// mcp_http_security.h: bearer token (401), Origin and, on a loopback
// listener, Host (403), body size (413). Before those, while its headers
// are read, it is bounded in time and size (408, 431), and one peer
// address may have only so many connections waiting for a request (503):
// mcp_http_guarded_server.h.
//
// Thread safety: Serve() blocks the caller; Stop() may be called from any
// thread, once Serve() runs or before.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "mcp/mcp_http_security.h"
#include "mcp/mcp_server.h"

namespace toolvfs {

// What one MCP session serves: its tools (over its own workspace) and the
// instructions its initialize answer carries. Destroying it ends the
// session's resources (removes its workspace unless the command keeps it).
class McpHttpSession {
 public:
  virtual ~McpHttpSession() = default;
  virtual McpToolHost& tools() = 0;
  virtual std::string instructions() = 0;
};

// Makes the session `session_id` at its initialize; an error is answered
// to the client as a JSON-RPC error (-32603) naming it, with HTTP 409 for
// AlreadyExists (the session's workspace is there already) and 500 for the
// rest, logged on stderr, and no session is kept. Called on the request's
// thread, possibly several at once.
using McpHttpSessionFactory =
    std::function<Result<std::unique_ptr<McpHttpSession>>(const std::string& session_id)>;

struct McpHttpOptions {
  HttpListenAddress address{"127.0.0.1", 0};
  OriginAllowList allowed_origins;
  // Every request must carry "Authorization: Bearer TOKEN" when set.
  std::optional<std::string> bearer_token;
  // A request body beyond this is refused with 413.
  size_t max_body_bytes = size_t{4} << 20;
  // A session nobody used (no request, no open stream, no running call)
  // for this long ends as if deleted.
  std::chrono::milliseconds session_idle_timeout = std::chrono::minutes(30);
  // initialize beyond this many open sessions gets 503.
  size_t max_sessions = 32;
  // An open SSE stream gets a comment line this often, so a vanished
  // client is noticed and its stream closed.
  std::chrono::milliseconds heartbeat_interval = std::chrono::seconds(15);
  // Messages kept for a session's GET stream while none is open.
  size_t max_backlog_messages = 1000;
  // A request's line and headers must have arrived this long after the
  // request began (the connection reached a worker, for its first
  // request; its first byte, for a later one), else 408 and the
  // connection ends.
  std::chrono::milliseconds header_timeout = std::chrono::seconds(10);
  // A request line and headers beyond this many bytes: 431, and the
  // connection ends.
  size_t max_header_bytes = size_t{64} << 10;
  // Connections of one peer address waiting for a request (not yet past
  // their headers) at once; more are closed (503 for a new one).
  size_t max_waiting_connections_per_peer = 32;
};

class McpHttpTransport {
 public:
  // Binds the listening socket (so port() is known before Serve()).
  // InvalidArgument for an address that cannot be bound, naming it and why.
  static Result<std::unique_ptr<McpHttpTransport>> Bind(McpHttpOptions options, McpServerOptions server_options,
                                                        McpHttpSessionFactory factory);
  ~McpHttpTransport();

  McpHttpTransport(const McpHttpTransport&) = delete;
  McpHttpTransport& operator=(const McpHttpTransport&) = delete;

  // The port actually bound (the kernel's choice for port 0).
  uint16_t port() const;

  // Serves until Stop(); then ends every session and returns. An error
  // when the listener fails.
  Status Serve();

  // Ends Serve(): open streams close, sessions end. Idempotent.
  void Stop();

  // Sessions open now (for tests and the log).
  size_t session_count() const;

 private:
  class Impl;
  explicit McpHttpTransport(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace toolvfs
