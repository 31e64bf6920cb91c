// toolvfs/tool.h — write toolvfs "vfs" tools in C++ (SPEC.md §4.5).
//
// A vfs tool does all its file, HTTP and process work by asking the host:
// it writes JSON-RPC requests on its stdout and reads the answers on its
// stdin (docs/protocol.md). This header is the whole client library. It
// needs only the C++20 standard library and POSIX:
//
//   g++ -std=c++20 -O2 -I sdk my_tool.cc -o my_tool
//
//   #include <toolvfs/tool.h>
//
//   int main() {
//     return toolvfs::tool_main([](toolvfs::Tool& tool) {
//       std::string path = tool.arguments()["path"].as_string();
//       std::string text = tool.read(path).value();  // throws on an error
//       return "read " + std::to_string(text.size()) + " bytes";
//     });
//   }
//
// Errors. Every call returns a Result<T>: a value or an Error carrying the
// JSON-RPC code of the answer (kNotFound = -32002, kAccessDenied = -32001,
// ...) and the host's one-line message. Check `ok()` and branch on
// `error().code`, or call `value()`, which throws toolvfs::Exception on an
// error; tool_main turns an escaping exception into the tool's `error`
// notification. Errors the SDK finds itself (the host closed stdin, an
// answer of the wrong shape) use the same codes (kInternalError).
//
// Concurrency. The blocking calls (read, write, ...) send one request and
// wait for its answer. The `*_async` forms send the request and return a
// Pending<T> at once; `get()` waits for that answer. Many requests may be in
// flight and the host may answer them in any order: answers that arrive for
// other requests are kept until those are waited for. A Tool may be used
// from several threads at once (one thread reads stdin at a time and hands
// answers to the others); the low-level form is send(method, params) -> id
// and wait(id).
//
// Host notifications. `cancel` sets cancelled(): check it between steps and
// stop (`check_cancelled().value()` throws kCancelled, which tool_main
// reports as the tool's error). `apply` (stateful tools) is queued for
// next_apply(). `pending` and any other notification reach the optional
// notification handler.
//
// stdout. connect() keeps a private copy of fd 1 for the protocol and points
// fd 1 at stderr, so a stray printf or std::cout lands in the host's log
// instead of corrupting the protocol. Write logs to stderr.
//
// JSON. The small Json value type below parses the host's answers and
// builds parameters. The parser decodes strings 64 bytes at a time (SSE2,
// or AVX2 where the CPU has it; a 1 MiB fs.read answer of source code
// parses in about a quarter of a millisecond), decodes \uXXXX escapes
// including surrogate pairs and checks the number grammar. The writer produces compact JSON and replaces invalid
// UTF-8 in strings with U+FFFD, so the host never rejects a line; file and
// HTTP content that is not UTF-8 travels as base64 instead (write and
// http_post choose the encoding from the bytes).
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <exception>
#include <functional>
#include <initializer_list>
#include <limits>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
// GCC and Clang on x86 compile AVX2 code in functions marked
// target("avx2"), used only after checking the CPU at run time.
#if defined(__SSE2__) && (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#define TOOLVFS_SDK_X86_TARGETS 1
#include <immintrin.h>
#else
#define TOOLVFS_SDK_X86_TARGETS 0
#endif

namespace toolvfs {
// An inline namespace keeps these symbols apart from the host's own
// toolvfs::Result and friends at link time.
inline namespace sdk {

// ---------------------------------------------------------------------------
// Errors

// JSON-RPC error codes of the protocol (docs/protocol.md).
inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;
inline constexpr int kInternalError = -32603;
inline constexpr int kAccessDenied = -32001;
inline constexpr int kNotFound = -32002;
inline constexpr int kAlreadyExists = -32003;
inline constexpr int kTimeout = -32004;
inline constexpr int kCancelled = -32005;

// "not found" for kNotFound, "error" for a code the protocol does not define.
inline std::string_view error_code_name(int code) {
  switch (code) {
    case kParseError: return "parse error";
    case kInvalidRequest: return "invalid request";
    case kMethodNotFound: return "method not found";
    case kInvalidParams: return "invalid params";
    case kInternalError: return "internal error";
    case kAccessDenied: return "access denied";
    case kNotFound: return "not found";
    case kAlreadyExists: return "already exists";
    case kTimeout: return "timeout";
    case kCancelled: return "cancelled";
    default: return "error";
  }
}

struct Error {
  int code = kInternalError;
  std::string message;

  // "Not found: 'a.txt' does not exist (not found, -32002)"
  std::string to_string() const {
    return message + " (" + std::string(error_code_name(code)) + ", " + std::to_string(code) + ")";
  }
};

// Thrown by Result::value() on an error, and caught by tool_main.
class Exception : public std::runtime_error {
 public:
  explicit Exception(Error error) : std::runtime_error(error.to_string()), error_(std::move(error)) {}
  const Error& error() const noexcept { return error_; }
  int code() const noexcept { return error_.code; }

 private:
  Error error_;
};

// A value or an Error. value() throws Exception when there is no value;
// error() is {0, ""} when there is one.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit on purpose
  Result(Error error) : state_(std::in_place_index<1>, std::move(error)) {}  // NOLINT

  bool ok() const noexcept { return state_.index() == 0; }
  explicit operator bool() const noexcept { return ok(); }

  T& value() & {
    check();
    return std::get<0>(state_);
  }
  const T& value() const& {
    check();
    return std::get<0>(state_);
  }
  T&& value() && {
    check();
    return std::get<0>(std::move(state_));
  }
  template <typename U>
  T value_or(U&& fallback) const& {
    return ok() ? std::get<0>(state_) : static_cast<T>(std::forward<U>(fallback));
  }
  template <typename U>
  T value_or(U&& fallback) && {
    return ok() ? std::get<0>(std::move(state_)) : static_cast<T>(std::forward<U>(fallback));
  }

  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const Error& error() const noexcept {
    static const Error kNone{0, ""};
    return ok() ? kNone : std::get<1>(state_);
  }

 private:
  void check() const {
    if (!ok()) throw Exception(std::get<1>(state_));
  }
  std::variant<T, Error> state_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::move(error)) {}  // NOLINT

  bool ok() const noexcept { return !error_.has_value(); }
  explicit operator bool() const noexcept { return ok(); }
  void value() const {
    if (error_) throw Exception(*error_);
  }
  const Error& error() const noexcept {
    static const Error kNone{0, ""};
    return error_ ? *error_ : kNone;
  }

 private:
  std::optional<Error> error_;
};

// ---------------------------------------------------------------------------
// UTF-8 and base64

namespace detail {

inline uint64_t load64(const char* p) {
  uint64_t word;
  std::memcpy(&word, p, sizeof(word));
  return word;
}

// Length of the well-formed UTF-8 sequence at p (1 to 4), or 0 if the bytes
// at p do not start one (overlong forms, surrogates and code points above
// U+10FFFF are not well-formed).
inline size_t utf8_sequence_length(const unsigned char* p, size_t available) {
  uint32_t c = p[0];
  if (c < 0x80) return 1;
  if (c < 0xC2) return 0;  // a continuation byte, or an overlong 2-byte form
  if (c < 0xE0) return available >= 2 && (p[1] & 0xC0) == 0x80 ? 2 : 0;
  if (c < 0xF0) {
    if (available < 3 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80) return 0;
    uint32_t high = ((c & 0x0F) << 12) | (uint32_t{p[1]} & 0x3F) << 6;  // the code point without its low 6 bits
    return high >= 0x800 && (high < 0xD800 || high > 0xDFC0) ? 3 : 0;
  }
  if (c < 0xF5) {
    if (available < 4 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80 || (p[3] & 0xC0) != 0x80) return 0;
    uint32_t high = ((c & 0x07) << 18) | (uint32_t{p[1]} & 0x3F) << 12;
    return high >= 0x10000 && high <= 0x10FFFF ? 4 : 0;
  }
  return 0;
}

// Writes the UTF-8 form of a code point (at most 4 bytes) to `bytes`.
inline size_t encode_utf8(uint32_t code_point, char* bytes) {
  size_t length;
  if (code_point < 0x80) {
    bytes[0] = static_cast<char>(code_point);
    length = 1;
  } else if (code_point < 0x800) {
    bytes[0] = static_cast<char>(0xC0 | (code_point >> 6));
    bytes[1] = static_cast<char>(0x80 | (code_point & 0x3F));
    length = 2;
  } else if (code_point < 0x10000) {
    bytes[0] = static_cast<char>(0xE0 | (code_point >> 12));
    bytes[1] = static_cast<char>(0x80 | ((code_point >> 6) & 0x3F));
    bytes[2] = static_cast<char>(0x80 | (code_point & 0x3F));
    length = 3;
  } else {
    bytes[0] = static_cast<char>(0xF0 | (code_point >> 18));
    bytes[1] = static_cast<char>(0x80 | ((code_point >> 12) & 0x3F));
    bytes[2] = static_cast<char>(0x80 | ((code_point >> 6) & 0x3F));
    bytes[3] = static_cast<char>(0x80 | (code_point & 0x3F));
    length = 4;
  }
  return length;
}

}  // namespace detail

// True if `bytes` is well-formed UTF-8 (what the host sends as text).
inline bool is_utf8(std::string_view bytes) {
  const char* p = bytes.data();
  size_t size = bytes.size();
  size_t i = 0;
  while (i < size) {
    while (i + 8 <= size && (detail::load64(p + i) & 0x8080808080808080ull) == 0) i += 8;
    if (i >= size) break;
    if (static_cast<unsigned char>(p[i]) < 0x80) {
      ++i;
      continue;
    }
    size_t length = detail::utf8_sequence_length(reinterpret_cast<const unsigned char*>(p + i), size - i);
    if (length == 0) return false;
    i += length;
  }
  return true;
}

namespace detail {

inline constexpr char kBase64Alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// Two output characters per 12 input bits: half the lookups of one per 6.
inline constexpr auto kBase64Pairs = [] {
  std::array<char, 8192> pairs{};
  for (size_t i = 0; i < 4096; ++i) {
    pairs[2 * i] = kBase64Alphabet[i >> 6];
    pairs[2 * i + 1] = kBase64Alphabet[i & 63];
  }
  return pairs;
}();

// kBase64Decode[k][c]: the 6 bits of character c in position k of a group,
// already shifted into place; 0x01000000 for a character outside the
// alphabet, so OR-ing four lookups flags any bad one.
inline constexpr uint32_t kBase64Invalid = 0x01000000;
inline constexpr auto kBase64Decode = [] {
  std::array<std::array<uint32_t, 256>, 4> tables{};
  for (auto& table : tables) table.fill(kBase64Invalid);
  for (uint32_t i = 0; i < 64; ++i) {
    auto c = static_cast<unsigned char>(kBase64Alphabet[i]);
    tables[0][c] = i << 18;
    tables[1][c] = i << 12;
    tables[2][c] = i << 6;
    tables[3][c] = i;
  }
  return tables;
}();

}  // namespace detail

// RFC 4648 §4 base64: standard alphabet, '=' padding.
inline std::string base64_encode(std::string_view bytes) {
  std::string out((bytes.size() + 2) / 3 * 4, '\0');
  const auto* in = reinterpret_cast<const unsigned char*>(bytes.data());
  const char* pairs = detail::kBase64Pairs.data();
  char* w = out.data();
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    uint32_t group = (uint32_t{in[i]} << 16) | (uint32_t{in[i + 1]} << 8) | in[i + 2];
    std::memcpy(w, pairs + 2 * (group >> 12), 2);
    std::memcpy(w + 2, pairs + 2 * (group & 0xFFF), 2);
    w += 4;
  }
  size_t rest = bytes.size() - i;
  if (rest > 0) {
    uint32_t group = uint32_t{in[i]} << 16;
    if (rest == 2) group |= uint32_t{in[i + 1]} << 8;
    w[0] = detail::kBase64Alphabet[group >> 18];
    w[1] = detail::kBase64Alphabet[(group >> 12) & 63];
    w[2] = rest == 2 ? detail::kBase64Alphabet[(group >> 6) & 63] : '=';
    w[3] = '=';
  }
  return out;
}

