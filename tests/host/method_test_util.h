// Small helpers shared by the tests of the method handlers.
#pragma once

#include <rapidjson/stringbuffer.h>

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "host/access_gate.h"
#include "host/methods.h"
#include "project/project_files.h"
#include "protocol/json_writer.h"
#include "protocol/jsonrpc.h"

namespace toolvfs {

// `text` as a JSON string literal, for building request lines.
inline std::string Json(std::string_view text) {
  rapidjson::StringBuffer buffer;
  AppendJsonString(buffer, text);
  return JsonText(buffer);
}

// Every byte value once, 0 to 255: binary content for base64 round trips.
inline std::string AllBytes() {
  std::string bytes;
  for (int i = 0; i < 256; ++i) bytes += static_cast<char>(i);
  return bytes;
}

// Calls `method` with the params object `params_json` (none when empty) on
// `project` under `gate`, as the session loop would on a worker, and
// returns the answer line; "<...>" says why there is none.
// `limits` sets the answer limit and the memory budget (MethodContext).
struct AnswerLimits {
  uint64_t max_answer_bytes = std::numeric_limits<uint64_t>::max();
  MemoryBudget* answer_memory = nullptr;
};

inline std::string CallMethod(ProjectFiles& project, AccessGate& gate, std::string_view method,
                              std::string_view params_json, const AnswerLimits& limits = {}) {
  const MethodSpec* spec = FindMethod(method);
  if (spec == nullptr) return "<no method " + std::string(method) + ">";
  std::string line = R"({"jsonrpc":"2.0","id":"req-7","method":)" + Json(method);
  if (!params_json.empty()) line += ",\"params\":" + std::string(params_json);
  line += "}";
  MessageParser parser;
  ParsedLine request = parser.Parse(line);
  if (!request.is_message()) return "<request not parsed: " + request.error().message + ">";
  MethodContext context{project, gate};
  context.max_answer_bytes = limits.max_answer_bytes;
  context.answer_memory = limits.answer_memory;
  RequestScope scope(request.message().id(), spec->name, /*may_block=*/true);
  return std::string(spec->handler(request.message(), context, scope).bytes());
}

}  // namespace toolvfs
