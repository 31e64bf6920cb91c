// json_bench: which JSON library the VFS protocol codec uses, by
// measurement (issue 3; docs/protocol.md "JSON library").
//
// For each candidate available on Debian 12 (simdjson, RapidJSON,
// nlohmann/json), on the messages the protocol moves most bytes in:
//   parse/large  an fs.write request with 1 MiB of text content
//   parse/small  an fs.read request of a short path
//   write/large  an fs.read response with 1 MiB of text content
//   */large-dense  the same with text that has more to escape
// plus the toolvfs codec itself (MessageParser, SerializeResult, base64)
// and, as the reference the round trip is judged against, 1 MiB through a
// pipe between two threads. The content is source-like text (see
// MakeContent). Every parser validates what it parses, UTF-8 included, as
// the host must; simdjson's on-demand API is listed for comparison only:
// it validates only what it is asked for, and a protocol error must be
// found wherever it is in the line.
//
//   json_bench [--benchmark_repetitions=5] [--benchmark_filter=REGEX]
//
// Prints Google Benchmark's table, then a summary in MB/s (10^6 bytes of
// content per CPU second), microseconds per message and the multiple of the
// pipe's throughput; with repetitions, of the medians.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <simdjson.h>

#include "protocol/base64.h"
#include "protocol/json_writer.h"
#include "protocol/jsonrpc.h"
#include "protocol/ndjson.h"
#include "source_text.h"

namespace toolvfs {
namespace {

constexpr size_t kContentBytes = size_t{1} << 20;

// Source-like text (source_text.h). The typical profile has one byte to
// escape in 31; this dense one (short lines full of string literals and
// backslashes) one in 6, to show how the figures depend on it.
const char* const kDenseLines[] = {
    "  printf(\"%s: %zu\\n\", name, n);", "\tpath = \"C:\\\\Users\\\\d\\u00e9v\";",
    "  x = y ? \"<\" : \">\";", "}", "  return Parse(\"caf\xC3\xA9\", \"\xE6\x97\xA5\");",
    "", "  s += '\\t';", "  std::vector<int> values = {1, 2, 3};"};

const std::string& Content(bool dense = false) {
  static const std::string typical = bench::MakeSourceText(kContentBytes, bench::kTypicalSourceLines);
  static const std::string dense_content = bench::MakeSourceText(kContentBytes, kDenseLines);
  return dense ? dense_content : typical;
}

std::string JsonQuoted(const std::string& text) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  writer.String(text.data(), static_cast<rapidjson::SizeType>(text.size()));
  return JsonText(buffer);
}

std::string WriteRequest(const std::string& content) {
  return R"({"jsonrpc":"2.0","id":7,"method":"fs.write","params":{"path":"src/a.txt","content":)" +
         JsonQuoted(content) + "}}";
}

const std::string& SmallRequest() {
  static const std::string line =
      R"({"jsonrpc":"2.0","id":7,"method":"fs.read","params":{"path":"src/main.rs"}})";
  return line;
}

enum class Shape { kLarge, kLargeDense, kSmall };

const std::string& Input(Shape shape) {
  static const std::string large = WriteRequest(Content());
  static const std::string large_dense = WriteRequest(Content(true));
  switch (shape) {
    case Shape::kLarge: return large;
    case Shape::kLargeDense: return large_dense;
    case Shape::kSmall: break;
  }
  return SmallRequest();
}

// ---- Parsing --------------------------------------------------------------
// Each parser reads method, path and content, as a handler would.

void ParseSimdjsonDom(benchmark::State& state, Shape shape) {
  const bool large = shape != Shape::kSmall;
  simdjson::padded_string input(Input(shape));
  simdjson::dom::parser parser;
  size_t checksum = 0;
  for (auto _ : state) {
    simdjson::dom::element root;
    if (parser.parse(input).get(root)) state.SkipWithError("parse failed");
    std::string_view method, path;
    simdjson::dom::object params;
    if (root["method"].get(method) || root["params"].get(params) || params["path"].get(path)) {
      state.SkipWithError("bad shape");
    }
    if (large) {
      std::string_view content;
      if (params["content"].get(content)) state.SkipWithError("no content");
      checksum += content.size();
    }
    checksum += method.size() + path.size();
  }
  benchmark::DoNotOptimize(checksum);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * input.size()));
}