// Strict, like the host: only the standard alphabet, '=' padding to a
// multiple of 4, no whitespace, zero unused bits in the last group.
// kInvalidParams naming the offset otherwise.
inline Result<std::string> base64_decode(std::string_view text) {
  const auto& tables = detail::kBase64Decode;
  auto bad_byte = [&](size_t offset) {
    while (tables[0][static_cast<unsigned char>(text[offset])] != detail::kBase64Invalid) ++offset;
    return Error{kInvalidParams, "Invalid base64: byte " + std::to_string(static_cast<unsigned char>(text[offset])) +
                                     " at offset " + std::to_string(offset) + " is not in the alphabet"};
  };
  if (text.size() % 4 != 0) {
    return Error{kInvalidParams, "Invalid base64: length " + std::to_string(text.size()) + " is not a multiple of 4"};
  }
  size_t padding = 0;
  if (!text.empty() && text.back() == '=') padding = text[text.size() - 2] == '=' ? 2 : 1;
  std::string out(text.size() / 4 * 3 - padding, '\0');
  const auto* in = reinterpret_cast<const unsigned char*>(text.data());
  char* w = out.data();
  size_t full = padding == 0 ? text.size() : text.size() - 4;
  for (size_t i = 0; i < full; i += 4) {
    uint32_t group = tables[0][in[i]] | tables[1][in[i + 1]] | tables[2][in[i + 2]] | tables[3][in[i + 3]];
    if (group >= detail::kBase64Invalid) return bad_byte(i);
    w[0] = static_cast<char>(group >> 16);
    w[1] = static_cast<char>(group >> 8);
    w[2] = static_cast<char>(group);
    w += 3;
  }
  if (padding > 0) {
    size_t i = full;
    uint32_t group = tables[0][in[i]] | tables[1][in[i + 1]] | (padding == 2 ? 0 : tables[2][in[i + 2]]);
    if (group >= detail::kBase64Invalid) return bad_byte(i);
    if ((group & (padding == 2 ? 0xFFFF : 0xFF)) != 0) {
      return Error{kInvalidParams, "Invalid base64: non-zero unused bits at offset " + std::to_string(i + 3 - padding)};
    }
    w[0] = static_cast<char>(group >> 16);
    if (padding == 1) w[1] = static_cast<char>(group >> 8);
  }
  return out;
}

// ---------------------------------------------------------------------------
// JSON

class Json;

namespace detail {

inline bool is_string_special(unsigned char c, bool non_ascii) {
  return c == '"' || c == '\\' || c < 0x20 || (non_ascii && c >= 0x80);
}

#if defined(__SSE2__)
// Bit i set if byte i of the chunk is special (see is_string_special).
template <bool non_ascii>
inline unsigned special_mask(__m128i chunk) {
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  const __m128i control_max = _mm_set1_epi8(0x1F);
  __m128i hits = _mm_or_si128(_mm_cmpeq_epi8(chunk, quote), _mm_cmpeq_epi8(chunk, backslash));
  // chunk <= 0x1F (unsigned): max(chunk, 0x1F) == 0x1F.
  hits = _mm_or_si128(hits, _mm_cmpeq_epi8(_mm_max_epu8(chunk, control_max), control_max));
  int mask = _mm_movemask_epi8(hits);
  if constexpr (non_ascii) mask |= _mm_movemask_epi8(chunk);
  return static_cast<unsigned>(mask);
}
#else
// Eight bytes at a time (little-endian only); the lowest flagged byte is
// always a true hit.
template <bool non_ascii>
inline uint64_t special_mask(uint64_t word) {
  constexpr uint64_t kOnes = 0x0101010101010101ull, kHighs = 0x8080808080808080ull;
  auto zero_bytes = [](uint64_t v) { return (v - kOnes) & ~v & kHighs; };
  uint64_t hits = zero_bytes(word ^ (kOnes * '"')) | zero_bytes(word ^ (kOnes * '\\')) |
                  ((word - kOnes * 0x20) & ~word & kHighs);
  if constexpr (non_ascii) hits |= word & kHighs;
  return hits;
}
#endif

// First special byte in [p, end) (see is_string_special), or `end`.
template <bool non_ascii>
inline const char* find_string_special(const char* p, const char* end) {
#if defined(__SSE2__)
  while (end - p >= 16) {
    unsigned mask = special_mask<non_ascii>(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    if (mask != 0) return p + std::countr_zero(mask);
    p += 16;
  }
#else
  if constexpr (std::endian::native == std::endian::little) {
    while (end - p >= 8) {
      uint64_t mask = special_mask<non_ascii>(load64(p));
      if (mask != 0) return p + std::countr_zero(mask) / 8;
      p += 8;
    }
  }
#endif
  for (; p < end; ++p) {
    if (is_string_special(static_cast<unsigned char>(*p), non_ascii)) return p;
  }
  return end;
}

// Copies the bytes of [p, end) to `w` up to the first special one and
// returns how many it copied. Scanning and copying are one pass: whole
// chunks are stored before they are checked, so up to 15 bytes past the
// copied ones are written too (`w` needs room for them).
template <bool non_ascii>
inline size_t copy_plain(const char* p, const char* end, char* w) {
  const char* start = p;
#if defined(__SSE2__)
  while (end - p >= 16) {
    __m128i chunk = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(w + (p - start)), chunk);
    unsigned mask = special_mask<non_ascii>(chunk);
    if (mask != 0) return static_cast<size_t>(p - start) + static_cast<size_t>(std::countr_zero(mask));
    p += 16;
  }
#else
  if constexpr (std::endian::native == std::endian::little) {
    while (end - p >= 8) {
      uint64_t word = load64(p);
      std::memcpy(w + (p - start), &word, sizeof(word));
      uint64_t mask = special_mask<non_ascii>(word);
      if (mask != 0) return static_cast<size_t>(p - start) + static_cast<size_t>(std::countr_zero(mask) / 8);
      p += 8;
    }
  }
#endif
  for (; p < end && !is_string_special(static_cast<unsigned char>(*p), non_ascii); ++p) w[p - start] = *p;
  return static_cast<size_t>(p - start);
}

// The character after '\\' for the short escapes ('n' for a newline); 'u'
// for the other control characters; 0 for bytes needing no escape. A table
// rather than a switch: an indirect jump per escape mispredicts in text
// that mixes newlines, tabs and quotes.
inline constexpr auto kEscapeLetter = [] {
  std::array<char, 256> letters{};
  for (int c = 0; c < 0x20; ++c) letters[static_cast<size_t>(c)] = 'u';
  letters['"'] = '"';
  letters['\\'] = '\\';
  letters['\n'] = 'n';
  letters['\r'] = 'r';
  letters['\t'] = 't';
  letters['\b'] = 'b';
  letters['\f'] = 'f';
  return letters;
}();

// The inverse for the parser: the byte a short escape stands for ('\n' for
// 'n'), 0 for a letter that is no short escape.
inline constexpr auto kUnescaped = [] {
  std::array<char, 256> bytes{};
  bytes['"'] = '"';
  bytes['\\'] = '\\';
  bytes['/'] = '/';
  bytes['b'] = '\b';
  bytes['f'] = '\f';
  bytes['n'] = '\n';
  bytes['r'] = '\r';
  bytes['t'] = '\t';
  return bytes;
}();

// Decoding a string with escapes, 64 bytes at a time. In source code there
// is an escape every few dozen bytes (a newline every ~40), so finding each
// escape by scanning on from the previous one makes one long chain of
// dependent steps per escape (load, compare, mask, count zeros, the next
// load from there). Instead the input is cut into fixed 64-byte blocks
// whose loads and compares do not depend on the escapes at all: each block
// is copied to the output whole, and each short escape in it is fixed up
// by writing its decoded byte and copying the 64 bytes after it one place
// to the left (the next escape or block overwrites what runs over).
#if defined(__SSE2__)
struct Sse2Blocks {
  static void copy64(const char* from, char* to) {
    for (int k = 0; k < 64; k += 16) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(to + k), _mm_loadu_si128(reinterpret_cast<const __m128i*>(from + k)));
    }
  }

  // Copies the 64 bytes at p to w. Returns the mask of the backslashes
  // among them (bit i for p[i]) and the mask of the bytes that end a run
  // of plain string bytes otherwise: '"' and control characters.
  static std::pair<uint64_t, uint64_t> copy_and_classify64(const char* p, char* w) {
    const __m128i quote = _mm_set1_epi8('"');
    const __m128i backslash = _mm_set1_epi8('\\');
    const __m128i control_max = _mm_set1_epi8(0x1F);
    uint64_t backslashes = 0, stops = 0;
    for (int k = 0; k < 4; ++k) {
      __m128i chunk = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * k));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(w + 16 * k), chunk);
      // chunk <= 0x1F (unsigned): max(chunk, 0x1F) == 0x1F.
      __m128i stop = _mm_or_si128(_mm_cmpeq_epi8(chunk, quote),
                                  _mm_cmpeq_epi8(_mm_max_epu8(chunk, control_max), control_max));
      backslashes |= uint64_t{static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(chunk, backslash)))} << (16 * k);
      stops |= uint64_t{static_cast<uint32_t>(_mm_movemask_epi8(stop))} << (16 * k);
    }
    return {backslashes, stops};
  }
};

#if TOOLVFS_SDK_X86_TARGETS
// The same with 32-byte vectors, for CPUs with AVX2 (chosen at run time):
// half the loads, stores and compares per block, about 15 % faster on
// source text and 25 % on prose.
struct Avx2Blocks {
  __attribute__((target("avx2"))) static void copy64(const char* from, char* to) {
    for (int k = 0; k < 64; k += 32) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(to + k),
                          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(from + k)));
    }
  }

  __attribute__((target("avx2"))) static std::pair<uint64_t, uint64_t> copy_and_classify64(const char* p, char* w) {
    const __m256i quote = _mm256_set1_epi8('"');
    const __m256i backslash = _mm256_set1_epi8('\\');
    const __m256i control_max = _mm256_set1_epi8(0x1F);
    uint64_t backslashes = 0, stops = 0;
    for (int k = 0; k < 2; ++k) {
      __m256i chunk = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32 * k));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(w + 32 * k), chunk);
      __m256i stop = _mm256_or_si256(_mm256_cmpeq_epi8(chunk, quote),
                                     _mm256_cmpeq_epi8(_mm256_max_epu8(chunk, control_max), control_max));
      backslashes |= uint64_t{static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(chunk, backslash)))}
                     << (32 * k);
      stops |= uint64_t{static_cast<uint32_t>(_mm256_movemask_epi8(stop))} << (32 * k);
    }
    return {backslashes, stops};
  }
};
#endif

// Decodes a string's body from p to w in whole blocks while at least 129
// bytes of input remain (a block and the 65 bytes an escape at its end may
// read). Returns (through p and w) at a byte the caller handles: a '"', a
// control character, \u or an invalid escape; or, near the end of the
// input, at the next byte to decode. `w` needs room for end - p bytes.
template <typename Blocks>
[[gnu::always_inline]] inline void decode_blocks_with(const char*& p_ref, const char* end, char*& w_ref) {
  const char* p = p_ref;
  char* w = w_ref;
  uint64_t skip = 0;  // 1: p[0] is the (decoded) letter of an escape ending the previous block
  while (end - p >= 129) {
    auto [backslashes, stops] = Blocks::copy_and_classify64(p, w);
    if (skip != 0) Blocks::copy64(p + 1, w);
    backslashes &= ~skip;
    uint64_t pending = backslashes | (stops & ~skip);
    uint64_t removed = skip;  // letters so far in this block: input bytes with no output byte of their own
    skip = 0;
    while (pending != 0) {
      int i = std::countr_zero(pending);
      char letter = kUnescaped[static_cast<unsigned char>(p[i + 1])];
      if (((backslashes >> i) & 1) == 0 || letter == 0) {
        p_ref = p + i;
        w_ref = w + i - removed;
        return;
      }
      char* out = w + i - removed;
      *out = letter;
      Blocks::copy64(p + i + 2, out + 1);
      ++removed;
      skip |= static_cast<uint64_t>(i + 1) >> 6;  // i == 63: the letter is the next block's first byte
      pending &= ~(uint64_t{3} << i);             // the backslash and its letter (maybe a '\\' or '"')
    }
    w += 64 - removed + skip;
    p += 64;
  }
  p_ref = p + skip;
  w_ref = w;
}

