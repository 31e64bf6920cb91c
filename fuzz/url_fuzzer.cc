// libFuzzer target: NormalizeUrl never crashes; a failure is one line; what
// it accepts is normalized (lower-case ASCII host without '%', NUL, CR, LF
// or a trailing dot, port in range, path starting with '/') and stays the
// same when normalized again, and a URL always covers itself. Build and run
// with `make fuzz`.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "core/url.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  toolvfs::Result<toolvfs::NormalizedUrl> result = toolvfs::NormalizeUrl(input);
  if (!result.ok()) {
    if (result.status().message().find('\n') != std::string::npos) std::abort();
    return 0;
  }
  const toolvfs::NormalizedUrl& url = *result;
  if (url.scheme != "http" && url.scheme != "https") std::abort();
  if (url.host.empty() || url.host.back() == '.' || url.port == 0) std::abort();
  for (char c : url.host) {
    unsigned char byte = static_cast<unsigned char>(c);
    if (byte < 0x21 || byte >= 0x7f || c == '%' || (c >= 'A' && c <= 'Z')) std::abort();
  }
  if (url.path.empty() || url.path.front() != '/') std::abort();
  toolvfs::Result<toolvfs::NormalizedUrl> again = toolvfs::NormalizeUrl(url.ToString());
  if (!again.ok() || again->ToString() != url.ToString()) std::abort();
  if (!toolvfs::UrlPrefixCovers(url, url)) std::abort();
  return 0;
}
