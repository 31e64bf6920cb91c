#include "protocol/base64.h"

#include <array>
#include <bit>
#include <cstdint>

#include "core/text.h"

namespace toolvfs {
namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static_assert(std::endian::native == std::endian::little, "PairTable stores character pairs little-endian");

// 12 bits of input -> two output characters, so the encoder does two table
// reads per three bytes.
struct PairTable {
  std::array<uint16_t, 4096> pairs{};
  constexpr PairTable() {
    for (unsigned i = 0; i < 4096; ++i) {
      // Little-endian: the first character in the low byte.
      pairs[i] = static_cast<uint16_t>(static_cast<uint8_t>(kAlphabet[i >> 6]) |
                                       (static_cast<uint8_t>(kAlphabet[i & 63]) << 8));
    }
  }
};
constexpr PairTable kPairs;

// Character -> its 6-bit value shifted into place for each of the four
// positions of a group; kInvalid (above 24 bits) for bytes outside the
// alphabet, so OR-ing four lookups detects any of them with one compare.
constexpr uint32_t kInvalid = 0x01000000;
struct DecodeTables {
  std::array<std::array<uint32_t, 256>, 4> shifted{};
  constexpr DecodeTables() {
    for (auto& table : shifted) table.fill(kInvalid);
    for (unsigned value = 0; value < 64; ++value) {
      auto c = static_cast<uint8_t>(kAlphabet[value]);
      shifted[0][c] = value << 18;
      shifted[1][c] = value << 12;
      shifted[2][c] = value << 6;
      shifted[3][c] = value;
    }
  }
};
constexpr DecodeTables kDecode;

uint8_t Byte(std::string_view text, size_t i) { return static_cast<uint8_t>(text[i]); }

Status BadByte(std::string_view text, size_t offset, std::string_view why) {
  return InvalidArgumentError("Invalid base64: byte " + Quote(text.substr(offset, 1)) +
                              " at offset " + std::to_string(offset) + " " + std::string(why));
}

// The first offending position of a group that failed the fast check.
Status GroupError(std::string_view text, size_t group) {
  for (size_t i = group; i < group + 4; ++i) {
    if (kDecode.shifted[0][Byte(text, i)] == kInvalid) {
      if (text[i] == '=') return BadByte(text, i, "is padding before the end");
      return BadByte(text, i, "is not in the alphabet");
    }
  }
  return InvalidArgumentError("Invalid base64");  // not reached
}

}  // namespace

std::string Base64Encode(std::string_view bytes) {
  std::string out((bytes.size() + 2) / 3 * 4, '\0');
  const auto* in = reinterpret_cast<const uint8_t*>(bytes.data());
  char* o = out.data();
  size_t full = bytes.size() / 3 * 3;
  for (size_t i = 0; i < full; i += 3) {
    uint32_t group = (uint32_t{in[i]} << 16) | (uint32_t{in[i + 1]} << 8) | in[i + 2];
    uint16_t first = kPairs.pairs[group >> 12];
    uint16_t second = kPairs.pairs[group & 0xFFF];
    __builtin_memcpy(o, &first, 2);
    __builtin_memcpy(o + 2, &second, 2);
    o += 4;
  }
  size_t rest = bytes.size() - full;
  if (rest > 0) {
    uint32_t group = uint32_t{in[full]} << 16;
    if (rest == 2) group |= uint32_t{in[full + 1]} << 8;
    o[0] = kAlphabet[(group >> 18) & 63];
    o[1] = kAlphabet[(group >> 12) & 63];
    o[2] = rest == 2 ? kAlphabet[(group >> 6) & 63] : '=';
    o[3] = '=';
  }
  return out;
}

Result<std::string> Base64Decode(std::string_view text) {
  if (text.size() % 4 != 0) {
    return InvalidArgumentError("Invalid base64: length " + std::to_string(text.size()) +
                                " is not a multiple of 4 (padding with '=' is required)");
  }
  if (text.empty()) return std::string();
  size_t padding = text.back() != '=' ? 0 : text[text.size() - 2] != '=' ? 1 : 2;
  std::string out(text.size() / 4 * 3 - padding, '\0');
  auto* o = reinterpret_cast<uint8_t*>(out.data());
  size_t last_group = text.size() - 4;
  for (size_t i = 0; i < last_group; i += 4) {
    uint32_t group = kDecode.shifted[0][Byte(text, i)] | kDecode.shifted[1][Byte(text, i + 1)] |
                     kDecode.shifted[2][Byte(text, i + 2)] | kDecode.shifted[3][Byte(text, i + 3)];
    if (group >= kInvalid) return GroupError(text, i);
    o[0] = static_cast<uint8_t>(group >> 16);
    o[1] = static_cast<uint8_t>(group >> 8);
    o[2] = static_cast<uint8_t>(group);
    o += 3;
  }
  // The last group: 4, 3 or 2 characters of data, then the padding.
  size_t data_chars = 4 - padding;
  uint32_t group = 0;
  for (size_t k = 0; k < data_chars; ++k) {
    size_t i = last_group + k;
    uint32_t value = kDecode.shifted[3][Byte(text, i)];
    if (value == kInvalid) {
      if (text[i] == '=') return BadByte(text, i, "is padding before the end");
      return BadByte(text, i, "is not in the alphabet");
    }
    group |= value << (18 - 6 * k);
  }
  uint32_t unused_bits = padding == 2 ? 0xFFFF : padding == 1 ? 0xFF : 0;
  if ((group & unused_bits) != 0) {
    return BadByte(text, last_group + data_chars - 1,
                   "has non-zero bits after the end of the data (not canonical)");
  }
  o[0] = static_cast<uint8_t>(group >> 16);
  if (padding < 2) o[1] = static_cast<uint8_t>(group >> 8);
  if (padding < 1) o[2] = static_cast<uint8_t>(group);
  return out;
}

}  // namespace toolvfs
