#include "protocol/json_writer.h"

#include <cstdint>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <tmmintrin.h>
#endif

namespace toolvfs {
namespace {

// The escape of each byte: 0 (as is), or the character after the backslash
// ('u' for \u00XX). The same table as RapidJSON's writer.
struct EscapeTable {
  char escape[256] = {};
  constexpr EscapeTable() {
    for (int c = 0; c < 0x20; ++c) escape[c] = 'u';
    escape[0x08] = 'b';
    escape[0x09] = 't';
    escape[0x0A] = 'n';
    escape[0x0C] = 'f';
    escape[0x0D] = 'r';
    escape[0x22] = '"';
    escape[0x5C] = '\\';
  }
};
constexpr EscapeTable kEscapes;
constexpr char kHexDigits[] = "0123456789ABCDEF";

// Input is escaped in blocks so that the output reservation (the worst
// case, six bytes per input byte) stays small.
constexpr size_t kBlock = 4096;
// The vector code stores 16 bytes at a time, possibly past what it keeps.
constexpr size_t kSlack = 32;

char* EscapeByte(char* out, uint8_t byte) {
  char escape = kEscapes.escape[byte];
  out[0] = '\\';
  out[1] = escape;
  if (escape != 'u') return out + 2;
  out[2] = '0';
  out[3] = '0';
  out[4] = kHexDigits[byte >> 4];
  out[5] = kHexDigits[byte & 15];
  return out + 6;
}

char* EscapeScalar(const char* in, size_t size, char* out) {
  for (size_t i = 0; i < size; ++i) {
    auto byte = static_cast<uint8_t>(in[i]);
    if (kEscapes.escape[byte] == 0) {
      *out++ = static_cast<char>(byte);
    } else {
      out = EscapeByte(out, byte);
    }
  }
  return out;
}

#if defined(__x86_64__) || defined(__i386__)

// For each 8-bit mask of the bytes to escape in an 8-byte group: the pshufb
// indices that copy the group with a backslash (source byte 8) inserted
// before each of them, and the output length.
struct ShuffleTable {
  alignas(16) uint8_t indices[256][16] = {};
  uint8_t length[256] = {};
  constexpr ShuffleTable() {
    for (int mask = 0; mask < 256; ++mask) {
      int out = 0;
      for (int i = 0; i < 8; ++i) {
        if ((mask >> i) & 1) indices[mask][out++] = 8;
        indices[mask][out++] = static_cast<uint8_t>(i);
      }
      length[mask] = static_cast<uint8_t>(out);
      for (; out < 16; ++out) indices[mask][out] = 0x80;
    }
  }
};
constexpr ShuffleTable kShuffles;

// 16 bytes per step without a branch on the data: every byte to escape
// becomes a backslash and its letter by one table-driven shuffle per 8
// bytes, so the speed does not depend on how many escapes the text has
// (short lines, many quotes), which made byte-wise escapers 3-5x slower on
// source code. Only a control character without a short escape (\u00XX,
// rare in text) takes the scalar path for its 16 bytes. SSSE3 (pshufb) is
// in every x86-64 CPU since 2006; EscapeBlock checks for it at run time.
__attribute__((target("ssse3"))) char* EscapeSsse3(const char* in, size_t size, char* out) {
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  const __m128i max_control = _mm_set1_epi8(0x1F);
  const __m128i max_low_control = _mm_set1_epi8(0x0F);
  const __m128i zero = _mm_setzero_si128();
  // Escape letters of the controls below 0x10 by low nibble; 0: none.
  const __m128i letters = _mm_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 'b', 't', 'n', 0, 'f', 'r', 0, 0);
  const __m128i backslash_at_8 = _mm_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, '\\', 0, 0, 0, 0, 0, 0, 0);
  size_t i = 0;
  for (; i + 16 <= size; i += 16) {
    __m128i chunk = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i));
    __m128i control = _mm_cmpeq_epi8(_mm_max_epu8(chunk, max_control), max_control);
    __m128i low_control = _mm_cmpeq_epi8(_mm_max_epu8(chunk, max_low_control), max_low_control);
    __m128i letter = _mm_and_si128(_mm_shuffle_epi8(letters, chunk), low_control);
    __m128i short_control = _mm_andnot_si128(_mm_cmpeq_epi8(letter, zero), low_control);
    auto long_controls = static_cast<unsigned>(_mm_movemask_epi8(control) &
                                               ~_mm_movemask_epi8(short_control));
    if (__builtin_expect(long_controls != 0, 0)) {
      out = EscapeScalar(in + i, 16, out);
      continue;
    }
    __m128i special = _mm_or_si128(
        _mm_or_si128(_mm_cmpeq_epi8(chunk, quote), _mm_cmpeq_epi8(chunk, backslash)), control);
    auto mask = static_cast<unsigned>(_mm_movemask_epi8(special));
    // The byte after the backslash: the letter for a control, else itself.
    __m128i second = _mm_or_si128(_mm_andnot_si128(control, chunk), letter);
    __m128i low = _mm_or_si128(_mm_move_epi64(second), backslash_at_8);
    __m128i high = _mm_or_si128(_mm_srli_si128(second, 8), backslash_at_8);
    unsigned low_mask = mask & 0xFF;
    unsigned high_mask = mask >> 8;
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out),
                     _mm_shuffle_epi8(low, _mm_load_si128(reinterpret_cast<const __m128i*>(
                                               kShuffles.indices[low_mask]))));
    out += kShuffles.length[low_mask];
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out),
                     _mm_shuffle_epi8(high, _mm_load_si128(reinterpret_cast<const __m128i*>(
                                                kShuffles.indices[high_mask]))));
    out += kShuffles.length[high_mask];
  }
  return EscapeScalar(in + i, size - i, out);
}

#endif

using EscapeFunction = char* (*)(const char* in, size_t size, char* out);

EscapeFunction ChooseEscape() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("ssse3")) return EscapeSsse3;
#endif
  return EscapeScalar;
}

// Escapes [in, in + size) into `out`, which has room for 6 * size + kSlack
// bytes; returns the end of the output.
char* EscapeBlock(const char* in, size_t size, char* out) {
  static const EscapeFunction escape = ChooseEscape();
  return escape(in, size, out);
}

}  // namespace

void AppendJsonString(rapidjson::StringBuffer& buffer, std::string_view text) {
  buffer.Put('"');
  while (!text.empty()) {
    size_t size = text.size() < kBlock ? text.size() : kBlock;
    size_t reserved = 6 * size + kSlack;
    char* begin = buffer.Push(reserved);
    char* end = EscapeBlock(text.data(), size, begin);
    buffer.Pop(reserved - static_cast<size_t>(end - begin));
    text.remove_prefix(size);
  }
  buffer.Put('"');
}

bool JsonWriter::String(std::string_view text) {
  // RawValue with no bytes writes the separator and records a value, so
  // the writer's state is as after Writer::String; the bytes follow.
  RawValue("", 0, rapidjson::kStringType);
  AppendJsonString(*os_, text);
  return true;
}

}  // namespace toolvfs
