// The shared store of the SQL engines (sql_store.h; schema in sql_schema.*).
//
// Concurrency. Each call borrows a connection from the engine
// (SqlDatabase::Connect), so reads run in parallel. Writers of this
// process take the workspace's write mutex, then run their change through
// SqlDatabase::RunWriteTransaction, which orders them against other
// processes (SQLite: BEGIN IMMEDIATE and the busy timeout; PostgreSQL: its
// isolation, with retries of lost races: so a change's body only touches
// the database). Everything a write does is one transaction: a write, a
// delete of a directory with all below it, a rename of one, a snapshot, a
// restore.
//
// Reading a row of a past state (a snapshot project, a restore, a diff)
// uses the same statements as the live state, with the generation to look
// at: kLive for the live state, where `died > kLive` is never true and only
// `died IS NULL` rows match. A snapshot project's reads also find its
// snapshot's row in the same view (BeginReadOfSnapshot), since a deleted
// snapshot's generation shows other rows.
#include "project/sql/sql_store.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "core/text.h"
#include "core/unique_fd.h"
#include "project/grep.h"
#include "project/materialized_copy.h"
#include "project/path.h"
#include "project/content/content_hash.h"
#include "project/sql/sql_content.h"
#include "project/sql/workspace_uri.h"
#include "project/store_errors.h"

namespace toolvfs {
namespace {

constexpr int64_t kLive = std::numeric_limits<int64_t>::max();
constexpr int64_t kFileKind = 0;
constexpr int64_t kDirectoryKind = 1;

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// ----- Statements -------------------------------------------------------------
// ?1 is the workspace id throughout. A row is found by its primary key
// (workspace_id, parent, name, born): ParentPath and BaseName of its path.
// `+born` keeps a planner without statistics (SQLite before ANALYZE) from
// walking the birth index, i.e. the whole workspace, instead of the key;
// a unary plus is plain SQL to every engine.

constexpr const char* kLookUpEntry =
    "SELECT kind, born, content_id, size, version, created_ms, modified_ms FROM entries "
    "WHERE workspace_id=?1 AND parent=?2 AND name=?3 AND +born<=?4 AND (died IS NULL OR died>?4)";
// kLookUpEntry of a row a write changes (FOR UPDATE) or builds on, as the
// parent of what it creates (FOR SHARE), on engines with row locks
// (SqlDialect::row_locks; docs/stores.md, "Concurrency").
constexpr const char* kLockEntry =
    "SELECT kind, born, content_id, size, version, created_ms, modified_ms FROM entries "
    "WHERE workspace_id=?1 AND parent=?2 AND name=?3 AND +born<=?4 AND (died IS NULL OR died>?4) FOR UPDATE";
constexpr const char* kShareEntry =
    "SELECT kind, born, content_id, size, version, created_ms, modified_ms FROM entries "
    "WHERE workspace_id=?1 AND parent=?2 AND name=?3 AND +born<=?4 AND (died IS NULL OR died>?4) FOR SHARE";
// A file and, when it is stored whole, its bytes, in one statement (so one
// consistent read without a transaction: the common case of a small file).
constexpr const char* kReadWholeEntry =
    "SELECT e.kind, e.size, c.data FROM entries e LEFT JOIN contents c ON c.id=e.content_id "
    "WHERE e.workspace_id=?1 AND e.parent=?2 AND e.name=?3 AND +e.born<=?4 AND (e.died IS NULL OR e.died>?4)";
// kLookUpEntry and kReadWholeEntry of a snapshot project: a row only while
// snapshot ?5 is there, seen in the same statement, so a row found is the
// snapshot's (SnapshotStillThere). Finding none, the read goes on in a
// transaction that says which of the two is missing.
constexpr const char* kLookUpSnapshotEntry =
    "SELECT kind, born, content_id, size, version, created_ms, modified_ms FROM entries "
    "WHERE workspace_id=?1 AND parent=?2 AND name=?3 AND +born<=?4 AND (died IS NULL OR died>?4) "
    "AND EXISTS (SELECT 1 FROM snapshots WHERE workspace_id=?1 AND id=?5)";
constexpr const char* kReadWholeSnapshotEntry =
    "SELECT e.kind, e.size, c.data FROM entries e LEFT JOIN contents c ON c.id=e.content_id "
    "WHERE e.workspace_id=?1 AND e.parent=?2 AND e.name=?3 AND +e.born<=?4 AND (e.died IS NULL OR e.died>?4) "
    "AND EXISTS (SELECT 1 FROM snapshots s WHERE s.workspace_id=?1 AND s.id=?5)";
// The children of directory ?2, alone: a listing that finds any needs no
// look at the directory's own row (a live child's parent is a directory
// in every state), so one range of the key, without a second seek. In
// key order, which the ORDER BY promises at no cost (SQLite's and
// PostgreSQL's plans read the key in order, no sort).
constexpr const char* kListLiveChildren =
    "SELECT kind, name FROM entries WHERE workspace_id=?1 AND parent=?2 AND died IS NULL ORDER BY name";
// The same on engines with SqlDialect::list_by_generation. A row is dead
// only if a change after a snapshot retired it (a row born in the current
// generation is deleted, not retired: RetireEntry), so a workspace still at
// generation 1 has none, and its listing reads the range without a test
// per row; the generation is read in the same statement, once per arm (the
// workspace row is the outer loop of each join), so a snapshot another
// process just took is seen. No ORDER BY: SQLite sorts a compound by
// merging its arms, which costs more than the test it saves. The rows come
// in name order all the same: only one arm yields rows, and every plan of
// an arm reads `entries` in key order (parent fixed: by name), since no
// other access path is open to it (the birth and death indexes are partial
// on conditions the arms do not imply, and a scan of a WITHOUT ROWID table
// follows its key); LiveListingsSee... in sqlite_store_test.cc checks it.
constexpr const char* kListLiveChildrenByGeneration =
    "SELECT e.kind, e.name FROM workspaces w JOIN entries e ON e.workspace_id=w.id "
    "WHERE w.id=?1 AND w.generation=1 AND e.parent=?2 "
    "UNION ALL SELECT e.kind, e.name FROM workspaces w JOIN entries e ON e.workspace_id=w.id "
    "WHERE w.id=?1 AND w.generation>1 AND e.parent=?2 AND e.died IS NULL";
// A snapshot project's (generation ?3): rows only while snapshot ?4 is
// there, seen in the same statement, as kLookUpSnapshotEntry.
constexpr const char* kListChildren =
    "SELECT kind, name FROM entries WHERE workspace_id=?1 AND parent=?2 AND +born<=?3 "
    "AND (died IS NULL OR died>?3) AND EXISTS (SELECT 1 FROM snapshots WHERE workspace_id=?1 AND id=?4) "
    "ORDER BY name";
// When there are none: directory ?4 (its own row, parent ?2 and name ?3:
// its kind) and its children (their kind + kChildKind: `kind+2`), one
// statement, so that "exists and is empty" or "missing" is one consistent
// read. One integer column per row, not two: a column read is a call into
// SQLite, per row.
constexpr int64_t kChildKind = 2;
constexpr const char* kListDirectory =
    "SELECT kind, name FROM entries WHERE workspace_id=?1 AND parent=?2 AND name=?3 AND +born<=?5 "
    "AND (died IS NULL OR died>?5) "
    "UNION ALL SELECT kind+2, name FROM entries WHERE workspace_id=?1 AND parent=?4 AND +born<=?5 "
    "AND (died IS NULL OR died>?5)";
// The same for the live state: `died IS NULL` alone, fewer steps per row.
constexpr const char* kListLiveDirectory =
    "SELECT kind, name FROM entries WHERE workspace_id=?1 AND parent=?2 AND name=?3 AND died IS NULL "
    "UNION ALL SELECT kind+2, name FROM entries WHERE workspace_id=?1 AND parent=?4 AND died IS NULL";
constexpr const char* kEntriesAt =
    "SELECT e.path, e.kind, e.content_id, e.size, e.modified_ms, c.hash FROM entries e "
    "LEFT JOIN contents c ON c.id=e.content_id "
    "WHERE e.workspace_id=?1 AND e.born<=?2 AND (e.died IS NULL OR e.died>?2) ORDER BY e.path";
constexpr const char* kHasLiveChild =
    "SELECT 1 FROM entries WHERE workspace_id=?1 AND parent=?2 AND died IS NULL LIMIT 1";
// The live rows below directory ?4: its children (parent ?4) and theirs
// (parent in ["?4/", "?40")), two ranges of the primary key.
constexpr const char* kLiveSubtree =
    "SELECT path, born, kind, content_id, size, version, created_ms, modified_ms FROM entries "
    "WHERE workspace_id=?1 AND parent=?4 AND died IS NULL "
    "UNION ALL SELECT path, born, kind, content_id, size, version, created_ms, modified_ms FROM entries "
    "WHERE workspace_id=?1 AND parent>=?2 AND parent<?3 AND died IS NULL ORDER BY 1";
constexpr const char* kInsertEntry =
    "INSERT INTO entries(workspace_id, path, born, died, parent, name, kind, content_id, size, "
    "version, created_ms, modified_ms) VALUES(?1, ?2, ?3, NULL, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)";
constexpr const char* kKillEntry =
    "UPDATE entries SET died=?4 WHERE workspace_id=?1 AND parent=?2 AND name=?5 AND born=?3";
// The same for a row that a new row at its path (born ?4) replaces: marked
// `replaced`, it stays out of the death index, since the new row's birth
// already marks the path as changed at ?4 (one index entry per overwrite
// after a snapshot, not two).
constexpr const char* kKillReplacedEntry =
    "UPDATE entries SET died=?4, replaced=1 WHERE workspace_id=?1 AND parent=?2 AND name=?5 AND born=?3";
// When the row born at ?4 goes, the row it replaced needs its death
// indexed again: nothing else would mark the path as changed at ?4.
constexpr const char* kUnreplacePredecessor =
    "UPDATE entries SET replaced=NULL WHERE workspace_id=?1 AND parent=?2 AND name=?3 AND died=?4 "
    "AND replaced IS NOT NULL";
constexpr const char* kDropEntry = "DELETE FROM entries WHERE workspace_id=?1 AND parent=?2 AND name=?3 AND born=?4";
constexpr const char* kSetEntryMetadata =
    "UPDATE entries SET version=?4, created_ms=?5, modified_ms=?6 "
    "WHERE workspace_id=?1 AND parent=?2 AND name=?3 AND died IS NULL";
constexpr const char* kReplaceEntryContent =
    "UPDATE entries SET content_id=?4, size=?5, version=?6, modified_ms=?7 "
    "WHERE workspace_id=?1 AND parent=?2 AND name=?8 AND born=?3";

constexpr const char* kWorkspaceState =
    "SELECT generation, next_snapshot, created_ms FROM workspaces WHERE id=?1";
// The workspace row as a write takes it on engines with row locks: shared
// by writes of single files, which then lock their entry rows; alone by
// changes of whole subtrees or of the generation (snapshot, restore).
constexpr const char* kShareWorkspace =
    "SELECT generation, next_snapshot, created_ms FROM workspaces WHERE id=?1 FOR SHARE";
constexpr const char* kLockWorkspace =
    "SELECT generation, next_snapshot, created_ms FROM workspaces WHERE id=?1 FOR UPDATE";
constexpr const char* kLockWorkspaceByName = "SELECT id FROM workspaces WHERE name=?1 FOR UPDATE";
constexpr const char* kLockEveryWorkspace = "SELECT id FROM workspaces ORDER BY id FOR UPDATE";
constexpr const char* kFindWorkspace = "SELECT id FROM workspaces WHERE name=?1";
// No row back when a concurrent opener created the workspace first.
constexpr const char* kInsertWorkspace =
    "INSERT INTO workspaces(name, generation, next_snapshot, created_ms) VALUES(?1, 1, 1, ?2) "
    "ON CONFLICT(name) DO NOTHING RETURNING id";
// A snapshot freezes the current generation under the next id and starts
// a new generation; the old values come back (RETURNING gives the new row).
constexpr const char* kAdvanceGeneration =
    "UPDATE workspaces SET generation=generation+1, next_snapshot=next_snapshot+1 WHERE id=?1 "
    "RETURNING generation-1, next_snapshot-1";
constexpr const char* kInsertSnapshot =
    "INSERT INTO snapshots(workspace_id, id, generation, label, created_ms) VALUES(?1, ?2, ?3, ?4, ?5)";
constexpr const char* kSnapshotById = "SELECT id, generation FROM snapshots WHERE workspace_id=?1 AND id=?2";
constexpr const char* kSnapshotsByLabel =
    "SELECT id, generation FROM snapshots WHERE workspace_id=?1 AND label=?2 LIMIT 2";
constexpr const char* kListSnapshots =
    "SELECT id, label, created_ms FROM snapshots WHERE workspace_id=?1 ORDER BY id";
constexpr const char* kDeleteSnapshot = "DELETE FROM snapshots WHERE workspace_id=?1 AND id=?2";
constexpr const char* kPreviousSnapshotGeneration =
    "SELECT max(generation) FROM snapshots WHERE workspace_id=?1 AND generation<?2";
constexpr const char* kNextSnapshotGeneration =
    "SELECT min(generation) FROM snapshots WHERE workspace_id=?1 AND generation>?2";
// Paths with a row born or dead in (?2, ?3]: every path whose entry may
// differ between the states at generations ?2 and ?3. A replaced row's
// death is its successor's birth, so the first arm finds it. ?2 is a
// snapshot's generation, so at least 1: `born>1` says so to the engine,
// which then reads the birth index (it leaves out generation 1).
constexpr const char* kChangedPaths =
    "SELECT path FROM entries WHERE workspace_id=?1 AND born>?2 AND born<=?3 AND born>1 "
    "UNION SELECT path FROM entries WHERE workspace_id=?1 AND died>?2 AND died<=?3 AND replaced IS NULL "
    "ORDER BY path";
// Dead rows seen by no state but those in (?2, ?5]: born in (?2, ?5], dead
// in (?3, ?4]. Those a new row replaced are found through their
// successors' births (the same path, born when they died; ?3 is at least
// 1, so `born>1`). For a snapshot with a next one, ?3=?5 is its own
// generation and ?4 the next's; for the newest, ?3 is the previous one's
// + 1 and ?4=?5 the live generation, so that every dead row born after
// the previous snapshot goes (DeleteSnapshot).
constexpr const char* kRowsSeenOnlyBetween =
    "SELECT path, born, content_id FROM entries WHERE workspace_id=?1 AND died>?3 AND died<=?4 "
    "AND born>?2 AND born<=?5 AND replaced IS NULL "
    "UNION ALL SELECT p.path, p.born, p.content_id FROM entries n JOIN entries p "
    "ON p.workspace_id=n.workspace_id AND p.parent=n.parent AND p.name=n.name AND p.died=n.born "
    "WHERE n.workspace_id=?1 AND n.born>?3 AND n.born<=?4 AND n.born>1 AND p.replaced IS NOT NULL "
    "AND p.born>?2 AND p.born<=?5";
// Once the newest snapshot is gone, the live generation moves back to ?2
// (the previous snapshot's + 1): the rows born in (?2, ?3] (live ones by
// then) are born at ?2 again, and rows that died in (?2, ?3] die at ?2.
constexpr const char* kRowsBornBetween =
    "SELECT path, born FROM entries WHERE workspace_id=?1 AND born>?2 AND born<=?3 AND born>1";
constexpr const char* kLowerPredecessorDeath =
    "UPDATE entries SET died=?5 WHERE workspace_id=?1 AND parent=?2 AND name=?3 AND died=?4";
constexpr const char* kLowerBirth =
    "UPDATE entries SET born=?5 WHERE workspace_id=?1 AND parent=?2 AND name=?3 AND born=?4";
constexpr const char* kLowerDeaths =
    "UPDATE entries SET died=?2 WHERE workspace_id=?1 AND died>?2 AND died<=?3 AND replaced IS NULL";
constexpr const char* kSetGeneration = "UPDATE workspaces SET generation=?2 WHERE id=?1";

// ----- Rows ---------------------------------------------------------------------

struct Entry {
  EntryKind kind = EntryKind::kDirectory;
  int64_t born = 0;
  std::optional<int64_t> content_id;
  uint64_t size = 0;
  std::optional<int64_t> version;
  int64_t created_ms = 0;
  int64_t modified_ms = 0;

