#include "mcp/mcp_http_security.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cctype>
#include <optional>

#include "core/io.h"
#include "core/text.h"
#include "core/unique_fd.h"

namespace toolvfs {
namespace {

// "host[:port]" or "[v6]:port" split into the host (no brackets) and the
// port text (empty when there is none). False when the brackets do not
// close or something follows them other than ":port".
bool SplitHostPort(std::string_view text, std::string_view& host, std::string_view& port) {
  if (text.starts_with('[')) {
    const size_t close = text.find(']');
    if (close == std::string_view::npos) return false;
    host = text.substr(1, close - 1);
    std::string_view rest = text.substr(close + 1);
    if (rest.empty()) {
      port = {};
      return true;
    }
    if (!rest.starts_with(':')) return false;
    port = rest.substr(1);
    return true;
  }
  const size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) {
    host = text;
    port = {};
    return true;
  }
  // More than one colon without brackets is a bare IPv6 literal, no port.
  if (text.find(':') != colon) {
    host = text;
    port = {};
    return true;
  }
  host = text.substr(0, colon);
  port = text.substr(colon + 1);
  return true;
}

bool IsPortNumber(std::string_view text) {
  if (text.empty() || text.size() > 5) return false;
  unsigned value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return error == std::errc() && end == text.data() + text.size() && value <= 65535;
}

// `origin` normalized as the network policy normalizes URLs (case,
// trailing dot, IDN, the default port made explicit, so that https://x and
// https://x:443 are one origin), or nullopt when it is not an origin:
// scheme http or https and a host, with no path, query, fragment or
// credentials.
std::optional<NormalizedUrl> ParseOrigin(std::string_view origin) {
  const size_t scheme_end = origin.find("://");
  if (scheme_end == std::string_view::npos) return std::nullopt;
  const std::string_view authority = origin.substr(scheme_end + 3);
  if (authority.empty() || authority.find_first_of("/?#@") != std::string_view::npos) return std::nullopt;
  Result<NormalizedUrl> url = NormalizeUrl(origin);
  if (!url.ok()) return std::nullopt;
  return std::move(url).value();
}

}  // namespace

Result<HttpListenAddress> ParseHttpListenAddress(std::string_view text) {
  std::string_view host, port;
  if (!SplitHostPort(text, host, port) || port.empty()) {
    return Status(StatusCode::kInvalidArgument,
                  "--http " + Quote(text) + ": expected ADDR:PORT (e.g. 127.0.0.1:8080, [::1]:8080)");
  }
  if (host.empty()) {
    return Status(StatusCode::kInvalidArgument, "--http " + Quote(text) + ": the address before the port is empty");
  }
  if (!IsPortNumber(port)) {
    return Status(StatusCode::kInvalidArgument,
                  "--http " + Quote(text) + ": port " + Quote(port) + " is not a number from 0 to 65535");
  }
  unsigned value = 0;
  std::from_chars(port.data(), port.data() + port.size(), value);
  return HttpListenAddress{std::string(host), static_cast<uint16_t>(value)};
}

