// The null store: no project at all. Reads (ranged ones too), writes,
// deletes, renames and Materialize() fail with NoProject; Exists() is false;
// listings and grep results are empty; DisplayRoot() is "<no project>".
#pragma once

#include <memory>

#include "project/project_files.h"

namespace toolvfs {

std::unique_ptr<ProjectFiles> NewNullStore();

}  // namespace toolvfs