inline void decode_blocks_sse2(const char*& p, const char* end, char*& w) {
  decode_blocks_with<Sse2Blocks>(p, end, w);
}

#if TOOLVFS_SDK_X86_TARGETS
__attribute__((target("avx2"))) inline void decode_blocks_avx2(const char*& p, const char* end, char*& w) {
  decode_blocks_with<Avx2Blocks>(p, end, w);
}

inline bool cpu_has_avx2() {
  static const bool avx2 = [] {
    __builtin_cpu_init();  // in case this runs before the runtime's own initialization
    return __builtin_cpu_supports("avx2") != 0;
  }();
  return avx2;
}
#endif

inline void decode_blocks(const char*& p, const char* end, char*& w) {
#if defined(__AVX2__) && TOOLVFS_SDK_X86_TARGETS
  decode_blocks_avx2(p, end, w);
#elif TOOLVFS_SDK_X86_TARGETS
  if (cpu_has_avx2()) {
    decode_blocks_avx2(p, end, w);
  } else {
    decode_blocks_sse2(p, end, w);
  }
#else
  decode_blocks_sse2(p, end, w);
#endif
}
#else
// Without SSE2 the caller's scan-and-copy loop does all the work.
inline void decode_blocks(const char*&, const char*, char*&) {}
#endif

// Appends `text` as a JSON string literal. Invalid UTF-8 becomes U+FFFD.
// Written through a pointer into `out`, grown as needed.
inline void append_json_string(std::string& out, std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  const char* p = text.data();
  const char* end = p + text.size();
  // Short plain strings (keys, method names, paths): scan, then append
  // directly, sparing the resize (which zero-fills) of the general path.
  if (text.size() <= 256 && find_string_special<true>(p, end) == end) {
    out.reserve(out.size() + text.size() + 2);
    out += '"';
    out.append(text);
    out += '"';
    return;
  }
  size_t used = out.size();
  out.resize(used + text.size() + text.size() / 8 + 64);
  char* w = out.data() + used;
  char* w_end = out.data() + out.size();
  *w++ = '"';
  while (true) {
    if (w_end - w < 64) {
      used = static_cast<size_t>(w - out.data());
      out.resize(out.size() * 2);
      w = out.data() + used;
      w_end = out.data() + out.size();
    }
    // Leave 32 bytes of room for the chunk overrun and one escape.
    size_t room = static_cast<size_t>(w_end - w) - 32;
    const char* chunk_end = static_cast<size_t>(end - p) > room ? p + room : end;
    size_t copied = copy_plain<true>(p, chunk_end, w);
    p += copied;
    w += copied;
    if (p == end) break;
    if (p == chunk_end) continue;  // out of room, not a special byte
    auto c = static_cast<unsigned char>(*p);
    if (c >= 0x80) {
      // A run of non-ASCII characters, checked one sequence at a time.
      const char* run = p;
      while (p < chunk_end && static_cast<unsigned char>(*p) >= 0x80) {
        size_t length = utf8_sequence_length(reinterpret_cast<const unsigned char*>(p), static_cast<size_t>(end - p));
        if (length == 0) break;
        p += length;
      }
      std::memcpy(w, run, static_cast<size_t>(p - run));
      w += p - run;
      if (p < end && static_cast<unsigned char>(*p) >= 0x80 &&
          utf8_sequence_length(reinterpret_cast<const unsigned char*>(p), static_cast<size_t>(end - p)) == 0) {
        std::memcpy(w, "\xEF\xBF\xBD", 3);  // U+FFFD for a byte that starts no sequence
        w += 3;
        ++p;
      }
      continue;
    }
    char letter = kEscapeLetter[c];
    w[0] = '\\';
    w[1] = letter;
    if (letter != 'u') {
      w += 2;
    } else {
      w[2] = '0';
      w[3] = '0';
      w[4] = kHex[c >> 4];
      w[5] = kHex[c & 15];
      w += 6;
    }
    ++p;
  }
  *w++ = '"';
  out.resize(static_cast<size_t>(w - out.data()));
}

}  // namespace detail

// Compact JSON into a string, with commas placed automatically:
//   JsonWriter w(out); w.begin_object(); w.key("a"); w.integer(1); w.end_object();
class JsonWriter {
 public:
  explicit JsonWriter(std::string& out) : out_(out) {}

  void begin_object() { open('{'); }
  void end_object() { close('}'); }
  void begin_array() { open('['); }
  void end_array() { close(']'); }
  void key(std::string_view name) {
    before_value();
    detail::append_json_string(out_, name);
    out_ += ':';
    after_key_ = true;
  }
  void string(std::string_view text) {
    before_value();
    detail::append_json_string(out_, text);
  }
  void integer(int64_t n) {
    before_value();
    append_number(n);
  }
  void uinteger(uint64_t n) {
    before_value();
    append_number(n);
  }
  // Non-finite numbers have no JSON spelling and are written as null.
  void number(double x) {
    before_value();
    if (!std::isfinite(x)) {
      out_ += "null";
      return;
    }
    append_number(x);
  }
  void boolean(bool flag) {
    before_value();
    out_ += flag ? "true" : "false";
  }
  void null() {
    before_value();
    out_ += "null";
  }
  // A value that is already JSON text.
  void raw(std::string_view json) {
    before_value();
    out_ += json;
  }
  inline void value(const Json& json);

 private:
  void before_value() {
    if (after_key_) {
      after_key_ = false;
      return;
    }
    if (!first_) out_ += ',';
    first_ = false;
  }
  void open(char bracket) {
    before_value();
    out_ += bracket;
    first_ = true;
  }
  void close(char bracket) {
    out_ += bracket;
    first_ = false;
  }
  template <typename Number>
  void append_number(Number n) {
    char buffer[32];
    char* end = std::to_chars(buffer, buffer + sizeof(buffer), n).ptr;
    out_.append(buffer, static_cast<size_t>(end - buffer));
  }

  std::string& out_;
  bool first_ = true;
  bool after_key_ = false;
};

// A JSON value: null, bool, integer (int64 or, above its range, uint64),
// double, string, array or object. Objects keep their members in order;
// lookups find the first member of a name (like the host).
//
// The accessors never throw: as_string() of a non-string is "", as_int()
// of a non-number is 0, operator[] of a missing member is null. Use the
// is_*() checks where the difference matters.
class Json {
 public:
  enum class Type { kNull, kBool, kInt, kUint, kDouble, kString, kArray, kObject };
  using Array = std::vector<Json>;
  using Member = std::pair<std::string, Json>;
  using Object = std::vector<Member>;

  Json() = default;
  Json(std::nullptr_t) {}  // NOLINT: implicit conversions make literals easy
  template <typename B, std::enable_if_t<std::is_same_v<B, bool>, int> = 0>
  Json(B flag) : value_(flag) {}  // NOLINT (a template, so pointers do not become bools)
  template <typename I, std::enable_if_t<std::is_integral_v<I> && !std::is_same_v<I, bool> &&
                                             !std::is_same_v<I, char>, int> = 0>
  Json(I number) {  // NOLINT
    if constexpr (std::is_signed_v<I>) {
      value_ = static_cast<int64_t>(number);
    } else if (static_cast<uint64_t>(number) <= uint64_t{std::numeric_limits<int64_t>::max()}) {
      value_ = static_cast<int64_t>(number);
    } else {
      value_ = static_cast<uint64_t>(number);
    }
  }
  Json(double number) : value_(number) {}  // NOLINT
  Json(const char* text) : value_(std::string(text)) {}  // NOLINT
  Json(std::string text) : value_(std::move(text)) {}  // NOLINT
  Json(std::string_view text) : value_(std::string(text)) {}  // NOLINT
  Json(Array items) : value_(std::move(items)) {}  // NOLINT
  Json(Object members) : value_(std::move(members)) {}  // NOLINT

  // Json::object({{"path", "a.txt"}, {"recursive", true}})
  static Json object(std::initializer_list<Member> members = {}) { return Json(Object(members)); }
  static Json array(std::initializer_list<Json> items = {}) { return Json(Array(items)); }

  // Strict RFC 8259 JSON; only whitespace may follow the value. Nesting
  // deeper than 1024 levels is refused. Errors are kParseError naming the
  // byte offset.
  static inline Result<Json> parse(std::string_view text);

  Type type() const { return static_cast<Type>(value_.index()); }
  bool is_null() const { return type() == Type::kNull; }
  bool is_bool() const { return type() == Type::kBool; }
  bool is_number() const { return type() == Type::kInt || type() == Type::kUint || type() == Type::kDouble; }
  // An integer literal (no fraction, no exponent) in int64 or uint64 range.
  bool is_integer() const { return type() == Type::kInt || type() == Type::kUint; }
  bool is_string() const { return type() == Type::kString; }
  bool is_array() const { return type() == Type::kArray; }
  bool is_object() const { return type() == Type::kObject; }

  bool as_bool(bool fallback = false) const { return is_bool() ? std::get<bool>(value_) : fallback; }
  int64_t as_int(int64_t fallback = 0) const {
    switch (type()) {
      case Type::kInt: return std::get<int64_t>(value_);
      case Type::kUint: return fallback;
      case Type::kDouble: {
        double number = std::get<double>(value_);
        return number >= -9.2e18 && number <= 9.2e18 ? static_cast<int64_t>(number) : fallback;
      }
      default: return fallback;
    }
  }
  uint64_t as_uint(uint64_t fallback = 0) const {
    switch (type()) {
      case Type::kInt: {
        int64_t number = std::get<int64_t>(value_);
        return number >= 0 ? static_cast<uint64_t>(number) : fallback;
      }
      case Type::kUint: return std::get<uint64_t>(value_);
      case Type::kDouble: {
        double number = std::get<double>(value_);
        return number >= 0 && number <= 1.8e19 ? static_cast<uint64_t>(number) : fallback;
      }
      default: return fallback;
    }
  }
  double as_double(double fallback = 0) const {
    switch (type()) {
      case Type::kInt: return static_cast<double>(std::get<int64_t>(value_));
      case Type::kUint: return static_cast<double>(std::get<uint64_t>(value_));
      case Type::kDouble: return std::get<double>(value_);
      default: return fallback;
    }
  }
  const std::string& as_string() const { return is_string() ? std::get<std::string>(value_) : empty_string(); }
  std::string as_string(std::string_view fallback) const {
    return is_string() ? std::get<std::string>(value_) : std::string(fallback);
  }
  const Array& as_array() const { return is_array() ? std::get<Array>(value_) : empty_array(); }
  const Object& as_object() const { return is_object() ? std::get<Object>(value_) : empty_object(); }

  // Mutable access; a value of another type (null included) is replaced by
  // an empty string/array/object first.
  std::string& string_ref() { return mutable_as<std::string>(); }
  Array& array_ref() { return mutable_as<Array>(); }
  Object& object_ref() { return mutable_as<Object>(); }

