// SessionWorkspace: an agent session's scratch workspace (SPEC.md §7,
// docs/sessions.md) over any snapshot-capable store.
//
// The store keeps the files, their versions and the snapshots; this class
// adds the tool layer's rules: strict relative paths (item 2), content
// limits counted in code points or decoded bytes, the two encodings, the
// create/overwrite/append modes with expected_version conflicts, and
// timestamps from an injectable clock.
//
// What is kept where (docs/sessions.md, "Where the session lives"): the
// session record (id, limits, allowed roots, mounts, whether the mounts are
// applied, the materialized directory) is the hidden file
// `.toolvfs/session.json` of the workspace; each file's created/updated
// times and encoding are a small sidecar under `.toolvfs/session/files/`
// mirroring the file's path. Both live in the store, so a snapshot and a
// restore carry them with the files. The tools never show `.toolvfs`.
//
// Every operation validates before it acts: an error changes nothing and
// its message names the value and the reason. Thread safety: operations
// are serialized by one mutex per store object in this process, shared by
// every SessionWorkspace opened on it (each MCP call opens its own), so a
// check made under it (expected_version, mode; the listing a PathsCheck
// judged) holds for the act; two processes writing the same session at
// once can still race between a check and the write.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"
#include "project/project_files.h"

namespace toolvfs {

// The configurable limits of a session (the `[session]` table).
struct SessionWorkspaceLimits {
  // Per write: Unicode code points for utf-8 content, decoded bytes for
  // binary content.
  uint64_t max_content_chars = 48000;
  uint32_t max_depth = 16;          // path segments at most
  uint32_t max_segment_chars = 80;  // characters per segment at most
  // The whole session: bytes of all its files and how many there are, the
  // session's own records (.toolvfs/) not counted (docs/sessions.md,
  // "Quota"). A record written before these existed gets the defaults.
  uint64_t max_total_bytes = uint64_t{1} << 30;  // 1 GiB
  uint64_t max_files = 100000;
};

// What a session's files take: the figures its quota is checked against.
struct SessionUsage {
  uint64_t bytes = 0;
  uint64_t files = 0;
  friend bool operator==(const SessionUsage&, const SessionUsage&) = default;
};

// One host folder loaded into the session when it is created and again
// after each reset (docs/sessions.md, "Mounts").
struct SessionMount {
  std::string host_path;
  std::string mount_path;  // "" = the root
  std::vector<std::string> include_glob;
  std::vector<std::string> exclude_glob;
  std::optional<uint64_t> max_bytes;
  bool follow_symlinks = false;
};

// What a session is made of; persisted as the session record.
struct SessionSettings {
  std::string id;  // the workspace name unless given
  SessionWorkspaceLimits limits;
  std::vector<std::string> allowed_roots;
  std::vector<SessionMount> mounts;
};

// Loads the settings' mounts into `files`. Null where a session is created
// or opened: LoadSessionHostMounts; tests inject their own.
using MountLoader = std::function<Status(const SessionSettings& settings, ProjectFiles& files)>;

// The default MountLoader: the host folders of `settings.mounts`, read
// under `settings.allowed_roots` with the session's path limits
// (session/host_mount.h).
Status LoadSessionHostMounts(const SessionSettings& settings, ProjectFiles& files);

// Called with the files an operation is about to change (sorted) before
// it changes any; its error refuses the operation, which then changes
// nothing (the builtin runtime's policy check per file, which may ask the
// user). Not under the session's lock: the files are listed again under
// it, with the act, and a file the check has not seen (written by another
// call meanwhile) makes a second call with the new ones, so every file
// changed was checked.
using PathsCheck = std::function<Status(const std::vector<std::string>& paths)>;

// Every path `diff` names (added, modified and deleted), sorted.
std::vector<std::string> ChangedPaths(const TreeDiff& diff);

// Milliseconds since the Unix epoch; the system clock unless a test
// injects another.
using SessionClock = std::function<int64_t()>;

enum class SessionEncoding { kUtf8, kBinary };

// "utf-8" | "binary".
std::string_view SessionEncodingName(SessionEncoding encoding);
// Parses "utf-8" | "binary"; InvalidArgument naming the value otherwise.
Result<SessionEncoding> ParseSessionEncoding(std::string_view name);

// The metadata of one file, as the tools and `workspace ls` show it.
struct SessionFileInfo {
  std::string path;
  uint64_t version = 0;
  int64_t created_ms = 0;
  int64_t updated_ms = 0;
  SessionEncoding encoding = SessionEncoding::kUtf8;
  uint64_t size_bytes = 0;
};

struct SessionEntry {
  std::string name;
  bool is_directory = false;
};

struct SessionRead {
  SessionFileInfo info;
  // The text (utf-8: the selected lines when a window was asked for) or
  // the base64 of the whole content (binary).
  std::string content;
  uint64_t total_lines = 0;   // utf-8 only: lines in the whole file
  uint64_t first_line = 1;    // the window actually returned (utf-8)
  uint64_t lines_returned = 0;
};

enum class SessionWriteMode { kCreate, kOverwrite, kAppend };
std::string_view SessionWriteModeName(SessionWriteMode mode);
// Parses "create" | "overwrite" | "append"; InvalidArgument naming the value.
Result<SessionWriteMode> ParseSessionWriteMode(std::string_view name);

struct SessionWrite {
  std::string path;
  std::string content;  // text (utf-8) or base64 (binary)
  SessionWriteMode mode = SessionWriteMode::kCreate;
  SessionEncoding encoding = SessionEncoding::kUtf8;
  std::optional<uint64_t> expected_version;
};

struct SessionWriteResult {
  SessionWriteMode mode;
  SessionFileInfo info;  // after the write
};

struct SessionDeleteResult {
  std::string path;
  uint64_t files_deleted = 0;
  bool was_directory = false;
};

// Lines a read_file window returns at most.
inline constexpr uint64_t kMaxReadLines = 2000;

// The hidden directory a session keeps its record and sidecars in.
inline constexpr std::string_view kSessionHiddenRoot = ".toolvfs";
inline constexpr std::string_view kSessionRecordPath = ".toolvfs/session.json";

class SessionWorkspace;

// The session's files as a real directory (SessionWorkspace::Materialize):
// the same directory until released. Release (or destruction) syncs the
// changes back, clears the path from the session record and removes the
// directory; a failed sync keeps it and says where (MaterializedView).
class SessionDirectory {
 public:
  SessionDirectory(const SessionDirectory&) = delete;
  SessionDirectory& operator=(const SessionDirectory&) = delete;
  ~SessionDirectory();

