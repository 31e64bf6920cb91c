// One transaction in one pipeline (PostgresConnection::RunPipeline):
//
//   BEGIN
//   kShareWorkspace       the workspace row FOR SHARE (lock order: first)
//   kLockFile             the file's live row FOR UPDATE
//   kShareParent          the parent's live row FOR SHARE, if the file is missing (not for the root)
//   kPutContent           one more reference on the content, or the content stored
//   kReplaceFile          the entry written, the old content released; fails with
//                         division_by_zero (22012) when the common case does not apply
//   COMMIT
//
// Each statement carries its own conditions, since none can see the
// answers of the others. The one that decides, kReplaceFile, is a single
// statement (one snapshot): it takes the file's row as the locks left it,
// writes it in place (no snapshot saw the old row), or ends it and inserts
// a new one (a snapshot saw it), or inserts the missing file; releases the
// old content in place with the same statements' meaning as sql_content.cc
// (a count that stays above zero drops by one, a last reference deletes
// the content and its address); and then checks that exactly one of those
// happened. When not (a directory at the path, a missing parent, a
// create_only write of an existing file, an old chunked content's last
// reference, a row that changed under a race at READ COMMITTED), it divides
// by zero: the server ends the statement, skips COMMIT, and the
// transaction rolls back whole. The check is plain SQL that every
// PostgreSQL-compatible engine evaluates alike (no server-side function).
#include "project/sql/postgres_file_write.h"

#include <string>
#include <vector>

#include "project/path.h"
#include "project/sql/content_hash.h"

