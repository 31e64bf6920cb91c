// cpp-httplib's server with the header phase of every request bounded
// (docs/mcp.md, "Bounded"). cpp-httplib 0.11.4 reads a request's headers
// with a timeout per recv but no deadline for the whole block and no cap
// on its size, before any handler (the token check included) runs: a
// client sending a byte a second holds a worker for as long as it likes,
// and endless header lines grow the server's memory. This server runs
// each connection's keep-alive loop itself (the library's loop, same
// semantics: wait for the next request up to the keep-alive timeout, stop
// when the server stops, at most the keep-alive count of requests) over
// its own Stream (a connection waiting for a request or its headers also
// notices within 50 ms that the server stops), which
//   - ends the connection when a request's header block is not complete
//     `header_timeout` after the request began (the connection's start
//     for its first request, the first byte of each later one), with 408;
//   - ends it when the header block grows beyond `max_header_bytes`
//     (request line included), with 431, having handed the library no
//     more than that;
//   - lets at most `max_waiting_per_peer` connections of one peer address
//     wait for a request at once (PeerWaitLimit): more are closed when
//     they start to wait, with 503 for a new one.
// After the header block the body and the answer go through unchanged
// (the library's per-recv read timeout and write timeout).
//
// Overriding works because process_and_close_socket is virtual (private,
// which C++ lets a derived class override) and the library's accept loop,
// compiled into libcpp-httplib.so, calls it through the vtable;
// process_request, which parses and answers one request, is protected.
#pragma once

#include <httplib.h>

#include <chrono>
#include <cstddef>

#include "mcp/mcp_http_security.h"

namespace toolvfs {

struct HttpHeaderLimits {
  std::chrono::milliseconds header_timeout = std::chrono::seconds(10);
  size_t max_header_bytes = size_t{64} << 10;
  size_t max_waiting_per_peer = 32;
};

class GuardedHttpServer : public httplib::Server {
 public:
  explicit GuardedHttpServer(HttpHeaderLimits limits) : limits_(limits), waiting_(limits.max_waiting_per_peer) {}

 private:
  // Serves one accepted connection until it closes, the server stops, a
  // limit above is exceeded or the keep-alive count is spent; then closes
  // it. True when its last request was answered.
  bool process_and_close_socket(socket_t sock) override;

  const HttpHeaderLimits limits_;
  PeerWaitLimit waiting_;
};

}  // namespace toolvfs
