#include "policy/path_glob.h"

#include <algorithm>

#include "project/path.h"

namespace toolvfs {
namespace {

// The length of the UTF-8 character at `at` in `text` (1 for a stray byte),
// so that `?` matches a character, not a byte of one.
size_t CharacterLength(std::string_view text, size_t at) {
  size_t length = 1;
  while (at + length < text.size() && (static_cast<unsigned char>(text[at + length]) & 0xC0) == 0x80) {
    ++length;
  }
  return length;
}

// Whether the segment `name` matches the one-segment pattern `pattern`
// (`*` and `?`). Backtracks to the last `*` only, which is linear enough
// for segment-sized inputs.
bool WildcardMatches(std::string_view pattern, std::string_view name) {
  size_t pattern_at = 0;
  size_t name_at = 0;
  size_t last_star = std::string_view::npos;
  size_t star_resume = 0;  // where the last `*` stopped consuming `name`
  while (name_at < name.size()) {
    if (pattern_at < pattern.size() && pattern[pattern_at] == '*') {
      last_star = pattern_at++;
      star_resume = name_at;
    } else if (pattern_at < pattern.size() && pattern[pattern_at] == '?') {
      ++pattern_at;
      name_at += CharacterLength(name, name_at);
    } else if (pattern_at < pattern.size() && pattern[pattern_at] == name[name_at]) {
      ++pattern_at;
      ++name_at;
    } else if (last_star != std::string_view::npos) {
      // Let the last `*` take one more character and try again from there.
      star_resume += CharacterLength(name, star_resume);
      name_at = star_resume;
      pattern_at = last_star + 1;
    } else {
      return false;
    }
  }
  while (pattern_at < pattern.size() && pattern[pattern_at] == '*') ++pattern_at;
  return pattern_at == pattern.size();
}

}  // namespace

PathGlob PathGlob::Pattern(std::string_view pattern) {
  PathGlob glob;
  glob.text_ = std::string(pattern);
  for (std::string_view segment : PathSegments(pattern)) {
    SegmentKind kind = segment == "**"                                       ? SegmentKind::kAnyDepth
                       : segment.find_first_of("*?") != std::string_view::npos ? SegmentKind::kWildcard
                                                                               : SegmentKind::kExact;
    glob.segments_.push_back(Segment{kind, std::string(segment)});
  }
  glob.plain_ = std::all_of(glob.segments_.begin(), glob.segments_.end(),
                            [](const Segment& segment) { return segment.kind == SegmentKind::kExact; });
  while (glob.leading_any_depth_ < glob.segments_.size() &&
         glob.segments_[glob.leading_any_depth_].kind == SegmentKind::kAnyDepth) {
    ++glob.leading_any_depth_;
  }
  return glob;
}

PathGlob PathGlob::Literal(std::string_view path) {
  PathGlob glob;
  glob.text_ = std::string(path);
  for (std::string_view segment : PathSegments(path)) {
    glob.segments_.push_back(Segment{SegmentKind::kExact, std::string(segment)});
  }
  glob.plain_ = true;
  return glob;
}

bool PathGlob::Matches(std::string_view path) const {
  if (plain_) return PathContains(text_, path);
  return PositionsAfter(path).back();
}

bool PathGlob::MayMatchBelow(std::string_view directory) const {
  // A plain path lies below the directory, or holds it and all below it.
  if (plain_) return PathContains(directory, text_) || PathContains(text_, directory);
  std::vector<bool> positions = PositionsAfter(directory);
  // Position i < size: segments from i on are left for what lies below.
  size_t first_anchored = leading_any_depth_ == 0 ? 0 : leading_any_depth_ + 1;
  for (size_t position = first_anchored; position < segments_.size(); ++position) {
    if (positions[position]) return true;
  }
  return false;
}

std::vector<bool> PathGlob::PositionsAfter(std::string_view path) const {
  std::vector<bool> positions(segments_.size() + 1, false);
  positions[0] = true;
  SkipEmptyAnyDepth(positions);
  for (std::string_view name : PathSegments(path)) {
    std::vector<bool> next(segments_.size() + 1, false);
    for (size_t position = 0; position < segments_.size(); ++position) {
      if (!positions[position]) continue;
      const Segment& segment = segments_[position];
      switch (segment.kind) {
        case SegmentKind::kAnyDepth: next[position] = true; break;  // `**` takes this one too
        case SegmentKind::kExact:
          if (segment.text == name) next[position + 1] = true;
          break;
        case SegmentKind::kWildcard:
          if (WildcardMatches(segment.text, name)) next[position + 1] = true;
          break;
      }
    }
    SkipEmptyAnyDepth(next);
    positions = std::move(next);
  }
  return positions;
}

void PathGlob::SkipEmptyAnyDepth(std::vector<bool>& positions) const {
  for (size_t position = 0; position < segments_.size(); ++position) {
    if (positions[position] && segments_[position].kind == SegmentKind::kAnyDepth) {
      positions[position + 1] = true;
    }
  }
}

}  // namespace toolvfs
