// The checks `toolvfs mcp --http` makes before a request reaches an MCP
// session (docs/mcp.md, "Security"): where it may listen, which browser
// origins and Host names it serves (DNS-rebinding protection, as the MCP
// Streamable HTTP transport requires), the bearer token, where a request's
// header block ends and how many connections of one peer may wait for
// theirs. Pure functions over strings (and one counter), so each rule is
// tested on its own (tests/mcp/mcp_http_test.cc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
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

// Finds where the header block of an HTTP/1.1 request ends in the bytes a
// server reads, by the rule of cpp-httplib 0.11.4 (the server that parses
// them): lines end at "\n"; after the first line (the request line) the
// first line that is exactly "\r\n" ends the block. A bare "\n" line is
// skipped there, not an end, so it is not one here either. Fed the bytes
// in the order read, any split; Reset() for the next request.
class HttpHeaderBlockScanner {
 public:
  void Reset() { *this = HttpHeaderBlockScanner(); }

  // Takes the bytes that follow those fed before; returns how many of
  // them belong to the header block: all while it goes on, up to and
  // including its last "\n" once it ends.
  size_t Feed(std::string_view bytes);

  bool complete() const { return complete_; }
  // Header bytes fed so far, the request line included.
  size_t header_bytes() const { return header_bytes_; }

 private:
  bool complete_ = false;
  bool request_line_read_ = false;
  size_t line_length_ = 0;  // bytes of the current line so far, counted up to 2
  bool line_starts_with_cr_ = false;
  size_t header_bytes_ = 0;
};

// The connections of each peer address that wait for a request (from the
// accept, or the end of their previous answer, until the request's header
// block is read): at most `limit_per_peer` at once per address, so one
// client cannot hold every worker of the server with connections that
// send nothing useful. Connections past their headers (streams, calls in
// progress) do not count: the token check has seen them. Thread-safe.
class PeerWaitLimit {
 public:
  explicit PeerWaitLimit(size_t limit_per_peer) : limit_per_peer_(limit_per_peer) {}

  // One waiting connection of a peer; frees its place when destroyed.
  class Slot {
   public:
    Slot() = default;
    Slot(Slot&& other) noexcept : owner_(std::exchange(other.owner_, nullptr)), peer_(std::move(other.peer_)) {}
    Slot& operator=(Slot&& other) noexcept {
      if (this != &other) {
        Release();
        owner_ = std::exchange(other.owner_, nullptr);
        peer_ = std::move(other.peer_);
      }
      return *this;
    }
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;
    ~Slot() { Release(); }

    // Whether the place was given (false when the peer had none left).
    explicit operator bool() const { return owner_ != nullptr; }
    void Release();

   private:
    friend class PeerWaitLimit;
    Slot(PeerWaitLimit* owner, std::string peer) : owner_(owner), peer_(std::move(peer)) {}
    PeerWaitLimit* owner_ = nullptr;
    std::string peer_;
  };

  // A place for one more waiting connection of `peer` (an IP address as
  // text); an empty Slot when it has `limit_per_peer` already.
  Slot TryTake(const std::string& peer);

  size_t waiting(const std::string& peer) const;
  size_t limit_per_peer() const { return limit_per_peer_; }

 private:
  void Give(const std::string& peer);

  const size_t limit_per_peer_;
  mutable std::mutex mutex_;
  std::map<std::string, size_t, std::less<>> waiting_;  // peers with none are erased
};

}  // namespace toolvfs
