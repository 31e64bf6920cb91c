#include "project/sql/sql_schema.h"

#include <string>

#include "core/text.h"

namespace toolvfs {
namespace {

// Fills "{BLOB}", "{KEY_TEXT}", "{INTEGER}", "{IDENTITY_KEY}",
// "{NEVER_REUSED_KEY}", "{CLUSTERED}" in `text` with the dialect's words.
std::string Spell(std::string_view text, const SqlDialect& dialect) {
  const std::pair<std::string_view, std::string_view> words[] = {
      {"{BLOB}", dialect.blob_type},          {"{KEY_TEXT}", dialect.key_text_type},
      {"{INTEGER}", dialect.integer_type},    {"{IDENTITY_KEY}", dialect.identity_key},
      {"{NEVER_REUSED_KEY}", dialect.never_reused_key}, {"{CLUSTERED}", dialect.clustered_suffix}};
  std::string out;
  size_t at = 0;
  while (at < text.size()) {
    bool replaced = false;
    if (text[at] == '{') {
      for (const auto& [word, spelling] : words) {
        if (text.substr(at, word.size()) == word) {
          out += spelling;
          at += word.size();
          replaced = true;
          break;
        }
      }
    }
    if (!replaced) out += text[at++];
  }
  return out;
}

// Paths are compared bytewise ({KEY_TEXT}), which is the order listings
// promise. The schema keys what a write touches so that a small write
// dirties as few pages as possible (docs/stores.md, "Schema"): an entry is
// found, listed and replaced through its primary key (workspace, parent,
// name, born), with no second index on paths (version 2); a new content
// row goes at the end of its table, and its address is a small row of its
// own (version 3), so that rows of a kilobyte or more are never inserted
// between others (which splits a page nearly every time). Rows born in
// generation 1, before the workspace's first snapshot, are left out of the
// birth index (version 4): every query of it looks for rows born after a
// snapshot's generation, which is at least 1, and says `born>1` for the
// engine to see that the partial index answers it. A content rewritten in
// place may leave its old address's row for later (version 5): one page
// of content_addresses per such overwrite instead of two. A workspace's id
// is never given again after the workspace is deleted (version 6): an open
// store knows its workspace by id alone, and must find it gone rather than
// find the next workspace created. Contents keep {IDENTITY_KEY}: SQLite's
// AUTOINCREMENT would write its sqlite_sequence page on every new content,
// and a content id is never kept outside a transaction.
constexpr std::string_view kSchemaVersionTable = R"sql(
CREATE TABLE schema_version(version {INTEGER} NOT NULL);
)sql";
constexpr std::string_view kWorkspacesTable = R"sql(
CREATE TABLE workspaces(
  id {NEVER_REUSED_KEY},
  name {KEY_TEXT} NOT NULL UNIQUE,
  generation {INTEGER} NOT NULL,      -- the generation of the live state
  next_snapshot {INTEGER} NOT NULL,   -- the id the next snapshot gets
  created_ms {INTEGER} NOT NULL);
)sql";
constexpr std::string_view kSnapshotTables = R"sql(
CREATE TABLE snapshots(
  workspace_id {INTEGER} NOT NULL,
  id {INTEGER} NOT NULL,
  generation {INTEGER} NOT NULL,      -- the state it holds: rows with born <= generation < died
  label {KEY_TEXT},
  created_ms {INTEGER} NOT NULL,
  PRIMARY KEY(workspace_id, id)){CLUSTERED};
CREATE INDEX snapshots_by_generation ON snapshots(workspace_id, generation);
)sql";

// The contents table of version 3 on, in two parts: version 5 added
// `former_hash` (kFormerHashColumn), which the 2 -> 3 migration leaves out.
constexpr std::string_view kContentTablesUpToData = R"sql(
CREATE TABLE contents(
  id {IDENTITY_KEY},                  -- in order of insertion: a new row goes at the end
  hash {BLOB} NOT NULL,               -- content_hash.h
  size {INTEGER} NOT NULL,
  reference_count {INTEGER} NOT NULL, -- entry rows and chunk lists that use it
  data {BLOB}                         -- NULL for chunked content (content_chunks)
)sql";
constexpr std::string_view kFormerHashColumn = R"sql(
  , former_hash {BLOB}                -- the address before an in-place rewrite whose row was left (sql_content.cc)
)sql";
constexpr std::string_view kContentTablesAfterData = R"sql();
CREATE TABLE content_addresses(       -- finds a content by its address: one small row each
  hash {BLOB} NOT NULL PRIMARY KEY,
  content_id {INTEGER} NOT NULL){CLUSTERED};
