#include "runtime/vfs_runtime.h"

namespace toolvfs {

VfsRuntime::VfsRuntime(ProjectFiles& project, VfsRuntimeOptions options)
    : project_(project), options_(std::move(options)) {}

Result<Outcome> VfsRuntime::Execute(const ToolCall&, const ToolConfig&, CancelToken&) {
  return Status(StatusCode::kInternal, "vfs runtime: in progress");
}

}  // namespace toolvfs