// The codec's ownership model: each message gets its own document, so it
// outlives the next parse.
void ParseSimdjsonDomOwnedDocument(benchmark::State& state, Shape shape) {
  const bool large = shape != Shape::kSmall;
  simdjson::padded_string input(Input(shape));
  simdjson::dom::parser parser;
  size_t checksum = 0;
  for (auto _ : state) {
    auto document = std::make_unique<simdjson::dom::document>();
    simdjson::dom::element root;
    if (parser.parse_into_document(*document, input.data(), input.size(), false).get(root)) {
      state.SkipWithError("parse failed");
    }
    std::string_view method;
    if (root["method"].get(method)) state.SkipWithError("bad shape");
    checksum += method.size();
    if (large) {
      std::string_view content;
      if (root["params"]["content"].get(content)) state.SkipWithError("no content");
      checksum += content.size();
    }
  }
  benchmark::DoNotOptimize(checksum);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * input.size()));
}

void ParseSimdjsonOnDemand(benchmark::State& state, Shape shape) {
  const bool large = shape != Shape::kSmall;
  simdjson::padded_string input(Input(shape));
  simdjson::ondemand::parser parser;
  size_t checksum = 0;
  for (auto _ : state) {
    simdjson::ondemand::document document;
    if (parser.iterate(input).get(document)) state.SkipWithError("parse failed");
    std::string_view method, path, content;
    if (document["method"].get_string().get(method)) state.SkipWithError("bad shape");
    simdjson::ondemand::object params;
    if (document["params"].get_object().get(params)) state.SkipWithError("bad shape");
    if (params["path"].get_string().get(path)) state.SkipWithError("bad shape");
    if (large && params["content"].get_string().get(content)) state.SkipWithError("no content");
    checksum += method.size() + path.size() + content.size();
  }
  benchmark::DoNotOptimize(checksum);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * input.size()));
}

template <unsigned kFlags>
void ParseRapidJson(benchmark::State& state, Shape shape) {
  const bool large = shape != Shape::kSmall;
  const std::string& input = Input(shape);
  size_t checksum = 0;
  for (auto _ : state) {
    rapidjson::Document document;
    document.Parse<kFlags>(input.data(), input.size());
    if (document.HasParseError() || !document.IsObject()) state.SkipWithError("parse failed");
    const rapidjson::Value& params = document["params"];
    checksum += document["method"].GetStringLength() + params["path"].GetStringLength();
    if (large) checksum += params["content"].GetStringLength();
  }
  benchmark::DoNotOptimize(checksum);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * input.size()));
}

// In situ: strings are unescaped in the input buffer (a copy per message,
// included in the time, as the line buffer cannot be modified in place
// without giving up the framer's zero-copy reads).
void ParseRapidJsonInsitu(benchmark::State& state, Shape shape) {
  const bool large = shape != Shape::kSmall;
  const std::string& input = Input(shape);
  std::string copy;
  size_t checksum = 0;
  for (auto _ : state) {
    copy = input;
    rapidjson::Document document;
    document.ParseInsitu<rapidjson::kParseValidateEncodingFlag>(copy.data());
    if (document.HasParseError() || !document.IsObject()) state.SkipWithError("parse failed");
    const rapidjson::Value& params = document["params"];
    checksum += document["method"].GetStringLength() + params["path"].GetStringLength();
    if (large) checksum += params["content"].GetStringLength();
  }
  benchmark::DoNotOptimize(checksum);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * input.size()));
}

