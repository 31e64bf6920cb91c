#include "runtime/session_quota_runtime.h"

#include <memory>
#include <utility>

#include "runtime/builtin_runtime.h"
#include "runtime/stateful_tool.h"
#include "session/session_tools.h"
#include "session/session_workspace.h"
#include "session/snapshot_tools.h"

namespace toolvfs {

bool ChangesSessionPastItsLayer(bool builtin, std::string_view tool_name) {
  if (!builtin) return true;
  if (FindSessionTool(tool_name) != nullptr || FindSnapshotTool(tool_name) != nullptr) return false;
  // The generic builtins that read (file_info, grep_files) change nothing:
  // no walk after them.
  const BuiltinToolInfo* generic = FindBuiltinTool(tool_name);
  return generic == nullptr || generic->method == "fs.write" || generic->method == "fs.delete" ||
         generic->method == "fs.rename";
}

Result<bool> CountsSessionQuotaAfter(ProjectFiles& project, bool builtin, std::string_view tool_name) {
  if (!ChangesSessionPastItsLayer(builtin, tool_name)) return false;
  return SessionWorkspace::IsSession(project);
}

Result<Outcome> CheckSessionQuotaAfter(ProjectFiles& session_files, Result<Outcome> outcome) {
  // Counted whatever the outcome: a tool that failed or was cancelled may
  // have had its copy synced back all the same.
  TOOLVFS_ASSIGN_OR_RETURN(std::unique_ptr<SessionWorkspace> session, SessionWorkspace::Open(session_files));
  Status within = session->RecountAfterOutsideChange();
  if (within.ok() || !outcome.ok()) return outcome;
  if (within.code() != StatusCode::kTooLarge) return within;
  Outcome over = std::move(outcome).value();
  over.content.push_back(ContentBlock::Text(within.message()));
  over.is_error = true;
  if (over.error) {
    over.error->message += "; " + within.message();
  } else {
    over.error = ToolError{within.message(), {}, false};
  }
  return over;
}

Result<Outcome> SessionQuotaRuntime::Execute(const ToolCall& call, const ToolConfig& tool, CancelToken& cancel) {
  return CheckSessionQuotaAfter(files_, inner_.Execute(call, tool, cancel));
}

Result<std::unique_ptr<StatefulRun>> SessionQuotaRuntime::Start(const ToolCall& call, const ToolConfig& tool,
                                                                CancelToken& cancel) {
  return inner_.Start(call, tool, cancel);
}

}  // namespace toolvfs
