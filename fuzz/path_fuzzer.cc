// libFuzzer target: NormalizePath never crashes, and what it accepts is a
// normalized path (no leading or trailing '/', no empty, "." or ".."
// segment, no segment over kMaxNameBytes, valid UTF-8, idempotent). Build and run with `make fuzz`.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "core/text.h"
#include "project/path.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  toolvfs::Result<std::string> result = toolvfs::NormalizePath(input);
  if (!result.ok()) {
    if (result.status().message().find('\n') != std::string::npos) std::abort();
    return 0;
  }
  const std::string& path = *result;
  if (!toolvfs::IsValidUtf8(path)) std::abort();
  if (!path.empty() && (path.front() == '/' || path.back() == '/')) std::abort();
  for (std::string_view segment : toolvfs::PathSegments(path)) {
    if (segment.empty() || segment == "." || segment == "..") std::abort();
    if (segment.size() > toolvfs::kMaxNameBytes) std::abort();
  }
  toolvfs::Result<std::string> again = toolvfs::NormalizePath(path);
  if (!again.ok() || *again != path) std::abort();
  return 0;
}