void ParseNlohmann(benchmark::State& state, Shape shape) {
  const bool large = shape != Shape::kSmall;
  const std::string& input = Input(shape);
  size_t checksum = 0;
  for (auto _ : state) {
    // No exceptions: a parse error gives a "discarded" value.
    nlohmann::json document = nlohmann::json::parse(input, nullptr, false);
    if (document.is_discarded()) state.SkipWithError("parse failed");
    const nlohmann::json& params = document["params"];
    checksum += document["method"].get_ref<const std::string&>().size() +
                params["path"].get_ref<const std::string&>().size();
    if (large) checksum += params["content"].get_ref<const std::string&>().size();
  }
  benchmark::DoNotOptimize(checksum);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * input.size()));
}

void ParseToolvfsCodec(benchmark::State& state, Shape shape) {
  const bool large = shape != Shape::kSmall;
  // As the host does: the line comes from the framer, which pads it.
  LineSplitter splitter(kDefaultMaxLineBytes);
  splitter.Append(Input(shape) + "\n");
  std::string_view line = splitter.Next()->line;
  MessageParser parser;
  size_t checksum = 0;
  for (auto _ : state) {
    ParsedLine parsed = parser.ParsePadded(line);
    if (!parsed.is_message()) state.SkipWithError("parse failed");
    const Params& params = parsed.message().params();
    Result<std::string_view> path = params.String("path");
    checksum += parsed.message().method().size() + (path.ok() ? path->size() : 0);
    if (large) {
      Result<std::string_view> content = params.String("content");
      checksum += content.ok() ? content->size() : 0;
    }
  }
  benchmark::DoNotOptimize(checksum);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * line.size()));
}

// ---- Writing --------------------------------------------------------------
// {"jsonrpc":"2.0","id":7,"result":{"content":"<1 MiB>","size":N}}


template <typename Writer>
void WriteReadResponse(Writer& writer, const std::string& content) {
  writer.StartObject();
  writer.Key("jsonrpc", 7);
  writer.String("2.0", 3);
  writer.Key("id", 2);
  writer.Int(7);
  writer.Key("result", 6);
  writer.StartObject();
  writer.Key("content", 7);
  writer.String(content.data(), static_cast<rapidjson::SizeType>(content.size()));
  writer.Key("size", 4);
  writer.Uint64(content.size());
  writer.EndObject();
  writer.EndObject();
}

// RapidJSON's own writer (not the toolvfs JsonWriter, whose String() is
// ours).
void WriteRapidJson(benchmark::State& state, bool dense) {
  const std::string& content = Content(dense);
  size_t produced = 0;
  for (auto _ : state) {
    rapidjson::StringBuffer buffer(nullptr, content.size() + content.size() / 8 + 128);
    rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
    WriteReadResponse(writer, content);
    produced = buffer.GetSize();
    benchmark::DoNotOptimize(buffer.GetString());
  }
  state.counters["out_bytes"] = static_cast<double>(produced);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * content.size()));
}

void WriteNlohmann(benchmark::State& state, bool dense) {
  const std::string& content = Content(dense);
  for (auto _ : state) {
    nlohmann::json response = {{"jsonrpc", "2.0"},
                               {"id", 7},
                               {"result", {{"content", content}, {"size", content.size()}}}};
    std::string text = response.dump();
    benchmark::DoNotOptimize(text.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * content.size()));
}

void WriteToolvfsCodec(benchmark::State& state, bool dense) {
  const std::string& content = Content(dense);
  RequestId id(int64_t{7});
  for (auto _ : state) {
    WireMessage message = SerializeResult(
        id,
        [&](JsonWriter& writer) {
          writer.StartObject();
          WriteJsonKey(writer, "content");
          WriteJsonString(writer, content);
          WriteJsonKey(writer, "size");
          writer.Uint64(content.size());
          writer.EndObject();
        },
        content.size());
    benchmark::DoNotOptimize(message.bytes().data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * content.size()));
}

// ---- Base64 -----------------------------------------------------------------

