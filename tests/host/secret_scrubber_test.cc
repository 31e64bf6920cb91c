// SecretScrubber (SPEC.md §3.3): every forwarded value of 4+ bytes is
// redacted as itself, in base64 at every byte alignment (both alphabets)
// and percent-encoded.

#include "policy/secret_scrubber.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "protocol/base64.h"

namespace toolvfs {
namespace {

std::string UrlSafe(std::string text) {
  for (char& c : text) {
    if (c == '+') c = '-';
    if (c == '/') c = '_';
  }
  return text;
}

TEST(SecretScrubberTest, ReplacesThePlainValueEverywhere) {
  SecretScrubber scrubber({"hunter22"});
  EXPECT_EQ(scrubber.Scrub("token=hunter22\nagain hunter22hunter22."),
            "token=[REDACTED]\nagain [REDACTED][REDACTED].");
  EXPECT_EQ(scrubber.Scrub("hunter2 is not it"), "hunter2 is not it");
  EXPECT_EQ(scrubber.Scrub(""), "");
}

TEST(SecretScrubberTest, IgnoresValuesShorterThanFourBytes) {
  SecretScrubber scrubber({"abc", "", "x"});
  EXPECT_TRUE(scrubber.empty());
  EXPECT_EQ(scrubber.Scrub("abc x YWJj"), "abc x YWJj");
  EXPECT_FALSE(SecretScrubber({"abcd"}).empty());
}

// `Basic base64(user:secret)` and every other prefix and suffix length: the
// characters that depend only on the secret's bytes are gone, the ones that
// also depend on the neighbours stay (they reveal at most 4 bits of it).
TEST(SecretScrubberTest, RedactsBase64AtEveryAlignmentInBothAlphabets) {
  const std::string secret = "s3cr3t?>~value";  // '?' '>' '~' give '+' and '/' in some alignments
  SecretScrubber scrubber({secret});
  for (std::string prefix : {"", "u", "us", "user:", "xuser:", "xyuser:"}) {
    for (std::string suffix : {"", "!", "!!", "!!!"}) {
      std::string stream = prefix + secret + suffix;
      std::string encoded = Base64Encode(stream);
      size_t alignment = prefix.size() % 3;
      size_t group_start = 4 * (prefix.size() / 3);
      size_t first = group_start + (8 * alignment + 5) / 6;
      size_t end = group_start + 8 * (alignment + secret.size()) / 6;
      std::string expected = encoded.substr(0, first) + "[REDACTED]" + encoded.substr(end);
      EXPECT_EQ(scrubber.Scrub("Authorization: Basic " + encoded), "Authorization: Basic " + expected)
          << "prefix '" << prefix << "' suffix '" << suffix << "'";
      EXPECT_EQ(scrubber.Scrub(UrlSafe(encoded)), UrlSafe(expected)) << "URL-safe, prefix '" << prefix << "'";
    }
  }
}

TEST(SecretScrubberTest, TheBase64OfTheSpecExample) {
  SecretScrubber scrubber({"s3cr3t-t0ken-value"});
  // printf 'user:s3cr3t-t0ken-value' | base64, and with 1 and 2 more bytes.
  EXPECT_EQ(scrubber.Scrub("dXNlcjpzM2NyM3QtdDBrZW4tdmFsdWU="), "dXNlcjp[REDACTED]U=");
  EXPECT_EQ(scrubber.Scrub("eHVzZXI6czNjcjN0LXQwa2VuLXZhbHVl"), "eHVzZXI6[REDACTED]");
  EXPECT_EQ(scrubber.Scrub("eHl1c2VyOnMzY3IzdC10MGtlbi12YWx1ZQ=="), "eHl1c2VyOn[REDACTED]Q==");
}

TEST(SecretScrubberTest, RedactsPercentEncodedForms) {
  const std::string secret = "p@ss w0rd/\xC3\xA9~";
  SecretScrubber scrubber({secret});
  // Every byte encoded, upper and lower case hex.
  EXPECT_EQ(scrubber.Scrub("a=%70%40%73%73%20%77%30%72%64%2F%C3%A9%7E&b"), "a=[REDACTED]&b");
  EXPECT_EQ(scrubber.Scrub("a=%70%40%73%73%20%77%30%72%64%2f%c3%a9%7e&b"), "a=[REDACTED]&b");
  // Unreserved characters literal (encodeURIComponent, curl --data-urlencode).
  EXPECT_EQ(scrubber.Scrub("?q=p%40ss%20w0rd%2F%C3%A9~"), "?q=[REDACTED]");
  EXPECT_EQ(scrubber.Scrub("?q=p%40ss%20w0rd%2f%c3%a9~"), "?q=[REDACTED]");
  // HTML forms: a space as '+'.
  EXPECT_EQ(scrubber.Scrub("q=p%40ss+w0rd%2F%C3%A9~"), "q=[REDACTED]");
  // Mixed-case hex is not recognized (documented).
  EXPECT_EQ(scrubber.Scrub("p%40ss%20w0rd%2f%C3%A9~"), "p%40ss%20w0rd%2f%C3%A9~");
}

TEST(SecretScrubberTest, OverlappingOccurrencesAreRedactedTogether) {
  SecretScrubber scrubber({"abcdef", "defghi"});
  // Leftmost-longest alone would leave "ghi" of the second secret.
  EXPECT_EQ(scrubber.Scrub("xabcdefghix"), "x[REDACTED]x");
  EXPECT_EQ(scrubber.Scrub("abcdefdefghi"), "[REDACTED][REDACTED]");
}

TEST(SecretScrubberTest, LongerValuesWinOverTheirParts) {
  SecretScrubber scrubber({"token", "token-with-suffix"});
  EXPECT_EQ(scrubber.Scrub("a token-with-suffix b token c"), "a [REDACTED] b [REDACTED] c");
}

TEST(SecretScrubberTest, ScrubPrefixCutsAtTheLimitButRedactsAValueCutInTwo) {
  SecretScrubber scrubber({"SECRETVALUE"});
  std::string text = "0123456789SECRETVALUE tail";
  // The cut falls inside the value: none of it shows.
  EXPECT_EQ(scrubber.ScrubPrefix(text, 13), "0123456789[REDACTED]");
  EXPECT_EQ(scrubber.ScrubPrefix(text, 10), "0123456789");
  EXPECT_EQ(scrubber.ScrubPrefix(text, 5), "01234");
  EXPECT_EQ(scrubber.ScrubPrefix(text, 1000), "0123456789[REDACTED] tail");
  EXPECT_EQ(SecretScrubber().ScrubPrefix(text, 4), "0123");
  EXPECT_EQ(scrubber.longest_form_size(), std::string("%53%45%43%52%45%54%56%41%4C%55%45").size());
  EXPECT_EQ(SecretScrubber().longest_form_size(), 0u);
}

TEST(SecretScrubberTest, LeavesOtherTextAndBinaryBytesAlone) {
  SecretScrubber scrubber({"\x01\x02\x03\x04\xFF"});
  std::string binary("a\0\x01\x02\x03\x04\xFFz", 8);
  EXPECT_EQ(scrubber.Scrub(binary), std::string("a\0[REDACTED]z", 13));
  std::string plain = "nothing secret here, just text with % and = and /+";
  EXPECT_EQ(scrubber.Scrub(plain), plain);
}

TEST(SecretScrubberTest, ScalesToLargeOutput) {
  SecretScrubber scrubber({"needle-value-1", "another-secret-2"});
  std::string text;
  for (int i = 0; i < 100000; ++i) text += "line " + std::to_string(i) + " with some words\n";
  text += "needle-value-1";
  std::string scrubbed = scrubber.Scrub(text);
  EXPECT_EQ(scrubbed.size(), text.size() - std::string("needle-value-1").size() + kRedacted.size());
  EXPECT_TRUE(scrubbed.ends_with("[REDACTED]"));
}

}  // namespace
}  // namespace toolvfs
