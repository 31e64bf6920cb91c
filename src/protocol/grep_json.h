// The JSON form of a grep result, shared by `toolvfs grep --json` and the
// protocol's fs.grep so the two can never drift apart:
//
//   {"matches":[{"path":"src/a.py","lines":[
//       {"line_number":3,"content":"def main():","is_match":true}]}],
//    "truncated":false}
//
// and, when a limit cut the result, "truncated":true,"truncated_by":"max_matches".
//
// Strings are written as they are (GrepResult holds valid UTF-8); control
// characters are escaped by the writer.
#pragma once

#include <string>

#include "project/project_files.h"
#include "protocol/json_writer.h"

namespace toolvfs {

// Writes `result` as one JSON object value into `writer`, e.g. as the
// "result" member of a JSON-RPC response.
void WriteGrepResult(const GrepResult& result, JsonWriter& writer);

// The same object written a file at a time, for a search that hands its
// files over as it finds them (GrepOptions::file_sink): the constructor
// writes `{"matches":[`, each WriteFile one element, Finish the rest. A
// truncated result also says which limit cut it: "truncated_by" is
// "max_matches" or "max_result_bytes" (GrepTruncationName).
class GrepJsonStream {
 public:
  explicit GrepJsonStream(JsonWriter& writer);
  void WriteFile(const GrepFileMatches& file);
  // Writes the files `result` holds, if any, then closes the object.
  void Finish(const GrepResult& result);

 private:
  JsonWriter& writer_;
};

// `result` as a compact JSON document, without a trailing newline.
std::string GrepResultToJson(const GrepResult& result);

}  // namespace toolvfs