  bool is_directory() const { return kind == EntryKind::kDirectory; }
};

EntryKind KindOf(int64_t stored) { return stored == kDirectoryKind ? EntryKind::kDirectory : EntryKind::kFile; }

// "dir0" just past every "dir/..." path ('0' follows '/'): the end of a
// subtree's key range.
std::string PastSubtree(std::string_view dir) { return std::string(dir) + "0"; }

// ----- Reading rows -------------------------------------------------------------

// The entry at `path` in the state at generation `at`, with `statement`
// (kLookUpEntry, or a locking variant of it; kLookUpSnapshotEntry with
// `snapshot_id`).
Result<std::optional<Entry>> LookUp(SqlConnection& db, int64_t workspace, std::string_view path,
                                    int64_t at, int64_t root_created_ms, const char* statement_sql = kLookUpEntry,
                                    std::optional<int64_t> snapshot_id = std::nullopt) {
  if (path.empty()) {
    Entry root;
    root.created_ms = root.modified_ms = root_created_ms;
    return std::optional<Entry>(root);
  }
  TOOLVFS_ASSIGN_OR_RETURN(SqlStatement statement, db.Prepare(statement_sql));
  statement.Bind(1, workspace).Bind(2, ParentPath(path)).Bind(3, BaseName(path)).Bind(4, at);
  if (snapshot_id) statement.Bind(5, *snapshot_id);
  TOOLVFS_ASSIGN_OR_RETURN(bool found, statement.Step());
  if (!found) return std::optional<Entry>();
  Entry entry;
  entry.kind = KindOf(statement.Int(0));
  entry.born = statement.Int(1);
  entry.content_id = statement.OptionalInt(2);
  entry.size = static_cast<uint64_t>(statement.Int(3));
  entry.version = statement.OptionalInt(4);
  entry.created_ms = statement.Int(5);
  entry.modified_ms = statement.Int(6);
  return std::optional<Entry>(entry);
}

// Deletes the row of `path` born at `born`, and gives the row it replaced,
// if any, its place in the death index back (kUnreplacePredecessor).
Status DropEntryRow(SqlConnection& db, int64_t workspace, std::string_view path, int64_t born) {
  for (const char* sql : {kDropEntry, kUnreplacePredecessor}) {
    TOOLVFS_ASSIGN_OR_RETURN(SqlStatement statement, db.Prepare(sql));
    statement.Bind(1, workspace).Bind(2, ParentPath(path)).Bind(3, BaseName(path)).Bind(4, born);
    TOOLVFS_RETURN_IF_ERROR(statement.Run());
  }
  return OkStatus();
}

// ----- Workspace state ------------------------------------------------------------

// What one open workspace shares with its grep trees and materialized views.
struct Workspace {
  std::string location;     // the file or server, as messages name it
  std::string display;      // the project's URI without a password: "sqlite:FILE#WORKSPACE[@SNAPSHOT]", ...
  std::string name;
  StoreOptions options;
  int64_t id = 0;
  int64_t created_ms = 0;
  int64_t at = kLive;       // the generation looked at: kLive, or a snapshot's
  std::string snapshot;     // the snapshot's id when read-only
  int64_t snapshot_id = 0;  // the same id, as its `snapshots` row holds it
  std::shared_ptr<SqlDatabase> database;  // lends connections: using one changes nothing of the workspace
  bool row_locks = false;   // the engine's SqlDialect::row_locks

  Workspace(std::shared_ptr<SqlDatabase> sql_database, std::string location_name, std::string display_name,
            const StoreOptions& store_options)
      : location(std::move(location_name)),
        display(std::move(display_name)),
        options(store_options),
        database(std::move(sql_database)) {}

  bool read_only() const { return at != kLive; }

  // `display` without "@SNAPSHOT": the workspace, as a message that is not
  // about one of its snapshots names it. A location may hold '@'
  // (postgres://user@host), a workspace name never does.
  std::string live_display() const {
    const size_t hash = display.rfind('#');
    if (hash == std::string::npos) return display;
    return display.substr(0, display.find('@', hash));
  }
};

// What a write transaction may change, so what it locks on engines with
// row locks (docs/stores.md, "Concurrency").
enum class WriteScope {
  kFiles,      // single entries: the workspace row shared, each entry row it changes locked
  kWorkspace,  // anything (subtrees, the generation): the workspace row alone
};

// A write transaction on the live state of a workspace, with its current
// generation and the time of the change.
struct Change {
  SqlConnection& db;
  const Workspace& workspace;
  int64_t generation;
  int64_t now;
  WriteScope scope = WriteScope::kWorkspace;
  bool* needs_workspace = nullptr;  // set by MayChangeSubtree