  // Object members: nullptr / null when absent (or when this is no object).
  const Json* find(std::string_view key) const {
    if (!is_object()) return nullptr;
    for (const Member& member : std::get<Object>(value_)) {
      if (member.first == key) return &member.second;
    }
    return nullptr;
  }
  Json* find(std::string_view key) { return const_cast<Json*>(std::as_const(*this).find(key)); }
  bool contains(std::string_view key) const { return find(key) != nullptr; }
  const Json& operator[](std::string_view key) const {
    const Json* member = find(key);
    return member != nullptr ? *member : null_value();
  }
  const Json& operator[](const char* key) const { return (*this)[std::string_view(key)]; }
  // Array items: null when out of range.
  const Json& operator[](size_t index) const {
    const Array& items = as_array();
    return index < items.size() ? items[index] : null_value();
  }
  const Json& operator[](int index) const { return index < 0 ? null_value() : (*this)[static_cast<size_t>(index)]; }

  // Sets a member (replacing the first of that name) or appends an item.
  Json& set(std::string key, Json member_value) {
    Object& members = object_ref();
    for (Member& member : members) {
      if (member.first == key) {
        member.second = std::move(member_value);
        return *this;
      }
    }
    members.emplace_back(std::move(key), std::move(member_value));
    return *this;
  }
  Json& push_back(Json item) {
    array_ref().push_back(std::move(item));
    return *this;
  }
  // Members of an object, items of an array, else 0.
  size_t size() const {
    if (is_array()) return std::get<Array>(value_).size();
    if (is_object()) return std::get<Object>(value_).size();
    return 0;
  }

  // Compact JSON text.
  std::string dump() const {
    std::string out;
    JsonWriter writer(out);
    writer.value(*this);
    return out;
  }

  // Numbers compare by value across int/uint/double; objects by members in order.
  friend bool operator==(const Json& a, const Json& b) {
    if (a.is_number() && b.is_number()) {
      if (a.type() == Type::kDouble || b.type() == Type::kDouble) return a.as_double() == b.as_double();
      if (a.type() != b.type()) return false;  // an int64 and a uint64 above int64 range
    }
    return a.value_ == b.value_;
  }

 private:
  friend class JsonWriter;
  friend class JsonParser;

  static const std::string& empty_string() {
    static const std::string kEmpty;
    return kEmpty;
  }
  static const Array& empty_array() {
    static const Array kEmpty;
    return kEmpty;
  }
  static const Object& empty_object() {
    static const Object kEmpty;
    return kEmpty;
  }
  static const Json& null_value() {
    static const Json kNull;
    return kNull;
  }
  template <typename T>
  T& mutable_as() {
    if (!std::holds_alternative<T>(value_)) value_ = T{};
    return std::get<T>(value_);
  }

  std::variant<std::nullptr_t, bool, int64_t, uint64_t, double, std::string, Array, Object> value_;
};

inline void JsonWriter::value(const Json& json) {
  switch (json.type()) {
    case Json::Type::kNull: null(); break;
    case Json::Type::kBool: boolean(std::get<bool>(json.value_)); break;
    case Json::Type::kInt: integer(std::get<int64_t>(json.value_)); break;
    case Json::Type::kUint: uinteger(std::get<uint64_t>(json.value_)); break;
    case Json::Type::kDouble: number(std::get<double>(json.value_)); break;
    case Json::Type::kString: string(std::get<std::string>(json.value_)); break;
    case Json::Type::kArray:
      begin_array();
      for (const Json& item : std::get<Json::Array>(json.value_)) value(item);
      end_array();
      break;
    case Json::Type::kObject:
      begin_object();
      for (const Json::Member& member : std::get<Json::Object>(json.value_)) {
        key(member.first);
        value(member.second);
      }
      end_object();
      break;
  }
}

namespace detail {

// Decoding space for strings with escapes, kept per thread and reused, so
// that a large answer does not pay page faults for a fresh buffer on every
// parse. A std::string so that a large decoded string can be handed over
// instead of copied (see take_scratch). Up to 64 MiB stays allocated.
inline std::string& string_scratch(size_t size) {
  thread_local std::string scratch;
  if (scratch.size() > (size_t{64} << 20) && size <= (size_t{64} << 20)) std::string().swap(scratch);
  if (scratch.size() < size) scratch.resize(std::max(size, size_t{64} << 10));
  return scratch;
}

// Moves the first `size` bytes of the scratch buffer into `out`. A large
// string that fills most of the buffer (the content of a big fs.read) takes
// the buffer itself, sparing a copy (about 40 us per MiB); the next parse
// allocates a new one.
inline void take_scratch(std::string& scratch, size_t size, std::string& out) {
  if (size >= (size_t{256} << 10) && size + size / 8 >= scratch.size()) {
    scratch.resize(size);
    out.swap(scratch);
    scratch.clear();
  } else {
    out.assign(scratch.data(), size);
  }
}

}  // namespace detail

// The recursive-descent parser behind Json::parse.
class JsonParser {
 public:
  static constexpr int kMaxDepth = 1024;

  explicit JsonParser(std::string_view text)
      : begin_(text.data()), p_(text.data()), end_(text.data() + text.size()) {}

  Result<Json> parse() {
    Json value;
    skip_whitespace();
    if (!parse_value(value, 0)) return failure();
    skip_whitespace();
    if (p_ != end_) {
      fail("unexpected text after the value");
      return failure();
    }
    return value;
  }

 private:
  Error failure() const { return Error{kParseError, error_}; }

  bool fail(std::string_view what) {
    if (error_.empty()) {
      error_ = "Parse error at offset " + std::to_string(p_ - begin_) + ": " + std::string(what);
    }
    return false;
  }

  void skip_whitespace() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
  }

  bool literal(std::string_view word) {
    if (static_cast<size_t>(end_ - p_) < word.size() || std::memcmp(p_, word.data(), word.size()) != 0) {
      return fail("invalid literal");
    }
    p_ += word.size();
    return true;
  }

  bool parse_value(Json& out, int depth) {
    if (p_ == end_) return fail("unexpected end of input");
    switch (*p_) {
      case '{': return parse_object(out, depth + 1);
      case '[': return parse_array(out, depth + 1);
      case '"': {
        std::string text;
        if (!parse_string(text)) return false;
        out.value_ = std::move(text);
        return true;
      }
      case 't':
        out.value_ = true;
        return literal("true");
      case 'f':
        out.value_ = false;
        return literal("false");
      case 'n':
        out.value_ = nullptr;
        return literal("null");
      default:
        if (*p_ == '-' || (*p_ >= '0' && *p_ <= '9')) return parse_number(out);
        return fail("expected a value");
    }
  }

  bool parse_object(Json& out, int depth) {
    if (depth > kMaxDepth) return fail("nesting deeper than 1024 levels");
    ++p_;  // '{'
    Json::Object members;
    skip_whitespace();
    if (p_ < end_ && *p_ == '}') {
      ++p_;
      out.value_ = std::move(members);
      return true;
    }
    while (true) {
      skip_whitespace();
      if (p_ == end_ || *p_ != '"') return fail("expected a member name");
      Json::Member& member = members.emplace_back();
      if (!parse_string(member.first)) return false;
      skip_whitespace();
      if (p_ == end_ || *p_ != ':') return fail("expected ':'");
      ++p_;
      skip_whitespace();
      if (!parse_value(member.second, depth)) return false;
      skip_whitespace();
      if (p_ == end_) return fail("unterminated object");
      if (*p_ == ',') {
        ++p_;
        continue;
      }
      if (*p_ != '}') return fail("expected ',' or '}'");
      ++p_;
      out.value_ = std::move(members);
      return true;
    }
  }

  bool parse_array(Json& out, int depth) {
    if (depth > kMaxDepth) return fail("nesting deeper than 1024 levels");
    ++p_;  // '['
    Json::Array items;
    skip_whitespace();
    if (p_ < end_ && *p_ == ']') {
      ++p_;
      out.value_ = std::move(items);
      return true;
    }
    while (true) {
      skip_whitespace();
      if (!parse_value(items.emplace_back(), depth)) return false;
      skip_whitespace();
      if (p_ == end_) return fail("unterminated array");
      if (*p_ == ',') {
        ++p_;
        continue;
      }
      if (*p_ != ']') return fail("expected ',' or ']'");
      ++p_;
      out.value_ = std::move(items);
      return true;
    }
  }

  // -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
  bool parse_number(Json& out) {
    const char* start = p_;
    auto digits = [&] {
      const char* first = p_;
      while (p_ < end_ && *p_ >= '0' && *p_ <= '9') ++p_;
      return p_ > first;
    };
    if (*p_ == '-') ++p_;
    if (p_ < end_ && *p_ == '0') {
      ++p_;
    } else if (!digits()) {
      return fail("invalid number");
    }
    bool integer = true;
    if (p_ < end_ && *p_ == '.') {
      ++p_;
      if (!digits()) return fail("invalid number: no digit after '.'");
      integer = false;
    }
    if (p_ < end_ && (*p_ == 'e' || *p_ == 'E')) {
      ++p_;
      if (p_ < end_ && (*p_ == '+' || *p_ == '-')) ++p_;
      if (!digits()) return fail("invalid number: no digit in the exponent");
      integer = false;
    }
    if (integer) {
      int64_t signed_value;
      if (std::from_chars(start, p_, signed_value).ec == std::errc()) {
        out.value_ = signed_value;
        return true;
      }
      uint64_t unsigned_value;
      if (*start != '-' && std::from_chars(start, p_, unsigned_value).ec == std::errc()) {
        out.value_ = unsigned_value;
        return true;
      }
    }
    double number;
    auto [end, error] = std::from_chars(start, p_, number);
    if (error != std::errc() || end != p_ || !std::isfinite(number)) {
      p_ = start;
      return fail("number out of range");
    }
    out.value_ = number;
    return true;
  }

  static int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }

  // Four hex digits at p_ (after "\u"); -1 if they are not.
  int read_hex4() {
    if (end_ - p_ < 4) return -1;
    int value = 0;
    for (int i = 0; i < 4; ++i) {
      int digit = hex_value(p_[i]);
      if (digit < 0) return -1;
      value = value * 16 + digit;
    }
    p_ += 4;
    return value;
  }

  // At the opening '"'. The common case, no escape, is one scan and one
  // copy. A string with escapes is decoded into the thread's scratch buffer,
  // at least as large as the rest of the input (decoding never makes text
  // longer): whole 64-byte blocks by decode_blocks, the rest (the string's
  // end, \uXXXX escapes, errors) here, scanning and copying each run
  // between escapes in one pass. Then moved out (take_scratch).
  bool parse_string(std::string& out) {
    ++p_;
    const char* special = detail::find_string_special<false>(p_, end_);
    if (special == end_) return fail("unterminated string");
    if (*special == '"') {
      out.assign(p_, static_cast<size_t>(special - p_));
      p_ = special + 1;
      return true;
    }
    std::string& buffer = detail::string_scratch(static_cast<size_t>(end_ - p_) + 16);
    char* scratch = buffer.data();
    char* w = scratch;
    std::memcpy(w, p_, static_cast<size_t>(special - p_));
    w += special - p_;
    p_ = special;
    while (true) {
      char c = *p_;  // a special byte
      if (c == '"') {
        ++p_;
        detail::take_scratch(buffer, static_cast<size_t>(w - scratch), out);
        return true;
      }
      if (c != '\\') return fail("control character in string");
      if (end_ - p_ >= 2 && detail::kUnescaped[static_cast<unsigned char>(p_[1])] != 0) {
        *w++ = detail::kUnescaped[static_cast<unsigned char>(p_[1])];
        p_ += 2;
      } else if (!decode_escape(w)) {
        return false;
      }
      detail::decode_blocks(p_, end_, w);
      size_t copied = detail::copy_plain<false>(p_, end_, w);
      p_ += copied;
      w += copied;
      if (p_ == end_) return fail("unterminated string");
    }
  }

  // At a '\\': writes the escaped character (at most 4 bytes) to w.
  bool decode_escape(char*& w) {
    if (++p_ == end_) return fail("unterminated string");
    switch (*p_++) {
      case '"': *w++ = '"'; return true;
      case '\\': *w++ = '\\'; return true;
      case '/': *w++ = '/'; return true;
      case 'b': *w++ = '\b'; return true;
      case 'f': *w++ = '\f'; return true;
      case 'n': *w++ = '\n'; return true;
      case 'r': *w++ = '\r'; return true;
      case 't': *w++ = '\t'; return true;
      case 'u': break;
      default:
        --p_;
        return fail("invalid escape");
    }
    int unit = read_hex4();
    if (unit < 0) return fail("invalid \\u escape");
    uint32_t code_point = static_cast<uint32_t>(unit);
    if (unit >= 0xD800 && unit <= 0xDBFF) {
      if (end_ - p_ < 2 || p_[0] != '\\' || p_[1] != 'u') return fail("unpaired surrogate in \\u escape");
      p_ += 2;
      int low = read_hex4();
      if (low < 0xDC00 || low > 0xDFFF) return fail("unpaired surrogate in \\u escape");
      code_point = 0x10000 + ((code_point - 0xD800) << 10) + (static_cast<uint32_t>(low) - 0xDC00);
    } else if (unit >= 0xDC00 && unit <= 0xDFFF) {
      return fail("unpaired surrogate in \\u escape");
    }
    w += detail::encode_utf8(code_point, w);
    return true;
  }

  const char* begin_;
  const char* p_;
  const char* end_;
  std::string error_;
};

