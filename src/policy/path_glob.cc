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
  // A position per segment plus one must fit in Positions. A longer glob
  // (over 63 segments) is nobody's real pattern; it matches everything
  // rather than nothing, so a mistake denies instead of exposing.
  glob.too_long_ = !glob.plain_ && glob.segments_.size() >= kMaxSegments;
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
  if (too_long_) return true;  // fails closed, see Pattern()
  if (CannotMatch(path)) return false;
  return (PositionsAfter(path) >> segments_.size()) & 1;
}

// Most paths fail on one cheap test, so the full walk below runs for few:
// a pattern that does not end in `**` must match the path's last segment
// with its own last segment; one that ends in `**` after a plain segment
// needs that segment somewhere in the path.
bool PathGlob::CannotMatch(std::string_view path) const {
  const Segment& last = segments_.back();
  if (last.kind != SegmentKind::kAnyDepth) {
    size_t slash = path.rfind('/');
    std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
    return last.kind == SegmentKind::kExact ? name != last.text : !WildcardMatches(last.text, name);
  }
  if (segments_.size() < 2 || segments_[segments_.size() - 2].kind != SegmentKind::kExact) return false;
  std::string_view needed = segments_[segments_.size() - 2].text;
  for (size_t at = path.find(needed); at != std::string_view::npos; at = path.find(needed, at + 1)) {
    bool starts_segment = at == 0 || path[at - 1] == '/';
    bool ends_segment = at + needed.size() == path.size() || path[at + needed.size()] == '/';
    if (starts_segment && ends_segment) return false;
  }
  return true;
}

bool PathGlob::MayMatchBelow(std::string_view directory) const {
  // A plain path lies below the directory, or holds it and all below it.
  if (plain_) return PathContains(directory, text_) || PathContains(text_, directory);
  if (too_long_) return true;
  Positions positions = PositionsAfter(directory);
  // Position i < size: segments from i on are left for what lies below.
  size_t first_anchored = leading_any_depth_ == 0 ? 0 : leading_any_depth_ + 1;
  for (size_t position = first_anchored; position < segments_.size(); ++position) {
    if ((positions >> position) & 1) return true;
  }
  return false;
}

// A bit per pattern position, so a match allocates nothing: the policy
// checks every sensitive pattern on every request.
PathGlob::Positions PathGlob::PositionsAfter(std::string_view path) const {
  Positions positions = SkipEmptyAnyDepth(1);
  while (!path.empty()) {
    size_t slash = path.find('/');
    std::string_view name = path.substr(0, slash);
    path = slash == std::string_view::npos ? std::string_view() : path.substr(slash + 1);
    Positions next = 0;
    for (size_t position = 0; position < segments_.size(); ++position) {
      if (!((positions >> position) & 1)) continue;
      const Segment& segment = segments_[position];
      switch (segment.kind) {
        case SegmentKind::kAnyDepth: next |= Positions{1} << position; break;  // `**` takes this one too
        case SegmentKind::kExact:
          if (segment.text == name) next |= Positions{1} << (position + 1);
          break;
        case SegmentKind::kWildcard:
          if (WildcardMatches(segment.text, name)) next |= Positions{1} << (position + 1);
          break;
      }
    }
    positions = SkipEmptyAnyDepth(next);
    if (positions == 0) break;  // nothing can match any more
  }
  return positions;
}

PathGlob::Positions PathGlob::SkipEmptyAnyDepth(Positions positions) const {
  for (size_t position = 0; position < segments_.size(); ++position) {
    if (((positions >> position) & 1) && segments_[position].kind == SegmentKind::kAnyDepth) {
      positions |= Positions{1} << (position + 1);
    }
  }
  return positions;
}

}  // namespace toolvfs
