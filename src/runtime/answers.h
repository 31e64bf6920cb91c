// Questions a tool asks and the answers it gets (SPEC.md §4.6, §6.3): the
// question's shape, typing an answer by its `answer_type`, and the one
// answering chain every front end uses — `--answer ID=VALUE`, then the
// config's `questions.ID.answer`, then the terminal. docs/runtimes.md
// "Questions and answers" is the reference.
#pragma once

#include <simdjson.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config_value.h"
#include "core/status.h"
#include "core/unique_fd.h"
#include "host/cancel_token.h"
#include "runtime/tool_runtime.h"

namespace toolvfs {

// A question object as tools send it (stdio `needs_input`, vfs `state
// waiting`): {id, text, answer_type: "Boolean" | "Text" | "Select" (with
// `options` beside it) | {"Select": {"options": [...]}}, default?}. Options
// are strings, at least one. InvalidArgument naming the first thing wrong.
Result<ToolQuestion> ParseQuestion(simdjson::dom::element question);
Result<ToolQuestion> ParseQuestionJson(std::string_view json);

// "Boolean", "Text" or "Select".
std::string_view AnswerTypeName(AnswerType type);

// `value` typed by the question's answer_type: Boolean accepts true, false,
// yes, no (any case) and becomes a boolean; Text stays the string; Select
// must equal one of the options. InvalidArgument, one line naming the
// question, the value, `where` it came from (if not empty) and what is
// accepted, otherwise.
Result<ConfigValue> TypeAnswer(const ToolQuestion& question, std::string_view value,
                               std::string_view where = "");

// A config answer (`questions.ID.answer`: a boolean or a string) checked the
// same way: a boolean only for a Boolean question, a string typed as above.
Result<ConfigValue> TypeConfigAnswer(const ToolQuestion& question, const ConfigValue& value,
                                     std::string_view where = "");

// A call's answers (ToolCall::answers_json), parsed: one JSON object of
// question id -> answer. InvalidArgument otherwise, one line naming the
// tool: "Tool 'NAME': the answers are not a JSON object". Every runtime
// that hands answers to a tool checks them here first.
Result<ConfigValue::Object> ParseCallAnswers(std::string_view tool_name, std::string_view answers_json);

// `answers_json` (a JSON object) with `id` set to `answer`, compact.
Result<std::string> AddAnswer(std::string_view answers_json, const std::string& id, const ConfigValue& answer);

// Asks a person. Implementations return the raw text of the answer (for a
// Boolean "true"/"false", for a Select the chosen option), typed afterwards
// by TypeAnswer like every other source.
class QuestionAsker {
 public:
  virtual ~QuestionAsker() = default;
  // Blocks until answered. Cancelled when `cancel` fires (Ctrl+C while the
  // question is on the screen) or input ends.
  virtual Result<std::string> Ask(const ToolQuestion& question, std::string_view tool_name,
                                  CancelToken& cancel) = 0;
};

// The terminal: shows the tool's name and the question (every control
// character escaped, EscapeForTerminal), discards type-ahead, reads one
// line: Boolean y/n (yes/no/true/false), Text any line, Select the number
// of an option (or the option itself). Anything else asks again. An empty
// line takes the question's `default` when it has one.
std::unique_ptr<QuestionAsker> NewTerminalQuestionAsker(UniqueFd input, UniqueFd output);
// The same on /dev/tty; null when there is no terminal.
std::unique_ptr<QuestionAsker> NewTerminalQuestionAsker();

// How many questions one call answers before it gives up on a tool that
// keeps asking (the same question again after an answer it did not take,
// or an endless series).
inline constexpr int kMaxAnswerRounds = 16;

// Where answers come from, in order.
struct AnswerSources {
  // --answer ID=VALUE, by question id (typed when the question comes).
  std::map<std::string, std::string, std::less<>> given;
  // questions.ID.answer of the tool's config; null: none. Not owned.
  const std::map<std::string, ConfigValue>* configured = nullptr;
  // The terminal; null: no interaction (--no-interaction, no terminal).
  QuestionAsker* asker = nullptr;
};

// Which source answered.
enum class AnswerSource { kGiven, kConfigured, kAsked };

struct FoundAnswer {
  ConfigValue value;
  AnswerSource source;
};

// The typed answer to `question` from the first source that has one;
// nullopt when none has (no interaction). InvalidArgument (one line, naming
// `--answer` or `questions.ID.answer of tool 'NAME'`) for a given or
// configured value of the wrong type; Cancelled when asking was cancelled
// or the terminal's input ended.
Result<std::optional<FoundAnswer>> FindAnswer(const ToolQuestion& question, std::string_view tool_name,
                                              const AnswerSources& sources, CancelToken& cancel);

// One line per question for people: `  ID (Boolean: true/false): TEXT`,
// `  ID (Select: a | b): TEXT`, `  ID (Text): TEXT`, escaped for a terminal.
std::string DescribeQuestion(const ToolQuestion& question);

// --answer ID=VALUE entries by id. InvalidArgument for an entry without
// '=', an empty ID, an ID given twice, or text that is not UTF-8.
Result<std::map<std::string, std::string, std::less<>>> ParseAnswerFlags(const std::vector<std::string>& flags);

}  // namespace toolvfs