  const std::string& path() const { return view_->path(); }
  // Later calls return OK and do nothing.
  Status Release();

 private:
  friend class SessionWorkspace;
  SessionDirectory(SessionWorkspace& session, std::unique_ptr<MaterializedView> view,
                   std::vector<std::pair<std::string, uint64_t>> versions)
      : session_(session), view_(std::move(view)), versions_before_(std::move(versions)) {}

  SessionWorkspace& session_;
  std::unique_ptr<MaterializedView> view_;
  // path -> version when the directory was made: files the command changed
  // lose their sidecar, so their times and encoding come from the store.
  std::vector<std::pair<std::string, uint64_t>> versions_before_;
  bool released_ = false;
};

class SessionWorkspace {
 public:
  // Makes the workspace in `files` a session: writes the record and loads
  // the mounts (through `loader`); if loading fails the record is removed
  // again and the loader's error returned (null `loader`: the host mounts,
  // LoadSessionHostMounts). InvalidArgument for an empty id; AlreadyExists if it is a session already;
  // Unsupported for a store without snapshots. `files` must outlive the
  // returned object.
  static Result<std::unique_ptr<SessionWorkspace>> Create(ProjectFiles& files, SessionSettings settings,
                                                          MountLoader loader = nullptr,
                                                          SessionClock clock = nullptr);

  // Opens the session kept in `files`; NotFound ("not a session
  // workspace") when it has no session record.
  static Result<std::unique_ptr<SessionWorkspace>> Open(ProjectFiles& files, MountLoader loader = nullptr,
                                                        SessionClock clock = nullptr);

  // Whether `files` holds a session record.
  static Result<bool> IsSession(ProjectFiles& files);

  const SessionSettings& settings() const { return settings_; }
  const std::string& id() const { return settings_.id; }
  ProjectFiles& files() { return files_; }

  // OK when `requested_id` is this session's id; PermissionDenied naming
  // both otherwise (a call meant for another session changes nothing).
  Status CheckSession(std::string_view requested_id) const;

  // The entries of the directory `path` ("" = the root), sorted by name.
  Result<std::vector<SessionEntry>> ListDirectory(std::string_view path);
  // A file's content and metadata; `offset` (1-based line) and `limit`
  // (lines, at most kMaxReadLines) select a window of a text file.
  Result<SessionRead> ReadFile(std::string_view path, std::optional<uint64_t> offset,
                               std::optional<uint64_t> limit);
  Result<SessionWriteResult> WriteFile(const SessionWrite& write);
  // A file, or every file under a directory path; the root is refused.
  // `check`, when given, is called with every file about to be deleted.
  using DeleteCheck = PathsCheck;
  Result<SessionDeleteResult> DeleteFile(std::string_view path, const DeleteCheck& check = nullptr);
  // Every file with its metadata, sorted by path, without content.
  Result<std::vector<SessionFileInfo>> ListAllFiles();

