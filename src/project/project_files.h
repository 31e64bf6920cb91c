// ProjectFiles: the store every file a tool touches is served from.
//
// A ProjectFiles holds one project tree: a real directory (fs), a map in
// memory (memory), nothing at all (null), or later a database. Front ends
// (the VFS protocol host, builtin tools, the MCP server, vfsd) reach project
// files only through this interface, so a policy check, an audit record and
// the path rules below apply to every access whatever the backend.
//
// Thread safety: every method may be called concurrently from any number of
// threads on the same object. Each call is atomic with respect to the others
// on this object (a reader sees a file's old or new content, never a mix);
// sequences of calls are not.
//
// Paths: every path argument is a project path as defined in path.h. It is
// normalized first; a path that is absolute, contains NUL, a control
// character or invalid UTF-8 fails with InvalidArgument, one whose ".."
// leaves the root fails with PermissionDenied. A symlink (fs backend) whose
// target stays inside the root is followed; one that leaves the root makes
// every operation on it fail with PermissionDenied. FIFOs, sockets and
// device files are refused with PermissionDenied.
//
// Errors are Status values with the codes of SPEC.md §2.5 and a one-line
// message that names the path and says why. No method throws.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/memory_budget.h"
#include "core/status.h"
#include "core/unique_fd.h"

namespace toolvfs {

enum class EntryKind { kFile, kDirectory, kSymlink };

// "file", "dir" or "symlink": the names used on every wire.
std::string_view EntryKindName(EntryKind kind);

struct DirEntry {
  std::string name;  // the entry's name within the listed directory
  EntryKind kind;    // a symlink inside the root reports its target's kind
  // For a symlink whose target lies inside the root (dangling or not): the
  // project path it resolves to, which is what a policy judges when the
  // entry is used. Empty for anything else (ListDir only; GrepTree leaves
  // it empty).
  std::optional<std::string> link_target;

