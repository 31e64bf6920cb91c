#include "session/session_path.h"

#include <string>
#include <vector>

namespace toolvfs {
namespace {

bool IsPrintableAscii(char character) {
  const auto code = static_cast<unsigned char>(character);
  return code >= 0x20 && code <= 0x7E;
}

std::string Quoted(std::string_view path) {
  // The path may hold control bytes; show them escaped so the message stays
  // one line and readable.
  std::string quoted = "'";
  for (const char character : path) {
    if (IsPrintableAscii(character)) {
      quoted += character;
    } else {
      static constexpr char kHex[] = "0123456789abcdef";
      const auto code = static_cast<unsigned char>(character);
      quoted += "\\x";
      quoted += kHex[code >> 4];
      quoted += kHex[code & 0xF];
    }
  }
  quoted += "'";
  return quoted;
}

}  // namespace

Result<std::string> NormalizeSessionPath(std::string_view path, const SessionPathLimits& limits) {
  if (!path.empty() && path.front() == '/') {
    return InvalidArgumentError("Path " + Quoted(path) +
                                ": absolute paths are not allowed (use a path relative to the "
                                "workspace root)");
  }
  std::vector<std::string_view> segments;
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    const std::string_view segment = path.substr(start, end - start);
    start = end + 1;
    if (segment.empty()) continue;  // duplicate or trailing slash
    if (segment == "." || segment == "..") {
      return InvalidArgumentError("Path " + Quoted(path) + ": '" + std::string(segment) +
                                  "' segments are not allowed");
    }
    for (const char character : segment) {
      if (!IsPrintableAscii(character)) {
        return InvalidArgumentError("Path " + Quoted(path) +
                                    ": segments must be printable ASCII (0x20-0x7e), found byte " +
                                    Quoted(std::string_view(&character, 1)));
      }
    }
    if (segment.size() > limits.max_segment_chars) {
      return InvalidArgumentError("Path " + Quoted(path) + ": segment '" + std::string(segment) +
                                  "' has " + std::to_string(segment.size()) +
                                  " characters, more than the limit of " +
                                  std::to_string(limits.max_segment_chars));
    }
    segments.push_back(segment);
    if (segments.size() > limits.max_segments) {
      return InvalidArgumentError("Path " + Quoted(path) + ": more than " +
                                  std::to_string(limits.max_segments) + " segments");
    }
  }
  std::string normalized;
  for (const std::string_view segment : segments) {
    if (!normalized.empty()) normalized += '/';
    normalized += segment;
  }
  return normalized;
}

bool IsUnderSessionDirectory(std::string_view path, std::string_view directory) {
  if (directory.empty()) return true;
  if (path.size() < directory.size() || path.substr(0, directory.size()) != directory) return false;
  return path.size() == directory.size() || path[directory.size()] == '/';
}

std::string JoinSessionPath(std::string_view directory, std::string_view name) {
  if (directory.empty()) return std::string(name);
  if (name.empty()) return std::string(directory);
  std::string joined(directory);
  joined += '/';
  joined += name;
  return joined;
}

}  // namespace toolvfs
