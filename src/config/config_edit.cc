#include "config/config_edit.h"

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdio>
#include <optional>
#include <vector>

namespace toolvfs {
namespace {

struct Line {
  std::string text;  // without its line break
  std::string end;   // "\n", "\r\n" or "" (the last line without one)
};

std::vector<Line> SplitLines(std::string_view text) {
  std::vector<Line> lines;
  while (!text.empty()) {
    size_t newline = text.find('\n');
    if (newline == std::string_view::npos) {
      lines.push_back({std::string(text), ""});
      break;
    }
    std::string_view body = text.substr(0, newline);
    bool crlf = body.ends_with('\r');
    if (crlf) body.remove_suffix(1);
    lines.push_back({std::string(body), crlf ? "\r\n" : "\n"});
    text.remove_prefix(newline + 1);
  }
  return lines;
}

std::string_view Trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

std::string Indentation(std::string_view text) { return std::string(text.substr(0, text.find_first_not_of(" \t"))); }

// The part of a line before its comment (a '#' outside strings).
std::string_view WithoutComment(std::string_view text) {
  char quote = 0;
  for (size_t index = 0; index < text.size(); ++index) {
    char c = text[index];
    if (quote != 0) {
      if (c == '\\' && quote == '"') {
        ++index;
      } else if (c == quote) {
        quote = 0;
      }
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '#') {
      return text.substr(0, index);
    }
  }
  return text;
}

// `a."b c".d` as its parts, quotes removed; nullopt for anything else.
std::optional<std::vector<std::string>> ParseDottedKey(std::string_view text) {
  std::vector<std::string> parts;
  text = Trim(text);
  while (true) {
    text = Trim(text);
    std::string part;
    if (!text.empty() && (text.front() == '"' || text.front() == '\'')) {
      const char quote = text.front();
      size_t index = 1;
      for (; index < text.size() && text[index] != quote; ++index) {
        if (quote == '"' && text[index] == '\\' && index + 1 < text.size()) ++index;
        part += text[index];
      }
      if (index >= text.size()) return std::nullopt;
      text.remove_prefix(index + 1);
    } else {
      size_t end = 0;
      while (end < text.size() && (std::isalnum(static_cast<unsigned char>(text[end])) != 0 || text[end] == '_' ||
                                   text[end] == '-')) {
        ++end;
      }
      if (end == 0) return std::nullopt;
      part = std::string(text.substr(0, end));
      text.remove_prefix(end);
    }
    parts.push_back(std::move(part));
    text = Trim(text);
    if (text.empty()) return parts;
    if (text.front() != '.') return std::nullopt;
    text.remove_prefix(1);
  }
}

// The position of the '=' of a key/value line, outside quotes.
std::optional<size_t> EqualsSign(std::string_view text) {
  char quote = 0;
  for (size_t index = 0; index < text.size(); ++index) {
    char c = text[index];
    if (quote != 0) {
      if (c == quote) quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '=') {
      return index;
    } else if (c == '[' || c == '#') {
      return std::nullopt;
    }
  }
  return std::nullopt;
}

// '[' minus ']' outside strings and comments.
int BracketBalance(std::string_view text) {
  int balance = 0;
  for (char c : WithoutComment(text)) {
    if (c == '[') ++balance;
    if (c == ']') --balance;
  }
  return balance;
}

bool StartsWithParts(const std::vector<std::string>& parts, const std::vector<std::string>& prefix) {
  return parts.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), parts.begin());
}

// A key found in the text: its line range and whether its value is an array.
struct FoundKey {
  size_t first = 0;
  size_t last = 0;
  bool array = false;
};

// Where the rule may go, found in one pass over the lines.
struct Layout {
  std::optional<FoundKey> key;                 // the array itself
  std::optional<size_t> sandbox_last_key;      // last line of [tools.NAME.sandbox]'s last key
  std::optional<size_t> sandbox_header;        // its header line
  std::optional<size_t> subtable_last_key;     // same for [tools.NAME.sandbox.SECTION]
  std::optional<size_t> subtable_header;
  std::optional<size_t> tool_last_line;        // last non-blank line of the tool's tables
  bool sandbox_written_elsewhere = false;      // `sandbox...` keys in [tools.NAME], or inline tables
};

