#include "project/ignore.h"

#include <bitset>
#include <cstdint>
#include <optional>
#include <utility>

#include "project/path.h"

namespace toolvfs {
namespace {

// One element of a compiled segment pattern (a segment never holds '/').
struct GlobToken {
  enum class Kind {
    kLiteral,  // the bytes of `literal`
    kAnyByte,  // '?'
    kClass,    // '[...]': one byte in `bytes`
    kStar,     // '*': any run of bytes
  };
  Kind kind;
  std::string literal;
  std::bitset<256> bytes;
};

// A compiled pattern for one path segment.
struct SegmentGlob {
  // "**" as a whole segment: any number of path segments (zero included).
  bool any_segments = false;
  std::vector<GlobToken> tokens;
};

// Length of the bytes of `name` at `offset` matched by a non-star `token`,
// or nullopt.
std::optional<size_t> TokenMatchLength(const GlobToken& token, std::string_view name,
                                       size_t offset) {
  switch (token.kind) {
    case GlobToken::Kind::kLiteral:
      if (name.substr(offset, token.literal.size()) == token.literal) return token.literal.size();
      return std::nullopt;
    case GlobToken::Kind::kAnyByte:
      if (offset < name.size()) return 1;
      return std::nullopt;
    case GlobToken::Kind::kClass:
      if (offset < name.size() && token.bytes.test(static_cast<uint8_t>(name[offset]))) return 1;
      return std::nullopt;
    case GlobToken::Kind::kStar:
      break;
  }
  return std::nullopt;
}

// Classic wildcard matching: on a mismatch, let the most recent star absorb
// one more byte. Each non-star token consumes a length fixed by the text,
// so the earliest placement after a star is always as good as a later one;
// the cost is O(tokens * name), never exponential.
bool MatchSegment(const std::vector<GlobToken>& tokens, std::string_view name) {
  size_t token_index = 0;
  size_t offset = 0;
  std::optional<size_t> star_token;
  size_t star_offset = 0;
  while (token_index < tokens.size() || offset < name.size()) {
    if (token_index < tokens.size()) {
      const GlobToken& token = tokens[token_index];
      if (token.kind == GlobToken::Kind::kStar) {
        star_token = token_index++;
        star_offset = offset;
        continue;
      }
      if (std::optional<size_t> length = TokenMatchLength(token, name, offset)) {
        offset += *length;
        ++token_index;
        continue;
      }
    }
    if (star_token && star_offset < name.size()) {
      offset = ++star_offset;
      token_index = *star_token + 1;
      continue;
    }
    return false;
  }
  return true;
}

bool MatchSegmentGlob(const SegmentGlob& glob, std::string_view name) {
  return glob.any_segments || MatchSegment(glob.tokens, name);
}

// The same idea one level up: "**" segments are the stars, every other
// segment glob matches exactly one path segment.
bool MatchSegments(const std::vector<SegmentGlob>& globs,
                   const std::vector<std::string_view>& segments) {
  size_t glob_index = 0;
  size_t segment_index = 0;
  std::optional<size_t> star_glob;
  size_t star_segment = 0;
  while (glob_index < globs.size() || segment_index < segments.size()) {
    if (glob_index < globs.size()) {
      const SegmentGlob& glob = globs[glob_index];
      if (glob.any_segments) {
        star_glob = glob_index++;
        star_segment = segment_index;
        continue;
      }
      if (segment_index < segments.size() && MatchSegment(glob.tokens, segments[segment_index])) {
        ++glob_index;
        ++segment_index;
        continue;
      }
    }
    if (star_glob && star_segment < segments.size()) {
      segment_index = ++star_segment;
      glob_index = *star_glob + 1;
      continue;
    }
    return false;
  }
  return true;
}

// Adds the bytes of the POSIX class `name` ("alpha", ...); false if unknown.
bool AddPosixClass(std::string_view name, std::bitset<256>& bytes) {
  auto add_if = [&bytes](auto predicate) {
    for (int byte = 0; byte < 128; ++byte) {
      if (predicate(byte)) bytes.set(static_cast<size_t>(byte));
    }
  };
  auto is_upper = [](int c) { return c >= 'A' && c <= 'Z'; };
  auto is_lower = [](int c) { return c >= 'a' && c <= 'z'; };
  auto is_digit = [](int c) { return c >= '0' && c <= '9'; };
  auto is_alpha = [&](int c) { return is_upper(c) || is_lower(c); };
  auto is_graph = [](int c) { return c > 0x20 && c < 0x7F; };
  if (name == "alnum") {
    add_if([&](int c) { return is_alpha(c) || is_digit(c); });
  } else if (name == "alpha") {
    add_if(is_alpha);
  } else if (name == "blank") {
    add_if([](int c) { return c == ' ' || c == '\t'; });
  } else if (name == "cntrl") {
    add_if([](int c) { return c < 0x20 || c == 0x7F; });
  } else if (name == "digit") {
    add_if(is_digit);
  } else if (name == "graph") {
    add_if(is_graph);
  } else if (name == "lower") {
    add_if(is_lower);
  } else if (name == "print") {
    add_if([&](int c) { return is_graph(c) || c == ' '; });
  } else if (name == "punct") {
    add_if([&](int c) { return is_graph(c) && !is_alpha(c) && !is_digit(c); });
  } else if (name == "space") {
    add_if([](int c) { return c == ' ' || (c >= '\t' && c <= '\r'); });
  } else if (name == "upper") {
    add_if(is_upper);
  } else if (name == "xdigit") {
    add_if([&](int c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); });
  } else {
    return false;
  }
  return true;
}

// Parses the class starting after '[' at `text[offset]`; on success moves
// `offset` past the closing ']'. nullopt for a malformed class, which makes
// the whole pattern match nothing, as in git.
std::optional<std::bitset<256>> ParseClass(std::string_view text, size_t& offset) {
  std::bitset<256> bytes;
  bool negated = false;
  if (offset < text.size() && (text[offset] == '!' || text[offset] == '^')) {
    negated = true;
    ++offset;
  }
  bool first = true;
  while (true) {
    if (offset >= text.size()) return std::nullopt;
    char c = text[offset];
    if (c == ']' && !first) {
      ++offset;
      break;
    }
    first = false;
    if (c == '[' && text.substr(offset, 2) == "[:") {
      size_t close = text.find(":]", offset + 2);
      if (close == std::string_view::npos) return std::nullopt;
      if (!AddPosixClass(text.substr(offset + 2, close - offset - 2), bytes)) return std::nullopt;
      offset = close + 2;
      continue;
    }
    if (c == '\\') {
      if (++offset >= text.size()) return std::nullopt;
      c = text[offset];
    }
    ++offset;
    auto low = static_cast<uint8_t>(c);
    uint8_t high = low;
    if (offset + 1 < text.size() && text[offset] == '-' && text[offset + 1] != ']') {
      size_t end_offset = offset + 1;
      if (text[end_offset] == '\\') {
        if (++end_offset >= text.size()) return std::nullopt;
      }
      high = static_cast<uint8_t>(text[end_offset]);
      offset = end_offset + 1;
    }
    for (unsigned byte = low; byte <= high; ++byte) bytes.set(byte);
  }
  if (negated) bytes.flip();
  bytes.reset('/');
  return bytes;
}

// Compiles one segment (no '/'); nullopt if it can never match.
std::optional<SegmentGlob> CompileSegment(std::string_view text) {
  SegmentGlob glob;
  if (text.empty()) return std::nullopt;  // from "a//b": paths have no empty segments
  if (text == "**") {
    glob.any_segments = true;
    return glob;
  }
  auto append_literal = [&glob](char c) {
    if (glob.tokens.empty() || glob.tokens.back().kind != GlobToken::Kind::kLiteral) {
      glob.tokens.push_back({GlobToken::Kind::kLiteral, {}, {}});
    }
    glob.tokens.back().literal += c;
  };
  size_t offset = 0;
  while (offset < text.size()) {
    char c = text[offset++];
    switch (c) {
      case '\\':
        // A trailing lone backslash escapes nothing: git matches nothing.
        if (offset >= text.size()) return std::nullopt;
        append_literal(text[offset++]);
        break;
      case '*':
        // "a**b" is "a*b": only a whole "**" segment crosses directories.
        if (glob.tokens.empty() || glob.tokens.back().kind != GlobToken::Kind::kStar) {
          glob.tokens.push_back({GlobToken::Kind::kStar, {}, {}});
        }
        break;
      case '?':
        glob.tokens.push_back({GlobToken::Kind::kAnyByte, {}, {}});
        break;
      case '[': {
        std::optional<std::bitset<256>> bytes = ParseClass(text, offset);
        if (!bytes) return std::nullopt;
        glob.tokens.push_back({GlobToken::Kind::kClass, {}, *bytes});
        break;
      }
      default:
        append_literal(c);
        break;
    }
  }
  return glob;
}

// `line` without trailing spaces, except those escaped with a backslash.
std::string_view TrimTrailingSpaces(std::string_view line) {
  size_t keep = 0;
  for (size_t offset = 0; offset < line.size(); ++offset) {
    if (line[offset] == '\\' && offset + 1 < line.size()) {
      ++offset;  // the escaped character is kept, even a space
      keep = offset + 1;
    } else if (line[offset] != ' ') {
      keep = offset + 1;
    }
  }
  return line.substr(0, keep);
}

}  // namespace

