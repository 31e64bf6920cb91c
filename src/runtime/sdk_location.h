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

namespace toolvfs {

// The SDK directory (absolute), or "" when none was found: vfs tools then
// get no PYTHONPATH entry and the sandbox grants no SDK directory.
// Computed once per process.
const std::string& SdkDirectory();

// The search itself, for tests: the first `ancestor/share/toolvfs/sdk`
// that is a directory, for the ancestors of `start_directory` (itself
// included, at most four levels up), or "".
std::string FindSdkDirectoryFrom(const std::string& start_directory);

}  // namespace toolvfs
