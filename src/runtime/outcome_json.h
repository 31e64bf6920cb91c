// Reading the JSON a tool sends as its outcome, shared by the runtimes whose
// tools speak it (vfs `result`/`error` notifications, stdio stdout): content
// blocks (RFD 058) and tool errors (RFD 009). Internal to src/runtime.
#pragma once

#include <simdjson.h>

#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "runtime/tool_runtime.h"

namespace toolvfs {

// Lines of the stderr tail put in the trace of a failed run.
inline constexpr size_t kTraceLines = 20;

// The `content` member of `params`: absent or null (no blocks), a string
// (one text block) or an array of blocks (text, resource; unknown types kept
// with "[TYPE block]" as their text). InvalidArgument naming the bad block.
Result<std::vector<ContentBlock>> ParseContent(simdjson::dom::element params);

// `{message, trace?, transient?}`; trace may be a string or strings. A
// missing message gets a stand-in.
ToolError ParseToolError(simdjson::dom::element params);

// The last `count` lines of `text` (trailing newlines ignored).
std::vector<std::string> LastLines(std::string_view text, size_t count);

// A failed run: is_error, `failure`, the message and the stderr tail's last
// lines as the trace.
Outcome FailedOutcome(StatusCode failure, std::string message, const std::string& stderr_tail);

// A cancelled run (kind kCancelled, is_error): the message, no trace.
Outcome CancelledOutcome(std::string message, std::string stderr_tail = {});

}  // namespace toolvfs