struct IgnoreFile::Pattern {
  enum class Shape {
    kName,        // unanchored, a plain name: compare with the entry's name
    kNameSuffix,  // unanchored "*suffix": the entry's name ends with it
    kNameGlob,    // unanchored glob on the entry's name
    kPath,        // anchored: segment globs on the path below the directory
  };
  Shape shape = Shape::kNameGlob;
  bool negated = false;
  bool directory_only = false;
  bool has_any_segments = false;  // a "**" segment: segment counts may differ
  std::string literal;            // kName: the name; kNameSuffix: the suffix
  std::vector<SegmentGlob> segments;

  bool Matches(std::string_view relative_path, std::string_view name) const {
    switch (shape) {
      case Shape::kName:
        return name == literal;
      case Shape::kNameSuffix:
        return name.size() >= literal.size() &&
               name.substr(name.size() - literal.size()) == literal;
      case Shape::kNameGlob:
        return MatchSegment(segments.front().tokens, name);
      case Shape::kPath:
        break;
    }
    if (has_any_segments) return MatchSegments(segments, PathSegments(relative_path));
    // Without "**" every glob matches exactly one segment: walk both in
    // step, without building the segment list.
    size_t glob_index = 0;
    while (true) {
      size_t slash = relative_path.find('/');
      if (glob_index == segments.size() ||
          !MatchSegmentGlob(segments[glob_index], relative_path.substr(0, slash))) {
        return false;
      }
      ++glob_index;
      if (slash == std::string_view::npos) return glob_index == segments.size();
      relative_path.remove_prefix(slash + 1);
    }
  }
};

