#include "runtime/command_template.h"

#include <utility>

#include "core/text.h"

namespace toolvfs {
namespace {

std::string_view Trimmed(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

// Whether a missing member at `path` is an optional value rather than a
// typo: anything below tool.arguments, tool.answers or tool.options.
bool IsOptionalPath(const std::vector<std::string_view>& names, size_t missing_index) {
  return missing_index >= 2 && names[0] == "tool" &&
         (names[1] == "arguments" || names[1] == "answers" || names[1] == "options");
}

// Renders the inside of one `{{ ... }}`.
Result<std::string> RenderPlaceholder(std::string_view inside, const ConfigValue& context) {
  std::string_view expression = inside;
  bool to_json = false;
  if (size_t bar = inside.find('|'); bar != std::string_view::npos) {
    std::string_view filter = Trimmed(inside.substr(bar + 1));
    if (filter != "tojson") {
      return Status(StatusCode::kInvalidArgument, "unknown filter " + Quote(filter) + " (only 'tojson' exists)");
    }
    to_json = true;
    expression = inside.substr(0, bar);
  }
  expression = Trimmed(expression);
  if (expression.empty()) return Status(StatusCode::kInvalidArgument, "names nothing");

  std::vector<std::string_view> names;
  for (size_t start = 0;;) {
    size_t dot = expression.find('.', start);
    std::string_view name = expression.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (name.empty()) return Status(StatusCode::kInvalidArgument, "has an empty name in " + Quote(expression));
    names.push_back(name);
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  const ConfigValue* value = &context;
  for (size_t index = 0; index < names.size(); ++index) {
    const ConfigValue* member = value->Find(names[index]);
    if (member == nullptr) {
      if (value->is_object() && IsOptionalPath(names, index)) return std::string(to_json ? "null" : "");
      std::string prefix;
      for (size_t i = 0; i <= index; ++i) prefix += (i == 0 ? "" : ".") + std::string(names[i]);
      return Status(StatusCode::kInvalidArgument, "names " + Quote(prefix) + ", which does not exist");
    }
    value = member;
  }
  if (value->is_string() && !to_json) return value->as_string();
  return value->ToJson();
}

}  // namespace

ConfigValue TemplateContext(const TemplateInputs& inputs) {
  ConfigValue::Object tool{{"name", inputs.tool_name},
                           {"arguments", inputs.arguments},
                           {"answers", inputs.answers},
                           {"options", inputs.options}};
  auto prefixes = [](const std::vector<std::string>& list) {
    ConfigValue::Array shown;
    for (const std::string& prefix : list) shown.emplace_back(prefix.empty() ? std::string(".") : prefix);
    return shown;
  };
  ConfigValue::Object access{{"readable", prefixes(inputs.access.readable_prefixes)},
                             {"writable", prefixes(inputs.access.writable_prefixes)},
                             {"network", inputs.access.network}};
  ConfigValue::Object context{{"action", "run"}, {"root", inputs.root}, {"access", std::move(access)}};
  return ConfigValue::Object{{"tool", std::move(tool)}, {"context", std::move(context)}};
}

Result<std::string> RenderTemplate(std::string_view element, const ConfigValue& context, bool shell_quote) {
  std::string rendered;
  size_t position = 0;
  while (true) {
    size_t open = element.find("{{", position);
    if (open == std::string_view::npos) {
      rendered += element.substr(position);
      return rendered;
    }
    rendered += element.substr(position, open - position);
    size_t close = element.find("}}", open + 2);
    if (close == std::string_view::npos) {
      return Status(StatusCode::kInvalidArgument, "unterminated '{{' in " + Quote(element));
    }
    std::string_view placeholder = element.substr(open, close + 2 - open);
    Result<std::string> value = RenderPlaceholder(element.substr(open + 2, close - open - 2), context);
    if (!value.ok()) {
      return Status(StatusCode::kInvalidArgument, "template " + Quote(placeholder) + " " + value.status().message());
    }
    rendered += shell_quote ? ShellQuoted(*value) : *value;
    position = close + 2;
  }
}

Result<std::vector<std::string>> RenderCommand(const CommandSpec& command, const ConfigValue& context) {
  std::vector<std::string> argv;
  std::vector<const std::string*> elements{&command.program};
  for (const std::string& arg : command.args) elements.push_back(&arg);
  for (size_t index = 0; index < elements.size(); ++index) {
    Result<std::string> rendered = RenderTemplate(*elements[index], context, command.shell);
    if (!rendered.ok()) {
      std::string which = index == 0 ? "command program" : "command argument " + std::to_string(index);
      return Status(StatusCode::kInvalidArgument, which + ": " + rendered.status().message());
    }
    argv.push_back(std::move(rendered).value());
  }
  if (!command.shell) return argv;
  std::string script;
  for (const std::string& word : argv) script += (script.empty() ? "" : " ") + word;
  return std::vector<std::string>{"/bin/sh", "-c", std::move(script)};
}

}  // namespace toolvfs
