#include "session/session_workspace.h"

#include <simdjson.h>

#include <algorithm>
#include <iterator>
#include <charconv>
#include <cstdio>
#include <chrono>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "core/io.h"
#include "core/text.h"
#include "project/path.h"
#include "protocol/base64.h"
#include "protocol/json_writer.h"
#include "session/host_mount.h"
#include "session/session_path.h"

namespace toolvfs {
namespace {

constexpr std::string_view kSidecarRoot = ".toolvfs/session/files";

int64_t SystemNowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string Join(std::string_view parent, std::string_view name) {
  if (parent.empty()) return std::string(name);
  return std::string(parent) + "/" + std::string(name);
}

std::string SidecarPath(std::string_view path) { return Join(kSidecarRoot, path); }

}  // namespace

// What the sessions on one store object in this process share, alive while
// a SessionWorkspace holds it. Each call of the builtin runtime opens its
// own SessionWorkspace, so a per-object mutex would serialize nothing
// between two calls, and a per-object usage would let two calls each stay
// under the quota while together they go over it.
struct SessionWorkspace::SharedState {
  std::mutex mutex;
  // Unknown until an operation needs it (a walk then counts it), and again
  // after a change this class did not make itself.
  std::optional<SessionUsage> usage;
};

std::shared_ptr<SessionWorkspace::SharedState> SessionWorkspace::SharedStateOf(const ProjectFiles& files) {
  static std::mutex& registry_mutex = *new std::mutex;  // never destroyed: used until exit
  static auto& registry = *new std::map<const ProjectFiles*, std::weak_ptr<SharedState>>;
  std::lock_guard lock(registry_mutex);
  std::erase_if(registry, [](const auto& entry) { return entry.second.expired(); });
  std::weak_ptr<SharedState>& entry = registry[&files];
  std::shared_ptr<SharedState> state = entry.lock();
  if (!state) {
    state = std::make_shared<SharedState>();
    entry = state;
  }
  return state;
}

namespace {

// Runs `act` on the sorted paths `list` gives once `check` has accepted
// every one of them, without holding `mutex` while `check` runs (it may
// wait minutes for the user, and every call on the store would wait with
// it): `list` and `act` run together under `mutex`, and when `list` finds
// paths `check` has not seen (another call wrote them meanwhile), `check`
// is called again with those. Changed after kJudgeAttempts lists that each
// found new paths. Without `check`, one list and the act.
template <typename T>
Result<T> ActOnCheckedPaths(std::mutex& mutex, const std::function<Result<std::vector<std::string>>()>& list,
                            const PathsCheck& check,
                            const std::function<Result<T>(const std::vector<std::string>&)>& act) {
  std::vector<std::string> checked;
  for (int attempt = 0; attempt < kJudgeAttempts; ++attempt) {
    std::vector<std::string> unchecked;
    {
      std::lock_guard lock(mutex);
      TOOLVFS_ASSIGN_OR_RETURN(std::vector<std::string> paths, list());
      if (check) {
        std::set_difference(paths.begin(), paths.end(), checked.begin(), checked.end(),
                            std::back_inserter(unchecked));
      }
      if (unchecked.empty()) return act(paths);
    }
    TOOLVFS_RETURN_IF_ERROR(check(unchecked));
    std::vector<std::string> merged;
    std::merge(checked.begin(), checked.end(), unchecked.begin(), unchecked.end(), std::back_inserter(merged));
    checked = std::move(merged);
  }
  return ChangedError("The workspace kept changing while the paths were checked (" +
                      std::to_string(kJudgeAttempts) + " times); nothing was changed, try again");
}

// Unicode code points of valid UTF-8 `text`: every byte that does not
// continue a sequence starts one.
uint64_t CodePoints(std::string_view text) {
  uint64_t count = 0;
  for (char c : text) {
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++count;
  }
  return count;
}

// The created/updated times and encoding the session recorded for a file,
// and which content of it they describe: the store's version and size of
// the file right after the write that made the sidecar.
//
// Why: the file and its sidecar are two store commits (the store has no
// call that writes two paths at once, docs/sessions.md), so a crash, a
// failed sidecar write or another process between them can leave new
// content beside the sidecar of the content before, whose encoding may be
// wrong for it (utf-8 over binary bytes, which read_file would then send
// as text). A sidecar whose version or size is not the file's is stale and
// ignored, so the pair is never read inconsistently: the file then answers
// like one without a sidecar (times from the store, encoding from its
// content).
struct Sidecar {
  int64_t created_ms = 0;
  int64_t updated_ms = 0;
  SessionEncoding encoding = SessionEncoding::kUtf8;
  // Absent in sidecars written before the check existed (three fields),
  // which are trusted as they were. `version` is always there in practice:
  // a session needs a store with snapshots (fs is refused), and those keep
  // versions; a store without them would be checked by size alone.
  std::optional<uint64_t> content_version;
  std::optional<uint64_t> content_size;
};

// "created_ms updated_ms encoding version size\n", "-" for no version.
std::string SidecarText(const Sidecar& sidecar) {
  std::string text = std::to_string(sidecar.created_ms) + " " + std::to_string(sidecar.updated_ms) + " " +
                     std::string(SessionEncodingName(sidecar.encoding));
  if (sidecar.content_size) {
    text += " " + (sidecar.content_version ? std::to_string(*sidecar.content_version) : std::string("-")) + " " +
            std::to_string(*sidecar.content_size);
  }
  return text + "\n";
}

// Null for a sidecar that does not parse: the file's store metadata is used
// instead, as for a file that never had one (a mounted or synced file).
std::optional<Sidecar> ParseSidecar(std::string_view text) {
  if (text.ends_with('\n')) text.remove_suffix(1);
  std::vector<std::string_view> fields;
  for (size_t start = 0;;) {
    const size_t space = text.find(' ', start);
    fields.push_back(text.substr(start, space == std::string_view::npos ? std::string_view::npos : space - start));
    if (space == std::string_view::npos) break;
    start = space + 1;
  }
  if (fields.size() != 3 && fields.size() != 5) return std::nullopt;
  auto number = [](std::string_view digits, auto& out) {
    auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), out);
    return !digits.empty() && error == std::errc() && end == digits.data() + digits.size();
  };
  Sidecar sidecar;
  if (!number(fields[0], sidecar.created_ms) || !number(fields[1], sidecar.updated_ms)) return std::nullopt;
  Result<SessionEncoding> parsed = ParseSessionEncoding(fields[2]);
  if (!parsed.ok()) return std::nullopt;
  sidecar.encoding = *parsed;
  if (fields.size() == 5) {
    uint64_t version = 0;
    uint64_t size = 0;
    if (fields[3] != "-") {
      if (!number(fields[3], version)) return std::nullopt;
      sidecar.content_version = version;
    }
    if (!number(fields[4], size)) return std::nullopt;
    sidecar.content_size = size;
  }
  return sidecar;
}