IgnoreFile::IgnoreFile(std::string directory, std::string_view text)
    : directory_(std::move(directory)) {
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);  // a UTF-8 byte order mark
  while (!text.empty()) {
    size_t newline = text.find('\n');
    std::string_view line = text.substr(0, newline);
    text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
    // Files written on Windows end lines with "\r\n"; the '\r' is not part
    // of the pattern.
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    line = TrimTrailingSpaces(line);
    if (line.empty() || line.front() == '#') continue;

    Pattern pattern;
    if (line.front() == '!') {
      pattern.negated = true;
      line.remove_prefix(1);
    }
    if (!line.empty() && line.back() == '/') {
      pattern.directory_only = true;
      line.remove_suffix(1);
    }
    if (line.empty()) continue;  // "/" or "!" alone: nothing to match
    bool anchored = line.find('/') != std::string_view::npos;
    if (line.front() == '/') line.remove_prefix(1);

    bool valid = true;
    while (valid) {
      size_t slash = anchored ? line.find('/') : std::string_view::npos;
      std::optional<SegmentGlob> segment = CompileSegment(line.substr(0, slash));
      if (!segment) {
        valid = false;
        break;
      }
      pattern.has_any_segments |= segment->any_segments;
      pattern.segments.push_back(std::move(*segment));
      if (slash == std::string_view::npos) break;
      line.remove_prefix(slash + 1);
    }
    if (!valid) continue;

    if (anchored) {
      pattern.shape = Pattern::Shape::kPath;
      // A trailing "/**" matches everything inside, but not the directory
      // itself: at least one more segment.
      if (pattern.segments.back().any_segments) {
        SegmentGlob one_segment;
        one_segment.tokens.push_back({GlobToken::Kind::kStar, {}, {}});
        pattern.segments.insert(pattern.segments.end() - 1, std::move(one_segment));
      }
    } else {
      // An unanchored "**" is two stars: any name.
      std::vector<GlobToken>& tokens = pattern.segments.front().tokens;
      if (pattern.segments.front().any_segments) {
        pattern.segments.front().any_segments = false;
        tokens.push_back({GlobToken::Kind::kStar, {}, {}});
      }
      if (tokens.size() == 1 && tokens[0].kind == GlobToken::Kind::kLiteral) {
        pattern.shape = Pattern::Shape::kName;
        pattern.literal = tokens[0].literal;
      } else if (tokens.size() == 2 && tokens[0].kind == GlobToken::Kind::kStar &&
                 tokens[1].kind == GlobToken::Kind::kLiteral) {
        pattern.shape = Pattern::Shape::kNameSuffix;
        pattern.literal = tokens[1].literal;
      } else {
        pattern.shape = Pattern::Shape::kNameGlob;
      }
    }
    patterns_.push_back(std::move(pattern));
  }
}

