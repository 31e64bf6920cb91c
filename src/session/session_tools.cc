#include "session/session_tools.h"

#include <algorithm>

#include "core/io.h"
#include "core/text.h"
#include "protocol/json_writer.h"
#include "session/tool_support.h"

namespace toolvfs {
namespace {

// Sorted by name. The descriptions are what a model reads before it picks a
// tool: they say what the tool is for, what it returns and how it fails.
const std::vector<SessionToolInfo> kTools = {
    {"delete_file",
     "Delete a file from the session workspace, or a directory with every file under it. Paths are "
     "relative (no leading '/', no '.' or '..'). Deleting 'a/b' never touches 'a/bc'. Fails if nothing is at "
     "the path; the workspace root cannot be deleted. Returns JSON {path, deleted_files, was_directory}.",
     R"json({"path":{"type":"string","required":true,"description":"Relative path of the file or directory to delete, e.g. \"notes/old.md\""}})json",
     true},
    {"list_directory",
     "List one directory of the session workspace (not recursive), sorted by name. Use it to explore "
     "before reading or writing; list only the directories you need. Returns JSON {path, entries: [{name, "
     "type: \"file\"|\"directory\"}]}. Fails if the path is a file or does not exist.",
     R"json({"path":{"type":"string","description":"Relative path of the directory; omit it for the workspace root"}})json",
     false},
    {"read_file",
     "Read a file of the session workspace with its metadata: JSON {path, content, encoding (\"utf-8\" or "
     "\"binary\"; binary content is base64), version, created_at, updated_at, size_bytes, total_lines, "
     "offset, lines_returned}. For text, offset (first line, 1-based) and limit (at most 2000 lines) read a "
     "window of a long file. Pass the version you read as expected_version when you write the file back. "
     "Fails if the file does not exist.",
     R"json({"path":{"type":"string","required":true,"description":"Relative path of the file, e.g. \"src/main.py\""},
         "offset":{"type":"integer","minimum":1,"description":"First line to return (1-based); text files only"},
         "limit":{"type":"integer","minimum":1,"maximum":2000,"description":"Lines to return at most (up to 2000); text files only"}})json",
     false},
    {"write_file",
     "Write a file of the session workspace; parent directories are created as needed. mode \"create\" "
     "(the default) makes a new file and fails if it exists; \"overwrite\" replaces and \"append\" extends an "
     "existing file and fail if it does not exist. Give expected_version (the version read_file returned) "
     "to make the write fail instead of overwriting someone else's change. Text is at most 48,000 "
     "characters per write by default; binary content goes base64-encoded with encoding \"binary\". Returns "
     "JSON {path, action, version, size_bytes}.",
     R"json({"path":{"type":"string","required":true,"description":"Relative path of the file, e.g. \"notes/plan.md\""},
         "content":{"type":"string","required":true,"description":"The text to write, or base64 with encoding \"binary\""},
         "mode":{"type":"string","enum":["create","overwrite","append"],"default":"create","description":"create a new file, overwrite or append to an existing one"},
         "encoding":{"type":"string","enum":["utf-8","binary"],"default":"utf-8","description":"utf-8 for text; binary for base64-encoded bytes"},
         "expected_version":{"type":"integer","minimum":1,"description":"Fail unless the file is at this version (the one you read)"}})json",
     true},
};

// The `path` argument; "" (the root) when absent.
std::string_view PathArgument(const ConfigValue::Object& arguments) {
  return StringArgument(arguments, "path").value_or("");
}

std::optional<uint64_t> UnsignedArgument(const ConfigValue::Object& arguments, std::string_view name) {
  auto found = arguments.find(name);
  if (found == arguments.end() || !found->second.is_integer() || found->second.as_integer() < 0) {
    return std::nullopt;
  }
  return static_cast<uint64_t>(found->second.as_integer());
}

void WriteInfo(JsonWriter& writer, const SessionFileInfo& info) {
  WriteJsonKey(writer, "path");
  writer.String(info.path);
  WriteJsonKey(writer, "version");
  writer.Uint64(info.version);
  WriteJsonKey(writer, "created_at");
  writer.String(FormatTimestamp(info.created_ms));
  WriteJsonKey(writer, "updated_at");
  writer.String(FormatTimestamp(info.updated_ms));
  WriteJsonKey(writer, "encoding");
  writer.String(SessionEncodingName(info.encoding));
  WriteJsonKey(writer, "size_bytes");
  writer.Uint64(info.size_bytes);
}