  Result<std::string> Snapshot(std::optional<std::string_view> label);
  Status Restore(std::string_view snapshot_id);
  // Restore, with `check` (when given) called with every path the restore
  // changes: added, changed or deleted since the snapshot, the session's
  // own records left out. The diff that decides what the restore undoes
  // and the restore are one step under the session's lock, and every
  // path in that diff was checked (PathsCheck), so a write by another call
  // is never undone unchecked. Returns what was undone: the diff from the
  // snapshot to the state before the restore.
  Result<TreeDiff> RestoreChecked(std::string_view snapshot_id, const PathsCheck& check);
  Result<std::vector<SnapshotInfo>> Snapshots();
  // Without the session's hidden files.
  Result<TreeDiff> Diff(std::string_view from, std::optional<std::string_view> to);
  // Empties the session; the mounts are loaded again on the next use.
  Status Reset();

  // The bytes and files of the session now (its records excluded): counted
  // by a walk the first time a SessionWorkspace on this store object needs
  // them in this process, then kept by every operation of this class.
  Result<SessionUsage> Usage();
  // Counts again by a walk, for changes made to the store past this class
  // (a stdio or vfs tool's materialized copy synced back, a generic
  // builtin), and answers TooLarge naming the limit when the session is now
  // over its quota (docs/sessions.md, "Quota": checked after the sync-back).
  Status RecountAfterOutsideChange();

  // Records (or with nullopt clears) the on-disk directory the session is
  // materialized in, in the session record.
  Status SetMaterializedPath(std::optional<std::string> path);
  Result<std::optional<std::string>> MaterializedPath();

  // The session's files as a real directory, recorded in the session
  // record while it exists. The session must outlive the directory.
  Result<std::unique_ptr<SessionDirectory>> Materialize();

  // The session-relative form of `path` under the session's rules ("" is
  // the root only where `allow_root`); InvalidArgument naming the path and
  // the rule broken.
  Result<std::string> CheckPath(std::string_view path, bool allow_root) const;

 private:
  friend class SessionDirectory;
  // After a materialized directory was synced back (SessionDirectory).
  Status FinishMaterialized(const std::vector<std::pair<std::string, uint64_t>>& versions_before);

  SessionWorkspace(ProjectFiles& files, SessionSettings settings, MountLoader loader, SessionClock clock);
  struct SharedState;
  // The state of the sessions on `files` in this process.
  static std::shared_ptr<SharedState> SharedStateOf(const ProjectFiles& files);

  // Loads the mounts if a reset (or creation) left them unapplied.
  Status EnsureMounted();
  Status WriteRecord(bool mounts_applied, const std::optional<std::string>& materialized_path);
  Result<SessionFileInfo> InfoOf(const std::string& path);
  // The usage in the shared state, counted by a walk if unknown. Caller
  // holds the mutex.
  Result<SessionUsage*> UsageLocked();
  // Walks the session's files and their sizes. Caller holds the mutex.
  Result<SessionUsage> CountUsage();
  // The files among `paths` (directories and missing paths not counted).
  Result<SessionUsage> UsageOfFiles(const std::vector<std::string>& paths);
  // The kept usage minus `gone` plus `come`; unknown again (counted by the
  // next walk) if either is an error. Caller holds the mutex.
  void AdjustUsage(const Result<SessionUsage>& gone, const Result<SessionUsage>& come);
  // TooLarge naming the limit `usage` is over; OK within the quota.
  Status OverQuotaError(const SessionUsage& usage) const;
  // The same from the file's `metadata` the caller has just read, and its
  // `content` when the caller has it too (a file without a sidecar then
  // needs no second read to tell its encoding).
  Result<SessionFileInfo> InfoOf(const std::string& path, const FileMetadata& metadata,
                                 const std::string* content = nullptr);
  // Every file of the session (its own records excluded) below the
  // directory `below` ("" = the root), in no particular order. Caller
  // holds mutex_.
  Result<std::vector<std::string>> FilePaths(const std::string& below = "");
  Status CheckContent(const SessionWrite& write, std::string& bytes) const;
  // Restore, the session record kept. Caller holds mutex_.
  Status RestoreLocked(std::string_view snapshot_id);
  // Diff without the session's hidden files. Caller holds mutex_.
  Result<TreeDiff> VisibleDiff(std::string_view from, std::optional<std::string_view> to);

  ProjectFiles& files_;
  SessionSettings settings_;
  MountLoader loader_;
  SessionClock clock_;
  // Shared by every SessionWorkspace on files_ in this process: the mutex
  // that serializes them and the usage they keep (session_workspace.cc).
  std::shared_ptr<SharedState> shared_;
  std::mutex& mutex_;
};

// The session record's JSON, and back (InvalidArgument naming the problem).
std::string SessionRecordJson(const SessionSettings& settings, bool mounts_applied,
                              const std::optional<std::string>& materialized_path);
struct SessionRecord {
  SessionSettings settings;
  bool mounts_applied = false;
  std::optional<std::string> materialized_path;
};
Result<SessionRecord> ParseSessionRecord(std::string_view json);

}  // namespace toolvfs