IgnoreFile::~IgnoreFile() = default;
IgnoreFile::IgnoreFile(IgnoreFile&&) noexcept = default;
IgnoreFile& IgnoreFile::operator=(IgnoreFile&&) noexcept = default;

bool IgnoreFile::empty() const { return patterns_.empty(); }

IgnoreVerdict IgnoreFile::Match(std::string_view path, bool is_directory) const {
  if (!PathContains(directory_, path) || path.size() == directory_.size()) {
    return IgnoreVerdict::kNoMatch;
  }
  std::string_view relative_path = directory_.empty() ? path : path.substr(directory_.size() + 1);
  std::string_view name = BaseName(relative_path);
  // The last matching pattern decides, so look from the end.
  for (auto pattern = patterns_.rbegin(); pattern != patterns_.rend(); ++pattern) {
    if (pattern->directory_only && !is_directory) continue;
    if (pattern->Matches(relative_path, name)) {
      return pattern->negated ? IgnoreVerdict::kIncluded : IgnoreVerdict::kIgnored;
    }
  }
  return IgnoreVerdict::kNoMatch;
}

struct IgnoreRules::Node {
  IgnoreFile file;
  std::shared_ptr<const Node> parent;
};

IgnoreRules IgnoreRules::With(IgnoreFile file) const {
  if (file.empty()) return *this;
  IgnoreRules rules;
  rules.head_ = std::make_shared<const Node>(Node{std::move(file), head_});
  return rules;
}

bool IgnoreRules::IsIgnored(std::string_view path, bool is_directory) const {
  for (const Node* node = head_.get(); node != nullptr; node = node->parent.get()) {
    IgnoreVerdict verdict = node->file.Match(path, is_directory);
    if (verdict != IgnoreVerdict::kNoMatch) return verdict == IgnoreVerdict::kIgnored;
  }
  return false;
}

}  // namespace toolvfs
