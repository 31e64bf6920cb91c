// A runtime decorator that keeps a session workspace's quota honest for
// tools that change the workspace past SessionWorkspace: a stdio or MCP
// tool's materialized copy synced back, a vfs tool's fs.write, a generic
// builtin such as move_file (docs/sessions.md, "Quota").
//
// Those changes are checked after they land, not refused on the way: the
// sync-back of a copy is each store's own transaction, judged path by path
// (CopyChangeFilter) without sizes. After each call the session is counted
// again by a walk; when it is over its quota the outcome becomes an error
// naming the limit (the changes are kept), and from then on every session
// write that adds to the workspace is refused until files are deleted.
#pragma once

#include <memory>
#include <string_view>

#include "project/project_files.h"
#include "runtime/tool_runtime.h"

namespace toolvfs {

class SessionQuotaRuntime final : public ToolRuntime {
 public:
  // `inner` and `session_files` (a session workspace's store) must outlive
  // this object.
  SessionQuotaRuntime(ToolRuntime& inner, ProjectFiles& session_files) : inner_(inner), files_(session_files) {}

  Result<Outcome> Execute(const ToolCall& call, const ToolConfig& tool, CancelToken& cancel) override;
  // Forwarded unchecked: the live run's changes are counted when the
  // session next counts itself (a later call through this runtime).
  Result<std::unique_ptr<StatefulRun>> Start(const ToolCall& call, const ToolConfig& tool,
                                             CancelToken& cancel) override;
  const ConfigValue::Object& Parameters(const ToolConfig& tool) const override { return inner_.Parameters(tool); }

 private:
  ToolRuntime& inner_;
  ProjectFiles& files_;
};

// Whether a call of the tool `tool_name` (`builtin`: a builtin) may change a
// session workspace past SessionWorkspace, so that its quota is counted
// after it: every tool but the session suite and the snapshot tools, which
// go through SessionWorkspace themselves, and the generic builtins that
// only read.
bool ChangesSessionPastItsLayer(bool builtin, std::string_view tool_name);

// Whether calls of `tool_name` on `project` go through SessionQuotaRuntime:
// the project is a session workspace and the tool may change it past the
// session layer (ChangesSessionPastItsLayer).
Result<bool> CountsSessionQuotaAfter(ProjectFiles& project, bool builtin, std::string_view tool_name);

// `outcome` of a call that may have changed the session in `session_files`
// past SessionWorkspace, made an error naming the limit when the session is
// now over its quota (the decorator's check, for callers that hold the
// runtime themselves).
Result<Outcome> CheckSessionQuotaAfter(ProjectFiles& session_files, Result<Outcome> outcome);

}  // namespace toolvfs
