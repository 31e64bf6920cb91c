#include "mcp/mcp_tool_metadata.h"

namespace toolvfs {
namespace {

// The output schemas, one per result shape. Properties that a result may
// leave out are not required; clients validate structuredContent against
// these (the TypeScript SDK does, with ajv), so they say no more than the
// code that writes the results guarantees.
constexpr std::string_view kFileInfoSchema =
    R"({"type":"object","properties":{"kind":{"type":"string","enum":["file","dir","symlink"]},)"
    R"("size":{"type":"integer","minimum":0},"modified":{"type":"string"}},"required":["kind","size"]})";

constexpr std::string_view kListDirectorySchema =
    R"({"type":"object","properties":{"entries":{"type":"array","items":{"type":"object","properties":)"
    R"({"path":{"type":"string"},"kind":{"type":"string","enum":["file","dir","symlink"]}},)"
    R"("required":["path","kind"]}},"total":{"type":"integer","minimum":0}},"required":["entries","total"]})";

constexpr std::string_view kGrepSchema =
    R"({"type":"object","properties":{"matches":{"type":"array","items":{"type":"object","properties":)"
    R"({"path":{"type":"string"},"lines":{"type":"array","items":{"type":"object","properties":)"
    R"({"line_number":{"type":"integer"},"content":{"type":"string"},"is_match":{"type":"boolean"}},)"
    R"("required":["line_number","content"]}}},"required":["path","lines"]}},"truncated":{"type":"boolean"},)"
    R"("truncated_by":{"type":"string"}},"required":["matches","truncated"]})";

// The session suite (session/session_tools.cc): a file's info, then what
// each tool adds.
#define TOOLVFS_SESSION_FILE_INFO                                                                   \
  R"("path":{"type":"string"},"version":{"type":"integer","minimum":0},"created_at":{"type":"string"},)" \
  R"("updated_at":{"type":"string"},"encoding":{"type":"string","enum":["utf-8","base64"]},)"           \
  R"("size_bytes":{"type":"integer","minimum":0})"
#define TOOLVFS_SESSION_FILE_INFO_REQUIRED R"("path","version","created_at","updated_at","encoding","size_bytes")"

constexpr std::string_view kSessionListSchema =
    R"({"type":"object","properties":{"path":{"type":"string"},"entries":{"type":"array","items":)"
    R"({"type":"object","properties":{"name":{"type":"string"},"type":{"type":"string","enum":["file","directory"]}},)"
    R"("required":["name","type"]}}},"required":["path","entries"]})";

constexpr std::string_view kSessionReadSchema =
    R"({"type":"object","properties":{)" TOOLVFS_SESSION_FILE_INFO
    R"(,"content":{"type":"string"},"total_lines":{"type":"integer","minimum":0},)"
    R"("offset":{"type":"integer","minimum":0},"lines_returned":{"type":"integer","minimum":0}},)"
    R"("required":[)" TOOLVFS_SESSION_FILE_INFO_REQUIRED R"(,"content"]})";

constexpr std::string_view kSessionWriteSchema =
    R"({"type":"object","properties":{"action":{"type":"string","enum":["created","overwritten","appended"]},)"
    TOOLVFS_SESSION_FILE_INFO R"(},"required":["action",)" TOOLVFS_SESSION_FILE_INFO_REQUIRED R"(]})";

constexpr std::string_view kSessionDeleteSchema =
    R"({"type":"object","properties":{"path":{"type":"string"},"deleted_files":{"type":"integer","minimum":0},)"
    R"("was_directory":{"type":"boolean"}},"required":["path","deleted_files","was_directory"]})";

#undef TOOLVFS_SESSION_FILE_INFO
#undef TOOLVFS_SESSION_FILE_INFO_REQUIRED

// The snapshot tools (session/snapshot_tools.cc, WriteSnapshot and
// WritePaths): a snapshot's id, label (null when none was given) and time.
#define TOOLVFS_SNAPSHOT_INFO                                                               \
  R"("id":{"type":"string"},"label":{"type":["string","null"]},"created_at":{"type":"string"})"
#define TOOLVFS_SNAPSHOT_INFO_REQUIRED R"("id","label","created_at")"
// At most 200 paths listed per kind (kListedPaths); the count is the whole
// number.
#define TOOLVFS_SNAPSHOT_PATHS(kind) \
  R"(")" kind R"(":{"type":"array","items":{"type":"string"}},")" kind R"(_count":{"type":"integer","minimum":0})"

constexpr std::string_view kSnapshotCreateSchema =
    R"({"type":"object","properties":{)" TOOLVFS_SNAPSHOT_INFO R"(},"required":[)" TOOLVFS_SNAPSHOT_INFO_REQUIRED R"(]})";

constexpr std::string_view kSnapshotRestoreSchema =
    R"({"type":"object","properties":{)" TOOLVFS_SNAPSHOT_INFO
    R"(,"removed":{"type":"integer","minimum":0},"restored":{"type":"integer","minimum":0},)"
    R"("reverted":{"type":"integer","minimum":0}},"required":[)" TOOLVFS_SNAPSHOT_INFO_REQUIRED
    R"(,"removed","restored","reverted"]})";

constexpr std::string_view kSnapshotListSchema =
    R"({"type":"object","properties":{"snapshots":{"type":"array","items":{"type":"object","properties":{)"
    TOOLVFS_SNAPSHOT_INFO R"(},"required":[)" TOOLVFS_SNAPSHOT_INFO_REQUIRED R"(]}}},"required":["snapshots"]})";

constexpr std::string_view kSnapshotDiffSchema =
    R"({"type":"object","properties":{"from":{"type":"string"},"to":{"type":"string"},)"
    TOOLVFS_SNAPSHOT_PATHS("added") "," TOOLVFS_SNAPSHOT_PATHS("modified") "," TOOLVFS_SNAPSHOT_PATHS("deleted")
    R"(},"required":["from","to","added","added_count","modified","modified_count","deleted","deleted_count"]})";

#undef TOOLVFS_SNAPSHOT_INFO
#undef TOOLVFS_SNAPSHOT_INFO_REQUIRED
#undef TOOLVFS_SNAPSHOT_PATHS

McpToolAnnotations ReadOnly() { return {.read_only = true, .destructive = false, .idempotent = true, .open_world = false}; }

McpToolAnnotations Changes(bool destructive, bool idempotent) {
  return {.read_only = false, .destructive = destructive, .idempotent = idempotent, .open_world = false};
}

}  // namespace

McpToolTraits BuiltinToolTraits(std::string_view name, bool session_workspace) {
  // Reads.
  if (name == "read_file") return {ReadOnly(), session_workspace ? std::string(kSessionReadSchema) : std::string()};
  if (name == "list_directory") {
    return {ReadOnly(), std::string(session_workspace ? kSessionListSchema : kListDirectorySchema)};
  }
  if (name == "file_info") return {ReadOnly(), std::string(kFileInfoSchema)};
  if (name == "grep_files") return {ReadOnly(), std::string(kGrepSchema)};
  if (name == "snapshot_list") return {ReadOnly(), std::string(kSnapshotListSchema)};
  if (name == "snapshot_diff") return {ReadOnly(), std::string(kSnapshotDiffSchema)};
  // Changes. write_file may overwrite (mode overwrite) and append is not
  // idempotent; a delete or a move repeated finds nothing more to do; a
  // restore replaces the workspace's files; a new snapshot changes none.
  if (name == "write_file") return {Changes(true, false), session_workspace ? std::string(kSessionWriteSchema) : ""};
  if (name == "delete_file") return {Changes(true, true), session_workspace ? std::string(kSessionDeleteSchema) : ""};
  if (name == "move_file") return {Changes(true, true), {}};
  if (name == "snapshot_create") return {Changes(false, false), std::string(kSnapshotCreateSchema)};
  if (name == "snapshot_restore") return {Changes(true, true), std::string(kSnapshotRestoreSchema)};
  return {};
}

McpToolAnnotations AnnotationsFromPolicy(const ToolConfig& tool) {
  const SandboxConfig& sandbox = tool.sandbox;
  const bool writes = sandbox.filesystem_writable.all || !sandbox.filesystem_writable.prefixes.empty();
  McpToolAnnotations annotations;
  annotations.read_only = !writes;
  if (writes) annotations.destructive = true;
  annotations.open_world = !sandbox.network_allow.empty();
  return annotations;
}

}  // namespace toolvfs
