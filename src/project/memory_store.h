// The memory store: a project held in process memory, for tests and
// embedding. Materialize() copies it to a temporary directory.
#pragma once

#include <memory>
#include <string>

#include "project/project_files.h"

namespace toolvfs {

// An empty project; DisplayRoot() is "memory:NAME" ("memory:" if unnamed).
std::unique_ptr<ProjectFiles> NewMemoryStore(std::string name = "",
                                             const StoreOptions& options = {});

}  // namespace toolvfs
