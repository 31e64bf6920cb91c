// Source-like text for the benchmarks that move file content through JSON
// (json_bench, protocol_bench): code lines with string literals, quotes,
// backslashes, tabs and 2- to 4-byte UTF-8, so escaping and UTF-8 checks
// do the work they do on a real project.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace toolvfs::bench {

// One byte in 31 needs a JSON escape, like this repository's src/ (one in 33).
inline const char* const kTypicalSourceLines[] = {
    "    if (result.status().code() == StatusCode::kNotFound) {",
    "      return InvalidArgumentError(\"bad path: \" + Quote(path));",
    "  // Copy the caf\xC3\xA9 entries, na\xC3\xAFvely: \xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E text",
    "  for (size_t index = 0; index < entries.size(); ++index) total += entries[index].size;",
    "}",
    "#include <string_view>",
    "    let greeting = 'hello \xF0\x9F\x98\x80 world';  // emoji",
    "def parse(line): return json.loads(line)  # \xE2\x82\xAC",
    "",
    "  std::vector<std::string> names = ListNames(directory, options.recursive);",
    "\tconst char* windows_path = \"C:\\\\Users\\\\build\";",
    "  return std::nullopt;",
    "  // The caller owns the buffer; it must outlive every view returned here.",
    "  size_t remaining = std::min(limit - used, static_cast<size_t>(chunk.size()));",
    "    total_bytes += static_cast<uint64_t>(entry.size) * entry.count;"};

// Exactly `bytes` of valid UTF-8: `lines` in a pseudo-random order that
// `seed` varies, cut at a character boundary and padded with spaces.
template <size_t N>
std::string MakeSourceText(size_t bytes, const char* const (&lines)[N], uint32_t seed = 0) {
  std::string out;
  out.reserve(bytes + 128);
  uint32_t state = 12345 + seed * 7919;
  while (out.size() < bytes) {
    state = state * 1103515245 + 12345;
    out += lines[(state >> 16) % N];
    out += '\n';
  }
  size_t cut = bytes;
  while ((static_cast<uint8_t>(out[cut]) & 0xC0) == 0x80) --cut;
  out.resize(cut);
  out.append(bytes - cut, ' ');
  return out;
}

}  // namespace toolvfs::bench
