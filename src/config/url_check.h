// Validation of the URL prefixes in `network.allow` / `network.deny`
// (SPEC.md §3.1–3.2). Only validation: normalizing and matching a URL belong
// to the policy. A malformed prefix is a config error, never a rule that
// silently matches nothing (or everything).
#pragma once

#include <string_view>

#include "core/status.h"

namespace toolvfs {

// OK if `url` is an acceptable prefix: `http://` or `https://` (any case),
// a host (a name, an IPv4 address or a bracketed IPv6 literal), an optional
// port 1-65535, and an optional path. Fails with InvalidArgument and a reason
// that does not repeat the URL (the caller names the key) when the URL has
// no scheme or another scheme, no host, user information ("user@"), a NUL,
// CR, LF, other control character, space or backslash anywhere, a '%' in the
// host, a bad port, a query or fragment (they take no part in matching), or
// a malformed percent-escape in the path, or anything else NormalizeUrl
// (core/url.h) refuses, e.g. a numeric host that is not a dotted quad.
Status CheckUrlPrefix(std::string_view url);

}  // namespace toolvfs
