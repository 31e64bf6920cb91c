#include "project/grep_pattern.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <vector>

namespace toolvfs {
namespace {

struct CodePointRange {
  uint32_t first;
  uint32_t last;
};

constexpr uint32_t kMaxCodePoint = 0x10FFFF;

// White_Space of the Unicode Character Database (PropList.txt), sorted. It
// has not changed since Unicode 6.3.
constexpr CodePointRange kWhiteSpace[] = {
    {0x09, 0x0D},     {0x20, 0x20},     {0x85, 0x85},     {0xA0, 0xA0},     {0x1680, 0x1680},
    {0x2000, 0x200A}, {0x2028, 0x2029}, {0x202F, 0x202F}, {0x205F, 0x205F}, {0x3000, 0x3000},
};

// The part of \w that no general category RE2 knows covers: Join_Control,
// and the symbols (category So) that are Other_Alphabetic. Sorted.
constexpr CodePointRange kWordExtras[] = {
    {0x200C, 0x200D},   {0x24B6, 0x24E9},   {0x1F130, 0x1F149},
    {0x1F150, 0x1F169}, {0x1F170, 0x1F189},
};

// The rest of \w: Alphabetic is L, Nl and Other_Alphabetic, which apart
// from the symbols above are marks.
constexpr const char* kWordCategories[] = {"L", "M", "Nd", "Pc", "Nl"};

// `ranges` as bracket-class items. Each is written as a range, even of one
// code point, so that an expansion never ends in a single character that a
// following '-' in the user's class would turn into a range.
template <size_t size>
std::string RangeItems(const CodePointRange (&ranges)[size]) {
  std::string items;
  for (const CodePointRange& range : ranges) {
    char item[32];
    std::snprintf(item, sizeof item, "\\x{%X}-\\x{%X}", range.first, range.last);
    items += item;
  }
  return items;
}

// The items of the code points that sorted, disjoint `ranges` leave out.
template <size_t size>
std::string ComplementItems(const CodePointRange (&ranges)[size]) {
  std::string items;
  uint32_t next = 0;
  auto add = [&items](uint32_t first, uint32_t last) {
    char item[32];
    std::snprintf(item, sizeof item, "\\x{%X}-\\x{%X}", first, last);
    items += item;
  };
  for (const CodePointRange& range : ranges) {
    if (range.first > next) add(next, range.first - 1);
    next = range.last + 1;
  }
  if (next <= kMaxCodePoint) add(next, kMaxCodePoint);
  return items;
}

const std::string& SpaceItems() {
  static const std::string items = RangeItems(kWhiteSpace);
  return items;
}

const std::string& NotSpaceItems() {
  static const std::string items = ComplementItems(kWhiteSpace);
  return items;
}

// Ends with a \p item, for the reason RangeItems gives.
const std::string& WordItems() {
  static const std::string items = [] {
    std::string word = RangeItems(kWordExtras);
    for (const char* category : kWordCategories) word += std::string("\\p{") + category + "}";
    return word;
  }();
  return items;
}

bool IsPerlClass(char c) { return c != '\0' && std::strchr("dDsSwW", c) != nullptr; }

// The expansion of \<letter> outside brackets.
std::string PerlClassOutsideBrackets(char letter) {
  switch (letter) {
    case 'd':
      return "\\p{Nd}";
    case 'D':
      return "\\P{Nd}";
    case 's':
      return "[" + SpaceItems() + "]";
    case 'S':
      return "[^" + SpaceItems() + "]";
    case 'w':
      return "[" + WordItems() + "]";
    default:  // 'W'
      return "[^" + WordItems() + "]";
  }
}

// Bytes of the UTF-8 sequence a lead byte announces; 1 for a byte that is
// not a lead byte (RE2 rejects the pattern; any step forward will do).
size_t SequenceLength(char lead) {
  auto byte = static_cast<uint8_t>(lead);
  if (byte >= 0xF0 && byte <= 0xF7) return 4;
  if (byte >= 0xE0) return byte <= 0xEF ? 3 : 1;
  if (byte >= 0xC0) return 2;
  return 1;
}

// End of the rune starting at `position`, clamped to the pattern.
size_t RuneEnd(std::string_view pattern, size_t position) {
  return std::min(pattern.size(), position + SequenceLength(pattern[position]));
}

// End of the escape starting with the '\' at `position`, following RE2's
// ParseEscape and MaybeParseUnicodeGroup; npos if the pattern ends inside
// it. \Q and the Perl classes are the callers' business.
size_t EscapeEnd(std::string_view pattern, size_t position) {
  if (position + 1 >= pattern.size()) return std::string_view::npos;
  char escaped = pattern[position + 1];
  size_t after = position + 2;
  if (escaped == 'x' || escaped == 'p' || escaped == 'P') {
    if (after < pattern.size() && pattern[after] == '{') {
      size_t close = pattern.find('}', after + 1);
      return close == std::string_view::npos ? close : close + 1;
    }
    if (escaped == 'x') return std::min(pattern.size(), after + 2);  // two hex digits
    if (after >= pattern.size()) return std::string_view::npos;
    return RuneEnd(pattern, after);  // a one-letter property name
  }
  if (escaped >= '0' && escaped <= '7') {
    // Up to two more octal digits.
    for (int digit = 0; digit < 2 && after < pattern.size() && pattern[after] >= '0' &&
                        pattern[after] <= '7';
         ++digit) {
      ++after;
    }
    return after;
  }
  return RuneEnd(pattern, position + 1);
}

// End of one class character (a rune or an escape) at `position`.
size_t CharacterEnd(std::string_view pattern, size_t position) {
  if (pattern[position] == '\\') return EscapeEnd(pattern, position);
  return RuneEnd(pattern, position);
}

struct ClassItem {
  enum class Kind {
    kVerbatim,    // [:name:], \p{...}, \P{...}: copied as they are
    kCharacter,   // a character or a range: low (and high)
    kPerlClass,   // \d \D \s \S \w \W: the letter in `text`
  };
  Kind kind;
  std::string_view text;  // the item, or the low end of a range
  std::string_view high;  // the high end of a range; empty for a character
};

struct BracketClass {
  bool negated = false;
  bool has_perl_class = false;
  std::vector<ClassItem> items;
  size_t end = 0;  // just past the closing ']'
};

// Parses the bracket class starting at the '[' at `start` the way RE2's
// ParseCharClass does; nullopt if the pattern ends inside it.
std::optional<BracketClass> ParseBracketClass(std::string_view pattern, size_t start) {
  BracketClass parsed;
  size_t position = start + 1;
  if (position < pattern.size() && pattern[position] == '^') {
    parsed.negated = true;
    ++position;
  }
  bool first = true;  // a ']' first is a literal
  while (true) {
    if (position >= pattern.size()) return std::nullopt;
    if (pattern[position] == ']' && !first) break;
    first = false;
    if (pattern.substr(position, 2) == "[:") {
      // RE2 takes everything up to the next ":]" as a POSIX class name
      // (and rejects the pattern if it is none); without one, '[' is a
      // literal.
      size_t close = pattern.find(":]", position + 2);
      if (close != std::string_view::npos) {
        parsed.items.push_back(
            {ClassItem::Kind::kVerbatim, pattern.substr(position, close + 2 - position), {}});
        position = close + 2;
        continue;
      }
    }
    if (pattern[position] == '\\' && position + 1 < pattern.size()) {
      char escaped = pattern[position + 1];
      if (escaped == 'p' || escaped == 'P') {
        size_t end = EscapeEnd(pattern, position);
        if (end == std::string_view::npos) return std::nullopt;
        parsed.items.push_back(
            {ClassItem::Kind::kVerbatim, pattern.substr(position, end - position), {}});
        position = end;
        continue;
      }
      if (IsPerlClass(escaped)) {
        parsed.items.push_back({ClassItem::Kind::kPerlClass, pattern.substr(position + 1, 1), {}});
        parsed.has_perl_class = true;
        position += 2;
        continue;
      }
    }
    size_t low_end = CharacterEnd(pattern, position);
    if (low_end == std::string_view::npos) return std::nullopt;
    ClassItem item{ClassItem::Kind::kCharacter, pattern.substr(position, low_end - position), {}};
    position = low_end;
    if (position + 1 < pattern.size() && pattern[position] == '-' && pattern[position + 1] != ']') {
      size_t high_end = CharacterEnd(pattern, position + 1);
      if (high_end == std::string_view::npos) return std::nullopt;
      item.high = pattern.substr(position + 1, high_end - position - 1);
      position = high_end;
    }
    parsed.items.push_back(item);
  }
  parsed.end = position + 1;
  return parsed;
}

// A class character that means something by where it stands ('^' first,
// ']' first, '-' between two, '[' before ':') escaped, so the items can be
// rearranged; an escaped punctuation character is always itself in RE2.
std::string StandAlone(std::string_view character) {
  if (character.size() == 1 && std::strchr("[]^-", character[0]) != nullptr) {
    return "\\" + std::string(character);
  }
  return std::string(character);
}

std::string RewriteBracketClass(const BracketClass& parsed) {
  // Every item but \W, with \d \D \s \S \w spelled as items RE2 can nest.
  std::string others;
  bool has_not_word = false;
  for (const ClassItem& item : parsed.items) {
    switch (item.kind) {
      case ClassItem::Kind::kVerbatim:
        others += item.text;
        break;
      case ClassItem::Kind::kCharacter:
        others += StandAlone(item.text);
        if (!item.high.empty()) others += "-" + StandAlone(item.high);
        break;
      case ClassItem::Kind::kPerlClass:
        switch (item.text[0]) {
          case 'd':
            others += "\\p{Nd}";
            break;
          case 'D':
            others += "\\P{Nd}";
            break;
          case 's':
            others += SpaceItems();
            break;
          case 'S':
            others += NotSpaceItems();
            break;
          case 'w':
            others += WordItems();
            break;
          default:  // 'W'
            has_not_word = true;
            break;
        }
        break;
    }
  }
  if (!has_not_word) return (parsed.negated ? "[^" : "[") + others + "]";
  // \W is the complement of a union, which RE2 cannot nest in brackets.
  if (!parsed.negated) {
    // [x\W] is x or \W.
    if (others.empty()) return "[^" + WordItems() + "]";
    return "(?:[" + others + "]|[^" + WordItems() + "])";
  }
  // [^x\W] is \w without x: the union, over the parts of \w, of the part
  // without x, and a part P without x is [^x<not P>].
  if (others.empty()) return "[" + WordItems() + "]";
  std::string alternation = "(?:[^" + others + ComplementItems(kWordExtras) + "]";
  for (const char* category : kWordCategories) {
    alternation += std::string("|[^") + others + "\\P{" + category + "}]";
  }
  return alternation + ")";
}

}  // namespace

std::string UnicodePerlClasses(std::string_view pattern) {
  // Every rewritten form starts with a backslash.
  if (pattern.find('\\') == std::string_view::npos) return std::string(pattern);
  std::string rewritten;
  rewritten.reserve(pattern.size());
  size_t position = 0;
  while (position < pattern.size()) {
    char c = pattern[position];
    if (c == '\\') {
      char escaped = position + 1 < pattern.size() ? pattern[position + 1] : '\0';
      if (escaped == 'Q') {
        // Literal up to \E or the end; RE2 does not look at backslashes
        // inside except for that \E.
        size_t close = pattern.find("\\E", position + 2);
        size_t end = close == std::string_view::npos ? pattern.size() : close + 2;
        rewritten.append(pattern.substr(position, end - position));
        position = end;
        continue;
      }
      if (IsPerlClass(escaped)) {
        rewritten += PerlClassOutsideBrackets(escaped);
        position += 2;
        continue;
      }
      size_t end = EscapeEnd(pattern, position);
      if (end == std::string_view::npos) break;  // copied below
      rewritten.append(pattern.substr(position, end - position));
      position = end;
    } else if (c == '[') {
      std::optional<BracketClass> parsed = ParseBracketClass(pattern, position);
      if (!parsed) break;
      if (parsed->has_perl_class) {
        rewritten += RewriteBracketClass(*parsed);
      } else {
        rewritten.append(pattern.substr(position, parsed->end - position));
      }
      position = parsed->end;
    } else {
      rewritten += c;
      ++position;
    }
  }
  // A malformed rest goes to RE2 as it is, for RE2 to reject.
  rewritten.append(pattern.substr(position));
  return rewritten;
}

}  // namespace toolvfs