  // Whether rows this change reads to change must be locked as it reads them.
  bool locks_rows() const { return workspace.row_locks && scope == WriteScope::kFiles; }
};

// Whether `change` may go on with what it found: false (and the change is
// to be run again with the whole workspace, InWriteTransaction) when it
// locked single files but found a subtree to move or delete.
bool MayChangeSubtree(const Change& change) {
  if (!change.locks_rows()) return true;
  *change.needs_workspace = true;
  return false;
}

// Why a change stopped at MayChangeSubtree (never reported: it runs again).
Status SubtreeNeedsWholeWorkspace() { return ChangedError("the change touches a subtree; running it again alone"); }

// What a store left open on a deleted workspace answers. Its workspace's
// id is never given to another (schema version 6), so the missing row says so.
Status WorkspaceDeletedError(const Workspace& workspace) {
  return NotFoundError("The workspace " + Quote(workspace.display) + " was deleted while it was open");
}

// OK while the workspace's row is there; WorkspaceDeletedError after.
Status WorkspaceStillThere(SqlConnection& db, const Workspace& workspace) {
  TOOLVFS_ASSIGN_OR_RETURN(SqlStatement state, db.Prepare(kWorkspaceState));
  state.Bind(1, workspace.id);
  TOOLVFS_ASSIGN_OR_RETURN(bool found, state.Step());
  if (!found) return WorkspaceDeletedError(workspace);
  return OkStatus();
}

// What a snapshot project left open on a deleted snapshot answers. The
// rows of its generation are no longer its state (DeleteSnapshot): those
// only it saw are gone, and when it was the newest, the live generation
// moved back to its own and took the rows born since with it.
Status SnapshotDeletedError(const Workspace& workspace) {
  return NotFoundError("The snapshot " + Quote(workspace.snapshot) + " of workspace " + Quote(workspace.name) +
                       " was deleted while it was open");
}

// OK while a snapshot project's snapshot row is there; WorkspaceDeletedError
// when the workspace went with it, SnapshotDeletedError when it went alone.
// A snapshot's id is never given again (next_snapshot only grows).
Status SnapshotStillThere(SqlConnection& db, const Workspace& workspace) {
  {
    TOOLVFS_ASSIGN_OR_RETURN(SqlStatement snapshot, db.Prepare(kSnapshotById));
    snapshot.Bind(1, workspace.id).Bind(2, workspace.snapshot_id);
    TOOLVFS_ASSIGN_OR_RETURN(bool found, snapshot.Step());
    if (found) return OkStatus();
  }
  TOOLVFS_RETURN_IF_ERROR(WorkspaceStillThere(db, workspace));
  return SnapshotDeletedError(workspace);
}

// Begins `transaction`, in which a read of a snapshot project runs unless
// one statement that finds the snapshot's row too answers it
// (kLookUpSnapshotEntry, kReadWholeSnapshotEntry, kListChildren): its first
// statement finds the snapshot's row (SnapshotStillThere), so the rest of
// it reads the snapshot's own state, even if a deletion commits meanwhile.
// Ended by its destructor (a read has nothing to commit). Called only for a
// snapshot project: the live state's reads take no transaction, no look at
// `snapshots` and no call (the read_only() test is at each caller).
Status BeginReadOfSnapshot(SqlConnection& db, const Workspace& workspace,
                           std::optional<SqlTransaction>& transaction) {
  TOOLVFS_ASSIGN_OR_RETURN(SqlTransaction begun, SqlTransaction::Begin(db, SqlTransactionKind::kRead));
  transaction.emplace(std::move(begun));
  return SnapshotStillThere(db, workspace);
}

// The generation of the live state, with the workspace row locked as
// `scope` needs (the first lock a write takes: docs/stores.md, "Lock order").
Result<int64_t> CurrentGeneration(SqlConnection& db, const Workspace& workspace, WriteScope scope) {
  const char* sql = !workspace.row_locks ? kWorkspaceState
                    : scope == WriteScope::kFiles ? kShareWorkspace
                                                  : kLockWorkspace;
  TOOLVFS_ASSIGN_OR_RETURN(SqlStatement state, db.Prepare(sql));
  state.Bind(1, workspace.id);
  TOOLVFS_ASSIGN_OR_RETURN(bool found, state.Step());
  if (!found) return WorkspaceDeletedError(workspace);
  return state.Int(0);
}

Status InsertEntry(const Change& change, std::string_view path, const Entry& entry) {
  TOOLVFS_ASSIGN_OR_RETURN(SqlStatement insert, change.db.Prepare(kInsertEntry));
  insert.Bind(1, change.workspace.id)
      .Bind(2, path)
      .Bind(3, change.generation)
      .Bind(4, ParentPath(path))
      .Bind(5, BaseName(path))
      .Bind(6, entry.is_directory() ? kDirectoryKind : kFileKind)
      .Bind(7, entry.content_id)
      .Bind(8, static_cast<int64_t>(entry.size))
      .Bind(9, entry.version)
      .Bind(10, entry.created_ms)
      .Bind(11, entry.modified_ms);
  return insert.Run();
}

// Ends the live row `entry` at `path`: a row born in this generation is
// seen by no snapshot and goes (with its content reference); an older one
// is marked dead, for the snapshots that see it.
// `replaced`: a new row at `path` takes its place in this change.
Status RetireEntry(const Change& change, std::string_view path, const Entry& entry, bool replaced = false) {
  if (entry.born == change.generation) {
    TOOLVFS_RETURN_IF_ERROR(DropEntryRow(change.db, change.workspace.id, path, entry.born));
    if (entry.content_id) return ReleaseContent(change.db, *entry.content_id);
    return OkStatus();
  }
  TOOLVFS_ASSIGN_OR_RETURN(SqlStatement kill, change.db.Prepare(replaced ? kKillReplacedEntry : kKillEntry));
  kill.Bind(1, change.workspace.id)
      .Bind(2, ParentPath(path))
      .Bind(3, entry.born)
      .Bind(4, change.generation)
      .Bind(5, BaseName(path));
  return kill.Run();
}

// The live rows strictly below directory `dir` (not the root), by path.
Result<std::vector<std::pair<std::string, Entry>>> LiveDescendants(const Change& change, std::string_view dir) {
  TOOLVFS_ASSIGN_OR_RETURN(SqlStatement select, change.db.Prepare(kLiveSubtree));
  const std::string first = std::string(dir) + "/";
  const std::string past = PastSubtree(dir);
  select.Bind(1, change.workspace.id).Bind(2, first).Bind(3, past).Bind(4, dir);
  std::vector<std::pair<std::string, Entry>> rows;
  while (true) {
    TOOLVFS_ASSIGN_OR_RETURN(bool row, select.Step());
    if (!row) break;
    Entry entry;
    entry.born = select.Int(1);
    entry.kind = KindOf(select.Int(2));
    entry.content_id = select.OptionalInt(3);
    entry.size = static_cast<uint64_t>(select.Int(4));
    entry.version = select.OptionalInt(5);
    entry.created_ms = select.Int(6);
    entry.modified_ms = select.Int(7);
    rows.emplace_back(std::string(select.Text(0)), entry);
  }
  return rows;
}

Result<bool> HasLiveChildren(const Change& change, std::string_view dir) {
  TOOLVFS_ASSIGN_OR_RETURN(SqlStatement select, change.db.Prepare(kHasLiveChild));
  select.Bind(1, change.workspace.id).Bind(2, dir);
  return select.Step();
}

// The first ancestor of `path` that is a file at generation `at`, if any.
// Every ancestor of an entry is a directory, so the deepest existing
// ancestor is the only one that can be a file.
Result<std::optional<std::string>> FileAncestor(SqlConnection& db, const Workspace& workspace,
                                                std::string_view path, int64_t at) {
  std::string_view ancestor = ParentPath(path);
  while (!ancestor.empty()) {
    TOOLVFS_ASSIGN_OR_RETURN(std::optional<Entry> entry,
                             LookUp(db, workspace.id, ancestor, at, workspace.created_ms));
    if (entry) {
      if (entry->is_directory()) return std::optional<std::string>();
      return std::optional<std::string>(std::string(ancestor));
    }
    ancestor = ParentPath(ancestor);
  }
  return std::optional<std::string>();
}

// NotDirectory if an ancestor of the missing `path` is a file, else
// NotFound (the wording of store_errors.h); NotFound naming the workspace
// when it was deleted, which took every path with it. Reads look at the
// workspace row only here, on the way to an error, so a read that finds
// its path costs nothing more.
Status MissingOrParentIsFile(SqlConnection& db, const Workspace& workspace, std::string_view path,
                             int64_t at, std::string_view verb, std::string_view noun) {
  TOOLVFS_RETURN_IF_ERROR(WorkspaceStillThere(db, workspace));
  TOOLVFS_ASSIGN_OR_RETURN(std::optional<std::string> file, FileAncestor(db, workspace, path, at));
  if (file) return ParentIsFileError(CannotDo(verb, path), *file);
  return MissingError(noun, path);
}

// Creates the missing ancestors of `path`; NotDirectory (worded with
// `what`) if one is a file.
// `what` says what was being done, for the error: a callable returning
// the message's start ("Cannot write 'a/b'"), called only on an error, so
// that a write that succeeds builds no message.
template <typename What>
Status CreateParents(const Change& change, std::string_view path, const What& what) {
  std::vector<std::string_view> missing;
  std::string_view ancestor = ParentPath(path);
  while (!ancestor.empty()) {
    // Shared: writers creating in one directory go side by side, and one
    // deleting it waits for them (or they for it, then find it gone).
    TOOLVFS_ASSIGN_OR_RETURN(std::optional<Entry> entry,
                             LookUp(change.db, change.workspace.id, ancestor, kLive, change.workspace.created_ms,
                                    change.locks_rows() ? kShareEntry : kLookUpEntry));
    if (entry) {
      if (!entry->is_directory()) return ParentIsFileError(what(), ancestor);
      break;
    }
    missing.push_back(ancestor);
    ancestor = ParentPath(ancestor);
  }
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
    Entry directory;
    directory.created_ms = directory.modified_ms = change.now;
    TOOLVFS_RETURN_IF_ERROR(InsertEntry(change, *it, directory));
  }
  return OkStatus();
}

// The live entry at `path`, locked against other writers until the change
// ends when the change locks rows: a second writer of the same file waits
// here, then reads what the first one wrote.
Result<std::optional<Entry>> LookUpLive(const Change& change, std::string_view path) {
  return LookUp(change.db, change.workspace.id, path, kLive, change.workspace.created_ms,
                change.locks_rows() ? kLockEntry : kLookUpEntry);
}

// LookUpLive for a change that fails when `path` is missing (a delete, a
// rename's source). On an engine that locks rows at READ COMMITTED, a
// lock that waited for a writer who replaced the row (an overwrite after a
// snapshot ends the old row and inserts a new one) finds the old row ended
// and skips it, and the statement's snapshot, older than the new row, does
// not show that one: the file would look missing though it never was. A
// second look, a statement of its own, sees the new row. (A write that
// finds its file missing inserts it and collides with the new row's key,
// which retries the whole change; so do restore and rename's target.)
Result<std::optional<Entry>> LookUpLiveThatMustExist(const Change& change, std::string_view path) {
  TOOLVFS_ASSIGN_OR_RETURN(std::optional<Entry> entry, LookUpLive(change, path));
  if (entry || !change.locks_rows()) return entry;
  return LookUpLive(change, path);
}

// Gives the live row at `path` born at `next.born`, which no snapshot
// sees, the content, size, version and time of `next`.
Status UpdateEntryInPlace(const Change& change, std::string_view path, const Entry& next) {
  TOOLVFS_ASSIGN_OR_RETURN(SqlStatement update, change.db.Prepare(kReplaceEntryContent));
  update.Bind(1, change.workspace.id)
      .Bind(2, ParentPath(path))
      .Bind(8, BaseName(path))
      .Bind(3, next.born)
      .Bind(4, next.content_id)
      .Bind(5, static_cast<int64_t>(next.size))
      .Bind(6, next.version)
      .Bind(7, next.modified_ms);
  return update.Run();
}

// Replaces the live row `old` at `path` with `next` (same path): in place
// when no snapshot saw `old`, else as a new row.
Status ReplaceEntry(const Change& change, std::string_view path, const Entry& old, const Entry& next) {
  if (old.born == change.generation) {
    TOOLVFS_RETURN_IF_ERROR(UpdateEntryInPlace(change, path, next));
    if (old.content_id) return ReleaseContent(change.db, *old.content_id);
    return OkStatus();
  }
  TOOLVFS_RETURN_IF_ERROR(RetireEntry(change, path, old, /*replaced=*/true));
  return InsertEntry(change, path, next);
}

// ProjectFiles::Write of normalized, non-root `path` inside `change`.
// `content` hashed already (an AddressedContent: a synced-back file) is not
// hashed again.
Status WriteFile(const Change& change, const std::string& path, const ContentToWrite& content, WriteMode mode) {
  TOOLVFS_ASSIGN_OR_RETURN(std::optional<Entry> existing, LookUpLive(change, path));
  if (!existing) {
    TOOLVFS_RETURN_IF_ERROR(CreateParents(change, path, [&] { return CannotDo("write", path); }));
    Entry file;
    file.kind = EntryKind::kFile;
    TOOLVFS_ASSIGN_OR_RETURN(file.content_id, PutContent(change.db, content));
    file.size = content.bytes().size();
    file.version = 1;
    file.created_ms = file.modified_ms = change.now;
    return InsertEntry(change, path, file);
  }
  if (mode == WriteMode::kCreate) return CreateExistsError(path);
  if (existing->is_directory()) return IsDirectoryActionError("write", path);
  Entry next = *existing;
  next.version = existing->version.value_or(0) + 1;
  next.modified_ms = change.now;
  if (mode != WriteMode::kAppend && existing->born == change.generation) {
    // No snapshot sees the row: it changes in place, and so may its
    // content, if nothing else uses it (ExchangeContent).
    TOOLVFS_ASSIGN_OR_RETURN(next.content_id, ExchangeContent(change.db, *existing->content_id, content));
    next.size = content.bytes().size();
    return UpdateEntryInPlace(change, path, next);
  }
  if (mode == WriteMode::kAppend) {
    TOOLVFS_ASSIGN_OR_RETURN(next.content_id,
                             AppendContent(change.db, *existing->content_id, existing->size, content.bytes()));
    next.size = existing->size + content.bytes().size();
  } else {
    TOOLVFS_ASSIGN_OR_RETURN(next.content_id, PutContent(change.db, content));
    next.size = content.bytes().size();
  }
  return ReplaceEntry(change, path, *existing, next);
}

// Creates the directory `path` and its missing parents inside `change`;
// nothing if it exists; NotDirectory if it or a parent is a file.
Status CreateDirectory(const Change& change, const std::string& path) {
  TOOLVFS_ASSIGN_OR_RETURN(std::optional<Entry> existing, LookUpLive(change, path));
  if (existing) {
    if (existing->is_directory()) return OkStatus();
    return NotDirectoryError("Cannot create directory " + DisplayPath(path) + ": it is a file");
  }
  TOOLVFS_RETURN_IF_ERROR(CreateParents(change, path, [&] { return CannotDo("create directory", path); }));
  Entry directory;
  directory.created_ms = directory.modified_ms = change.now;
  return InsertEntry(change, path, directory);
}

// Runs `body` in a write transaction of the live state of `workspace`
// that may change what `scope` says; commits if it returns OK, rolls back
// otherwise. A kFiles change that finds a subtree to change
// (MayChangeSubtree) runs again as a kWorkspace one.
template <typename Body>
Status InWriteTransaction(Workspace& workspace, WriteScope scope, Body&& body) {
  while (true) {
    bool needs_workspace = false;
    Status status = workspace.database->RunWriteTransaction([&](SqlConnection& db) -> Status {
      needs_workspace = false;
      TOOLVFS_ASSIGN_OR_RETURN(int64_t generation, CurrentGeneration(db, workspace, scope));
      Change change{db, workspace, generation, NowMs(), scope, &needs_workspace};
      return body(change);
    });
    if (!needs_workspace || scope == WriteScope::kWorkspace) return status;
    scope = WriteScope::kWorkspace;
  }
}

// ----- Materialize ------------------------------------------------------------------

// What a materialized copy was written from, per path.
struct CopiedFrom {
  EntryKind kind = EntryKind::kFile;
  std::optional<int64_t> content_id;  // files
  ContentHash hash{};                 // files: the content's address
};
using CopiedFromTree = std::map<std::string, CopiedFrom, std::less<>>;

// Applies what changed in the copy (`now_in_copy` against `written`) to the
// live state inside `change`, as the memory store does: a change made in
// the store since the copy was written wins over a deletion in the copy.
// The files to write are read from the copy at `copy_root` one at a time.
// A change `filter` refuses is skipped and appended to `refused`.
Status ApplyCopyChanges(const Change& change, const CopiedFromTree& written, const CopiedTree& now_in_copy,
                        const std::string& copy_root, const CopyChangeFilter* filter,
                        std::vector<RefusedChange>& refused) {
  // Deletions first, deepest first, so a directory is empty when reached
  // and a path can change kind (deleted, then added).
  for (auto it = written.rbegin(); it != written.rend(); ++it) {
    const auto& [path, node] = *it;
    auto in_copy = now_in_copy.find(path);
    if (in_copy != now_in_copy.end() && in_copy->second.kind == node.kind) continue;
    TOOLVFS_ASSIGN_OR_RETURN(std::optional<Entry> live, LookUpLive(change, path));
    if (!live || live->kind != node.kind) continue;  // gone already
    if (live->is_directory()) {
      TOOLVFS_ASSIGN_OR_RETURN(bool has_children, HasLiveChildren(change, path));
      if (has_children) continue;  // the store gained entries here since: keep them
    } else {
      // By address, not id: a content no snapshot sees may be rewritten
      // in place under its id (ExchangeContent).
      TOOLVFS_ASSIGN_OR_RETURN(ContentHash address, StoredContentAddress(change.db, *live->content_id));
      if (address != node.hash) continue;  // changed in the store since the copy was made: keep that change
    }
    if (!CopyChangeAllowed(filter, path, refused)) continue;
    TOOLVFS_RETURN_IF_ERROR(RetireEntry(change, path, *live));
  }
  // Additions and modifications, parents first.
  for (const auto& [path, entry] : now_in_copy) {
    auto before = written.find(path);
    const bool existed = before != written.end() && before->second.kind == entry.kind;
    if (entry.kind == EntryKind::kDirectory) {
      if (!existed && CopyChangeAllowed(filter, path, refused)) {
        TOOLVFS_RETURN_IF_ERROR(CreateDirectory(change, path));
      }
      continue;
    }
    if (existed && *entry.address == before->second.hash) continue;  // unchanged
    if (!CopyChangeAllowed(filter, path, refused)) continue;
    // Read and hashed once more, to check it is what the walk addressed;
    // the store's write takes that address along rather than hash a third time.
    TOOLVFS_ASSIGN_OR_RETURN(AddressedContent content, ReadAddressedCopiedFile(copy_root, path, entry));
    TOOLVFS_RETURN_IF_ERROR(WriteFile(change, path, content, WriteMode::kOverwrite));
  }
  return OkStatus();
}

// How a materialized copy differs from what it was written with.
struct CopyChanges {
  bool any = false;    // it holds anything else (an entry added, changed or deleted)
  uint64_t bytes = 0;  // the bytes of the files it was not written with: what a sync writes to the store
};

CopyChanges CompareCopy(const CopiedFromTree& written, const CopiedTree& now_in_copy) {
  CopyChanges changes;
  // Every entry of the copy was written, so another count means a deletion.
  changes.any = written.size() != now_in_copy.size();
  for (const auto& [path, entry] : now_in_copy) {
    auto before = written.find(path);
    const bool kept = before != written.end() && before->second.kind == entry.kind &&
                      (entry.kind != EntryKind::kFile || *entry.address == before->second.hash);
    if (kept) continue;
    changes.any = true;
    if (entry.kind == EntryKind::kFile) changes.bytes += entry.size;
  }
  return changes;
}

class SqlView final : public MaterializedView {
 public:
  SqlView(std::shared_ptr<Workspace> workspace, std::string dir, CopiedFromTree written)
      : workspace_(std::move(workspace)), dir_(std::move(dir)), written_(std::move(written)) {}

