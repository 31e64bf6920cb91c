// Redaction of secret values in everything returned to a tool (SPEC.md §3.3).
//
// Every value the host forwarded to a process or substituted into a request
// (4 characters or more) is replaced by "[REDACTED]" wherever it appears in
// process stdout/stderr and HTTP bodies and headers — as itself, in base64
// (at each of the three byte alignments, standard and URL-safe alphabets,
// so `Basic base64(user:secret)` is caught: the characters that depend on
// the value's bytes alone) and percent-encoded (every byte as %XX, or only
// the bytes outside RFC 3986's unreserved set, also with '+' for a space;
// upper and lower case hex). Other transformations (JSON or shell escaping,
// hex, mixed-case hex, a value printed in pieces) are not recognized:
// this protects against echoing a secret by accident, not against a
// program that hides it on purpose.
//
// Thread safety: immutable after construction; Scrub may run concurrently.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace toolvfs {

inline constexpr std::string_view kRedacted = "[REDACTED]";

class SecretScrubber {
 public:
  SecretScrubber() = default;
  // Values shorter than 4 bytes are ignored (redacting "a" would destroy
  // the output and protect nothing).
  explicit SecretScrubber(const std::vector<std::string>& secret_values);

  bool empty() const { return needles_.empty(); }

  // `text` with every occurrence of every form replaced. Occurrences that
  // overlap are replaced together by one "[REDACTED]" (so no part of either
  // shows); occurrences that merely touch get one each. Runs in time linear
  // in the text times the number of forms starting with the same byte.
  std::string Scrub(std::string_view text) const;

  // Scrub for output cut at a limit: the first `limit` bytes of `text`,
  // scrubbed, except that an occurrence starting before `limit` is
  // replaced whole even if it ends after it, so a secret cut in two shows
  // no prefix. For that guarantee, `text` must extend at least
  // longest_form_size() bytes past `limit` when the output went on.
  std::string ScrubPrefix(std::string_view text, size_t limit) const;

  // The length of the longest form (0 when empty()).
  size_t longest_form_size() const { return needles_.empty() ? 0 : needles_.front().size(); }

 private:
  // The length of the longest form occurring at text[position], or 0.
  size_t LongestMatchAt(std::string_view text, size_t position) const;

  std::vector<std::string> needles_;  // every encoded form, longest first
  // Per first byte, the indexes of the needles starting with it, longest
  // first: the scan only compares candidates.
  std::vector<std::vector<size_t>> needles_by_first_byte_;
};

}  // namespace toolvfs