Layout Scan(const std::vector<Line>& lines, const std::vector<std::string>& tool,
            const std::vector<std::string>& sandbox, const std::vector<std::string>& subtable,
            const std::vector<std::string>& key_in_sandbox, const std::vector<std::string>& key_in_subtable) {
  Layout layout;
  std::vector<std::string> table;
  for (size_t index = 0; index < lines.size(); ++index) {
    std::string_view text = Trim(WithoutComment(lines[index].text));
    if (text.empty()) continue;
    if (text.front() == '[') {
      std::string_view inner = text.starts_with("[[") ? text.substr(2) : text.substr(1);
      size_t close = inner.rfind(']');
      table = ParseDottedKey(close == std::string_view::npos ? inner : inner.substr(0, close))
                  .value_or(std::vector<std::string>{});
      if (text.starts_with("[[")) table.clear();
      if (table == sandbox) layout.sandbox_header = index;
      if (table == subtable) layout.subtable_header = index;
      if (StartsWithParts(table, tool)) layout.tool_last_line = index;
      continue;
    }
    std::optional<size_t> equals = EqualsSign(text);
    // A value running over several lines (an array) ends where its brackets do.
    size_t last = index;
    if (equals) {
      int balance = BracketBalance(text.substr(*equals + 1));
      while (balance > 0 && last + 1 < lines.size()) balance += BracketBalance(lines[++last].text);
    }
    if (StartsWithParts(table, tool)) layout.tool_last_line = last;
    if (equals) {
      std::vector<std::string> key = ParseDottedKey(text.substr(0, *equals)).value_or(std::vector<std::string>{});
      std::string_view value = Trim(text.substr(*equals + 1));
      if (table == tool && !key.empty() && key.front() == "sandbox") layout.sandbox_written_elsewhere = true;
      if (table == sandbox) {
        layout.sandbox_last_key = last;
        if (key == key_in_sandbox) layout.key = FoundKey{index, last, value.starts_with('[')};
        if (!key.empty() && key.front() == key_in_sandbox.front() && value.starts_with('{')) {
          layout.sandbox_written_elsewhere = true;
        }
      }
      if (table == subtable) {
        layout.subtable_last_key = last;
        if (key == key_in_subtable) layout.key = FoundKey{index, last, value.starts_with('[')};
      }
    }
    index = last;
  }
  return layout;
}

// Adds `element` (a TOML string) to the array at `found`.
Status AddToArray(std::vector<Line>& lines, const FoundKey& found, const std::string& element) {
  if (found.first == found.last) {
    std::string& text = lines[found.first].text;
    std::string_view code = WithoutComment(text);
    size_t open = code.find('[', *EqualsSign(code));
    size_t close = code.rfind(']');
    if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
      return UnsupportedError("the array is not written in one piece");
    }
    std::string_view inside = Trim(code.substr(open + 1, close - open - 1));
    std::string addition = inside.empty() ? element : inside.ends_with(',') ? " " + element : ", " + element;
    // After the last element, before any spaces and the bracket.
    size_t at = close;
    while (at > open + 1 && (text[at - 1] == ' ' || text[at - 1] == '\t')) --at;
    if (inside.empty()) at = open + 1;
    text.insert(at, addition);
    return OkStatus();
  }
  // Several lines: the closing bracket on its own line, elements above it.
  if (!Trim(WithoutComment(lines[found.last].text)).starts_with(']')) {
    return UnsupportedError("the array's closing bracket shares a line with an element");
  }
  size_t last_element = found.last - 1;
  while (last_element > found.first && Trim(WithoutComment(lines[last_element].text)).empty()) --last_element;
  std::string indent;
  // Keep the file's habit: a trailing comma after the new element if the
  // last one had one.
  const bool trailing_comma =
      last_element != found.first && Trim(WithoutComment(lines[last_element].text)).ends_with(',');
  if (last_element == found.first) {
    indent = Indentation(lines[found.first].text) + "  ";
  } else {
    std::string& text = lines[last_element].text;
    indent = Indentation(text);
    std::string_view code = WithoutComment(text);
    std::string_view trimmed = Trim(code);
    if (!trimmed.ends_with(',')) {
      size_t end = code.find_last_not_of(" \t") + 1;
      text.insert(end, ",");
    }
  }
  std::string new_line = indent + element;
  if (trailing_comma) new_line += ",";
  lines.insert(lines.begin() + static_cast<std::ptrdiff_t>(found.last),
               Line{new_line, lines[found.last].end.empty() ? "\n" : lines[found.last].end});
  return OkStatus();
}

std::string Join(const std::vector<Line>& lines) {
  std::string text;
  for (const Line& line : lines) text += line.text + line.end;
  return text;
}

std::string LineBreakOf(const std::vector<Line>& lines) {
  for (const Line& line : lines) {
    if (!line.end.empty()) return line.end;
  }
  return "\n";
}

}  // namespace

std::string TomlString(std::string_view value) {
  std::string quoted = "\"";
  for (char c : value) {
    auto byte = static_cast<unsigned char>(c);
    switch (c) {
      case '"': quoted += "\\\""; break;
      case '\\': quoted += "\\\\"; break;
      case '\n': quoted += "\\n"; break;
      case '\t': quoted += "\\t"; break;
      case '\r': quoted += "\\r"; break;
      default:
        if (byte < 0x20 || byte == 0x7f) {
          char escape[8];
          std::snprintf(escape, sizeof escape, "\\u%04X", byte);
          quoted += escape;
        } else {
          quoted += c;
        }
    }
  }
  return quoted + "\"";
}

std::string TomlKey(std::string_view part) {
  bool bare = !part.empty() && std::all_of(part.begin(), part.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-';
  });
  return bare ? std::string(part) : TomlString(part);
}

