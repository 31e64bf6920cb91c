#include "protocol/grep_json.h"

#include <string_view>

namespace toolvfs {
namespace {

void WriteString(JsonWriter& writer, std::string_view text) {
  writer.String(text.data(), static_cast<rapidjson::SizeType>(text.size()));
}

// Key names as literals so the writer can skip strlen.
template <size_t N>
void WriteKey(JsonWriter& writer, const char (&key)[N]) {
  writer.Key(key, N - 1);
}

}  // namespace

void WriteGrepResult(const GrepResult& result, JsonWriter& writer) {
  writer.StartObject();
  WriteKey(writer, "matches");
  writer.StartArray();
  for (const GrepFileMatches& file : result.matches) {
    writer.StartObject();
    WriteKey(writer, "path");
    WriteString(writer, file.path);
    WriteKey(writer, "lines");
    writer.StartArray();
    for (const GrepLine& line : file.lines) {
      writer.StartObject();
      WriteKey(writer, "line_number");
      writer.Uint64(line.line_number);
      WriteKey(writer, "content");
      WriteString(writer, line.content);
      WriteKey(writer, "is_match");
      writer.Bool(line.is_match);
      writer.EndObject();
    }
    writer.EndArray();
    writer.EndObject();
  }
  writer.EndArray();
  WriteKey(writer, "truncated");
  writer.Bool(result.truncated);
  writer.EndObject();
}

std::string GrepResultToJson(const GrepResult& result) {
  // Presize: the content dominates, plus ~60 bytes of keys per line.
  size_t estimate = 40;
  for (const GrepFileMatches& file : result.matches) {
    estimate += file.path.size() + 30;
    for (const GrepLine& line : file.lines) estimate += line.content.size() + 64;
  }
  rapidjson::StringBuffer buffer(nullptr, estimate);
  JsonWriter writer(buffer);
  WriteGrepResult(result, writer);
  return std::string(buffer.GetString(), buffer.GetSize());
}

}  // namespace toolvfs