void Base64EncodeBench(benchmark::State& state) {
  const std::string& content = Content();
  for (auto _ : state) {
    std::string encoded = Base64Encode(content);
    benchmark::DoNotOptimize(encoded.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * content.size()));
}

void Base64DecodeBench(benchmark::State& state) {
  const std::string encoded = Base64Encode(Content());
  for (auto _ : state) {
    Result<std::string> decoded = Base64Decode(encoded);
    if (!decoded.ok()) state.SkipWithError("decode failed");
    benchmark::DoNotOptimize(decoded->data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * Content().size()));
}

// ---- Framing and the pipe reference ------------------------------------------

void FrameLines(benchmark::State& state) {
  // The 1 MiB request arriving in 64 KiB reads, as from a pipe.
  std::string input = Input(Shape::kLarge) + "\n";
  LineSplitter splitter;
  size_t lines = 0;
  for (auto _ : state) {
    std::string_view rest = input;
    while (!rest.empty()) {
      size_t piece = std::min(rest.size(), LineSplitter::kDefaultReadChunk);
      std::span<char> space = splitter.PrepareAppend(piece);
      std::memcpy(space.data(), rest.data(), piece);
      splitter.CommitAppend(piece);
      rest.remove_prefix(piece);
      while (splitter.Next()) ++lines;
    }
  }
  benchmark::DoNotOptimize(lines);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * input.size()));
}

// 1 MiB per iteration from one thread to another through a pipe with the
// default (64 KiB) capacity, in 64 KiB reads: what the two processes of a
// round trip pay at least.
void PipeReference(benchmark::State& state) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    state.SkipWithError("pipe2 failed");
    return;
  }
  const std::string& payload = Content();
  std::thread reader([&] {
    std::vector<char> buffer(size_t{64} << 10);
    while (read(fds[0], buffer.data(), buffer.size()) > 0) {
    }
  });
  for (auto _ : state) {
    size_t written = 0;
    while (written < payload.size()) {
      ssize_t n = write(fds[1], payload.data() + written, payload.size() - written);
      if (n <= 0) break;
      written += static_cast<size_t>(n);
    }
  }
  close(fds[1]);
  reader.join();
  close(fds[0]);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * payload.size()));
}

// ---- Summary -------------------------------------------------------------------

class SummaryReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& run : runs) {
      auto bytes = run.counters.find("bytes_per_second");
      if (run.error_occurred || bytes == run.counters.end()) continue;
      // With --benchmark_repetitions, summarize the medians only.
      if (run.run_type == Run::RT_Aggregate && run.aggregate_name != "median") continue;
      if (run.run_type == Run::RT_Iteration && run.repetitions > 1) continue;
      // The rate is per CPU second (per wall second for the pipe, which
      // waits on its reader); time per message likewise.
      bool real_time = run.benchmark_name().find("/real_time") != std::string::npos;
      double seconds_per_iteration =
          (real_time ? run.GetAdjustedRealTime() : run.GetAdjustedCPUTime()) /
          benchmark::GetTimeUnitMultiplier(run.time_unit);
      std::string name = run.benchmark_name();
      if (run.run_type == Run::RT_Aggregate) name.resize(name.size() - std::strlen("_median"));
      rows_.push_back({name, bytes->second.value / 1e6,
                       seconds_per_iteration * 1e6});
    }
  }

  void Finalize() override {
    ConsoleReporter::Finalize();
    double pipe = 0;
    for (const Row& row : rows_) {
      if (row.name.rfind("reference/pipe", 0) == 0) pipe = row.mb_per_s;
    }
    std::printf("\n%-44s %12s %12s %10s\n", "summary", "MB/s", "us/message", "x pipe");
    for (const Row& row : rows_) {
      if (pipe > 0) {
        std::printf("%-44s %12.0f %12.2f %10.2f\n", row.name.c_str(), row.mb_per_s,
                    row.us_per_iteration, row.mb_per_s / pipe);
      } else {
        std::printf("%-44s %12.0f %12.2f %10s\n", row.name.c_str(), row.mb_per_s,
                    row.us_per_iteration, "-");
      }
    }
  }

 private:
  struct Row {
    std::string name;
    double mb_per_s;
    double us_per_iteration;
  };
  std::vector<Row> rows_;
};