inline Result<Json> Json::parse(std::string_view text) { return JsonParser(text).parse(); }

// Content blocks for result(): {"type":"text","text":...} and an embedded
// resource {"type":"resource","resource":{"uri","mimeType"?,"text"}}.
inline Json text_block(std::string_view text) { return Json::object({{"type", "text"}, {"text", text}}); }
inline Json resource_block(std::string_view uri, std::string_view text, std::string_view mime_type = {}) {
  Json resource = Json::object({{"uri", uri}});
  if (!mime_type.empty()) resource.set("mimeType", mime_type);
  resource.set("text", text);
  return Json::object({{"type", "resource"}, {"resource", std::move(resource)}});
}

// ---------------------------------------------------------------------------
// Line framing

// Splits what arrives on a file descriptor into '\n'-terminated lines,
// reading with large read(2) calls into one growing buffer. A line is
// handed out as a view into the buffer, valid until the next call.
//
// Where read(2) copies to matters: on some x86 CPUs (measured on AMD Zen 3)
// the kernel's copy out of a pipe (rep movsb) runs about 3 times slower
// when the destination sits 1 to 31 bytes past the source modulo 4 KiB, and
// the pipe's pages start at page offset 0. glibc places a large allocation
// 16 bytes into a page, which cost the tool 1.3 ms of CPU per 1 MiB answer
// instead of 0.8 ms. So the buffer is page-aligned, and when consumed lines
// are dropped the partial line left over is moved to end on a page
// boundary: the next read then lands page-aligned.
class LineReader {
 public:
  static constexpr size_t kReadSize = 256 * 1024;

  explicit LineReader(int fd) : fd_(fd) {}

  // The next line without its '\n'; nullopt at end of input (bytes after
  // the last '\n' are dropped: they are a truncated message). An Error
  // (kInternalError) if read(2) fails.
  Result<std::optional<std::string_view>> next() {
    buffer_begin_ = line_end_;
    while (true) {
      const char* data = buffer_.get();
      const void* newline = filled_ > scanned_ ? std::memchr(data + scanned_, '\n', filled_ - scanned_) : nullptr;
      if (newline != nullptr) {
        size_t end = static_cast<size_t>(static_cast<const char*>(newline) - data);
        std::string_view line(data + buffer_begin_, end - buffer_begin_);
        line_end_ = scanned_ = end + 1;
        return std::optional<std::string_view>(line);
      }
      scanned_ = filled_;
      if (eof_) return std::optional<std::string_view>();
      if (Result<void> read = fill(); !read.ok()) return read.error();
    }
  }

  // A complete line is buffered: next() returns it without reading.
  bool has_line() {
    if (filled_ > scanned_ && std::memchr(buffer_.get() + scanned_, '\n', filled_ - scanned_) != nullptr) {
      return true;
    }
    scanned_ = filled_;
    return false;
  }

 private:
  static constexpr size_t kPage = 4096;

  struct PageDelete {
    void operator()(char* bytes) const { ::operator delete(bytes, std::align_val_t{kPage}); }
  };
  using Buffer = std::unique_ptr<char[], PageDelete>;

  static Buffer allocate(size_t size) {
    return Buffer(static_cast<char*>(::operator new(size, std::align_val_t{kPage})));
  }

  Result<void> fill() {
    // Drop consumed lines, placing the partial line so that it ends on a
    // page boundary (see above); grow when less than kReadSize would be
    // left to read into.
    size_t partial = filled_ - buffer_begin_;
    size_t place = (kPage - partial % kPage) % kPage;
    size_t start = buffer_begin_ > 0 ? place : 0;  // where the partial line is read on from
    if (capacity_ < start + partial + kReadSize) {
      size_t capacity = std::max(capacity_ * 2, (place + partial + kReadSize + kPage - 1) / kPage * kPage);
      Buffer larger = allocate(capacity);
      if (partial > 0) std::memcpy(larger.get() + place, buffer_.get() + buffer_begin_, partial);
      buffer_ = std::move(larger);
      capacity_ = capacity;
      move_partial(place, partial);
    } else if (buffer_begin_ > 0) {
      if (partial > 0 && place != buffer_begin_) {
        std::memmove(buffer_.get() + place, buffer_.get() + buffer_begin_, partial);
      }
      move_partial(place, partial);
    }
    while (true) {
      ssize_t count = ::read(fd_, buffer_.get() + filled_, capacity_ - filled_);
      if (count > 0) {
        filled_ += static_cast<size_t>(count);
        return {};
      }
      if (count == 0) {
        eof_ = true;
        return {};
      }
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        pollfd readable{fd_, POLLIN, 0};
        ::poll(&readable, 1, -1);
        continue;
      }
      return Error{kInternalError, std::string("cannot read the host's messages: ") + std::strerror(errno)};
    }
  }

  // The partial line now starts at `place`.
  void move_partial(size_t place, size_t partial) {
    scanned_ = scanned_ - buffer_begin_ + place;
    buffer_begin_ = line_end_ = place;
    filled_ = place + partial;
  }

  int fd_;
  Buffer buffer_;
  size_t capacity_ = 0;
  size_t buffer_begin_ = 0;  // start of the unconsumed data
  size_t line_end_ = 0;      // end of the last line handed out (+1 for its '\n')
  size_t scanned_ = 0;       // no '\n' in [buffer_begin_, scanned_)
  size_t filled_ = 0;
  bool eof_ = false;
};

namespace detail {

// Writes all of `bytes` to fd, retrying on EINTR and waiting out EAGAIN.
inline Result<void> write_all(int fd, std::string_view bytes) {
  const char* p = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    ssize_t count = ::write(fd, p, left);
    if (count >= 0) {
      p += count;
      left -= static_cast<size_t>(count);
      continue;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      pollfd writable{fd, POLLOUT, 0};
      ::poll(&writable, 1, -1);
      continue;
    }
    return Error{kInternalError, std::string("cannot write to the host: ") + std::strerror(errno)};
  }
  return {};
}

}  // namespace detail

// ---------------------------------------------------------------------------
// Typed parameters and results of the methods

struct ReadOptions {
  std::optional<uint64_t> offset;  // first byte; absent: 0
  std::optional<uint64_t> length;  // at most this many bytes; absent: to the end
};

struct FileContent {
  std::string content;  // the bytes (decoded from base64 when the host sent it so)
  uint64_t size = 0;    // size of the whole file, also for a ranged read
  bool binary = false;  // the host sent base64: the bytes are not UTF-8
};

enum class WriteMode { kOverwrite, kCreate, kAppend };

struct ListOptions {
  std::optional<uint64_t> offset;  // skip this many entries
  std::optional<uint64_t> limit;   // at most this many
};

struct DirEntry {
  std::string path;  // the entry's name
  std::string kind;  // "file", "dir" or "symlink"
};

struct DirListing {
  std::vector<DirEntry> entries;
  uint64_t total = 0;  // entries in the directory, whatever offset and limit
};

struct Metadata {
  std::string kind;      // "file", "dir" or "symlink"
  uint64_t size = 0;
  std::string modified;  // UTC RFC 3339 with milliseconds
};

struct GrepOptions {
  std::vector<std::string> paths;       // restrict to these dirs/files
  std::vector<std::string> extensions;  // e.g. {"py", "md"}
  std::optional<uint64_t> context;      // lines before and after
  bool case_insensitive = false;
  std::optional<uint64_t> max_matches;  // host default 1000
  bool include_ignored = false;         // also files ignored by .gitignore
};

struct GrepLine {
  uint64_t line_number = 0;  // 1-based
  std::string content;
  bool is_match = false;  // false for a context line
};

struct GrepFile {
  std::string path;
  std::vector<GrepLine> lines;
};

struct GrepResult {
  std::vector<GrepFile> matches;  // sorted by path
  bool truncated = false;         // max_matches cut the search short

  size_t match_count() const {
    size_t count = 0;
    for (const GrepFile& file : matches) {
      for (const GrepLine& line : file.lines) count += line.is_match ? 1 : 0;
    }
    return count;
  }
};

struct Header {
  std::string name;
  std::string value;  // may use ${VAR} for variables the tool's policy allows
};

struct HttpResponse {
  int status = 0;
  std::vector<Header> headers;
  std::string body;     // decoded from base64 when the host sent it so
  bool binary = false;  // the host sent base64
};

struct RunOptions {
  std::vector<std::string> envs;     // names of host variables to pass on
  std::optional<std::string> input;  // the child's stdin
  std::optional<uint64_t> timeout_s;
};

struct ProcessOutput {
  std::string stdout_text;
  std::string stderr_text;
  int exit_code = 0;
  bool truncated = false;  // output was cut at the host's limit
};

// A `state` notification of a stateful tool (SPEC.md §4.6).
struct State {
  enum class Type { kRunning, kWaiting, kStopped };
  Type type = Type::kRunning;
  std::optional<Json> content;
  // For kWaiting: {id, text, answer_type: "Boolean" | "Text" |
  // {"Select": {"options": [...]}}, default?}.
  std::optional<Json> question;
  std::optional<Json> result;  // for kStopped
};

struct ErrorDetails {
  std::vector<std::string> trace;
  std::optional<bool> transient;  // the caller may retry
};

// ---------------------------------------------------------------------------
// Decoding answers