// Whether `sidecar` describes the content `metadata` is of (see Sidecar).
bool DescribesContent(const Sidecar& sidecar, const FileMetadata& metadata) {
  if (!sidecar.content_size) return true;
  return *sidecar.content_size == metadata.size && sidecar.content_version == metadata.version;
}

// What of `usage` is over `limits`' quota, as "N bytes, over its limit
// max_total_bytes = M (1 GiB)", or nullopt within it; only what grew since
// `before` counts, so a session already over its quota (a tool's copy
// synced back, docs/sessions.md "Quota") may still shrink.
std::optional<std::string> QuotaExcess(const SessionWorkspaceLimits& limits, const SessionUsage& usage,
                                       const SessionUsage& before) {
  if (usage.bytes > limits.max_total_bytes && usage.bytes > before.bytes) {
    return std::to_string(usage.bytes) + " bytes, over its limit max_total_bytes = " +
           std::to_string(limits.max_total_bytes) + " (" + FormatBytes(limits.max_total_bytes) + ")";
  }
  if (usage.files > limits.max_files && usage.files > before.files) {
    return std::to_string(usage.files) + " files, over its limit max_files = " + std::to_string(limits.max_files);
  }
  return std::nullopt;
}

// For a usage not worked out (no count kept, or a step failed): the
// operation leaves the count unknown, and a walk counts it when next needed.
Status UsageUnknown() { return InternalError("the session's usage is not known"); }

std::vector<std::string> Concatenated(const std::vector<std::string>& first, const std::vector<std::string>& second) {
  std::vector<std::string> both = first;
  both.insert(both.end(), second.begin(), second.end());
  return both;
}

bool IsHidden(std::string_view path) {
  return path == kSessionHiddenRoot ||
         (path.starts_with(kSessionHiddenRoot) && path.size() > kSessionHiddenRoot.size() &&
          path[kSessionHiddenRoot.size()] == '/');
}

std::vector<std::string> WithoutHidden(std::vector<std::string> paths) {
  std::erase_if(paths, [](const std::string& path) { return IsHidden(path); });
  return paths;
}

void WriteStringArray(JsonWriter& writer, const std::vector<std::string>& values) {
  writer.StartArray();
  for (const std::string& value : values) writer.String(value);
  writer.EndArray();
}

Status RecordError(std::string_view what) {
  return InvalidArgumentError("The session record " + std::string(kSessionRecordPath) + " is damaged: " +
                              std::string(what));
}

// A limit of the record that may be absent: records written before it
// existed leave `limit` at its default (SessionWorkspaceLimits).
Status OptionalLimit(simdjson::dom::element record, std::string_view key, uint64_t& limit) {
  simdjson::simdjson_result<simdjson::dom::element> field = record[key];
  if (field.error() == simdjson::NO_SUCH_FIELD) return OkStatus();
  uint64_t number = 0;
  if (field.get(number) != simdjson::SUCCESS || number == 0) {
    return RecordError(std::string(key) + " is not a positive integer");
  }
  limit = number;
  return OkStatus();
}

Result<std::vector<std::string>> StringArray(simdjson::dom::element element, std::string_view key) {
  simdjson::dom::array array;
  if (element[key].get(array) != simdjson::SUCCESS) return RecordError(std::string(key) + " is not an array");
  std::vector<std::string> values;
  for (simdjson::dom::element item : array) {
    std::string_view text;
    if (item.get(text) != simdjson::SUCCESS) return RecordError(std::string(key) + " holds a non-string");
    values.emplace_back(text);
  }
  return values;
}

}  // namespace

std::string_view SessionEncodingName(SessionEncoding encoding) {
  return encoding == SessionEncoding::kUtf8 ? "utf-8" : "binary";
}

Result<SessionEncoding> ParseSessionEncoding(std::string_view name) {
  if (name == "utf-8") return SessionEncoding::kUtf8;
  if (name == "binary") return SessionEncoding::kBinary;
  return InvalidArgumentError("Unknown encoding " + Quote(name) + ": use \"utf-8\" or \"binary\"");
}

std::string_view SessionWriteModeName(SessionWriteMode mode) {
  switch (mode) {
    case SessionWriteMode::kCreate:
      return "create";
    case SessionWriteMode::kOverwrite:
      return "overwrite";
    case SessionWriteMode::kAppend:
      return "append";
  }
  return "create";
}

Result<SessionWriteMode> ParseSessionWriteMode(std::string_view name) {
  if (name == "create") return SessionWriteMode::kCreate;
  if (name == "overwrite") return SessionWriteMode::kOverwrite;
  if (name == "append") return SessionWriteMode::kAppend;
  return InvalidArgumentError("Unknown write mode " + Quote(name) + ": use \"create\", \"overwrite\" or \"append\"");
}

