// The common write of the postgres store in one round trip (docs/stores.md,
// "Round trips"): a whole small file overwritten, or created in a
// directory that exists, as one transaction sent in one pipeline.
#pragma once

#include "core/status.h"
#include "project/sql/postgres_database.h"
#include "project/sql/sql_connection.h"

namespace toolvfs {

// Writes `write` (SqlDatabase::WriteFileDirectly) on `connection` when the
// common case applies: content of at most kChunkBytes, and the path a file
// (not for create_only) whose old content is stored whole or has other
// references, or missing with its parent a directory (or the root). Then
// true, with the rows, version and reference counts the shared WriteFile
// leaves. False when it does not apply or lost a race (a serialization
// failure, a deadlock, a duplicate key): nothing changed, and the shared
// path (which retries races with backoff) takes the write. Other failures
// (the server unavailable, ...) are returned.
Result<bool> WritePostgresFile(PostgresConnection& connection, const SqlFileWrite& write);

}  // namespace toolvfs
