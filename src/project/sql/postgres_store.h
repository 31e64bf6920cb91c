// The postgres store: workspaces in a PostgreSQL database (SPEC.md §2.4),
// the shared SQL store (sql_store.h) over the PostgreSQL engine of this
// file's .cc (connections from postgres_pool.h, statements prepared once
// per connection, write transactions retried on lost races).
//
// URIs: `postgres://USER[:PASSWORD]@HOST[:PORT]/DB[?PARAMS]#WORKSPACE[@SNAPSHOT]`
// (also `postgresql://`); everything before '#' goes to libpq as it is, so
// any URI libpq accepts works, including an empty host with
// `?host=SOCKET_DIR` for a Unix socket, and libpq's parameters and PG*
// environment variables apply. The password is never shown: DisplayRoot()
// and every message carry the URI with it masked (RedactPostgresUri).
// docs/stores.md describes schema, concurrency, retries and faults.
#pragma once

#include <memory>
#include <string_view>

#include "core/status.h"
#include "project/project_files.h"
#include "project/sql/sql_store.h"

namespace toolvfs {

// Whether `uri` names the postgres store (postgres:// or postgresql://).
bool IsPostgresUri(std::string_view uri);

// Opens the workspace of `uri` (created on first use, with the schema in
// an empty database), or with @SNAPSHOT that snapshot, read-only.
// InvalidArgument for a malformed URI; Unavailable when the server cannot
// be reached; PermissionDenied for a wrong password; NotFound for a
// missing database; Unsupported for a database of a newer schema, naming
// both versions; InvalidArgument for a database of another program.
Result<std::unique_ptr<ProjectFiles>> OpenPostgresStore(std::string_view uri, const StoreOptions& options);

// The whole database of `uri` (list, delete workspaces, gc); the fragment
// is ignored. Errors as OpenPostgresStore.
Result<std::unique_ptr<SqlStoreFile>> OpenPostgresStoreFile(std::string_view uri);

}  // namespace toolvfs