Result<std::string> ListDirectoryTool(SessionWorkspace& session, const ConfigValue::Object& arguments) {
  const std::string_view path = PathArgument(arguments);
  TOOLVFS_ASSIGN_OR_RETURN(std::vector<SessionEntry> entries, session.ListDirectory(path));
  TOOLVFS_ASSIGN_OR_RETURN(std::string normalized, session.CheckPath(path, true));
  rapidjson::StringBuffer buffer;
  JsonWriter writer(buffer);
  writer.StartObject();
  WriteJsonKey(writer, "path");
  writer.String(normalized);
  WriteJsonKey(writer, "entries");
  writer.StartArray();
  for (const SessionEntry& entry : entries) {
    writer.StartObject();
    WriteJsonKey(writer, "name");
    writer.String(entry.name);
    WriteJsonKey(writer, "type");
    writer.String(entry.is_directory ? "directory" : "file");
    writer.EndObject();
  }
  writer.EndArray();
  writer.EndObject();
  return JsonText(buffer);
}

Result<std::string> ReadFileTool(SessionWorkspace& session, const ConfigValue::Object& arguments) {
  TOOLVFS_ASSIGN_OR_RETURN(SessionRead read,
                           session.ReadFile(PathArgument(arguments), UnsignedArgument(arguments, "offset"),
                                            UnsignedArgument(arguments, "limit")));
  rapidjson::StringBuffer buffer;
  JsonWriter writer(buffer);
  writer.StartObject();
  WriteInfo(writer, read.info);
  WriteJsonKey(writer, "content");
  writer.String(read.content);
  if (read.info.encoding == SessionEncoding::kUtf8) {
    WriteJsonKey(writer, "total_lines");
    writer.Uint64(read.total_lines);
    WriteJsonKey(writer, "offset");
    writer.Uint64(read.first_line);
    WriteJsonKey(writer, "lines_returned");
    writer.Uint64(read.lines_returned);
  }
  writer.EndObject();
  return JsonText(buffer);
}

Result<std::string> WriteFileTool(SessionWorkspace& session, const ConfigValue::Object& arguments) {
  SessionWrite write;
  write.path = PathArgument(arguments);
  write.content = StringArgument(arguments, "content").value_or("");
  const std::string_view mode = StringArgument(arguments, "mode").value_or("");
  TOOLVFS_ASSIGN_OR_RETURN(write.mode, ParseSessionWriteMode(mode.empty() ? "create" : mode));
  const std::string_view encoding = StringArgument(arguments, "encoding").value_or("");
  TOOLVFS_ASSIGN_OR_RETURN(write.encoding, ParseSessionEncoding(encoding.empty() ? "utf-8" : encoding));
  write.expected_version = UnsignedArgument(arguments, "expected_version");
  TOOLVFS_ASSIGN_OR_RETURN(SessionWriteResult result, session.WriteFile(write));
  rapidjson::StringBuffer buffer;
  JsonWriter writer(buffer);
  writer.StartObject();
  WriteJsonKey(writer, "action");
  writer.String(result.mode == SessionWriteMode::kCreate      ? "created"
                : result.mode == SessionWriteMode::kOverwrite ? "overwritten"
                                                              : "appended");
  WriteInfo(writer, result.info);
  writer.EndObject();
  return JsonText(buffer);
}

Result<std::string> DeleteFileTool(SessionWorkspace& session, const ConfigValue::Object& arguments,
                                   const SessionWorkspace::DeleteCheck& check) {
  TOOLVFS_ASSIGN_OR_RETURN(SessionDeleteResult result, session.DeleteFile(PathArgument(arguments), check));
  rapidjson::StringBuffer buffer;
  JsonWriter writer(buffer);
  writer.StartObject();
  WriteJsonKey(writer, "path");
  writer.String(result.path);
  WriteJsonKey(writer, "deleted_files");
  writer.Uint64(result.files_deleted);
  WriteJsonKey(writer, "was_directory");
  writer.Bool(result.was_directory);
  writer.EndObject();
  return JsonText(buffer);
}

}  // namespace

const std::vector<SessionToolInfo>& SessionTools() { return kTools; }

const SessionToolInfo* FindSessionTool(std::string_view name) { return FindToolNamed(kTools, name); }

std::optional<std::string_view> StringArgument(const ConfigValue::Object& arguments, std::string_view name) {
  auto found = arguments.find(name);
  if (found == arguments.end() || !found->second.is_string()) return std::nullopt;
  return found->second.as_string();
}

const SessionToolInfo* FindToolNamed(const std::vector<SessionToolInfo>& tools, std::string_view name) {
  for (const SessionToolInfo& tool : tools) {
    if (tool.name == name) return &tool;
  }
  return nullptr;
}

