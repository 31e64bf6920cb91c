#include "runtime/builtin_runtime.h"

namespace toolvfs {

const std::vector<BuiltinToolInfo>& BuiltinTools() {
  static const std::vector<BuiltinToolInfo> tools;
  return tools;
}

const BuiltinToolInfo* FindBuiltinTool(std::string_view name) {
  for (const BuiltinToolInfo& tool : BuiltinTools()) {
    if (tool.name == name) return &tool;
  }
  return nullptr;
}

BuiltinRuntime::BuiltinRuntime(ProjectFiles& project, BuiltinRuntimeOptions options)
    : project_(project), options_(std::move(options)) {}

Result<Outcome> BuiltinRuntime::Execute(const ToolCall& call, const ToolConfig& tool, CancelToken& cancel) {
  (void)call;
  (void)cancel;
  return Status(StatusCode::kUnsupported, "Tool '" + tool.name + "': the builtin runtime is being built");
}

}  // namespace toolvfs