  ~SqlView() override {
    if (!released_) ReportFailedRelease(Release());
  }

  const std::string& path() const override { return dir_; }

  Status Release() override {
    if (released_) return OkStatus();
    released_ = true;
    return ReleaseMaterializedCopy(dir_, [this] {
      Status synced = Sync();
      if (synced.ok()) written_.clear();
      return synced;
    });
  }

  void FilterChanges(std::shared_ptr<const CopyChangeFilter> filter) override { filter_ = std::move(filter); }

 private:
  Status Sync() {
    TOOLVFS_ASSIGN_OR_RETURN(CopiedTree now_in_copy, ReadCopy(dir_, CopiedAddresses::kCompute));
    const CopyChanges changes = CompareCopy(written_, now_in_copy);
    if (workspace_->read_only()) {
      if (!changes.any) return OkStatus();
      return PermissionDeniedError("the project " + Quote(workspace_->display) + " is snapshot " +
                                   Quote(workspace_->snapshot) + ", which is read-only");
    }
    TOOLVFS_RETURN_IF_ERROR(CheckSyncedTotal(changes.bytes));
    // One transaction: the sync applies whole or not at all.
    std::vector<RefusedChange> refused;
    Status applied = InWriteTransaction(*workspace_, WriteScope::kWorkspace, [&](const Change& change) {
      refused.clear();  // of an attempt rolled back
      return ApplyCopyChanges(change, written_, now_in_copy, dir_, filter_.get(), refused);
    });
    ReportRefusedChanges(refused);
    return applied;
  }

  std::shared_ptr<Workspace> workspace_;
  std::string dir_;
  CopiedFromTree written_;
  std::shared_ptr<const CopyChangeFilter> filter_;
  bool released_ = false;
};

// Writes the state of `workspace` at its generation into the empty
// directory `dir`, in one read transaction; returns what it wrote.
Result<CopiedFromTree> WriteCopy(const Workspace& workspace, const std::string& dir) {
  UniqueFd root(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!root) return ErrnoToStatus(errno, "Cannot open " + Quote(dir));
  TOOLVFS_ASSIGN_OR_RETURN(SqlLease db, workspace.database->Connect());
  TOOLVFS_ASSIGN_OR_RETURN(SqlTransaction transaction, SqlTransaction::Begin(*db, SqlTransactionKind::kRead));
  if (workspace.read_only()) TOOLVFS_RETURN_IF_ERROR(SnapshotStillThere(*db, workspace));
  struct Row {
    std::string path;
    CopiedFrom from;
    uint64_t size = 0;
    int64_t modified_ms = 0;
  };
  std::vector<Row> rows;
  {
    TOOLVFS_ASSIGN_OR_RETURN(SqlStatement select, db->Prepare(kEntriesAt));
    select.Bind(1, workspace.id).Bind(2, workspace.at);
    while (true) {
      TOOLVFS_ASSIGN_OR_RETURN(bool found, select.Step());
      if (!found) break;
      Row row;
      row.path = std::string(select.Text(0));
      row.from.kind = KindOf(select.Int(1));
      row.from.content_id = select.OptionalInt(2);
      row.size = static_cast<uint64_t>(select.Int(3));
      row.modified_ms = select.Int(4);
      std::string_view hash = select.Blob(5);
      if (hash.size() == row.from.hash.size()) std::memcpy(row.from.hash.data(), hash.data(), hash.size());
      rows.push_back(std::move(row));
    }
  }
  // No row at all may be a deleted workspace's (whose every row went):
  // looked at only then, so a copy of a workspace with files costs nothing more.
  if (rows.empty() && !workspace.read_only()) TOOLVFS_RETURN_IF_ERROR(WorkspaceStillThere(*db, workspace));
  CopiedFromTree written;
  for (const Row& row : rows) {
    if (row.from.kind == EntryKind::kDirectory) {
      TOOLVFS_RETURN_IF_ERROR(WriteCopiedDirectory(root.get(), dir, row.path));
    } else {
      TOOLVFS_ASSIGN_OR_RETURN(std::string content, ReadContent(*db, *row.from.content_id, row.size, 0, row.size));
      TOOLVFS_RETURN_IF_ERROR(WriteCopiedFile(root.get(), dir, row.path, content, row.modified_ms));
    }
    written.emplace(row.path, row.from);
  }
  // Directory times last, deepest first: creating children changes them.
  for (auto it = rows.rbegin(); it != rows.rend(); ++it) {
    if (it->from.kind != EntryKind::kDirectory) continue;
    TOOLVFS_RETURN_IF_ERROR(SetCopiedDirectoryTime(root.get(), dir, it->path, it->modified_ms));
  }
  TOOLVFS_RETURN_IF_ERROR(transaction.Commit());
  return written;
}

// ----- Snapshots ---------------------------------------------------------------------

struct SnapshotRef {
  int64_t id = 0;
  int64_t generation = 0;
};

// Finds a snapshot by its id (the canonical decimal form, ParseSnapshotId)
// or, when `labels` (a URI's @SNAPSHOT), by a label no other snapshot has.
// NotFound worded as every store words it (SnapshotNotFoundError).
Result<SnapshotRef> FindSnapshot(SqlConnection& db, const Workspace& workspace, std::string_view reference,
                                 bool labels) {
  const int64_t workspace_id = workspace.id;
  if (std::optional<uint64_t> id = ParseSnapshotId(reference)) {
    TOOLVFS_ASSIGN_OR_RETURN(SqlStatement by_id, db.Prepare(kSnapshotById));
    by_id.Bind(1, workspace_id).Bind(2, static_cast<int64_t>(*id));
    TOOLVFS_ASSIGN_OR_RETURN(bool found, by_id.Step());
    if (found) return SnapshotRef{by_id.Int(0), by_id.Int(1)};
  }
  if (!labels) return SnapshotNotFoundError(reference, workspace.live_display());
  TOOLVFS_ASSIGN_OR_RETURN(SqlStatement by_label, db.Prepare(kSnapshotsByLabel));
  by_label.Bind(1, workspace_id).Bind(2, reference);
  TOOLVFS_ASSIGN_OR_RETURN(bool found, by_label.Step());
  if (!found) return SnapshotNotFoundError(reference, workspace.live_display());
  SnapshotRef ref{by_label.Int(0), by_label.Int(1)};
  TOOLVFS_ASSIGN_OR_RETURN(bool another, by_label.Step());
  if (another) {
    return InvalidArgumentError("Snapshot label " + Quote(reference) +
                                " names more than one snapshot; use its id (toolvfs workspace snapshots)");
  }
  return ref;
}

Result<std::vector<std::string>> ChangedPaths(SqlConnection& db, int64_t workspace_id, int64_t from,
                                              int64_t to) {
  TOOLVFS_ASSIGN_OR_RETURN(SqlStatement select, db.Prepare(kChangedPaths));
  select.Bind(1, workspace_id).Bind(2, from).Bind(3, to);
  std::vector<std::string> paths;
  while (true) {
    TOOLVFS_ASSIGN_OR_RETURN(bool row, select.Step());
    if (!row) break;
    paths.emplace_back(select.Text(0));
  }
  return paths;
}

Result<std::optional<int64_t>> NeighbourGeneration(SqlConnection& db, const char* sql, int64_t workspace_id,
                                                   int64_t generation) {
  TOOLVFS_ASSIGN_OR_RETURN(SqlStatement select, db.Prepare(sql));
  select.Bind(1, workspace_id).Bind(2, generation);
  TOOLVFS_ASSIGN_OR_RETURN(bool row, select.Step());
  if (!row) return std::optional<int64_t>();
  return select.OptionalInt(0);
}

// ----- Grep -----------------------------------------------------------------------------

class OwnedContentReader final : public GrepFileReader {
 public:
  explicit OwnedContentReader(std::string content) : content_(std::move(content)) {}
  Result<size_t> Read(char* data, size_t size) override {
    size_t count = std::min(size, content_.size() - position_);
    std::memcpy(data, content_.data() + position_, count);
    position_ += count;
    return count;
  }