  // Whether the entry is a symlink: one that leaves the root, or one that
  // stays inside whatever its target is.
  bool is_symlink() const { return kind == EntryKind::kSymlink || link_target.has_value(); }
  friend bool operator==(const DirEntry&, const DirEntry&) = default;
};

struct FileMetadata {
  EntryKind kind;
  uint64_t size = 0;         // bytes for a file; 0 for a directory
  int64_t modified_ms = 0;   // last modification (updated_at), milliseconds since the Unix epoch
  // Kept natively by the stores that track them (memory, sqlite; SPEC.md
  // §2.4), absent elsewhere (fs). `version` is 1 when a file is created and
  // rises by one on every write or append; a rename onto an existing file
  // continues the replaced file's count (+1) and keeps its created time
  // (for that path it is an overwrite); a moved file keeps both; a
  // directory has no version. `created_ms` is set once, when the entry is
  // created.
  std::optional<uint64_t> version;
  std::optional<int64_t> created_ms;
};

// One snapshot of a workspace (ProjectFiles::ListSnapshots).
struct SnapshotInfo {
  std::string id;                    // what Snapshot() returned; unique within the workspace
  std::optional<std::string> label;  // as given to Snapshot()
  int64_t created_ms = 0;            // when it was taken
  friend bool operator==(const SnapshotInfo&, const SnapshotInfo&) = default;
};

// The difference between two states of a workspace (ProjectFiles::Diff):
// project paths, each list sorted bytewise. Directories count like files
// (an empty directory created since is "added"); a path whose kind changed
// is "modified".
struct TreeDiff {
  std::vector<std::string> added;     // in the second state only
  std::vector<std::string> modified;  // in both, with other content or kind
  std::vector<std::string> deleted;   // in the first state only
  friend bool operator==(const TreeDiff&, const TreeDiff&) = default;
};

// A Diff with what it leaves out (ProjectFiles::DiffWithRewrites).
struct TreeChanges {
  TreeDiff diff;
  // The files in both states with the same content but written in between
  // (so with another version or times), sorted bytewise.
  std::vector<std::string> rewritten;
  friend bool operator==(const TreeChanges&, const TreeChanges&) = default;
};

// Part of a file, as ReadRange returns it.
struct FileRange {
  std::string content;     // the bytes read; empty for a range at or past the end
  uint64_t file_size = 0;  // the whole file's size in bytes when it was read
};

// "2026-11-21T08:30:00.125Z": UTC RFC 3339 with milliseconds.
std::string FormatTimestamp(int64_t unix_milliseconds);

enum class WriteMode {
  kOverwrite,  // create the file, or replace its content
  kCreate,     // create the file; AlreadyExists if anything is at the path
  kAppend,     // create the file, or add to the end of its content
};

// Parses "overwrite" | "create" | "append"; InvalidArgument naming the value.
Result<WriteMode> ParseWriteMode(std::string_view name);

struct GrepFileMatches;

// Receives the files of a search one at a time, in path order, each as soon
// as no file before it can still turn up, instead of the whole result at
// the end (GrepResult::matches then stays empty). Called from the search's
// threads, never two calls at once. An error stops the search, and the
// search returns it.
using GrepFileSink = std::function<Status(GrepFileMatches&& file)>;

struct GrepOptions {
  // Restrict the search to these files and directories (empty: the whole
  // project). A path named here is followed if it is a symlink that stays
  // inside the root, and a file named here is searched even if ignored.
  std::vector<std::string> paths;
  // Only files with one of these extensions ("rs" or ".rs"); empty: all.
  // Applies to files found by walking, not to files named in `paths`.
  std::vector<std::string> extensions;
  uint32_t context = 0;          // lines of context before and after a match
  bool case_insensitive = false;
  // Select the lines that do not match instead (grep -v): they are the
  // result's matching lines (is_match), counted by max_matches, with their
  // context; a file is in the result when it has one.
  bool invert_match = false;
  uint64_t max_matches = 1000;   // matching lines returned at most; 0 = no limit
  bool include_ignored = false;  // also search .gitignore'd/.ignore'd files
  // Called with the resolved project path of each file before it is read;
  // a file for which it returns false is skipped as if absent (the policy:
  // files a tool may not read never appear in its results). Empty: all.
  // Called from several threads at once.
  std::function<bool(std::string_view path)> file_filter;
  // The largest result, in bytes of its JSON as fs.grep and `toolvfs grep
  // --json` spell it (GrepResultJsonBytes); 0 = no limit. The search stops
  // collecting as soon as the result cannot fit: it keeps the files and
  // lines that fit, in (path, line) order, and sets truncated_by
  // kResultBytes. Deterministic like max_matches.
  uint64_t max_result_bytes = 0;
  // Shared with other work in flight: the lines a search holds are
  // reserved from it while it holds them. A search that finds no room fails
  // with ResourceExhausted naming the budget's limit. Null: none. Must
  // outlive the search.
  MemoryBudget* memory_budget = nullptr;
  // Set: the files go here as they are final (see GrepFileSink), not into
  // GrepResult::matches, so the caller can write them out while the search
  // goes on and never holds the whole result.
  GrepFileSink file_sink;
};

struct GrepLine {
  uint64_t line_number = 0;  // 1-based
  std::string content;       // without the line terminator; invalid UTF-8 replaced by U+FFFD
  bool is_match = false;     // false for a context line
  friend bool operator==(const GrepLine&, const GrepLine&) = default;
};

struct GrepFileMatches {
  std::string path;              // project path of the file
  std::vector<GrepLine> lines;   // sorted by line number, context merged
  friend bool operator==(const GrepFileMatches&, const GrepFileMatches&) = default;
};

// What cut a search's result short.
enum class GrepTruncation {
  kNone,
  kMaxMatches,   // GrepOptions::max_matches
  kResultBytes,  // GrepOptions::max_result_bytes
};

// "max_matches", "max_result_bytes"; "" for kNone.
std::string_view GrepTruncationName(GrepTruncation truncation);

struct GrepResult {
  std::vector<GrepFileMatches> matches;  // sorted by path (bytewise)
  bool truncated = false;                // a limit cut the result short ...
  GrepTruncation truncated_by = GrepTruncation::kNone;  // ... this one
  friend bool operator==(const GrepResult&, const GrepResult&) = default;
};

// Judges the changes a tool's process made in a materialized copy before
// they reach the store: the runtime that materialized it knows the tool's
// write policy, the store does not (project/ stays below policy/).
class CopyChangeFilter {
 public:
  virtual ~CopyChangeFilter() = default;
  // Why a change (creation, modification or deletion) of the entry at the
  // project path `path` must not be synced back, or nullopt when it may.
  virtual std::optional<std::string> Refusal(std::string_view path) const = 0;
};

// A real directory holding the project's content, for subprocess tools that
// need a working directory. For the fs backend it is the root itself and
// costs nothing. For other backends it is a private temporary copy:
// Release() (or destruction) copies additions, modifications and deletions
// back into the store and removes the copy.
class MaterializedView {
 public:
  MaterializedView() = default;
  MaterializedView(const MaterializedView&) = delete;
  MaterializedView& operator=(const MaterializedView&) = delete;
  // Releases the view if Release() was not called. If syncing back fails
  // the copy is kept, and its path is printed on stderr, so nothing is lost.
  virtual ~MaterializedView() = default;

