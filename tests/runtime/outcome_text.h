// What a tool run answered, as one string for test assertions.
#pragma once

#include <string>

#include "runtime/tool_runtime.h"

namespace toolvfs {

// The text of a completed outcome's content blocks, or "ERROR: <message>"
// for an error outcome.
inline std::string OutcomeText(const Outcome& outcome) {
  if (outcome.is_error) return "ERROR: " + (outcome.error ? outcome.error->message : "");
  std::string text;
  for (const ContentBlock& block : outcome.content) text += block.text;
  return text;
}

}  // namespace toolvfs