 private:
  std::string content_;
  size_t position_ = 0;
};

// ----- The store --------------------------------------------------------------------

class SqlStore final : public ProjectFiles {
 public:
  explicit SqlStore(std::shared_ptr<Workspace> workspace) : workspace_(std::move(workspace)) {}

  // For DeleteCreatedWorkspace.
  const std::shared_ptr<Workspace>& workspace() const { return workspace_; }

  Result<std::string> Read(std::string_view raw_path) override {
    TOOLVFS_ASSIGN_OR_RETURN(std::string path, NormalizePath(raw_path));
    TOOLVFS_ASSIGN_OR_RETURN(FileRange range, ReadFile(path, 0, std::nullopt, /*whole=*/true));
    return std::move(range.content);
  }

  Result<FileRange> ReadRange(std::string_view raw_path, uint64_t offset,
                              std::optional<uint64_t> length) override {
    TOOLVFS_ASSIGN_OR_RETURN(std::string path, NormalizePath(raw_path));
    return ReadFile(path, offset, length, /*whole=*/false);
  }

  Status Write(std::string_view raw_path, std::string_view content, WriteMode mode) override {
    TOOLVFS_ASSIGN_OR_RETURN(std::string path, NormalizePath(raw_path));
    if (path.empty()) return ProjectRootError("write");
    TOOLVFS_RETURN_IF_ERROR(RefuseWrite("write", path));
    if (mode != WriteMode::kAppend && workspace_->row_locks) {
      // The engine's own way first (PostgreSQL: one round trip for the
      // common case); anything it leaves goes the shared way below.
      const SqlFileWrite direct{workspace_->id, path, content, mode == WriteMode::kCreate, NowMs()};
      TOOLVFS_ASSIGN_OR_RETURN(bool written, workspace_->database->WriteFileDirectly(direct));
      if (written) return OkStatus();
    }
    return InWriteTransaction(*workspace_, WriteScope::kFiles, [&](const Change& change) {
      return WriteFile(change, path, content, mode);
    });
  }

  Status WriteWithMetadata(std::string_view raw_path, std::string_view content,
                           const FileMetadata& metadata) override {
    TOOLVFS_ASSIGN_OR_RETURN(std::string path, NormalizePath(raw_path));
    if (path.empty()) return ProjectRootError("write");
    TOOLVFS_RETURN_IF_ERROR(RefuseWrite("write", path));
    if (metadata.version && *metadata.version < 1) {
      return InvalidArgumentError(CannotDo("write", path) + ": version 0 does not exist (a file starts at 1)");
    }
    return InWriteTransaction(*workspace_, WriteScope::kFiles, [&](const Change& change) -> Status {
      TOOLVFS_RETURN_IF_ERROR(WriteFile(change, path, content, WriteMode::kOverwrite));
      // The row the write left live (locked by it), with the given fields.
      TOOLVFS_ASSIGN_OR_RETURN(std::optional<Entry> written, LookUpLive(change, path));
      if (!written) return InternalError("The file " + DisplayPath(path) + " vanished inside its write");
      TOOLVFS_ASSIGN_OR_RETURN(SqlStatement update, change.db.Prepare(kSetEntryMetadata));
      update.Bind(1, workspace_->id)
          .Bind(2, ParentPath(path))
          .Bind(3, BaseName(path))
          .Bind(4, metadata.version ? static_cast<int64_t>(*metadata.version) : *written->version)
          .Bind(5, metadata.created_ms.value_or(written->created_ms))
          .Bind(6, metadata.modified_ms);
      return update.Run();
    });
  }

  Result<bool> Exists(std::string_view raw_path) override {
    TOOLVFS_ASSIGN_OR_RETURN(std::string path, NormalizePath(raw_path));
    TOOLVFS_ASSIGN_OR_RETURN(SqlLease db, workspace_->database->Connect());
    std::optional<SqlTransaction> snapshot_read;
    TOOLVFS_ASSIGN_OR_RETURN(std::optional<Entry> entry, LookUpAt(*db, path, snapshot_read));
    // A deleted workspace lost every path: it says so, as every other read
    // does, not "no". Looked at only here, so a path found costs nothing more.
    if (!entry) TOOLVFS_RETURN_IF_ERROR(WorkspaceStillThere(*db, *workspace_));
    return entry.has_value();
  }

  Result<std::vector<DirEntry>> ListDir(std::string_view raw_path) override {
    TOOLVFS_ASSIGN_OR_RETURN(std::string path, NormalizePath(raw_path));
    TOOLVFS_ASSIGN_OR_RETURN(SqlLease db, workspace_->database->Connect());
    return ListChildren(*db, path, "list");
  }

  Result<std::string> ResolvePath(std::string_view raw_path) override { return NormalizePath(raw_path); }

  Result<FileMetadata> Metadata(std::string_view raw_path) override {
    TOOLVFS_ASSIGN_OR_RETURN(std::string path, NormalizePath(raw_path));
    TOOLVFS_ASSIGN_OR_RETURN(SqlLease db, workspace_->database->Connect());
    std::optional<SqlTransaction> snapshot_read;
    TOOLVFS_ASSIGN_OR_RETURN(std::optional<Entry> entry, LookUpAt(*db, path, snapshot_read));
    if (!entry) {
      return MissingOrParentIsFile(*db, *workspace_, path, workspace_->at, "get metadata of", "Path");
    }
    FileMetadata metadata{entry->kind, entry->size, entry->modified_ms};
    if (entry->version) metadata.version = static_cast<uint64_t>(*entry->version);
    metadata.created_ms = entry->created_ms;
    return metadata;
  }

  Status Delete(std::string_view raw_path, bool recursive) override {
    TOOLVFS_ASSIGN_OR_RETURN(std::string path, NormalizePath(raw_path));
    if (path.empty()) return ProjectRootError("delete");
    TOOLVFS_RETURN_IF_ERROR(RefuseWrite("delete", path));
    return InWriteTransaction(*workspace_, WriteScope::kFiles, [&](const Change& change) -> Status {
      TOOLVFS_ASSIGN_OR_RETURN(std::optional<Entry> existing, LookUpLiveThatMustExist(change, path));
      if (!existing) return MissingOrParentIsFile(change.db, *workspace_, path, kLive, "delete", "Path");
      if (existing->is_directory()) {
        TOOLVFS_ASSIGN_OR_RETURN(bool has_children, HasLiveChildren(change, path));
        if (has_children && !recursive) return DeleteNotEmptyError(path);
        if (has_children) {
          if (!MayChangeSubtree(change)) return SubtreeNeedsWholeWorkspace();
          TOOLVFS_ASSIGN_OR_RETURN(auto descendants, LiveDescendants(change, path));
          for (const auto& [descendant, entry] : descendants) {
            TOOLVFS_RETURN_IF_ERROR(RetireEntry(change, descendant, entry));
          }
        }
      }
      return RetireEntry(change, path, *existing);
    });
  }

  Status Rename(std::string_view raw_from, std::string_view raw_to, bool overwrite) override {
    TOOLVFS_ASSIGN_OR_RETURN(std::string from, NormalizePath(raw_from));
    TOOLVFS_ASSIGN_OR_RETURN(std::string to, NormalizePath(raw_to));
    const std::string what = CannotRename(from, to);
    if (from.empty() || to.empty()) return RenameRootError(from, to);
    if (from != to && PathContains(from, to)) return RenameIntoItselfError(from, to);
    TOOLVFS_RETURN_IF_ERROR(RefuseWrite("rename", from));
    return InWriteTransaction(*workspace_, WriteScope::kFiles, [&](const Change& change) -> Status {
      TOOLVFS_ASSIGN_OR_RETURN(std::optional<Entry> source, LookUpLiveThatMustExist(change, from));
      if (!source) {
        TOOLVFS_ASSIGN_OR_RETURN(std::optional<std::string> file, FileAncestor(change.db, *workspace_, from, kLive));
        if (file) return ParentIsFileError(what, *file);
        return RenameSourceMissingError(from, to);
      }
      if (from == to) return OkStatus();
      {
        TOOLVFS_ASSIGN_OR_RETURN(std::optional<std::string> file, FileAncestor(change.db, *workspace_, to, kLive));
        if (file) return ParentIsFileError(what, *file);
      }
      const bool moving_directory = source->is_directory();
      if (moving_directory && !MayChangeSubtree(change)) return SubtreeNeedsWholeWorkspace();
      TOOLVFS_ASSIGN_OR_RETURN(std::optional<Entry> target, LookUpLive(change, to));
      std::optional<toolvfs::Entry> replaced;
      if (target) {
        if (!overwrite) return RenameTargetExistsError(from, to);
        if (PathContains(to, from)) return RenameTargetNotEmptyError(from, to);
        if (!moving_directory && target->is_directory()) return RenameTargetIsDirectoryError(from, to);
        if (moving_directory && !target->is_directory()) return RenameTargetIsFileError(from, to);
        if (moving_directory) {
          TOOLVFS_ASSIGN_OR_RETURN(bool has_children, HasLiveChildren(change, to));
          if (has_children) return RenameTargetNotEmptyError(from, to);
        }
        replaced = target;
        TOOLVFS_RETURN_IF_ERROR(RetireEntry(change, to, *target));
      }
      TOOLVFS_RETURN_IF_ERROR(CreateParents(change, to, [&] { return what; }));

      std::vector<std::pair<std::string, Entry>> moved;
      moved.emplace_back(from, *source);
      if (moving_directory) {
        TOOLVFS_ASSIGN_OR_RETURN(auto descendants, LiveDescendants(change, from));
        for (auto& row : descendants) moved.push_back(std::move(row));
      }
      // New rows first: they take a reference on each content before the
      // old rows may drop theirs.
      for (const auto& [old_path, entry] : moved) {
        Entry copy = entry;
        if (old_path == from && replaced && !replaced->is_directory()) {
          // To anyone reading `to` this was an overwrite: the version
          // continues the replaced file's count and its created time stays.
          copy.version = replaced->version.value_or(0) + 1;
          copy.created_ms = replaced->created_ms;
          copy.modified_ms = change.now;
        }
        if (copy.content_id) TOOLVFS_RETURN_IF_ERROR(AddContentReference(change.db, *copy.content_id));
        TOOLVFS_RETURN_IF_ERROR(InsertEntry(change, to + old_path.substr(from.size()), copy));
      }
      for (const auto& [old_path, entry] : moved) TOOLVFS_RETURN_IF_ERROR(RetireEntry(change, old_path, entry));
      return OkStatus();
    });
  }

  Result<GrepResult> Grep(std::string_view pattern, const GrepOptions& options) override {
    StoreGrepTree tree(workspace_);
    Result<GrepResult> result = RunGrep(tree, pattern, options);
    if (!result.ok()) return result;
    // The walk skips a directory or file it cannot list or read (gone since
    // it was seen), so a snapshot deleted meanwhile would give a partial
    // result. A snapshot still there now was there for every read before
    // (its id is never given again): then the result is whole.
    if (workspace_->read_only()) {
      TOOLVFS_ASSIGN_OR_RETURN(SqlLease db, workspace_->database->Connect());
      TOOLVFS_RETURN_IF_ERROR(SnapshotStillThere(*db, *workspace_));
      return result;
    }
    // The same for the live state: a deleted workspace's root cannot be
    // listed, which the walk skips as well, leaving an empty result. Looked
    // at only when the walk skipped something, so a search that found every
    // entry it listed costs nothing more.
    if (!tree.skipped_an_entry()) return result;
    TOOLVFS_ASSIGN_OR_RETURN(SqlLease db, workspace_->database->Connect());
    TOOLVFS_RETURN_IF_ERROR(WorkspaceStillThere(*db, *workspace_));
    return result;
  }

  Result<std::unique_ptr<MaterializedView>> Materialize() override {
    TOOLVFS_ASSIGN_OR_RETURN(std::string dir, MakeMaterializedDirectory(workspace_->display));
    Result<CopiedFromTree> written = WriteCopy(*workspace_, dir);
    if (!written.ok()) {
      (void)RemoveTree(dir);
      return Status(written.status().code(),
                    "Cannot materialize " + Quote(workspace_->display) + ": " + written.status().message());
    }
    return std::unique_ptr<MaterializedView>(
        std::make_unique<SqlView>(workspace_, std::move(dir), std::move(written).value()));
  }

  const std::string& DisplayRoot() const override { return workspace_->display; }

  // ----- Snapshots ----------------------------------------------------------------

