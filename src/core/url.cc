// URL normalization for the network policy (url.h).
//
// One parser for both sides of every comparison: the tool's request URL,
// each redirect hop and the allow/deny prefixes. It is deliberately
// narrower than WHATWG or curl: whatever two parsers could read differently
// (a backslash, a '%' in the host, the numeric host forms inet_aton accepts,
// user information, a dot segment hidden behind ';' or an encoded slash) is
// an error instead of a guess. The host hands curl ToString() of the result,
// so the URL fetched is the URL checked.
#include "core/url.h"

#include <arpa/inet.h>
#include <idn2.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/idn2_library.h"
#include "core/text.h"

namespace toolvfs {
namespace {

constexpr uint16_t kHttpPort = 80;
constexpr uint16_t kHttpsPort = 443;

bool IsAsciiAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsHexDigit(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// RFC 3986 unreserved: an escape of one of these means the character itself.
bool IsUnreserved(char c) {
  return IsAsciiAlpha(c) || IsDigit(c) || c == '-' || c == '.' || c == '_' || c == '~';
}

// What may stand unescaped in a path segment (RFC 3986 pchar less '%'), or
// in a query, which also allows '/' and '?'.
bool MayStayLiteral(char c, bool in_query) {
  if (IsUnreserved(c)) return true;
  if (std::string_view("!$&'()*+,;=:@/").find(c) != std::string_view::npos) return true;
  return in_query && c == '?';
}

int HexValue(char c) {
  if (IsDigit(c)) return c - '0';
  return (c | 0x20) - 'a' + 10;
}

void AppendEscape(std::string& out, unsigned char byte) {
  constexpr std::string_view kHex = "0123456789ABCDEF";
  out += '%';
  out += kHex[byte >> 4];
  out += kHex[byte & 0xF];
}

// Errors name the URL as the tool (or the config) wrote it.
class UrlError {
 public:
  explicit UrlError(std::string_view url) : url_(url) {}
  Status operator()(std::string_view why) const {
    return InvalidArgumentError("URL " + Quote(url_) + " " + std::string(why));
  }

 private:
  std::string_view url_;
};

Status CheckCharacters(std::string_view url, const UrlError& invalid) {
  for (char c : url) {
    auto byte = static_cast<unsigned char>(c);
    if (byte == 0) return invalid("contains a NUL byte");
    if (c == '\r' || c == '\n') return invalid("contains a line break (CR or LF)");
    if (byte < 0x20 || byte == 0x7F) return invalid("contains a control character");
    if (c == ' ') return invalid("contains a space; percent-encode it as %20");
    if (c == '\\') return invalid("contains a backslash");
  }
  return OkStatus();
}

// `text` (a path or a query) in one spelling: escapes of unreserved
// characters decoded, other escapes with upper-case hex, and every byte
// that may not stand literally (non-ASCII, '"', '<', '{', ...) escaped.
Result<std::string> NormalizeEscapes(std::string_view text, bool in_query, const UrlError& invalid) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '%') {
      if (i + 2 >= text.size() || !IsHexDigit(text[i + 1]) || !IsHexDigit(text[i + 2])) {
        return invalid("has a malformed percent-escape (a '%' not followed by two hex digits)");
      }
      auto byte = static_cast<unsigned char>(HexValue(text[i + 1]) * 16 + HexValue(text[i + 2]));
      if (IsUnreserved(static_cast<char>(byte))) {
        out += static_cast<char>(byte);
      } else {
        AppendEscape(out, byte);
      }
      i += 2;
    } else if (MayStayLiteral(c, in_query)) {
      out += c;
    } else {
      AppendEscape(out, static_cast<unsigned char>(c));
    }
  }
  return out;
}

