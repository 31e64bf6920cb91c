#include "runtime/answers.h"

#include <fcntl.h>
#include <poll.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <set>
#include <utility>

#include "core/io.h"
#include "core/text.h"
#include "policy/inquirer.h"
#include "runtime/argument_validation.h"

namespace toolvfs {
namespace {

namespace dom = simdjson::dom;

// An answer line longer than this is cut (the rest is read and dropped).
constexpr size_t kMaxAnswerLineBytes = 64 << 10;

Status Invalid(std::string message) { return Status(StatusCode::kInvalidArgument, std::move(message)); }

std::string_view Trimmed(std::string_view text) {
  auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\r'; };
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  return text;
}

std::optional<bool> ParseBoolean(std::string_view text) {
  std::string lower = AsciiLowercase(text);
  if (lower == "true" || lower == "yes") return true;
  if (lower == "false" || lower == "no") return false;
  return std::nullopt;
}

std::string OptionList(const ToolQuestion& question) {
  std::string list;
  for (const std::string& option : question.options) {
    if (!list.empty()) list += ", ";
    list += Quote(option);
  }
  return list;
}

Result<std::vector<std::string>> ParseOptions(dom::element options) {
  dom::array array;
  if (options.get_array().get(array) != simdjson::SUCCESS) return Invalid("the Select question's 'options' is not an array");
  std::vector<std::string> parsed;
  for (dom::element option : array) {
    std::string_view text;
    if (option.get_string().get(text) != simdjson::SUCCESS) {
      return Invalid("the Select question's options must be strings, got " + simdjson::minify(option));
    }
    parsed.emplace_back(text);
  }
  if (parsed.empty()) return Invalid("the Select question has no options");
  return parsed;
}

}  // namespace

Result<ToolQuestion> ParseQuestion(dom::element question) {
  if (!question.is_object()) return Invalid("'question' is not an object");
  ToolQuestion parsed;
  std::string_view id;
  std::string_view text;
  if (question["id"].get_string().get(id) != simdjson::SUCCESS || id.empty()) {
    return Invalid("the question has no string 'id'");
  }
  if (question["text"].get_string().get(text) != simdjson::SUCCESS) {
    return Invalid("the question has no string 'text'");
  }
  dom::element answer_type;
  if (question["answer_type"].get(answer_type) != simdjson::SUCCESS) {
    return Invalid("the question has no 'answer_type'");
  }
  std::string_view type_name;
  if (answer_type.get_string().get(type_name) == simdjson::SUCCESS) {
    if (type_name == "Boolean") {
      parsed.answer_type = AnswerType::kBoolean;
    } else if (type_name == "Text") {
      parsed.answer_type = AnswerType::kText;
    } else if (type_name == "Select") {
      parsed.answer_type = AnswerType::kSelect;
      dom::element options;
      if (question["options"].get(options) != simdjson::SUCCESS) return Invalid("the Select question has no 'options' array");
      TOOLVFS_ASSIGN_OR_RETURN(parsed.options, ParseOptions(options));
    } else {
      return Invalid("the question's answer_type " + Quote(type_name) + " is not Boolean, Text or Select");
    }
  } else {
    dom::element options;
    if (!answer_type.is_object() || answer_type["Select"]["options"].get(options) != simdjson::SUCCESS) {
      return Invalid("the question's answer_type is neither a name nor {\"Select\":{\"options\":[...]}}");
    }
    parsed.answer_type = AnswerType::kSelect;
    TOOLVFS_ASSIGN_OR_RETURN(parsed.options, ParseOptions(options));
  }
  dom::element default_value;
  if (question["default"].get(default_value) == simdjson::SUCCESS && !default_value.is_null()) {
    std::string_view default_text;
    bool default_bool = false;
    if (default_value.get_string().get(default_text) == simdjson::SUCCESS) {
      parsed.default_answer = std::string(default_text);
    } else if (default_value.get_bool().get(default_bool) == simdjson::SUCCESS) {
      parsed.default_answer = default_bool ? "true" : "false";
    }
  }
  parsed.id = std::string(id);
  parsed.text = std::string(text);
  parsed.json = simdjson::minify(question);
  return parsed;
}

Result<ToolQuestion> ParseQuestionJson(std::string_view json) {
  dom::parser parser;
  dom::element element;
  if (simdjson::error_code error = parser.parse(json.data(), json.size()).get(element); error != simdjson::SUCCESS) {
    return Invalid(std::string("the question is not JSON: ") + simdjson::error_message(error));
  }
  return ParseQuestion(element);
}

std::string_view AnswerTypeName(AnswerType type) {
  switch (type) {
    case AnswerType::kBoolean: return "Boolean";
    case AnswerType::kText: return "Text";
    case AnswerType::kSelect: return "Select";
  }
  return "Text";
}

Result<ConfigValue> TypeAnswer(const ToolQuestion& question, std::string_view value, std::string_view where) {
  std::string subject = "the answer " + Quote(value) + " to question " + Quote(question.id);
  if (!where.empty()) subject += " (" + std::string(where) + ")";
  switch (question.answer_type) {
    case AnswerType::kBoolean:
      if (std::optional<bool> parsed = ParseBoolean(value)) return ConfigValue(*parsed);
      return Invalid(subject + " is not a Boolean: use true, false, yes or no");
    case AnswerType::kText:
      return ConfigValue(std::string(value));
    case AnswerType::kSelect:
      for (const std::string& option : question.options) {
        if (option == value) return ConfigValue(option);
      }
      return Invalid(subject + " is not one of its options: " + OptionList(question));
  }
  return ConfigValue(std::string(value));
}

Result<ConfigValue> TypeConfigAnswer(const ToolQuestion& question, const ConfigValue& value, std::string_view where) {
  std::string place = where.empty() ? std::string() : " (" + std::string(where) + ")";
  if (value.is_bool()) {
    if (question.answer_type == AnswerType::kBoolean) return value;
    return Invalid("the answer " + std::string(value.as_bool() ? "true" : "false") + " to question " +
                   Quote(question.id) + place + " is a boolean, but the question is " +
                   std::string(AnswerTypeName(question.answer_type)));
  }
  if (value.is_string()) return TypeAnswer(question, value.as_string(), where);
  return Invalid("the answer to question " + Quote(question.id) + place + " is neither a boolean nor a string");
}

Result<ConfigValue::Object> ParseCallAnswers(std::string_view tool_name, std::string_view answers_json) {
  Result<ConfigValue> answers = ParseJsonValue(answers_json);
  if (answers.ok() && !answers->is_object()) answers = Invalid("not a JSON object");
  if (!answers.ok()) return Invalid("Tool " + Quote(tool_name) + ": the answers are " + answers.status().message());
  return std::move(answers->as_object());
}

Result<std::string> AddAnswer(std::string_view answers_json, const std::string& id, const ConfigValue& answer) {
  TOOLVFS_ASSIGN_OR_RETURN(ConfigValue answers, ParseJsonValue(answers_json));
  if (answers.is_null()) answers = ConfigValue(ConfigValue::Object());
  if (!answers.is_object()) return Invalid("the answers are not a JSON object");
  answers.as_object()[id] = answer;
  return answers.ToJson();
}

Result<std::optional<FoundAnswer>> FindAnswer(const ToolQuestion& question, std::string_view tool_name,
                                              const AnswerSources& sources, CancelToken& cancel) {
  using Found = std::optional<FoundAnswer>;
  if (auto given = sources.given.find(question.id); given != sources.given.end()) {
    TOOLVFS_ASSIGN_OR_RETURN(ConfigValue typed, TypeAnswer(question, given->second, "--answer"));
    return Found(FoundAnswer{std::move(typed), AnswerSource::kGiven});
  }
  if (sources.configured != nullptr) {
    if (auto configured = sources.configured->find(question.id); configured != sources.configured->end()) {
      std::string where = "questions." + EscapeForDisplay(question.id) + ".answer of tool " + Quote(tool_name);
      TOOLVFS_ASSIGN_OR_RETURN(ConfigValue typed, TypeConfigAnswer(question, configured->second, where));
      return Found(FoundAnswer{std::move(typed), AnswerSource::kConfigured});
    }
  }
  if (sources.asker == nullptr) return Found();
  TOOLVFS_ASSIGN_OR_RETURN(std::string text, sources.asker->Ask(question, tool_name, cancel));
  // The terminal asker only returns what TypeAnswer accepts; typing it here
  // keeps one rule for every source.
  TOOLVFS_ASSIGN_OR_RETURN(ConfigValue typed, TypeAnswer(question, text));
  return Found(FoundAnswer{std::move(typed), AnswerSource::kAsked});
}

std::string DescribeQuestion(const ToolQuestion& question) {
  std::string line = "  " + EscapeForTerminal(question.id) + " (" + std::string(AnswerTypeName(question.answer_type));
  if (question.answer_type == AnswerType::kBoolean) line += ": true/false";
  if (question.answer_type == AnswerType::kSelect) {
    line += ": ";
    for (size_t index = 0; index < question.options.size(); ++index) {
      line += (index == 0 ? "" : " | ") + EscapeForTerminal(question.options[index]);
    }
  }
  line += "): " + EscapeForTerminal(question.text);
  return line;
}

Result<std::map<std::string, std::string, std::less<>>> ParseAnswerFlags(const std::vector<std::string>& flags) {
  std::map<std::string, std::string, std::less<>> answers;
  for (const std::string& flag : flags) {
    size_t equals = flag.find('=');
    if (equals == std::string::npos) return Invalid("Expected ID=VALUE, got " + Quote(flag));
    std::string id = flag.substr(0, equals);
    if (id.empty()) return Invalid("The question ID is empty in " + Quote(flag));
    if (!IsValidUtf8(flag)) return Invalid(Quote(flag) + " is not valid UTF-8");
    if (!answers.emplace(id, flag.substr(equals + 1)).second) {
      return Invalid("Question " + Quote(id) + " is answered twice");
    }
  }
  return answers;
}

// --- The terminal -------------------------------------------------------------

namespace {

class TerminalQuestionAsker final : public QuestionAsker {
 public:
  TerminalQuestionAsker(UniqueFd input, UniqueFd output) : input_(std::move(input)), output_(std::move(output)) {}

