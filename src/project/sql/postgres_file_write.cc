// One transaction in one pipeline (PostgresConnection::RunPipeline):
//
//   BEGIN
//   kShareWorkspace   the workspace row FOR SHARE (the lock order's first)
//   kWriteFile        everything else, in one statement (or kCreateFile,
//                     below, for a write expected to create the file)
//   COMMIT
//
// kWriteFile is one statement (one snapshot, so one consistent view of
// the cases) that
//   - locks the file's live row FOR UPDATE (`old`), then, when the file is
//     missing, its parent directory's row FOR SHARE (`parent_row`): the
//     lock order of docs/stores.md, file then parent;
//   - takes one more reference on the content or stores it with its
//     address (sql_content.cc's PutWholeContent: `found`, `stored`,
//     `addressed`), except when the file keeps the content it has (`keep`:
//     rewritten with the same bytes, in place);
//   - writes the entry: in place when no snapshot saw the old row
//     (`updated`), else ends that row and inserts a new one (`killed`,
//     `inserted`), or inserts the missing file (`inserted`), the version
//     one above the old row's;
//   - releases the old content of a row written in place (`released`: a
//     count that stays above zero drops by one; `freed`: a last reference
//     deletes the content and its address);
//   - and checks that exactly one of those cases happened, whole (each
//     part writes at most one row, and released, freed and keep exclude
//     each other, so EXISTS says what a count would; an aggregate per part
//     made a run of the statement a third dearer for the server). When not
//     (a directory at the path, a missing parent, an old chunked
//     content's last reference, a row that changed under a race at READ
//     COMMITTED), it divides by zero:
//     the server ends the statement, skips COMMIT, and the transaction
//     rolls back whole; the caller then goes the shared way.
// At READ COMMITTED a row lock that waited for another writer returns
// that writer's row, newer than the statement's snapshot, while `address`
// and `keep` were read from the snapshot: so the content found by address
// is taken only if it still has the hash (`found`: the shared path's
// ExchangeContent may have given its id other bytes meanwhile), and the
// check declines when the locked row is not the one the snapshot saw
// (`seen`).
// Every part carries its own conditions, since a pipeline's statements
// cannot see each other's answers, and the check is plain SQL that every
// PostgreSQL-compatible engine evaluates alike (no server-side function).
// Within the statement the locks come in the order its parts need them:
// the file's row (`old`, read by every part that writes), the parent's,
// the new content's row, the old content's row (sql_content.cc's order).
#include "project/sql/postgres_file_write.h"

#include <atomic>
#include <string>
#include <vector>

#include "project/content/content_hash.h"
#include "project/path.h"

