// The session settings a `[session]` table describes (config/config.h).
#pragma once

#include <optional>
#include <string>

#include "config/config.h"
#include "session/session_workspace.h"

namespace toolvfs {

// Settings for a session `id` from the config's [session] table (absent:
// the defaults, no allowed roots, no mounts). Limits larger than a path
// could use are kept at the largest value that fits.
SessionSettings SessionSettingsFrom(const std::optional<SessionConfig>& config, std::string id);

}  // namespace toolvfs
