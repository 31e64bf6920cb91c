#include "project/grep_literals.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <cstring>
#include <utility>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define TOOLVFS_GREP_X86_SIMD 1
#include <immintrin.h>
#endif

namespace toolvfs {
namespace {

// Rarity ranks measured on C headers, Python, Perl and CMake sources and
// their documentation: 0 = rarest, 255 = most common (space). Bytes >= 0x80
// are rare in such text, so a needle's non-ASCII bytes are preferred.
// clang-format off
constexpr std::array<uint8_t, 256> kByteRanks = {
    0,   1,   2,   3,   4,   5,   6,   82,  7,   203, 245, 8,   152, 154, 9,   10,
    11,  12,  13,  14,  15,  16,  17,  18,  19,  20,  21,  22,  23,  24,  25,  26,
    255, 163, 194, 209, 178, 162, 173, 207, 229, 230, 232, 168, 228, 215, 216, 219,
    222, 213, 206, 192, 186, 196, 189, 180, 185, 193, 201, 205, 184, 195, 191, 160,
    170, 233, 200, 226, 211, 240, 204, 202, 188, 234, 167, 187, 227, 210, 225, 224,
    221, 165, 223, 241, 236, 199, 190, 175, 198, 183, 164, 177, 179, 176, 161, 252,
    172, 246, 214, 244, 242, 254, 238, 220, 235, 249, 169, 217, 243, 231, 251, 247,
    239, 171, 248, 250, 253, 237, 212, 197, 208, 218, 174, 182, 166, 181, 159, 27,
    157, 131, 120, 91,  101, 106, 135, 138, 118, 132, 129, 130, 99,  87,  80,  84,
    102, 92,  88,  122, 151, 96,  100, 93,  142, 156, 103, 94,  148, 149, 104, 147,
    136, 113, 127, 86,  141, 125, 143, 111, 114, 153, 144, 134, 123, 121, 124, 81,
    107, 115, 137, 97,  105, 89,  145, 85,  139, 126, 112, 108, 128, 109, 110, 98,
    28,  29,  155, 150, 74,  77,  30,  31,  70,  32,  33,  34,  35,  36,  117, 140,
    95,  90,  37,  38,  39,  40,  41,  83,  42,  43,  44,  45,  71,  46,  47,  48,
    75,  133, 158, 116, 78,  72,  49,  50,  79,  73,  76,  51,  52,  53,  54,  119,
    146, 55,  56,  57,  58,  59,  60,  61,  62,  63,  64,  65,  66,  67,  68,  69,
};
// clang-format on

bool IsAsciiLetter(uint8_t byte) { return (byte | 0x20) >= 'a' && (byte | 0x20) <= 'z'; }

uint8_t AsciiLower(uint8_t byte) { return IsAsciiLetter(byte) ? (byte | 0x20) : byte; }

bool SupportsAvx2() {
#if defined(TOOLVFS_GREP_X86_SIMD)
  return __builtin_cpu_supports("avx2");
#else
  return false;
#endif
}

}  // namespace

uint8_t LiteralScanner::ByteRank(uint8_t byte) { return kByteRanks[byte]; }

LiteralScanner::LiteralScanner(std::vector<Needle> needles) : use_avx2_(SupportsAvx2()) {
  assert(!needles.empty() && needles.size() <= kMaxNeedles);
  shortest_needle_ = SIZE_MAX;
  for (Needle& needle : needles) {
    assert(!needle.bytes.empty());
    PreparedNeedle prepared;
    prepared.ascii_case_insensitive = needle.ascii_case_insensitive;
    prepared.bytes = std::move(needle.bytes);
    auto rank_at = [&prepared](size_t offset) {
      auto byte = static_cast<uint8_t>(prepared.bytes[offset]);
      if (prepared.ascii_case_insensitive && IsAsciiLetter(byte)) {
        // Either case may occur: the commoner case decides.
        return std::max(kByteRanks[byte | 0x20], kByteRanks[byte & ~0x20 & 0xFF]);
      }
      return kByteRanks[byte];
    };
    size_t rarest = 0;
    for (size_t offset = 1; offset < prepared.bytes.size(); ++offset) {
      if (rank_at(offset) < rank_at(rarest)) rarest = offset;
    }
    size_t second = rarest;
    for (size_t offset = 0; offset < prepared.bytes.size(); ++offset) {
      if (offset != rarest && (second == rarest || rank_at(offset) < rank_at(second))) {
        second = offset;
      }
    }
    prepared.rare_offsets[0] = rarest;
    prepared.rare_offsets[1] = second;
    for (int index = 0; index < 2; ++index) {
      auto byte = static_cast<uint8_t>(prepared.bytes[prepared.rare_offsets[index]]);
      bool fold = prepared.ascii_case_insensitive && IsAsciiLetter(byte);
      prepared.rare_bytes[index] = fold ? AsciiLower(byte) : byte;
      prepared.fold_masks[index] = fold ? 0x20 : 0;
    }
    if (prepared.ascii_case_insensitive) {
      for (char& c : prepared.bytes) c = static_cast<char>(AsciiLower(static_cast<uint8_t>(c)));
    }
    max_rare_offset_ = std::max({max_rare_offset_, rarest, second});
    shortest_needle_ = std::min(shortest_needle_, prepared.bytes.size());
    needles_.push_back(std::move(prepared));
  }
}

bool LiteralScanner::MatchesAt(const PreparedNeedle& needle, std::string_view text,
                               size_t offset) const {
  if (text.size() - offset < needle.bytes.size()) return false;
  if (!needle.ascii_case_insensitive) {
    return std::memcmp(text.data() + offset, needle.bytes.data(), needle.bytes.size()) == 0;
  }
  for (size_t index = 0; index < needle.bytes.size(); ++index) {
    if (AsciiLower(static_cast<uint8_t>(text[offset + index])) !=
        static_cast<uint8_t>(needle.bytes[index])) {
      return false;
    }
  }
  return true;
}

size_t LiteralScanner::FindScalar(std::string_view text, size_t from) const {
  if (text.size() < shortest_needle_) return std::string_view::npos;
  for (size_t position = from; position + shortest_needle_ <= text.size(); ++position) {
    for (const PreparedNeedle& needle : needles_) {
      size_t rare_position = position + needle.rare_offsets[0];
      if (rare_position < text.size() &&
          (static_cast<uint8_t>(text[rare_position]) | needle.fold_masks[0]) ==
              needle.rare_bytes[0] &&
          MatchesAt(needle, text, position)) {
        return position;
      }
    }
  }
  return std::string_view::npos;
}

#if defined(TOOLVFS_GREP_X86_SIMD)

size_t LiteralScanner::FindSse2(std::string_view text, size_t from) const {
  const char* data = text.data();
  const size_t count = needles_.size();
  __m128i rare_first[kMaxNeedles];
  __m128i rare_second[kMaxNeedles];
  __m128i fold_first[kMaxNeedles];
  __m128i fold_second[kMaxNeedles];
  for (size_t index = 0; index < count; ++index) {
    const PreparedNeedle& needle = needles_[index];
    rare_first[index] = _mm_set1_epi8(static_cast<char>(needle.rare_bytes[0]));
    rare_second[index] = _mm_set1_epi8(static_cast<char>(needle.rare_bytes[1]));
    fold_first[index] = _mm_set1_epi8(static_cast<char>(needle.fold_masks[0]));
    fold_second[index] = _mm_set1_epi8(static_cast<char>(needle.fold_masks[1]));
  }
  size_t position = from;
  while (position + max_rare_offset_ + 16 <= text.size()) {
    uint32_t candidates = 0;
    for (size_t index = 0; index < count; ++index) {
      const PreparedNeedle& needle = needles_[index];
      __m128i first = _mm_loadu_si128(
          reinterpret_cast<const __m128i*>(data + position + needle.rare_offsets[0]));
      __m128i second = _mm_loadu_si128(
          reinterpret_cast<const __m128i*>(data + position + needle.rare_offsets[1]));
      __m128i equal_first =
          _mm_cmpeq_epi8(_mm_or_si128(first, fold_first[index]), rare_first[index]);
      __m128i equal_second =
          _mm_cmpeq_epi8(_mm_or_si128(second, fold_second[index]), rare_second[index]);
      candidates |=
          static_cast<uint32_t>(_mm_movemask_epi8(_mm_and_si128(equal_first, equal_second)));
    }
    while (candidates != 0) {
      size_t candidate = position + static_cast<size_t>(__builtin_ctz(candidates));
      for (const PreparedNeedle& needle : needles_) {
        if (MatchesAt(needle, text, candidate)) return candidate;
      }
      candidates &= candidates - 1;
    }
    position += 16;
  }
  return FindScalar(text, position);
}

__attribute__((target("avx2"))) size_t LiteralScanner::FindAvx2(std::string_view text,
                                                                size_t from) const {
  const char* data = text.data();
  const size_t count = needles_.size();
  __m256i rare_first[kMaxNeedles];
  __m256i rare_second[kMaxNeedles];
  __m256i fold_first[kMaxNeedles];
  __m256i fold_second[kMaxNeedles];
  for (size_t index = 0; index < count; ++index) {
    const PreparedNeedle& needle = needles_[index];
    rare_first[index] = _mm256_set1_epi8(static_cast<char>(needle.rare_bytes[0]));
    rare_second[index] = _mm256_set1_epi8(static_cast<char>(needle.rare_bytes[1]));
    fold_first[index] = _mm256_set1_epi8(static_cast<char>(needle.fold_masks[0]));
    fold_second[index] = _mm256_set1_epi8(static_cast<char>(needle.fold_masks[1]));
  }
  size_t position = from;
  while (position + max_rare_offset_ + 32 <= text.size()) {
    uint32_t candidates = 0;
    for (size_t index = 0; index < count; ++index) {
      const PreparedNeedle& needle = needles_[index];
      __m256i first = _mm256_loadu_si256(
          reinterpret_cast<const __m256i*>(data + position + needle.rare_offsets[0]));
      __m256i second = _mm256_loadu_si256(
          reinterpret_cast<const __m256i*>(data + position + needle.rare_offsets[1]));
      __m256i equal_first =
          _mm256_cmpeq_epi8(_mm256_or_si256(first, fold_first[index]), rare_first[index]);
      __m256i equal_second =
          _mm256_cmpeq_epi8(_mm256_or_si256(second, fold_second[index]), rare_second[index]);
      candidates |=
          static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_and_si256(equal_first, equal_second)));
    }
    while (candidates != 0) {
      size_t candidate = position + static_cast<size_t>(__builtin_ctz(candidates));
      for (const PreparedNeedle& needle : needles_) {
        if (MatchesAt(needle, text, candidate)) return candidate;
      }
      candidates &= candidates - 1;
    }
    position += 32;
  }
  // The 16-byte loop finishes what is too short for a 32-byte block.
  return FindSse2(text, position);
}

