#include "project/path.h"

#include <algorithm>
#include <cstdint>
#include <string>

#include "core/text.h"

namespace toolvfs {
namespace {

Status InvalidPath(std::string_view path, std::string_view why) {
  return InvalidArgumentError("Invalid path " + Quote(path) + ": " + std::string(why));
}

// At most the first 48 bytes of `text`, ending before a character they would
// cut: what a message shows of a name or path too long to show whole.
std::string_view ShownStart(std::string_view text) {
  size_t end = std::min<size_t>(text.size(), 48);
  while (end > 0 && end < text.size() && (static_cast<uint8_t>(text[end]) & 0xC0) == 0x80) --end;
  return text.substr(0, end);
}

}  // namespace

Result<std::string> NormalizePath(std::string_view path) {
  if (path.size() > kMaxPathBytes) {
    // The message shows the start only: it must stay one readable line.
    return InvalidArgumentError("Invalid path " + Quote(ShownStart(path)) + "... (" +
                                std::to_string(path.size()) + " bytes): longer than the limit of " +
                                std::to_string(kMaxPathBytes) + " bytes");
  }
  for (char c : path) {
    auto byte = static_cast<uint8_t>(c);
    if (byte == 0) return InvalidPath(path, "contains a NUL byte");
    if (byte < 0x20 || byte == 0x7F) return InvalidPath(path, "contains a control character");
  }
  if (!IsValidUtf8(path)) return InvalidPath(path, "is not valid UTF-8");
  if (!path.empty() && path.front() == '/') {
    return InvalidPath(path, "absolute paths are not allowed; use a path relative to the project root");
  }

  std::vector<std::string_view> segments;
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    std::string_view segment = path.substr(start, end - start);
    if (segment.empty() || segment == ".") {
      // Duplicate slash, trailing slash or ".": nothing to add.
    } else if (segment == "..") {
      if (segments.empty()) {
        return PermissionDeniedError("Access denied: path " + Quote(path) +
                                     " leaves the project root");
      }
      segments.pop_back();
    } else if (segment.size() > kMaxNameBytes) {
      // The path may be thousands of bytes: the message shows the name's start.
      return InvalidArgumentError("Invalid path: its name " + Quote(ShownStart(segment)) + "... (" +
                                  std::to_string(segment.size()) + " bytes) is longer than the limit of " +
                                  std::to_string(kMaxNameBytes) + " bytes for one name");
    } else {
      segments.push_back(segment);
    }
    start = end + 1;
  }

  std::string normalized;
  normalized.reserve(path.size());
  for (std::string_view segment : segments) {
    if (!normalized.empty()) normalized += '/';
    normalized.append(segment);
  }
  return normalized;
}

std::vector<std::string_view> PathSegments(std::string_view normalized) {
  std::vector<std::string_view> segments;
  while (!normalized.empty()) {
    size_t slash = normalized.find('/');
    segments.push_back(normalized.substr(0, slash));
    if (slash == std::string_view::npos) break;
    normalized.remove_prefix(slash + 1);
  }
  return segments;
}

std::string JoinPath(std::string_view directory, std::string_view name) {
  if (directory.empty()) return std::string(name);
  std::string joined;
  joined.reserve(directory.size() + 1 + name.size());
  joined.append(directory);
  joined += '/';
  joined.append(name);
  return joined;
}

std::string_view ParentPath(std::string_view normalized) {
  size_t slash = normalized.rfind('/');
  return slash == std::string_view::npos ? std::string_view() : normalized.substr(0, slash);
}

std::string_view BaseName(std::string_view normalized) {
  size_t slash = normalized.rfind('/');
  return slash == std::string_view::npos ? normalized : normalized.substr(slash + 1);
}

bool PathContains(std::string_view prefix, std::string_view path) {
  if (prefix.empty()) return true;
  if (path.size() < prefix.size() || path.substr(0, prefix.size()) != prefix) return false;
  return path.size() == prefix.size() || path[prefix.size()] == '/';
}

std::string DisplayPath(std::string_view normalized) {
  return Quote(normalized.empty() ? std::string_view(".") : normalized);
}

}  // namespace toolvfs
