// The checks `toolvfs mcp --http` makes before a request reaches an MCP
// session (docs/mcp.md, "Security"): where it may listen, which browser
// origins and Host names it serves (DNS-rebinding protection, as the MCP
// Streamable HTTP transport requires), and the bearer token. Pure
// functions over strings, so each rule is tested on its own
// (tests/mcp/mcp_http_test.cc).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "core/url.h"

namespace toolvfs {

// Where to listen: "127.0.0.1:8080", "localhost:0", "[::1]:8080",
// "0.0.0.0:8080". Port 0 asks the kernel for a free port.
struct HttpListenAddress {
  std::string host;  // without the brackets of an IPv6 literal
  uint16_t port = 0;
};

// Parses ADDR:PORT; InvalidArgument naming the value and what is wrong
// (no port, a port that is not a number in 0..65535, an empty host).
Result<HttpListenAddress> ParseHttpListenAddress(std::string_view text);

// Whether `host` (a name or an IP literal, without brackets) can only be
// reached from this machine: "localhost", 127.0.0.0/8, ::1.
bool IsLoopbackHost(std::string_view host);

// The browser origins a server accepts requests from: every loopback
// origin (http or https, any port) plus the exact origins given
// (`--allow-origin`, "scheme://host[:port]"), both normalized as the
// network policy normalizes URLs (core/url.h: case, a trailing dot, IDN,
// the default port, so https://x and https://x:443 are one origin).
class OriginAllowList {
 public:
  // InvalidArgument naming an entry that is not "http(s)://host[:port]"
  // (a path, a query, a "*", an empty host).
  static Result<OriginAllowList> Make(const std::vector<std::string>& extra_origins);

  // A request without an Origin header comes from no browser page and is
  // allowed (`origin` empty); a present one must be on the list.
  bool Allows(std::string_view origin) const;

 private:
  std::vector<NormalizedUrl> extra_;
};

// The host part of a Host header value ("localhost:8080" -> "localhost",
// "[::1]:80" -> "::1"); empty when it cannot be read.
std::string HostOfHostHeader(std::string_view value);

// Reads a bearer token file: its content without surrounding whitespace.
// InvalidArgument when it is empty or holds whitespace or control
// characters inside (a token is one word); the error names the file.
Result<std::string> ReadBearerTokenFile(const std::string& path);

// Whether `authorization` (an Authorization header value) is "Bearer
// TOKEN" for `expected`. The comparison takes the same time wherever the
// first difference lies, so the token cannot be guessed byte by byte.
bool BearerTokenMatches(std::string_view authorization, std::string_view expected);

}  // namespace toolvfs
