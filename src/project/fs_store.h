// The fs store: a real directory on disk.
//
// Race-free by construction: the store holds a descriptor of the root and
// resolves every path relative to it, with openat2(RESOLVE_BENEATH |
// RESOLVE_NO_MAGICLINKS) where the kernel has it and otherwise (or when
// openat2 refuses a path, e.g. for an absolute symlink that points inside)
// with a component-by-component walk of O_NOFOLLOW opens that follows each
// symlink by our own rules. Neither path ever lets a concurrent swap of a
// directory for a symlink lead outside the root.
#pragma once

#include <memory>
#include <string_view>

#include "project/project_files.h"

namespace toolvfs {

// How the fs store resolves paths. kAuto uses openat2 when the kernel has
// it; kComponentWalk always uses the O_NOFOLLOW walk (the fallback for
// kernels without openat2, selectable so tests cover both).
enum class FsResolution { kAuto, kComponentWalk };

// Opens the directory `root` (relative to the current directory or
// absolute) as a project. NotFound if it does not exist, NotDirectory if it
// is not a directory. Renaming the directory later does not make the store
// serve another tree.
Result<std::unique_ptr<ProjectFiles>> OpenFsStore(
    std::string_view root, const StoreOptions& options = {},
    FsResolution resolution = FsResolution::kAuto);

}  // namespace toolvfs
