#include "cli/workspace_transfer.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "core/io.h"
#include "core/open_without_symlinks.h"
#include "core/text.h"
#include "core/unique_fd.h"
#include "project/ignore.h"
#include "project/path.h"
#include "project/store_errors.h"

namespace toolvfs {
namespace {

// Temporary files of writes in progress: the fs store's prefix, so that an
// fs project never lists one (an import into it writes in its directory).
constexpr std::string_view kTempPrefix = ".toolvfs-tmp-";

// A directory of the target as the copy holds it: enough to create, open,
// rename and stat entries in it, without the right to list it.
constexpr int kTargetDirectoryFlags = O_PATH | O_DIRECTORY | O_NOFOLLOW;

// What skip_tool_state leaves out, in any case: a case-insensitive file
// system finds `.GIT` when git looks for `.git`.
bool IsToolState(std::string_view name) {
  const std::string lower = AsciiLowercase(name);
  return lower == ".git" || lower == ".toolvfs" || lower == "toolvfs.toml";
}

struct PlannedEntry {
  std::string path;  // normalized project path
  EntryKind kind;    // kFile or kDirectory
};

class Planner {
 public:
  Planner(ProjectFiles& source, const TransferOptions& options, TransferReport& report)
      : source_(source), options_(options), report_(report) {}

  // Appends the entries below directory `path`, parents before children.
  Status Walk(const std::string& path, const IgnoreRules& inherited) {
    TOOLVFS_ASSIGN_OR_RETURN(std::vector<DirEntry> entries, source_.ListDir(path));
    IgnoreRules rules = inherited;
    if (options_.skip_ignored && !options_.include_ignored) {
      // .gitignore first: .ignore takes precedence in the same directory.
      for (std::string_view name : {kGitignoreFileName, kIgnoreFileName}) {
        bool present = false;
        for (const DirEntry& entry : entries) {
          if (entry.name == name && entry.kind == EntryKind::kFile && !entry.is_symlink()) present = true;
        }
        if (!present) continue;
        TOOLVFS_ASSIGN_OR_RETURN(std::string text, source_.Read(JoinPath(path, name)));
        rules = rules.With(IgnoreFile(path, text));
      }
    }
    for (const DirEntry& entry : entries) {
      if (entry.is_symlink()) {
        ++report_.skipped;
        continue;
      }
      std::string child = JoinPath(path, entry.name);
      Result<std::string> normalized = NormalizePath(child);
      if (!normalized.ok() || *normalized != child) {
        ++report_.skipped;
        continue;
      }
      if (options_.skip_tool_state && IsToolState(entry.name)) {
        report_.tool_state.push_back(child);
        continue;
      }
      const bool is_directory = entry.kind == EntryKind::kDirectory;
      if (options_.skip_ignored && rules.IsIgnored(child, is_directory)) {
        ++report_.ignored;
        continue;
      }
      const size_t planned_before = planned_.size();
      planned_.push_back(PlannedEntry{child, entry.kind});
      if (!is_directory) continue;
      Status walked = Walk(child, rules);
      if (walked.code() == StatusCode::kChanged) {
        // Replaced by a symbolic link since it was listed: left out like one.
        planned_.resize(planned_before);
        ++report_.skipped;
        continue;
      }
      TOOLVFS_RETURN_IF_ERROR(walked);
    }
    return OkStatus();
  }

  std::vector<PlannedEntry>& planned() { return planned_; }

