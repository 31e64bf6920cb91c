// The public API of libtoolvfs, for programs that embed toolvfs (issue 22,
// docs/embedding.md): open a project store by URI, run tools under their
// runtime, policy, sandbox and audit, serve the VFS protocol yourself.
//
// Installed as <toolvfs/toolvfs.h>; the headers it includes keep their
// place in the source tree below include/toolvfs/ (core/, project/, …),
// which the installed CMake package and pkg-config file put on the include
// path. Everything is in namespace toolvfs and reports errors with Status
// and Result<T> (core/status.h), never with exceptions.
#pragma once

#include "config/config.h"           // ToolConfig, ParseConfig, LoadConfig
#include "core/status.h"             // Status, Result<T>, StatusCode
#include "host/tool_session.h"       // the VFS protocol host of one tool process
#include "project/project_files.h"   // ProjectFiles, OpenProject(uri), snapshots
#include "runtime/builtin_runtime.h" // tools in the host process
#include "runtime/mcp_runtime.h"     // tools of MCP servers
#include "runtime/stdio_runtime.h"   // plain programs in the OS sandbox
#include "runtime/tool_runtime.h"    // ToolRuntime, ToolCall, Outcome
#include "runtime/vfs_runtime.h"     // tools that speak the VFS protocol

namespace toolvfs {

// The version of the library the program runs with ("0.1.0"), which can
// differ from the headers it was built against (TOOLVFS_VERSION in the
// package's toolvfsConfigVersion.cmake and toolvfs.pc).
const char* LibraryVersion();

}  // namespace toolvfs
