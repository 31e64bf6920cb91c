// The session tool suite: list_directory, read_file, write_file and
// delete_file as a model sees them (schemas, descriptions, guidance) and as
// they run on a SessionWorkspace. No CLI and no runtime in between, so the
// builtin runtime, the MCP server and tests call the same code
// (docs/sessions.md, "Tools").
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config_value.h"
#include "core/status.h"
#include "session/session_workspace.h"

namespace toolvfs {

struct SessionToolInfo {
  std::string_view name;
  std::string_view description;      // written for the model
  std::string_view parameters_json;  // name -> schema, as a config's `parameters`
  bool writes = false;               // judged as a write by the policy
};

// The four tools, sorted by name.
const std::vector<SessionToolInfo>& SessionTools();
// The one named `name`, or null.
const SessionToolInfo* FindSessionTool(std::string_view name);

// What one call touches, for the policy and the audit record, known before
// it runs: the session path ("" for the root) and, for writes, the mode.
struct SessionToolTarget {
  std::string path;
  std::optional<std::string> mode;
};
// InvalidArgument (the path rules) when the arguments name a bad path.
Result<SessionToolTarget> SessionToolTargetOf(const SessionWorkspace& session, std::string_view tool,
                                              const ConfigValue::Object& arguments);

// Runs the tool `tool` with checked `arguments` (defaults filled in, types
// as the schema says) and returns its result as compact JSON text. A
// refused call is the Status, with nothing changed. `delete_check` is
// handed to SessionWorkspace::DeleteFile by delete_file.
Result<std::string> RunSessionTool(SessionWorkspace& session, std::string_view tool,
                                   const ConfigValue::Object& arguments,
                                   const SessionWorkspace::DeleteCheck& delete_check = nullptr);

// The instructions for the model: how to use the suite, and the mounts
// with their paths and up to 20 entries each.
Result<std::string> SessionGuidance(SessionWorkspace& session);

// Every file as `workspace ls --recursive --json` prints it: one JSON array
// of {path, version, created_at, updated_at, encoding, size_bytes}.
std::string SessionFilesJson(const std::vector<SessionFileInfo>& files);

}  // namespace toolvfs