std::string SessionRecordJson(const SessionSettings& settings, bool mounts_applied,
                              const std::optional<std::string>& materialized_path) {
  rapidjson::StringBuffer buffer;
  JsonWriter writer(buffer);
  writer.StartObject();
  WriteJsonKey(writer, "id");
  writer.String(settings.id);
  WriteJsonKey(writer, "max_content_chars");
  writer.Uint64(settings.limits.max_content_chars);
  WriteJsonKey(writer, "max_depth");
  writer.Uint(settings.limits.max_depth);
  WriteJsonKey(writer, "max_segment_chars");
  writer.Uint(settings.limits.max_segment_chars);
  WriteJsonKey(writer, "max_total_bytes");
  writer.Uint64(settings.limits.max_total_bytes);
  WriteJsonKey(writer, "max_files");
  writer.Uint64(settings.limits.max_files);
  WriteJsonKey(writer, "allowed_roots");
  WriteStringArray(writer, settings.allowed_roots);
  WriteJsonKey(writer, "mounts");
  writer.StartArray();
  for (const SessionMount& mount : settings.mounts) {
    writer.StartObject();
    WriteJsonKey(writer, "host_path");
    writer.String(mount.host_path);
    WriteJsonKey(writer, "mount_path");
    writer.String(mount.mount_path);
    WriteJsonKey(writer, "include_glob");
    WriteStringArray(writer, mount.include_glob);
    WriteJsonKey(writer, "exclude_glob");
    WriteStringArray(writer, mount.exclude_glob);
    if (mount.max_bytes) {
      WriteJsonKey(writer, "max_bytes");
      writer.Uint64(*mount.max_bytes);
    }
    WriteJsonKey(writer, "follow_symlinks");
    writer.Bool(mount.follow_symlinks);
    writer.EndObject();
  }
  writer.EndArray();
  WriteJsonKey(writer, "mounts_applied");
  writer.Bool(mounts_applied);
  if (materialized_path) {
    WriteJsonKey(writer, "materialized_path");
    writer.String(*materialized_path);
  }
  writer.EndObject();
  return JsonText(buffer);
}

Result<SessionRecord> ParseSessionRecord(std::string_view json) {
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(json.data(), json.size()).get(root) != simdjson::SUCCESS || !root.is_object()) {
    return RecordError("not a JSON object");
  }
  SessionRecord record;
  std::string_view id;
  if (root["id"].get(id) != simdjson::SUCCESS || id.empty()) return RecordError("no id");
  record.settings.id = std::string(id);
  uint64_t number = 0;
  if (root["max_content_chars"].get(number) != simdjson::SUCCESS) return RecordError("no max_content_chars");
  record.settings.limits.max_content_chars = number;
  if (root["max_depth"].get(number) != simdjson::SUCCESS) return RecordError("no max_depth");
  record.settings.limits.max_depth = static_cast<uint32_t>(number);
  if (root["max_segment_chars"].get(number) != simdjson::SUCCESS) return RecordError("no max_segment_chars");
  record.settings.limits.max_segment_chars = static_cast<uint32_t>(number);
  // Absent from records written before the quota existed: those sessions
  // get the defaults (SessionWorkspaceLimits).
  TOOLVFS_RETURN_IF_ERROR(OptionalLimit(root, "max_total_bytes", record.settings.limits.max_total_bytes));
  TOOLVFS_RETURN_IF_ERROR(OptionalLimit(root, "max_files", record.settings.limits.max_files));
  TOOLVFS_ASSIGN_OR_RETURN(record.settings.allowed_roots, StringArray(root, "allowed_roots"));
  simdjson::dom::array mounts;
  if (root["mounts"].get(mounts) != simdjson::SUCCESS) return RecordError("mounts is not an array");
  for (simdjson::dom::element item : mounts) {
    SessionMount mount;
    std::string_view text;
    if (item["host_path"].get(text) != simdjson::SUCCESS) return RecordError("a mount has no host_path");
    mount.host_path = std::string(text);
    if (item["mount_path"].get(text) != simdjson::SUCCESS) return RecordError("a mount has no mount_path");
    mount.mount_path = std::string(text);
    TOOLVFS_ASSIGN_OR_RETURN(mount.include_glob, StringArray(item, "include_glob"));
    TOOLVFS_ASSIGN_OR_RETURN(mount.exclude_glob, StringArray(item, "exclude_glob"));
    if (item["max_bytes"].get(number) == simdjson::SUCCESS) mount.max_bytes = number;
    bool follow = false;
    if (item["follow_symlinks"].get(follow) != simdjson::SUCCESS) return RecordError("a mount has no follow_symlinks");
    mount.follow_symlinks = follow;
    record.settings.mounts.push_back(std::move(mount));
  }
  bool applied = false;
  if (root["mounts_applied"].get(applied) != simdjson::SUCCESS) return RecordError("no mounts_applied");
  record.mounts_applied = applied;
  std::string_view materialized;
  if (root["materialized_path"].get(materialized) == simdjson::SUCCESS) {
    record.materialized_path = std::string(materialized);
  }
  return record;
}

Status LoadSessionHostMounts(const SessionSettings& settings, ProjectFiles& files) {
  std::vector<HostMount> mounts;
  mounts.reserve(settings.mounts.size());
  for (const SessionMount& mount : settings.mounts) {
    mounts.push_back({.host_path = mount.host_path,
                      .mount_path = mount.mount_path,
                      .include_glob = mount.include_glob,
                      .exclude_glob = mount.exclude_glob,
                      .max_bytes = mount.max_bytes,
                      .follow_symlinks = mount.follow_symlinks});
  }
  const SessionPathLimits limits{.max_segments = settings.limits.max_depth,
                                 .max_segment_chars = settings.limits.max_segment_chars};
  const HostMountQuota quota{.max_total_bytes = settings.limits.max_total_bytes,
                             .max_files = settings.limits.max_files};
  return LoadHostMounts(mounts, settings.allowed_roots, limits, files, quota);
}

SessionWorkspace::SessionWorkspace(ProjectFiles& files, SessionSettings settings, MountLoader loader,
                                   SessionClock clock)
    : files_(files),
      settings_(std::move(settings)),
      loader_(loader ? std::move(loader) : MountLoader(LoadSessionHostMounts)),
      clock_(clock ? std::move(clock) : SessionClock(SystemNowMs)),
      shared_(SharedStateOf(files)),
      mutex_(shared_->mutex) {}

Result<bool> SessionWorkspace::IsSession(ProjectFiles& files) { return files.Exists(kSessionRecordPath); }

