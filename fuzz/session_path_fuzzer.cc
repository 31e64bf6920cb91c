// libFuzzer target: NormalizeSessionPath never crashes, its messages are one
// line, and what it accepts obeys every session path rule (SPEC.md §7): no
// leading or trailing '/', no empty, "." or ".." segment, printable ASCII
// only, at most 16 segments of at most 80 characters, and normalizing again
// changes nothing. Build and run with `make fuzz`.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "session/session_path.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  toolvfs::Result<std::string> result = toolvfs::NormalizeSessionPath(input);
  if (!result.ok()) {
    if (result.status().code() != toolvfs::StatusCode::kInvalidArgument) std::abort();
    if (result.status().message().find('\n') != std::string::npos) std::abort();
    return 0;
  }
  const std::string& path = *result;
  if (!path.empty() && (path.front() == '/' || path.back() == '/')) std::abort();
  std::size_t segments = 0;
  std::size_t start = 0;
  while (!path.empty() && start <= path.size()) {
    std::size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    std::string_view segment = std::string_view(path).substr(start, end - start);
    start = end + 1;
    ++segments;
    if (segment.empty() || segment == "." || segment == ".." || segment.size() > 80) std::abort();
    for (char character : segment) {
      if (static_cast<unsigned char>(character) < 0x20 ||
          static_cast<unsigned char>(character) > 0x7e) {
        std::abort();
      }
    }
  }
  if (segments > 16) std::abort();
  if (!toolvfs::IsUnderSessionDirectory(path, path)) std::abort();
  toolvfs::Result<std::string> again = toolvfs::NormalizeSessionPath(path);
  if (!again.ok() || *again != path) std::abort();
  return 0;
}