  Result<std::string> Snapshot(std::optional<std::string_view> label) override {
    if (label) TOOLVFS_RETURN_IF_ERROR(CheckSnapshotLabel(*label));
    TOOLVFS_RETURN_IF_ERROR(RefuseWrite("snapshot", ""));
    // No scan, no read of the state beyond the transaction's own: the
    // workspace row moves on and gives the id it had, the snapshot row
    // records it with the generation it froze.
    int64_t id = 0;
    Status taken = InWriteTransaction(*workspace_, WriteScope::kWorkspace, [&](const Change& change) -> Status {
      {
        TOOLVFS_ASSIGN_OR_RETURN(SqlStatement advance, change.db.Prepare(kAdvanceGeneration));
        advance.Bind(1, workspace_->id);
        TOOLVFS_ASSIGN_OR_RETURN(bool found, advance.Step());
        if (!found) return InternalError("The workspace row vanished inside a transaction");
        id = advance.Int(1);
      }
      TOOLVFS_ASSIGN_OR_RETURN(SqlStatement insert, change.db.Prepare(kInsertSnapshot));
      insert.Bind(1, workspace_->id).Bind(2, id).Bind(3, change.generation).Bind(5, change.now);
      if (label) insert.Bind(4, *label);
      return insert.Run();
    });
    if (!taken.ok()) return taken;
    return std::to_string(id);
  }

  Status Restore(std::string_view id) override {
    TOOLVFS_RETURN_IF_ERROR(RefuseWrite("restore", ""));
    return InWriteTransaction(*workspace_, WriteScope::kWorkspace, [&](const Change& change) -> Status {
      TOOLVFS_ASSIGN_OR_RETURN(SnapshotRef snapshot, Find(change.db, id));
      TOOLVFS_ASSIGN_OR_RETURN(std::vector<std::string> paths,
                               ChangedPaths(change.db, workspace_->id, snapshot.generation, kLive));
      for (const std::string& path : paths) {
        TOOLVFS_ASSIGN_OR_RETURN(std::optional<Entry> wanted,
                                 LookUp(change.db, workspace_->id, path, snapshot.generation, workspace_->created_ms));
        TOOLVFS_ASSIGN_OR_RETURN(std::optional<Entry> live, LookUpLive(change, path));
        if (wanted && live && wanted->born == live->born) continue;  // the same row: unchanged
        if (live) TOOLVFS_RETURN_IF_ERROR(RetireEntry(change, path, *live));
        if (wanted) {
          if (wanted->content_id) TOOLVFS_RETURN_IF_ERROR(AddContentReference(change.db, *wanted->content_id));
          TOOLVFS_RETURN_IF_ERROR(InsertEntry(change, path, *wanted));
        }
      }
      return OkStatus();
    });
  }

  Result<std::vector<SnapshotInfo>> ListSnapshots() override {
    TOOLVFS_ASSIGN_OR_RETURN(SqlLease db, workspace_->database->Connect());
    TOOLVFS_ASSIGN_OR_RETURN(SqlStatement select, db->Prepare(kListSnapshots));
    select.Bind(1, workspace_->id);
    std::vector<SnapshotInfo> snapshots;
    while (true) {
      TOOLVFS_ASSIGN_OR_RETURN(bool row, select.Step());
      if (!row) break;
      SnapshotInfo info;
      info.id = std::to_string(select.Int(0));
      if (!select.IsNull(1)) info.label = std::string(select.Text(1));
      info.created_ms = select.Int(2);
      snapshots.push_back(std::move(info));
    }
    // None may be a deleted workspace's (its snapshots went with it): it
    // says so, as every read does. Looked at only then.
    if (snapshots.empty()) TOOLVFS_RETURN_IF_ERROR(WorkspaceStillThere(*db, *workspace_));
    return snapshots;
  }

  Result<TreeDiff> Diff(std::string_view from, std::optional<std::string_view> to) override {
    TOOLVFS_ASSIGN_OR_RETURN(TreeChanges changes, Compare(from, to));
    return std::move(changes.diff);
  }

  Result<TreeChanges> DiffWithRewrites(std::string_view from, std::optional<std::string_view> to) override {
    return Compare(from, to);
  }

  Status DeleteSnapshot(std::string_view id) override {
    TOOLVFS_RETURN_IF_ERROR(RefuseWrite("delete a snapshot of", ""));
    return InWriteTransaction(*workspace_, WriteScope::kWorkspace, [&](const Change& change) -> Status {
      TOOLVFS_ASSIGN_OR_RETURN(SnapshotRef snapshot, Find(change.db, id));
      TOOLVFS_ASSIGN_OR_RETURN(std::optional<int64_t> previous,
                               NeighbourGeneration(change.db, kPreviousSnapshotGeneration, workspace_->id,
                                                   snapshot.generation));
      TOOLVFS_ASSIGN_OR_RETURN(std::optional<int64_t> next,
                               NeighbourGeneration(change.db, kNextSnapshotGeneration, workspace_->id,
                                                   snapshot.generation));
      {
        TOOLVFS_ASSIGN_OR_RETURN(SqlStatement remove, change.db.Prepare(kDeleteSnapshot));
        remove.Bind(1, workspace_->id).Bind(2, snapshot.id);
        TOOLVFS_RETURN_IF_ERROR(remove.Run());
      }
      // Rows only this snapshot saw: born after the previous snapshot,
      // dead by the next one (or by now). Without a next one, every dead
      // row born after the previous snapshot: no state sees it any more.
      const int64_t after = previous.value_or(0);
      std::vector<std::pair<std::string, Entry>> freed;
      {
        TOOLVFS_ASSIGN_OR_RETURN(SqlStatement select, change.db.Prepare(kRowsSeenOnlyBetween));
        select.Bind(1, workspace_->id)
            .Bind(2, after)
            .Bind(3, next ? snapshot.generation : after + 1)
            .Bind(4, next.value_or(change.generation))
            .Bind(5, next ? snapshot.generation : change.generation);
        while (true) {
          TOOLVFS_ASSIGN_OR_RETURN(bool row, select.Step());
          if (!row) break;
          Entry entry;
          entry.born = select.Int(1);
          entry.content_id = select.OptionalInt(2);
          freed.emplace_back(std::string(select.Text(0)), entry);
        }
      }
      for (const auto& [path, entry] : freed) {
        TOOLVFS_RETURN_IF_ERROR(DropEntryRow(change.db, workspace_->id, path, entry.born));
        if (entry.content_id) TOOLVFS_RETURN_IF_ERROR(ReleaseContent(change.db, *entry.content_id));
      }
      if (next) return OkStatus();
      return LowerGeneration(change, after + 1);
    });
  }

 private:
  // After the newest snapshot went: the live generation becomes `lowered`
  // (the previous snapshot's + 1, or 1), so that a write decides
  // copy-on-write by `born == generation` again. Else the live rows that
  // snapshot saw would stay born before the live generation, and their next
  // overwrite or deletion would keep a dead row and its content that no
  // snapshot sees, until gc. Every dead row born after the previous
  // snapshot is gone already, so the rows born after `lowered` are live,
  // one per path, and none is born at `lowered` beside them. Costs the
  // rows born or dead since `lowered`, never the workspace's size.
  Status LowerGeneration(const Change& change, int64_t lowered) {
    if (lowered >= change.generation) return OkStatus();
    std::vector<std::pair<std::string, int64_t>> moved;
    {
      TOOLVFS_ASSIGN_OR_RETURN(SqlStatement select, change.db.Prepare(kRowsBornBetween));
      select.Bind(1, workspace_->id).Bind(2, lowered).Bind(3, change.generation);
      while (true) {
        TOOLVFS_ASSIGN_OR_RETURN(bool row, select.Step());
        if (!row) break;
        moved.emplace_back(std::string(select.Text(0)), select.Int(1));
      }
    }
    for (const auto& [path, born] : moved) {
      // The row it replaced (out of the death index) died when it was
      // born: both move, so restore, diff and deletion still pair them.
      for (const char* sql : {kLowerPredecessorDeath, kLowerBirth}) {
        TOOLVFS_ASSIGN_OR_RETURN(SqlStatement update, change.db.Prepare(sql));
        update.Bind(1, workspace_->id).Bind(2, ParentPath(path)).Bind(3, BaseName(path)).Bind(4, born);
        update.Bind(5, lowered);
        TOOLVFS_RETURN_IF_ERROR(update.Run());
      }
    }
    for (const char* sql : {kLowerDeaths, kSetGeneration}) {
      TOOLVFS_ASSIGN_OR_RETURN(SqlStatement update, change.db.Prepare(sql));
      update.Bind(1, workspace_->id).Bind(2, lowered);
      if (sql == kLowerDeaths) update.Bind(3, change.generation);
      TOOLVFS_RETURN_IF_ERROR(update.Run());
    }
    return OkStatus();
  }

  // GrepTree over the workspace's state at the store's generation; each
  // call borrows its own connection, so the engine's threads read in
  // parallel.
  class StoreGrepTree final : public GrepTree {
   public:
    explicit StoreGrepTree(std::shared_ptr<Workspace> workspace) : workspace_(std::move(workspace)) {}

    Result<std::vector<Entry>> List(std::string_view path) override {
      TOOLVFS_ASSIGN_OR_RETURN(SqlLease db, workspace_->database->Connect());
      return Noted(ListChildrenOf(*db, *workspace_, path, "search"));
    }

    Result<EntryKind> Resolve(std::string_view path) override {
      TOOLVFS_ASSIGN_OR_RETURN(SqlLease db, workspace_->database->Connect());
      std::optional<SqlTransaction> snapshot_read;
      TOOLVFS_ASSIGN_OR_RETURN(std::optional<toolvfs::Entry> entry,
                               workspace_->read_only() ? LookUpInSnapshot(*db, *workspace_, path, snapshot_read)
                                                       : LookUpIn(*db, *workspace_, path));
      if (!entry) return MissingOrParentIsFile(*db, *workspace_, path, workspace_->at, "search", "Path");
      return entry->kind;
    }

    Result<File> OpenFile(std::string_view path, bool /*follow_symlinks*/) override {
      TOOLVFS_ASSIGN_OR_RETURN(FileRange range, Noted(ReadFileOf(*workspace_, path, 0, std::nullopt,
                                                                 /*whole=*/false, /*limit=*/false)));
      return File{std::make_unique<OwnedContentReader>(std::move(range.content)), {}};
    }

    // Whether a List or OpenFile failed, which the walk skips (an entry
    // gone since it was seen, or the whole workspace).
    bool skipped_an_entry() const { return failed_.load(std::memory_order_relaxed); }

   private:
    // `result`, remembering a failure (called from the search's threads).
    template <typename T>
    Result<T> Noted(Result<T> result) {
      if (!result.ok()) failed_.store(true, std::memory_order_relaxed);
      return result;
    }

    std::shared_ptr<Workspace> workspace_;
    std::atomic<bool> failed_ = false;
  };

  static Result<std::optional<toolvfs::Entry>> LookUpIn(SqlConnection& db, const Workspace& workspace,
                                                       std::string_view path) {
    return LookUp(db, workspace.id, path, workspace.at, workspace.created_ms);
  }

  // LookUpIn for a snapshot project: one statement that finds the
  // snapshot's row too (kLookUpSnapshotEntry), so a row found is the
  // snapshot's. Else (and for the root, which has no row) `snapshot_read`
  // is begun (BeginReadOfSnapshot: NotFound if the snapshot went) and the
  // look runs again in it, where the caller goes on to say why the path is
  // missing.
  static Result<std::optional<toolvfs::Entry>> LookUpInSnapshot(SqlConnection& db, const Workspace& workspace,
                                                               std::string_view path,
                                                               std::optional<SqlTransaction>& snapshot_read) {
    if (!path.empty()) {
      TOOLVFS_ASSIGN_OR_RETURN(std::optional<toolvfs::Entry> entry,
                               LookUp(db, workspace.id, path, workspace.at, workspace.created_ms,
                                      kLookUpSnapshotEntry, workspace.snapshot_id));
      if (entry) return entry;
    }
    TOOLVFS_RETURN_IF_ERROR(BeginReadOfSnapshot(db, workspace, snapshot_read));
    return LookUpIn(db, workspace, path);
  }

