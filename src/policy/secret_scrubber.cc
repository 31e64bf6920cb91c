// PLACEHOLDER: replaced by the process.run work (issue 4).
#include "policy/secret_scrubber.h"

namespace toolvfs {
SecretScrubber::SecretScrubber(const std::vector<std::string>&) {}
std::string SecretScrubber::Scrub(std::string_view text) const { return std::string(text); }
}  // namespace toolvfs
