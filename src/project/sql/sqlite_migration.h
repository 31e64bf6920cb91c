// Migrations of SQLite store files written by older toolvfs versions to the
// current schema (sql_schema.h). Only SQLite files exist in older versions:
// the PostgreSQL store started at version 2.
#pragma once

#include <cstdint>

#include "core/status.h"
#include "project/sql/sql_connection.h"

namespace toolvfs {

// Moves the SQLite store of schema version `from` to kSqlSchemaVersion,
// inside the caller's write transaction (PrepareSqlSchema's), so a failure
// leaves the file as it was. Every workspace, entry version, content and
// snapshot is kept: ids, versions, times, labels, reference counts.
Status MigrateSqliteSchema(SqlConnection& connection, int64_t from);

}  // namespace toolvfs
