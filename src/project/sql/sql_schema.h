// The schema of the SQL stores and its versions (docs/stores.md), one text
// for every engine, spelled per engine by its SqlDialect.
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
#include <functional>
#include <string>

#include "core/status.h"
#include "project/sql/sql_connection.h"

namespace toolvfs {

// The schema version this toolvfs writes. A database with a newer one is
// refused; an older one is migrated in a transaction when opened.
// Version 1: the first (toolvfs of issue 17). Version 2: entries keyed by
// (workspace, parent, name, born) without a second path index, content ids
// derived from content hashes (fewer pages per write: docs/stores.md).
// Version 3: contents numbered in order of insertion and found by address
// through content_addresses (a new content is appended, not inserted
// between kilobyte rows; no collision table). Version 4: the birth index
// leaves out generation 1, the rows written before a workspace's first
// snapshot, which no restore, diff or snapshot deletion looks for (one
// B-tree page fewer per write until then). Version 5: contents remember
// the address they had before an in-place rewrite (`former_hash`), whose
// content_addresses row SQLite leaves for later (one B-tree page fewer
// per overwrite of a file no snapshot sees). Version 6: a workspace id is
// never given again after its workspace is deleted (SQLite: AUTOINCREMENT
// on workspaces), so a store left open on a deleted workspace finds it
// gone instead of reading and writing the next workspace created.
inline constexpr int64_t kSqlSchemaVersion = 6;

// The statements that create the current schema in an empty database,
// spelled for `dialect`; they end by recording kSqlSchemaVersion.
std::string SqlSchemaText(const SqlDialect& dialect);

// The workspaces table alone, as version kSqlSchemaVersion has it (what
// SQLite's migration to version 6 rebuilds).
std::string SqlWorkspacesTableText(const SqlDialect& dialect);

// The tables of entries and contents alone, as version kSqlSchemaVersion
// has them (what a migration from version 1 creates anew).
std::string SqlEntryAndContentTablesText(const SqlDialect& dialect);

// Moves a database of schema version `from` (2 or later, older than
// kSqlSchemaVersion) to the current version inside the caller's write
// transaction, in plain SQL that every engine runs, one version after the
// other (2 -> 3 -> 4 -> 5 -> 6). Of 5 -> 6 it only records the version:
// rebuilding a workspaces table whose ids could be reused (SQLite's) is
// the engine's hook's, after this. An engine's migration hook calls it for
// the versions it shares; InvalidArgument for a `from` outside them.
Status MigrateSqlSchemaFrom(SqlConnection& connection, int64_t from);

// Moves a database of schema version `from` (older than kSqlSchemaVersion)
// to the current version, inside the caller's write transaction.
// Migrations are the engine's: only SQLite files exist in older versions.
using SqlSchemaMigration = std::function<Status(SqlConnection&, int64_t from)>;

// Creates the schema in an empty database, or checks and migrates the one
// there, in one write transaction. InvalidArgument when the database holds
// another program's tables; Unsupported for a newer schema, naming both
// versions; Unsupported for an older one when `migrate` is empty.
Status PrepareSqlSchema(SqlConnection& connection, const SqlSchemaMigration& migrate);

}  // namespace toolvfs
