// grep against the real ripgrep over non-ASCII text: the lines LineMatcher
// selects are the lines `rg` prints, for patterns built on \d \s \w and
// their complements, in and out of brackets. ripgrep is a test dependency
// (scripts/install-deps.sh, run by `make test`); a missing rg fails.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "core/text.h"
#include "project/grep_lines.h"
#include "project/grep_literals.h"
#include "project/grep_matcher.h"
#include "project/test_util.h"

namespace toolvfs {
namespace {

std::optional<std::string> FindRipgrep() {
  const char* path = std::getenv("PATH");
  std::stringstream directories(path == nullptr ? "/usr/bin:/bin" : path);
  std::string directory;
  while (std::getline(directories, directory, ':')) {
    std::string candidate = (directory.empty() ? "." : directory) + "/rg";
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return std::nullopt;
}

// Numbers (0-based) of the lines of `file` that rg prints for `pattern`
// (passed in a file, so no shell quoting touches it).
std::vector<bool> RipgrepLines(const std::string& rg, const TempDir& directory,
                               const std::string& file, std::string_view pattern,
                               bool case_insensitive, size_t line_count) {
  std::vector<bool> matches(line_count, false);
  std::string pattern_file = directory.path() + "/pattern";
  WriteRealFile(pattern_file, pattern);
  std::string command = ShellQuoted(rg) +
                        " --no-config --no-ignore --hidden --color never --line-number"
                        " --no-filename --no-heading " +
                        std::string(case_insensitive ? "--ignore-case " : "--case-sensitive ") +
                        "-f " + ShellQuoted(pattern_file) + " " + ShellQuoted(file);
  std::unique_ptr<FILE, int (*)(FILE*)> output(popen(command.c_str(), "r"), pclose);
  if (output == nullptr) {
    ADD_FAILURE() << "cannot run " << command;
    return matches;
  }
  std::string text;
  char buffer[65536];
  size_t count;
  while ((count = fread(buffer, 1, sizeof buffer, output.get())) > 0) text.append(buffer, count);
  int status = pclose(output.release());
  // 0: lines found, 1: none.
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) <= 1) << command << ": " << status;
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    size_t line_number = std::strtoul(text.c_str() + start, nullptr, 10);
    if (line_number >= 1 && line_number <= line_count) {
      matches[line_number - 1] = true;
    } else {
      ADD_FAILURE() << "unexpected rg output: " << Quote(text.substr(start, end - start));
    }
    start = end + 1;
  }
  return matches;
}

class GrepRipgrepTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::optional<std::string> found = FindRipgrep();
    ASSERT_TRUE(found.has_value())
        << "ripgrep (rg) is not installed: run scripts/install-deps.sh (make test does)";
    rg_ = *found;
  }

  // The line numbers (1-based) on which rg and LineMatcher disagree, with
  // the line, for the failure message; empty if they agree.
  // Lines where `excused` is set do not count; `excused_count` says how
  // many of them disagreed. rg runs `rg_pattern` if it is not empty.
  std::string Disagreements(const std::string& file, std::string_view text,
                            std::string_view pattern, bool case_insensitive,
                            const std::vector<bool>* excused = nullptr,
                            size_t* excused_count = nullptr, std::string_view rg_pattern = {}) {
    size_t line_count = CountNewlines(text);
    std::vector<bool> ours = MatchingLines(pattern, text, case_insensitive);
    std::vector<bool> theirs = RipgrepLines(rg_, directory_, file,
                                            rg_pattern.empty() ? pattern : rg_pattern,
                                            case_insensitive, line_count);
    std::string report;
    size_t start = 0;
    size_t shown = 0;
    for (size_t line = 0; line < line_count; ++line) {
      size_t end = text.find('\n', start);
      if (ours[line] != theirs[line] && excused != nullptr && (*excused)[line]) {
        ++*excused_count;
      } else if (ours[line] != theirs[line] && ++shown <= 10) {
        report += "\n  line " + std::to_string(line + 1) + " " +
                  Quote(text.substr(start, end - start)) + ": rg " +
                  (theirs[line] ? "matches" : "does not");
      }
      start = end + 1;
    }
    if (shown > 10) report += "\n  ... " + std::to_string(shown) + " lines in all";
    return report;
  }

  std::string rg_;
  TempDir directory_;
};