namespace detail {

inline Error malformed(std::string_view method, std::string_view what) {
  return Error{kInternalError, "malformed " + std::string(method) + " answer from the host: " + std::string(what)};
}

// Moves a string member out of an answer.
inline bool take_string(Json& answer, std::string_view key, std::string& out) {
  Json* member = answer.find(key);
  if (member == nullptr || !member->is_string()) return false;
  out = std::move(member->string_ref());
  return true;
}

inline Result<FileContent> decode_read(Json&& answer) {
  FileContent file;
  std::string content;
  if (!take_string(answer, "content", content)) return malformed("fs.read", "no 'content' string");
  file.size = answer["size"].as_uint();
  if (answer["encoding"].as_string() == "base64") {
    Result<std::string> bytes = base64_decode(content);
    if (!bytes.ok()) return malformed("fs.read", bytes.error().message);
    file.content = std::move(bytes).value();
    file.binary = true;
  } else {
    file.content = std::move(content);
  }
  return file;
}

inline Result<std::string> decode_read_content(Json&& answer) {
  Result<FileContent> file = decode_read(std::move(answer));
  if (!file.ok()) return file.error();
  return std::move(file.value().content);
}

inline Result<uint64_t> decode_write(Json&& answer) { return answer["size"].as_uint(); }

inline Result<bool> decode_exists(Json&& answer) {
  const Json& exists = answer["exists"];
  if (!exists.is_bool()) return malformed("fs.exists", "no 'exists' flag");
  return exists.as_bool();
}

inline Result<DirListing> decode_list_dir(Json&& answer) {
  DirListing listing;
  const Json& entries = answer["entries"];
  if (!entries.is_array()) return malformed("fs.list_dir", "no 'entries' array");
  listing.entries.reserve(entries.size());
  for (const Json& entry : entries.as_array()) {
    listing.entries.push_back(DirEntry{entry["path"].as_string(), entry["kind"].as_string()});
  }
  listing.total = answer["total"].as_uint(listing.entries.size());
  return listing;
}

inline Result<Metadata> decode_metadata(Json&& answer) {
  if (!answer["kind"].is_string()) return malformed("fs.metadata", "no 'kind' string");
  return Metadata{answer["kind"].as_string(), answer["size"].as_uint(), answer["modified"].as_string()};
}

inline Result<void> decode_empty(Json&&) { return {}; }

inline Result<GrepResult> decode_grep(Json&& answer) {
  GrepResult grep;
  Json* matches = answer.find("matches");
  if (matches == nullptr || !matches->is_array()) return malformed("fs.grep", "no 'matches' array");
  grep.matches.reserve(matches->size());
  for (Json& file : matches->array_ref()) {
    GrepFile& out = grep.matches.emplace_back();
    take_string(file, "path", out.path);
    Json* lines = file.find("lines");
    if (lines == nullptr) continue;
    out.lines.reserve(lines->size());
    for (Json& line : lines->array_ref()) {
      GrepLine& out_line = out.lines.emplace_back();
      out_line.line_number = line["line_number"].as_uint();
      take_string(line, "content", out_line.content);
      out_line.is_match = line["is_match"].as_bool();
    }
  }
  grep.truncated = answer["truncated"].as_bool();
  return grep;
}

inline Result<HttpResponse> decode_http(Json&& answer) {
  HttpResponse response;
  if (!answer["status"].is_integer()) return malformed("http", "no 'status' integer");
  response.status = static_cast<int>(answer["status"].as_int());
  const Json& headers = answer["headers"];
  if (headers.is_array()) {  // [{name, value}]
    for (const Json& header : headers.as_array()) {
      response.headers.push_back(Header{header["name"].as_string(), header["value"].as_string()});
    }
  } else if (headers.is_object()) {  // {name: value}
    for (const Json::Member& header : headers.as_object()) {
      response.headers.push_back(Header{header.first, header.second.as_string()});
    }
  }
  std::string body;
  take_string(answer, "body", body);
  if (answer["encoding"].as_string() == "base64") {
    Result<std::string> bytes = base64_decode(body);
    if (!bytes.ok()) return malformed("http", bytes.error().message);
    response.body = std::move(bytes).value();
    response.binary = true;
  } else {
    response.body = std::move(body);
  }
  return response;
}

inline Result<ProcessOutput> decode_run(Json&& answer) {
  ProcessOutput output;
  if (!answer["exit_code"].is_integer()) return malformed("process.run", "no 'exit_code' integer");
  take_string(answer, "stdout", output.stdout_text);
  take_string(answer, "stderr", output.stderr_text);
  output.exit_code = static_cast<int>(answer["exit_code"].as_int());
  output.truncated = answer["truncated"].as_bool();
  return output;
}

inline Result<Json> decode_raw(Json&& answer) { return std::move(answer); }

}  // namespace detail

// ---------------------------------------------------------------------------
// The tool's side of a session

class Tool;

// A request in flight. get() waits for its answer (once); the Pending may
// be dropped without waiting, its answer is then discarded when it arrives.
template <typename T>
class [[nodiscard]] Pending {
 public:
  using Decoder = Result<T> (*)(Json&&);

  Pending(Pending&& other) noexcept { *this = std::move(other); }
  Pending& operator=(Pending&& other) noexcept;
  Pending(const Pending&) = delete;
  Pending& operator=(const Pending&) = delete;
  ~Pending();

  // The request's JSON-RPC id; 0 if it could not be sent.
  int64_t id() const { return id_; }
  inline Result<T> get();
  // Asks the host to abandon the request (a `cancel {id}` notification);
  // get() then returns kCancelled, or the answer if the host was faster.
  inline Result<void> cancel();

 private:
  friend class Tool;
  Pending(Tool* tool, int64_t id, Decoder decode) : tool_(tool), id_(id), decode_(decode) {}
  Pending(Error error) : send_error_(std::move(error)) {}

  Tool* tool_ = nullptr;
  int64_t id_ = 0;
  Decoder decode_ = nullptr;
  std::optional<Error> send_error_;
};

struct ConnectOptions {
  int in_fd = STDIN_FILENO;    // where the host's messages arrive
  int out_fd = STDOUT_FILENO;  // where requests go
  // When out_fd is 1: keep a private copy of it for the protocol and point
  // fd 1 at stderr, so stray prints cannot corrupt the protocol.
  bool redirect_stdout = true;
};

class Tool;
inline Result<Tool> connect(const ConnectOptions& options = {});

// The connection to the host, made by connect() from the `init` message.
// Movable (but not while a Pending of it exists: a Pending points at its
// Tool), not copyable. Thread-safe: any call from any thread.
class Tool {
 public:
  Tool(Tool&&) noexcept = default;
  Tool& operator=(Tool&&) noexcept = default;
  ~Tool() = default;

  // --- From init
  const std::string& name() const { return session_->name; }
  const Json& arguments() const { return session_->init["tool"]["arguments"]; }
  const Json& answers() const { return session_->init["tool"]["answers"]; }
  const Json& options() const { return session_->init["tool"]["options"]; }
  const std::string& protocol_version() const { return session_->init["protocol_version"].as_string(); }
  const std::string& host_version() const { return session_->init["host"]["version"].as_string(); }
  // The project's display root: a directory, or a label such as memory:NAME.
  const std::string& root() const { return session_->init["host"]["root"].as_string(); }
  // Methods the host serves, e.g. "fs.read".
  const std::vector<std::string>& methods() const { return session_->methods; }
  bool has_method(std::string_view method) const {
    return std::find(session_->methods.begin(), session_->methods.end(), method) != session_->methods.end();
  }
  // The whole init params, for fields this SDK does not know.
  const Json& init() const { return session_->init; }

  // --- Files. Paths are relative to the project root ("" is the root).

  // The file's bytes: its text, or the decoded bytes of a binary file.
  Result<std::string> read(std::string_view path, const ReadOptions& options = {}) {
    return read_async(path, options).get();
  }
  Pending<std::string> read_async(std::string_view path, const ReadOptions& options = {}) {
    return start<std::string>("fs.read", read_params(path, options), detail::decode_read_content);
  }
  // The bytes plus the whole file's size and whether the host sent base64.
  Result<FileContent> read_bytes(std::string_view path, const ReadOptions& options = {}) {
    return read_bytes_async(path, options).get();
  }
  Pending<FileContent> read_bytes_async(std::string_view path, const ReadOptions& options = {}) {
    return start<FileContent>("fs.read", read_params(path, options), detail::decode_read);
  }

