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

GrepJsonStream::GrepJsonStream(JsonWriter& writer) : writer_(writer) {
  writer_.StartObject();
  WriteKey(writer_, "matches");
  writer_.StartArray();
}

void GrepJsonStream::WriteFile(const GrepFileMatches& file) {
  writer_.StartObject();
  WriteKey(writer_, "path");
  WriteString(writer_, file.path);
  WriteKey(writer_, "lines");
  writer_.StartArray();
  for (const GrepLine& line : file.lines) {
    writer_.StartObject();
    WriteKey(writer_, "line_number");
    writer_.Uint64(line.line_number);
    WriteKey(writer_, "content");
    WriteString(writer_, line.content);
    WriteKey(writer_, "is_match");
    writer_.Bool(line.is_match);
    writer_.EndObject();
  }
  writer_.EndArray();
  writer_.EndObject();
}

void GrepJsonStream::Finish(const GrepResult& result) {
  for (const GrepFileMatches& file : result.matches) WriteFile(file);
  writer_.EndArray();
  WriteKey(writer_, "truncated");
  writer_.Bool(result.truncated);
  if (result.truncated) {
    WriteKey(writer_, "truncated_by");
    WriteString(writer_, GrepTruncationName(result.truncated_by));
  }
  writer_.EndObject();
}

void WriteGrepResult(const GrepResult& result, JsonWriter& writer) {
  GrepJsonStream(writer).Finish(result);
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
  return JsonText(buffer);
}

}  // namespace toolvfs
