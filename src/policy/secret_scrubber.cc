#include "policy/secret_scrubber.h"

#include <algorithm>

#include "protocol/base64.h"

namespace toolvfs {
namespace {

// Shorter secrets are not redacted (header); forms shorter than this are
// not searched for either, so a short secret's base64 fragment cannot wipe
// unrelated output.
constexpr size_t kMinimumSize = 4;

// The base64 characters that depend only on `secret`'s bytes when it sits
// `alignment` (0, 1 or 2) bytes into a 3-byte group of a longer encoded
// stream: the same whatever precedes or follows it. Character j of an
// encoding covers bits [6j, 6j + 6); the secret covers bits [8a, 8a + 8n)
// of its group, so the characters from ceil(8a / 6) to floor((8a + 8n) / 6)
// are determined. Zero bytes stand in for the unknown neighbours.
std::string StableBase64(std::string_view secret, size_t alignment) {
  std::string padded(alignment, '\0');
  padded += secret;
  padded.append(2, '\0');  // so the last determined character is not '='
  std::string encoded = Base64Encode(padded);
  size_t first = (8 * alignment + 5) / 6;
  size_t end = 8 * (alignment + secret.size()) / 6;
  return encoded.substr(first, end - first);
}

std::string UrlSafeBase64(std::string standard) {
  std::replace(standard.begin(), standard.end(), '+', '-');
  std::replace(standard.begin(), standard.end(), '/', '_');
  return standard;
}

bool IsUnreserved(char c) {  // RFC 3986 §2.3
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
         c == '_' || c == '~';
}

// `secret` percent-encoded: every byte as %XX, or (`keep_unreserved`) only
// the bytes outside RFC 3986's unreserved set, as encodeURIComponent and
// most URL libraries do; with `space_as_plus`, a space is '+' (HTML forms).
std::string PercentEncoded(std::string_view secret, bool upper_case, bool keep_unreserved,
                           bool space_as_plus) {
  const char* digits = upper_case ? "0123456789ABCDEF" : "0123456789abcdef";
  std::string encoded;
  for (char c : secret) {
    if (keep_unreserved && IsUnreserved(c)) {
      encoded += c;
    } else if (space_as_plus && c == ' ') {
      encoded += '+';
    } else {
      auto byte = static_cast<unsigned char>(c);
      encoded += '%';
      encoded += digits[byte >> 4];
      encoded += digits[byte & 0xf];
    }
  }
  return encoded;
}

// Every form of `secret` that is redacted (duplicates included).
std::vector<std::string> EncodedForms(std::string_view secret) {
  std::vector<std::string> forms{std::string(secret)};
  for (size_t alignment = 0; alignment < 3; ++alignment) {
    std::string standard = StableBase64(secret, alignment);
    forms.push_back(UrlSafeBase64(standard));
    forms.push_back(std::move(standard));
  }
  for (bool upper_case : {true, false}) {
    forms.push_back(PercentEncoded(secret, upper_case, /*keep_unreserved=*/false, /*space_as_plus=*/false));
    forms.push_back(PercentEncoded(secret, upper_case, /*keep_unreserved=*/true, /*space_as_plus=*/false));
    forms.push_back(PercentEncoded(secret, upper_case, /*keep_unreserved=*/true, /*space_as_plus=*/true));
  }
  return forms;
}

}  // namespace

SecretScrubber::SecretScrubber(const std::vector<std::string>& secret_values) {
  for (const std::string& secret : secret_values) {
    if (secret.size() < kMinimumSize) continue;
    for (std::string& form : EncodedForms(secret)) {
      if (form.size() >= kMinimumSize) needles_.push_back(std::move(form));
    }
  }
  // Longest first (ties in byte order, for a deterministic result), once each.
  std::sort(needles_.begin(), needles_.end(), [](const std::string& a, const std::string& b) {
    return a.size() != b.size() ? a.size() > b.size() : a < b;
  });
  needles_.erase(std::unique(needles_.begin(), needles_.end()), needles_.end());
  if (needles_.empty()) return;
  needles_by_first_byte_.resize(256);
  for (size_t i = 0; i < needles_.size(); ++i) {
    needles_by_first_byte_[static_cast<unsigned char>(needles_[i].front())].push_back(i);
  }
}

size_t SecretScrubber::LongestMatchAt(std::string_view text, size_t position) const {
  for (size_t index : needles_by_first_byte_[static_cast<unsigned char>(text[position])]) {
    if (text.substr(position).starts_with(needles_[index])) return needles_[index].size();
  }
  return 0;
}

std::string SecretScrubber::Scrub(std::string_view text) const { return ScrubPrefix(text, text.size()); }

std::string SecretScrubber::ScrubPrefix(std::string_view text, size_t limit) const {
  limit = std::min(limit, text.size());
  if (needles_.empty()) return std::string(text.substr(0, limit));
  std::string scrubbed;
  scrubbed.reserve(limit);
  size_t redacted_until = 0;  // end of the occurrences replaced so far
  size_t position = 0;
  while (position < limit) {
    // Copy the run of bytes no needle can start at, in one piece.
    if (position >= redacted_until &&
        needles_by_first_byte_[static_cast<unsigned char>(text[position])].empty()) {
      size_t run_end = position + 1;
      while (run_end < limit && needles_by_first_byte_[static_cast<unsigned char>(text[run_end])].empty()) {
        ++run_end;
      }
      scrubbed.append(text.substr(position, run_end - position));
      position = run_end;
      continue;
    }
    size_t match = LongestMatchAt(text, position);
    if (match > 0) {
      if (position >= redacted_until) scrubbed += kRedacted;
      redacted_until = std::max(redacted_until, position + match);
    } else if (position >= redacted_until) {
      scrubbed += text[position];
    }
    ++position;
  }
  return scrubbed;
}

}  // namespace toolvfs