#else

size_t LiteralScanner::FindSse2(std::string_view text, size_t from) const {
  return FindScalar(text, from);
}

size_t LiteralScanner::FindAvx2(std::string_view text, size_t from) const {
  return FindScalar(text, from);
}

#endif

size_t LiteralScanner::Find(std::string_view text, size_t from) const {
  if (from >= text.size()) return std::string_view::npos;
  return use_avx2_ ? FindAvx2(text, from) : FindSse2(text, from);
}

namespace {

#if defined(TOOLVFS_GREP_X86_SIMD)

// Counts the '\n' bytes of `text` from `offset` in whole 32-byte blocks
// and advances `offset` past them. Each matching byte subtracts -1 from a
// per-lane counter; lanes are summed before any of them can pass 255.
__attribute__((target("avx2"))) size_t CountNewlineBlocksAvx2(std::string_view text,
                                                              size_t& offset) {
  size_t count = 0;
  const __m256i newline = _mm256_set1_epi8('\n');
  while (text.size() - offset >= 32) {
    size_t blocks = std::min<size_t>((text.size() - offset) / 32, 255);
    __m256i lane_counts = _mm256_setzero_si256();
    for (size_t block = 0; block < blocks; ++block, offset += 32) {
      __m256i bytes = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(text.data() + offset));
      lane_counts = _mm256_sub_epi8(lane_counts, _mm256_cmpeq_epi8(bytes, newline));
    }
    __m256i sums = _mm256_sad_epu8(lane_counts, _mm256_setzero_si256());
    count += static_cast<size_t>(_mm256_extract_epi64(sums, 0)) +
             static_cast<size_t>(_mm256_extract_epi64(sums, 1)) +
             static_cast<size_t>(_mm256_extract_epi64(sums, 2)) +
             static_cast<size_t>(_mm256_extract_epi64(sums, 3));
  }
  return count;
}

