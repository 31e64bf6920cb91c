// libFuzzer target: any bytes parse as an ignore file without crashing, and
// matching any path against it terminates (git's wildmatch patterns, '**'
// included, must not blow up). Input: ignore-file text, a NUL byte, then
// paths separated by '\n'. Build and run with `make fuzz`.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "project/ignore.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  size_t split = input.find('\0');
  std::string_view text = input.substr(0, split);
  std::string_view paths = split == std::string_view::npos ? "a/b/c.txt" : input.substr(split + 1);
  toolvfs::IgnoreFile file("", text);
  toolvfs::IgnoreRules rules = toolvfs::IgnoreRules().With(std::move(file));
  while (!paths.empty()) {
    size_t newline = paths.find('\n');
    std::string_view path = paths.substr(0, newline);
    (void)rules.IsIgnored(path, false);
    (void)rules.IsIgnored(path, true);
    if (newline == std::string_view::npos) break;
    paths.remove_prefix(newline + 1);
  }
  return 0;
}
