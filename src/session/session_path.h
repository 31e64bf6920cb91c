// Tool-layer path rules for sessions (SPEC.md §7, issue 19 item 2).
//
// Every path a session tool receives goes through NormalizeSessionPath before
// it reaches a store. The rules are stricter than the stores' own: paths are
// relative, `.` and `..` are rejected (never collapsed, so a caller cannot
// hide a climb inside a longer path), segments are printable ASCII and
// bounded, and the depth is bounded. Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "core/status.h"

namespace toolvfs {

struct SessionPathLimits {
  std::size_t max_segments = 16;
  std::size_t max_segment_chars = 80;
};

// The normalized relative path ("" is the root; callers decide whether the
// root is allowed), or InvalidArgument with a one-line message naming the path
// and the rule it breaks. Duplicate slashes collapse and a trailing slash is
// dropped; a leading `/`, a `.` or `..` segment, a segment with a character
// outside printable ASCII (0x20..0x7E), a segment longer than
// max_segment_chars, or more than max_segments segments is an error.
Result<std::string> NormalizeSessionPath(std::string_view path,
                                         const SessionPathLimits& limits = {});

// True when the normalized path `path` is `directory` itself or lies below
// it, compared segment by segment: "a/b" is under "a" but "a/bc" is not under
// "a/b". The root "" contains every path. Both arguments must already be
// normalized.
bool IsUnderSessionDirectory(std::string_view path, std::string_view directory);

// Joins two normalized paths ("" is the root on either side).
std::string JoinSessionPath(std::string_view directory, std::string_view name);

}  // namespace toolvfs
