// The schema of a sqlite store file and its versions (docs/stores.md).
//
// Entries are versioned rows: a row is born in a generation of its
// workspace and dies in a later one (NULL: it is live). A snapshot records
// the generation it froze and starts a new one, so it costs one row; a
// write in the current generation replaces a row born in it in place, and
// otherwise marks the old row dead and adds a new one, so what a snapshot
// sees never changes. The state at generation g is the rows with
// born <= g < died; the live state is the rows with died NULL.
#pragma once

#include <cstdint>

#include "core/status.h"
#include "project/sql/sqlite_database.h"

namespace toolvfs {

// The schema version this toolvfs writes. A file with a newer one is
// refused; an older one is migrated in a transaction when opened.
inline constexpr int64_t kSqliteSchemaVersion = 1;

// Creates the schema in an empty database, or checks and migrates the one
// there. Runs in its own write transaction. InvalidArgument when the file
// holds another program's tables; Unsupported for a newer schema, naming
// both versions.
Status PrepareSqliteSchema(SqliteConnection& connection);

}  // namespace toolvfs