  // Absolute path of the directory.
  virtual const std::string& path() const = 0;

  // Syncs changes back and removes the copy. Call it to see the error; a
  // failed sync keeps the copy. Later calls return OK and do nothing.
  virtual Status Release() = 0;

  // Has `filter` judge every change when the copy is synced back: a refused
  // one is skipped (the store keeps what it had there) and reported on
  // stderr, one line each. Call it before a tool writes the copy. Nothing
  // for a view that is the project directory itself (fs): nothing is synced.
  virtual void FilterChanges(std::shared_ptr<const CopyChangeFilter> filter) { (void)filter; }
};

class ProjectFiles {
 public:
  ProjectFiles() = default;
  ProjectFiles(const ProjectFiles&) = delete;
  ProjectFiles& operator=(const ProjectFiles&) = delete;
  virtual ~ProjectFiles() = default;

  // The whole content of the file at `path`.
  // NotFound if nothing is there; IsDirectory for a directory; TooLarge if
  // the file is larger than the store's read limit (StoreOptions).
  virtual Result<std::string> Read(std::string_view path) = 0;

  // The bytes of the file at `path` from byte `offset` on: `length` of them,
  // or all up to the end when `length` is absent; fewer where the file ends
  // first, none when `offset` is at or past the end (like pread, not an
  // error). Content and size come from one version of the file. The read
  // limit applies to the bytes returned, not to the file, so a file larger
  // than the limit can be read in parts: TooLarge (naming the limit) only
  // if more than the limit would be returned. NotFound, IsDirectory as Read.
  virtual Result<FileRange> ReadRange(std::string_view path, uint64_t offset,
                                      std::optional<uint64_t> length) = 0;

  // A byte range of a file: `length` bytes from `offset`, or all to the end.
  struct ByteRange {
    uint64_t offset = 0;
    std::optional<uint64_t> length;
  };
  // Called with the resolved path (as ResolvePath returns it) before the
  // bytes are read; anything but OK stops the read and is returned as is.
  using ReadAuthorizer = std::function<Status(std::string_view resolved_path)>;

  // The policy's read: resolves `path`, asks `authorize`, and only then
  // reads like Read (no `range`; FileRange::file_size is the content's
  // size) or ReadRange, of exactly the file authorized. The default does
  // ResolvePath, then the read through WithoutSymlinks() of the resolved
  // path, judging again if the tree changed in between
  // (RetryWhileChanged); the fs store resolves and opens in one step when
  // no symlink is on the way and reads the very file it authorized (one
  // open instead of two).
  virtual Result<FileRange> ReadAuthorized(std::string_view path, std::optional<ByteRange> range,
                                           const ReadAuthorizer& authorize);

  // This store, but with no operation following a symlink anywhere on its
  // path: a symlink where a directory or the file acted on should be fails
  // with Changed (an operation that acts on an entry itself, as delete,
  // rename and create do, still acts on a final symlink without following
  // it). Front ends that judge a path first act through this view on the
  // path ResolvePath gave, so the object acted on is the object judged: a
  // symlink swapped in after the check is refused, never followed, and the
  // front end judges again (RetryWhileChanged). Stores without symlinks
  // return themselves. Lives as long as this store.
  virtual ProjectFiles& WithoutSymlinks() { return *this; }

  // Writes `content` to the file at `path` in `mode`, creating missing
  // parent directories. The content is replaced atomically: a concurrent
  // reader, or a reader after a crash, sees the old or the new content,
  // never a mix (append included). An existing file keeps its permission
  // bits. AlreadyExists for kCreate when anything is at `path`;
  // IsDirectory if `path` is a directory; NotDirectory if a parent is a
  // file; InvalidArgument for the root.
  virtual Status Write(std::string_view path, std::string_view content,
                       WriteMode mode = WriteMode::kOverwrite) = 0;

  // Whether anything is at `path`. A missing path is false, not an error;
  // a path that is invalid or escapes the root is an error, never false.
  virtual Result<bool> Exists(std::string_view path) = 0;

  // The immediate entries of the directory at `path`, sorted by name
  // (bytewise). NotFound if missing; NotDirectory for a file.
  virtual Result<std::vector<DirEntry>> ListDir(std::string_view path) = 0;

