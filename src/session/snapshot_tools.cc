#include "session/snapshot_tools.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "core/text.h"
#include "protocol/json_writer.h"
#include "session/tool_support.h"

namespace toolvfs {
namespace {

// Paths a snapshot_diff or snapshot_restore result lists per kind at most;
// the counts are always complete. Keeps one answer within what a model
// can read.
constexpr size_t kListedPaths = 200;

// Sorted by name. The descriptions are what a model reads before it picks a
// tool: what it is for, what it returns and how it fails.
const std::vector<SnapshotToolInfo> kTools = {
    {"snapshot_create",
     "Save the current state of every file in the workspace as a snapshot, to come back to with "
     "snapshot_restore. Take one before a risky change (a large refactor, deleting files). Cheap: it "
     "costs what changed since the last one, not the workspace's size. Returns JSON {id, label, "
     "created_at}; keep the id.",
     R"json({"label":{"type":"string","maxLength":255,"description":"A short note saying what the snapshot is for, e.g. \"before renaming the API\""}})json",
     false},
    {"snapshot_diff",
     "List the paths that differ between two snapshots, or between a snapshot and the workspace now. "
     "Use it to review your changes before restoring or finishing. With no arguments: from the most "
     "recent snapshot to now. Returns JSON {from, to, added, modified, deleted} (each a sorted list of "
     "paths, at most 200 shown, with added_count, modified_count, deleted_count). Fails if an id is "
     "unknown or there is no snapshot yet.",
     R"json({"from":{"type":"string","description":"Snapshot id to compare from; default: the most recent snapshot"},
         "to":{"type":"string","description":"Snapshot id to compare to; default: the workspace as it is now"}})json",
     false},
    {"snapshot_list",
     "List the workspace's snapshots, oldest first. Returns JSON {snapshots: [{id, label, created_at}]}.",
     R"json({})json", false},
    {"snapshot_restore",
     "Put every file of the workspace back as it was in a snapshot: files created since are removed, "
     "deleted and changed ones come back with their versions. The snapshot itself stays, so you can "
     "restore it again. Everything changed since it was taken is lost unless you take a snapshot first. "
     "Returns JSON {id, label, created_at, removed, restored, reverted} (the counts of paths undone). "
     "Fails if the id is unknown.",
     R"json({"id":{"type":"string","required":true,"description":"The id snapshot_create or snapshot_list gave"}})json",
     true},
};

void WriteSnapshot(JsonWriter& writer, const SnapshotInfo& info) {
  WriteJsonKey(writer, "id");
  writer.String(info.id);
  WriteJsonKey(writer, "label");
  if (info.label) {
    writer.String(*info.label);
  } else {
    writer.Null();
  }
  WriteJsonKey(writer, "created_at");
  writer.String(FormatTimestamp(info.created_ms));
}

void WritePaths(JsonWriter& writer, std::string_view name, const std::vector<std::string>& paths) {
  WriteJsonKey(writer, name);
  writer.StartArray();
  for (size_t i = 0; i < paths.size() && i < kListedPaths; ++i) writer.String(paths[i]);
  writer.EndArray();
  WriteJsonKey(writer, std::string(name) + "_count");
  writer.Uint64(paths.size());
}

// Both layers answer the same questions; a session keeps its mounts and
// records in order around them.
class Snapshots {
 public:
  Snapshots(ProjectFiles& files, SessionWorkspace* session) : files_(files), session_(session) {}

  Result<std::string> Create(std::optional<std::string_view> label) {
    return session_ ? session_->Snapshot(label) : files_.Snapshot(label);
  }
  // Restores `id` after `check` accepted every path it changes; returns the
  // change undone. In a session every path the restore changes was
  // checked (SessionWorkspace::RestoreChecked); on a plain store the diff,
  // the check and the restore are each atomic on their own, and a write by
  // another process between the diff and the restore is undone unchecked
  // (docs/sessions.md, "Snapshot tools").
  Result<TreeDiff> Restore(std::string_view id, const RestoreCheck& check) {
    if (session_) return session_->RestoreChecked(id, check);
    TOOLVFS_ASSIGN_OR_RETURN(TreeDiff undone, files_.Diff(id, std::nullopt));
    if (check) TOOLVFS_RETURN_IF_ERROR(check(ChangedPaths(undone)));
    TOOLVFS_RETURN_IF_ERROR(files_.Restore(id));
    return undone;
  }
  Result<std::vector<SnapshotInfo>> List() { return session_ ? session_->Snapshots() : files_.ListSnapshots(); }
  Result<TreeDiff> Diff(std::string_view from, std::optional<std::string_view> to) {
    return session_ ? session_->Diff(from, to) : files_.Diff(from, to);
  }

  // The snapshot `id`; NotFound naming it and the ids there are.
  Result<SnapshotInfo> Find(std::string_view id) {
    TOOLVFS_ASSIGN_OR_RETURN(std::vector<SnapshotInfo> list, List());
    for (SnapshotInfo& info : list) {
      if (info.id == id) return std::move(info);
    }
    return NotFoundError("There is no snapshot " + Quote(id) + Known(list));
  }

