// The fs store: a real directory on disk, race-free (see fs_store.cc).
#pragma once

#include <memory>
#include <string_view>

#include "project/project_files.h"

namespace toolvfs {

// Opens the directory `root` (relative to the current directory or
// absolute) as a project. NotFound if it does not exist, NotDirectory if it
// is not a directory. The store holds a descriptor of the root, so renaming
// the directory later does not make it serve another tree.
Result<std::unique_ptr<ProjectFiles>> OpenFsStore(std::string_view root,
                                                  const StoreOptions& options = {});

}  // namespace toolvfs