bool IsLoopbackHost(std::string_view host) {
  const std::string lower = AsciiLowercase(host);
  if (lower == "localhost" || lower.ends_with(".localhost")) return true;
  in_addr v4{};
  if (inet_pton(AF_INET, lower.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  if (inet_pton(AF_INET6, lower.c_str(), &v6) == 1) return IN6_IS_ADDR_LOOPBACK(&v6);
  return false;
}

Result<OriginAllowList> OriginAllowList::Make(const std::vector<std::string>& extra_origins) {
  OriginAllowList list;
  for (const std::string& origin : extra_origins) {
    std::optional<NormalizedUrl> normalized = ParseOrigin(origin);
    if (!normalized) {
      return Status(StatusCode::kInvalidArgument,
                    "--allow-origin " + Quote(origin) +
                        ": expected an origin, scheme://host[:port] with scheme http or https and no path");
    }
    list.extra_.push_back(std::move(*normalized));
  }
  return list;
}

bool OriginAllowList::Allows(std::string_view origin) const {
  if (origin.empty()) return true;
  const std::optional<NormalizedUrl> normalized = ParseOrigin(origin);
  if (!normalized) return false;  // "null" (sandboxed frames, file:) included
  for (const NormalizedUrl& allowed : extra_) {
    if (allowed.SameOrigin(*normalized)) return true;
  }
  return IsLoopbackHost(normalized->host);
}

std::string HostOfHostHeader(std::string_view value) {
  std::string_view host, port;
  if (!SplitHostPort(value, host, port)) return {};
  if (!port.empty() && !IsPortNumber(port)) return {};
  return std::string(host);
}

Result<std::string> ReadBearerTokenFile(const std::string& path) {
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY));
  if (fd.get() < 0) return ErrnoToStatus(errno, "--token-file " + Quote(path));
  // Like ssh with a private key: a token others can read (or replace) is
  // no secret.
  struct stat info {};
  if (fstat(fd.get(), &info) != 0) return ErrnoToStatus(errno, "--token-file " + Quote(path));
  if (S_ISREG(info.st_mode) && (info.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(info.st_mode & 07777));
    return Status(StatusCode::kPermissionDenied, "--token-file " + Quote(path) +
                                                     ": other users can read or change it (mode " + mode +
                                                     "); make it private: chmod 600 " + ShellQuoted(path));
  }
  TOOLVFS_ASSIGN_OR_RETURN(std::string content, ReadToEnd(fd.get(), 64 * 1024, "--token-file " + Quote(path)));
  const size_t begin = content.find_first_not_of(" \t\r\n");
  if (begin == std::string::npos) {
    return Status(StatusCode::kInvalidArgument, "--token-file " + Quote(path) + ": the file is empty");
  }
  const size_t end = content.find_last_not_of(" \t\r\n");
  std::string token = content.substr(begin, end - begin + 1);
  for (unsigned char c : token) {
    if (c <= 0x20 || c == 0x7f) {
      return Status(StatusCode::kInvalidArgument,
                    "--token-file " + Quote(path) + ": the token holds whitespace or a control character; "
                    "it must be one word");
    }
  }
  return token;
}

bool BearerTokenMatches(std::string_view authorization, std::string_view expected) {
  constexpr std::string_view kScheme = "bearer ";
  if (authorization.size() < kScheme.size() || AsciiLowercase(authorization.substr(0, kScheme.size())) != kScheme) {
    return false;
  }
  std::string_view given = authorization.substr(kScheme.size());
  // Every byte of the expected token is compared whatever the given one
  // holds, so the time depends on the expected length only.
  unsigned char difference = given.size() == expected.size() ? 0 : 1;
  for (size_t i = 0; i < expected.size(); ++i) {
    const unsigned char given_byte = i < given.size() ? static_cast<unsigned char>(given[i]) : 0;
    difference |= static_cast<unsigned char>(given_byte ^ static_cast<unsigned char>(expected[i]));
  }
  return difference == 0;
}

size_t HttpHeaderBlockScanner::Feed(std::string_view bytes) {
  size_t taken = 0;
  while (taken < bytes.size() && !complete_) {
    const char byte = bytes[taken++];
    if (byte == '\n') {
      if (request_line_read_ && line_length_ == 1 && line_starts_with_cr_) complete_ = true;
      request_line_read_ = true;
      line_length_ = 0;
      continue;
    }
    if (line_length_ == 0) line_starts_with_cr_ = byte == '\r';
    if (line_length_ < 2) ++line_length_;
  }
  header_bytes_ += taken;
  return taken;
}

void PeerWaitLimit::Slot::Release() {
  if (owner_ != nullptr) std::exchange(owner_, nullptr)->Give(peer_);
}

PeerWaitLimit::Slot PeerWaitLimit::TryTake(const std::string& peer) {
  std::lock_guard lock(mutex_);
  size_t& count = waiting_[peer];
  if (count >= limit_per_peer_) {
    if (count == 0) waiting_.erase(peer);  // a limit of 0 takes nobody
    return Slot();
  }
  ++count;
  return Slot(this, peer);
}

void PeerWaitLimit::Give(const std::string& peer) {
  std::lock_guard lock(mutex_);
  auto found = waiting_.find(peer);
  if (found == waiting_.end()) return;
  if (--found->second == 0) waiting_.erase(found);
}

size_t PeerWaitLimit::waiting(const std::string& peer) const {
  std::lock_guard lock(mutex_);
  auto found = waiting_.find(peer);
  return found == waiting_.end() ? 0 : found->second;
}

}  // namespace toolvfs