Result<std::unique_ptr<SessionWorkspace>> SessionWorkspace::Create(ProjectFiles& files, SessionSettings settings,
                                                                   MountLoader loader, SessionClock clock) {
  if (settings.id.empty()) return InvalidArgumentError("A session needs an id; the id given is empty");
  const SessionWorkspaceLimits& limits = settings.limits;
  if (limits.max_content_chars == 0 || limits.max_depth == 0 || limits.max_segment_chars == 0 ||
      limits.max_total_bytes == 0 || limits.max_files == 0) {
    return InvalidArgumentError(
        "Session limits must be at least 1 (max_content_chars, max_depth, max_segment_chars, max_total_bytes, "
        "max_files)");
  }
  // Sessions live on snapshots: refuse a store without them up front.
  Result<std::vector<SnapshotInfo>> snapshots = files.ListSnapshots();
  if (!snapshots.ok()) return snapshots.status();
  TOOLVFS_ASSIGN_OR_RETURN(bool exists, IsSession(files));
  if (exists) {
    return AlreadyExistsError("Workspace " + Quote(files.DisplayRoot()) + " is a session workspace already");
  }
  std::unique_ptr<SessionWorkspace> session(
      new SessionWorkspace(files, std::move(settings), std::move(loader), std::move(clock)));
  TOOLVFS_RETURN_IF_ERROR(session->WriteRecord(false, std::nullopt));
  std::lock_guard lock(session->mutex_);
  if (Status mounted = session->EnsureMounted(); !mounted.ok()) {
    // No half-made session: without its record the workspace is what it
    // was (each mount loads all or nothing).
    static_cast<void>(files.Delete(kSessionRecordPath));
    return mounted;
  }
  // What the workspace held before (`workspace init --from DIR --session`)
  // counts too: a session over its quota from the start is not made.
  Result<SessionUsage*> usage = session->UsageLocked();
  std::optional<std::string> excess =
      usage.ok() ? QuotaExcess(session->settings_.limits, **usage, SessionUsage{}) : std::nullopt;
  if (!usage.ok() || excess) {
    static_cast<void>(files.Delete(kSessionRecordPath));
    if (!usage.ok()) return usage.status();
    return TooLargeError("Workspace " + Quote(files.DisplayRoot()) + " holds " + *excess +
                         ", so it cannot be made a session (raise the limit in the [session] table)");
  }
  return session;
}

Result<std::unique_ptr<SessionWorkspace>> SessionWorkspace::Open(ProjectFiles& files, MountLoader loader,
                                                                 SessionClock clock) {
  Result<std::string> text = files.Read(kSessionRecordPath);
  if (!text.ok()) {
    if (text.status().code() == StatusCode::kNotFound) {
      return NotFoundError("Workspace " + Quote(files.DisplayRoot()) +
                           " is not a session workspace (create one with `toolvfs workspace init NAME --session`)");
    }
    return text.status();
  }
  TOOLVFS_ASSIGN_OR_RETURN(SessionRecord record, ParseSessionRecord(*text));
  return std::unique_ptr<SessionWorkspace>(
      new SessionWorkspace(files, std::move(record.settings), std::move(loader), std::move(clock)));
}

Status SessionWorkspace::CheckSession(std::string_view requested_id) const {
  if (requested_id == settings_.id) return OkStatus();
  return PermissionDeniedError("Session mismatch: the call is for session " + Quote(requested_id) +
                               " but this workspace is session " + Quote(settings_.id) + "; nothing was changed");
}

Status SessionWorkspace::WriteRecord(bool mounts_applied, const std::optional<std::string>& materialized_path) {
  return files_.Write(kSessionRecordPath, SessionRecordJson(settings_, mounts_applied, materialized_path));
}

Status SessionWorkspace::EnsureMounted() {
  if (settings_.mounts.empty()) return OkStatus();
  TOOLVFS_ASSIGN_OR_RETURN(std::string text, files_.Read(kSessionRecordPath));
  TOOLVFS_ASSIGN_OR_RETURN(SessionRecord record, ParseSessionRecord(text));
  if (record.mounts_applied) return OkStatus();
  // The mounts' files count toward the quota: a walk counts them when next
  // needed (the loader checks them against it before writing).
  shared_->usage.reset();
  TOOLVFS_RETURN_IF_ERROR(loader_(settings_, files_));
  return WriteRecord(true, record.materialized_path);
}

Result<std::string> SessionWorkspace::CheckPath(std::string_view path, bool allow_root) const {
  // The tool layer's path rules (SPEC.md §7 item 2, session_path.h),
  // stricter than the store's: nothing is collapsed that could change which
  // file is meant.
  const SessionPathLimits limits{.max_segments = settings_.limits.max_depth,
                                 .max_segment_chars = settings_.limits.max_segment_chars};
  TOOLVFS_ASSIGN_OR_RETURN(std::string normalized, NormalizeSessionPath(path, limits));
  if (normalized.empty()) {
    if (allow_root) return normalized;
    return InvalidArgumentError("Path " + Quote(path) + ": a file path is required, not the workspace root");
  }
  if (IsHidden(normalized)) {
    return InvalidArgumentError("Path " + Quote(path) + ": " + std::string(kSessionHiddenRoot) +
                                " is reserved for the session's own records");
  }
  return normalized;
}

Result<SessionFileInfo> SessionWorkspace::InfoOf(const std::string& path) {
  TOOLVFS_ASSIGN_OR_RETURN(FileMetadata metadata, files_.Metadata(path));
  return InfoOf(path, metadata);
}

Result<SessionFileInfo> SessionWorkspace::InfoOf(const std::string& path, const FileMetadata& metadata,
                                                 const std::string* content) {
  SessionFileInfo info;
  info.path = path;
  info.size_bytes = metadata.size;
  info.version = metadata.version.value_or(1);
  info.created_ms = metadata.created_ms.value_or(metadata.modified_ms);
  info.updated_ms = metadata.modified_ms;
  Result<std::string> sidecar_text = files_.Read(SidecarPath(path));
  std::optional<Sidecar> sidecar = sidecar_text.ok() ? ParseSidecar(*sidecar_text) : std::nullopt;
  if (sidecar && !DescribesContent(*sidecar, metadata)) sidecar.reset();  // stale: see Sidecar
  if (sidecar) {
    info.created_ms = sidecar->created_ms;
    info.updated_ms = sidecar->updated_ms;
    info.encoding = sidecar->encoding;
  } else {
    // A file the tools did not write (a mount, a materialized directory
    // synced back): its encoding is what its content is.
    std::string read;
    if (content == nullptr) {
      TOOLVFS_ASSIGN_OR_RETURN(read, files_.Read(path));
      content = &read;
    }
    info.encoding = IsValidUtf8(*content) ? SessionEncoding::kUtf8 : SessionEncoding::kBinary;
  }
  return info;
}

