// The stdio runtime (SPEC.md §6.3, jp's stdio contract; docs/runtimes.md):
// runs a tool as a plain process under the OS sandbox with its arguments
// rendered into its command line, and reads its whole stdout as the
// outcome. The tool touches the project directly, as far as its policy's
// Landlock rules let it (SPEC.md §5); there is no protocol.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "project/project_files.h"
#include "runtime/tool_runtime.h"
#include "sandbox/launcher.h"
#include "runtime/confined_launch.h"
#include "sandbox/sandbox_profile.h"

namespace toolvfs {

struct StdioRuntimeOptions {
  // The OS sandbox of its processes (SPEC.md §5): the mode, what to warn
  // about, and the config file that must stay out of their reach.
  ConfinementOptions confinement;
  // More stdout than this fails the run (the process is killed).
  size_t max_stdout_bytes = size_t{10} << 20;
};

// How a stdio tool's process ended, with what it printed.
struct StdioCapture {
  std::string stdout_text;
  std::string stderr_tail;  // the last 64 KiB, valid UTF-8
  ExitStatus exit;
};

// The outcome a finished stdio tool's output describes (SPEC.md §6.3). The
// whole stdout is parsed as one JSON value, whatever the exit status:
//  {"type":"success","content":C}   C a string or content blocks;
//  {"type":"error","message":M,"trace"?:[...]|"...","transient"?:bool};
//  {"type":"needs_input","question":{"id","text","answer_type":"Boolean"|
//    "Text"|"Select"|{"Select":{"options":[...]}},"options"?,"default"?}};
//  {"content":[blocks],"isError"?:bool}   (the MCP result envelope).
// A JSON object with "type" success/error/needs_input or "content" that is
// malformed is a failure (kInternal) naming what is wrong. Anything else is
// raw text: exit 0 → a completed run with stdout as one text block (none
// when empty); otherwise an error whose content is stdout and whose
// message is the exit status and stderr's last line ("exited with status
// 4: bad input"), the trace holding stderr's last lines.
Outcome ParseStdioOutput(const StdioCapture& capture, std::string_view tool_name);

class StdioRuntime : public ToolRuntime {
 public:
  // `project` must outlive the runtime.
  StdioRuntime(ProjectFiles& project, StdioRuntimeOptions options);

  // Validates call.arguments_json against tool.parameters
  // (ValidateArguments; a tool without `parameters` takes any JSON value
  // unchecked), renders tool.command (RenderCommand) with the
  // context {tool: {name, arguments, answers, options}, context: {action:
  // "run", root}}, and runs it with the project's real directory
  // (materialized for stores without one; synced back afterwards) as its
  // working directory, as ToolKind::kStdio under the tool's policy, with the
  // fixed environment (PATH, LANG, private HOME and TMPDIR). stdin is
  // closed; stdout is read whole (over max_stdout_bytes fails the run);
  // stderr's tail is kept. limits.timeout_s ends the run with kTimeout;
  // cancelling sends SIGTERM to the process group, SIGKILL after
  // limits.cancel_grace_s. Returns an error Status, one line, for invalid
  // arguments, a bad template, or a process that cannot start.
  Result<Outcome> Execute(const ToolCall& call, const ToolConfig& tool, CancelToken& cancel) override;

 private:
  ProjectFiles& project_;
  StdioRuntimeOptions options_;
};

}  // namespace toolvfs