CREATE TABLE content_chunks(
  content_id {INTEGER} NOT NULL,
  sequence {INTEGER} NOT NULL,        -- chunk number: bytes [sequence * 64 KiB, ...)
  chunk_id {INTEGER} NOT NULL,        -- a content of at most 64 KiB
  PRIMARY KEY(content_id, sequence)){CLUSTERED};
)sql";

constexpr std::string_view kEntryTables = R"sql(
CREATE TABLE entries(
  workspace_id {INTEGER} NOT NULL,
  parent {KEY_TEXT} NOT NULL,         -- '' for the root's children
  name {KEY_TEXT} NOT NULL,
  born {INTEGER} NOT NULL,
  died {INTEGER},                     -- NULL while live
  path {KEY_TEXT} NOT NULL,           -- parent/name, as the diff and subtree walks return it
  kind {INTEGER} NOT NULL,            -- 0 file, 1 directory
  content_id {INTEGER},               -- files only
  size {INTEGER} NOT NULL,
  version {INTEGER},                  -- files only
  created_ms {INTEGER} NOT NULL,
  modified_ms {INTEGER} NOT NULL,
  replaced {INTEGER},                 -- 1: dead because a row at its path born when it died replaced it
  PRIMARY KEY(workspace_id, parent, name, born)){CLUSTERED};
CREATE INDEX entries_by_birth ON entries(workspace_id, born) WHERE born>1;
CREATE INDEX entries_by_death ON entries(workspace_id, died) WHERE died IS NOT NULL AND replaced IS NULL;
)sql";

// The content tables, with or without version 5's former_hash.
std::string ContentTablesText(const SqlDialect& dialect, bool former_hash) {
  std::string text(kContentTablesUpToData);
  if (former_hash) text += kFormerHashColumn;
  text += kContentTablesAfterData;
  return Spell(text, dialect);
}

}  // namespace

std::string SqlSchemaText(const SqlDialect& dialect) {
  return Spell(kSchemaVersionTable, dialect) + SqlWorkspacesTableText(dialect) + Spell(kSnapshotTables, dialect) +
         SqlEntryAndContentTablesText(dialect) +
         "INSERT INTO schema_version(version) VALUES(" + std::to_string(kSqlSchemaVersion) + ");\n";
}

std::string SqlWorkspacesTableText(const SqlDialect& dialect) { return Spell(kWorkspacesTable, dialect); }

std::string SqlEntryAndContentTablesText(const SqlDialect& dialect) {
  return ContentTablesText(dialect, /*former_hash=*/true) + Spell(kEntryTables, dialect);
}

namespace {

// Version 2 -> 3: contents renumbered in their old order (so the new rows
// follow each other) with their addresses in content_addresses; chunk lists
// and entries follow the new ids through a temporary map; entries get the
// `replaced` column (NULL for every old row: each death stays indexed). The new tables
// are made under other names and renamed at the end, since PostgreSQL
// keeps a renamed table's key index name (contents_pkey), which a new
// `contents` would need. Plain SQL of every engine (sql_connection.h's
// rules), inside the caller's transaction.
constexpr std::string_view kMigrateVersion2To3 = R"sql(
DROP TABLE content_collisions;
{CONTENT_TABLES}
CREATE TEMP TABLE content_ids(old {INTEGER} NOT NULL PRIMARY KEY, new {INTEGER} NOT NULL);
INSERT INTO contents_v3(hash, size, reference_count, data)
  SELECT hash, size, reference_count, data FROM contents ORDER BY id;
INSERT INTO content_addresses(hash, content_id) SELECT hash, id FROM contents_v3;
INSERT INTO content_ids(old, new)
  SELECT c.id, a.content_id FROM contents c JOIN content_addresses a ON a.hash=c.hash;
INSERT INTO content_chunks_v3(content_id, sequence, chunk_id)
  SELECT list.new, cc.sequence, chunk.new FROM content_chunks cc
  JOIN content_ids list ON list.old=cc.content_id JOIN content_ids chunk ON chunk.old=cc.chunk_id;
UPDATE entries SET content_id=(SELECT m.new FROM content_ids m WHERE m.old=entries.content_id)
  WHERE content_id IS NOT NULL;
ALTER TABLE entries ADD COLUMN replaced {INTEGER};
DROP INDEX entries_by_death;
CREATE INDEX entries_by_death ON entries(workspace_id, died) WHERE died IS NOT NULL AND replaced IS NULL;
DROP TABLE content_chunks;
DROP TABLE contents;
DROP TABLE content_ids;
ALTER TABLE contents_v3 RENAME TO contents;
ALTER TABLE content_chunks_v3 RENAME TO content_chunks;
UPDATE schema_version SET version=3;
)sql";

