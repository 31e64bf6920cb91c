#include "project/sql/sqlite_migration.h"

#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "core/text.h"
#include "project/content/content_hash.h"
#include "project/sql/sql_content.h"
#include "project/sql/sql_schema.h"

namespace toolvfs {
namespace {

// Version 1 -> 5 in one step (then 5 -> 6 as from any version): entries
// re-keyed by (workspace, parent, name, born) (version 2), contents
// re-inserted with their addresses (version 3), the birth index without
// generation 1 (version 4) and contents' former addresses (version 5, all
// NULL). The old tables are renamed, the current ones created, every row
// copied (content ids mapped through a temporary table), the old tables
// dropped: all inside the caller's transaction.
constexpr const char* kSetAsideVersion1 = R"sql(
DROP INDEX entries_by_parent;
DROP INDEX entries_by_birth;
DROP INDEX entries_by_death;
ALTER TABLE entries RENAME TO entries_v1;
ALTER TABLE contents RENAME TO contents_v1;
ALTER TABLE content_chunks RENAME TO content_chunks_v1;
CREATE TEMP TABLE content_ids(old INTEGER PRIMARY KEY, new INTEGER NOT NULL);
)sql";
constexpr const char* kVersion1Contents = "SELECT id, hash, size, reference_count, data FROM contents_v1";
constexpr const char* kMapContentId = "INSERT INTO content_ids(old, new) VALUES(?1, ?2)";
constexpr const char* kCopyVersion1Rows = R"sql(
INSERT INTO content_chunks(content_id, sequence, chunk_id)
  SELECT list.new, cc.sequence, chunk.new FROM content_chunks_v1 cc
  JOIN content_ids list ON list.old=cc.content_id JOIN content_ids chunk ON chunk.old=cc.chunk_id;
INSERT INTO entries(workspace_id, parent, name, born, died, path, kind, content_id, size, version,
                    created_ms, modified_ms)
  SELECT e.workspace_id, e.parent, e.name, e.born, e.died, e.path, e.kind, m.new, e.size, e.version,
         e.created_ms, e.modified_ms
  FROM entries_v1 e LEFT JOIN content_ids m ON m.old=e.content_id;
DROP TABLE entries_v1;
DROP TABLE content_chunks_v1;
DROP TABLE contents_v1;
DROP TABLE temp.content_ids;
UPDATE schema_version SET version=5;
)sql";

// Version 5 -> 6, after the shared step: workspaces rebuilt with
// AUTOINCREMENT, ids kept. Before, SQLite gave the largest id again once
// its workspace was deleted; the next id is now above every id a row
// still names (a workspace's, or one that entries or snapshots of a
// deleted workspace kept), as sqlite_sequence records it. Renaming the
// table renames its sqlite_sequence row and its UNIQUE index with it.
constexpr std::string_view kCopyWorkspaces = R"sql(
INSERT INTO workspaces_v6(id, name, generation, next_snapshot, created_ms)
  SELECT id, name, generation, next_snapshot, created_ms FROM workspaces ORDER BY id;
DROP TABLE workspaces;
ALTER TABLE workspaces_v6 RENAME TO workspaces;
DELETE FROM sqlite_sequence WHERE name='workspaces';
INSERT INTO sqlite_sequence(name, seq) SELECT 'workspaces', max(
  (SELECT coalesce(max(id), 0) FROM workspaces),
  (SELECT coalesce(max(workspace_id), 0) FROM entries),
  (SELECT coalesce(max(workspace_id), 0) FROM snapshots));
)sql";

Status RebuildWorkspacesNeverReusingIds(SqlConnection& db) {
  std::string table = SqlWorkspacesTableText(db.dialect());
  const std::string_view create = "CREATE TABLE workspaces(";
  table.replace(table.find(create), create.size(), "CREATE TABLE workspaces_v6(");
  TOOLVFS_RETURN_IF_ERROR(db.Execute(table));
  return db.Execute(kCopyWorkspaces);
}

Status MigrateVersion1(SqlConnection& db) {
  TOOLVFS_RETURN_IF_ERROR(db.Execute(kSetAsideVersion1));
  TOOLVFS_RETURN_IF_ERROR(db.Execute(SqlEntryAndContentTablesText(db.dialect())));
  {
    TOOLVFS_ASSIGN_OR_RETURN(SqlStatement contents, db.Prepare(kVersion1Contents));
    while (true) {
      TOOLVFS_ASSIGN_OR_RETURN(bool row, contents.Step());
      if (!row) break;
      std::string_view stored_hash = contents.Blob(1);
      ContentHash hash{};
      if (stored_hash.size() != hash.size()) {
        return IoError("The store " + Quote(db.display()) + " is damaged: content " +
                       std::to_string(contents.Int(0)) + " has a hash of " + std::to_string(stored_hash.size()) +
                       " bytes");
      }
      std::memcpy(hash.data(), stored_hash.data(), hash.size());
      std::optional<std::string_view> data;
      if (!contents.IsNull(4)) data = contents.Blob(4);
      TOOLVFS_ASSIGN_OR_RETURN(int64_t id, InsertNewContent(db, hash, static_cast<uint64_t>(contents.Int(2)),
                                                            data, contents.Int(3)));
      TOOLVFS_ASSIGN_OR_RETURN(SqlStatement map, db.Prepare(kMapContentId));
      map.Bind(1, contents.Int(0)).Bind(2, id);
      TOOLVFS_RETURN_IF_ERROR(map.Run());
    }
  }
  return db.Execute(kCopyVersion1Rows);
}

}  // namespace

Status MigrateSqliteSchema(SqlConnection& connection, int64_t from) {
  if (from == 1) {
    TOOLVFS_RETURN_IF_ERROR(MigrateVersion1(connection));
    from = 5;
  }
  if (from >= 2 && from < kSqlSchemaVersion) {
    TOOLVFS_RETURN_IF_ERROR(MigrateSqlSchemaFrom(connection, from));
    return RebuildWorkspacesNeverReusingIds(connection);
  }
  return UnsupportedError("The store " + Quote(connection.display()) + " has schema version " +
                          std::to_string(from) + ", for which this toolvfs has no migration to version " +
                          std::to_string(kSqlSchemaVersion));
}

}  // namespace toolvfs
