// PLACEHOLDER: replaced by the http work (issue 4).
#include "policy/url.h"

namespace toolvfs {
std::string NormalizedUrl::ToString() const { return scheme + "://" + host + path; }
bool NormalizedUrl::SameOrigin(const NormalizedUrl& other) const {
  return scheme == other.scheme && host == other.host && port == other.port;
}
Result<NormalizedUrl> NormalizeUrl(std::string_view url) {
  return Status(StatusCode::kUnsupported, "URL normalization is not built yet: " + std::string(url));
}
bool UrlPrefixCovers(const NormalizedUrl&, const NormalizedUrl&) { return false; }
}  // namespace toolvfs
