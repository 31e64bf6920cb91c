#include "project/project_files.h"

#include <algorithm>
#include <cctype>
#include <ctime>
#include <optional>
#include <string>

#include "core/text.h"
#include "project/fs_store.h"
#include "project/memory_store.h"
#include "project/null_store.h"
#include "project/sql/postgres_store.h"
#include "project/sql/sqlite_store.h"
#include "project/path.h"

namespace toolvfs {

std::string_view EntryKindName(EntryKind kind) {
  switch (kind) {
    case EntryKind::kFile: return "file";
    case EntryKind::kDirectory: return "dir";
    case EntryKind::kSymlink: return "symlink";
  }
  return "file";
}

std::string FormatTimestamp(int64_t unix_milliseconds) {
  int64_t seconds = unix_milliseconds / 1000;
  int64_t milliseconds = unix_milliseconds % 1000;
  if (milliseconds < 0) {
    milliseconds += 1000;
    seconds -= 1;
  }
  time_t time = static_cast<time_t>(seconds);
  struct tm utc;
  gmtime_r(&time, &utc);
  char buffer[40];
  size_t length = strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%S", &utc);
  snprintf(buffer + length, sizeof buffer - length, ".%03dZ", static_cast<int>(milliseconds));
  return buffer;
}

Result<FileRange> ProjectFiles::ReadAuthorized(std::string_view path, std::optional<ByteRange> range,
                                               const ReadAuthorizer& authorize) {
  return RetryWhileChanged([&]() -> Result<FileRange> {
    TOOLVFS_ASSIGN_OR_RETURN(std::string resolved, ResolvePath(path));
    TOOLVFS_RETURN_IF_ERROR(authorize(resolved));
    ProjectFiles& judged = WithoutSymlinks();
    if (range) return judged.ReadRange(resolved, range->offset, range->length);
    TOOLVFS_ASSIGN_OR_RETURN(std::string content, judged.Read(resolved));
    uint64_t size = content.size();
    return FileRange{std::move(content), size};
  });
}

namespace {
Status SnapshotsUnsupported(const ProjectFiles& store) {
  return UnsupportedError("The project " + Quote(store.DisplayRoot()) +
                          " does not keep snapshots; a memory:, sqlite: or postgres:// workspace does");
}
}  // namespace

Result<std::string> ProjectFiles::Snapshot(std::optional<std::string_view>) {
  return SnapshotsUnsupported(*this);
}
Status ProjectFiles::Restore(std::string_view) { return SnapshotsUnsupported(*this); }
Result<std::vector<SnapshotInfo>> ProjectFiles::ListSnapshots() { return SnapshotsUnsupported(*this); }
Result<TreeDiff> ProjectFiles::Diff(std::string_view, std::optional<std::string_view>) {
  return SnapshotsUnsupported(*this);
}
Status ProjectFiles::DeleteSnapshot(std::string_view) { return SnapshotsUnsupported(*this); }
Result<TreeChanges> ProjectFiles::DiffWithRewrites(std::string_view, std::optional<std::string_view>) {
  return UnsupportedError("The store " + Quote(DisplayRoot()) + " does not tell rewrites with the same content");
}
Result<UniqueFd> ProjectFiles::OpenForStreaming(std::string_view path) {
  return UnsupportedError("Cannot open " + DisplayPath(path) + " for streaming: the store " +
                          Quote(DisplayRoot()) + " does not hand out file descriptors");
}

Status ProjectFiles::WriteWithMetadata(std::string_view path, std::string_view content, const FileMetadata& metadata) {
  static_cast<void>(content);
  static_cast<void>(metadata);
  return UnsupportedError("Cannot write " + DisplayPath(path) + " with given metadata: the store " +
                          Quote(DisplayRoot()) + " does not take them");
}

Status ProjectFiles::WriteFromDescriptor(std::string_view path, int source, WriteMode mode) {
  static_cast<void>(source);
  static_cast<void>(mode);
  return UnsupportedError("Cannot write " + DisplayPath(path) + " from a descriptor: the store " +
                          Quote(DisplayRoot()) + " does not take file descriptors");
}

Result<WriteMode> ParseWriteMode(std::string_view name) {
  if (name == "overwrite") return WriteMode::kOverwrite;
  if (name == "create") return WriteMode::kCreate;
  if (name == "append") return WriteMode::kAppend;
  return InvalidArgumentError("Invalid write mode " + Quote(name) +
                              ": expected 'overwrite', 'create' or 'append'");
}

namespace {

// The store URI a directory that does not exist was probably meant to be:
// a scheme without its colon ("memory", "null"), or a workspace address
// without "sqlite:" ("work.db#main"). nullopt when it looks like none.
std::optional<std::string> StoreUriLookAlike(std::string_view uri) {
  if (uri == "memory" || uri == "null") return std::string(uri) + ":";
  if (uri == "sqlite") return "sqlite:FILE#WORKSPACE";
  if (uri == "postgres" || uri == "postgresql") return "postgres://...#WORKSPACE";
  // A directory named with '#' is rare; a sqlite address without its scheme is a common slip.
  if (uri.find('#') != std::string_view::npos) return "sqlite:" + std::string(uri);
  return std::nullopt;
}

}  // namespace

Result<std::unique_ptr<ProjectFiles>> OpenProject(std::string_view uri,
                                                  const StoreOptions& options) {
  if (uri.starts_with("fs:")) return OpenFsStore(uri.substr(3), options);
  if (uri == "memory:" || uri.starts_with("memory:")) {
    return std::unique_ptr<ProjectFiles>(NewMemoryStore(std::string(uri.substr(7)), options));
  }
  if (uri == "null:") return std::unique_ptr<ProjectFiles>(NewNullStore());
  if (uri.starts_with("sqlite:")) return OpenSqliteStore(uri, options);
  if (IsPostgresUri(uri)) return OpenPostgresStore(uri, options);
  // "scheme:rest" with an RFC 3986 scheme (a letter, then letters, digits,
  // '+', '-', '.') before any slash names a store we do not know; anything
  // else is a directory ("./a:b", "/srv/a:b").
  size_t colon = uri.find(':');
  std::string_view scheme = uri.substr(0, colon);
  bool is_scheme = colon != std::string_view::npos && !scheme.empty() &&
                   std::isalpha(static_cast<unsigned char>(scheme[0])) &&
                   std::all_of(scheme.begin(), scheme.end(), [](char c) {
                     return std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '-' || c == '.';
                   });
  if (is_scheme) {
    return InvalidArgumentError("Invalid project " + Quote(uri) + ": unknown store '" +
                                std::string(scheme) +
                                ":'; expected fs:DIR, a directory, memory:, sqlite:FILE#WORKSPACE, postgres://...#WORKSPACE or null:");
  }
  Result<std::unique_ptr<ProjectFiles>> directory = OpenFsStore(uri, options);
  if (directory.ok() || directory.status().code() != StatusCode::kNotFound) return directory;
  std::optional<std::string> meant = StoreUriLookAlike(uri);
  if (!meant) return directory;
  return NotFoundError(directory.status().message() + "; did you mean " + Quote(*meant) + "?");
}

}  // namespace toolvfs