Result<std::vector<SessionEntry>> SessionWorkspace::ListDirectory(std::string_view path) {
  std::lock_guard lock(mutex_);
  TOOLVFS_ASSIGN_OR_RETURN(std::string normalized, CheckPath(path, /*allow_root=*/true));
  TOOLVFS_RETURN_IF_ERROR(EnsureMounted());
  Result<std::vector<DirEntry>> entries = files_.ListDir(normalized);
  if (!entries.ok()) {
    const std::string shown = normalized.empty() ? "the root" : Quote(normalized);
    if (entries.status().code() == StatusCode::kNotFound) {
      return NotFoundError("Directory " + shown + " does not exist");
    }
    if (entries.status().code() == StatusCode::kNotDirectory) {
      return NotDirectoryError(Quote(normalized) + " is a file, not a directory; use read_file to read it");
    }
    return entries.status();
  }
  std::vector<SessionEntry> listing;
  for (const DirEntry& entry : *entries) {
    if (normalized.empty() && entry.name == kSessionHiddenRoot) continue;
    listing.push_back({entry.name, entry.kind == EntryKind::kDirectory});
  }
  return listing;
}

Result<SessionRead> SessionWorkspace::ReadFile(std::string_view path, std::optional<uint64_t> offset,
                                               std::optional<uint64_t> limit) {
  std::lock_guard lock(mutex_);
  TOOLVFS_ASSIGN_OR_RETURN(std::string normalized, CheckPath(path, /*allow_root=*/false));
  if (offset && *offset == 0) return InvalidArgumentError("offset is 1-based; 0 is not a line number");
  if (limit && (*limit == 0 || *limit > kMaxReadLines)) {
    return InvalidArgumentError("limit " + std::to_string(*limit) + " is out of range: use 1 to " +
                                std::to_string(kMaxReadLines) + " lines");
  }
  TOOLVFS_RETURN_IF_ERROR(EnsureMounted());
  Result<std::string> content = files_.Read(normalized);
  if (!content.ok()) {
    if (content.status().code() == StatusCode::kNotFound) {
      return NotFoundError("File " + Quote(normalized) + " does not exist");
    }
    if (content.status().code() == StatusCode::kIsDirectory) {
      return IsDirectoryError(Quote(normalized) + " is a directory; use list_directory to see what it holds");
    }
    return content.status();
  }
  SessionRead read;
  TOOLVFS_ASSIGN_OR_RETURN(FileMetadata metadata, files_.Metadata(normalized));
  TOOLVFS_ASSIGN_OR_RETURN(read.info, InfoOf(normalized, metadata, &*content));
  if (read.info.encoding == SessionEncoding::kBinary) {
    if (offset || limit) {
      return InvalidArgumentError("File " + Quote(normalized) +
                                  " is binary; offset and limit select lines of text files only");
    }
    read.content = Base64Encode(*content);
    return read;
  }
  // Lines: a final line without a newline counts; an empty file has none.
  std::string_view text = *content;
  std::vector<size_t> line_starts;
  for (size_t start = 0; start < text.size();) {
    line_starts.push_back(start);
    size_t newline = text.find('\n', start);
    start = newline == std::string_view::npos ? text.size() : newline + 1;
  }
  read.total_lines = line_starts.size();
  if (!offset && !limit) {
    read.content = std::move(*content);
    read.lines_returned = read.total_lines;
    return read;
  }
  uint64_t first = offset.value_or(1);
  uint64_t count = limit.value_or(kMaxReadLines);
  read.first_line = first;
  if (first > read.total_lines) return read;  // past the end: nothing, like a pager
  uint64_t last = std::min<uint64_t>(read.total_lines, first - 1 + count);
  size_t begin = line_starts[first - 1];
  size_t end = last < read.total_lines ? line_starts[last] : text.size();
  read.content = std::string(text.substr(begin, end - begin));
  read.lines_returned = last - first + 1;
  return read;
}

Status SessionWorkspace::CheckContent(const SessionWrite& write, std::string& bytes) const {
  const uint64_t max = settings_.limits.max_content_chars;
  if (write.encoding == SessionEncoding::kUtf8) {
    if (!IsValidUtf8(write.content)) {
      return InvalidArgumentError("The content for " + Quote(write.path) +
                                  " is not valid UTF-8; send it base64-encoded with encoding \"binary\"");
    }
    uint64_t characters = CodePoints(write.content);
    if (characters > max) {
      return TooLargeError("The content for " + Quote(write.path) + " has " + std::to_string(characters) +
                           " characters; at most " + std::to_string(max) +
                           " are allowed per write (write the rest with mode \"append\")");
    }
    bytes = write.content;
    return OkStatus();
  }
  Result<std::string> decoded = Base64Decode(write.content);
  if (!decoded.ok()) {
    return InvalidArgumentError("The content for " + Quote(write.path) +
                                " is not valid base64 (encoding \"binary\"): " + decoded.status().message());
  }
  if (decoded->size() > max) {
    return TooLargeError("The content for " + Quote(write.path) + " decodes to " + std::to_string(decoded->size()) +
                         " bytes; at most " + std::to_string(max) + " are allowed per write");
  }
  bytes = std::move(decoded).value();
  return OkStatus();
}

