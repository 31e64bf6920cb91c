#include "cli/project_opening.h"

#include <string>
#include <utility>

#include "cli/terminal.h"
#include "core/text.h"
#include "project/sql/postgres_store.h"
#include "project/sql/postgres_uri.h"

namespace toolvfs {
namespace {

bool IsWorkspaceProject(std::string_view uri) { return uri.starts_with("sqlite:") || IsPostgresUri(uri); }

// The URI as messages show it: a postgres URI without its password.
std::string Shown(std::string_view uri) {
  return IsPostgresUri(uri) ? RedactPostgresUri(uri) : std::string(uri);
}

void TellCreated(const StoreCreation& created) {
  ReportNote("--project", "created workspace " + Quote(created.workspace) + " in " +
                              (created.new_store ? "the new store file " : "") + Quote(created.store));
}

}  // namespace

Result<std::unique_ptr<ProjectFiles>> OpenCommandProject(std::string_view uri, ProjectUse use,
                                                         StoreOptions options) {
  options.create_if_missing = use == ProjectUse::kWrite;
  if (use == ProjectUse::kWrite) options.on_create = TellCreated;
  Result<std::unique_ptr<ProjectFiles>> store = OpenProject(uri, options);
  if (store.ok() || use != ProjectUse::kRead || store.status().code() != StatusCode::kNotFound ||
      !IsWorkspaceProject(uri)) {
    return store;
  }
  // A missing snapshot or database is not made by init: only the store
  // file's and the workspace's own NotFound (sql_store.cc,
  // sqlite_database.cc) get the hint.
  const std::string& message = store.status().message();
  if (!message.starts_with("Workspace ") && !message.starts_with("The store file ")) return store;
  return NotFoundError(message + "; create it with toolvfs workspace init --project " + Shown(uri));
}

}  // namespace toolvfs
