// Redaction of secret values in everything returned to a tool (SPEC.md §3.3).
//
// Every value the host forwarded to a process or substituted into a request
// (4 characters or more) is replaced by "[REDACTED]" wherever it appears in
// process stdout/stderr and HTTP bodies and headers — as itself, in base64
// (at each of the three byte alignments, standard and URL-safe alphabets,
// so `Basic base64(user:secret)` is caught) and percent-encoded (upper and
// lower case hex).
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

  // `text` with every occurrence of every form replaced. Longer needles win
  // where occurrences overlap. Runs in time linear in the text times the
  // number of needles at worst.
  std::string Scrub(std::string_view text) const;

 private:
  std::vector<std::string> needles_;  // every encoded form, longest first
};

}  // namespace toolvfs