Result<SessionWriteResult> SessionWorkspace::WriteFile(const SessionWrite& write) {
  std::lock_guard lock(mutex_);
  TOOLVFS_ASSIGN_OR_RETURN(std::string normalized, CheckPath(write.path, /*allow_root=*/false));
  std::string bytes;
  TOOLVFS_RETURN_IF_ERROR(CheckContent(write, bytes));
  TOOLVFS_RETURN_IF_ERROR(EnsureMounted());
  Result<FileMetadata> existing = files_.Metadata(normalized);
  if (!existing.ok() && existing.status().code() != StatusCode::kNotFound) return existing.status();
  const bool exists = existing.ok();
  if (exists && existing->kind == EntryKind::kDirectory) {
    return IsDirectoryError(Quote(normalized) + " is a directory; a file cannot be written there");
  }
  if (write.mode == SessionWriteMode::kCreate && exists) {
    return AlreadyExistsError("File " + Quote(normalized) + " already exists; use mode \"overwrite\" or \"append\"");
  }
  if (write.mode != SessionWriteMode::kCreate && !exists) {
    return NotFoundError("File " + Quote(normalized) + " does not exist; use mode \"create\" to make it");
  }
  std::optional<Sidecar> sidecar;
  if (exists) {
    TOOLVFS_ASSIGN_OR_RETURN(SessionFileInfo info, InfoOf(normalized, *existing));
    if (write.expected_version && *write.expected_version != info.version) {
      return ChangedError("Version conflict on " + Quote(normalized) + ": expected version " +
                          std::to_string(*write.expected_version) + " but the file is at version " +
                          std::to_string(info.version) + "; read it again and redo the change");
    }
    sidecar = Sidecar{info.created_ms, 0, info.encoding};
  } else if (write.expected_version) {
    return ChangedError("Version conflict on " + Quote(normalized) + ": expected version " +
                        std::to_string(*write.expected_version) + " but the file does not exist");
  }
  // The quota, before anything is written: an overwrite frees what the file
  // held, an append adds to it.
  TOOLVFS_ASSIGN_OR_RETURN(SessionUsage * usage, UsageLocked());
  const uint64_t replaced = exists && write.mode != SessionWriteMode::kAppend ? existing->size : 0;
  const SessionUsage after{.bytes = usage->bytes - std::min(usage->bytes, replaced) + bytes.size(),
                           .files = usage->files + (exists ? 0 : 1)};
  if (std::optional<std::string> excess = QuotaExcess(settings_.limits, after, *usage)) {
    return TooLargeError("Writing " + Quote(normalized) + " would bring the session to " + *excess +
                         "; nothing was written (delete files the session no longer needs)");
  }
  const int64_t now = clock_();
  Sidecar updated{sidecar ? sidecar->created_ms : now, now, write.encoding};
  if (write.mode == SessionWriteMode::kAppend && sidecar) {
    // Text stays text only while every part of it is text.
    bool text = sidecar->encoding == SessionEncoding::kUtf8 && write.encoding == SessionEncoding::kUtf8;
    updated.encoding = text ? SessionEncoding::kUtf8 : SessionEncoding::kBinary;
  }
  WriteMode store_mode = write.mode == SessionWriteMode::kCreate   ? WriteMode::kCreate
                         : write.mode == SessionWriteMode::kAppend ? WriteMode::kAppend
                                                                   : WriteMode::kOverwrite;
  TOOLVFS_RETURN_IF_ERROR(files_.Write(normalized, bytes, store_mode));
  *usage = after;
  // From here on the write is done, and is answered as done whatever fails
  // below: an error would make a tool retry it, and a retried append
  // appends twice. A failure to record the sidecar leaves the sidecar of
  // the content before, which no longer describes the file and is ignored
  // (see Sidecar).
  SessionWriteResult result{write.mode, {}};
  result.info.path = normalized;
  result.info.created_ms = updated.created_ms;
  result.info.updated_ms = updated.updated_ms;
  result.info.encoding = updated.encoding;
  Result<FileMetadata> written = files_.Metadata(normalized);
  if (!written.ok()) {
    // The store wrote but does not answer now (a server that went away
    // between the two calls): the figures follow from the file before the
    // write, as this write left it (the count the stores keep: one more, 1
    // for a new file).
    result.info.version = exists && existing->version ? *existing->version + 1 : 1;
    result.info.size_bytes = write.mode == SessionWriteMode::kAppend ? existing->size + bytes.size() : bytes.size();
    return result;
  }
  result.info.version = written->version.value_or(1);
  result.info.size_bytes = written->size;
  updated.content_version = written->version;
  updated.content_size = written->size;
  if (!files_.Write(SidecarPath(normalized), SidecarText(updated)).ok()) {
    // The sidecar left is stale: answered as a later read will answer it,
    // when the store tells.
    Result<SessionFileInfo> info = InfoOf(normalized, *written);
    if (info.ok()) result.info = std::move(info).value();
  }
  return result;
}

Result<SessionDeleteResult> SessionWorkspace::DeleteFile(std::string_view path, const DeleteCheck& check) {
  SessionDeleteResult result;
  auto list = [&]() -> Result<std::vector<std::string>> {
    TOOLVFS_ASSIGN_OR_RETURN(result.path, CheckPath(path, /*allow_root=*/true));
    if (result.path.empty()) return InvalidArgumentError("The workspace root cannot be deleted");
    TOOLVFS_RETURN_IF_ERROR(EnsureMounted());
    Result<FileMetadata> metadata = files_.Metadata(result.path);
    if (!metadata.ok()) {
      if (metadata.status().code() == StatusCode::kNotFound) {
        return NotFoundError("Nothing matches " + Quote(result.path) + ": no such file or directory");
      }
      return metadata.status();
    }
    result.was_directory = metadata->kind == EntryKind::kDirectory;
    // The store deletes by path segments: removing `a/b` never touches `a/bc`.
    if (!result.was_directory) return std::vector<std::string>{result.path};
    TOOLVFS_ASSIGN_OR_RETURN(std::vector<std::string> doomed, FilePaths(result.path));
    std::sort(doomed.begin(), doomed.end());
    return doomed;
  };
  // The files checked are the files deleted (by this process; see the top
  // of session_workspace.h).
  return ActOnCheckedPaths<SessionDeleteResult>(
      mutex_, list, check, [&](const std::vector<std::string>& doomed) -> Result<SessionDeleteResult> {
        result.files_deleted = doomed.size();
        Result<SessionUsage> freed = shared_->usage ? UsageOfFiles(doomed) : UsageUnknown();
        Status deleted = files_.Delete(result.path, /*recursive=*/true);
        AdjustUsage(deleted.ok() ? freed : UsageUnknown(), SessionUsage{});
        TOOLVFS_RETURN_IF_ERROR(deleted);
        Status sidecar = files_.Delete(SidecarPath(result.path), /*recursive=*/true);
        if (!sidecar.ok() && sidecar.code() != StatusCode::kNotFound) return sidecar;
        return result;
      });
}