  Result<std::string> Ask(const ToolQuestion& question, std::string_view tool_name, CancelToken& cancel) override {
    std::lock_guard prompt(TerminalPromptMutex());  // one question on the terminal at a time
    // Keys pressed before the question was on the screen answer nothing.
    static_cast<void>(::tcflush(input_.get(), TCIFLUSH));
    TOOLVFS_RETURN_IF_ERROR(Write(Prompt(question, tool_name)));
    while (true) {
      TOOLVFS_ASSIGN_OR_RETURN(std::optional<std::string> line, ReadLine(cancel));
      if (!line) return CancelledError("No answer: the terminal reached end of input");
      std::string_view text = question.answer_type == AnswerType::kText ? std::string_view(*line) : Trimmed(*line);
      if (text.empty() && question.default_answer) text = *question.default_answer;
      if (std::optional<std::string> answer = Understand(question, text)) return *answer;
      TOOLVFS_RETURN_IF_ERROR(Write(Retry(question)));
    }
  }

 private:
  static std::string Prompt(const ToolQuestion& question, std::string_view tool_name) {
    std::string prompt = "toolvfs: tool '" + EscapeForTerminal(tool_name) + "' asks (" +
                         EscapeForTerminal(question.id) + "): " + EscapeForTerminal(question.text) + "\n";
    std::string shown_default =
        question.default_answer ? " [default: " + EscapeForTerminal(*question.default_answer) + "]" : "";
    switch (question.answer_type) {
      case AnswerType::kBoolean: prompt += "  [y/n]" + shown_default + " "; break;
      case AnswerType::kText: prompt += "  answer" + shown_default + ": "; break;
      case AnswerType::kSelect:
        for (size_t index = 0; index < question.options.size(); ++index) {
          prompt += "  " + std::to_string(index + 1) + ") " + EscapeForTerminal(question.options[index]) + "\n";
        }
        prompt += "  choose 1-" + std::to_string(question.options.size()) + shown_default + ": ";
        break;
    }
    return prompt;
  }