Result<SessionToolTarget> SessionToolTargetOf(const SessionWorkspace& session, std::string_view tool,
                                              const ConfigValue::Object& arguments) {
  SessionToolTarget target;
  TOOLVFS_ASSIGN_OR_RETURN(target.path, session.CheckPath(PathArgument(arguments), /*allow_root=*/true));
  if (tool == "write_file") {
    const std::string_view mode = StringArgument(arguments, "mode").value_or("");
    target.mode = std::string(mode.empty() ? "create" : mode);
  }
  return target;
}

Result<std::string> RunSessionTool(SessionWorkspace& session, std::string_view tool,
                                   const ConfigValue::Object& arguments,
                                   const SessionWorkspace::DeleteCheck& delete_check) {
  if (tool == "list_directory") return ListDirectoryTool(session, arguments);
  if (tool == "read_file") return ReadFileTool(session, arguments);
  if (tool == "write_file") return WriteFileTool(session, arguments);
  if (tool == "delete_file") return DeleteFileTool(session, arguments, delete_check);
  return InvalidArgumentError("There is no session tool " + Quote(tool) +
                              "; the session tools are delete_file, list_directory, read_file, write_file");
}

Result<std::string> SessionGuidance(SessionWorkspace& session) {
  const SessionWorkspaceLimits& limits = session.settings().limits;
  std::string text =
      "## Session workspace\n\n"
      "You have a private workspace of files for this session, reached only through the tools "
      "list_directory, read_file, write_file and delete_file. Paths are relative to the workspace root, "
      "without a leading '/' and without '.' or '..'.\n\n"
      "1. The workspace starts empty, except for the host folders the orchestrator mounted (listed "
      "below). Create the files you need with write_file.\n"
      "2. Mounts are fixed when the session is created: you cannot bring in more host folders from a "
      "tool.\n"
      "3. Explore with list_directory before you read or write; list only the directories you need, "
      "listings are not recursive.\n"
      "4. Read a file with read_file when you need its content, and base your edit on the version it "
      "returned: pass that version as expected_version to write_file, which then refuses to overwrite a "
      "newer change.\n"
      "5. Keep writes concise: write whole files with mode \"overwrite\" rather than many appends (append "
      "is for logs). Binary content is possible (base64, encoding \"binary\") but keep it small and "
      "deliberate. One write holds at most " +
      std::to_string(limits.max_content_chars) +
      " characters.\n"
      "6. Delete files and directories you no longer need with delete_file when your work is done, so "
      "snapshots of the workspace stay small.\n"
      "7. Do not copy large repositories or binary assets into the workspace; the size limits apply to "
      "everything: the whole workspace holds at most " +
      FormatBytes(limits.max_total_bytes) + " in at most " + std::to_string(limits.max_files) + " files.\n";
  const std::vector<SessionMount>& mounts = session.settings().mounts;
  if (mounts.empty()) {
    text += "\nNo host folders are mounted.\n";
    return text;
  }
  text += "\n### Mounted host folders\n";
  constexpr size_t kShownEntries = 20;
  for (const SessionMount& mount : mounts) {
    std::string where = mount.mount_path.empty() ? "the workspace root" : "`" + mount.mount_path + "`";
    text += "\n- " + where + " (from the host folder " + mount.host_path + ")";
    Result<std::vector<SessionEntry>> entries = session.ListDirectory(mount.mount_path);
    if (!entries.ok()) {
      text += ": not loaded (" + entries.status().message() + ")\n";
      continue;
    }
    text += entries->empty() ? ": empty\n" : ":\n";
    for (size_t i = 0; i < entries->size() && i < kShownEntries; ++i) {
      const SessionEntry& entry = (*entries)[i];
      std::string path = mount.mount_path.empty() ? entry.name : mount.mount_path + "/" + entry.name;
      text += "  - " + path + (entry.is_directory ? "/" : "") + "\n";
    }
    if (entries->size() > kShownEntries) {
      text += "  - … and " + std::to_string(entries->size() - kShownEntries) + " more\n";
    }
  }
  return text;
}

std::string SessionFilesJson(const std::vector<SessionFileInfo>& files) {
  rapidjson::StringBuffer buffer;
  JsonWriter writer(buffer);
  writer.StartArray();
  for (const SessionFileInfo& info : files) {
    writer.StartObject();
    WriteInfo(writer, info);
    writer.EndObject();
  }
  writer.EndArray();
  return JsonText(buffer);
}

}  // namespace toolvfs
