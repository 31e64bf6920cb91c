// ResolveRuntime (SPEC.md §6.2) and the names of the config enums.
#include "config/config.h"

namespace toolvfs {

std::string_view ToolSourceName(ToolSource source) {
  switch (source) {
    case ToolSource::kLocal: return "local";
    case ToolSource::kBuiltin: return "builtin";
    case ToolSource::kMcp: return "mcp";
  }
  return "unknown";
}

std::string_view RuntimeKindName(RuntimeKind runtime) {
  switch (runtime) {
    case RuntimeKind::kStdio: return "stdio";
    case RuntimeKind::kVfs: return "vfs";
    case RuntimeKind::kWasm: return "wasm";
    case RuntimeKind::kBuiltin: return "builtin";
    case RuntimeKind::kMcp: return "mcp";
  }
  return "unknown";
}

Result<RuntimeKind> ResolveRuntime(const ToolConfig& tool) {
  RuntimeKind runtime = RuntimeKind::kStdio;
  switch (tool.source) {
    case ToolSource::kBuiltin: return RuntimeKind::kBuiltin;
    case ToolSource::kMcp: return RuntimeKind::kMcp;
    case ToolSource::kLocal:
      if (tool.runtime) {
        runtime = *tool.runtime;
      } else if (tool.command && tool.command->program.ends_with(".wasm")) {
        runtime = RuntimeKind::kWasm;
      }
      break;
  }
  if (runtime == RuntimeKind::kWasm) {
    // Exactly the wording of SPEC.md §6.2; the name is shown as written
    // (tool names are restricted to [A-Za-z0-9_-]).
    return UnsupportedError("Tool '" + tool.name +
                            "' uses runtime 'wasm', which is not yet supported.");
  }
  return runtime;
}

}  // namespace toolvfs