  // The project path `path` names once every symlink on the way (inside the
  // root) is followed, normalized: what the policy judges (SPEC.md §3.2).
  // A path that does not exist (yet) resolves its deepest existing parent
  // and appends the rest, so a new file below a linked directory is judged
  // where it will land. A dangling in-root symlink as the last component
  // resolves to its target, since an overwrite through it creates the
  // target (callers that act on the link itself — create, delete, rename —
  // resolve the parent only). Below a parent that is a file, the rest is
  // kept as written (the operation then fails with NotDirectory).
  // PermissionDenied for a symlink that leaves the root. Backends without
  // symlinks return the normalized path.
  virtual Result<std::string> ResolvePath(std::string_view path) = 0;

  // Kind, size and modification time of `path` (following a symlink that
  // stays inside). NotFound if missing.
  virtual Result<FileMetadata> Metadata(std::string_view path) = 0;

  // Deletes the file at `path`, or the directory with everything in it when
  // `recursive`; an empty directory may be deleted without it. NotEmpty for
  // a non-empty directory without `recursive` (nothing is deleted);
  // NotFound if missing; InvalidArgument for the root. A symlink inside the
  // root is deleted itself, never what it points to.
  virtual Status Delete(std::string_view path, bool recursive = false) = 0;

  // Moves the file or directory `from` to `to`, creating missing parents of
  // `to`. AlreadyExists if `to` exists, unless `overwrite`; with `overwrite`
  // a file replaces a file and a directory replaces an empty directory
  // (IsDirectory / NotDirectory / NotEmpty otherwise). InvalidArgument when
  // either is the root or `to` lies inside `from`. Renaming a path onto
  // itself succeeds and changes nothing.
  virtual Status Rename(std::string_view from, std::string_view to,
                        bool overwrite = false) = 0;

  // Searches file contents for the RE2 `pattern` (SPEC.md §2.3): skips
  // .git/, .toolvfs/, binary files (a NUL byte in the first 8 KiB) and,
  // unless options.include_ignored, files ignored by .gitignore/.ignore;
  // does not descend into symlinks. InvalidArgument for a bad pattern or
  // option; NotFound for a missing entry in options.paths.
  virtual Result<GrepResult> Grep(std::string_view pattern,
                                  const GrepOptions& options) = 0;

  // A real directory with the project's content (see MaterializedView).
  // NoProject for the null store.
  virtual Result<std::unique_ptr<MaterializedView>> Materialize() = 0;

  // The absolute root path for fs; "memory:NAME" for memory; "<no project>"
  // for null. For display and for the protocol's host.root only.
  virtual const std::string& DisplayRoot() const = 0;

  // ----- Snapshots: an optional capability (SPEC.md §2.4, §7) ------------
  //
  // A store that keeps them (memory, sqlite) overrides all five; the
  // defaults answer Unsupported, naming the store. A snapshot is immutable:
  // later writes, restores and deletions never change what it holds. Each
  // call is one atomic step (one transaction where there is a database).
  // Cost follows the change, never the workspace's size: taking a snapshot
  // is O(1), and Restore and Diff are proportional to the entries that
  // differ between the two states.

  // Records the workspace's current state (an empty workspace included)
  // and returns its id. `label` is kept for display. InvalidArgument for a
  // label longer than 255 bytes or with control characters.
  virtual Result<std::string> Snapshot(std::optional<std::string_view> label = std::nullopt);

  // Makes the workspace equal to snapshot `id`: files and directories
  // created since are removed, deleted and changed ones come back (empty
  // directories included). Other snapshots are unchanged. NotFound naming
  // the id if there is no such snapshot.
  virtual Status Restore(std::string_view id);

  // The workspace's snapshots, oldest first.
  virtual Result<std::vector<SnapshotInfo>> ListSnapshots();

  // What changed from snapshot `from` to snapshot `to`, or to the live
  // state when `to` is absent. NotFound naming an unknown id.
  virtual Result<TreeDiff> Diff(std::string_view from,
                                std::optional<std::string_view> to = std::nullopt);

  // Deletes snapshot `id` and frees the content only it held. NotFound
  // naming an unknown id.
  virtual Status DeleteSnapshot(std::string_view id);