Result<std::vector<std::string>> SessionWorkspace::FilePaths(const std::string& below) {
  std::vector<std::string> paths;
  std::vector<std::string> pending{below};
  while (!pending.empty()) {
    std::string directory = std::move(pending.back());
    pending.pop_back();
    TOOLVFS_ASSIGN_OR_RETURN(std::vector<DirEntry> entries, files_.ListDir(directory));
    for (const DirEntry& entry : entries) {
      if (directory.empty() && entry.name == kSessionHiddenRoot) continue;
      std::string path = Join(directory, entry.name);
      if (entry.kind == EntryKind::kDirectory) {
        pending.push_back(std::move(path));
      } else {
        paths.push_back(std::move(path));
      }
    }
  }
  return paths;
}

Result<SessionUsage> SessionWorkspace::CountUsage() {
  TOOLVFS_ASSIGN_OR_RETURN(std::vector<std::string> paths, FilePaths());
  return UsageOfFiles(paths);
}

Result<SessionUsage> SessionWorkspace::UsageOfFiles(const std::vector<std::string>& paths) {
  SessionUsage usage;
  for (const std::string& path : paths) {
    Result<FileMetadata> metadata = files_.Metadata(path);
    if (!metadata.ok()) {
      // Gone since it was listed (another process): nothing to count.
      if (metadata.status().code() == StatusCode::kNotFound) continue;
      return metadata.status();
    }
    if (metadata->kind == EntryKind::kDirectory) continue;
    ++usage.files;
    usage.bytes += metadata->size;
  }
  return usage;
}

void SessionWorkspace::AdjustUsage(const Result<SessionUsage>& gone, const Result<SessionUsage>& come) {
  if (!shared_->usage) return;
  if (!gone.ok() || !come.ok()) {
    shared_->usage.reset();  // not known for sure: the next need counts again
    return;
  }
  SessionUsage& usage = *shared_->usage;
  usage.bytes = usage.bytes - std::min(usage.bytes, gone->bytes) + come->bytes;
  usage.files = usage.files - std::min(usage.files, gone->files) + come->files;
}

Result<SessionUsage*> SessionWorkspace::UsageLocked() {
  if (!shared_->usage) {
    TOOLVFS_ASSIGN_OR_RETURN(SessionUsage counted, CountUsage());
    shared_->usage = counted;
  }
  return &*shared_->usage;
}

Result<SessionUsage> SessionWorkspace::Usage() {
  std::lock_guard lock(mutex_);
  TOOLVFS_RETURN_IF_ERROR(EnsureMounted());
  TOOLVFS_ASSIGN_OR_RETURN(SessionUsage * usage, UsageLocked());
  return *usage;
}

Status SessionWorkspace::RecountAfterOutsideChange() {
  std::lock_guard lock(mutex_);
  shared_->usage.reset();
  TOOLVFS_RETURN_IF_ERROR(EnsureMounted());
  TOOLVFS_ASSIGN_OR_RETURN(SessionUsage * usage, UsageLocked());
  return OverQuotaError(*usage);
}

Status SessionWorkspace::OverQuotaError(const SessionUsage& usage) const {
  std::optional<std::string> excess = QuotaExcess(settings_.limits, usage, SessionUsage{});
  if (!excess) return OkStatus();
  return TooLargeError("The changes synced back from a tool's copy of the session brought it to " + *excess +
                       "; they were kept, and writes that add to the session are refused until files are deleted");
}

Result<std::vector<SessionFileInfo>> SessionWorkspace::ListAllFiles() {
  std::lock_guard lock(mutex_);
  TOOLVFS_RETURN_IF_ERROR(EnsureMounted());
  std::vector<SessionFileInfo> infos;
  TOOLVFS_ASSIGN_OR_RETURN(std::vector<std::string> paths, FilePaths());
  for (const std::string& path : paths) {
    TOOLVFS_ASSIGN_OR_RETURN(SessionFileInfo info, InfoOf(path));
    infos.push_back(std::move(info));
  }
  std::sort(infos.begin(), infos.end(),
            [](const SessionFileInfo& a, const SessionFileInfo& b) { return a.path < b.path; });
  return infos;
}

Result<std::string> SessionWorkspace::Snapshot(std::optional<std::string_view> label) {
  std::lock_guard lock(mutex_);
  TOOLVFS_RETURN_IF_ERROR(EnsureMounted());
  return files_.Snapshot(label);
}

Status SessionWorkspace::Restore(std::string_view snapshot_id) {
  std::lock_guard lock(mutex_);
  return RestoreLocked(snapshot_id);
}

std::vector<std::string> ChangedPaths(const TreeDiff& diff) {
  std::vector<std::string> paths = diff.added;
  paths.insert(paths.end(), diff.modified.begin(), diff.modified.end());
  paths.insert(paths.end(), diff.deleted.begin(), diff.deleted.end());
  std::sort(paths.begin(), paths.end());
  return paths;
}

Result<TreeDiff> SessionWorkspace::RestoreChecked(std::string_view snapshot_id, const PathsCheck& check) {
  TreeDiff undone;
  auto list = [&]() -> Result<std::vector<std::string>> {
    TOOLVFS_ASSIGN_OR_RETURN(undone, VisibleDiff(snapshot_id, std::nullopt));
    return ChangedPaths(undone);
  };
  return ActOnCheckedPaths<TreeDiff>(mutex_, list, check, [&](const std::vector<std::string>&) -> Result<TreeDiff> {
    TOOLVFS_RETURN_IF_ERROR(RestoreLocked(snapshot_id));
    return undone;
  });
}

Status SessionWorkspace::RestoreLocked(std::string_view snapshot_id) {
  // Keep the materialized path across the restore: it describes a directory
  // on disk now, not the state restored.
  TOOLVFS_ASSIGN_OR_RETURN(std::string text, files_.Read(kSessionRecordPath));
  TOOLVFS_ASSIGN_OR_RETURN(SessionRecord current, ParseSessionRecord(text));
  // The quota's count follows what the restore undoes, at the cost of the
  // change rather than a walk: the files it removes or replaces go, the
  // files it brings back or puts in their place come.
  std::optional<TreeDiff> undone;
  if (shared_->usage) {
    Result<TreeDiff> diff = VisibleDiff(snapshot_id, std::nullopt);
    if (diff.ok()) undone = std::move(diff).value();
  }
  Result<SessionUsage> leaving = UsageUnknown();
  if (undone) leaving = UsageOfFiles(Concatenated(undone->added, undone->modified));
  Status restored_files = files_.Restore(snapshot_id);
  if (!restored_files.ok()) {
    shared_->usage.reset();
    return restored_files;
  }
  Result<SessionUsage> coming = UsageUnknown();
  if (undone) coming = UsageOfFiles(Concatenated(undone->modified, undone->deleted));
  AdjustUsage(leaving, coming);
  Result<std::string> restored_text = files_.Read(kSessionRecordPath);
  bool applied = true;
  if (restored_text.ok()) {
    Result<SessionRecord> restored = ParseSessionRecord(*restored_text);
    if (restored.ok()) applied = restored->mounts_applied;
  }
  return WriteRecord(applied, current.materialized_path);
}

