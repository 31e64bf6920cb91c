// Where the tool SDKs are on disk, found at run time (issue 22: no path of
// the source tree is baked into the binary).
//
// The SDKs (sdk/: the Python modules a vfs tool imports, the C++ headers)
// live in `share/toolvfs/sdk` under a prefix: the install prefix once
// installed (`cmake --install`, the .deb), the build directory before that
// (the build stages a copy there). The prefix is found from the file that
// holds this code — the toolvfs binary, or libtoolvfs.so for an embedder —
// by looking for `share/toolvfs/sdk` in its directory's ancestors, so a
// relocated install (a staged DESTDIR, an unpacked .deb) works as it is.
// TOOLVFS_SDK_DIR in the environment overrides the search.
#pragma once

#include <string>

#include "config/config.h"

namespace toolvfs {

// The SDK directory (absolute), or "" when none was found: vfs tools then
// get no PYTHONPATH entry and the sandbox grants no SDK directory.
// Computed once per process.
const std::string& SdkDirectory();

// The prefix that holds `share/toolvfs/sdk` (absolute), found as for
// SdkDirectory but never overridden by TOOLVFS_SDK_DIR; "" when none was
// found. The build directory before installing (it stages share/ and
// libexec/ like an install). Computed once per process.
const std::string& InstallPrefix();

// The values of `${toolvfs.prefix}` and `${toolvfs.sdk}` for the config
// layer (config.h, ConfigVariables); a value not found here is left out.
ConfigVariables InstallationVariables();

// The search itself, for tests: the first `ancestor/share/toolvfs/sdk`
// that is a directory, for the ancestors of `start_directory` (itself
// included, at most four levels up), or "".
std::string FindSdkDirectoryFrom(const std::string& start_directory);

// As FindSdkDirectoryFrom, but the ancestor itself (the prefix), or "".
std::string FindPrefixFrom(const std::string& start_directory);

}  // namespace toolvfs
