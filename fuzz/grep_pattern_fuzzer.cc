// libFuzzer target: UnicodePerlClasses never crashes; LineMatcher accepts
// exactly the patterns RE2 accepts as written, with a one-line error
// naming the pattern otherwise; and on ASCII text (no vertical tab, where
// the Unicode and ASCII classes agree) it selects the lines RE2 selects
// with the pattern as written. Build and run with `make fuzz`.
#include <re2/re2.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/text.h"
#include "project/grep_matcher.h"
#include "project/grep_pattern.h"

namespace {

constexpr std::string_view kAsciiText =
    "a_b c\nfoo-bar\n[x]^y\\z\n\tQ E\n12 ab_\n:\n\n(?)*{}\nW  w-S\nAZ_09\nkK sS\n";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Long inputs and counted repetitions only find slow compiles (a Unicode
  // \w{1000} takes seconds), not bugs of the rewrite.
  if (size > 64) return 0;
  std::string_view input(reinterpret_cast<const char*>(data), size);
  if (input.find('{') != std::string_view::npos || input.find('\n') != std::string_view::npos) {
    return 0;
  }
  bool case_insensitive = !input.empty() && input.back() == 'I';
  std::string pattern(input);
  (void)toolvfs::UnicodePerlClasses(pattern);

  RE2::Options options;
  options.set_log_errors(false);
  options.set_case_sensitive(!case_insensitive);
  RE2 original(pattern, options);
  toolvfs::Result<std::unique_ptr<toolvfs::LineMatcher>> matcher =
      toolvfs::LineMatcher::Create(pattern, case_insensitive);
  if (!matcher.ok()) {
    const std::string& message = matcher.status().message();
    if (message.rfind("Invalid pattern " + toolvfs::Quote(pattern) + ": ", 0) != 0) std::abort();
    if (original.ok() && message.find("pattern too large") == std::string::npos) std::abort();
    return 0;
  }
  if (!original.ok()) std::abort();

  std::vector<size_t> expected;
  for (size_t line_start = 0; line_start < kAsciiText.size();) {
    size_t line_end = kAsciiText.find('\n', line_start);
    if (RE2::PartialMatch(kAsciiText.substr(line_start, line_end - line_start), original)) {
      expected.push_back(line_start);
    }
    line_start = line_end + 1;
  }
  std::vector<size_t> actual;
  for (size_t from = 0;;) {
    std::optional<toolvfs::LineMatcher::Line> found = (*matcher)->FindMatchingLine(kAsciiText, from);
    if (!found) break;
    actual.push_back(found->begin);
    from = found->end + 1;
  }
  if (actual != expected) std::abort();
  return 0;
}