  // Writes `content` (any bytes: UTF-8 goes as text, anything else as
  // base64) and returns the number of bytes written. Parent directories are
  // created. kCreate fails with kAlreadyExists if the file exists; kAppend
  // adds to the end.
  Result<uint64_t> write(std::string_view path, std::string_view content, WriteMode mode = WriteMode::kOverwrite) {
    return write_async(path, content, mode).get();
  }
  Result<uint64_t> write(std::string_view path, std::span<const uint8_t> bytes, WriteMode mode = WriteMode::kOverwrite) {
    return write_async(path, std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()), mode).get();
  }
  Pending<uint64_t> write_async(std::string_view path, std::string_view content, WriteMode mode = WriteMode::kOverwrite) {
    return start<uint64_t>("fs.write", [&](JsonWriter& w) {
      w.key("path");
      w.string(path);
      w.key("content");
      if (is_utf8(content)) {
        w.string(content);
      } else {
        w.string(base64_encode(content));
        w.key("encoding");
        w.string("base64");
      }
      if (mode != WriteMode::kOverwrite) {
        w.key("mode");
        w.string(mode == WriteMode::kCreate ? "create" : "append");
      }
    }, detail::decode_write);
  }

  // False for a missing path; an error for a path the tool may not see.
  Result<bool> exists(std::string_view path) { return exists_async(path).get(); }
  Pending<bool> exists_async(std::string_view path) {
    return start<bool>("fs.exists", path_params(path), detail::decode_exists);
  }

  // Immediate entries sorted by name.
  Result<DirListing> list_dir(std::string_view path, const ListOptions& options = {}) {
    return list_dir_async(path, options).get();
  }
  Pending<DirListing> list_dir_async(std::string_view path, const ListOptions& options = {}) {
    return start<DirListing>("fs.list_dir", [&](JsonWriter& w) {
      w.key("path");
      w.string(path);
      optional_uint(w, "offset", options.offset);
      optional_uint(w, "limit", options.limit);
    }, detail::decode_list_dir);
  }

  Result<Metadata> metadata(std::string_view path) { return metadata_async(path).get(); }
  Pending<Metadata> metadata_async(std::string_view path) {
    return start<Metadata>("fs.metadata", path_params(path), detail::decode_metadata);
  }

  // Deletes a file, or a directory with `recursive`.
  Result<void> remove(std::string_view path, bool recursive = false) { return remove_async(path, recursive).get(); }
  Pending<void> remove_async(std::string_view path, bool recursive = false) {
    return start<void>("fs.delete", [&](JsonWriter& w) {
      w.key("path");
      w.string(path);
      if (recursive) {
        w.key("recursive");
        w.boolean(true);
      }
    }, detail::decode_empty);
  }

  // Moves a file or directory; kAlreadyExists if `to` exists unless `overwrite`.
  Result<void> rename(std::string_view from, std::string_view to, bool overwrite = false) {
    return rename_async(from, to, overwrite).get();
  }
  Pending<void> rename_async(std::string_view from, std::string_view to, bool overwrite = false) {
    return start<void>("fs.rename", [&](JsonWriter& w) {
      w.key("from");
      w.string(from);
      w.key("to");
      w.string(to);
      if (overwrite) {
        w.key("overwrite");
        w.boolean(true);
      }
    }, detail::decode_empty);
  }

  // Searches file contents; `pattern` is RE2 syntax.
  Result<GrepResult> grep(std::string_view pattern, const GrepOptions& options = {}) {
    return grep_async(pattern, options).get();
  }
  Pending<GrepResult> grep_async(std::string_view pattern, const GrepOptions& options = {}) {
    return start<GrepResult>("fs.grep", [&](JsonWriter& w) {
      w.key("pattern");
      w.string(pattern);
      optional_strings(w, "paths", options.paths);
      optional_strings(w, "extensions", options.extensions);
      optional_uint(w, "context", options.context);
      if (options.case_insensitive) {
        w.key("case_insensitive");
        w.boolean(true);
      }
      optional_uint(w, "max_matches", options.max_matches);
      if (options.include_ignored) {
        w.key("include_ignored");
        w.boolean(true);
      }
    }, detail::decode_grep);
  }

  // --- Network and processes (checked against the tool's policy)

  Result<HttpResponse> http_get(std::string_view url, const std::vector<Header>& headers = {}) {
    return http_get_async(url, headers).get();
  }
  Pending<HttpResponse> http_get_async(std::string_view url, const std::vector<Header>& headers = {}) {
    return start<HttpResponse>("http.get", [&](JsonWriter& w) {
      w.key("url");
      w.string(url);
      optional_headers(w, headers);
    }, detail::decode_http);
  }
  // `body` is any bytes: UTF-8 goes as text, anything else as base64.
  Result<HttpResponse> http_post(std::string_view url, std::string_view body,
                                 const std::vector<Header>& headers = {}) {
    return http_post_async(url, body, headers).get();
  }
  Pending<HttpResponse> http_post_async(std::string_view url, std::string_view body,
                                        const std::vector<Header>& headers = {}) {
    return start<HttpResponse>("http.post", [&](JsonWriter& w) {
      w.key("url");
      w.string(url);
      optional_headers(w, headers);
      w.key("body");
      if (is_utf8(body)) {
        w.string(body);
      } else {
        w.string(base64_encode(body));
        w.key("encoding");
        w.string("base64");
      }
    }, detail::decode_http);
  }

  // Runs a program in the project root under the tool's policy.
  Result<ProcessOutput> run(std::string_view program, const std::vector<std::string>& args = {},
                            const RunOptions& options = {}) {
    return run_async(program, args, options).get();
  }
  Pending<ProcessOutput> run_async(std::string_view program, const std::vector<std::string>& args = {},
                                   const RunOptions& options = {}) {
    return start<ProcessOutput>("process.run", [&](JsonWriter& w) {
      w.key("program");
      w.string(program);
      w.key("args");
      w.begin_array();
      for (const std::string& arg : args) w.string(arg);
      w.end_array();
      optional_strings(w, "envs", options.envs);
      if (options.input) {
        w.key("stdin");
        w.string(*options.input);
      }
      optional_uint(w, "timeout_s", options.timeout_s);
    }, detail::decode_run);
  }

  // --- Any method, raw

  // Sends a request and returns its id without waiting. `params` must be an
  // object (or null for none).
  Result<int64_t> send(std::string_view method, const Json& params = Json::object()) {
    if (!params.is_object() && !params.is_null()) {
      return Error{kInvalidParams, "params of " + std::string(method) + " must be a JSON object"};
    }
    return send_request(method, [&](JsonWriter& w) {
      for (const Json::Member& member : params.as_object()) {
        w.key(member.first);
        w.value(member.second);
      }
    });
  }
  // Waits for the answer to request `id`: its `result`, or an Error with
  // the code and message of its `error`. Each id can be waited for once.
  inline Result<Json> wait(int64_t id);
  Result<Json> call(std::string_view method, const Json& params = Json::object()) {
    Result<int64_t> id = send(method, params);
    if (!id.ok()) return id.error();
    return wait(id.value());
  }
  // Asks the host to abandon our own request `id` (it answers kCancelled).
  Result<void> cancel(int64_t id) {
    return notify("cancel", [&](JsonWriter& w) {
      w.key("id");
      w.integer(id);
    });
  }
  // Forgets a request: its answer is discarded when it arrives.
  void forget(int64_t id) {
    std::lock_guard lock(session_->mutex);
    session_->requests.erase(id);
  }

  // --- Host notifications

  // The host sent `cancel`: stop as soon as possible.
  bool cancelled() const { return session_->cancelled.load(std::memory_order_relaxed); }
  // kCancelled if the host asked the tool to stop, else ok: `check_cancelled().value();`
  Result<void> check_cancelled() const {
    if (cancelled()) return Error{kCancelled, "the host cancelled the tool"};
    return {};
  }
  // Reads the host's messages that have already arrived (without blocking)
  // so that cancelled() is current, e.g. in a loop that sends no requests.
  void poll_notifications() { pump(0); }
  // Stateful tools: waits for the next `apply {input}` and returns `input`.
  // kCancelled when the host cancels, kInternalError when stdin ends.
  inline Result<Json> next_apply();
  // Called for every host notification (method, params) on the thread
  // that reads stdin. It must not call this Tool's request methods.
  void set_notification_handler(std::function<void(std::string_view method, const Json& params)> handler) {
    std::lock_guard lock(session_->mutex);
    session_->on_notification = std::move(handler);
  }

  // --- Progress and log lines for whoever runs the tool

  // Reports how far the tool is: `progress` of `total` (when known), with
  // an optional `message` saying what it does now. The caller sees it (a
  // terminal line in the CLI, notifications/progress in MCP). The host
  // passes on at most 20 a second: report when something changed.
  Result<void> progress(double done, std::optional<double> total = std::nullopt,
                        std::string_view message = {}) {
    if (!std::isfinite(done) || done < 0) {
      return Error{kInvalidParams, "progress must be a non-negative number, got " + std::to_string(done)};
    }
    if (total && (!std::isfinite(*total) || *total <= 0)) {
      return Error{kInvalidParams, "total must be a positive number, got " + std::to_string(*total)};
    }
    return notify("progress", [&](JsonWriter& w) {
      w.key("progress");
      w.number(done);
      if (total) {
        w.key("total");
        w.number(*total);
      }
      if (!message.empty()) {
        w.key("message");
        w.string(message);
      }
    });
  }
  // A log line for the caller: `level` is one of debug, info, notice,
  // warning, error, critical, alert, emergency (syslog's severities);
  // `data` any JSON value (null: none). Shown on the CLI's stderr at its
  // --log-level, sent to MCP clients as notifications/message at theirs.
  // The host passes on at most 50 a second (a burst of 100).
  Result<void> log(std::string_view level, std::string_view message, std::string_view logger = {},
                   const Json& data = Json()) {
    static constexpr std::string_view kLevels[] = {"debug", "info",     "notice", "warning",
                                                   "error", "critical", "alert",  "emergency"};
    if (std::find(std::begin(kLevels), std::end(kLevels), level) == std::end(kLevels)) {
      return Error{kInvalidParams, "log level must be one of debug, info, notice, warning, error, critical, "
                                   "alert, emergency; got '" + std::string(level) + "'"};
    }
    return notify("log", [&](JsonWriter& w) {
      w.key("level");
      w.string(level);
      w.key("message");
      w.string(message);
      if (!logger.empty()) {
        w.key("logger");
        w.string(logger);
      }
      if (!data.is_null()) {
        w.key("data");
        w.value(data);
      }
    });
  }

  // --- The end

  // The final `result`: a string (one text block) or an array of content
  // blocks (text_block, resource_block). Then the tool should exit.
  Result<void> result(const Json& content) {
    if (!content.is_string() && !content.is_array()) {
      return Error{kInvalidParams, "result content must be a string or an array of content blocks"};
    }
    return finish("result", [&](JsonWriter& w) {
      w.key("content");
      w.value(content);
    }, false);
  }
  // The final `error`: the tool failed. Then the tool should exit.
  Result<void> error(std::string_view message, const ErrorDetails& details = {}) {
    return finish("error", [&](JsonWriter& w) {
      w.key("message");
      w.string(message);
      if (!details.trace.empty()) optional_strings(w, "trace", details.trace);
      if (details.transient) {
        w.key("transient");
        w.boolean(*details.transient);
      }
    }, true);
  }
  // A `state` notification (stateful tools). `stopped` is final, like
  // result(): tool_main sends nothing after it, and a second final message
  // is an error.
  Result<void> state(const State& update) {
    auto write_params = [&](JsonWriter& w) {
      w.key("type");
      w.string(update.type == State::Type::kRunning   ? "running"
               : update.type == State::Type::kWaiting ? "waiting"
                                                      : "stopped");
      if (update.content) {
        w.key("content");
        w.value(*update.content);
      }
      if (update.question) {
        w.key("question");
        w.value(*update.question);
      }
      if (update.result) {
        w.key("result");
        w.value(*update.result);
      }
    };
    if (update.type == State::Type::kStopped) return finish("state", write_params, false);
    return notify("state", write_params);
  }
  // A final result or error was sent.
  bool finished() const { return session_->finished.load(); }
  bool reported_error() const { return session_->reported_error.load(); }

 private:
  template <typename T>
  friend class Pending;
  friend Result<Tool> connect(const ConnectOptions& options);

  struct Session {
    Session(int in, int out) : in_fd(in), out_fd(out), reader(in) {}
    ~Session() {
      if (owns_out_fd) ::close(out_fd);
    }

    int in_fd;
    int out_fd;
    bool owns_out_fd = false;
    LineReader reader;  // used only by the thread with `reading` set
    Json init;
    std::string name;
    std::vector<std::string> methods;

    std::mutex write_mutex;  // one line at a time on out_fd

    std::mutex mutex;  // everything below
    std::condition_variable changed;
    int waiters = 0;       // threads blocked on `changed`: nobody to notify when 0
    bool reading = false;  // a thread is reading stdin
    bool closed = false;   // stdin ended or failed
    Error closed_error;
    int64_t next_id = 1;
    // Requests sent and not yet waited for, with their answers once they
    // arrived. A node of a finished request is kept for the next one, so
    // that one request at a time allocates none.
    using Requests = std::unordered_map<int64_t, std::optional<Result<Json>>>;
    Requests requests;
    Requests::node_type spare;
    std::deque<Json> applies;
    std::function<void(std::string_view, const Json&)> on_notification;
    std::atomic<bool> cancelled{false};
    std::atomic<bool> finished{false};
    std::atomic<bool> reported_error{false};
  };

  explicit Tool(std::unique_ptr<Session> session) : session_(std::move(session)) {}

  // Parameter writers are passed by template, not as std::function:
  // read_params' captures were too large for std::function's inline
  // buffer, so it allocated on every call.
  struct PathParams {
    std::string_view path;
    void operator()(JsonWriter& w) const {
      w.key("path");
      w.string(path);
    }
  };
  struct ReadParams {
    std::string_view path;
    const ReadOptions& options;
    void operator()(JsonWriter& w) const {
      w.key("path");
      w.string(path);
      optional_uint(w, "offset", options.offset);
      optional_uint(w, "length", options.length);
    }
  };
  static PathParams path_params(std::string_view path) { return {path}; }
  static ReadParams read_params(std::string_view path, const ReadOptions& options) { return {path, options}; }
  static void optional_uint(JsonWriter& w, std::string_view key, const std::optional<uint64_t>& number) {
    if (!number) return;
    w.key(key);
    w.uinteger(*number);
  }
  static void optional_strings(JsonWriter& w, std::string_view key, const std::vector<std::string>& items) {
    if (items.empty()) return;
    w.key(key);
    w.begin_array();
    for (const std::string& item : items) w.string(item);
    w.end_array();
  }
  static void optional_headers(JsonWriter& w, const std::vector<Header>& headers) {
    if (headers.empty()) return;
    w.key("headers");
    w.begin_array();
    for (const Header& header : headers) {
      w.begin_object();
      w.key("name");
      w.string(header.name);
      w.key("value");
      w.string(header.value);
      w.end_object();
    }
    w.end_array();
  }

  template <typename T, typename WriteParams>
  Pending<T> start(std::string_view method, WriteParams&& write_params, typename Pending<T>::Decoder decode) {
    Result<int64_t> id = send_request(method, std::forward<WriteParams>(write_params));
    if (!id.ok()) return Pending<T>(id.error());
    return Pending<T>(this, id.value(), decode);
  }

  // {"jsonrpc":"2.0","id":N,"method":M,"params":{...}}\n, built in one
  // string and written with one write loop.
  template <typename WriteParams>
  Result<int64_t> send_request(std::string_view method, WriteParams&& write_params) {
    int64_t id;
    {
      std::lock_guard lock(session_->mutex);
      id = session_->next_id++;
      Session::Requests::node_type& spare = session_->spare;
      if (spare.empty()) {
        session_->requests.emplace(id, std::nullopt);
      } else {
        spare.key() = id;
        session_->requests.insert(std::move(spare));
      }
    }
    Result<void> written = write_message(id, method, std::forward<WriteParams>(write_params));
    if (!written.ok()) {
      std::lock_guard lock(session_->mutex);
      session_->requests.erase(id);
      return written.error();
    }
    return id;
  }

  template <typename WriteParams>
  Result<void> notify(std::string_view method, WriteParams&& write_params) {
    return write_message(std::nullopt, method, std::forward<WriteParams>(write_params));
  }

  // Builds a request (with an id) or notification line in a buffer kept
  // per thread, so that a request costs no allocation, and writes it.
  static std::string& line_buffer() {
    thread_local std::string line;
    return line;
  }
  template <typename WriteParams>
  Result<void> write_message(std::optional<int64_t> id, std::string_view method, WriteParams&& write_params) {
    std::string& line = line_buffer();
    line.assign("{\"jsonrpc\":\"2.0\",");
    if (id) {
      char digits[24];
      line += "\"id\":";
      line.append(digits, static_cast<size_t>(std::to_chars(digits, digits + sizeof digits, *id).ptr - digits));
      line += ',';
    }
    line += "\"method\":";
    detail::append_json_string(line, method);
    line += ",\"params\":";
    JsonWriter writer(line);
    writer.begin_object();
    write_params(writer);
    writer.end_object();
    line += "}\n";
    Result<void> written = write_line(line);
    if (line.capacity() > (size_t{1} << 20)) std::string().swap(line);  // not kept after a large write
    return written;
  }

  template <typename WriteParams>
  Result<void> finish(std::string_view method, WriteParams&& write_params, bool is_error) {
    if (session_->finished.exchange(true)) {
      return Error{kInvalidRequest, "the tool already sent its final result or error"};
    }
    session_->reported_error = is_error;
    return notify(method, std::forward<WriteParams>(write_params));
  }

  Result<void> write_line(std::string_view line) {
    std::lock_guard lock(session_->write_mutex);
    return detail::write_all(session_->out_fd, line);
  }

  // Reads and dispatches one line from the host (holding `reading`), or,
  // with timeout_ms 0, only what is already available. Returns with the
  // lock held.
  inline void read_one(std::unique_lock<std::mutex>& lock);
  inline void dispatch(std::string_view line, std::unique_lock<std::mutex>& lock);
  inline void pump(int timeout_ms);

  std::unique_ptr<Session> session_;
};

