// UnicodePerlClasses: the rewrite of \d \s \w for RE2, and LineMatcher on
// top of it. The comparison with the real ripgrep is grep_ripgrep_test.cc.
#include "project/grep_pattern.h"

#include <gtest/gtest.h>
#include <re2/re2.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "core/text.h"
#include "project/grep_lines.h"
#include "project/grep_literals.h"
#include "project/grep_matcher.h"

namespace toolvfs {
namespace {

// Every code point but '\n' and the surrogates, one per line, in order.
const std::vector<char32_t>& AllCodePoints() {
  static const std::vector<char32_t> code_points = [] {
    std::vector<char32_t> all;
    for (char32_t code_point = 0; code_point <= 0x10FFFF; ++code_point) {
      if (code_point == '\n' || (code_point >= 0xD800 && code_point <= 0xDFFF)) continue;
      all.push_back(code_point);
    }
    return all;
  }();
  return code_points;
}

const std::string& AllCodePointsText() {
  static const std::string text = [] {
    std::string all;
    for (char32_t code_point : AllCodePoints()) all += EncodeUtf8(code_point) + "\n";
    return all;
  }();
  return text;
}

TEST(UnicodePerlClassesTest, LeavesPatternsWithoutTheEscapesAlone) {
  for (std::string_view pattern :
       {"SOCK_STREAM", "a.b*c", "[a-z]+", "\\bfoo\\B", "\\\\w", "\\\\\\\\d", "\\Q\\w\\d\\E",
        "\\Q\\w", "[[:word:]]", "[^[:space:]]", "\\p{Greek}\\pL\\P{Nd}", "(?i)foo", "(?P<word>x)",
        "\\x{41}\\x41\\101", "[\\]w]", "[\\\\w]", "[\\x{30}-\\x{39}]", "é\\.", "\\", "[\\w",
        "a\\Qb"}) {
    EXPECT_EQ(UnicodePerlClasses(pattern), pattern) << Quote(pattern);
  }
}

TEST(UnicodePerlClassesTest, RewritesEachForm) {
  const std::string word =
      "\\x{200C}-\\x{200D}\\x{24B6}-\\x{24E9}\\x{1F130}-\\x{1F149}\\x{1F150}-\\x{1F169}"
      "\\x{1F170}-\\x{1F189}\\p{L}\\p{M}\\p{Nd}\\p{Pc}\\p{Nl}";
  const std::string space =
      "\\x{9}-\\x{D}\\x{20}-\\x{20}\\x{85}-\\x{85}\\x{A0}-\\x{A0}\\x{1680}-\\x{1680}"
      "\\x{2000}-\\x{200A}\\x{2028}-\\x{2029}\\x{202F}-\\x{202F}\\x{205F}-\\x{205F}"
      "\\x{3000}-\\x{3000}";
  const std::string not_space =
      "\\x{0}-\\x{8}\\x{E}-\\x{1F}\\x{21}-\\x{84}\\x{86}-\\x{9F}\\x{A1}-\\x{167F}"
      "\\x{1681}-\\x{1FFF}\\x{200B}-\\x{2027}\\x{202A}-\\x{202E}\\x{2030}-\\x{205E}"
      "\\x{2060}-\\x{2FFF}\\x{3001}-\\x{10FFFF}";
  const std::string not_extras =
      "\\x{0}-\\x{200B}\\x{200E}-\\x{24B5}\\x{24EA}-\\x{1F12F}\\x{1F14A}-\\x{1F14F}"
      "\\x{1F16A}-\\x{1F16F}\\x{1F18A}-\\x{10FFFF}";
  struct Case {
    std::string pattern;
    std::string rewritten;
  };
  const Case cases[] = {
      {"\\d", "\\p{Nd}"},
      {"\\D", "\\P{Nd}"},
      {"\\s", "[" + space + "]"},
      {"\\S", "[^" + space + "]"},
      {"\\w", "[" + word + "]"},
      {"\\W", "[^" + word + "]"},
      {"é\\w+", "é[" + word + "]+"},
      {"\\\\\\d", "\\\\\\p{Nd}"},  // an escaped backslash, then \d
      {"\\Q\\d\\E\\d", "\\Q\\d\\E\\p{Nd}"},
      {"(?i)\\d", "(?i)\\p{Nd}"},
      {"[\\d]", "[\\p{Nd}]"},
      {"[^\\D]", "[^\\P{Nd}]"},
      {"[\\w-]", "[" + word + "\\-]"},
      {"[^\\s]", "[^" + space + "]"},
      {"[^\\S\\n]", "[^" + not_space + "\\n]"},
      {"[]^\\d-]", "[\\]\\^\\p{Nd}\\-]"},
      {"[a-c\\d[:alpha:]\\p{Greek}]", "[a-c\\p{Nd}[:alpha:]\\p{Greek}]"},
      {"[\\W]", "[^" + word + "]"},
      {"[^\\W]", "[" + word + "]"},
      {"[\\W_]", "(?:[_]|[^" + word + "])"},
      {"[^\\W\\d_]", "(?:[^\\p{Nd}_" + not_extras + "]|[^\\p{Nd}_\\P{L}]|[^\\p{Nd}_\\P{M}]|"
                     "[^\\p{Nd}_\\P{Nd}]|[^\\p{Nd}_\\P{Pc}]|[^\\p{Nd}_\\P{Nl}])"},
  };
  for (const Case& test_case : cases) {
    EXPECT_EQ(UnicodePerlClasses(test_case.pattern), test_case.rewritten)
        << Quote(test_case.pattern);
    EXPECT_TRUE(RE2(UnicodePerlClasses(test_case.pattern)).ok()) << Quote(test_case.pattern);
  }
}

// What each bracket form means, as sets of code points built from \w \d
// \s alone: the restructured classes mean what their items say, over
// every code point.
TEST(UnicodePerlClassesTest, BracketFormsMeanTheirItemsOverEveryCodePoint) {
  const std::string& text = AllCodePointsText();
  const std::vector<char32_t>& code_points = AllCodePoints();
  const std::vector<bool> word = MatchingLines("^\\w$", text);
  const std::vector<bool> digit = MatchingLines("^\\d$", text);
  const std::vector<bool> space = MatchingLines("^\\s$", text);
  const std::vector<bool> greek = MatchingLines("^\\p{Greek}$", text);
  using Predicate = std::function<bool(size_t)>;
  auto is = [&code_points](char32_t wanted) {
    return [&code_points, wanted](size_t line) { return code_points[line] == wanted; };
  };
  struct Case {
    const char* pattern;
    Predicate expected;
  };
  const Case cases[] = {
      {"^\\W$", [&](size_t line) { return !word[line]; }},
      {"^\\D$", [&](size_t line) { return !digit[line]; }},
      {"^\\S$", [&](size_t line) { return !space[line]; }},
      {"^[\\w]$", [&](size_t line) { return word[line]; }},
      {"^[^\\w]$", [&](size_t line) { return !word[line]; }},
      {"^[\\W]$", [&](size_t line) { return !word[line]; }},
      {"^[^\\W]$", [&](size_t line) { return word[line]; }},
      {"^[\\S]$", [&](size_t line) { return !space[line]; }},
      {"^[^\\S]$", [&](size_t line) { return space[line]; }},
      {"^[\\D]$", [&](size_t line) { return !digit[line]; }},
      {"^[^\\D]$", [&](size_t line) { return digit[line]; }},
      {"^[\\w-]$", [&](size_t line) { return word[line] || is('-')(line); }},
      {"^[\\W_]$", [&](size_t line) { return !word[line] || is('_')(line); }},
      {"^[^\\W\\d_]$", [&](size_t line) { return word[line] && !digit[line] && !is('_')(line); }},
      {"^[^\\S\\t]$", [&](size_t line) { return space[line] && !is('\t')(line); }},
      {"^[\\S\\s]$", [&](size_t) { return true; }},
      {"^[^\\S\\s]$", [&](size_t) { return false; }},
      {"^[\\W\\S]$", [&](size_t line) { return !word[line] || !space[line]; }},
      {"^[^\\W\\S]$", [&](size_t line) { return word[line] && space[line]; }},
      {"^[^\\W\\s]$", [&](size_t line) { return word[line] && !space[line]; }},
      {"^[\\Wa-c]$",
       [&](size_t line) { return !word[line] || (code_points[line] >= 'a' && code_points[line] <= 'c'); }},
      {"^[^\\Wa-c\\p{Greek}]$",
       [&](size_t line) {
         return word[line] && !(code_points[line] >= 'a' && code_points[line] <= 'c') &&
                !greek[line];
       }},
      {"^[\\d\\s]$", [&](size_t line) { return digit[line] || space[line]; }},
      {"^[^\\d\\s]$", [&](size_t line) { return !digit[line] && !space[line]; }},
      {"^[\\W-]$", [&](size_t line) { return !word[line] || is('-')(line); }},
      {"^[^\\W-]$", [&](size_t line) { return word[line] && !is('-')(line); }},
      {"^[^^\\W]$", [&](size_t line) { return word[line] && !is('^')(line); }},
  };
  for (const Case& test_case : cases) {
    std::vector<bool> actual = MatchingLines(test_case.pattern, text);
    size_t mismatches = 0;
    for (size_t line = 0; line < actual.size(); ++line) {
      if (actual[line] != test_case.expected(line) && ++mismatches <= 3) {
        ADD_FAILURE() << Quote(test_case.pattern) << " on U+" << std::hex
                      << static_cast<uint32_t>(code_points[line]) << ": " << actual[line];
      }
    }
    EXPECT_EQ(mismatches, 0u) << Quote(test_case.pattern);
  }
  // Spot checks of the definitions themselves (the full comparison is
  // with ripgrep).
  auto line_of = [&code_points](char32_t code_point) {
    return static_cast<size_t>(std::lower_bound(code_points.begin(), code_points.end(), code_point) -
                               code_points.begin());
  };
  EXPECT_TRUE(word[line_of(U'é')]);
  EXPECT_TRUE(word[line_of(U'\u0301')]);   // combining acute accent (Mn)
  EXPECT_TRUE(word[line_of(U'\u2166')]);   // ROMAN NUMERAL SEVEN (Nl)
  EXPECT_TRUE(word[line_of(U'\u24B6')]);   // CIRCLED LATIN CAPITAL LETTER A (So)
  EXPECT_TRUE(word[line_of(U'\u200D')]);   // ZERO WIDTH JOINER
  EXPECT_TRUE(word[line_of(U'\u203F')]);   // UNDERTIE (Pc)
  EXPECT_FALSE(word[line_of(U'\u00B2')]);  // SUPERSCRIPT TWO (No)
  EXPECT_TRUE(digit[line_of(U'\u1043')]);  // MYANMAR DIGIT THREE
  EXPECT_FALSE(digit[line_of(U'\u00B2')]);
  EXPECT_TRUE(space[line_of(U'\u00A0')]);
  EXPECT_TRUE(space[line_of(U'\u000B')]);  // vertical tab: not in RE2's ASCII \s
  EXPECT_FALSE(space[line_of(U'\u200B')]);  // ZERO WIDTH SPACE is Cf, not White_Space
}

TEST(UnicodePerlClassesTest, LineMatcherUsesTheUnicodeMeaning) {
  const std::string text = "café\nxé\n၃\na\u00A0b\nab\n";
  auto lines = [&text](std::string_view pattern) {
    std::vector<bool> matches = MatchingLines(pattern, text);
    std::string numbers;
    for (size_t line = 0; line < matches.size(); ++line) {
      if (matches[line]) numbers += std::to_string(line + 1);
    }
    return numbers;
  };
  EXPECT_EQ(lines("f\\w$"), "1");
  EXPECT_EQ(lines("^\\d$"), "3");
  EXPECT_EQ(lines("a\\sb"), "4");
  EXPECT_EQ(lines("^a\\S"), "5");
  EXPECT_EQ(lines("x\\W"), "");
  // RE2's \b stays ASCII: a boundary between 'f' or 'x' and 'é', none
  // before 'é' at the start of a word (docs/grep.md).
  EXPECT_EQ(lines("\\bé"), "12");
  EXPECT_EQ(lines("(?:^|\\W)é"), "");
}

TEST(UnicodePerlClassesTest, PrefilterStillFindsLiterals) {
  using Strategy = LineMatcher::Strategy;
  auto strategy = [](std::string_view pattern, bool case_insensitive) {
    Result<std::unique_ptr<LineMatcher>> matcher = LineMatcher::Create(pattern, case_insensitive);
    EXPECT_TRUE(matcher.ok()) << pattern;
    return matcher.ok() ? (*matcher)->strategy() : Strategy::kEachLine;
  };
  EXPECT_EQ(strategy("\\w+_RESUME", false), Strategy::kPrefilter);
  EXPECT_EQ(strategy("struct\\s+\\w+_ops", false), Strategy::kPrefilter);
  EXPECT_EQ(strategy("[^\\W\\d]+ERR", false), Strategy::kPrefilter);
  EXPECT_EQ(strategy("\\d+", false), Strategy::kWholeBuffer);
  const std::string text = "static struct\u00A0file_ops x;\nstruct  dev_ops y;\nstruct ops\n";
  EXPECT_EQ(MatchingLines("struct\\s+\\w+_ops", text), (std::vector<bool>{true, true, false}));
  // The "(?:" groups of a rewritten [\W...] turn on no case folding, but a
  // flag group does: then 's' and 'k' also match U+017F and U+212A.
  const std::string folded = "-sock_stream\n-\u017Fock_stream\n-soc\u212A_stream\n";
  EXPECT_EQ(MatchingLines("[\\W_]sock_stream", folded), (std::vector<bool>{true, false, false}));
  EXPECT_EQ(MatchingLines("(?i)[\\W_]sock_stream", folded), (std::vector<bool>{true, true, true}));
  EXPECT_EQ(MatchingLines("(?i:[\\W_])sock_stream|(?i)sock_stream", folded),
            (std::vector<bool>{true, true, true}));
  EXPECT_EQ(MatchingLines("[\\W_]sock_stream", folded, true), (std::vector<bool>{true, true, true}));
}

TEST(UnicodePerlClassesTest, BadPatternsAreReportedAsWritten) {
  for (std::string_view pattern : {"\\w(", "[\\w", "[a-\\w]", "\\w\\", "\\p{Nope}\\d", "\\8\\s"}) {
    Result<std::unique_ptr<LineMatcher>> matcher = LineMatcher::Create(pattern, false);
    ASSERT_FALSE(matcher.ok()) << Quote(pattern);
    RE2 original(pattern, RE2::Quiet);
    EXPECT_EQ(matcher.status().message(), "Invalid pattern " + Quote(pattern) + ": " + original.error());
  }
}

// A pattern whose program passes the size limit fails at once, naming the
// limit (before: \w{1000} compiled for seconds per worker, then searched).
TEST(UnicodePerlClassesTest, PatternsOverTheProgramSizeLimitFailNamingIt) {
  for (std::string pattern : {"\\w{1000}", "\\p{L}{1000}", "(?i)\\w{500}x", "[\\w-]{999}"}) {
    Result<std::unique_ptr<LineMatcher>> matcher = LineMatcher::Create(pattern, false);
    ASSERT_FALSE(matcher.ok()) << pattern;
    EXPECT_EQ(matcher.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(matcher.status().message().rfind("Invalid pattern " + Quote(pattern) +
                                                   ": pattern too large: it compiles to more than "
                                                   "200000 RE2 instructions",
                                               0),
              0u)
        << matcher.status().message();
  }
  // A syntax error is still reported as such.
  Result<std::unique_ptr<LineMatcher>> unbalanced = LineMatcher::Create("(\\w{1000}", false);
  ASSERT_FALSE(unbalanced.ok());
  EXPECT_NE(unbalanced.status().message().find("missing )"), std::string::npos);
  // Below the limit, repetitions of Unicode classes compile.
  EXPECT_TRUE(LineMatcher::Create("\\w{20}", false).ok());
  EXPECT_TRUE(LineMatcher::Create("a{1000}", false).ok());
}

// Random patterns over the characters that steer the rewrite never crash
// it; LineMatcher accepts exactly the patterns RE2 accepts as written
// (a rare Unicode rewrite over the memory budget aside) and says why in
// one line naming the pattern otherwise; and on ASCII text, where the
// Unicode and ASCII meanings agree (no vertical tab), the rewritten
// pattern selects the lines the original selects.
TEST(UnicodePerlClassesTest, RandomPatternsCompileOrFailClearly) {
  const std::vector<std::string> alphabet = {"\\", "\\", "\\", "w", "W", "s", "S", "d", "D", "[",
                                             "]", "^",  "Q",  "E", "-", "a", "_", ":", "(", ")",
                                             "?", "i",  "x",  "{", "}", "p", "L", " ", "é", "*"};
  const std::string ascii_text =
      "a_b c\nfoo-bar\n[x]^y\\z\n\tQ E\n12 ab_\n:\n\n(?)*{}\nW  w-S\nAZ_09\n";
  std::mt19937 random(16);
  size_t compiled = 0;
  for (int round = 0; round < 20000; ++round) {
    std::string pattern;
    size_t length = 1 + random() % 12;
    for (size_t index = 0; index < length; ++index) pattern += alphabet[random() % alphabet.size()];
    std::string rewritten = UnicodePerlClasses(pattern);
    bool case_insensitive = random() % 4 == 0;
    RE2::Options options;
    options.set_log_errors(false);
    options.set_case_sensitive(!case_insensitive);
    RE2 original(pattern, options);
    Result<std::unique_ptr<LineMatcher>> matcher = LineMatcher::Create(pattern, case_insensitive);
    if (!matcher.ok()) {
      const std::string& message = matcher.status().message();
      EXPECT_EQ(message.rfind("Invalid pattern " + Quote(pattern) + ": ", 0), 0u) << message;
      EXPECT_EQ(message.find('\n'), std::string::npos) << message;
      EXPECT_FALSE(original.ok()) << Quote(pattern) << " -> " << Quote(rewritten) << ": " << message;
      continue;
    }
    ASSERT_TRUE(original.ok()) << Quote(pattern) << " -> " << Quote(rewritten);
    ++compiled;
    std::vector<bool> actual = MatchingLines(pattern, ascii_text, case_insensitive);
    size_t line = 0;
    size_t start = 0;
    for (size_t end = ascii_text.find('\n'); end != std::string::npos;
         start = end + 1, end = ascii_text.find('\n', start), ++line) {
      std::string_view content(ascii_text.data() + start, end - start);
      EXPECT_EQ(actual[line], RE2::PartialMatch(content, original))
          << Quote(pattern) << " -> " << Quote(rewritten) << " on " << Quote(content);
    }
  }
  EXPECT_GT(compiled, 1000u);
}

}  // namespace
}  // namespace toolvfs
