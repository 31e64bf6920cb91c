// The snapshot tools: snapshot_create, snapshot_restore, snapshot_list and
// snapshot_diff, as a model sees them (schemas, descriptions) and as they
// run on a project store, or on a session workspace through its
// SessionWorkspace (mounts applied first, the session's own records kept
// out of diffs, its record carried across a restore). The builtin runtime
// and through it the MCP server call this code (docs/sessions.md,
// "Snapshot tools").
//
// On a store that keeps no snapshots (fs:, null:) every tool answers the
// store's Unsupported error, naming the project: the tools are listed on
// every project, so that a config and an MCP listing do not change with
// the store behind them, and a model that calls one learns at once why it
// cannot (docs/sessions.md records the decision).
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config_value.h"
#include "core/status.h"
#include "project/project_files.h"
#include "session/session_tools.h"
#include "session/session_workspace.h"

namespace toolvfs {

// Name, description, schema as for the session tools; `writes`: the tool
// changes files, and each path it changes is judged as a write.
using SnapshotToolInfo = SessionToolInfo;

// The four tools, sorted by name.
const std::vector<SnapshotToolInfo>& SnapshotTools();
// The one named `name`, or null.
const SnapshotToolInfo* FindSnapshotTool(std::string_view name);

// Called by snapshot_restore with every path the restore would change
// (added, changed or deleted since the snapshot), before it changes any;
// an error refuses the restore, which then changes nothing. In a session
// it runs outside the session's lock (it may wait for the user); the diff
// is taken again under the lock with the restore, and any path the check
// has not seen is checked before anything changes
// (SessionWorkspace::RestoreChecked). The builtin runtime judges the
// paths as writes, with one question for those the policy leaves open.
using RestoreCheck = PathsCheck;

// Runs the snapshot tool `tool` with checked `arguments` (types as the
// schema says) on `files`, or on `session` (whose store is `files`) when
// it is not null, and returns its result as compact JSON text. Errors:
// Unsupported for a store without snapshots, NotFound naming an unknown
// snapshot id, InvalidArgument for a bad label or snapshot_diff with no
// snapshot to start from; a refused call changes nothing.
Result<std::string> RunSnapshotTool(ProjectFiles& files, SessionWorkspace* session, std::string_view tool,
                                    const ConfigValue::Object& arguments, const RestoreCheck& restore_check = nullptr);

}  // namespace toolvfs
