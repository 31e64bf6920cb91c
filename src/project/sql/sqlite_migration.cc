#include "project/sql/sqlite_migration.h"

#include <string>

#include "core/text.h"
#include "project/sql/sql_schema.h"

namespace toolvfs {

Status MigrateSqliteSchema(SqlConnection& connection, int64_t from) {
  return UnsupportedError("The store " + Quote(connection.display()) + " has schema version " +
                          std::to_string(from) + ", for which this toolvfs has no migration to version " +
                          std::to_string(kSqlSchemaVersion));
}

}  // namespace toolvfs
