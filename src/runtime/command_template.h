// The templates in a stdio tool's command (SPEC.md §6.3, jp's stdio
// contract; docs/runtimes.md). Pure functions, safe from any thread.
//
// A template is `{{ PATH }}` or `{{ PATH | tojson }}` (spaces optional)
// inside one command element. PATH is dotted names into the template
// context {tool: {name, arguments, answers, options}, context: {action,
// root}}. A string renders raw, an object or array as compact JSON, null
// as `null`, numbers and booleans as JSON; `tojson` renders any value as
// JSON (so a string gets its quotes). A placeholder never splits: it stays
// inside the element it was written in, whatever it renders to.
// A missing key under tool.arguments, tool.answers or tool.options (an
// optional argument not given) renders as the empty string (`null` with
// tojson); any other unknown path or filter is an error.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"
#include "config/config_value.h"
#include "core/status.h"
#include "runtime/confined_launch.h"

namespace toolvfs {

// The context templates see.
struct TemplateInputs {
  std::string tool_name;
  ConfigValue arguments;  // validated, defaults filled
  ConfigValue answers;    // question id -> answer
  ConfigValue options;    // the tool's `options`
  std::string root;       // the project directory the tool runs in
  // What the tool's process may touch in the project (DirectAccessOf), as
  // `context.access`: {readable: [...], writable: [...], network: bool},
  // prefixes relative to `root`, "." for the whole project.
  DirectProjectAccess access;
};
ConfigValue TemplateContext(const TemplateInputs& inputs);

// Renders every template in `element`. With `shell_quote`, each rendered
// placeholder is inserted single-quoted for /bin/sh ('it'\''s'), so a value
// is always one word and never shell syntax; literal text is left as
// written. InvalidArgument naming the template and the reason:
// "template '{{ tool.argumnts.x }}' names 'tool.argumnts', which does not
// exist", "unknown filter 'upper' in template ...", "unterminated '{{'".
Result<std::string> RenderTemplate(std::string_view element, const ConfigValue& context, bool shell_quote = false);

// The argv of `command` with every element rendered: [program, args...].
// With `command.shell`, the program and args are rendered with
// shell_quote, joined by spaces, and run as ["/bin/sh", "-c", SCRIPT].
// Errors as RenderTemplate, prefixed with the element: "command argument 2:
// ...".
Result<std::vector<std::string>> RenderCommand(const CommandSpec& command, const ConfigValue& context);

}  // namespace toolvfs
