// Byte-level building blocks of the grep engine: finding a few literal
// strings in a buffer and counting lines, both with SIMD where available.
//
// Everything here is immutable after construction and safe to use from any
// number of threads at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace toolvfs {

// Finds the leftmost occurrence of any of a few literal strings ("needles").
//
// The search compares two rare bytes of each needle at their offsets, 16
// or 32 positions at a time (the "packed pair" technique of ripgrep's
// memchr crate), and confirms each candidate with a full comparison. A
// needle may be ASCII case-insensitive: letters then match in either case
// (and nothing else: no Unicode case folding).
class LiteralScanner {
 public:
  struct Needle {
    std::string bytes;  // not empty
    bool ascii_case_insensitive = false;
  };

  // Beyond this many needles the per-block cost outgrows a regex engine.
  static constexpr size_t kMaxNeedles = 8;

  // `needles` holds 1 to kMaxNeedles non-empty needles.
  explicit LiteralScanner(std::vector<Needle> needles);

  // Offset of the leftmost occurrence of any needle starting at or after
  // `from` in `text`; std::string_view::npos if there is none.
  size_t Find(std::string_view text, size_t from) const;

  // Rarity rank of a byte in source code and prose: 0 for the rarest,
  // 255 for the most common (space).
  static uint8_t ByteRank(uint8_t byte);

 private:
  struct PreparedNeedle {
    std::string bytes;  // letters lower-cased if ascii_case_insensitive
    bool ascii_case_insensitive;
    size_t rare_offsets[2];  // positions of the two compared bytes
    uint8_t rare_bytes[2];   // their values (lower-cased letters)
    uint8_t fold_masks[2];   // 0x20 for a case-insensitive letter, else 0
  };

  bool MatchesAt(const PreparedNeedle& needle, std::string_view text, size_t offset) const;
  size_t FindScalar(std::string_view text, size_t from) const;
  size_t FindSse2(std::string_view text, size_t from) const;
  size_t FindAvx2(std::string_view text, size_t from) const;

  std::vector<PreparedNeedle> needles_;
  size_t max_rare_offset_ = 0;  // the SIMD loads reach this far past a start
  size_t shortest_needle_ = 0;
  bool use_avx2_ = false;
};

// Number of '\n' bytes in `text`.
size_t CountNewlines(std::string_view text);

}  // namespace toolvfs