namespace toolvfs {
namespace {

constexpr const char* kShareWorkspace = "SELECT generation FROM workspaces WHERE id=$1 FOR SHARE";
// $1 workspace, $2 parent, $3 name, $4 path, $5 the content's hash, $6 its
// size, $7 its bytes, $8 now, $9 and $10 the parent's own parent and
// name. A row is written only if its version is the one `old` read. The
// second column says whether the write created the file (PostgresWriteGuess).
constexpr const char* kWriteFile =
    "WITH live AS (SELECT generation FROM workspaces WHERE id=$1), "
    "old AS (SELECT born, kind, content_id, version, created_ms FROM entries "
    "WHERE workspace_id=$1 AND parent=$2 AND name=$3 AND died IS NULL FOR UPDATE), "
    "seen AS (SELECT version FROM entries WHERE workspace_id=$1 AND parent=$2 AND name=$3 AND died IS NULL), "
    "parent_row AS (SELECT kind FROM entries WHERE workspace_id=$1 AND parent=$9 AND name=$10 "
    "AND died IS NULL AND NOT EXISTS (SELECT 1 FROM old) FOR SHARE), "
    "address AS (SELECT content_id FROM content_addresses WHERE hash=$5), "
    "keep AS (SELECT 1 FROM old, live WHERE old.kind=0 AND old.born=live.generation "
    "AND old.content_id=(SELECT content_id FROM address)), "
    "found AS (UPDATE contents SET reference_count=reference_count+1 "
    "WHERE id=(SELECT content_id FROM address) AND hash=$5 AND NOT EXISTS (SELECT 1 FROM keep) RETURNING id), "
    "stored AS (INSERT INTO contents(hash, size, reference_count, data) "
    "SELECT $5, CAST($6 AS BIGINT), 1, CAST($7 AS BYTEA) WHERE NOT EXISTS (SELECT 1 FROM found) "
    "AND NOT EXISTS (SELECT 1 FROM keep) RETURNING id, hash), "
    "addressed AS (INSERT INTO content_addresses(hash, content_id) SELECT hash, id FROM stored), "
    "content AS (SELECT id FROM found UNION ALL SELECT id FROM stored "
    "UNION ALL SELECT content_id FROM address WHERE EXISTS (SELECT 1 FROM keep)), "
    "updated AS (UPDATE entries e SET content_id=(SELECT id FROM content), size=$6, "
    "version=old.version+1, modified_ms=$8 FROM old, live "
    "WHERE e.workspace_id=$1 AND e.parent=$2 AND e.name=$3 AND e.born=old.born AND e.died IS NULL "
    "AND e.version=old.version AND old.kind=0 AND old.born=live.generation "
    "RETURNING old.content_id AS released), "
    "killed AS (UPDATE entries e SET died=live.generation, replaced=1 FROM old, live "
    "WHERE e.workspace_id=$1 AND e.parent=$2 AND e.name=$3 AND e.born=old.born AND e.died IS NULL "
    "AND e.version=old.version AND old.kind=0 AND old.born<live.generation "
    "RETURNING old.version, old.created_ms), "
    "inserted AS (INSERT INTO entries(workspace_id, path, born, died, parent, name, kind, content_id, size, "
    "version, created_ms, modified_ms) "
    "SELECT $1, $4, live.generation, NULL, $2, $3, 0, (SELECT id FROM content), $6, "
    "coalesce((SELECT version FROM killed)+1, 1), coalesce((SELECT created_ms FROM killed), $8), $8 FROM live "
    "WHERE EXISTS (SELECT 1 FROM killed) OR (NOT EXISTS (SELECT 1 FROM old) "
    "AND ($2='' OR EXISTS (SELECT 1 FROM parent_row WHERE kind=1))) RETURNING 1), "
    "released AS (UPDATE contents SET reference_count=reference_count-1 "
    "WHERE id=(SELECT released FROM updated) AND reference_count>1 AND NOT EXISTS (SELECT 1 FROM keep) "
    "RETURNING 1), "
    "freed AS (DELETE FROM contents WHERE id=(SELECT released FROM updated) AND reference_count=1 "
    "AND data IS NOT NULL AND NOT EXISTS (SELECT 1 FROM keep) RETURNING hash), "
    "unaddressed AS (DELETE FROM content_addresses WHERE hash IN (SELECT hash FROM freed)) "
    "SELECT 1/(CASE WHEN EXISTS (SELECT 1 FROM updated) <> EXISTS (SELECT 1 FROM inserted) "
    "AND EXISTS (SELECT 1 FROM updated) = (EXISTS (SELECT 1 FROM released) OR EXISTS (SELECT 1 FROM freed) "
    "OR EXISTS (SELECT 1 FROM keep)) "
    "AND (SELECT version FROM old) IS NOT DISTINCT FROM (SELECT version FROM seen) THEN 1 ELSE 0 END), "
    "NOT EXISTS (SELECT 1 FROM old)";

// kCreateFile: kWriteFile's create case alone, for a write expected to
// create (PostgresWriteGuess) and for every create_only write. It has
// four data-modifying parts to kWriteFile's nine (every run opens each
// part's table and indexes, whether the part writes or not): about half
// the server's time per create (docs/benchmarks.md, "What the write costs
// the server"). The file must
// be missing in the statement's snapshot (`old`, unlocked: a file created
// meanwhile at this generation collides with the inserted row's key,
// 23505, and a file of an older generation was committed before the
// workspace lock and so is in the snapshot); its parent is locked FOR
// SHARE, then the content's row (the lock order of kWriteFile). It answers
// 1 when it created the file, 0 when the file is there (a wrong guess:
// every part that writes is off, so the transaction commits having changed
// nothing and the write goes on to kWriteFile without a ROLLBACK), and
// divides by zero when the parent is missing or not a directory (the
// shared path's case: kWriteFile would decline it too). The divisor is an
// expression, not 0: the planner folds a constant 1/0 at prepare.
// $1 workspace, $2 parent, $3 name, $4 path, $5 the content's hash, $6
// its size, $7 its bytes, $8 now, $9 and $10 the parent's own parent and
// name.
constexpr const char* kCreateFile =
    "WITH live AS (SELECT generation FROM workspaces WHERE id=$1), "
    "old AS (SELECT 1 FROM entries WHERE workspace_id=$1 AND parent=$2 AND name=$3 AND died IS NULL), "
    "parent_row AS (SELECT kind FROM entries WHERE workspace_id=$1 AND parent=$9 AND name=$10 "
    "AND died IS NULL AND NOT EXISTS (SELECT 1 FROM old) FOR SHARE), "
    "address AS (SELECT content_id FROM content_addresses WHERE hash=$5), "
    "found AS (UPDATE contents SET reference_count=reference_count+1 "
    "WHERE id=(SELECT content_id FROM address) AND hash=$5 AND NOT EXISTS (SELECT 1 FROM old) RETURNING id), "
    "stored AS (INSERT INTO contents(hash, size, reference_count, data) "
    "SELECT $5, CAST($6 AS BIGINT), 1, CAST($7 AS BYTEA) WHERE NOT EXISTS (SELECT 1 FROM found) "
    "AND NOT EXISTS (SELECT 1 FROM old) RETURNING id, hash), "
    "addressed AS (INSERT INTO content_addresses(hash, content_id) SELECT hash, id FROM stored), "
    "inserted AS (INSERT INTO entries(workspace_id, path, born, died, parent, name, kind, content_id, size, "
    "version, created_ms, modified_ms) "
    "SELECT $1, $4, live.generation, NULL, $2, $3, 0, "
    "coalesce((SELECT id FROM found), (SELECT id FROM stored)), $6, 1, $8, $8 FROM live "
    "WHERE NOT EXISTS (SELECT 1 FROM old) AND ($2='' OR EXISTS (SELECT 1 FROM parent_row WHERE kind=1)) "
    "RETURNING 1) "
    "SELECT CASE WHEN EXISTS (SELECT 1 FROM old) THEN 0 "
    "ELSE 1/(CASE WHEN EXISTS (SELECT 1 FROM inserted) THEN 1 ELSE 0 END) END";

// What the statements' checks raise when the common case does not apply.
constexpr std::string_view kDeclined = "22012";
// feature_not_supported and its kind: an engine that refuses kWriteFile.
constexpr std::string_view kUnsupportedClass = "0A";

std::atomic<uint64_t> writes_in_one_round_trip{0};
std::atomic<uint64_t> creates_in_one_round_trip{0};

Status PrepareOnce(PostgresConnection& connection, const char* sql) {
  if (connection.IsPrepared(sql)) return OkStatus();
  return connection.Prepare(sql, sql);
}

}  // namespace

bool PostgresWriteGuess::ExpectCreate() const { return expect_create_.load(std::memory_order_relaxed); }

void PostgresWriteGuess::Saw(bool created) { expect_create_.store(created, std::memory_order_relaxed); }

namespace {

// What one try of a statement did.
enum class StatementOutcome {
  kCreated,      // wrote the file, which was missing
  kOverwritten,  // wrote the file, which was there (kWriteFile)
  kFileThere,    // wrote nothing: the file is there (kCreateFile)
  kLeft,         // as PostgresFileWrite::kLeft
  kUnsupported,  // as PostgresFileWrite::kUnsupported
};

// One try of `statement` (kWriteFile or kCreateFile) in one pipeline.
Result<StatementOutcome> RunFileStatement(PostgresConnection& connection, const SqlFileWrite& write,
                                          const char* statement) {
  const std::string_view parent = ParentPath(write.path);
  const ContentHash hash = Sha256(write.content);
  const PostgresParameter workspace = PostgresParameter::Integer(write.workspace_id);
  const PostgresParameter size = PostgresParameter::Integer(static_cast<int64_t>(write.content.size()));
  const std::vector<PostgresConnection::PipelineStep> steps = {
      {nullptr, connection.begin_write(), {}},
      {kShareWorkspace, nullptr, {workspace}},
      {statement,
       nullptr,
       {workspace, PostgresParameter::Text(parent), PostgresParameter::Text(BaseName(write.path)),
        PostgresParameter::Text(write.path), PostgresParameter::Bytes(HashBytes(hash)), size,
        PostgresParameter::Bytes(write.content), PostgresParameter::Integer(write.now_ms),
        PostgresParameter::Text(ParentPath(parent)), PostgresParameter::Text(BaseName(parent))}},
      {nullptr, "COMMIT", {}},
  };
  Result<std::vector<PostgresResult>> answers = connection.RunPipeline(steps);
  if (answers.ok()) {
    // Text answers: kCreateFile's "1" or "0", kWriteFile's second column
    // "t" for a create.
    const PostgresResult& answer = (*answers)[2];
    if (answer.rows() != 1) return InternalError("A file write answered " + std::to_string(answer.rows()) + " rows");
    if (statement == kCreateFile && answer.Text(0, 0) == "0") return StatementOutcome::kFileThere;
    writes_in_one_round_trip.fetch_add(1, std::memory_order_relaxed);
    if (statement == kCreateFile) {
      creates_in_one_round_trip.fetch_add(1, std::memory_order_relaxed);
      return StatementOutcome::kCreated;
    }
    return answer.Text(0, 1) == "t" ? StatementOutcome::kCreated : StatementOutcome::kOverwritten;
  }
  const std::string state = connection.last_sql_state();  // a copy: the ROLLBACK below resets it
  // A failed step leaves the transaction open and failed (a failed COMMIT
  // has ended it already).
  if (!connection.reusable()) (void)connection.Execute("ROLLBACK");
  if (state == kDeclined || IsRetryableSqlState(state) || state == "23505") return StatementOutcome::kLeft;
  if (state.starts_with(kUnsupportedClass)) return StatementOutcome::kUnsupported;
  return answers.status();
}

PostgresFileWrite AsFileWrite(StatementOutcome outcome) {
  switch (outcome) {
    case StatementOutcome::kCreated:
    case StatementOutcome::kOverwritten: return PostgresFileWrite::kWritten;
    case StatementOutcome::kUnsupported: return PostgresFileWrite::kUnsupported;
    case StatementOutcome::kFileThere:
    case StatementOutcome::kLeft: return PostgresFileWrite::kLeft;
  }
  return PostgresFileWrite::kLeft;
}

}  // namespace

Result<PostgresFileWrite> WritePostgresFile(PostgresConnection& connection, const SqlFileWrite& write,
                                            PostgresWriteGuess& guess) {
  if (write.content.size() > kChunkBytes) return PostgresFileWrite::kLeft;
  for (const char* sql : {kShareWorkspace, kWriteFile, kCreateFile}) {
    if (Status prepared = PrepareOnce(connection, sql); !prepared.ok()) {
      if (connection.last_sql_state().starts_with(kUnsupportedClass)) return PostgresFileWrite::kUnsupported;
      return prepared;
    }
  }
  if (write.create_only || guess.ExpectCreate()) {
    TOOLVFS_ASSIGN_OR_RETURN(StatementOutcome outcome, RunFileStatement(connection, write, kCreateFile));
    if (outcome == StatementOutcome::kCreated) guess.Saw(true);
    // Only a file that is there goes on to kWriteFile, and only when the
    // write may replace it (a create_only write of an existing file is the
    // shared path's AlreadyExists); a lost race goes the shared way, which
    // retries with backoff.
    if (outcome != StatementOutcome::kFileThere || write.create_only) return AsFileWrite(outcome);
  }
  TOOLVFS_ASSIGN_OR_RETURN(StatementOutcome outcome, RunFileStatement(connection, write, kWriteFile));
  if (outcome == StatementOutcome::kCreated || outcome == StatementOutcome::kOverwritten) {
    guess.Saw(outcome == StatementOutcome::kCreated);
  }
  return AsFileWrite(outcome);
}

uint64_t PostgresCreatesInOneRoundTrip() { return creates_in_one_round_trip.load(std::memory_order_relaxed); }

uint64_t PostgresWritesInOneRoundTrip() { return writes_in_one_round_trip.load(std::memory_order_relaxed); }

}  // namespace toolvfs