// --- Pending

template <typename T>
Pending<T>& Pending<T>::operator=(Pending&& other) noexcept {
  if (this != &other) {
    if (tool_ != nullptr && id_ != 0) tool_->forget(id_);
    tool_ = std::exchange(other.tool_, nullptr);
    id_ = std::exchange(other.id_, 0);
    decode_ = other.decode_;
    send_error_ = std::move(other.send_error_);
  }
  return *this;
}

template <typename T>
Pending<T>::~Pending() {
  if (tool_ != nullptr && id_ != 0) tool_->forget(id_);
}

template <typename T>
Result<T> Pending<T>::get() {
  if (send_error_) return *send_error_;
  if (tool_ == nullptr) return Error{kInvalidRequest, "this request was already waited for"};
  Result<Json> answer = tool_->wait(id_);
  tool_ = nullptr;
  if (!answer.ok()) return answer.error();
  return decode_(std::move(answer).value());
}

template <typename T>
Result<void> Pending<T>::cancel() {
  if (send_error_) return *send_error_;
  if (tool_ == nullptr) return Error{kInvalidRequest, "this request was already waited for"};
  return tool_->cancel(id_);
}

// --- Reading the host's messages

inline void Tool::dispatch(std::string_view line, std::unique_lock<std::mutex>& lock) {
  // Parsed without the lock: a large answer must not hold up other threads.
  lock.unlock();
  size_t blank = line.find_first_not_of(" \t\r");
  if (blank == std::string_view::npos) {
    lock.lock();
    return;
  }
  Result<Json> parsed = Json::parse(line);
  if (!parsed.ok() || !parsed->is_object()) {
    std::string shown(line.substr(0, 80));
    std::fprintf(stderr, "toolvfs tool: ignoring a line from the host that is not a JSON object: %s\n",
                 shown.c_str());
    lock.lock();
    return;
  }
  Json message = std::move(parsed).value();
  if (const Json* method = message.find("method"); method != nullptr && method->is_string()) {
    const std::string& name = method->as_string();
    const Json& params = message["params"];
    if (name == "cancel") session_->cancelled = true;
    std::function<void(std::string_view, const Json&)> handler;
    {
      std::lock_guard guard(session_->mutex);
      handler = session_->on_notification;
    }
    if (handler) handler(name, params);
    lock.lock();
    if (name == "apply") session_->applies.push_back(params["input"]);
    return;
  }
  const Json& id = message["id"];
  Result<Json> answer = Json();
  if (const Json* error = message.find("error")) {
    answer = Error{static_cast<int>((*error)["code"].as_int(kInternalError)), (*error)["message"].as_string()};
  } else if (Json* result = message.find("result")) {
    answer = std::move(*result);
  }
  lock.lock();
  Session::Requests& requests = session_->requests;
  if (id.is_integer()) {
    if (auto request = requests.find(id.as_int()); request != requests.end()) request->second = std::move(answer);
  } else if (id.is_null() && !answer.ok()) {
    // A line the host could not read (e.g. over its size limit). With one
    // request outstanding it can only have been that one.
    Session::Requests::iterator waiting = requests.end();
    size_t count = 0;
    for (auto request = requests.begin(); request != requests.end(); ++request) {
      if (!request->second.has_value()) {
        waiting = request;
        ++count;
      }
    }
    if (count == 1) {
      waiting->second = std::move(answer);
    } else {
      std::fprintf(stderr, "toolvfs tool: the host rejected a message: %s\n", answer.error().message.c_str());
    }
  }
}

inline void Tool::read_one(std::unique_lock<std::mutex>& lock) {
  session_->reading = true;
  lock.unlock();
  Result<std::optional<std::string_view>> line = session_->reader.next();
  lock.lock();
  if (!line.ok()) {
    session_->closed = true;
    session_->closed_error = line.error();
  } else if (!line.value()) {
    session_->closed = true;
    session_->closed_error = Error{kInternalError, "the host closed the connection (stdin ended)"};
  } else {
    dispatch(*line.value(), lock);
  }
  session_->reading = false;
  // Threads waiting for other answers, or to take over reading. One thread
  // calling alone has no one to wake.
  if (session_->waiters > 0) session_->changed.notify_all();
}

inline void Tool::pump(int timeout_ms) {
  std::unique_lock lock(session_->mutex);
  if (session_->reading || session_->closed) return;
  while (true) {
    if (!session_->reader.has_line()) {
      lock.unlock();
      pollfd readable{session_->in_fd, POLLIN, 0};
      int ready = ::poll(&readable, 1, timeout_ms);
      lock.lock();
      if (ready <= 0 || session_->reading || session_->closed) return;
    }
    read_one(lock);  // data is there; the rest of a partial line may still block briefly
  }
}

inline Result<Json> Tool::wait(int64_t id) {
  std::unique_lock lock(session_->mutex);
  Session::Requests& requests = session_->requests;
  auto request = requests.find(id);
  if (request == requests.end()) {
    return Error{kInvalidRequest, "no request with id " + std::to_string(id) + " is waiting for an answer"};
  }
  // Takes the request out, keeping its node for the next request.
  auto finish = [&](Result<Json> outcome) {
    Session::Requests::node_type node = requests.extract(request);
    if (session_->spare.empty()) {
      node.mapped().reset();
      session_->spare = std::move(node);
    }
    return outcome;
  };
  while (true) {
    if (request->second.has_value()) return finish(std::move(*request->second));
    if (session_->closed) return finish(session_->closed_error);
    if (session_->reading) {
      ++session_->waiters;
      session_->changed.wait(lock);
      --session_->waiters;
    } else {
      read_one(lock);
    }
    // Unlocked meanwhile: other threads' requests may have rehashed the map
    // (or forgotten this one).
    request = requests.find(id);
    if (request == requests.end()) return Error{kInvalidRequest, "request " + std::to_string(id) + " was forgotten"};
  }
}

inline Result<Json> Tool::next_apply() {
  std::unique_lock lock(session_->mutex);
  while (true) {
    if (!session_->applies.empty()) {
      Json input = std::move(session_->applies.front());
      session_->applies.pop_front();
      return input;
    }
    if (cancelled()) return Error{kCancelled, "the host cancelled the tool"};
    if (session_->closed) return session_->closed_error;
    if (session_->reading) {
      ++session_->waiters;
      session_->changed.wait(lock);
      --session_->waiters;
      continue;
    }
    read_one(lock);
  }
}

// Reads the `init` notification and returns the connection. Fails with
// kInvalidRequest if stdin is a terminal or ends before init arrives (the
// program was not started by toolvfs).
inline Result<Tool> connect(const ConnectOptions& options) {
  if (::isatty(options.in_fd) == 1) {
    return Error{kInvalidRequest,
                 "stdin is a terminal: this is a toolvfs vfs tool; run it with `toolvfs exec -- PROGRAM` or "
                 "configure it with runtime = \"vfs\""};
  }
  int out_fd = options.out_fd;
  bool owns_out_fd = false;
  if (options.redirect_stdout && out_fd == STDOUT_FILENO) {
    std::fflush(stdout);
    int copy = ::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
    if (copy >= 0 && ::dup2(STDERR_FILENO, STDOUT_FILENO) >= 0) {
      out_fd = copy;
      owns_out_fd = true;
    } else if (copy >= 0) {
      ::close(copy);
    }
  }
  auto session = std::make_unique<Tool::Session>(options.in_fd, out_fd);
  session->owns_out_fd = owns_out_fd;
  while (true) {
    Result<std::optional<std::string_view>> line = session->reader.next();
    if (!line.ok()) return line.error();
    if (!line.value()) {
      return Error{kInvalidRequest,
                   "stdin ended before the host's init message: run this tool with toolvfs (runtime = \"vfs\")"};
    }
    std::string_view text = *line.value();
    if (text.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    Result<Json> message = Json::parse(text);
    if (!message.ok()) return Error{kParseError, "the first message from the host is not JSON: " + message.error().message};
    if ((*message)["method"].as_string() == "cancel") {
      session->cancelled = true;
      continue;
    }
    if ((*message)["method"].as_string() != "init") {
      return Error{kInvalidRequest, "expected the host's init message first, got: " + std::string(text.substr(0, 80))};
    }
    Json* params = message->find("params");
    session->init = params != nullptr ? std::move(*params) : Json::object();
    break;
  }
  session->name = session->init["tool"]["name"].as_string();
  for (const Json& method : session->init["host"]["methods"].as_array()) {
    if (method.is_string()) session->methods.push_back(method.as_string());
  }
  return Tool(std::move(session));
}

// Runs a tool's body: connects, calls fn(tool), and reports the outcome.
// What fn returns (a string, a Json array of content blocks, or nothing)
// becomes the `result`, unless fn already sent a result or error itself.
// A toolvfs::Exception (from Result::value()) or any std::exception
// becomes the `error` notification. Returns the process exit code: 0 after
// a result, 1 after an error, 2 if the host could not be reached.
template <typename Fn>
int tool_main(Fn&& fn, const ConnectOptions& options = {}) {
  Result<Tool> connected = connect(options);
  if (!connected.ok()) {
    std::fprintf(stderr, "toolvfs tool: %s\n", connected.error().message.c_str());
    return 2;
  }
  Tool& tool = connected.value();
  auto fail = [&](const std::string& message) {
    if (!tool.finished()) (void)tool.error(message);
    return 1;
  };
  try {
    if constexpr (std::is_void_v<std::invoke_result_t<Fn, Tool&>>) {
      fn(tool);
      if (!tool.finished()) (void)tool.result("");
    } else {
      Json content = fn(tool);
      if (!tool.finished()) {
        if (Result<void> sent = tool.result(content); !sent.ok()) return fail(sent.error().message);
      }
    }
  } catch (const Exception& exception) {
    return fail(exception.error().message);
  } catch (const std::exception& exception) {
    return fail(exception.what());
  }
  return tool.reported_error() ? 1 : 0;
}

}  // namespace sdk
}  // namespace toolvfs
