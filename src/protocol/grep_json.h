// The JSON form of a grep result, shared by `toolvfs grep --json` and the
// protocol's fs.grep so the two can never drift apart:
//
//   {"matches":[{"path":"src/a.py","lines":[
//       {"line_number":3,"content":"def main():","is_match":true}]}],
//    "truncated":false}
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

// `result` as a compact JSON document, without a trailing newline.
std::string GrepResultToJson(const GrepResult& result);

}  // namespace toolvfs