namespace toolvfs {
namespace {

constexpr const char* kShareWorkspace = "SELECT generation FROM workspaces WHERE id=$1 FOR SHARE";
constexpr const char* kLockFile =
    "SELECT born FROM entries WHERE workspace_id=$1 AND parent=$2 AND name=$3 AND died IS NULL FOR UPDATE";
// $4, $5: the file's parent and name; the row locked is its directory's.
constexpr const char* kShareParent =
    "SELECT born FROM entries WHERE workspace_id=$1 AND parent=$2 AND name=$3 AND died IS NULL "
    "AND NOT EXISTS (SELECT 1 FROM entries f WHERE f.workspace_id=$1 AND f.parent=$4 AND f.name=$5 "
    "AND f.died IS NULL) FOR SHARE";
// sql_content.cc's PutWholeContent in one statement: a reference added
// under the content row's lock (no row back when a concurrent writer
// deleted it meanwhile: then stored anew), else the content and its
// address inserted (a concurrent writer storing the same bytes makes the
// address a duplicate key: a lost race).
constexpr const char* kPutContent =
    "WITH found AS ("
    "UPDATE contents SET reference_count=reference_count+1 "
    "WHERE id=(SELECT content_id FROM content_addresses WHERE hash=$1) RETURNING id), "
    "stored AS ("
    "INSERT INTO contents(hash, size, reference_count, data) "
    "SELECT $1, CAST($2 AS BIGINT), 1, CAST($3 AS BYTEA) WHERE NOT EXISTS (SELECT 1 FROM found) "
    "RETURNING id, hash), "
    "addressed AS (INSERT INTO content_addresses(hash, content_id) SELECT hash, id FROM stored "
    "RETURNING content_id) "
    "SELECT id FROM found UNION ALL SELECT content_id FROM addressed";
// $1 workspace, $2 parent, $3 name, $4 path, $5 the content's hash, $6 its
// size, $7 now, $8 1 for create_only, $9 and $10 the parent's own parent
// and name. A row is written only if its version is the one `old` read: at
// READ COMMITTED a row that appeared after kLockFile (a concurrent creator)
// may change again before this statement locks it.
constexpr const char* kReplaceFile =
    "WITH live AS (SELECT generation FROM workspaces WHERE id=$1), "
    "old AS (SELECT born, kind, content_id, version, created_ms FROM entries "
    "WHERE workspace_id=$1 AND parent=$2 AND name=$3 AND died IS NULL), "
    "updated AS ("
    "UPDATE entries e SET content_id=(SELECT content_id FROM content_addresses WHERE hash=$5), size=$6, "
    "version=old.version+1, modified_ms=$7 FROM old, live "
    "WHERE e.workspace_id=$1 AND e.parent=$2 AND e.name=$3 AND e.born=old.born AND e.died IS NULL "
    "AND e.version=old.version AND old.kind=0 AND old.born=live.generation AND $8=0 "
    "RETURNING old.content_id AS released), "
    "killed AS ("
    "UPDATE entries e SET died=live.generation, replaced=1 FROM old, live "
    "WHERE e.workspace_id=$1 AND e.parent=$2 AND e.name=$3 AND e.born=old.born AND e.died IS NULL "
    "AND e.version=old.version AND old.kind=0 AND old.born<live.generation AND $8=0 "
    "RETURNING old.version, old.created_ms), "
    "inserted AS ("
    "INSERT INTO entries(workspace_id, path, born, died, parent, name, kind, content_id, size, version, "
    "created_ms, modified_ms) "
    "SELECT $1, $4, live.generation, NULL, $2, $3, 0, "
    "(SELECT content_id FROM content_addresses WHERE hash=$5), $6, "
    "coalesce((SELECT version FROM killed)+1, 1), coalesce((SELECT created_ms FROM killed), $7), $7 FROM live "
    "WHERE EXISTS (SELECT 1 FROM killed) OR (NOT EXISTS (SELECT 1 FROM old) AND ($2='' OR EXISTS ("
    "SELECT 1 FROM entries p WHERE p.workspace_id=$1 AND p.parent=$9 AND p.name=$10 AND p.died IS NULL "
    "AND p.kind=1))) RETURNING 1), "
    "released AS ("
    "UPDATE contents SET reference_count=reference_count-1 "
    "WHERE id=(SELECT released FROM updated) AND reference_count>1 RETURNING 1), "
    "freed AS ("
    "DELETE FROM contents WHERE id=(SELECT released FROM updated) AND reference_count=1 AND data IS NOT NULL "
    "RETURNING hash), "
    "unaddressed AS (DELETE FROM content_addresses WHERE hash IN (SELECT hash FROM freed)) "
    "SELECT 1/(CASE WHEN (SELECT count(*) FROM updated)+(SELECT count(*) FROM inserted)=1 "
    "AND (SELECT count(*) FROM updated)=(SELECT count(*) FROM released)+(SELECT count(*) FROM freed) "
    "THEN 1 ELSE 0 END)";

// What kReplaceFile's check raises when the common case does not apply.
constexpr std::string_view kDeclined = "22012";

Status PrepareOnce(PostgresConnection& connection, const char* sql) {
  if (connection.IsPrepared(sql)) return OkStatus();
  return connection.Prepare(sql, sql);
}

}  // namespace

Result<bool> WritePostgresFile(PostgresConnection& connection, const SqlFileWrite& write) {
  if (write.content.size() > kChunkBytes) return false;
  for (const char* sql : {kShareWorkspace, kLockFile, kShareParent, kPutContent, kReplaceFile}) {
    TOOLVFS_RETURN_IF_ERROR(PrepareOnce(connection, sql));
  }
  const std::string_view parent = ParentPath(write.path);
  const std::string_view name = BaseName(write.path);
  const ContentHash hash = Sha256(write.content);
  const PostgresParameter workspace = PostgresParameter::Integer(write.workspace_id);

  std::vector<PostgresConnection::PipelineStep> steps;
  steps.push_back({nullptr, "BEGIN", {}});
  steps.push_back({kShareWorkspace, nullptr, {workspace}});
  steps.push_back({kLockFile, nullptr,
                   {workspace, PostgresParameter::Text(parent), PostgresParameter::Text(name)}});
  if (!parent.empty()) {
    steps.push_back({kShareParent, nullptr,
                     {workspace, PostgresParameter::Text(ParentPath(parent)), PostgresParameter::Text(BaseName(parent)),
                      PostgresParameter::Text(parent), PostgresParameter::Text(name)}});
  }
  steps.push_back({kPutContent, nullptr,
                   {PostgresParameter::Bytes(HashBytes(hash)),
                    PostgresParameter::Integer(static_cast<int64_t>(write.content.size())),
                    PostgresParameter::Bytes(write.content)}});
  steps.push_back({kReplaceFile, nullptr,
                   {workspace, PostgresParameter::Text(parent), PostgresParameter::Text(name),
                    PostgresParameter::Text(write.path), PostgresParameter::Bytes(HashBytes(hash)),
                    PostgresParameter::Integer(static_cast<int64_t>(write.content.size())),
                    PostgresParameter::Integer(write.now_ms), PostgresParameter::Integer(write.create_only ? 1 : 0),
                    PostgresParameter::Text(ParentPath(parent)), PostgresParameter::Text(BaseName(parent))}});
  steps.push_back({nullptr, "COMMIT", {}});

  Result<std::vector<PostgresResult>> answers = connection.RunPipeline(steps);
  if (answers.ok()) return true;
  const std::string state = connection.last_sql_state();  // a copy: the ROLLBACK below resets it
  // A failed step leaves the transaction open and failed (a failed COMMIT
  // has ended it already).
  if (!connection.reusable()) (void)connection.Execute("ROLLBACK");
  if (state == kDeclined || IsRetryableSqlState(state) || state == "23505") return false;
  return answers.status();
}

}  // namespace toolvfs