  static std::string Retry(const ToolQuestion& question) {
    if (question.answer_type == AnswerType::kBoolean) return "Please answer y or n. [y/n] ";
    return "Please answer with a number from 1 to " + std::to_string(question.options.size()) + ": ";
  }

  // The raw answer TypeAnswer accepts, or nullopt for input to ask again.
  static std::optional<std::string> Understand(const ToolQuestion& question, std::string_view text) {
    switch (question.answer_type) {
      case AnswerType::kText: return ToValidUtf8(text);
      case AnswerType::kBoolean: {
        std::string lower = AsciiLowercase(text);
        if (lower == "y") return "true";
        if (lower == "n") return "false";
        if (std::optional<bool> parsed = ParseBoolean(text)) return *parsed ? "true" : "false";
        return std::nullopt;
      }
      case AnswerType::kSelect: {
        size_t number = 0;
        auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
        if (error == std::errc() && end == text.data() + text.size() && number >= 1 &&
            number <= question.options.size()) {
          return question.options[number - 1];
        }
        for (const std::string& option : question.options) {
          if (option == text) return option;
        }
        return std::nullopt;
      }
    }
    return std::nullopt;
  }

  Status Write(const std::string& text) { return WriteFull(output_.get(), text, "Cannot ask on the terminal"); }

