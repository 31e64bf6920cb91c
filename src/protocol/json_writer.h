// The JSON writer every wire format of toolvfs is written with.
//
// RapidJSON's Writer into a StringBuffer for structure, numbers and keys,
// with strings escaped by our own escaper (String below, an SSSE3 shuffle
// per 8 bytes without data-dependent branches, 4.6 GB/s): RapidJSON's
// String() reserves six output bytes per input byte up front and copies
// byte by byte after each escape (0.8 GB/s), which made a 1 MiB fs.read
// answer slower to write than to send (docs/protocol.md, "JSON library").
// The output is byte for byte what RapidJSON writes: '"', '\' and control
// characters escaped (\b \t \n \f \r, else \u00XX), everything else as is.
//
// Strings must be valid UTF-8 (callers check, as the stores do): bytes are
// copied, not validated.
#pragma once

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cstddef>
#include <string>
#include <string_view>

namespace toolvfs {

class JsonWriter : public rapidjson::Writer<rapidjson::StringBuffer> {
 public:
  explicit JsonWriter(rapidjson::StringBuffer& buffer) : Writer(buffer) {}

  // A string value (also hides Writer::String, so every string written
  // through a JsonWriter takes the fast path).
  bool String(std::string_view text);
  bool String(const char* text, rapidjson::SizeType length, bool copy = false) {
    static_cast<void>(copy);
    return String(std::string_view(text, length));
  }
};

// The JSON text written into `buffer` so far, as a view (valid until the
// buffer is written to again or destroyed) or as a copy. The buffer holds
// exactly the text: GetString()'s terminating NUL is not part of it.
inline std::string_view JsonView(const rapidjson::StringBuffer& buffer) {
  return {buffer.GetString(), buffer.GetSize()};
}
inline std::string JsonText(const rapidjson::StringBuffer& buffer) { return std::string(JsonView(buffer)); }

// Appends `text` as a quoted, escaped JSON string to `buffer`.
void AppendJsonString(rapidjson::StringBuffer& buffer, std::string_view text);

inline void WriteJsonString(JsonWriter& writer, std::string_view text) { writer.String(text); }

// An object key given as a literal, so the writer can skip strlen.
template <size_t N>
void WriteJsonKey(JsonWriter& writer, const char (&key)[N]) {
  writer.Key(key, N - 1);
}

inline void WriteJsonKey(JsonWriter& writer, std::string_view key) {
  writer.Key(key.data(), static_cast<rapidjson::SizeType>(key.size()));
}

}  // namespace toolvfs