 private:
  ProjectFiles& source_;
  const TransferOptions& options_;
  TransferReport& report_;
  std::vector<PlannedEntry> planned_;
};

std::string TargetPath(const std::string& target, std::string_view path) {
  return target + "/" + std::string(path);
}

std::string BaseName(std::string_view path) {
  const size_t slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

// The directory of the target that holds the entry `path`, reached from
// `target_fd` without following any symbolic link; empty with errno set
// when it cannot be.
UniqueFd OpenTargetParent(int target_fd, std::string_view path) {
  const size_t slash = path.rfind('/');
  const std::string_view parent = slash == std::string_view::npos ? "." : path.substr(0, slash);
  return OpenWithoutSymlinks(target_fd, parent, kTargetDirectoryFlags, /*beneath=*/true);
}

// `action` ("Cannot write 'out/a'") failed with `error` on the way to the
// entry. ENOTDIR is also what a symbolic link as the last directory gives
// (opened O_NOFOLLOW | O_DIRECTORY).
Status TargetPathError(int error, const std::string& action) {
  if (error == ELOOP || error == ENOTDIR) {
    return AlreadyExistsError(action + ": a file or a symbolic link is on its way where a directory goes "
                                       "(symbolic links in the target are never followed)");
  }
  return ErrnoToStatus(error, action);
}

std::string_view KindOf(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISREG(mode)) return "a file";
  return S_ISLNK(mode) ? "a symbolic link" : "a special file";
}

// Refuses the entry `name` of the target directory `parent_fd` (`file`:
// the file there, if any) when it is one of the store's files. `where`
// names it; `suffix` ends the message.
Status CheckNotStoreFile(int parent_fd, const std::string& name, const std::optional<FileId>& file,
                         const std::string& where, const StoreFiles& store_files, std::string_view suffix) {
  if (!store_files.directory) return OkStatus();
  struct stat parent;
  if (::fstat(parent_fd, &parent) != 0) return ErrnoToStatus(errno, "Cannot write " + Quote(where));
  if (!store_files.Holds(IdOf(parent), name, file)) return OkStatus();
  return PermissionDeniedError("Cannot write " + Quote(where) + ": the store " + Quote(store_files.shown) +
                               " keeps its data there (its file, -wal, -shm and -journal are never written, "
                               "which would replace every workspace of the store)" + std::string(suffix));
}

// Whether `entry` can be written at its place in the target: nothing is
// there, or the same kind of thing (a regular file is replaced, a
// directory merged), and it is not one of the store's files. Never
// through a symbolic link.
Status CheckTarget(int target_fd, const std::string& target, const PlannedEntry& entry, const StoreFiles& store_files) {
  const std::string where = TargetPath(target, entry.path);
  UniqueFd parent = OpenTargetParent(target_fd, entry.path);
  if (!parent) {
    // Missing: the copy creates it, and nothing is in the way below it.
    // Anything else was refused at the check of the parent itself.
    if (errno == ENOENT) return OkStatus();
    return TargetPathError(errno, "Cannot write " + Quote(where));
  }
  const std::string name = BaseName(entry.path);
  struct stat status;
  const bool exists = ::fstatat(parent.get(), name.c_str(), &status, AT_SYMLINK_NOFOLLOW) == 0;
  if (!exists && errno != ENOENT) return ErrnoToStatus(errno, "Cannot write " + Quote(where));
  TOOLVFS_RETURN_IF_ERROR(CheckNotStoreFile(parent.get(), name, exists ? std::optional(IdOf(status)) : std::nullopt,
                                            where, store_files, "; nothing was written"));
  if (!exists) return OkStatus();
  const bool fits = entry.kind == EntryKind::kDirectory ? S_ISDIR(status.st_mode) : S_ISREG(status.st_mode);
  if (fits) return OkStatus();
  return AlreadyExistsError("Cannot write the " +
                            std::string(entry.kind == EntryKind::kDirectory ? "directory " : "file ") +
                            Quote(where) + ": " + std::string(KindOf(status.st_mode)) +
                            " is in the way; nothing was written");
}

// Creates the directory `path` of the target, or takes the one there, as
// long as it is a directory: mkdirat's EEXIST says nothing about what is
// there (a symbolic link planted since the check).
Status MakeTargetDirectory(int target_fd, const std::string& target, const std::string& path,
                           const StoreFiles& store_files) {
  const std::string where = TargetPath(target, path);
  const std::string action = "Cannot create the directory " + Quote(where);
  UniqueFd parent = OpenTargetParent(target_fd, path);
  if (!parent) return TargetPathError(errno, action);
  const std::string name = BaseName(path);
  TOOLVFS_RETURN_IF_ERROR(CheckNotStoreFile(parent.get(), name, std::nullopt, where, store_files, ""));
  if (::mkdirat(parent.get(), name.c_str(), 0755) != 0 && errno != EEXIST) return ErrnoToStatus(errno, action);
  struct stat status;
  if (::fstatat(parent.get(), name.c_str(), &status, AT_SYMLINK_NOFOLLOW) != 0) return ErrnoToStatus(errno, action);
  if (!S_ISDIR(status.st_mode)) {
    return AlreadyExistsError(action + ": " + std::string(KindOf(status.st_mode)) + " is in the way");
  }
  return OkStatus();
}

std::string RandomHex() {
  uint64_t value = 0;
  if (::getrandom(&value, sizeof value, 0) != sizeof value) {
    static uint64_t counter = 0;
    value = (static_cast<uint64_t>(::getpid()) << 32) ^ ++counter;
  }
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(value));
  return text;
}

// A file being written beside its place in a directory of the target;
// removed again unless it replaced the file at its place. Destroy it before
// the directory's descriptor is closed.
class PendingFile {
 public:
  explicit PendingFile(int parent_fd) : parent_fd_(parent_fd) {}
  PendingFile(const PendingFile&) = delete;
  PendingFile& operator=(const PendingFile&) = delete;
  ~PendingFile() {
    fd_.reset();
    if (!name_.empty()) ::unlinkat(parent_fd_, name_.c_str(), 0);
  }

