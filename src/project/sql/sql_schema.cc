#include "project/sql/sql_schema.h"

#include <string>

#include "core/text.h"

namespace toolvfs {
namespace {

// Fills "{BLOB}", "{KEY_TEXT}", "{INTEGER}", "{IDENTITY_KEY}" and
// "{CLUSTERED}" in `text` with the dialect's words.
std::string Spell(std::string_view text, const SqlDialect& dialect) {
  const std::pair<std::string_view, std::string_view> words[] = {
      {"{BLOB}", dialect.blob_type},          {"{KEY_TEXT}", dialect.key_text_type},
      {"{INTEGER}", dialect.integer_type},    {"{IDENTITY_KEY}", dialect.identity_key},
      {"{CLUSTERED}", dialect.clustered_suffix}};
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
// promise.
constexpr std::string_view kSchema = R"sql(
CREATE TABLE schema_version(version {INTEGER} NOT NULL);
CREATE TABLE workspaces(
  id {IDENTITY_KEY},
  name {KEY_TEXT} NOT NULL UNIQUE,
  generation {INTEGER} NOT NULL,      -- the generation of the live state
  next_snapshot {INTEGER} NOT NULL,   -- the id the next snapshot gets
  created_ms {INTEGER} NOT NULL);
CREATE TABLE snapshots(
  workspace_id {INTEGER} NOT NULL,
  id {INTEGER} NOT NULL,
  generation {INTEGER} NOT NULL,      -- the state it holds: rows with born <= generation < died
  label {KEY_TEXT},
  created_ms {INTEGER} NOT NULL,
  PRIMARY KEY(workspace_id, id)){CLUSTERED};
CREATE INDEX snapshots_by_generation ON snapshots(workspace_id, generation);
CREATE TABLE contents(
  id {IDENTITY_KEY},
  hash {BLOB} NOT NULL UNIQUE,        -- content_hash.h
  size {INTEGER} NOT NULL,
  reference_count {INTEGER} NOT NULL, -- entry rows and chunk lists that use it
  data {BLOB});                       -- NULL for chunked content (content_chunks)
CREATE TABLE content_chunks(
  content_id {INTEGER} NOT NULL,
  sequence {INTEGER} NOT NULL,        -- chunk number: bytes [sequence * 64 KiB, ...)
  chunk_id {INTEGER} NOT NULL,        -- a content of at most 64 KiB
  PRIMARY KEY(content_id, sequence)){CLUSTERED};
CREATE TABLE entries(
  workspace_id {INTEGER} NOT NULL,
  path {KEY_TEXT} NOT NULL,
  born {INTEGER} NOT NULL,
  died {INTEGER},                     -- NULL while live
  parent {KEY_TEXT} NOT NULL,
  name {KEY_TEXT} NOT NULL,
  kind {INTEGER} NOT NULL,            -- 0 file, 1 directory
  content_id {INTEGER},               -- files only
  size {INTEGER} NOT NULL,
  version {INTEGER},                  -- files only
  created_ms {INTEGER} NOT NULL,
  modified_ms {INTEGER} NOT NULL,
  PRIMARY KEY(workspace_id, path, born)){CLUSTERED};
CREATE INDEX entries_by_parent ON entries(workspace_id, parent, name, died, kind);
CREATE INDEX entries_by_birth ON entries(workspace_id, born);
CREATE INDEX entries_by_death ON entries(workspace_id, died) WHERE died IS NOT NULL;
INSERT INTO schema_version(version) VALUES(1);
)sql";

}  // namespace

std::string SqlSchemaText(const SqlDialect& dialect) { return Spell(kSchema, dialect); }

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