void PrintContentStats() {
  std::printf("simdjson %s, %s kernel (runtime dispatch, DOM API)\n",
              SIMDJSON_STRINGIFY(SIMDJSON_VERSION),
              simdjson::get_active_implementation()->name().c_str());
  for (bool dense : {false, true}) {
    const std::string& content = Content(dense);
    size_t escapes = 0;
    size_t non_ascii = 0;
    for (char c : content) {
      auto byte = static_cast<uint8_t>(c);
      escapes += byte < 0x20 || c == '"' || c == '\\';
      non_ascii += byte >= 0x80;
    }
    std::printf("content %-8s %zu bytes, one byte in %.0f escaped, %.1f%% non-ASCII bytes\n",
                dense ? "dense:" : "typical:", content.size(),
                static_cast<double>(content.size()) / static_cast<double>(escapes),
                100.0 * static_cast<double>(non_ascii) / static_cast<double>(content.size()));
  }
}

void Register() {
  using benchmark::RegisterBenchmark;
  constexpr unsigned kValidate = rapidjson::kParseValidateEncodingFlag;
  for (Shape shape : {Shape::kLarge, Shape::kSmall}) {
    std::string prefix = shape == Shape::kLarge ? "parse/large/" : "parse/small/";
    RegisterBenchmark((prefix + "simdjson-dom").c_str(), ParseSimdjsonDom, shape);
    RegisterBenchmark((prefix + "simdjson-dom-owned-document").c_str(),
                      ParseSimdjsonDomOwnedDocument, shape);
    RegisterBenchmark((prefix + "simdjson-ondemand").c_str(), ParseSimdjsonOnDemand, shape);
    RegisterBenchmark((prefix + "rapidjson-validate-utf8").c_str(), ParseRapidJson<kValidate>,
                      shape);
    RegisterBenchmark((prefix + "rapidjson-no-utf8-check").c_str(),
                      ParseRapidJson<rapidjson::kParseDefaultFlags>, shape);
    RegisterBenchmark((prefix + "rapidjson-insitu-validate").c_str(), ParseRapidJsonInsitu,
                      shape);
    RegisterBenchmark((prefix + "nlohmann").c_str(), ParseNlohmann, shape);
    RegisterBenchmark((prefix + "toolvfs-codec").c_str(), ParseToolvfsCodec, shape);
  }
  RegisterBenchmark("parse/large-dense/simdjson-dom", ParseSimdjsonDom, Shape::kLargeDense);
  RegisterBenchmark("parse/large-dense/toolvfs-codec", ParseToolvfsCodec, Shape::kLargeDense);
  RegisterBenchmark("write/large/rapidjson", WriteRapidJson, false);
  RegisterBenchmark("write/large/nlohmann", WriteNlohmann, false);
  RegisterBenchmark("write/large/toolvfs-codec", WriteToolvfsCodec, false);
  RegisterBenchmark("write/large-dense/rapidjson", WriteRapidJson, true);
  RegisterBenchmark("write/large-dense/toolvfs-codec", WriteToolvfsCodec, true);
  RegisterBenchmark("base64/encode", Base64EncodeBench);
  RegisterBenchmark("base64/decode", Base64DecodeBench);
  RegisterBenchmark("framing/1MiB-line-in-64KiB-reads", FrameLines);
  RegisterBenchmark("reference/pipe-1MiB", PipeReference)->UseRealTime();
}

}  // namespace
}  // namespace toolvfs

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  toolvfs::Register();
  toolvfs::PrintContentStats();
  toolvfs::SummaryReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}
