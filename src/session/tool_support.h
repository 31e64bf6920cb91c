// What the session tools (session_tools.cc) and the snapshot tools
// (snapshot_tools.cc) share in reading their arguments and writing their
// answers. Internal to src/session.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config_value.h"
#include "session/session_tools.h"

namespace toolvfs {

// The string argument `name`; nullopt when it is absent. The arguments are
// checked against the tool's schema first, so one present is a string.
std::optional<std::string_view> StringArgument(const ConfigValue::Object& arguments, std::string_view name);

// The tool named `name` in `tools`, or null.
const SessionToolInfo* FindToolNamed(const std::vector<SessionToolInfo>& tools, std::string_view name);

}  // namespace toolvfs
