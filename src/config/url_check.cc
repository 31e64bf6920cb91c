#include "config/url_check.h"

#include <string>

#include "core/text.h"
#include "core/url.h"

namespace toolvfs {
namespace {

bool IsAsciiAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsHexDigit(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

Status Invalid(std::string_view why) { return InvalidArgumentError(std::string(why)); }

Status CheckCharacters(std::string_view url) {
  for (char c : url) {
    auto byte = static_cast<unsigned char>(c);
    if (byte == 0) return Invalid("contains a NUL byte");
    if (c == '\r' || c == '\n') return Invalid("contains a line break (CR or LF)");
    if (byte < 0x20 || byte == 0x7F) return Invalid("contains a control character");
    if (c == ' ') return Invalid("contains a space; percent-encode it as %20");
    if (c == '\\') return Invalid("contains a backslash");
  }
  return OkStatus();
}

Status CheckHostName(std::string_view host) {
  for (char c : host) {
    auto byte = static_cast<unsigned char>(c);
    if (c == '%') return Invalid("has a '%' in the host");
    // Non-ASCII bytes are an internationalized name; the policy converts it
    // to punycode.
    if (byte >= 0x80 || IsAsciiAlpha(c) || IsDigit(c) || c == '-' || c == '.' || c == '_') {
      continue;
    }
    return Invalid("has the character " + Quote(std::string_view(&c, 1)) + " in the host");
  }
  // "a..b", ".a" or "." name no host; one trailing dot ("a.") is allowed.
  std::string_view labels = host;
  if (labels.size() > 1 && labels.back() == '.') labels.remove_suffix(1);
  if (labels.front() == '.' || labels.back() == '.' ||
      labels.find("..") != std::string_view::npos) {
    return Invalid("has an empty label in the host");
  }
  return OkStatus();
}

Status CheckIpv6Literal(std::string_view literal) {  // without the brackets
  if (literal.empty()) return Invalid("has an empty IPv6 address in the host");
  for (char c : literal) {
    if (c == '%') return Invalid("has a '%' in the host");
    if (!IsHexDigit(c) && c != ':' && c != '.') {
      return Invalid("has a malformed IPv6 address in the host");
    }
  }
  if (literal.find(':') == std::string_view::npos) {
    return Invalid("has a malformed IPv6 address in the host");
  }
  return OkStatus();
}

Status CheckPort(std::string_view port) {
  if (port.empty()) return Invalid("has an empty port after ':'");
  for (char c : port) {
    if (!IsDigit(c)) return Invalid("has a port that is not a number");
  }
  size_t digits = port.find_first_not_of('0');
  std::string_view significant = digits == std::string_view::npos ? "" : port.substr(digits);
  if (significant.empty() || significant.size() > 5 ||
      std::stoul(std::string(significant)) > 65535) {
    return Invalid("has a port outside 1-65535");
  }
  return OkStatus();
}

Status CheckPath(std::string_view path) {
  if (path.find_first_of("?#") != std::string_view::npos) {
    return Invalid(
        "has a query or fragment; a URL prefix is matched on scheme, host, port and path only");
  }
  for (size_t i = 0; i < path.size(); ++i) {
    if (path[i] != '%') continue;
    if (i + 2 >= path.size() || !IsHexDigit(path[i + 1]) || !IsHexDigit(path[i + 2])) {
      return Invalid("has a malformed percent-escape in the path");
    }
  }
  return OkStatus();
}

}  // namespace

// The policy normalizes every prefix with NormalizeUrl before it compares;
// a prefix it would refuse must be a config error, not a rule that is
// silently ignored. Its message names the URL, which the caller does too.
Status CheckNormalizes(std::string_view url) {
  Result<NormalizedUrl> normalized = NormalizeUrl(url);
  if (normalized.ok()) return OkStatus();
  std::string why = normalized.status().message();
  std::string named = "URL " + Quote(url) + " ";
  if (why.starts_with(named)) why.erase(0, named.size());
  return Invalid(why);
}

Status CheckUrlPrefix(std::string_view url) {
  if (url.empty()) return Invalid("is empty");
  TOOLVFS_RETURN_IF_ERROR(CheckCharacters(url));

  size_t separator = url.find("://");
  std::string_view scheme = separator == std::string_view::npos ? "" : url.substr(0, separator);
  bool scheme_well_formed = !scheme.empty() && IsAsciiAlpha(scheme.front());
  for (char c : scheme) {
    if (!IsAsciiAlpha(c) && !IsDigit(c) && c != '+' && c != '-' && c != '.') {
      scheme_well_formed = false;
    }
  }
  if (!scheme_well_formed) {
    return Invalid("has no scheme; write it as https://HOST/PATH");
  }
  std::string lower_scheme = AsciiLowercase(scheme);
  if (lower_scheme != "http" && lower_scheme != "https") {
    return Invalid("has the scheme " + Quote(scheme) + "; only http and https are supported");
  }

  std::string_view rest = url.substr(separator + 3);
  size_t authority_end = rest.find_first_of("/?#");
  std::string_view authority = rest.substr(0, authority_end);
  std::string_view path = authority_end == std::string_view::npos ? "" : rest.substr(authority_end);
  if (authority.find('@') != std::string_view::npos) {
    return Invalid("has user information ('user@'); credentials never belong in a URL prefix");
  }

  std::string_view host;
  std::string_view port;
  bool has_port = false;
  if (!authority.empty() && authority.front() == '[') {
    size_t close = authority.find(']');
    if (close == std::string_view::npos) return Invalid("has an unclosed '[' in the host");
    TOOLVFS_RETURN_IF_ERROR(CheckIpv6Literal(authority.substr(1, close - 1)));
    host = authority.substr(0, close + 1);
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return Invalid("has text after the IPv6 address in the host");
      has_port = true;
      port = after.substr(1);
    }
  } else {
    size_t colon = authority.find(':');
    host = authority.substr(0, colon);
    if (colon != std::string_view::npos) {
      has_port = true;
      port = authority.substr(colon + 1);
    }
    if (host.empty()) return Invalid("has no host");
    TOOLVFS_RETURN_IF_ERROR(CheckHostName(host));
  }
  if (has_port) TOOLVFS_RETURN_IF_ERROR(CheckPort(port));
  TOOLVFS_RETURN_IF_ERROR(CheckPath(path));
  return CheckNormalizes(url);
}

}  // namespace toolvfs