  // The children of directory `path`: one range of the key when it has
  // any; else the directory checked and listed in one statement (one
  // consistent view without a transaction: the directory checked is the
  // one listed, even if another writer deletes it meanwhile).
  static Result<std::vector<DirEntry>> ListChildrenOf(SqlConnection& db, const Workspace& workspace,
                                                      std::string_view path, std::string_view verb) {
    const bool live = workspace.at == kLive;
    const bool by_generation = live && db.dialect().list_by_generation;
    std::vector<DirEntry> entries;
    // No reallocation for a directory of up to 128 names: growing from 16
    // moved a 100-name listing's entries three times, 4 % of its
    // instructions (docs/benchmarks.md, "Listing (2026-11-27, ...)").
    entries.reserve(128);
    {
      const char* sql = by_generation ? kListLiveChildrenByGeneration : live ? kListLiveChildren : kListChildren;
      TOOLVFS_ASSIGN_OR_RETURN(SqlStatement select, db.Prepare(sql));
      select.Bind(1, workspace.id).Bind(2, path);
      if (!live) select.Bind(3, workspace.at).Bind(4, workspace.snapshot_id);
      TOOLVFS_RETURN_IF_ERROR(AppendChildren(select, /*kind_offset=*/0, entries).status());
    }
    // A snapshot project finding none may have lost its snapshot: the rest
    // runs where the snapshot's row is found first.
    std::optional<SqlTransaction> snapshot_read;
    if (entries.empty() && !live) TOOLVFS_RETURN_IF_ERROR(BeginReadOfSnapshot(db, workspace, snapshot_read));
    // An empty root may be a deleted workspace's (whose every row went).
    if (entries.empty() && path.empty()) TOOLVFS_RETURN_IF_ERROR(WorkspaceStillThere(db, workspace));
    if (entries.empty() && !path.empty()) {
      TOOLVFS_ASSIGN_OR_RETURN(SqlStatement select, db.Prepare(live ? kListLiveDirectory : kListDirectory));
      select.Bind(1, workspace.id).Bind(2, ParentPath(path)).Bind(3, BaseName(path)).Bind(4, path);
      if (!live) select.Bind(5, workspace.at);
      TOOLVFS_ASSIGN_OR_RETURN(std::optional<int64_t> kind, AppendChildren(select, kChildKind, entries));
      if (!kind) {
        return MissingOrParentIsFile(db, workspace, path, workspace.at, verb, verb == "list" ? "Directory" : "Path");
      }
      if (*kind != kDirectoryKind) return ListFileError(path);
      // Children come in key order (by name) from the engines we know;
      // this statement does not promise it, so make sure.
      auto by_name = [](const DirEntry& a, const DirEntry& b) { return a.name < b.name; };
      if (!std::is_sorted(entries.begin(), entries.end(), by_name)) std::sort(entries.begin(), entries.end(), by_name);
    }
    return entries;
  }

  // Appends the children among the rows of `select` (kind, name) to
  // `entries`: those whose kind is at least `kind_offset`, less it. Returns
  // the kind of the row below `kind_offset`, the directory's own, if any.
  static Result<std::optional<int64_t>> AppendChildren(SqlStatement& select, int64_t kind_offset,
                                                       std::vector<DirEntry>& entries) {
    class Children final : public SqlCursor::IntTextRowVisitor {
     public:
      Children(int64_t kind_offset, std::vector<DirEntry>& entries) : kind_offset_(kind_offset), entries_(entries) {}
      void Row(int64_t kind, std::string_view name) override {
        if (kind < kind_offset_) {
          own_kind = kind;
          return;
        }
        // Braces, not parentheses: clang 14 (the fuzz build) has no aggregate init from a
        // parenthesized list.
        entries_.push_back(DirEntry{std::string(name), KindOf(kind - kind_offset_), std::nullopt});
      }
      std::optional<int64_t> own_kind;

     private:
      const int64_t kind_offset_;
      std::vector<DirEntry>& entries_;
    } children(kind_offset, entries);
    TOOLVFS_RETURN_IF_ERROR(select.ForEachIntTextRow(children));
    return children.own_kind;
  }

  // Reads [offset, offset + length) of the file at `path` (the whole file
  // when `whole`) in one read transaction, so content and size come from
  // one version. `limit`: apply the read limit (grep reads whole files of
  // any size, like the other stores' grep trees).
  static Result<FileRange> ReadFileOf(const Workspace& workspace, std::string_view path, uint64_t offset,
                                      std::optional<uint64_t> length, bool whole, bool limit = true) {
    TOOLVFS_ASSIGN_OR_RETURN(SqlLease db, workspace.database->Connect());
    const uint64_t max = workspace.options.max_read_bytes;
    const bool snapshot = workspace.read_only();
    if (!path.empty()) {
      // The small-file path: one statement (of a snapshot project: one that
      // finds the snapshot's row too). Chunked files, directories, missing
      // paths and a snapshot gone go on below.
      TOOLVFS_ASSIGN_OR_RETURN(SqlStatement read, db->Prepare(snapshot ? kReadWholeSnapshotEntry : kReadWholeEntry));
      read.Bind(1, workspace.id).Bind(2, ParentPath(path)).Bind(3, BaseName(path)).Bind(4, workspace.at);
      if (snapshot) read.Bind(5, workspace.snapshot_id);
      TOOLVFS_ASSIGN_OR_RETURN(bool found, read.Step());
      if (found && read.Int(0) == kFileKind && !read.IsNull(2)) {
        std::string_view data = read.Blob(2);
        const uint64_t size = data.size();
        if (whole && limit && size > max) return ReadLimitError(path, size, max);
        const uint64_t available = offset < size ? size - offset : 0;
        const uint64_t wanted = std::min(available, length.value_or(available));
        if (!whole && limit && wanted > max) return ReadRangeLimitError(path, offset, wanted, max);
        return FileRange{std::string(data.substr(wanted == 0 ? 0 : offset, wanted)), size};
      }
    }
    std::optional<SqlTransaction> transaction;
    if (snapshot) {
      TOOLVFS_RETURN_IF_ERROR(BeginReadOfSnapshot(*db, workspace, transaction));
    } else {
      TOOLVFS_ASSIGN_OR_RETURN(SqlTransaction begun, SqlTransaction::Begin(*db, SqlTransactionKind::kRead));
      transaction.emplace(std::move(begun));
    }
    TOOLVFS_ASSIGN_OR_RETURN(std::optional<toolvfs::Entry> entry, LookUpIn(*db, workspace, path));
    if (!entry) return MissingOrParentIsFile(*db, workspace, path, workspace.at, "read", "File");
    if (entry->is_directory()) return IsDirectoryActionError("read", path);
    const uint64_t size = entry->size;
    if (whole && limit && size > max) return ReadLimitError(path, size, max);
    const uint64_t available = offset < size ? size - offset : 0;
    const uint64_t wanted = std::min(available, length.value_or(available));
    if (!whole && limit && wanted > max) return ReadRangeLimitError(path, offset, wanted, max);
    TOOLVFS_ASSIGN_OR_RETURN(std::string content,
                             ReadContent(*db, *entry->content_id, size, wanted == 0 ? 0 : offset, wanted));
    TOOLVFS_RETURN_IF_ERROR(transaction->Commit());
    return FileRange{std::move(content), size};
  }

  Result<FileRange> ReadFile(std::string_view path, uint64_t offset, std::optional<uint64_t> length, bool whole) {
    return ReadFileOf(*workspace_, path, offset, length, whole);
  }

  Result<std::vector<DirEntry>> ListChildren(SqlConnection& db, std::string_view path, std::string_view verb) {
    return ListChildrenOf(db, *workspace_, path, verb);
  }

  // The entry at `path` in the project's state; `snapshot_read` as
  // LookUpInSnapshot leaves it.
  Result<std::optional<toolvfs::Entry>> LookUpAt(SqlConnection& db, std::string_view path,
                                                 std::optional<SqlTransaction>& snapshot_read) {
    if (!workspace_->read_only()) return LookUpIn(db, *workspace_, path);
    return LookUpInSnapshot(db, *workspace_, path, snapshot_read);
  }

  // A snapshot of this workspace; when there is none such, NotFound naming
  // the workspace if it was deleted (its snapshots went with it), else the id.
  Result<SnapshotRef> Find(SqlConnection& db, std::string_view reference) {
    Result<SnapshotRef> found = FindSnapshot(db, *workspace_, reference, /*labels=*/false);
    if (found.status().code() == StatusCode::kNotFound) TOOLVFS_RETURN_IF_ERROR(WorkspaceStillThere(db, *workspace_));
    return found;
  }

  // Diff, and the rewritten files: those whose row differs with the same
  // content (a write of the same bytes makes a new row).
  Result<TreeChanges> Compare(std::string_view from, std::optional<std::string_view> to) {
    TOOLVFS_ASSIGN_OR_RETURN(SqlLease db, workspace_->database->Connect());
    TOOLVFS_ASSIGN_OR_RETURN(SqlTransaction transaction,
                             SqlTransaction::Begin(*db, SqlTransactionKind::kRead));
    // First, so a snapshot project whose snapshot went says that, even when
    // asked for a diff from it.
    if (workspace_->read_only()) TOOLVFS_RETURN_IF_ERROR(SnapshotStillThere(*db, *workspace_));
    TOOLVFS_ASSIGN_OR_RETURN(SnapshotRef first, Find(*db, from));
    int64_t second = workspace_->at;
    if (to) {
      TOOLVFS_ASSIGN_OR_RETURN(SnapshotRef named, Find(*db, *to));
      second = named.generation;
    }
    const bool reversed = second < first.generation;
    const int64_t low = reversed ? second : first.generation;
    const int64_t high = reversed ? first.generation : second;
    TOOLVFS_ASSIGN_OR_RETURN(std::vector<std::string> paths, ChangedPaths(*db, workspace_->id, low, high));
    TreeChanges comparison;
    TreeDiff& diff = comparison.diff;
    for (const std::string& path : paths) {
      TOOLVFS_ASSIGN_OR_RETURN(std::optional<Entry> before,
                               LookUp(*db, workspace_->id, path, low, workspace_->created_ms));
      TOOLVFS_ASSIGN_OR_RETURN(std::optional<Entry> after,
                               LookUp(*db, workspace_->id, path, high, workspace_->created_ms));
      if (before && after) {
        if (before->kind != after->kind || before->content_id != after->content_id) {
          diff.modified.push_back(path);
        } else if (before->born != after->born && !after->is_directory()) {
          comparison.rewritten.push_back(path);
        }
      } else if (after) {
        diff.added.push_back(path);
      } else if (before) {
        diff.deleted.push_back(path);
      }
    }
    if (reversed) std::swap(diff.added, diff.deleted);
    TOOLVFS_RETURN_IF_ERROR(transaction.Commit());
    return comparison;
  }

  // PermissionDenied for a write to a snapshot project.
  Status RefuseWrite(std::string_view verb, std::string_view path) const {
    if (!workspace_->read_only()) return OkStatus();
    return PermissionDeniedError(CannotDo(verb, path) + ": the project " + Quote(workspace_->display) +
                                 " is snapshot " + Quote(workspace_->snapshot) + ", which is read-only");
  }