// As CountNewlineBlocksAvx2, in 16-byte blocks.
size_t CountNewlineBlocksSse2(std::string_view text, size_t& offset) {
  size_t count = 0;
  const __m128i newline = _mm_set1_epi8('\n');
  while (text.size() - offset >= 16) {
    size_t blocks = std::min<size_t>((text.size() - offset) / 16, 255);
    __m128i lane_counts = _mm_setzero_si128();
    for (size_t block = 0; block < blocks; ++block, offset += 16) {
      __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(text.data() + offset));
      lane_counts = _mm_sub_epi8(lane_counts, _mm_cmpeq_epi8(bytes, newline));
    }
    __m128i sums = _mm_sad_epu8(lane_counts, _mm_setzero_si128());
    count += static_cast<size_t>(_mm_cvtsi128_si64(sums)) +
             static_cast<size_t>(_mm_extract_epi16(sums, 4));
  }
  return count;
}

#endif

}  // namespace

size_t CountNewlines(std::string_view text) {
  size_t count = 0;
  size_t offset = 0;
#if defined(TOOLVFS_GREP_X86_SIMD)
  static const bool use_avx2 = SupportsAvx2();
  if (use_avx2) count += CountNewlineBlocksAvx2(text, offset);
  count += CountNewlineBlocksSse2(text, offset);
#endif
  for (; offset < text.size(); ++offset) count += text[offset] == '\n';
  return count;
}

}  // namespace toolvfs
