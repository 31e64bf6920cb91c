// The builtin runtime (SPEC.md §6.4, docs/runtimes.md): tools that run in
// the host process and act on the ProjectFiles store under the calling
// tool's policy, inquiry and audit, like a vfs tool's requests do. No
// process, no sandbox: the policy is the only boundary, so every file a
// builtin touches goes through the same decision point (AccessGate).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "config/config_value.h"
#include "policy/audit.h"
#include "policy/inquirer.h"
#include "project/project_files.h"
#include "runtime/tool_runtime.h"

namespace toolvfs {

// One builtin tool as it is listed and validated: the schema is declared
// once and used for both.
struct BuiltinToolInfo {
  std::string name;
  std::string description;
  ConfigValue::Object parameters;  // name -> schema, as a config's `parameters`
};

// Every builtin tool, sorted by name.
const std::vector<BuiltinToolInfo>& BuiltinTools();

// The builtin named `name`, or null.
const BuiltinToolInfo* FindBuiltinTool(std::string_view name);

struct BuiltinRuntimeOptions {
  // Asked about requests the policy does not cover; null: such requests are
  // denied (non-interactive). Not owned.
  Inquirer* inquirer = nullptr;
  // Receives one audit record per decided file access; null: none. Not owned.
  AuditSink* audit = nullptr;
  // The project path of the toolvfs.toml in use (a sensitive path).
  std::optional<std::string> config_project_path;
};

class BuiltinRuntime final : public ToolRuntime {
 public:
  // `project` must outlive the runtime.
  BuiltinRuntime(ProjectFiles& project, BuiltinRuntimeOptions options);

  // Runs the builtin named by the tool's config name under the tool's
  // policy. An unknown builtin fails to start (an error Status naming the
  // known ones); invalid arguments too.
  Result<Outcome> Execute(const ToolCall& call, const ToolConfig& tool, CancelToken& cancel) override;

 private:
  ProjectFiles& project_;
  BuiltinRuntimeOptions options_;
};

}  // namespace toolvfs