Result<std::string> AddSandboxRule(std::string_view text, std::string_view tool_name, std::string_view key,
                                   std::string_view value) {
  const std::vector<std::string> key_parts = ParseDottedKey(key).value_or(std::vector<std::string>{});
  if (key_parts.size() != 2) return InvalidArgumentError("Not a sandbox rule key: '" + std::string(key) + "'");
  const std::vector<std::string> tool = {"tools", std::string(tool_name)};
  const std::vector<std::string> sandbox = {"tools", std::string(tool_name), "sandbox"};
  const std::vector<std::string> subtable = {"tools", std::string(tool_name), "sandbox", key_parts[0]};
  const std::string element = TomlString(value);
  const std::string table_key = "tools." + TomlKey(tool_name) + ".sandbox";
  const std::string by_hand = "add " + element + " to " + std::string(key) + " in [" + table_key + "] by hand";

  std::vector<Line> lines = SplitLines(text);
  Layout layout = Scan(lines, tool, sandbox, subtable, key_parts, {key_parts[1]});
  if (layout.key) {
    if (!layout.key->array) {
      return UnsupportedError(std::string(key) + " of tool '" + std::string(tool_name) +
                                     "' is not an array; " + by_hand);
    }
    for (size_t index = layout.key->first; index <= layout.key->last; ++index) {
      if (WithoutComment(lines[index].text).find(element) != std::string_view::npos) {
        return AlreadyExistsError(std::string(key) + " of tool '" + std::string(tool_name) + "' already has " +
                                  element);
      }
    }
    Status added = AddToArray(lines, *layout.key, element);
    if (!added.ok()) return UnsupportedError(added.message() + "; " + by_hand);
    return Join(lines);
  }
  if (layout.sandbox_written_elsewhere) {
    return UnsupportedError("the sandbox of tool '" + std::string(tool_name) +
                                   "' is written as dotted keys or an inline table; " + by_hand);
  }
  const std::string line_break = LineBreakOf(lines);
  auto insert_after = [&](size_t index, std::string new_line) {
    if (lines[index].end.empty()) lines[index].end = line_break;
    lines.insert(lines.begin() + static_cast<std::ptrdiff_t>(index + 1), Line{std::move(new_line), line_break});
  };
  if (layout.sandbox_header) {
    insert_after(layout.sandbox_last_key.value_or(*layout.sandbox_header), std::string(key) + " = [" + element + "]");
    return Join(lines);
  }
  if (layout.subtable_header) {
    insert_after(layout.subtable_last_key.value_or(*layout.subtable_header), key_parts[1] + " = [" + element + "]");
    return Join(lines);
  }
  if (!layout.tool_last_line) {
    return UnsupportedError("tool '" + std::string(tool_name) + "' has no [tools." +
                                   TomlKey(tool_name) + "] table in the file; " + by_hand);
  }
  size_t at = *layout.tool_last_line;
  insert_after(at, std::string(key) + " = [" + element + "]");
  insert_after(at, "[" + table_key + "]");
  insert_after(at, "");
  return Join(lines);
}

std::string UnifiedDiff(std::string_view before, std::string_view after, std::string_view path) {
  if (before == after) return {};
  std::vector<Line> old_lines = SplitLines(before);
  std::vector<Line> new_lines = SplitLines(after);
  // One run of changed lines: the edits above touch one place of the file.
  size_t prefix = 0;
  while (prefix < old_lines.size() && prefix < new_lines.size() && old_lines[prefix].text == new_lines[prefix].text) {
    ++prefix;
  }
  size_t suffix = 0;
  while (suffix < old_lines.size() - prefix && suffix < new_lines.size() - prefix &&
         old_lines[old_lines.size() - 1 - suffix].text == new_lines[new_lines.size() - 1 - suffix].text) {
    ++suffix;
  }
  constexpr size_t kContext = 3;
  const size_t start = prefix > kContext ? prefix - kContext : 0;
  const size_t old_end = std::min(old_lines.size(), old_lines.size() - suffix + kContext);
  const size_t new_end = std::min(new_lines.size(), new_lines.size() - suffix + kContext);
  auto range = [](size_t first, size_t count) {
    return std::to_string(count == 0 ? first : first + 1) + "," + std::to_string(count);
  };
  std::string diff = "--- " + std::string(path) + "\n+++ " + std::string(path) + "\n";
  diff += "@@ -" + range(start, old_end - start) + " +" + range(start, new_end - start) + " @@\n";
  for (size_t index = start; index < prefix; ++index) diff += " " + old_lines[index].text + "\n";
  for (size_t index = prefix; index < old_lines.size() - suffix; ++index) diff += "-" + old_lines[index].text + "\n";
  for (size_t index = prefix; index < new_lines.size() - suffix; ++index) diff += "+" + new_lines[index].text + "\n";
  for (size_t index = old_lines.size() - suffix; index < old_end; ++index) diff += " " + old_lines[index].text + "\n";
  return diff;
}

}  // namespace toolvfs
