// Sensitive-path patterns (SPEC.md §3.1 `sensitive_paths`, §3.2): globs
// over normalized project paths, for the file policy.
//
// A pattern is matched segment by segment: `*` matches any run of
// characters within one segment, `?` one character, and `**` as a whole
// segment any number of segments, none included, so `dir/**` matches `dir`
// itself as well as everything below it. Elsewhere in a segment `**` is two
// `*`. A pattern without any wildcard is a plain path: it matches that path
// and everything below it, like the prefixes of `filesystem.*`. A pattern
// with wildcards and more than 63 segments matches every path (it fails
// closed).
//
// Immutable; safe to use from any number of threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace toolvfs {

class PathGlob {
 public:
  // `pattern`: a normalized project path that may hold wildcards.
  static PathGlob Pattern(std::string_view pattern);
  // The plain path `path`, whatever characters it holds ('*' included).
  static PathGlob Literal(std::string_view path);

  // The pattern as written, for messages.
  const std::string& text() const { return text_; }

  // Whether the normalized project path `path` matches.
  bool Matches(std::string_view path) const;

  // Whether a path strictly below the directory `directory` may match, so
  // that deleting or replacing the directory would touch a match. A pattern
  // that starts with `**` counts only once one of its own segments has
  // matched a segment of `directory` (`**/.git/config` lies below "x/.git",
  // not below every directory): matching at any depth, it could otherwise
  // lie below anything, and only the directory's content could tell.
  bool MayMatchBelow(std::string_view directory) const;

 private:
  enum class SegmentKind { kExact, kWildcard, kAnyDepth };
  struct Segment {
    SegmentKind kind;
    std::string text;
  };

  // Bit i: pattern position i, i.e. segments_[0, i) matched.
  using Positions = uint64_t;
  static constexpr size_t kMaxSegments = 63;

  // True when a cheap test shows `path` cannot match (false: it may).
  bool CannotMatch(std::string_view path) const;
  // The pattern positions reachable once every segment of `path` matched.
  Positions PositionsAfter(std::string_view path) const;
  // `positions` plus those reachable by letting a `**` match nothing.
  Positions SkipEmptyAnyDepth(Positions positions) const;

  std::string text_;
  std::vector<Segment> segments_;
  bool plain_ = false;       // no wildcard: a path prefix
  bool too_long_ = false;    // over kMaxSegments segments: matches everything
  size_t leading_any_depth_ = 0;  // how many `**` segments the pattern starts with
};

}  // namespace toolvfs
