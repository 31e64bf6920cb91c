// The workspace part of a SQL store's URI, shared by the sqlite and
// postgres stores: `LOCATION#WORKSPACE@SNAPSHOT` (SPEC.md §2.4).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"

namespace toolvfs {

// The workspace a URI without a fragment opens.
inline constexpr std::string_view kDefaultWorkspace = "default";

struct WorkspaceAddress {
  std::string location;                // the file (sqlite) or connection URI (postgres)
  std::string workspace;               // kDefaultWorkspace without '#'
  std::optional<std::string> snapshot;  // after '@': open that snapshot read-only
};

// Splits `rest` (the URI without its "sqlite:" scheme) at its first '#' and
// the '@' after it. InvalidArgument naming `uri` (the whole URI as it may be
// shown, for the message) when the location is empty, a '#' or '@' is where
// it cannot be (a second '#', a second '@' after it), or the workspace or
// snapshot is empty or not a valid name (the rules of ValidateWorkspaceName).
// An '@' before the '#' is part of the location (postgres://user@host); the
// sqlite store refuses it itself.
Result<WorkspaceAddress> ParseWorkspaceAddress(std::string_view uri, std::string_view rest);

// A workspace or snapshot-label name: 1 to 255 bytes of valid UTF-8
// without control characters ('#' and '@' are refused too: they separate
// the parts of a URI). InvalidArgument "Invalid <what> '<name>': <why>".
Status ValidateWorkspaceName(std::string_view what, std::string_view name);

}  // namespace toolvfs