  // Streaming by descriptor (optional; vfsd). Stores whose files are real
  // files hand out descriptors, so a front end can stream a file of any
  // size in constant memory; the defaults return Unsupported and front
  // ends fall back to ReadRange and Write. Paths resolve as for Read (the
  // WithoutSymlinks() view refuses symlinks as it does for Read).
  //
  // The regular file at `path`, opened read-only at offset 0. No read limit
  // applies: the caller reads it in parts. NotFound, IsDirectory as Read.
  virtual Result<UniqueFd> OpenForStreaming(std::string_view path);
  // Write(path, C, mode) where C is everything `source` yields from its
  // current offset to its end, without holding C in memory: same modes,
  // errors and atomicity. `source` must be seekable (it is read again from
  // the same offset if the write has to start over).
  virtual Status WriteFromDescriptor(std::string_view path, int source, WriteMode mode);

  // Writing with given metadata (optional; `toolvfs workspace copy`, which
  // moves a workspace between stores with each file's history intact).
  // Write(path, content, kOverwrite), after which the file's modified_ms
  // is metadata.modified_ms, and its version and created_ms those of
  // `metadata` when set (else as the write made them); InvalidArgument for
  // version 0. Stores that keep versions
  // (sqlite, postgres) implement it; the default returns Unsupported and a
  // caller falls back to Write.
  virtual Status WriteWithMetadata(std::string_view path, std::string_view content, const FileMetadata& metadata);

  // Diff(from, to), and in the same comparison what Diff leaves out
  // (optional; `toolvfs workspace copy`): the files in both states with the
  // same content but written in between (TreeChanges::rewritten). Costs
  // what Diff costs; errors as Diff. The stores that keep versions (memory,
  // sqlite, postgres) implement it; the default returns Unsupported.
  virtual Result<TreeChanges> DiffWithRewrites(std::string_view from, std::optional<std::string_view> to);
};

// How many times an operation judged by a policy is tried when the tree
// changes between the check and the act (StatusCode::kChanged).
inline constexpr int kJudgeAttempts = 8;

inline const Status& StatusOf(const Status& status) { return status; }
template <typename T>
const Status& StatusOf(const Result<T>& result) { return result.status(); }

// Runs `attempt` (which resolves, judges, and acts through
// WithoutSymlinks()) again while it fails with Changed, at most
// kJudgeAttempts times in all; then returns its last answer as it is. A
// writer racing the check that often is an attack, not bad luck.
template <typename Attempt>
auto RetryWhileChanged(Attempt&& attempt) -> decltype(attempt()) {
  for (int round = 1;; ++round) {
    auto answer = attempt();
    if (round == kJudgeAttempts || StatusOf(answer).code() != StatusCode::kChanged) return answer;
  }
}

// What an open created (StoreOptions::on_create).
struct StoreCreation {
  std::string workspace;    // the workspace's name
  std::string store;        // the file or server that holds it, as messages name it (no password)
  bool new_store = false;   // the store file itself was created too (sqlite)
};

struct StoreOptions {
  uint64_t max_read_bytes = 10 * 1024 * 1024;  // Read() and ReadRange() fail past this
  // Flush file data to disk before a write's rename, so the old-or-new
  // guarantee also holds across a power loss. Costs a disk flush per write.
  bool sync_writes = true;
  // Stores with named workspaces (sqlite, postgres): the open creates the
  // workspace and fails with AlreadyExists naming it when it exists, so of
  // two commands creating the same workspace at once exactly one gets it.
  // Other stores ignore it.
  bool create_new_workspace = false;
  // Stores with named workspaces (sqlite, postgres): whether the open
  // creates a store file (sqlite) or workspace that does not exist yet. A
  // caller that only reads sets it false: a typo then fails with NotFound
  // naming the missing file or workspace, instead of leaving an empty one
  // behind. create_new_workspace creates whatever this says. Other stores
  // ignore it.
  bool create_if_missing = true;
  // Called once by an open that created something (see StoreCreation), so
  // that a front end can say so: a name mistyped by a writing command is
  // then seen at once. May be empty; called on the opening thread.
  std::function<void(const StoreCreation&)> on_create;
};

// Opens the store named by `uri`: "fs:DIR" or a bare directory path,
// "memory:" or "memory:NAME", "null:", "sqlite:FILE#WS" (sqlite_store.h),
// "postgres://...#WS" (postgres_store.h). InvalidArgument for an unknown
// scheme; NotFound / NotDirectory for a missing fs root.
Result<std::unique_ptr<ProjectFiles>> OpenProject(std::string_view uri,
                                                  const StoreOptions& options = {});

}  // namespace toolvfs