  // Creates it with permission bits `mode` (less the umask). `action` says
  // what failed.
  Status Create(mode_t mode, const std::string& action) {
    for (int attempt = 0; attempt < 8; ++attempt) {
      std::string name = std::string(kTempPrefix) + RandomHex();
      UniqueFd fd(::openat(parent_fd_, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode));
      if (fd) {
        name_ = std::move(name);
        fd_ = std::move(fd);
        return OkStatus();
      }
      if (errno != EEXIST) return ErrnoToStatus(errno, action);
    }
    return AlreadyExistsError(action + ": no free name for a temporary file");
  }

  int fd() const { return fd_.get(); }

  // Closes it and renames it to `name`, replacing what is there (a file,
  // or a symbolic link itself: rename never follows one).
  Status Replace(const std::string& name, const std::string& action) {
    if (::close(fd_.release()) != 0) return ErrnoToStatus(errno, action);
    if (::renameat(parent_fd_, name_.c_str(), parent_fd_, name.c_str()) != 0) return ErrnoToStatus(errno, action);
    name_.clear();
    return OkStatus();
  }

 private:
  int parent_fd_;
  std::string name_;  // while it exists under its temporary name
  UniqueFd fd_;
};

Status WriteTargetFile(int target_fd, const std::string& target, const std::string& path, std::string_view content,
                       const StoreFiles& store_files) {
  const std::string where = TargetPath(target, path);
  const std::string action = "Cannot write " + Quote(where);
  UniqueFd parent = OpenTargetParent(target_fd, path);
  if (!parent) return TargetPathError(errno, action);
  const std::string name = BaseName(path);
  struct stat old;
  const bool exists = ::fstatat(parent.get(), name.c_str(), &old, AT_SYMLINK_NOFOLLOW) == 0;
  TOOLVFS_RETURN_IF_ERROR(CheckNotStoreFile(parent.get(), name, exists ? std::optional(IdOf(old)) : std::nullopt,
                                            where, store_files, ""));
  PendingFile pending(parent.get());
  TOOLVFS_RETURN_IF_ERROR(pending.Create(0644, action));
  // A file replaced keeps its permission bits, as when it was overwritten
  // in place, but not set-user-ID, set-group-ID or sticky: the new file is
  // ours, with content from the workspace.
  if (exists && S_ISREG(old.st_mode) && ::fchmod(pending.fd(), old.st_mode & 0777) != 0) {
    return ErrnoToStatus(errno, action);
  }
  TOOLVFS_RETURN_IF_ERROR(WriteFull(pending.fd(), content, Quote(where)));
  return pending.Replace(name, action);
}

// The content of the source file `path`, or nullopt for a file left out:
// one replaced by a symbolic link since it was listed (counted as skipped),
// or one of the store's files (listed). Where the source hands out
// descriptors (fs), the file checked is the file read.
Result<std::optional<std::string>> ReadSourceFile(ProjectFiles& source, const std::string& path,
                                                  const TransferOptions& options, TransferReport& report) {
  Result<UniqueFd> opened = source.OpenForStreaming(path);
  if (!opened.ok() && opened.status().code() == StatusCode::kUnsupported) {
    Result<std::string> content = source.Read(path);
    if (!content.ok()) return content.status();
    return std::optional<std::string>(std::move(content).value());
  }
  if (!opened.ok() && opened.status().code() == StatusCode::kChanged) {
    ++report.skipped;
    return std::optional<std::string>();
  }
  if (!opened.ok()) return opened.status();
  struct stat status;
  if (::fstat(opened->get(), &status) != 0) return ErrnoToStatus(errno, CannotDo("read", path));
  if (options.store_files.HoldsFile(IdOf(status))) {
    report.store_files.push_back(path);
    return std::optional<std::string>();
  }
  const auto size = static_cast<uint64_t>(status.st_size);
  if (size > options.max_file_bytes) return ReadLimitError(path, size, options.max_file_bytes);
  TOOLVFS_ASSIGN_OR_RETURN(std::string content,
                           ReadToEnd(opened->get(), options.max_file_bytes, [&] { return CannotDo("read", path); },
                                     size));
  return std::optional<std::string>(std::move(content));
}

}  // namespace