  static std::string Known(const std::vector<SnapshotInfo>& list) {
    if (list.empty()) return "; there are no snapshots yet (snapshot_create takes one)";
    std::string ids;
    for (const SnapshotInfo& info : list) ids += (ids.empty() ? "" : ", ") + info.id;
    return "; the snapshots are " + ids;
  }

 private:
  ProjectFiles& files_;
  SessionWorkspace* session_;
};

Result<std::string> CreateTool(Snapshots& snapshots, const ConfigValue::Object& arguments) {
  std::optional<std::string_view> label = StringArgument(arguments, "label");
  TOOLVFS_ASSIGN_OR_RETURN(std::string id, snapshots.Create(label));
  TOOLVFS_ASSIGN_OR_RETURN(SnapshotInfo info, snapshots.Find(id));
  rapidjson::StringBuffer buffer;
  JsonWriter writer(buffer);
  writer.StartObject();
  WriteSnapshot(writer, info);
  writer.EndObject();
  return JsonText(buffer);
}

Result<std::string> RestoreTool(Snapshots& snapshots, const ConfigValue::Object& arguments,
                                const RestoreCheck& check) {
  const std::string_view id = StringArgument(arguments, "id").value_or("");
  TOOLVFS_ASSIGN_OR_RETURN(SnapshotInfo info, snapshots.Find(id));
  // What the restore undid, for the answer: the change from the snapshot
  // to then (proportional to the change, like the restore itself).
  TOOLVFS_ASSIGN_OR_RETURN(TreeDiff undone, snapshots.Restore(id, check));
  rapidjson::StringBuffer buffer;
  JsonWriter writer(buffer);
  writer.StartObject();
  WriteSnapshot(writer, info);
  WriteJsonKey(writer, "removed");
  writer.Uint64(undone.added.size());
  WriteJsonKey(writer, "restored");
  writer.Uint64(undone.deleted.size());
  WriteJsonKey(writer, "reverted");
  writer.Uint64(undone.modified.size());
  writer.EndObject();
  return JsonText(buffer);
}

Result<std::string> ListTool(Snapshots& snapshots) {
  TOOLVFS_ASSIGN_OR_RETURN(std::vector<SnapshotInfo> list, snapshots.List());
  rapidjson::StringBuffer buffer;
  JsonWriter writer(buffer);
  writer.StartObject();
  WriteJsonKey(writer, "snapshots");
  writer.StartArray();
  for (const SnapshotInfo& info : list) {
    writer.StartObject();
    WriteSnapshot(writer, info);
    writer.EndObject();
  }
  writer.EndArray();
  writer.EndObject();
  return JsonText(buffer);
}

Result<std::string> DiffTool(Snapshots& snapshots, const ConfigValue::Object& arguments) {
  std::optional<std::string_view> from = StringArgument(arguments, "from");
  std::optional<std::string_view> to = StringArgument(arguments, "to");
  std::string latest;
  if (!from) {
    TOOLVFS_ASSIGN_OR_RETURN(std::vector<SnapshotInfo> list, snapshots.List());
    if (list.empty()) {
      return InvalidArgumentError("snapshot_diff compares from a snapshot, and there are none yet (snapshot_create "
                                  "takes one)");
    }
    latest = list.back().id;
    from = latest;
  }
  // Unknown ids are told with the ids there are.
  TOOLVFS_RETURN_IF_ERROR(snapshots.Find(*from).status());
  if (to) TOOLVFS_RETURN_IF_ERROR(snapshots.Find(*to).status());
  TOOLVFS_ASSIGN_OR_RETURN(TreeDiff diff, snapshots.Diff(*from, to));
  rapidjson::StringBuffer buffer;
  JsonWriter writer(buffer);
  writer.StartObject();
  WriteJsonKey(writer, "from");
  writer.String(*from);
  WriteJsonKey(writer, "to");
  writer.String(to ? *to : "current");
  WritePaths(writer, "added", diff.added);
  WritePaths(writer, "modified", diff.modified);
  WritePaths(writer, "deleted", diff.deleted);
  writer.EndObject();
  return JsonText(buffer);
}

}  // namespace

const std::vector<SnapshotToolInfo>& SnapshotTools() { return kTools; }

const SnapshotToolInfo* FindSnapshotTool(std::string_view name) { return FindToolNamed(kTools, name); }

Result<std::string> RunSnapshotTool(ProjectFiles& files, SessionWorkspace* session, std::string_view tool,
                                    const ConfigValue::Object& arguments, const RestoreCheck& restore_check) {
  Snapshots snapshots(files, session);
  Result<std::string> result = [&]() -> Result<std::string> {
    if (tool == "snapshot_create") return CreateTool(snapshots, arguments);
    if (tool == "snapshot_restore") return RestoreTool(snapshots, arguments, restore_check);
    if (tool == "snapshot_list") return ListTool(snapshots);
    if (tool == "snapshot_diff") return DiffTool(snapshots, arguments);
    return InvalidArgumentError("There is no snapshot tool " + Quote(tool) +
                                "; they are snapshot_create, snapshot_diff, snapshot_list, snapshot_restore");
  }();
  if (!result.ok() && result.status().code() == StatusCode::kUnsupported) {
    return Status(StatusCode::kUnsupported, std::string(tool) + ": " + result.status().message());
  }
  return result;
}

}  // namespace toolvfs