std::vector<std::string_view> Split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    size_t end = text.find(separator, start);
    parts.push_back(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

bool IsDotSegment(std::string_view segment) { return segment == "." || segment == ".."; }

// Servers disagree on what these mean, so a prefix check on our reading
// could pass a path another server resolves outside the prefix:
//  - a dot segment behind an encoded slash or backslash ("..%2Fadmin"),
//    which servers that decode before resolving (nginx) climb out with;
//  - a dot segment with path parameters ("..;x"), which Tomcat treats as "..";
//  - "//" together with a dot segment: servers that merge slashes first
//    resolve "/a//../b" to "/b", the others to "/a/b".
Status CheckUnambiguousSegments(std::string_view path, const UrlError& invalid) {
  bool has_empty_segment = false;
  bool has_dot_segment = false;
  std::vector<std::string_view> segments = Split(path.substr(1), '/');
  for (size_t i = 0; i < segments.size(); ++i) {
    std::string_view segment = segments[i];
    if (segment.empty() && i + 1 < segments.size()) has_empty_segment = true;
    if (IsDotSegment(segment)) {
      has_dot_segment = true;
      continue;
    }
    // The pieces between encoded slashes, each up to its first ';'.
    std::string pieces(segment);
    for (std::string_view separator : {"%2F", "%5C"}) {
      for (size_t at = pieces.find(separator); at != std::string::npos; at = pieces.find(separator)) {
        pieces.replace(at, separator.size(), "/");
      }
    }
    for (std::string_view piece : Split(pieces, '/')) {
      if (IsDotSegment(piece.substr(0, piece.find(';')))) {
        return invalid("has a dot segment hidden behind an encoded slash or a ';' (" + Quote(segment) +
                       "), which servers resolve differently");
      }
    }
  }
  if (has_empty_segment && has_dot_segment) {
    return invalid("has both an empty segment ('//') and a dot segment, which servers resolve differently");
  }
  return OkStatus();
}

// RFC 3986 §5.2.4 on a path starting with "/": "." and ".." segments
// removed, ".." never climbing above the root.
std::string RemoveDotSegments(std::string_view path) {
  std::vector<std::string_view> kept;
  std::vector<std::string_view> segments = Split(path.substr(1), '/');
  for (size_t i = 0; i < segments.size(); ++i) {
    bool last = i + 1 == segments.size();
    if (IsDotSegment(segments[i])) {
      if (segments[i] == ".." && !kept.empty()) kept.pop_back();
      if (last) kept.push_back("");  // "/a/.." is the directory "/"
    } else {
      kept.push_back(segments[i]);
    }
  }
  std::string out;
  for (std::string_view segment : kept) {
    out += '/';
    out += segment;
  }
  return out.empty() ? "/" : out;
}

Result<std::string> NormalizePath(std::string_view path, const UrlError& invalid) {
  if (path.empty()) return std::string("/");
  TOOLVFS_ASSIGN_OR_RETURN(std::string escaped, NormalizeEscapes(path, /*in_query=*/false, invalid));
  TOOLVFS_RETURN_IF_ERROR(CheckUnambiguousSegments(escaped, invalid));
  return RemoveDotSegments(escaped);
}

// The bracketed literal without its brackets, in inet_ntop's compressed
// form. An IPv4-mapped address stays IPv6 ("::ffff:127.0.0.1"): see
// NetworkPolicy for how deny rules treat it.
Result<std::string> NormalizeIpv6(std::string_view literal, const UrlError& invalid) {
  if (literal.find('%') != std::string_view::npos) {
    return invalid("has a '%' in the host (IPv6 zone identifiers are not supported)");
  }
  in6_addr address{};
  if (inet_pton(AF_INET6, std::string(literal).c_str(), &address) != 1) {
    return invalid("has a malformed IPv6 address in the host");
  }
  char text[INET6_ADDRSTRLEN] = {};
  inet_ntop(AF_INET6, &address, text, sizeof(text));
  return std::string(text);
}

// WHATWG's "ends in a number": a last label of digits, or of 0x and hex
// digits. Such a host is an IPv4 address to browsers and inet_aton (which
// also read "127.1", "0x7f.1" and "017.0.0.1" as addresses).
bool EndsInNumber(std::string_view host) {
  std::string_view last = host.substr(host.rfind('.') + 1);  // npos + 1 == 0: the whole host
  if (last.empty()) return false;
  if (last.find_first_not_of("0123456789") == std::string_view::npos) return true;
  return last.starts_with("0x") &&
         last.substr(2).find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

// Four decimal parts 0-255 without leading zeros: the one spelling of an
// IPv4 address every parser reads alike.
bool IsDottedDecimalQuad(std::string_view host) {
  std::vector<std::string_view> parts = Split(host, '.');
  if (parts.size() != 4) return false;
  for (std::string_view part : parts) {
    if (part.empty() || part.size() > 3) return false;
    if (part.find_first_not_of("0123456789") != std::string_view::npos) return false;
    if (part.size() > 1 && part[0] == '0') return false;
    if (std::atoi(std::string(part).c_str()) > 255) return false;
  }
  return true;
}

// Whether lowercase `host` needs libidn2: it has a non-ASCII byte, or a
// label that is an A-label already ("xn--", whose punycode is checked).
// Any other host is ASCII that IDNA leaves as it is, checked by
// AsciiHostIdnaError instead, so that an ASCII URL never opens the
// library (core/idn2_library.h).
bool NeedsIdnaConversion(std::string_view host) {
  for (char c : host) {
    if (static_cast<unsigned char>(c) >= 0x80) return true;
  }
  return host.starts_with("xn--") || host.find(".xn--") != std::string_view::npos;
}

// What libidn2 (UTS #46, non-transitional) refuses in an ASCII host
// without A-labels, with its message; nullopt when it would accept it.
// In libidn2's order (tests/core/url_library_test.cc holds the two to
// each other): a host of 255 bytes or more (its trailing dot counted),
// the hyphen rules of every label, the labels' lengths, then the name's
// (its trailing dot not counted).
std::optional<std::string_view> AsciiHostIdnaError(std::string_view host) {
  const std::string_view name = host.ends_with('.') ? host.substr(0, host.size() - 1) : host;
  const auto labels = [&](auto&& check) -> std::optional<std::string_view> {
    for (std::string_view rest = name;;) {
      const size_t dot = rest.find('.');
      if (std::optional<std::string_view> error = check(rest.substr(0, dot))) return error;
      if (dot == std::string_view::npos) return std::nullopt;
      rest.remove_prefix(dot + 1);
    }
  };
  constexpr std::string_view kNameTooLong = "domain name longer than 255 characters";
  if (host.size() > 254) return kNameTooLong;
  if (auto error = labels([](std::string_view label) -> std::optional<std::string_view> {
        if (label.substr(std::min<size_t>(2, label.size())).starts_with("--")) {
          return "string contains forbidden two hyphens pattern";
        }
        if (label.starts_with('-') || label.ends_with('-')) return "string start/ends with forbidden hyphen";
        return std::nullopt;
      })) {
    return error;
  }
  if (auto error = labels([](std::string_view label) -> std::optional<std::string_view> {
        if (label.size() > 63) return "domain label longer than 63 characters";
        return std::nullopt;
      })) {
    return error;
  }
  if (name.size() > 253) return kNameTooLong;
  return std::nullopt;
}

// A registered name (or an IPv4 address) as an A-label in lower case,
// without the trailing dot.
Result<std::string> NormalizeHostName(std::string_view host, const UrlError& invalid) {
  if (host.empty()) return invalid("has no host");
  if (host.find('%') != std::string_view::npos) return invalid("has a '%' in the host");
  std::string name = AsciiLowercase(host);
  if (NeedsIdnaConversion(name)) {
    TOOLVFS_RETURN_IF_ERROR(LoadIdn2());
    char* converted = nullptr;
    int code = idn2_to_ascii_8z(name.c_str(), &converted, IDN2_NONTRANSITIONAL | IDN2_NFC_INPUT);
    std::unique_ptr<char, decltype(&std::free)> owned(converted, &std::free);
    if (code != IDN2_OK) {
      return invalid("has a host that is not a valid internationalized name: " + std::string(idn2_strerror(code)));
    }
    name = AsciiLowercase(converted);
  } else if (std::optional<std::string_view> broken = AsciiHostIdnaError(name)) {
    return invalid("has a host that is not a valid internationalized name: " + std::string(*broken));
  }
  if (name.ends_with('.')) name.pop_back();
  // Checked after the conversion: IDNA mapping turns some characters into
  // ASCII ones that end a host (fullwidth '／' becomes '/') or into nothing
  // (a zero-width space leaves an empty label).
  for (char c : name) {
    if (!IsAsciiAlpha(c) && !IsDigit(c) && c != '-' && c != '_' && c != '.') {
      return invalid("has the character " + Quote(std::string_view(&c, 1)) + " in the host");
    }
  }
  if (name.empty() || name.front() == '.' || name.ends_with('.') || name.find("..") != std::string::npos) {
    return invalid("has an empty label in the host");
  }
  if (EndsInNumber(name) && !IsDottedDecimalQuad(name)) {
    return invalid("has a numeric host that is not a dotted-decimal IPv4 address (like 127.0.0.1)");
  }
  return name;
}

Result<uint16_t> ParsePort(std::string_view port, const UrlError& invalid) {
  if (port.empty()) return invalid("has an empty port after ':'");
  if (port.find_first_not_of("0123456789") != std::string_view::npos) {
    return invalid("has a port that is not a number");
  }
  std::string_view significant = port.substr(std::min(port.find_first_not_of('0'), port.size()));
  if (significant.empty() || significant.size() > 5 || std::atoi(std::string(significant).c_str()) > 65535) {
    return invalid("has a port outside 1-65535");
  }
  return static_cast<uint16_t>(std::atoi(std::string(significant).c_str()));
}

uint16_t DefaultPort(std::string_view scheme) { return scheme == "https" ? kHttpsPort : kHttpPort; }

// Sets host and port from the authority ("host", "host:port", "[v6]:port").
Status ParseAuthority(std::string_view authority, NormalizedUrl& url, const UrlError& invalid) {
  if (authority.find('@') != std::string_view::npos) {
    return invalid("has user information ('user@'); credentials never belong in a URL");
  }
  std::string_view host = authority;
  std::optional<std::string_view> port;
  if (authority.starts_with('[')) {
    size_t close = authority.find(']');
    if (close == std::string_view::npos) return invalid("has an unclosed '[' in the host");
    TOOLVFS_ASSIGN_OR_RETURN(url.host, NormalizeIpv6(authority.substr(1, close - 1), invalid));
    std::string_view after = authority.substr(close + 1);
    if (!after.empty() && after.front() != ':') return invalid("has text after the IPv6 address in the host");
    if (!after.empty()) port = after.substr(1);
  } else {
    size_t colon = authority.find(':');
    if (colon != std::string_view::npos) {
      host = authority.substr(0, colon);
      port = authority.substr(colon + 1);
    }
    TOOLVFS_ASSIGN_OR_RETURN(url.host, NormalizeHostName(host, invalid));
  }
  url.port = DefaultPort(url.scheme);
  if (port) {
    TOOLVFS_ASSIGN_OR_RETURN(url.port, ParsePort(*port, invalid));
  }
  return OkStatus();
}

}  // namespace

std::string NormalizedUrl::ToString() const {
  std::string text = scheme + "://";
  bool is_ipv6 = host.find(':') != std::string::npos;
  text += is_ipv6 ? "[" + host + "]" : host;
  if (port != DefaultPort(scheme)) text += ":" + std::to_string(port);
  text += path;
  if (!query.empty()) text += "?" + query;
  return text;
}

bool NormalizedUrl::SameOrigin(const NormalizedUrl& other) const {
  return scheme == other.scheme && host == other.host && port == other.port;
}

Result<NormalizedUrl> NormalizeUrl(std::string_view url) {
  UrlError invalid(url);
  if (url.empty()) return invalid("is empty");
  TOOLVFS_RETURN_IF_ERROR(CheckCharacters(url, invalid));

  size_t separator = url.find("://");
  NormalizedUrl normalized;
  normalized.scheme = AsciiLowercase(url.substr(0, separator));
  if (separator == std::string_view::npos || (normalized.scheme != "http" && normalized.scheme != "https")) {
    return invalid("does not start with http:// or https://");
  }
  std::string_view rest = url.substr(separator + 3);
  size_t fragment = rest.find('#');
  if (fragment != std::string_view::npos) {
    return invalid("has a fragment ('#'); it is never sent to a server, leave it out");
  }
  size_t authority_end = rest.find_first_of("/?");
  TOOLVFS_RETURN_IF_ERROR(ParseAuthority(rest.substr(0, authority_end), normalized, invalid));
  std::string_view path_and_query = authority_end == std::string_view::npos ? "" : rest.substr(authority_end);
  size_t question = path_and_query.find('?');
  TOOLVFS_ASSIGN_OR_RETURN(normalized.path, NormalizePath(path_and_query.substr(0, question), invalid));
  if (question != std::string_view::npos) {
    TOOLVFS_ASSIGN_OR_RETURN(
        normalized.query, NormalizeEscapes(path_and_query.substr(question + 1), /*in_query=*/true, invalid));
  }
  return normalized;
}

bool UrlPrefixCovers(const NormalizedUrl& prefix, const NormalizedUrl& url) {
  if (!prefix.SameOrigin(url)) return false;
  const std::string& under = prefix.path;
  if (under.empty() || under == "/" || url.path == under) return true;
  if (under.ends_with('/')) return url.path.starts_with(under);
  return url.path.size() > under.size() && url.path.starts_with(under) && url.path[under.size()] == '/';
}

}  // namespace toolvfs