// Text mixing scripts, digits, spaces and marks, one kind of trouble per
// line, then random lines over the same characters.
std::string SampleText() {
  std::vector<std::string> lines = {
      "café au lait",
      "naïve résumé",
      "é",
      "xé",
      "éx",
      "λόγος και ἔργον",
      "Москва 2024",
      "東京都 漢字",
      "Myanmar ၃ digit",
      "Arabic-Indic ٣٤ digits",
      "fullwidth ３ and Ｔｅｘｔ",
      "superscript² only",
      "a\u00A0b",  // no-break space
      "a\u3000b",  // ideographic space
      "a\u2003b",  // em space
      "a\u200Bb",  // zero width space: Cf, not White_Space
      "a\vb",
      "a\u0085b",
      "e\u0301 combining",
      "\u0301",
      "Ⅻ roman",
      "Ⓐ circled",
      "🄰 squared",
      "a\u200Db joiner",
      "under‿tie",
      "snake_case",
      "kebab-case",
      "tab\there",
      "emoji 🎉 party",
      "Kelvin \u212A and long \u017F",
      "ǅ titlecase",
      "ÉCOLE école",
      "\\w literal",
      "plain ascii words 42",
      "   ",
      "",
      "!?.,;:",
      "_",
      "x_y-z",
      "ß straße",
  };
  const std::vector<std::string> pieces = {
      "a", "Z", "_", "-", "0", "9", " ", "\t", "é", "É", "λ", "ж", "字", "၃", "٣", "３", "²",
      "\u00A0", "\u3000", "\u2028", "\u200B", "\u200D", "\u0301", "Ⅻ", "Ⓐ", "‿", "🎉", "!",
      "\\", "[", "]", "ſ", "K", "k"};
  std::mt19937 random(5);
  for (int line = 0; line < 400; ++line) {
    std::string text;
    size_t length = random() % 9;
    for (size_t index = 0; index < length; ++index) text += pieces[random() % pieces.size()];
    lines.push_back(text);
  }
  std::string text;
  for (const std::string& line : lines) text += line + "\n";
  return text;
}

TEST_F(GrepRipgrepTest, SelectsTheLinesRipgrepSelectsOnNonAsciiText) {
  const std::string text = SampleText();
  const std::string file = directory_.path() + "/sample.txt";
  WriteRealFile(file, text);
  const char* patterns[] = {
      "\\w",          "^\\w+$",        "é\\w",          "\\wé",           "\\d",
      "^\\d+$",       "\\d\\d",        "\\s",           "\\S\\s\\S",      "^\\s*$",
      "\\W",          "^\\W+$",        "\\D",           "^\\D+$",         "\\S",
      "[\\w-]+",      "^[\\w-]+$",     "[^\\s]",        "^[^\\s]+$",      "[^\\W\\d_]",
      "^[^\\W\\d_]+$", "[\\W_]",       "^[\\W\\d]+$",   "[^\\S\\t]",      "a\\sb",
      "\\w+\\s\\d",   "É\\w",          "\\\\w",          "[[:word:]]+é",
      "\\p{Greek}\\w", "^\\w\\w\\w$",  "^[\\s\\d]+$",   "[^\\D]",         "^[\\S]+$",
      "^[\\W\\S]+$",  "[^\\W\\s]{3}",  "x\\W?y",        "^.\\w",          "\\w\\W\\w",
      "k\\w",         "(?i)K\\W",      "s\\w",          "^[^\\d\\s]+$",   "[a-c\\d]\\w",
  };
  for (const char* pattern : patterns) {
    for (bool case_insensitive : {false, true}) {
      EXPECT_EQ(Disagreements(file, text, pattern, case_insensitive), "")
          << Quote(pattern) << (case_insensitive ? " -i" : "");
    }
  }
}

// \b stays ASCII; the alternatives docs/grep.md gives select the lines
// ripgrep's Unicode \b selects.
TEST_F(GrepRipgrepTest, WordBoundaryAlternatives) {
  const std::string text = SampleText() + "école\néfoo\nfooé\nfoo\nfoo-bar\nfoo_\nx foo y\n";
  const std::string file = directory_.path() + "/sample.txt";
  WriteRealFile(file, text);
  struct Case {
    const char* ours;
    const char* ripgrep;
  };
  for (const Case& test_case : {Case{"(?:^|\\W)école", "\\bécole"}, Case{"foo(?:\\W|$)", "foo\\b"},
                                Case{"(?:^|\\W)foo(?:\\W|$)", "\\bfoo\\b"},
                                Case{"(?:^|\\W)é", "\\bé"}, Case{"é(?:\\W|$)", "é\\b"},
                                Case{"(?:^|\\W)\\w\\w(?:\\W|$)", "\\b\\w\\w\\b"}}) {
    for (bool case_insensitive : {false, true}) {
      EXPECT_EQ(Disagreements(file, text, test_case.ours, case_insensitive, nullptr, nullptr,
                              test_case.ripgrep),
                "")
          << Quote(test_case.ours) << " against rg " << Quote(test_case.ripgrep);
    }
  }
  // RE2's own \b does differ.
  EXPECT_NE(Disagreements(file, text, "\\bé", false), "");
}

