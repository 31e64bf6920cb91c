#include "config/shell_words.h"

namespace toolvfs {
namespace {

bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\n'; }

bool IsShellOperator(char c) {
  return c == '|' || c == '&' || c == ';' || c == '<' || c == '>' || c == '(' || c == ')';
}

Status ShellCharacterError(char c) {
  std::string shown(1, c);
  return InvalidArgumentError("has '" + shown +
                              "', which a shell would interpret, but no shell runs the command; "
                              "quote it to pass it literally, or use the table form "
                              "{ program, args, shell = true }");
}

}  // namespace

Result<std::vector<std::string>> SplitShellWords(std::string_view command) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;  // a word has started (it may still be empty: '')
  size_t i = 0;
  const size_t size = command.size();

  // Copies what starts at `i` with `opening` up to and including the
  // first `closing` into `word`, untouched: a "{{ ... }}" template (the
  // stdio runtime renders it) or a "${toolvfs.NAME}" variable (the config
  // layer replaces it once the words are split, config.h).
  auto copy_verbatim = [&](std::string_view opening, std::string_view closing,
                           std::string_view unterminated) -> Status {
    size_t close = command.find(closing, i + opening.size());
    if (close == std::string_view::npos) return InvalidArgumentError(std::string(unterminated));
    word.append(command.substr(i, close + closing.size() - i));
    i = close + closing.size();
    in_word = true;
    return OkStatus();
  };
  auto copy_template = [&] {
    return copy_verbatim("{{", "}}", "has an unterminated template '{{' (no matching '}}')");
  };
  constexpr std::string_view kVariableOpening = "${toolvfs.";
  auto at_variable = [&] { return command.substr(i).starts_with(kVariableOpening); };
  auto copy_variable = [&] {
    return copy_verbatim(kVariableOpening, "}", "has an unterminated variable '${toolvfs.' (no matching '}')");
  };

  while (i < size) {
    char c = command[i];
    if (IsBlank(c)) {
      if (in_word) {
        words.push_back(std::move(word));
        word.clear();
        in_word = false;
      }
      ++i;
    } else if (c == '{' && i + 1 < size && command[i + 1] == '{') {
      TOOLVFS_RETURN_IF_ERROR(copy_template());
    } else if (at_variable()) {
      TOOLVFS_RETURN_IF_ERROR(copy_variable());
    } else if (c == '\\') {
      if (i + 1 >= size) return InvalidArgumentError("ends with an unescaped backslash");
      if (command[i + 1] != '\n') {  // backslash-newline: line continuation
        word += command[i + 1];
        in_word = true;
      }
      i += 2;
    } else if (c == '\'') {
      size_t close = command.find('\'', i + 1);
      if (close == std::string_view::npos) {
        return InvalidArgumentError("has an unbalanced single quote");
      }
      word.append(command.substr(i + 1, close - i - 1));
      in_word = true;
      i = close + 1;
    } else if (c == '"') {
      in_word = true;
      ++i;
      bool closed = false;
      while (i < size) {
        char inner = command[i];
        if (inner == '"') {
          closed = true;
          ++i;
          break;
        }
        if (inner == '{' && i + 1 < size && command[i + 1] == '{') {
          TOOLVFS_RETURN_IF_ERROR(copy_template());
          continue;
        }
        if (at_variable()) {
          TOOLVFS_RETURN_IF_ERROR(copy_variable());
          continue;
        }
        if (inner == '\\' && i + 1 < size) {
          char next = command[i + 1];
          if (next == '$' || next == '`' || next == '"' || next == '\\') {
            word += next;
          } else if (next != '\n') {
            word += '\\';
            word += next;
          }
          i += 2;
          continue;
        }
        if (inner == '$' || inner == '`') return ShellCharacterError(inner);
        word += inner;
        ++i;
      }
      if (!closed) return InvalidArgumentError("has an unbalanced double quote");
    } else if (IsShellOperator(c) || c == '$' || c == '`' || (c == '#' && !in_word)) {
      return ShellCharacterError(c);
    } else {
      word += c;
      in_word = true;
      ++i;
    }
  }
  if (in_word) words.push_back(std::move(word));
  if (words.empty()) return InvalidArgumentError("is empty");
  return words;
}

}  // namespace toolvfs