FileId IdOf(const struct stat& status) { return FileId{status.st_dev, status.st_ino}; }

bool StoreFiles::HoldsFile(const FileId& file) const {
  return std::find(existing.begin(), existing.end(), file) != existing.end();
}

bool StoreFiles::Holds(const FileId& in_directory, const std::string& name, const std::optional<FileId>& file) const {
  if (directory && in_directory == *directory && std::find(names.begin(), names.end(), name) != names.end()) {
    return true;
  }
  return file && HoldsFile(*file);
}

Result<StoreFiles> SqliteStoreFiles(const std::string& path) {
  StoreFiles files;
  files.shown = path;
  const size_t slash = path.rfind('/');
  const std::string directory = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  struct stat status;
  if (::stat(directory.c_str(), &status) != 0) {
    return ErrnoToStatus(errno, "Cannot find the directory of the store " + Quote(path));
  }
  files.directory = IdOf(status);
  for (std::string_view suffix : {"", "-wal", "-shm", "-journal"}) {
    files.names.push_back(name + std::string(suffix));
    if (::stat((path + std::string(suffix)).c_str(), &status) == 0) files.existing.push_back(IdOf(status));
  }
  return files;
}

Result<bool> IsAtOrBelow(int directory_fd, const FileId& ancestor) {
  UniqueFd current(::openat(directory_fd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC));
  struct stat status;
  if (!current || ::fstat(current.get(), &status) != 0) return ErrnoToStatus(errno, "Cannot walk up a directory");
  FileId current_id = IdOf(status);
  // Deeper than any path a directory can be named by (PATH_MAX / 2).
  for (int depth = 0; depth < 2048; ++depth) {
    if (current_id == ancestor) return true;
    UniqueFd parent(::openat(current.get(), "..", O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!parent || ::fstat(parent.get(), &status) != 0) return ErrnoToStatus(errno, "Cannot walk up a directory");
    if (IdOf(status) == current_id) return false;  // "/" is its own parent
    current = std::move(parent);
    current_id = IdOf(status);
  }
  return false;
}

Result<TransferReport> CopyTreeInto(ProjectFiles& given_source, int target_fd, const std::string& target,
                                    const TransferOptions& options) {
  // The source as it was listed: an entry replaced by a symbolic link since
  // (an agent racing the import of its directory, swapping a file for a
  // link to a secret beside it) is refused, never followed, and left out.
  ProjectFiles& source = given_source.WithoutSymlinks();
  TransferReport report;
  Planner planner(source, options, report);
  TOOLVFS_RETURN_IF_ERROR(planner.Walk("", IgnoreRules()));

  // Every conflict before the first write, so a refused copy changes nothing.
  uint64_t files_total = 0;
  for (const PlannedEntry& entry : planner.planned()) {
    TOOLVFS_RETURN_IF_ERROR(CheckTarget(target_fd, target, entry, options.store_files));
    files_total += entry.kind == EntryKind::kDirectory ? 0 : 1;
  }
  for (const PlannedEntry& entry : planner.planned()) {
    if (entry.kind == EntryKind::kDirectory) {
      TOOLVFS_RETURN_IF_ERROR(MakeTargetDirectory(target_fd, target, entry.path, options.store_files));
      ++report.directories;
      continue;
    }
    TOOLVFS_ASSIGN_OR_RETURN(std::optional<std::string> content, ReadSourceFile(source, entry.path, options, report));
    if (!content) continue;
    TOOLVFS_RETURN_IF_ERROR(WriteTargetFile(target_fd, target, entry.path, *content, options.store_files));
    ++report.files;
    report.bytes += content->size();
    if (options.progress) options.progress(report, files_total);
  }
  return report;
}

}  // namespace toolvfs
