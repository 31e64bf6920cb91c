// Opening the --project store for a command: whether the command may
// create a sqlite file or a workspace that does not exist yet, and what
// the user is told when it does (docs/stores.md, "URIs").
#pragma once

#include <memory>
#include <string_view>

#include "core/status.h"
#include "project/project_files.h"

namespace toolvfs {

// How a command uses its --project store.
enum class ProjectUse {
  // Only reads (grep, tools, check, audit): a sqlite file or a workspace
  // that does not exist is an error, never created.
  kRead,
  // May write (run, exec, mcp, vfsd): what is missing is created on first
  // use, with a note on stderr, so a mistyped name is seen at once.
  kWrite,
};

// OpenProject(uri, options) with options.create_if_missing and on_create
// set for `use`. For kRead, a missing store file or workspace is NotFound
// naming it and saying how to create it (toolvfs workspace init). For
// kWrite, a store file or workspace the open creates is told on stderr:
// "toolvfs: --project: created workspace 'w' in the new store file 'x.db'".
Result<std::unique_ptr<ProjectFiles>> OpenCommandProject(std::string_view uri, ProjectUse use,
                                                         StoreOptions options = {});

}  // namespace toolvfs
