#include "project/sql/sqlite_schema.h"

#include <string>

#include "core/text.h"

namespace toolvfs {
namespace {

// Version 1. Paths are TEXT compared with SQLite's BINARY collation
// (memcmp), which is the bytewise order listings promise.
constexpr const char* kSchemaVersion1 = R"sql(
CREATE TABLE schema_version(version INTEGER NOT NULL);
CREATE TABLE workspaces(
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  generation INTEGER NOT NULL,      -- the generation of the live state
  next_snapshot INTEGER NOT NULL,   -- the id the next snapshot gets
  created_ms INTEGER NOT NULL);
CREATE TABLE snapshots(
  workspace_id INTEGER NOT NULL,
  id INTEGER NOT NULL,
  generation INTEGER NOT NULL,      -- the state it holds: rows with born <= generation < died
  label TEXT,
  created_ms INTEGER NOT NULL,
  PRIMARY KEY(workspace_id, id)) WITHOUT ROWID;
CREATE INDEX snapshots_by_generation ON snapshots(workspace_id, generation);
CREATE TABLE contents(
  id INTEGER PRIMARY KEY,
  hash BLOB NOT NULL UNIQUE,        -- content_hash.h
  size INTEGER NOT NULL,
  reference_count INTEGER NOT NULL, -- entry rows and chunk lists that use it
  data BLOB);                       -- NULL for chunked content (content_chunks)
CREATE TABLE content_chunks(
  content_id INTEGER NOT NULL,
  sequence INTEGER NOT NULL,        -- chunk number: bytes [sequence * 64 KiB, ...)
  chunk_id INTEGER NOT NULL,        -- a content of at most 64 KiB
  PRIMARY KEY(content_id, sequence)) WITHOUT ROWID;
CREATE TABLE entries(
  workspace_id INTEGER NOT NULL,
  path TEXT NOT NULL,
  born INTEGER NOT NULL,
  died INTEGER,                     -- NULL while live
  parent TEXT NOT NULL,
  name TEXT NOT NULL,
  kind INTEGER NOT NULL,            -- 0 file, 1 directory
  content_id INTEGER,               -- files only
  size INTEGER NOT NULL,
  version INTEGER,                  -- files only
  created_ms INTEGER NOT NULL,
  modified_ms INTEGER NOT NULL,
  PRIMARY KEY(workspace_id, path, born)) WITHOUT ROWID;
CREATE INDEX entries_by_parent ON entries(workspace_id, parent, name, died, kind);
CREATE INDEX entries_by_birth ON entries(workspace_id, born);
CREATE INDEX entries_by_death ON entries(workspace_id, died) WHERE died IS NOT NULL;
INSERT INTO schema_version(version) VALUES(1);
)sql";

Result<bool> HasTable(SqliteConnection& connection, std::string_view name) {
  TOOLVFS_ASSIGN_OR_RETURN(
      SqliteStatement statement,
      connection.Prepare("SELECT 1 FROM sqlite_schema WHERE type='table' AND name=?1"));
  statement.Bind(1, name);
  return statement.Step();
}

}  // namespace

Status PrepareSqliteSchema(SqliteConnection& connection) {
  const std::string where = "The store " + Quote(connection.display());
  TOOLVFS_ASSIGN_OR_RETURN(SqliteTransaction transaction,
                           SqliteTransaction::Begin(connection, SqliteTransaction::Kind::kWrite));
  TOOLVFS_ASSIGN_OR_RETURN(bool versioned, HasTable(connection, "schema_version"));
  if (!versioned) {
    TOOLVFS_ASSIGN_OR_RETURN(SqliteStatement any_table,
                             connection.Prepare("SELECT name FROM sqlite_schema LIMIT 1"));
    TOOLVFS_ASSIGN_OR_RETURN(bool has_tables, any_table.Step());
    if (has_tables) {
      return InvalidArgumentError(where + " is a SQLite database of another program (it has tables but "
                                  "no toolvfs schema); refusing to change it");
    }
    TOOLVFS_RETURN_IF_ERROR(connection.Execute(kSchemaVersion1));
    return transaction.Commit();
  }
  TOOLVFS_ASSIGN_OR_RETURN(SqliteStatement read_version,
                           connection.Prepare("SELECT version FROM schema_version"));
  TOOLVFS_ASSIGN_OR_RETURN(bool has_version, read_version.Step());
  if (!has_version) return IoError(where + " is damaged: its schema_version table is empty");
  const int64_t version = read_version.Int(0);
  if (version > kSqliteSchemaVersion) {
    return UnsupportedError(where + " has schema version " + std::to_string(version) +
                            ", newer than version " + std::to_string(kSqliteSchemaVersion) +
                            " that this toolvfs knows; use a newer toolvfs");
  }
  if (version < 1) {
    return IoError(where + " is damaged: schema version " + std::to_string(version) + " does not exist");
  }
  // Migrations from older versions go here, one step per version, all in
  // this transaction. Version 1 is the first.
  return transaction.Commit();
}

}  // namespace toolvfs