Result<std::vector<SnapshotInfo>> SessionWorkspace::Snapshots() {
  std::lock_guard lock(mutex_);
  return files_.ListSnapshots();
}

Result<TreeDiff> SessionWorkspace::Diff(std::string_view from, std::optional<std::string_view> to) {
  std::lock_guard lock(mutex_);
  return VisibleDiff(from, to);
}

Result<TreeDiff> SessionWorkspace::VisibleDiff(std::string_view from, std::optional<std::string_view> to) {
  TOOLVFS_ASSIGN_OR_RETURN(TreeDiff diff, files_.Diff(from, to));
  return TreeDiff{WithoutHidden(std::move(diff.added)), WithoutHidden(std::move(diff.modified)),
                  WithoutHidden(std::move(diff.deleted))};
}

Status SessionWorkspace::Reset() {
  std::lock_guard lock(mutex_);
  TOOLVFS_ASSIGN_OR_RETURN(std::string text, files_.Read(kSessionRecordPath));
  TOOLVFS_ASSIGN_OR_RETURN(SessionRecord record, ParseSessionRecord(text));
  TOOLVFS_ASSIGN_OR_RETURN(std::vector<DirEntry> entries, files_.ListDir(""));
  for (const DirEntry& entry : entries) {
    if (entry.name == kSessionHiddenRoot) continue;
    TOOLVFS_RETURN_IF_ERROR(files_.Delete(entry.name, /*recursive=*/true));
  }
  Status sidecars = files_.Delete(".toolvfs/session", /*recursive=*/true);
  if (!sidecars.ok() && sidecars.code() != StatusCode::kNotFound) return sidecars;
  shared_->usage = SessionUsage{};
  // The mounts come back on the next use (EnsureMounted), not now: a reset
  // must not fail because a host folder is away at this moment.
  return WriteRecord(settings_.mounts.empty(), record.materialized_path);
}

Status SessionWorkspace::SetMaterializedPath(std::optional<std::string> path) {
  std::lock_guard lock(mutex_);
  TOOLVFS_ASSIGN_OR_RETURN(std::string text, files_.Read(kSessionRecordPath));
  TOOLVFS_ASSIGN_OR_RETURN(SessionRecord record, ParseSessionRecord(text));
  return WriteRecord(record.mounts_applied, path);
}

Result<std::optional<std::string>> SessionWorkspace::MaterializedPath() {
  std::lock_guard lock(mutex_);
  TOOLVFS_ASSIGN_OR_RETURN(std::string text, files_.Read(kSessionRecordPath));
  TOOLVFS_ASSIGN_OR_RETURN(SessionRecord record, ParseSessionRecord(text));
  return record.materialized_path;
}

Result<std::unique_ptr<SessionDirectory>> SessionWorkspace::Materialize() {
  TOOLVFS_ASSIGN_OR_RETURN(std::vector<SessionFileInfo> before, ListAllFiles());
  std::vector<std::pair<std::string, uint64_t>> versions;
  versions.reserve(before.size());
  for (const SessionFileInfo& info : before) versions.emplace_back(info.path, info.version);
  TOOLVFS_ASSIGN_OR_RETURN(std::unique_ptr<MaterializedView> view, files_.Materialize());
  Status recorded = SetMaterializedPath(view->path());
  if (!recorded.ok()) {
    static_cast<void>(view->Release());
    return recorded;
  }
  return std::unique_ptr<SessionDirectory>(new SessionDirectory(*this, std::move(view), std::move(versions)));
}

Status SessionWorkspace::FinishMaterialized(const std::vector<std::pair<std::string, uint64_t>>& versions_before) {
  {
    std::lock_guard lock(mutex_);
    // The command may have removed the hidden directory with everything
    // else: the session must survive it.
    TOOLVFS_ASSIGN_OR_RETURN(bool has_record, files_.Exists(kSessionRecordPath));
    if (!has_record) TOOLVFS_RETURN_IF_ERROR(WriteRecord(true, std::nullopt));
  }
  TOOLVFS_RETURN_IF_ERROR(SetMaterializedPath(std::nullopt));
  std::lock_guard lock(mutex_);
  TOOLVFS_ASSIGN_OR_RETURN(std::vector<std::string> paths, FilePaths());
  SessionUsage usage;
  for (const std::string& path : paths) {
    TOOLVFS_ASSIGN_OR_RETURN(FileMetadata metadata, files_.Metadata(path));
    ++usage.files;
    usage.bytes += metadata.size;
    auto found = std::lower_bound(versions_before.begin(), versions_before.end(), path,
                                  [](const auto& known, const std::string& wanted) { return known.first < wanted; });
    bool unchanged = found != versions_before.end() && found->first == path && metadata.version == found->second;
    if (unchanged) continue;
    Status dropped = files_.Delete(SidecarPath(path));
    if (!dropped.ok() && dropped.code() != StatusCode::kNotFound) return dropped;
  }
  // What the command wrote counts too, checked now that it is synced back
  // (docs/sessions.md, "Quota"): the walk above counted every file.
  shared_->usage = usage;
  return OverQuotaError(usage);
}

SessionDirectory::~SessionDirectory() {
  Status released = Release();
  if (!released.ok()) std::fprintf(stderr, "toolvfs: session directory: %s\n", released.message().c_str());
}

Status SessionDirectory::Release() {
  if (released_) return OkStatus();
  released_ = true;
  TOOLVFS_RETURN_IF_ERROR(view_->Release());
  return session_.FinishMaterialized(versions_before_);
}

}  // namespace toolvfs