  std::shared_ptr<Workspace> workspace_;
};

// ----- Opening ------------------------------------------------------------------------

// The id of workspace `name`, if it exists.
Result<std::optional<int64_t>> FindWorkspace(SqlConnection& db, std::string_view name) {
  TOOLVFS_ASSIGN_OR_RETURN(SqlStatement find, db.Prepare(kFindWorkspace));
  find.Bind(1, name);
  TOOLVFS_ASSIGN_OR_RETURN(bool found, find.Step());
  if (!found) return std::optional<int64_t>();
  return std::optional<int64_t>(find.Int(0));
}

// The workspace's id and creation time, creating it if `create` (in a
// write transaction of its own: two processes opening a new workspace at
// once both end up with the one the first created). With
// `options.create_new_workspace` only the one that inserts the row opens
// it, by that row's id: the others get AlreadyExists.
Status FindOrCreateWorkspace(SqlConnection& db, Workspace& workspace, bool create) {
  const bool exclusive = create && workspace.options.create_new_workspace;
  if (create) {
    std::optional<int64_t> existing;
    if (!exclusive) {
      TOOLVFS_ASSIGN_OR_RETURN(existing, FindWorkspace(db, workspace.name));
    }
    if (!existing) {
      bool inserted = false;
      TOOLVFS_RETURN_IF_ERROR(workspace.database->RunWriteTransaction([&](SqlConnection& writer) -> Status {
        TOOLVFS_ASSIGN_OR_RETURN(SqlStatement insert, writer.Prepare(kInsertWorkspace));
        insert.Bind(1, workspace.name).Bind(2, NowMs());
        TOOLVFS_ASSIGN_OR_RETURN(inserted, insert.Step());
        if (inserted) workspace.id = insert.Int(0);
        return OkStatus();
      }));
      if (exclusive && !inserted) {
        return AlreadyExistsError("Workspace " + Quote(workspace.name) + " already exists in the store " +
                                  Quote(workspace.location));
      }
      if (inserted && workspace.options.on_create) {
        workspace.options.on_create(StoreCreation{.workspace = workspace.name, .store = workspace.location});
      }
    }
  }
  TOOLVFS_ASSIGN_OR_RETURN(SqlTransaction transaction, SqlTransaction::Begin(db, SqlTransactionKind::kRead));
  if (!exclusive) {
    TOOLVFS_ASSIGN_OR_RETURN(std::optional<int64_t> found, FindWorkspace(db, workspace.name));
    if (!found) {
      return NotFoundError("Workspace " + Quote(workspace.name) + " does not exist in the store " +
                           Quote(workspace.location));
    }
    workspace.id = *found;
  }
  {
    TOOLVFS_ASSIGN_OR_RETURN(SqlStatement state, db.Prepare(kWorkspaceState));
    state.Bind(1, workspace.id);
    TOOLVFS_ASSIGN_OR_RETURN(bool found, state.Step());
    if (!found) return WorkspaceDeletedError(workspace);
    workspace.created_ms = state.Int(2);
  }
  return transaction.Commit();
}

// ----- The store file -----------------------------------------------------------------

constexpr const char* kWorkspaceSummaries =
    "SELECT w.id, w.name, w.created_ms, "
    "(SELECT count(*) FROM entries e WHERE e.workspace_id=w.id AND e.died IS NULL AND e.kind=0), "
    "(SELECT coalesce(sum(size), 0) FROM entries e WHERE e.workspace_id=w.id AND e.died IS NULL AND e.kind=0), "
    "(SELECT count(*) FROM snapshots s WHERE s.workspace_id=w.id) "
    "FROM workspaces w ORDER BY w.name";
constexpr const char* kWorkspaceContentUses =
    "SELECT content_id, count(*) FROM entries WHERE workspace_id=?1 AND content_id IS NOT NULL GROUP BY content_id";
constexpr const char* kDeleteWorkspaceEntries = "DELETE FROM entries WHERE workspace_id=?1";
constexpr const char* kDeleteWorkspaceSnapshots = "DELETE FROM snapshots WHERE workspace_id=?1";
constexpr const char* kDeleteWorkspaceRow = "DELETE FROM workspaces WHERE id=?1";
// Dead rows that no snapshot's state includes (born <= generation < died).
constexpr const char* kUnseenDeadRows =
    "SELECT e.workspace_id, e.path, e.born, e.content_id FROM entries e WHERE e.died IS NOT NULL "
    "AND NOT EXISTS (SELECT 1 FROM snapshots s WHERE s.workspace_id=e.workspace_id "
    "AND s.generation>=e.born AND s.generation<e.died)";
// Contents nothing refers to, whatever their reference counts say: the
// truth is recomputed, so a count gone wrong cannot keep garbage forever.
constexpr const char* kUnreferencedContents =
    "SELECT id, size FROM contents WHERE id IN (SELECT id FROM contents EXCEPT SELECT content_id FROM entries "
    "EXCEPT SELECT chunk_id FROM content_chunks)";
// Address rows left by in-place rewrites (sql_content.cc,
// RewriteSoleContent): those whose content has other bytes now, or is gone.
constexpr const char* kDeleteFormerAddresses =
    "DELETE FROM content_addresses WHERE NOT EXISTS (SELECT 1 FROM contents c "
    "WHERE c.id=content_addresses.content_id AND c.hash=content_addresses.hash)";
constexpr const char* kForgetFormerAddresses = "UPDATE contents SET former_hash=NULL WHERE former_hash IS NOT NULL";

// Deletes workspace `id` with its entries and snapshots and releases the
// content they held; inside the caller's write transaction, which found it.
Status DeleteWorkspaceRows(SqlConnection& db, int64_t id) {
  std::vector<std::pair<int64_t, int64_t>> uses;
  {
    TOOLVFS_ASSIGN_OR_RETURN(SqlStatement select, db.Prepare(kWorkspaceContentUses));
    select.Bind(1, id);
    while (true) {
      TOOLVFS_ASSIGN_OR_RETURN(bool row, select.Step());
      if (!row) break;
      uses.emplace_back(select.Int(0), select.Int(1));
    }
  }
  for (const char* sql : {kDeleteWorkspaceEntries, kDeleteWorkspaceSnapshots, kDeleteWorkspaceRow}) {
    TOOLVFS_ASSIGN_OR_RETURN(SqlStatement remove, db.Prepare(sql));
    remove.Bind(1, id);
    TOOLVFS_RETURN_IF_ERROR(remove.Run());
  }
  for (const auto& [content_id, count] : uses) {
    for (int64_t i = 0; i < count; ++i) TOOLVFS_RETURN_IF_ERROR(ReleaseContent(db, content_id));
  }
  return OkStatus();
}

}  // namespace

Result<std::vector<WorkspaceSummary>> SqlStoreFile::ListWorkspaces() {
  TOOLVFS_ASSIGN_OR_RETURN(SqlLease db, database_->Connect());
  TOOLVFS_ASSIGN_OR_RETURN(SqlStatement select, db->Prepare(kWorkspaceSummaries));
  std::vector<WorkspaceSummary> workspaces;
  while (true) {
    TOOLVFS_ASSIGN_OR_RETURN(bool row, select.Step());
    if (!row) break;
    WorkspaceSummary summary;
    summary.name = std::string(select.Text(1));
    summary.created_ms = select.Int(2);
    summary.files = static_cast<uint64_t>(select.Int(3));
    summary.bytes = static_cast<uint64_t>(select.Int(4));
    summary.snapshots = static_cast<uint64_t>(select.Int(5));
    workspaces.push_back(std::move(summary));
  }
  return workspaces;
}

Status SqlStoreFile::DeleteWorkspace(std::string_view name) {
  return database_->RunWriteTransaction([&](SqlConnection& db) -> Status {
    int64_t id = 0;
    {
      // Alone on the workspace: its writers finish first, later ones find it gone.
      TOOLVFS_ASSIGN_OR_RETURN(SqlStatement find,
                               db.Prepare(db.dialect().row_locks ? kLockWorkspaceByName : kFindWorkspace));
      find.Bind(1, name);
      TOOLVFS_ASSIGN_OR_RETURN(bool found, find.Step());
      if (!found) {
        return NotFoundError("Workspace " + Quote(name) + " does not exist in the store " + Quote(location_));
      }
      id = find.Int(0);
    }
    return DeleteWorkspaceRows(db, id);
  });
}

Status DeleteCreatedWorkspace(std::unique_ptr<ProjectFiles> project) {
  auto* store = dynamic_cast<SqlStore*>(project.get());
  if (store == nullptr || !store->workspace()->options.create_new_workspace || store->workspace()->read_only()) {
    return InvalidArgumentError("DeleteCreatedWorkspace: not a workspace opened with create_new_workspace");
  }
  const std::shared_ptr<Workspace> workspace = store->workspace();
  project.reset();  // its views and trees first
  return workspace->database->RunWriteTransaction([&](SqlConnection& db) -> Status {
    {
      // By id alone: an id is never given to another workspace (schema
      // version 6), so a namesake created since is another row.
      TOOLVFS_ASSIGN_OR_RETURN(SqlStatement find,
                               db.Prepare(db.dialect().row_locks ? kLockWorkspace : kWorkspaceState));
      find.Bind(1, workspace->id);
      TOOLVFS_ASSIGN_OR_RETURN(bool found, find.Step());
      if (!found) {
        return NotFoundError("The workspace " + Quote(workspace->display) +
                             " this command created was deleted meanwhile");
      }
    }
    return DeleteWorkspaceRows(db, workspace->id);
  });
}

Result<GarbageReport> SqlStoreFile::CollectGarbage() {
  GarbageReport report;
  report.file_bytes_before = database_->StorageBytes();
  Status collected = database_->RunWriteTransaction([&](SqlConnection& db) -> Status {
    report.entries = report.contents = report.bytes = 0;  // the body may run again
    if (db.dialect().row_locks) {
      // Alone on every workspace, in id order: a writer's reference not
      // committed yet must not look like garbage. Collection is rare.
      TOOLVFS_ASSIGN_OR_RETURN(SqlStatement lock, db.Prepare(kLockEveryWorkspace));
      while (true) {
        TOOLVFS_ASSIGN_OR_RETURN(bool row, lock.Step());
        if (!row) break;
      }
    }
    struct DeadRow {
      int64_t workspace_id;
      std::string path;
      int64_t born;
      std::optional<int64_t> content_id;
    };
    std::vector<DeadRow> dead;
    {
      TOOLVFS_ASSIGN_OR_RETURN(SqlStatement select, db.Prepare(kUnseenDeadRows));
      while (true) {
        TOOLVFS_ASSIGN_OR_RETURN(bool row, select.Step());
        if (!row) break;
        dead.push_back(DeadRow{select.Int(0), std::string(select.Text(1)), select.Int(2), select.OptionalInt(3)});
      }
    }
    for (const DeadRow& row : dead) {
      TOOLVFS_RETURN_IF_ERROR(DropEntryRow(db, row.workspace_id, row.path, row.born));
      if (row.content_id) TOOLVFS_RETURN_IF_ERROR(ReleaseContent(db, *row.content_id));
    }
    report.entries = dead.size();
    // Anything still unreferenced, chunk lists first so their chunks
    // become unreferenced in the next round.
    for (int round = 0; round < 2; ++round) {
      std::vector<std::pair<int64_t, uint64_t>> unreferenced;
      {
        TOOLVFS_ASSIGN_OR_RETURN(SqlStatement select, db.Prepare(kUnreferencedContents));
        while (true) {
          TOOLVFS_ASSIGN_OR_RETURN(bool row, select.Step());
          if (!row) break;
          unreferenced.emplace_back(select.Int(0), static_cast<uint64_t>(select.Int(1)));
        }
      }
      for (const auto& [content_id, size] : unreferenced) {
        TOOLVFS_RETURN_IF_ERROR(DeleteContent(db, content_id));
        report.contents += 1;
        report.bytes += size;
      }
    }
    for (const char* sql : {kDeleteFormerAddresses, kForgetFormerAddresses}) {
      TOOLVFS_ASSIGN_OR_RETURN(SqlStatement forget, db.Prepare(sql));
      TOOLVFS_RETURN_IF_ERROR(forget.Run());
    }
    return OkStatus();
  });
  TOOLVFS_RETURN_IF_ERROR(collected);
  TOOLVFS_RETURN_IF_ERROR(database_->Compact());
  report.file_bytes_after = database_->StorageBytes();
  return report;
}

Result<std::unique_ptr<ProjectFiles>> OpenSqlStore(std::shared_ptr<SqlDatabase> database, std::string location,
                                                  const WorkspaceAddress& address, std::string display,
                                                  const StoreOptions& options) {
  auto workspace = std::make_shared<Workspace>(std::move(database), std::move(location), std::move(display), options);
  workspace->name = address.workspace;
  const bool create = !address.snapshot && (options.create_if_missing || options.create_new_workspace);
  TOOLVFS_ASSIGN_OR_RETURN(SqlLease connection, workspace->database->Connect());
  workspace->row_locks = connection->dialect().row_locks;
  TOOLVFS_RETURN_IF_ERROR(FindOrCreateWorkspace(*connection, *workspace, create));
  if (address.snapshot) {
    const std::string reference = *address.snapshot;
    TOOLVFS_ASSIGN_OR_RETURN(SnapshotRef snapshot,
                             FindSnapshot(*connection, *workspace, reference, /*labels=*/true));
    workspace->at = snapshot.generation;
    workspace->snapshot = std::to_string(snapshot.id);
    workspace->snapshot_id = snapshot.id;
  }
  return std::unique_ptr<ProjectFiles>(std::make_unique<SqlStore>(std::move(workspace)));
}

}  // namespace toolvfs
