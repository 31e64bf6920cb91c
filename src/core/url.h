// URLs as the network policy sees them (SPEC.md §3.2 "Network").
//
// Both the tool's request URL and every `network.allow`/`network.deny`
// prefix are normalized the same way before they are compared, so spelling
// tricks (case, trailing dot, default port, percent-escapes, IDN) cannot
// make one URL look like another.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"

namespace toolvfs {

struct NormalizedUrl {
  std::string scheme;  // "http" | "https"
  std::string host;    // lowercase; IDNA A-label (punycode); no trailing dot;
                       // IPv6 literals without brackets, compressed form
  uint16_t port = 0;   // explicit, or 80 / 443 by scheme
  std::string path;    // starts with "/" ("/" when the URL has none); dot
                       // segments removed; unreserved escapes decoded,
                       // other escapes upper-case, unsafe bytes escaped
  std::string query;   // without "?" (request URLs only; prefixes have none)

  // "https://host:port/path?query" with the port omitted when default: the
  // exact target shown to the user and recorded in the audit log.
  std::string ToString() const;

  // The origin (scheme, host, port) — credentials are dropped when a
  // redirect changes it.
  bool SameOrigin(const NormalizedUrl& other) const;
};

// Parses and normalizes `url`. InvalidArgument naming the URL and the reason
// for: a scheme other than http/https, no host, userinfo ("a@b"), a NUL, CR,
// LF, other control character, space or backslash anywhere, a '%' in the
// host, a host that is not valid IDNA (checked after mapping, so "／" or a
// zero-width space cannot smuggle in a '/' or an empty label), a numeric
// host that is not a dotted-decimal quad ("127.1", "0x7f.1", "017.0.0.1"),
// a port outside 1-65535, a malformed percent-escape, a dot segment that
// servers resolve differently ("..%2F", "..;x", "//" with ".."), a
// fragment. IPv6 literals are compressed by inet_ntop; an IPv4-mapped one
// stays IPv6 ("::ffff:127.0.0.1" is not the host "127.0.0.1").
Result<NormalizedUrl> NormalizeUrl(std::string_view url);

// Whether `prefix` (a normalized allow/deny entry) covers `url`: same scheme,
// host and port, and the prefix's path is a segment-aware prefix of the
// URL's path ("/repos" covers "/repos" and "/repos/x", not "/repository";
// a prefix path ending in "/" covers everything below it).
bool UrlPrefixCovers(const NormalizedUrl& prefix, const NormalizedUrl& url);

}  // namespace toolvfs
