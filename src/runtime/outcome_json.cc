#include "runtime/outcome_json.h"

#include <utility>

namespace toolvfs {
namespace {

namespace dom = simdjson::dom;

std::string ToJson(const dom::element& element) { return simdjson::minify(element); }

std::string TextOf(dom::element element, std::string_view key) {
  std::string_view text;
  if (element[key].get_string().get(text) == simdjson::SUCCESS) return std::string(text);
  return {};
}

// One block of a `result` content array (RFD 058). Unknown types are kept
// as they came, for front ends that know them.
Result<ContentBlock> ParseBlock(dom::element element, size_t index) {
  std::string_view type;
  if (!element.is_object() || element["type"].get_string().get(type) != simdjson::SUCCESS) {
    return Status(StatusCode::kInvalidArgument,
                  "content[" + std::to_string(index) + "] is not an object with a string 'type'");
  }
  ContentBlock block;
  block.type = std::string(type);
  block.json = ToJson(element);
  if (type == "text") {
    std::string_view text;
    if (element["text"].get_string().get(text) != simdjson::SUCCESS) {
      return Status(StatusCode::kInvalidArgument,
                    "content[" + std::to_string(index) + "] is a text block without a string 'text'");
    }
    block.text = std::string(text);
  } else if (type == "resource") {
    dom::element resource;
    if (element["resource"].get(resource) == simdjson::SUCCESS && resource.is_object()) {
      block.text = TextOf(resource, "text");
      if (block.text.empty()) block.text = "[resource " + TextOf(resource, "uri") + "]";
    } else {
      block.text = "[resource " + TextOf(element, "uri") + "]";
    }
  } else {
    block.text = "[" + block.type + " block]";
  }
  return block;
}

}  // namespace

// `result {content}`: a string (one text block) or an array of blocks.
Result<std::vector<ContentBlock>> ParseContent(simdjson::dom::element params) {
  dom::element content;
  if (params["content"].get(content) != simdjson::SUCCESS || content.is_null()) return std::vector<ContentBlock>();
  std::vector<ContentBlock> blocks;
  if (content.is_string()) {
    blocks.push_back(ContentBlock::Text(std::string(content.get_string().value())));
    return blocks;
  }
  dom::array array;
  if (content.get_array().get(array) != simdjson::SUCCESS) {
    return Status(StatusCode::kInvalidArgument,
                  "'content' is neither a string nor an array of content blocks");
  }
  size_t index = 0;
  for (dom::element element : array) {
    TOOLVFS_ASSIGN_OR_RETURN(ContentBlock block, ParseBlock(element, index++));
    blocks.push_back(std::move(block));
  }
  return blocks;
}

// `error {message, trace?, transient?}`; trace may be a string or strings.
ToolError ParseToolError(simdjson::dom::element params) {
  ToolError error;
  error.message = TextOf(params, "message");
  if (error.message.empty()) error.message = "the tool reported an error without a message";
  dom::element trace;
  if (params["trace"].get(trace) == simdjson::SUCCESS) {
    if (trace.is_string()) {
      error.trace.emplace_back(trace.get_string().value());
    } else if (dom::array lines; trace.get_array().get(lines) == simdjson::SUCCESS) {
      for (dom::element line : lines) {
        error.trace.push_back(line.is_string() ? std::string(line.get_string().value())
                                               : ToJson(line));
      }
    }
  }
  bool transient = false;
  if (params["transient"].get_bool().get(transient) == simdjson::SUCCESS) {
    error.transient = transient;
  }
  return error;
}

std::vector<std::string> LastLines(std::string_view text, size_t count) {
  std::vector<std::string> lines;
  while (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  while (!text.empty() && lines.size() < count) {
    size_t newline = text.rfind('\n');
    std::string_view line = newline == std::string_view::npos ? text : text.substr(newline + 1);
    lines.insert(lines.begin(), std::string(line));
    text = newline == std::string_view::npos ? std::string_view() : text.substr(0, newline);
  }
  return lines;
}

Outcome FailedOutcome(StatusCode failure, std::string message, const std::string& stderr_tail) {
  Outcome outcome;
  outcome.is_error = true;
  outcome.failure = failure;
  outcome.error = ToolError{std::move(message), LastLines(stderr_tail, kTraceLines), false};
  return outcome;
}

Outcome CancelledOutcome(std::string message, std::string stderr_tail) {
  Outcome outcome;
  outcome.kind = Outcome::Kind::kCancelled;
  outcome.failure = StatusCode::kCancelled;
  outcome.is_error = true;
  outcome.error = ToolError{std::move(message), {}, false};
  outcome.stderr_tail = std::move(stderr_tail);
  return outcome;
}

}  // namespace toolvfs