// `text` with `from` replaced by `to` once (it is there).
std::string ReplaceOnce(std::string text, std::string_view from, std::string_view to) {
  text.replace(text.find(from), from.size(), to);
  return text;
}

Status MigrateSqlSchemaVersion2To3(SqlConnection& connection) {
  std::string tables = ContentTablesText(connection.dialect(), /*former_hash=*/false);  // version 5 adds it
  tables = ReplaceOnce(tables, "CREATE TABLE contents(", "CREATE TABLE contents_v3(");
  tables = ReplaceOnce(tables, "CREATE TABLE content_chunks(", "CREATE TABLE content_chunks_v3(");
  return connection.Execute(ReplaceOnce(Spell(kMigrateVersion2To3, connection.dialect()), "{CONTENT_TABLES}", tables));
}

// Version 3 -> 4: the birth index without generation 1 (kEntryTables).
constexpr std::string_view kMigrateVersion3To4 = R"sql(
DROP INDEX entries_by_birth;
CREATE INDEX entries_by_birth ON entries(workspace_id, born) WHERE born>1;
UPDATE schema_version SET version=4;
)sql";

// Version 4 -> 5: no content was rewritten in place leaving its former
// address, so the new column is NULL everywhere.
constexpr std::string_view kMigrateVersion4To5 = R"sql(
ALTER TABLE contents ADD COLUMN former_hash {BLOB};
UPDATE schema_version SET version=5;
)sql";

// Version 5 -> 6, what every engine shares: the version. An identity
// column never gives an id twice, so PostgreSQL's workspaces stay as they
// are; SQLite rebuilds its table after this (sqlite_migration.cc).
constexpr std::string_view kMigrateVersion5To6 = "UPDATE schema_version SET version=6;";

}  // namespace

Status MigrateSqlSchemaFrom(SqlConnection& connection, int64_t from) {
  if (from < 2 || from >= kSqlSchemaVersion) {
    return InvalidArgumentError("No shared migration of the store " + Quote(connection.display()) +
                                " from schema version " + std::to_string(from));
  }
  if (from == 2) TOOLVFS_RETURN_IF_ERROR(MigrateSqlSchemaVersion2To3(connection));
  if (from <= 3) TOOLVFS_RETURN_IF_ERROR(connection.Execute(kMigrateVersion3To4));
  if (from <= 4) TOOLVFS_RETURN_IF_ERROR(connection.Execute(Spell(kMigrateVersion4To5, connection.dialect())));
  return connection.Execute(kMigrateVersion5To6);
}

Status PrepareSqlSchema(SqlConnection& connection, const SqlSchemaMigration& migrate) {
  const std::string where = "The store " + Quote(connection.display());
  TOOLVFS_ASSIGN_OR_RETURN(SqlTransaction transaction,
                           SqlTransaction::Begin(connection, SqlTransactionKind::kWrite));
  TOOLVFS_ASSIGN_OR_RETURN(bool versioned, connection.HasTable("schema_version"));
  if (!versioned) {
    TOOLVFS_ASSIGN_OR_RETURN(bool has_tables, connection.HasAnyTable());
    if (has_tables) {
      return InvalidArgumentError(where + " is a database of another program (it has tables but "
                                  "no toolvfs schema); refusing to change it");
    }
    TOOLVFS_RETURN_IF_ERROR(connection.Execute(SqlSchemaText(connection.dialect())));
    return transaction.Commit();
  }
  int64_t version = 0;
  {
    TOOLVFS_ASSIGN_OR_RETURN(SqlStatement read_version, connection.Prepare("SELECT version FROM schema_version"));
    TOOLVFS_ASSIGN_OR_RETURN(bool has_version, read_version.Step());
    if (!has_version) return IoError(where + " is damaged: its schema_version table is empty");
    version = read_version.Int(0);
  }
  if (version > kSqlSchemaVersion) {
    return UnsupportedError(where + " has schema version " + std::to_string(version) + ", newer than version " +
                            std::to_string(kSqlSchemaVersion) + " that this toolvfs knows; use a newer toolvfs");
  }
  if (version < 1) {
    return IoError(where + " is damaged: schema version " + std::to_string(version) + " does not exist");
  }
  if (version < kSqlSchemaVersion) {
    if (!migrate) {
      return UnsupportedError(where + " has schema version " + std::to_string(version) +
                              ", older than version " + std::to_string(kSqlSchemaVersion) +
                              ", and this engine has no migration from it");
    }
    TOOLVFS_RETURN_IF_ERROR(migrate(connection, version));
  }
  return transaction.Commit();
}

}  // namespace toolvfs
