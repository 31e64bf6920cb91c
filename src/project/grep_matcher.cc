#include "project/grep_matcher.h"

#include <re2/filtered_re2.h>
#include <re2/re2.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "core/text.h"
#include "project/grep_pattern.h"

namespace toolvfs {
namespace {

// Prefilter atoms shorter than this find too many candidates to pay off.
constexpr int kMinAtomLength = 3;
// RE2's default budget (8 MiB) makes its DFA thrash on large Unicode or
// case-folded patterns over hundreds of megabytes; a budget is a cap only.
constexpr int64_t kRegexMemoryBudget = 64 << 20;
// The largest program a pattern may compile to, in RE2 instructions (8
// bytes each). A Unicode \w is about 1,400, so \w{1000} would be 1.4
// million, which took seconds to compile per matcher (one per worker);
// ripgrep refuses it too ("Compiled regex exceeds size limit"). A first
// compile under this limit fails such a pattern in milliseconds.
constexpr int64_t kMaxProgramInstructions = 200'000;
// The max_mem that makes RE2 stop compiling past kMaxProgramInstructions:
// RE2 gives the compiler two thirds of max_mem and allows it a quarter of
// that in instructions (re2/compile.cc, Compiler::Setup), plus the
// program's own header, for which 4 KiB is ample.
constexpr int64_t kProgramCheckMemory = (kMaxProgramInstructions * 4 * 8 + 4096) * 3 / 2;

// What a textual look at the pattern can tell without RE2's parser (which
// is not public API). Every flag errs on the safe, slower side.
struct PatternTraits {
  bool is_literal = true;           // no operator: the pattern is `literal`
  std::string literal;              // escaped punctuation unescaped
  bool needs_each_line = false;     // \A, \z, \Q, a flag group naming 'm'
  bool can_cross_lines = false;     // \C matches any byte, '\n' included
  bool may_fold_case = false;       // a flag group naming 'i'
  bool may_name_non_ascii = false;  // a non-ASCII byte, \x, \p or \P
};

bool IsAsciiPunctuation(char c) {
  auto byte = static_cast<uint8_t>(c);
  return byte > 0x20 && byte < 0x7F && !(c >= '0' && c <= '9') &&
         !((c | 0x20) >= 'a' && (c | 0x20) <= 'z');
}

// Looks at an escape "\<c>" outside or inside a class.
void NoteEscape(char c, PatternTraits& traits) {
  switch (c) {
    case 'A':
    case 'z':
    case 'Q':  // \Q...\E may hide anything; not worth parsing here
      traits.needs_each_line = true;
      break;
    case 'C':
      traits.can_cross_lines = true;
      break;
    case 'x':
    case 'p':
    case 'P':
      traits.may_name_non_ascii = true;
      break;
    default:
      break;
  }
}

PatternTraits AnalyzePattern(std::string_view pattern) {
  PatternTraits traits;
  size_t offset = 0;
  while (offset < pattern.size()) {
    char c = pattern[offset];
    if (static_cast<uint8_t>(c) >= 0x80) {
      traits.may_name_non_ascii = true;
      traits.literal += c;
      ++offset;
    } else if (c == '\\') {
      if (offset + 1 >= pattern.size()) {
        traits.is_literal = false;
        traits.needs_each_line = true;
        break;
      }
      char escaped = pattern[offset + 1];
      NoteEscape(escaped, traits);
      if (IsAsciiPunctuation(escaped)) {
        traits.literal += escaped;
      } else {
        traits.is_literal = false;
      }
      offset += 2;
    } else if (c == '[') {
      traits.is_literal = false;
      size_t position = offset + 1;
      if (position < pattern.size() && pattern[position] == '^') ++position;
      if (position < pattern.size() && pattern[position] == ']') ++position;  // a literal ']'
      while (position < pattern.size() && pattern[position] != ']') {
        if (pattern[position] == '\\' && position + 1 < pattern.size()) {
          NoteEscape(pattern[position + 1], traits);
          position += 2;
        } else if (pattern.substr(position, 2) == "[:") {
          size_t close = pattern.find(":]", position + 2);
          position = close == std::string_view::npos ? pattern.size() : close + 2;
        } else {
          if (static_cast<uint8_t>(pattern[position]) >= 0x80) traits.may_name_non_ascii = true;
          ++position;
        }
      }
      // RE2 accepted the pattern, so an unclosed class means this scan went
      // wrong: give up on the fast paths.
      if (position >= pattern.size()) traits.needs_each_line = true;
      offset = position + 1;
    } else if (c == '(') {
      traits.is_literal = false;
      if (offset + 1 < pattern.size() && pattern[offset + 1] == '?') {
        // Flags come right after "(?"; "(?:" and "(?P<" name none (the
        // rewrite of [\W...] makes "(?:" groups).
        for (size_t position = offset + 2;
             position < pattern.size() && std::strchr("imsU-", pattern[position]) != nullptr &&
             pattern[position] != '\0';
             ++position) {
          if (pattern[position] == 'm') traits.needs_each_line = true;
          if (pattern[position] == 'i') traits.may_fold_case = true;
        }
      }
      ++offset;
    } else if (std::strchr(".+*?)|{}^$]", c) != nullptr && c != '\0') {
      traits.is_literal = false;
      ++offset;
    } else {
      traits.literal += c;
      ++offset;
    }
  }
  return traits;
}

RE2::Options RegexOptions(bool case_insensitive) {
  RE2::Options options;
  options.set_case_sensitive(!case_insensitive);
  options.set_log_errors(false);
  options.set_max_mem(kRegexMemoryBudget);
  return options;
}

// Whether `byte` may stand for itself in a prefilter needle. RE2's atoms
// are lower-cased, and folding reaches beyond ASCII: with 'i' on, 'k' and
// 's' also match U+212A KELVIN SIGN and U+017F LONG S; and a non-ASCII
// pattern character may lower-case to ASCII (U+0130 to 'i', U+212A to 'k').
bool IsSafeNeedleByte(uint8_t byte, const PatternTraits& traits) {
  if (byte < 0x20 || byte >= 0x7F) return false;  // control, '\n' and non-ASCII bytes
  uint8_t lower = byte | 0x20;
  if (traits.may_fold_case && (lower == 'k' || lower == 's')) return false;
  if (traits.may_name_non_ascii && (lower == 'i' || lower == 'k')) return false;
  return true;
}

// The longest run of safe bytes of `atom`.
std::string_view LongestSafeRun(std::string_view atom, const PatternTraits& traits) {
  std::string_view best;
  size_t run_start = 0;
  for (size_t offset = 0; offset <= atom.size(); ++offset) {
    if (offset == atom.size() || !IsSafeNeedleByte(static_cast<uint8_t>(atom[offset]), traits)) {
      if (offset - run_start > best.size()) best = atom.substr(run_start, offset - run_start);
      run_start = offset + 1;
    }
  }
  return best;
}

// Needles at least one of which every matching line contains, found with
// ASCII case folding; nullopt if RE2's prefilter finds no such set, or the
// set is too weak or too large to help.
std::optional<std::vector<LiteralScanner::Needle>> PrefilterNeedles(std::string_view pattern,
                                                                    bool case_insensitive,
                                                                    const PatternTraits& traits) {
  re2::FilteredRE2 filter(kMinAtomLength);
  int id = 0;
  if (filter.Add(pattern, RegexOptions(case_insensitive), &id) != RE2::NoError) {
    return std::nullopt;
  }
  std::vector<std::string> atoms;
  filter.Compile(&atoms);
  // The prefilter is a monotone AND/OR of atoms: if it passes with none
  // present it requires nothing; otherwise every match holds some atom.
  std::vector<int> passes_without_atoms;
  filter.AllPotentials({}, &passes_without_atoms);
  if (atoms.empty() || !passes_without_atoms.empty()) return std::nullopt;

  std::vector<std::string> runs;
  for (const std::string& atom : atoms) {
    std::string_view run = LongestSafeRun(atom, traits);
    if (run.size() < static_cast<size_t>(kMinAtomLength)) return std::nullopt;
    runs.emplace_back(run);
  }
  // A needle containing another is redundant: the shorter one finds it.
  std::sort(runs.begin(), runs.end(),
            [](const std::string& a, const std::string& b) { return a.size() < b.size(); });
  std::vector<LiteralScanner::Needle> needles;
  for (const std::string& run : runs) {
    bool redundant = std::any_of(needles.begin(), needles.end(), [&run](const auto& needle) {
      return run.find(needle.bytes) != std::string::npos;
    });
    if (!redundant) needles.push_back({run, /*ascii_case_insensitive=*/true});
  }
  if (needles.size() > LiteralScanner::kMaxNeedles) return std::nullopt;
  return needles;
}

// The line of `text` holding `offset`, which lies in a line starting at or
// after `from`.
LineMatcher::Line LineAround(std::string_view text, size_t from, size_t offset) {
  LineMatcher::Line line{from, text.size()};
  if (offset > from) {
    const void* newline = memrchr(text.data() + from, '\n', offset - from);
    if (newline != nullptr)
      line.begin = static_cast<size_t>(static_cast<const char*>(newline) - text.data()) + 1;
  }
  if (offset < text.size()) {
    const void* newline = std::memchr(text.data() + offset, '\n', text.size() - offset);
    if (newline != nullptr)
      line.end = static_cast<size_t>(static_cast<const char*>(newline) - text.data());
  }
  return line;
}

}  // namespace

LineMatcher::~LineMatcher() = default;

Result<std::unique_ptr<LineMatcher>> LineMatcher::Create(std::string_view pattern,
                                                         bool case_insensitive) {
  // From here on `pattern` is what RE2 runs: \d \s \w as ripgrep means them.
  const std::string_view as_written = pattern;
  const std::string rewritten = UnicodePerlClasses(as_written);
  pattern = rewritten;
  std::unique_ptr<LineMatcher> matcher(new LineMatcher());
  {
    RE2::Options check_options = RegexOptions(case_insensitive);
    check_options.set_max_mem(kProgramCheckMemory);
    RE2 size_check(pattern, check_options);
    if (size_check.error_code() == RE2::ErrorPatternTooLarge) {
      // Unless the pattern as written has another error, which is then
      // reported below in RE2's words.
      bool written_is_valid = true;
      if (pattern != as_written) {
        RE2 original(as_written, check_options);
        written_is_valid = original.ok() || original.error_code() == RE2::ErrorPatternTooLarge;
      }
      if (written_is_valid) {
        return InvalidArgumentError(
            "Invalid pattern " + Quote(as_written) + ": pattern too large: it compiles to more than " +
            std::to_string(kMaxProgramInstructions) +
            " RE2 instructions, the limit of a pattern (a Unicode \\w is about 1,400 of them; ask "
            "for fewer repetitions, or for ASCII only with [0-9A-Za-z_])");
      }
    }
  }
  matcher->line_regex_ = std::make_unique<RE2>(pattern, RegexOptions(case_insensitive));
  if (pattern != as_written) {
    // A pattern RE2 rejects is rejected with RE2's words about what the
    // user wrote, not about the rewrite.
    RE2 original(as_written, RegexOptions(case_insensitive));
    if (!original.ok()) {
      return InvalidArgumentError("Invalid pattern " + Quote(as_written) + ": " + original.error());
    }
  }
  if (!matcher->line_regex_->ok()) {
    // The Unicode classes can make a pattern exceed the memory budget.
    return InvalidArgumentError("Invalid pattern " + Quote(as_written) + ": " +
                                matcher->line_regex_->error());
  }

  PatternTraits traits = AnalyzePattern(pattern);
  traits.may_fold_case |= case_insensitive;
  bool usable_literal = traits.is_literal && !traits.literal.empty() &&
                        traits.literal.find('\n') == std::string::npos;
  if (usable_literal && !case_insensitive) {
    matcher->strategy_ = Strategy::kLiteral;
    matcher->scanner_.emplace(std::vector<LiteralScanner::Needle>{{traits.literal, false}});
    return matcher;
  }
  if (usable_literal && std::all_of(traits.literal.begin(), traits.literal.end(), [&](char c) {
        return IsSafeNeedleByte(static_cast<uint8_t>(c), traits);
      })) {
    // ASCII without 'k' and 's': folding ASCII is exactly RE2's folding.
    matcher->strategy_ = Strategy::kLiteral;
    matcher->scanner_.emplace(std::vector<LiteralScanner::Needle>{{traits.literal, true}});
    return matcher;
  }
  if (std::optional<std::vector<LiteralScanner::Needle>> needles =
          PrefilterNeedles(pattern, case_insensitive, traits)) {
    matcher->strategy_ = Strategy::kPrefilter;
    matcher->scanner_.emplace(std::move(*needles));
    return matcher;
  }
  if (traits.needs_each_line) {
    matcher->strategy_ = Strategy::kEachLine;
    return matcher;
  }
  RE2::Options buffer_options = RegexOptions(case_insensitive);
  buffer_options.set_never_nl(true);
  matcher->buffer_regex_ = std::make_unique<RE2>("(?m)" + std::string(pattern), buffer_options);
  if (!matcher->buffer_regex_->ok()) {
    matcher->buffer_regex_.reset();
    matcher->strategy_ = Strategy::kEachLine;
    return matcher;
  }
  matcher->strategy_ =
      traits.can_cross_lines ? Strategy::kWholeBufferThenLine : Strategy::kWholeBuffer;
  return matcher;
}

bool LineMatcher::LineMatches(std::string_view line) const {
  return RE2::PartialMatch(re2::StringPiece(line.data(), line.size()), *line_regex_);
}

std::optional<LineMatcher::Line> LineMatcher::FindMatchingLine(std::string_view text,
                                                               size_t from) const {
  const re2::StringPiece whole_text(text.data(), text.size());
  while (from < text.size()) {
    Line line{};
    switch (strategy_) {
      case Strategy::kLiteral:
      case Strategy::kPrefilter: {
        size_t found = scanner_->Find(text, from);
        if (found == std::string_view::npos) return std::nullopt;
        line = LineAround(text, from, found);
        if (strategy_ == Strategy::kLiteral) return line;
        break;
      }
      case Strategy::kWholeBuffer:
      case Strategy::kWholeBufferThenLine: {
        re2::StringPiece match;
        if (!buffer_regex_->Match(whole_text, from, text.size(), RE2::UNANCHORED, &match, 1)) {
          return std::nullopt;
        }
        auto found = static_cast<size_t>(match.data() - text.data());
        // An empty match just after the final '\n' is not on any line.
        if (found == text.size() && text.back() == '\n') return std::nullopt;
        line = LineAround(text, from, found);
        if (strategy_ == Strategy::kWholeBuffer) return line;
        break;
      }
      case Strategy::kEachLine:
        line = LineAround(text, from, from);
        break;
    }
    if (LineMatches(text.substr(line.begin, line.end - line.begin))) return line;
    from = line.end + 1;
  }
  return std::nullopt;
}

}  // namespace toolvfs
