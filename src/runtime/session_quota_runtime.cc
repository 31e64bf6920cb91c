// The decorator itself. What it asks of the session is in
// session_quota_check.cc: host/tool_session.h (through stateful_tool.h,
// needed here to forward Start) and session/session_workspace.h each
// declare a SessionLimits of their own, so no file includes both.
#include "runtime/session_quota_runtime.h"

#include "runtime/stateful_tool.h"

namespace toolvfs {

Result<Outcome> SessionQuotaRuntime::Execute(const ToolCall& call, const ToolConfig& tool, CancelToken& cancel) {
  return CheckSessionQuotaAfter(files_, inner_.Execute(call, tool, cancel));
}

Result<std::unique_ptr<StatefulRun>> SessionQuotaRuntime::Start(const ToolCall& call, const ToolConfig& tool,
                                                                CancelToken& cancel) {
  return inner_.Start(call, tool, cancel);
}

}  // namespace toolvfs
