// Finds the lines of a buffer that match a grep pattern (SPEC.md §2.3).
//
// A line is the bytes before a '\n' (a '\r' before it stays part of the
// line); text after the last '\n' is a last line if it is not empty. A
// line matches if the RE2 pattern, with \d \s \w given ripgrep's Unicode
// meaning (UnicodePerlClasses, grep_pattern.h), matches somewhere within
// the line alone: exactly RE2::PartialMatch(line, UnicodePerlClasses(
// pattern)).
//
// The matcher never runs the regex line by line when it can avoid it:
//  - a plain literal is found with LiteralScanner over the whole buffer;
//  - otherwise the literals every match must contain (RE2's prefilter
//    atoms) find candidate lines, and only those lines meet the regex;
//  - otherwise one RE2 search runs over the whole buffer, compiled with
//    never_nl and "(?m)" so that a match cannot contain a '\n' and ^ and $
//    match at line boundaries. Patterns for which that is not the same as a
//    line alone (\A and \z, a flag group touching 'm', \C which matches a
//    '\n' even under never_nl, \Q...\E which the analysis does not parse)
//    check each candidate line, or every line, alone.
//
// A LineMatcher is immutable; RE2 makes it safe to share between threads,
// but each thread should own one so they do not contend for RE2's cache.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"
#include "project/grep_literals.h"

namespace re2 {
class RE2;
}  // namespace re2

namespace toolvfs {

class LineMatcher {
 public:
  // Compiles `pattern`. InvalidArgument "Invalid pattern '<pattern>': <RE2
  // error>" if RE2 rejects it, or its Unicode rewrite (which can only be
  // over RE2's memory budget: "pattern too large - compile failed").
  static Result<std::unique_ptr<LineMatcher>> Create(std::string_view pattern,
                                                     bool case_insensitive);
  LineMatcher(const LineMatcher&) = delete;
  LineMatcher& operator=(const LineMatcher&) = delete;
  ~LineMatcher();

  struct Line {
    size_t begin;  // offset of the line's first byte
    size_t end;    // offset of its '\n', or the size of the text
  };

  // The first matching line of `text` that begins at or after `from`, which
  // must be the beginning of a line (0 or just after a '\n').
  std::optional<Line> FindMatchingLine(std::string_view text, size_t from) const;

  // How the matcher searches; for tests and benchmarks.
  enum class Strategy {
    kLiteral,              // LiteralScanner alone: every occurrence is a match
    kPrefilter,            // LiteralScanner finds candidate lines, the regex checks them
    kWholeBuffer,          // one RE2 search over the rest of the buffer
    kWholeBufferThenLine,  // whole-buffer RE2 finds candidates, checked line alone
    kEachLine,             // the regex on every line alone
  };
  Strategy strategy() const { return strategy_; }

 private:
  LineMatcher() = default;

  bool LineMatches(std::string_view line) const;

  Strategy strategy_ = Strategy::kEachLine;
  std::unique_ptr<re2::RE2> line_regex_;    // the pattern as given: for one line alone
  std::unique_ptr<re2::RE2> buffer_regex_;  // "(?m)" + pattern, never_nl: for whole buffers
  std::optional<LiteralScanner> scanner_;
};

}  // namespace toolvfs
