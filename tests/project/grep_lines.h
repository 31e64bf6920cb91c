// Helpers shared by the grep pattern tests: UTF-8 encoding of a code point,
// and the lines of a text a LineMatcher selects.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "project/grep_literals.h"
#include "project/grep_matcher.h"

namespace toolvfs {

inline std::string EncodeUtf8(char32_t code_point) {
  std::string bytes;
  if (code_point < 0x80) {
    bytes += static_cast<char>(code_point);
  } else if (code_point < 0x800) {
    bytes += static_cast<char>(0xC0 | (code_point >> 6));
    bytes += static_cast<char>(0x80 | (code_point & 0x3F));
  } else if (code_point < 0x10000) {
    bytes += static_cast<char>(0xE0 | (code_point >> 12));
    bytes += static_cast<char>(0x80 | ((code_point >> 6) & 0x3F));
    bytes += static_cast<char>(0x80 | (code_point & 0x3F));
  } else {
    bytes += static_cast<char>(0xF0 | (code_point >> 18));
    bytes += static_cast<char>(0x80 | ((code_point >> 12) & 0x3F));
    bytes += static_cast<char>(0x80 | ((code_point >> 6) & 0x3F));
    bytes += static_cast<char>(0x80 | (code_point & 0x3F));
  }
  return bytes;
}

// For each line of `text` (which ends with '\n'), whether LineMatcher
// selects it; a pattern it rejects is a test failure.
inline std::vector<bool> MatchingLines(std::string_view pattern, std::string_view text,
                                       bool case_insensitive = false) {
  Result<std::unique_ptr<LineMatcher>> matcher = LineMatcher::Create(pattern, case_insensitive);
  EXPECT_TRUE(matcher.ok()) << matcher.status().message();
  std::vector<bool> matches(CountNewlines(text), false);
  if (!matcher.ok()) return matches;
  size_t line_number = 0;
  size_t line_start = 0;
  size_t from = 0;
  while (std::optional<LineMatcher::Line> line = (*matcher)->FindMatchingLine(text, from)) {
    line_number += CountNewlines(text.substr(line_start, line->begin - line_start));
    line_start = line->begin;
    matches.at(line_number) = true;
    from = line->end + 1;
  }
  return matches;
}

}  // namespace toolvfs