// Random sequences of the classes, literals and quantifiers, anchored or
// not, with and without -i.
TEST_F(GrepRipgrepTest, RandomPatternsSelectTheLinesRipgrepSelects) {
  const std::string text = SampleText();
  const std::string file = directory_.path() + "/sample.txt";
  WriteRealFile(file, text);
  const std::vector<std::string> atoms = {
      "\\w", "\\W", "\\d", "\\D", "\\s", "\\S", "[\\w-]", "[^\\W\\d_]", "[\\W_]",
      "[^\\S\\t]", "[\\d\\s]", "[^\\w\\s]", "[^\\D]", "[\\S\\d]", "é", "a", "_", "-", " ",
      ".", "k", "(?:\\w|\\s)", "\\p{Greek}"};
  const std::vector<std::string> quantifiers = {"", "", "", "+", "*", "?", "{2}"};
  std::mt19937 random(7);
  for (int round = 0; round < 120; ++round) {
    std::string pattern = random() % 4 == 0 ? "^" : "";
    size_t length = 1 + random() % 4;
    for (size_t index = 0; index < length; ++index) {
      pattern += atoms[random() % atoms.size()] + quantifiers[random() % quantifiers.size()];
    }
    if (random() % 4 == 0) pattern += "$";
    bool case_insensitive = random() % 3 == 0;
    EXPECT_EQ(Disagreements(file, text, pattern, case_insensitive), "")
        << Quote(pattern) << (case_insensitive ? " -i" : "");
  }
}

// Each code point on a line of its own. The classes agree except on code
// points that only one engine's Unicode tables have assigned: Debian 12's
// RE2 knows Unicode 15, its rg 13 Unicode 14 (RE2 has no \p{Cn}; a code
// point is assigned for it if some other general category holds it).
TEST_F(GrepRipgrepTest, ClassesOverEveryCodePoint) {
  std::string text;
  for (char32_t code_point = 1; code_point <= 0x10FFFF; ++code_point) {
    if (code_point == '\n' || (code_point >= 0xD800 && code_point <= 0xDFFF)) continue;
    text += EncodeUtf8(code_point) + "\n";
  }
  const std::string file = directory_.path() + "/code_points.txt";
  WriteRealFile(file, text);
  const size_t line_count = CountNewlines(text);
  std::vector<bool> unassigned_for_rg =
      RipgrepLines(rg_, directory_, file, "^\\p{Cn}$", false, line_count);
  std::vector<bool> assigned_for_re2 =
      MatchingLines("^[\\p{L}\\p{M}\\p{N}\\p{P}\\p{S}\\p{Z}\\p{Cc}\\p{Cf}\\p{Co}]$", text, false);
  std::vector<bool> assigned_in_one(line_count);
  size_t assigned_in_one_count = 0;
  for (size_t line = 0; line < line_count; ++line) {
    assigned_in_one[line] = unassigned_for_rg[line] == assigned_for_re2[line];
    assigned_in_one_count += assigned_in_one[line];
  }
  // A sanity bound: Unicode 15 added 4,489 code points.
  EXPECT_LT(assigned_in_one_count, 20000u);
  for (const char* pattern : {"^\\w$", "^\\d$", "^\\s$", "^\\W$", "^\\S$", "^[^\\W\\d_]$",
                              "^[\\W_]$", "^[\\w\\s]$"}) {
    size_t excused = 0;
    EXPECT_EQ(Disagreements(file, text, pattern, false, &assigned_in_one, &excused), "")
        << Quote(pattern);
    std::printf("%s: %zu code points differ, all assigned in one engine only (of %zu)\n",
                pattern, excused, assigned_in_one_count);
  }
}

}  // namespace
}  // namespace toolvfs