  // One line without its '\n', nullopt at end of input. One byte per
  // read(2), so nothing after the answer's line is consumed.
  Result<std::optional<std::string>> ReadLine(CancelToken& cancel) {
    std::string line;
    while (true) {
      if (cancel.cancelled()) return CancelledError("Cancelled while asking the user");
      struct pollfd fds[2] = {{input_.get(), POLLIN, 0}, {cancel.fd(), POLLIN, 0}};
      int ready = ::poll(fds, cancel.fd() >= 0 ? 2 : 1, cancel.fd() >= 0 ? -1 : 100);
      if (ready < 0 && errno != EINTR) return ErrnoToStatus(errno, "Cannot wait for the answer");
      if (ready <= 0 || fds[0].revents == 0) continue;
      char byte;
      ssize_t got = ::read(input_.get(), &byte, 1);
      if (got < 0) {
        if (errno == EINTR || errno == EAGAIN) continue;
        if (errno == EIO) return std::optional<std::string>();  // the pty's other side closed
        return ErrnoToStatus(errno, "Cannot read the answer from the terminal");
      }
      if (got == 0) return std::optional<std::string>();
      if (byte == '\n') {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        return std::optional<std::string>(std::move(line));
      }
      if (line.size() < kMaxAnswerLineBytes) line += byte;
    }
  }

  UniqueFd input_;
  UniqueFd output_;
};

}  // namespace

std::unique_ptr<QuestionAsker> NewTerminalQuestionAsker(UniqueFd input, UniqueFd output) {
  return std::make_unique<TerminalQuestionAsker>(std::move(input), std::move(output));
}

std::unique_ptr<QuestionAsker> NewTerminalQuestionAsker() {
  UniqueFd terminal(::open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY));
  if (!terminal.valid()) return nullptr;
  UniqueFd output(::fcntl(terminal.get(), F_DUPFD_CLOEXEC, 0));
  if (!output.valid()) return nullptr;
  return NewTerminalQuestionAsker(std::move(terminal), std::move(output));
}

}  // namespace toolvfs
