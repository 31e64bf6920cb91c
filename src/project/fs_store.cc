// The fs store. Every operation resolves its path relative to the root
// descriptor (see fs_store.h); this file is the only one in toolvfs that
// calls the OS file API on project files.
//
// Resolution has two routes with one meaning:
//  - fast: one openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS) call. The
//    kernel follows symlinks that stay beneath the root and fails with
//    EXDEV for anything that would leave it.
//  - walk: one O_PATH | O_NOFOLLOW open per component, holding a descriptor
//    for every directory entered; symlinks are read and their targets
//    pushed back onto the components still to resolve; ".." pops our own
//    stack of descriptors, never the file system's "..". An absolute
//    symlink is followed only if it names a place inside the root.
// The fast route answers most calls; when it refuses (EXDEV, ELOOP: maybe an
// escape, maybe an absolute symlink that stays inside) the walk decides.
// Mutating operations always walk: they need the parent directory and the
// final name, and their cost is dominated by the write itself.

#include "project/fs_store.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/in_use_lock.h"
#include "core/io.h"
#include "core/open_without_symlinks.h"
#include "core/text.h"
#include "core/unique_fd.h"
#include "project/grep.h"
#include "project/path.h"
#include "project/store_errors.h"

namespace toolvfs {
namespace {

// Linux's own limit on symlinks followed in one resolution.
constexpr int kMaxSymlinkHops = 40;

// Temporary files of writes in progress (or of a crashed host): never
// listed or searched, and removed by a later listing once abandoned.
constexpr std::string_view kTempPrefix = ".toolvfs-tmp-";

// A write that keeps finding its file replaced by other writers gives up
// after this many rounds rather than spin.
constexpr int kMaxWriteRounds = 1000;

int64_t ToMilliseconds(const struct timespec& time) {
  return static_cast<int64_t>(time.tv_sec) * 1000 + time.tv_nsec / 1000000;
}

bool IsSpecialFile(mode_t mode) { return !S_ISREG(mode) && !S_ISDIR(mode) && !S_ISLNK(mode); }

std::string_view SpecialFileKind(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  return "a device file";
}

Status SpecialFileError(std::string_view verb, std::string_view path, mode_t mode) {
  return PermissionDeniedError("Access denied: cannot " + std::string(verb) + " " +
                               DisplayPath(path) + ": it is " + std::string(SpecialFileKind(mode)) +
                               "; FIFOs, sockets and device files are refused");
}

Status EscapeError(std::string_view path) {
  return PermissionDeniedError("Access denied: path " + DisplayPath(path) +
                               " leads outside the project root through a symlink");
}

// How one operation words its errors (store_errors.h). Messages are built
// only when an error happens: a search opens thousands of files.
struct ErrorContext {
  std::string_view verb;          // "read", "write", ...
  std::string_view path;          // the path the error is about
  std::string_view missing_noun;  // "File", "Directory" or "Path"
  // Set for a rename, whose messages name both paths.
  std::string_view rename_from, rename_to;

  // "Cannot read 'x'" or "Cannot rename 'a' to 'b'".
  std::string What() const {
    return rename_from.empty() ? CannotDo(verb, path) : CannotRename(rename_from, rename_to);
  }
  // The status for a missing `path`.
  Status Missing() const {
    if (!rename_from.empty() && path == rename_from) return RenameSourceMissingError(rename_from, rename_to);
    return MissingError(missing_noun, path);
  }
};

ErrorContext Context(std::string_view verb, std::string_view path, std::string_view missing_noun) {
  return ErrorContext{verb, path, missing_noun, {}, {}};
}

// The status for errno `error_number` in `context`.
Status PathError(int error_number, const ErrorContext& context) {
  switch (error_number) {
    case ENOENT: return context.Missing();
    case EEXIST: return AlreadyExistsError(context.What() + ": it already exists");
    case EISDIR: return IsDirectoryError(context.What() + ": it is a directory");
    case ENOTDIR: return NotDirectoryError(context.What() + ": a parent is not a directory");
    case ELOOP:
    case EXDEV: return EscapeError(context.path);
    default: return ErrnoToStatus(error_number, context.What());
  }
}

UniqueFd Duplicate(int fd) { return UniqueFd(::fcntl(fd, F_DUPFD_CLOEXEC, 0)); }

// The target of the symlink `name` in `directory` ("" with an O_PATH
// descriptor of the symlink itself).
Result<std::string> ReadLinkAt(int directory, const std::string& name, const ErrorContext& context) {
  char buffer[PATH_MAX];
  ssize_t length = ::readlinkat(directory, name.c_str(), buffer, sizeof buffer);
  if (length < 0) return PathError(errno, context);
  return std::string(buffer, static_cast<size_t>(length));
}

// Lexically normalizes an absolute path ("/a/./b/../c" -> "/a/c").
std::string NormalizeAbsolute(std::string_view path) {
  std::vector<std::string_view> segments;
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = std::min(path.find('/', start), path.size());
    std::string_view segment = path.substr(start, end - start);
    if (segment == "..") {
      if (!segments.empty()) segments.pop_back();
    } else if (!segment.empty() && segment != ".") {
      segments.push_back(segment);
    }
    start = end + 1;
  }
  std::string normalized;
  for (std::string_view segment : segments) {
    normalized += '/';
    normalized.append(segment);
  }
  return normalized.empty() ? "/" : normalized;
}

std::string RandomSuffix() {
  uint64_t value = 0;
  if (::getrandom(&value, sizeof value, 0) != sizeof value) {
    static std::atomic<uint64_t> counter{0};
    value = (static_cast<uint64_t>(::getpid()) << 32) ^ counter.fetch_add(1) ^
            static_cast<uint64_t>(reinterpret_cast<uintptr_t>(&value));
  }
  char text[17];
  snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(value));
  return text;
}

// Copies all of `source` to the current position of `destination`.
Status CopyFileContent(int source, int destination, const ErrorContext& context) {
  while (true) {
    ssize_t copied = ::copy_file_range(source, nullptr, destination, nullptr, 1 << 30, 0);
    if (copied == 0) return OkStatus();
    if (copied > 0) continue;
    if (errno == EINTR) continue;
    if (errno != EXDEV && errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP) {
      return PathError(errno, context);
    }
    break;  // Not supported here: copy through a buffer.
  }
  char buffer[65536];
  while (true) {
    ssize_t got = ::read(source, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return PathError(errno, context);
    if (got == 0) return OkStatus();
    TOOLVFS_RETURN_IF_ERROR(
        WriteFull(destination, std::string_view(buffer, static_cast<size_t>(got)), context.What()));
  }
}

// Fills `buffer` from `fd` at `offset` with pread, retrying on EINTR and
// short reads; the count read is smaller only at the end of the file.
Result<size_t> ReadAt(int fd, std::string& buffer, uint64_t offset, const ErrorContext& context) {
  size_t used = 0;
  while (used < buffer.size()) {
    ssize_t got = ::pread(fd, buffer.data() + used, buffer.size() - used,
                          static_cast<off_t>(offset + used));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return PathError(errno, context);
    if (got == 0) break;
    used += static_cast<size_t>(got);
  }
  return used;
}

// Whether a resolution follows symlinks that stay inside the root (what a
// path means), or refuses every one it would follow with Changed (acting on
// a path already resolved and judged: ProjectFiles::WithoutSymlinks).
enum class Symlinks { kFollowInside, kRefuse };

Status SymlinkInTheWayError(const ErrorContext& context, std::string_view entry_path) {
  return ChangedError(context.What() + ": " + DisplayPath(entry_path) +
                      " is a symlink where the checked path had none (the tree changed since)");
}

// Where a resolved path's final entry lives.
struct Location {
  UniqueFd parent;          // the directory holding the entry
  std::string name;         // the entry's name in `parent`; empty for the root itself
  std::string parent_path;  // project path of `parent`, symlinks resolved
};

class FsMaterializedView final : public MaterializedView {
 public:
  explicit FsMaterializedView(std::string path) : path_(std::move(path)) {}
  const std::string& path() const override { return path_; }
  Status Release() override { return OkStatus(); }  // the root itself: nothing to sync

 private:
  std::string path_;
};

class FsStore final : public ProjectFiles {
 public:
  // The store follows symlinks that stay inside the root; its
  // WithoutSymlinks() view (`symlinks` kRefuse) shares the root and the
  // options.
  FsStore(UniqueFd root, std::string root_path, const StoreOptions& options, FsResolution resolution,
          Symlinks symlinks = Symlinks::kFollowInside)
      : root_(std::move(root)),
        root_path_(std::move(root_path)),
        options_(options),
        resolve_with_openat2_(resolution == FsResolution::kAuto),
        symlinks_(symlinks) {
    if (symlinks_ == Symlinks::kFollowInside) {
      without_symlinks_.reset(
          new FsStore(Duplicate(root_.get()), root_path_, options_, resolution, Symlinks::kRefuse));
    }
  }

  ProjectFiles& WithoutSymlinks() override { return without_symlinks_ ? *without_symlinks_ : *this; }

  // A regular file opened for reading at `path` (normalized), and its size.
  struct OpenedFile {
    UniqueFd fd;
    uint64_t size;
  };
  Result<OpenedFile> OpenForRead(const std::string& path, const ErrorContext& context) {
    TOOLVFS_ASSIGN_OR_RETURN(UniqueFd fd, OpenResolved(path, O_RDONLY | O_NONBLOCK | O_NOCTTY, context, symlinks_));
    return CheckOpenedForRead(std::move(fd), path, context);
  }

  // A file opened for reading is a regular file: its size, or the error.
  Result<OpenedFile> CheckOpenedForRead(UniqueFd fd, const std::string& path, const ErrorContext& context) {
    struct stat status;
    if (::fstat(fd.get(), &status) != 0) return PathError(errno, context);
    if (S_ISDIR(status.st_mode)) return IsDirectoryActionError("read", path);
    if (!S_ISREG(status.st_mode)) return SpecialFileError("read", path, status.st_mode);
    return OpenedFile{std::move(fd), static_cast<uint64_t>(status.st_size)};
  }

  Result<std::string> Read(std::string_view raw_path) override {
    TOOLVFS_ASSIGN_OR_RETURN(std::string path, NormalizePath(raw_path));
    ErrorContext context = Context("read", path, "File");
    TOOLVFS_ASSIGN_OR_RETURN(OpenedFile file, OpenForRead(path, context));
    if (file.size > options_.max_read_bytes) {
      return ReadLimitError(path, file.size, options_.max_read_bytes);
    }
    return ReadToEnd(file.fd.get(), options_.max_read_bytes, [&] { return context.What(); }, file.size);
  }

  Result<FileRange> ReadRange(std::string_view raw_path, uint64_t offset,
                              std::optional<uint64_t> length) override {
    TOOLVFS_ASSIGN_OR_RETURN(std::string path, NormalizePath(raw_path));
    ErrorContext context = Context("read", path, "File");
    TOOLVFS_ASSIGN_OR_RETURN(OpenedFile file, OpenForRead(path, context));
    return ReadOpenedRange(file, path, offset, length, context);
  }

  Result<FileRange> ReadOpenedRange(OpenedFile& file, const std::string& path, uint64_t offset,
                                    std::optional<uint64_t> length, const ErrorContext& context) {
    UniqueFd& fd = file.fd;
    // The store's writes replace a file by a rename, so the open file is one
    // version of it: the size and the bytes read agree.
    uint64_t file_size = file.size;
    uint64_t available = offset < file_size ? file_size - offset : 0;
    uint64_t wanted = std::min(available, length.value_or(available));
    if (wanted > options_.max_read_bytes) {
      return ReadRangeLimitError(path, offset, wanted, options_.max_read_bytes);
    }
    std::string content(static_cast<size_t>(wanted), '\0');
    TOOLVFS_ASSIGN_OR_RETURN(size_t got, ReadAt(fd.get(), content, offset, context));
    content.resize(got);  // shorter only if someone truncated the file in place
    return FileRange{std::move(content), file_size};
  }

  Status Write(std::string_view raw_path, std::string_view content, WriteMode mode) override {
    return WriteContent(raw_path, NewContent{content, -1, 0}, mode);
  }

  Result<UniqueFd> OpenForStreaming(std::string_view raw_path) override {
    TOOLVFS_ASSIGN_OR_RETURN(std::string path, NormalizePath(raw_path));
    TOOLVFS_ASSIGN_OR_RETURN(OpenedFile file, OpenForRead(path, Context("read", path, "File")));
    return std::move(file.fd);
  }

  Status WriteFromDescriptor(std::string_view raw_path, int source, WriteMode mode) override {
    off_t start = ::lseek(source, 0, SEEK_CUR);
    if (start < 0) return ErrnoToStatus(errno, "Cannot write " + Quote(raw_path) + " from a descriptor");
    return WriteContent(raw_path, NewContent{{}, source, start}, mode);
  }

  // The content a write puts in place: `bytes`, or (when `source` >= 0)
  // what the descriptor `source` holds from `source_offset` on.
  struct NewContent {
    std::string_view bytes;
    int source;
    off_t source_offset;
  };

  Status WriteContent(std::string_view raw_path, const NewContent& content, WriteMode mode) {
    TOOLVFS_ASSIGN_OR_RETURN(std::string path, NormalizePath(raw_path));
    if (path.empty()) return ProjectRootError("write");
    ErrorContext context = Context("write", path, "Path");
    // create never follows a final symlink: anything at the path, a
    // dangling symlink included, means AlreadyExists.
    bool follow_final = mode != WriteMode::kCreate;
    TOOLVFS_ASSIGN_OR_RETURN(Location location, Walk(path, follow_final,
                                                     /*create_parents=*/true, context, symlinks_));
    if (location.name.empty()) return IsDirectoryActionError("write", path);
    int parent = location.parent.get();
    const char* name = location.name.c_str();
    // Writers of a file (threads of this process, other hosts, a second
    // toolvfs command) take turns on the file itself, locked for
    // the whole read-copy-rename. The lock is on the inode, which the rename
    // replaces, so a writer that waited checks that it still holds the file
    // at the path and starts again if not. A new file is created with
    // RENAME_NOREPLACE, and a writer that finds it created meanwhile starts
    // again as well: no acknowledged append is lost.
    for (int round = 1;; ++round) {
      if (round > kMaxWriteRounds) {
        return IoError(context.What() + ": it keeps being replaced by other writers");
      }
      struct stat existing;
      bool exists = ::fstatat(parent, name, &existing, AT_SYMLINK_NOFOLLOW) == 0;
      if (!exists && errno != ENOENT) return PathError(errno, context);
      UniqueFd current;  // the file being replaced, locked
      if (exists) {
        if (mode == WriteMode::kCreate) return CreateExistsError(path);
        if (S_ISDIR(existing.st_mode)) return IsDirectoryActionError("write", path);
        // The walk followed every symlink; one here was put in place since.
        if (S_ISLNK(existing.st_mode)) return EscapeError(path);
        if (!S_ISREG(existing.st_mode)) return SpecialFileError("write", path, existing.st_mode);
        current = UniqueFd(::openat(parent, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
        if (!current && (errno == ENOENT || errno == ELOOP)) continue;  // replaced since: look again
        if (!current) return PathError(errno, context);
        TOOLVFS_RETURN_IF_ERROR(LockInUse(current.get(), DisplayPath(path)));
        struct stat now;
        if (::fstat(current.get(), &existing) != 0) return PathError(errno, context);
        if (::fstatat(parent, name, &now, AT_SYMLINK_NOFOLLOW) != 0 || now.st_ino != existing.st_ino ||
            now.st_dev != existing.st_dev) {
          continue;  // replaced while we waited for the lock
        }
      }

      // New content goes to a temporary file in the same directory, which
      // then replaces the entry in one rename: readers see old or new. It
      // is locked while it exists, so that after a crash a later listing
      // can tell it from a live writer's (RemoveAbandonedTemps).
      std::string temp_name = std::string(kTempPrefix) + RandomSuffix();
      UniqueFd temp(::openat(parent, temp_name.c_str(),
                             O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0666));
      if (!temp) return PathError(errno, context);
      Status status = LockInUse(temp.get(), DisplayPath(path));
      if (status.ok()) {
        status = FillTemp(temp.get(), current.get(), exists ? &existing : nullptr, content, mode, context);
      }
      if (status.ok()) {
        int result = exists ? ::renameat(parent, temp_name.c_str(), parent, name)
                            : RenameNoReplace(parent, temp_name.c_str(), parent, name);
        if (result != 0 && errno == EEXIST && mode != WriteMode::kCreate) {
          ::unlinkat(parent, temp_name.c_str(), 0);
          continue;  // created by someone else since we looked: take turns with them
        }
        if (result != 0) {
          status = errno == EEXIST ? CreateExistsError(path) : PathError(errno, context);
        }
      }
      if (!status.ok()) ::unlinkat(parent, temp_name.c_str(), 0);
      return status;
    }
  }

  Result<bool> Exists(std::string_view raw_path) override {
    TOOLVFS_ASSIGN_OR_RETURN(std::string path, NormalizePath(raw_path));
    Result<UniqueFd> fd = OpenResolved(path, O_PATH, Context("check", path, "Path"), symlinks_);
    if (fd.ok()) return true;
    StatusCode code = fd.status().code();
    if (code == StatusCode::kNotFound || code == StatusCode::kNotDirectory) return false;
    return std::move(fd).status();
  }

  Result<std::vector<DirEntry>> ListDir(std::string_view raw_path) override {
    TOOLVFS_ASSIGN_OR_RETURN(std::string path, NormalizePath(raw_path));
    TOOLVFS_ASSIGN_OR_RETURN(UniqueFd fd, OpenDirectory(path, Context("list", path, "Directory"), symlinks_));
    std::vector<DirEntry> entries;
    TOOLVFS_RETURN_IF_ERROR(ForEachEntry(std::move(fd), path, [&](std::string_view name, EntryKind kind) {
      std::optional<std::string> link_target;
      if (kind == EntryKind::kSymlink) {
        // A symlink inside the root shows what it points to, and where;
        // one that leaves it fails to resolve and stays a symlink.
        Result<std::string> resolved = ResolvePath(JoinPath(path, name));
        if (resolved.ok()) {
          Result<EntryKind> target = ResolveKind(*resolved, Symlinks::kFollowInside);
          if (target.ok()) kind = *target;  // else dangling: a symlink
          link_target = std::move(*resolved);
        }
      }
      entries.push_back(DirEntry{std::string(name), kind, std::move(link_target)});
    }));
    std::sort(entries.begin(), entries.end(),
              [](const DirEntry& a, const DirEntry& b) { return a.name < b.name; });
    return entries;
  }

  // Where `path` lands with every symlink followed, the final one included:
  // that is where a read, an overwrite or an append acts (a dangling
  // symlink inside the root is written through, creating its target).
  // One openat2 that refuses every symlink answers the common case: when
  // it opens the path, or stops at a missing component or below a file,
  // nothing on the way was a symlink and the path is its own resolution.
  Result<std::string> ResolvePath(std::string_view raw_path) override {
    TOOLVFS_ASSIGN_OR_RETURN(std::string path, NormalizePath(raw_path));
    if (path.empty()) return path;
    UniqueFd fd = OpenIfNoSymlinkByOpenat2(path, O_PATH);
    if (fd || errno == ENOENT || errno == ENOTDIR) return path;
    return ResolveByWalk(path);  // ELOOP: a symlink; no openat2; EACCES...: the walk says
  }

  Result<FileRange> ReadAuthorized(std::string_view raw_path, std::optional<ByteRange> range,
                                   const ReadAuthorizer& authorize) override {
    TOOLVFS_ASSIGN_OR_RETURN(std::string path, NormalizePath(raw_path));
    UniqueFd fd = path.empty() ? UniqueFd() : OpenIfNoSymlinkByOpenat2(path, O_RDONLY | O_NONBLOCK | O_NOCTTY);
    // A symlink on the way, a missing file, ...: the general route, which
    // authorizes before it says anything about the path.
    if (!fd) return ProjectFiles::ReadAuthorized(path, range, authorize);
    TOOLVFS_RETURN_IF_ERROR(authorize(path));
    ErrorContext context = Context("read", path, "File");
    TOOLVFS_ASSIGN_OR_RETURN(OpenedFile file, CheckOpenedForRead(std::move(fd), path, context));
    if (range) return ReadOpenedRange(file, path, range->offset, range->length, context);
    if (file.size > options_.max_read_bytes) return ReadLimitError(path, file.size, options_.max_read_bytes);
    TOOLVFS_ASSIGN_OR_RETURN(std::string content,
                             ReadToEnd(file.fd.get(), options_.max_read_bytes,
                                       [&] { return context.What(); }, file.size));
    uint64_t size = content.size();
    return FileRange{std::move(content), size};
  }

  Result<FileMetadata> Metadata(std::string_view raw_path) override {
    TOOLVFS_ASSIGN_OR_RETURN(std::string path, NormalizePath(raw_path));
    ErrorContext context = Context("get metadata of", path, "Path");
    TOOLVFS_ASSIGN_OR_RETURN(UniqueFd fd, OpenResolved(path, O_PATH, context, symlinks_));
    struct stat status;
    if (::fstat(fd.get(), &status) != 0) return PathError(errno, context);
    if (IsSpecialFile(status.st_mode)) return SpecialFileError("get metadata of", path, status.st_mode);
    FileMetadata metadata;
    metadata.kind = S_ISDIR(status.st_mode) ? EntryKind::kDirectory : EntryKind::kFile;
    metadata.size = S_ISDIR(status.st_mode) ? 0 : static_cast<uint64_t>(status.st_size);
    metadata.modified_ms = ToMilliseconds(status.st_mtim);
    return metadata;
  }

  Status Delete(std::string_view raw_path, bool recursive) override {
    TOOLVFS_ASSIGN_OR_RETURN(std::string path, NormalizePath(raw_path));
    if (path.empty()) return ProjectRootError("delete");
    ErrorContext context = Context("delete", path, "Path");
    TOOLVFS_ASSIGN_OR_RETURN(Location location, LocateEntry(path, context, symlinks_));
    int parent = location.parent.get();
    const char* name = location.name.c_str();
    struct stat status;
    if (::fstatat(parent, name, &status, AT_SYMLINK_NOFOLLOW) != 0) return PathError(errno, context);
    if (S_ISDIR(status.st_mode)) {
      if (recursive) return RemoveTree(parent, location.name, path);
      if (::unlinkat(parent, name, AT_REMOVEDIR) == 0) return OkStatus();
      if (errno == ENOTEMPTY || errno == EEXIST) return DeleteNotEmptyError(path);
      return PathError(errno, context);
    }
    if (IsSpecialFile(status.st_mode)) return SpecialFileError("delete", path, status.st_mode);
    if (::unlinkat(parent, name, 0) != 0) return PathError(errno, context);
    return OkStatus();
  }

  Status Rename(std::string_view raw_from, std::string_view raw_to, bool overwrite) override {
    TOOLVFS_ASSIGN_OR_RETURN(std::string from, NormalizePath(raw_from));
    TOOLVFS_ASSIGN_OR_RETURN(std::string to, NormalizePath(raw_to));
    if (from.empty() || to.empty()) return RenameRootError(from, to);
    if (from != to && PathContains(from, to)) return RenameIntoItselfError(from, to);
    ErrorContext source_context{"rename", from, "Path", from, to};
    TOOLVFS_ASSIGN_OR_RETURN(Location source, LocateEntry(from, source_context, symlinks_));
    struct stat source_status;
    if (::fstatat(source.parent.get(), source.name.c_str(), &source_status, AT_SYMLINK_NOFOLLOW) != 0) {
      return PathError(errno, source_context);
    }
    if (IsSpecialFile(source_status.st_mode)) return SpecialFileError("rename", from, source_status.st_mode);
    if (from == to) return OkStatus();

    ErrorContext target_context{"rename", to, "Path", from, to};
    TOOLVFS_ASSIGN_OR_RETURN(Location target, Walk(to, /*follow_final=*/false,
                                                   /*create_parents=*/true, target_context, symlinks_));
    if (target.name.empty()) return overwrite ? RenameTargetNotEmptyError(from, to) : RenameTargetExistsError(from, to);
    struct stat target_status;
    if (::fstatat(target.parent.get(), target.name.c_str(), &target_status, AT_SYMLINK_NOFOLLOW) == 0) {
      if (!overwrite) return RenameTargetExistsError(from, to);
      if (S_ISLNK(target_status.st_mode)) TOOLVFS_RETURN_IF_ERROR(CheckSymlinkStaysInside(to, target_context));
      if (IsSpecialFile(target_status.st_mode)) return SpecialFileError("replace", to, target_status.st_mode);
      // The target holds the source: it is not empty (what rename(2) says too).
      if (PathContains(to, from)) return RenameTargetNotEmptyError(from, to);
    }
    if (S_ISLNK(source_status.st_mode)) {
      // A relative symlink means something else in its new directory: it
      // must not come to point outside (a tool working in the real
      // directory would follow it).
      TOOLVFS_ASSIGN_OR_RETURN(std::string link_text, ReadLinkAt(source.parent.get(), source.name, source_context));
      if (!link_text.empty() && link_text.front() != '/') {
        Result<Location> moved = Walk(JoinPath(target.parent_path, link_text), /*follow_final=*/true,
                                      /*create_parents=*/false, target_context, Symlinks::kFollowInside);
        if (!moved.ok() && moved.status().code() == StatusCode::kPermissionDenied) {
          return PermissionDeniedError("Access denied: " + CannotRename(from, to) + ": the symlink " +
                                       Quote(link_text) + " would point outside the project root from there");
        }
      }
    }
    int result = overwrite ? ::renameat(source.parent.get(), source.name.c_str(), target.parent.get(),
                                        target.name.c_str())
                           : RenameNoReplace(source.parent.get(), source.name.c_str(),
                                             target.parent.get(), target.name.c_str());
    if (result == 0) return OkStatus();
    switch (errno) {
      case EEXIST:
        if (!overwrite) return RenameTargetExistsError(from, to);
        return RenameTargetNotEmptyError(from, to);
      case ENOTEMPTY: return RenameTargetNotEmptyError(from, to);
      case EISDIR: return RenameTargetIsDirectoryError(from, to);
      case ENOTDIR: return RenameTargetIsFileError(from, to);
      case EINVAL: return RenameIntoItselfError(from, to);
      case EXDEV:  // not an escape here: the two paths are on different mounts
        return IoError(CannotRename(from, to) + ": they are on different file systems (a mount point)");
      default: return PathError(errno, source_context);
    }
  }

  Result<GrepResult> Grep(std::string_view pattern, const GrepOptions& options) override;

  Result<std::unique_ptr<MaterializedView>> Materialize() override {
    return std::unique_ptr<MaterializedView>(new FsMaterializedView(root_path_));
  }

  const std::string& DisplayRoot() const override { return root_path_; }

  // Opens normalized, non-empty `path` with `flags` if no symlink lies on
  // the way (openat2 RESOLVE_NO_SYMLINKS), so the path is its own
  // resolution. An empty fd otherwise, errno telling why (ELOOP: a
  // symlink; ENOSYS: no openat2 here). Unlike core's OpenWithoutSymlinks
  // it does not walk instead: the caller's own walk follows the symlinks
  // that stay inside the project.
  UniqueFd OpenIfNoSymlinkByOpenat2(const std::string& path, int flags) {
    if (!resolve_with_openat2_) {
      errno = ENOSYS;
      return UniqueFd();
    }
    return Openat2(root_.get(), path.c_str(), flags, RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
  }

  // Opens normalized `path`, following symlinks that stay inside (or, with
  // kRefuse, none: Changed), with `flags` (O_CLOEXEC is added; with
  // O_NOFOLLOW a final symlink is not followed and the open fails).
  Result<UniqueFd> OpenResolved(std::string_view path, int flags, const ErrorContext& context,
                                Symlinks symlinks) {
    if (resolve_with_openat2_) {
      const std::string path_string(path.empty() ? std::string_view(".") : path);
      uint64_t resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
      if (symlinks == Symlinks::kRefuse) resolve |= RESOLVE_NO_SYMLINKS;
      UniqueFd fd = Openat2(root_.get(), path_string.c_str(), flags, resolve);
      if (fd) return fd;
      // ENOSYS: no openat2 here. EXDEV/ELOOP: an escape, or an absolute
      // symlink inside; ENOTDIR: which component is a file? ENXIO: a socket
      // (or a device without a driver). The walk tells, in all these cases.
      if (errno != ENOSYS && errno != EXDEV && errno != ELOOP && errno != ENOTDIR && errno != ENXIO) {
        return PathError(errno, context);
      }
    }
    bool follow_final = (flags & O_NOFOLLOW) == 0;
    TOOLVFS_ASSIGN_OR_RETURN(Location location, Walk(path, follow_final,
                                                     /*create_parents=*/false, context, symlinks));
    UniqueFd fd(location.name.empty()
                    ? ::openat(location.parent.get(), ".", flags | O_CLOEXEC)
                    : ::openat(location.parent.get(), location.name.c_str(), flags | O_CLOEXEC | O_NOFOLLOW));
    if (!fd) {
      int error = errno;
      struct stat status;
      if (error == ENXIO && !location.name.empty() &&
          ::fstatat(location.parent.get(), location.name.c_str(), &status, AT_SYMLINK_NOFOLLOW) == 0 &&
          IsSpecialFile(status.st_mode)) {
        return SpecialFileError(context.verb, path, status.st_mode);
      }
      return PathError(error, context);
    }
    return fd;
  }

  // Opens normalized `path` as a directory for reading its entries.
  Result<UniqueFd> OpenDirectory(std::string_view path, const ErrorContext& context, Symlinks symlinks) {
    Result<UniqueFd> fd = OpenResolved(path, O_RDONLY | O_DIRECTORY | O_NONBLOCK, context, symlinks);
    // ENOTDIR at the last step: the path itself is a file (a file in the
    // middle of the path was named by the walk already).
    if (!fd.ok() && fd.status().message() == PathError(ENOTDIR, context).message()) {
      return ListFileError(path);
    }
    return fd;
  }

  // Kind of normalized `path` after following symlinks that stay inside
  // (with kRefuse: following none).
  Result<EntryKind> ResolveKind(std::string_view path, Symlinks symlinks) {
    ErrorContext context = Context("search", path, "Path");
    TOOLVFS_ASSIGN_OR_RETURN(UniqueFd fd, OpenResolved(path, O_PATH, context, symlinks));
    struct stat status;
    if (::fstat(fd.get(), &status) != 0) return PathError(errno, context);
    if (IsSpecialFile(status.st_mode)) return SpecialFileError("search", path, status.st_mode);
    return S_ISDIR(status.st_mode) ? EntryKind::kDirectory : EntryKind::kFile;
  }

  // Calls `visit(name, kind)` for each entry of the directory `fd`, kinds as
  // the entries are (a symlink is kSymlink); special files and the
  // temporary files of writes are left out, and those of writes that a
  // dead process left are removed.
  template <typename Visitor>
  Status ForEachEntry(UniqueFd fd, std::string_view path, Visitor&& visit) {
    int raw = fd.get();
    DIR* directory = ::fdopendir(raw);
    if (directory == nullptr) return ErrnoToStatus(errno, CannotDo("list", path));
    fd.release();  // now owned by `directory`
    std::vector<std::string> temps;
    errno = 0;
    while (struct dirent* entry = ::readdir(directory)) {
      std::string_view name = entry->d_name;
      if (name == "." || name == "..") continue;
      if (name.starts_with(kTempPrefix)) {
        temps.emplace_back(name);
        continue;
      }
      unsigned char type = entry->d_type;
      if (type == DT_UNKNOWN) {
        struct stat status;
        if (::fstatat(raw, entry->d_name, &status, AT_SYMLINK_NOFOLLOW) != 0) continue;
        type = S_ISDIR(status.st_mode) ? DT_DIR : S_ISREG(status.st_mode) ? DT_REG
               : S_ISLNK(status.st_mode) ? DT_LNK : DT_FIFO;
      }
      if (type == DT_DIR) visit(name, EntryKind::kDirectory);
      else if (type == DT_REG) visit(name, EntryKind::kFile);
      else if (type == DT_LNK) visit(name, EntryKind::kSymlink);
      errno = 0;
    }
    int error = errno;
    for (const std::string& temp : temps) {
      if (IsAbandoned(raw, temp.c_str())) ::unlinkat(raw, temp.c_str(), 0);
    }
    ::closedir(directory);
    if (error != 0) return ErrnoToStatus(error, CannotDo("list", path));
    return OkStatus();
  }

  // Opens the regular file at normalized `path` for the grep engine
  // (GrepTree::OpenFile), whatever its size; `follow_final` is about the
  // file itself, `symlinks` about the whole path.
  Result<std::unique_ptr<GrepFileReader>> OpenForGrep(std::string_view path, bool follow_final,
                                                      Symlinks symlinks);

 private:
  // Resolves normalized `path` component by component (see the file
  // comment). Symlinks before the final component are followed when they
  // stay inside and are an access denial when they leave; the final one is
  // followed only with `follow_final`; with kRefuse, a symlink that would
  // be followed fails with Changed instead. With `create_parents`, missing
  // directories on the way are created. The final entry need not exist.
  Result<Location> Walk(std::string_view path, bool follow_final, bool create_parents,
                        const ErrorContext& context, Symlinks symlinks) {
    std::vector<UniqueFd> chain;     // chain[0] is the root; then each directory entered
    std::vector<std::string> names;  // project path of chain[i + 1], for messages
    chain.push_back(Duplicate(root_.get()));
    if (!chain.back()) return PathError(errno, context);
    std::vector<std::string> pending;  // components still to resolve, next at the back
    PushComponents(path, pending);
    int hops = 0;
    // The directory last created (its depth and name) and how often: a
    // bound against a racer deleting it. The depth tells "a/a/a" apart.
    std::pair<size_t, std::string> last_created;
    int retries_of_last_created = 0;
    while (!pending.empty()) {
      std::string name = std::move(pending.back());
      pending.pop_back();
      if (name.empty() || name == ".") continue;
      if (name == "..") {
        if (chain.size() == 1) return EscapeError(path);
        chain.pop_back();
        names.pop_back();
        continue;
      }
      bool is_final = pending.empty();
      int directory = chain.back().get();
      UniqueFd entry(::openat(directory, name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
      if (!entry) {
        if (errno == ENOENT && is_final) {
          return Location{std::move(chain.back()), std::move(name), names.empty() ? "" : names.back()};
        }
        if (errno == ENOENT && create_parents) {
          // Someone may delete what we create before we open it; give up
          // after a few rounds on the same directory rather than spin.
          std::pair<size_t, std::string> created{chain.size(), name};
          retries_of_last_created = created == last_created ? retries_of_last_created + 1 : 0;
          last_created = std::move(created);
          if (retries_of_last_created > 10) {
            return IoError(context.What() + ": directory " + Quote(name) + " keeps disappearing");
          }
          if (::mkdirat(directory, name.c_str(), 0777) != 0 && errno != EEXIST) {
            return PathError(errno, context);
          }
          pending.push_back(std::move(name));  // open what we (or a racer) made
          continue;
        }
        return PathError(errno, context);
      }
      struct stat status;
      if (::fstat(entry.get(), &status) != 0) return PathError(errno, context);
      std::string entry_path = JoinPath(names.empty() ? std::string_view() : names.back(), name);
      if (S_ISLNK(status.st_mode) && (!is_final || follow_final)) {
        if (symlinks == Symlinks::kRefuse) return SymlinkInTheWayError(context, entry_path);
        bool from_root = false;
        TOOLVFS_RETURN_IF_ERROR(QueueSymlinkTarget(entry, path, context, hops, pending, from_root));
        if (from_root) {
          chain.resize(1);
          names.clear();
        }
        continue;
      }
      if (is_final) return Location{std::move(chain.back()), std::move(name), names.empty() ? "" : names.back()};
      if (!S_ISDIR(status.st_mode)) return ParentIsFileError(context.What(), entry_path);
      chain.push_back(std::move(entry));
      names.push_back(std::move(entry_path));
    }
    // Resolved to a directory without a final name: the root, or a path
    // ending in ".." or "." inside a symlink's target. Its parent is the
    // previous descriptor; its name is the last resolved segment.
    if (chain.size() == 1) return Location{std::move(chain.back()), "", ""};
    return Location{std::move(chain[chain.size() - 2]), std::string(BaseName(names.back())),
                    names.size() >= 2 ? names[names.size() - 2] : ""};
  }

  // Queues the target of the symlink `link` (opened O_PATH|O_NOFOLLOW) for
  // resolution: a relative target continues from the link's directory; an
  // absolute one, acceptable only if it names a place inside the root,
  // continues from the root (`from_root` set: the caller drops what it
  // entered). Counts `hops` against Linux's limit.
  Status QueueSymlinkTarget(const UniqueFd& link, std::string_view path, const ErrorContext& context,
                            int& hops, std::vector<std::string>& pending, bool& from_root) {
    if (++hops > kMaxSymlinkHops) {
      return InvalidArgumentError(context.What() + ": too many levels of symbolic links");
    }
    TOOLVFS_ASSIGN_OR_RETURN(std::string target, ReadLinkAt(link.get(), "", context));
    from_root = !target.empty() && target.front() == '/';
    if (!from_root) {
      PushComponents(target, pending);
      return OkStatus();
    }
    std::string absolute = NormalizeAbsolute(target);
    std::string_view root = root_path_ == "/" ? std::string_view() : std::string_view(root_path_);
    if (!PathContains(root, absolute)) return EscapeError(path);
    PushComponents(std::string_view(absolute).substr(root.size()), pending);
    return OkStatus();
  }

  // ResolvePath's walk: Walk's rules (symlinks followed while they stay
  // inside, the final one too), but it keeps the resolved path rather than
  // descriptors to act on, and a component that does not exist (or lies
  // below a file) ends the lookups: the rest is appended as written, which
  // is where a write would create it.
  Result<std::string> ResolveByWalk(const std::string& path) {
    ErrorContext context = Context("access", path, "Path");
    std::vector<UniqueFd> chain;          // chain[0] is the root; then each directory entered
    std::vector<std::string> segments;    // the resolved path; those past chain.size() - 1 are missing
    chain.push_back(Duplicate(root_.get()));
    if (!chain.back()) return PathError(errno, context);
    std::vector<std::string> pending;  // components still to resolve, next at the back
    PushComponents(path, pending);
    int hops = 0;
    while (!pending.empty()) {
      std::string name = std::move(pending.back());
      pending.pop_back();
      if (name.empty() || name == ".") continue;
      bool in_existing_directory = segments.size() + 1 == chain.size();
      if (name == "..") {
        if (segments.empty()) return EscapeError(path);
        if (in_existing_directory) chain.pop_back();
        segments.pop_back();
        continue;
      }
      if (!in_existing_directory) {
        segments.push_back(std::move(name));
        continue;
      }
      UniqueFd entry(::openat(chain.back().get(), name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
      if (!entry) {
        if (errno != ENOENT) return PathError(errno, context);
        segments.push_back(std::move(name));
        continue;
      }
      struct stat status;
      if (::fstat(entry.get(), &status) != 0) return PathError(errno, context);
      if (S_ISLNK(status.st_mode)) {
        bool from_root = false;
        TOOLVFS_RETURN_IF_ERROR(QueueSymlinkTarget(entry, path, context, hops, pending, from_root));
        if (from_root) {
          chain.resize(1);
          segments.clear();
        }
        continue;
      }
      // Below a file nothing exists either; the operation itself will say
      // that a parent is a file.
      if (S_ISDIR(status.st_mode)) chain.push_back(std::move(entry));
      segments.push_back(std::move(name));
    }
    std::string resolved;
    for (const std::string& segment : segments) resolved = JoinPath(resolved, segment);
    return resolved;
  }

  static void PushComponents(std::string_view path, std::vector<std::string>& pending) {
    std::vector<std::string> components;
    size_t start = 0;
    while (start <= path.size()) {
      size_t end = std::min(path.find('/', start), path.size());
      if (end > start) components.emplace_back(path.substr(start, end - start));
      start = end + 1;
    }
    pending.insert(pending.end(), components.rbegin(), components.rend());
  }

  // The parent directory and name of normalized `path`'s own entry (a final
  // symlink is not followed), after checking that a final symlink does not
  // lead outside: operations on escaping symlinks are denied outright.
  Result<Location> LocateEntry(std::string_view path, const ErrorContext& context, Symlinks symlinks) {
    TOOLVFS_ASSIGN_OR_RETURN(Location location, Walk(path, /*follow_final=*/false,
                                                     /*create_parents=*/false, context, symlinks));
    struct stat status;
    if (location.name.empty()) return location;
    if (::fstatat(location.parent.get(), location.name.c_str(), &status, AT_SYMLINK_NOFOLLOW) != 0) {
      return PathError(errno, context);
    }
    if (S_ISLNK(status.st_mode)) TOOLVFS_RETURN_IF_ERROR(CheckSymlinkStaysInside(path, context));
    return location;
  }

  // PermissionDenied if following the symlink at `path` leaves the root; a
  // dangling symlink that stays inside is fine.
  Status CheckSymlinkStaysInside(std::string_view path, const ErrorContext& context) {
    Result<Location> followed = Walk(path, /*follow_final=*/true, /*create_parents=*/false, context,
                                     Symlinks::kFollowInside);
    if (followed.ok() || followed.status().code() != StatusCode::kPermissionDenied) return OkStatus();
    return std::move(followed).status();
  }

  // Writes the new content of a file to `temp`: after `current`'s (the file
  // replaced, open at its start; -1 for a new file) for an append. Keeps
  // `existing`'s owner and permission bits.
  Status FillTemp(int temp, int current, const struct stat* existing, const NewContent& content,
                  WriteMode mode, const ErrorContext& context) {
    if (current >= 0 && mode == WriteMode::kAppend) {
      TOOLVFS_RETURN_IF_ERROR(CopyFileContent(current, temp, context));
    }
    if (content.source >= 0) {
      // From the same offset in every round: an earlier round that had to
      // start over has consumed the descriptor already.
      if (::lseek(content.source, content.source_offset, SEEK_SET) < 0) return PathError(errno, context);
      TOOLVFS_RETURN_IF_ERROR(CopyFileContent(content.source, temp, context));
    } else {
      TOOLVFS_RETURN_IF_ERROR(WriteFull(temp, content.bytes, context.What()));
    }
    if (existing != nullptr) {
      // Keep the owner too when we may; an unprivileged writer cannot, and
      // the file then belongs to the writer, as with any editor's save.
      // chown first: it clears setuid/setgid, which fchmod then restores.
      if (::geteuid() == 0) (void)!::fchown(temp, existing->st_uid, existing->st_gid);
      if (::fchmod(temp, existing->st_mode & 07777) != 0) return PathError(errno, context);
    }
    if (options_.sync_writes && ::fdatasync(temp) != 0) return PathError(errno, context);
    return OkStatus();
  }

  static int RenameNoReplace(int from_dir, const char* from, int to_dir, const char* to) {
    int result = ::renameat2(from_dir, from, to_dir, to, RENAME_NOREPLACE);
    if (result != 0 && errno == EINVAL) {
      // A file system without RENAME_NOREPLACE: check, then rename.
      struct stat status;
      if (::fstatat(to_dir, to, &status, AT_SYMLINK_NOFOLLOW) == 0) {
        errno = EEXIST;
        return -1;
      }
      result = ::renameat(from_dir, from, to_dir, to);
    }
    return result;
  }

  // Deletes the directory `name` in `parent` and everything in it, special
  // files included, without following any symlink.
  Status RemoveTree(int parent, const std::string& name, std::string_view path) {
    UniqueFd directory(::openat(parent, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!directory) return PathError(errno, Context("delete", path, "Path"));
    DIR* stream = ::fdopendir(::fcntl(directory.get(), F_DUPFD_CLOEXEC, 0));
    if (stream == nullptr) return ErrnoToStatus(errno, CannotDo("delete", path));
    std::vector<std::pair<std::string, bool>> children;  // name, is a directory
    while (struct dirent* entry = ::readdir(stream)) {
      std::string_view child = entry->d_name;
      if (child == "." || child == "..") continue;
      bool is_directory = entry->d_type == DT_DIR;
      struct stat status;
      if (entry->d_type == DT_UNKNOWN &&
          ::fstatat(directory.get(), entry->d_name, &status, AT_SYMLINK_NOFOLLOW) == 0) {
        is_directory = S_ISDIR(status.st_mode);
      }
      children.emplace_back(child, is_directory);
    }
    ::closedir(stream);
    for (auto& [child, is_directory] : children) {
      std::string child_path = JoinPath(path, child);
      if (is_directory) {
        TOOLVFS_RETURN_IF_ERROR(RemoveTree(directory.get(), child, child_path));
      } else if (::unlinkat(directory.get(), child.c_str(), 0) != 0 && errno != ENOENT) {
        return PathError(errno, Context("delete", child_path, "Path"));
      }
    }
    if (::unlinkat(parent, name.c_str(), AT_REMOVEDIR) != 0) {
      return PathError(errno, Context("delete", path, "Path"));
    }
    return OkStatus();
  }

  UniqueFd root_;
  std::string root_path_;  // absolute, symlinks resolved; for display and absolute symlinks
  StoreOptions options_;
  // kAuto: openat2 first (core's Openat2 says once it is not usable in
  // this process); kWalk: the component walk only (tests cover both).
  const bool resolve_with_openat2_;
  const Symlinks symlinks_;  // how the public operations resolve their paths
  std::unique_ptr<FsStore> without_symlinks_;  // the kRefuse view; null in that view itself
};

// Named paths of a search that are symlinks, or lie below one, and where
// they lead. The engine names a file by the path it reached it through; a
// policy must judge, and the store open, where the file really is.
class LinkedPaths {
 public:
  void Add(std::string named, std::string resolved) {
    linked_.emplace_back(std::move(named), std::move(resolved));
    // The most specific named path wins: "a" and "a/link" may both be named.
    std::sort(linked_.begin(), linked_.end(),
              [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
  }

  // Where normalized `path`, reached through a named path, really is.
  std::string Translate(std::string_view path) const {
    for (const auto& [named, resolved] : linked_) {
      if (!PathContains(named, path)) continue;
      std::string_view below = path.substr(named.size());  // "" or "/rest" (named is never the root)
      if (!below.empty()) below.remove_prefix(1);
      return below.empty() ? resolved : JoinPath(resolved, below);
    }
    return std::string(path);
  }

 private:
  std::vector<std::pair<std::string, std::string>> linked_;  // named, resolved
};

// The grep engine's view of an fs store. With kRefuse (a search whose files
// a policy judges), every path is first translated to where it really is
// and then opened following no symlink at all, so the file the filter
// judged (translated alike) is the file read: a directory or file swapped
// for a symlink during the search is skipped, never followed.
class FsGrepTree final : public GrepTree {
 public:
  FsGrepTree(FsStore& store, Symlinks symlinks, const LinkedPaths& linked)
      : store_(store), symlinks_(symlinks), linked_(linked) {}

  Result<std::vector<Entry>> List(std::string_view path) override {
    std::string real = linked_.Translate(path);
    TOOLVFS_ASSIGN_OR_RETURN(UniqueFd fd,
                             store_.OpenDirectory(real, Context("search", real, "Directory"), symlinks_));
    std::vector<Entry> entries;
    TOOLVFS_RETURN_IF_ERROR(store_.ForEachEntry(std::move(fd), real, [&](std::string_view name, EntryKind kind) {
      entries.push_back(Entry{std::string(name), kind, {}});
    }));
    return entries;
  }

  Result<EntryKind> Resolve(std::string_view path) override {
    return store_.ResolveKind(linked_.Translate(path), symlinks_);
  }

  Result<File> OpenFile(std::string_view path, bool follow_symlinks) override {
    TOOLVFS_ASSIGN_OR_RETURN(std::unique_ptr<GrepFileReader> reader,
                             store_.OpenForGrep(linked_.Translate(path), follow_symlinks, symlinks_));
    return File{std::move(reader), {}};
  }

 private:
  FsStore& store_;
  const Symlinks symlinks_;
  const LinkedPaths& linked_;
};

// Reads a regular file for the grep engine.
class FsGrepFileReader final : public GrepFileReader {
 public:
  FsGrepFileReader(UniqueFd fd, std::string_view path, uint64_t size)
      : fd_(std::move(fd)), path_(path), size_(size) {}

  Result<size_t> Read(char* data, size_t size) override {
    if (at_end_) return size_t{0};
    ssize_t got;
    do {
      got = ::read(fd_.get(), data, size);
    } while (got < 0 && errno == EINTR);
    if (got < 0) return PathError(errno, Context("search", path_, "File"));
    offset_ += static_cast<uint64_t>(got);
    // A short read that stops exactly at the size fstat saw is the end:
    // this spares the read that would return 0, 5-10% of the time of a
    // search over many small files. A file that grew or shrank since, or
    // whose size fstat does not tell (/proc), is read until a read
    // returns 0.
    at_end_ = static_cast<size_t>(got) < size && offset_ == size_;
    return static_cast<size_t>(got);
  }

 private:
  UniqueFd fd_;
  std::string path_;  // for error messages
  uint64_t size_;     // as fstat saw it on opening
  uint64_t offset_ = 0;
  bool at_end_ = false;
};

Result<std::unique_ptr<GrepFileReader>> FsStore::OpenForGrep(std::string_view path, bool follow_final,
                                                             Symlinks symlinks) {
  ErrorContext context = Context("search", path, "File");
  int flags = O_RDONLY | O_NONBLOCK | O_NOCTTY | (follow_final ? 0 : O_NOFOLLOW);
  TOOLVFS_ASSIGN_OR_RETURN(UniqueFd fd, OpenResolved(path, flags, context, symlinks));
  struct stat status;
  if (::fstat(fd.get(), &status) != 0) return PathError(errno, context);
  if (!S_ISREG(status.st_mode)) return SpecialFileError("search", path, status.st_mode);
  return std::unique_ptr<GrepFileReader>(
      new FsGrepFileReader(std::move(fd), path, static_cast<uint64_t>(status.st_size)));
}

Result<GrepResult> FsStore::Grep(std::string_view pattern, const GrepOptions& options) {
  LinkedPaths linked;
  if (!options.file_filter) {
    FsGrepTree tree(*this, symlinks_, linked);
    return RunGrep(tree, pattern, options);
  }
  // A policy judges each file (the filter): the named paths are resolved
  // once, and the search reads exactly where the filter looked.
  for (const std::string& named : options.paths) {
    Result<std::string> normalized = NormalizePath(named);
    if (!normalized.ok()) continue;  // RunGrep reports it
    Result<std::string> resolved = ResolvePath(*normalized);
    if (resolved.ok() && *resolved != *normalized) linked.Add(*normalized, *resolved);
  }
  FsGrepTree tree(*this, Symlinks::kRefuse, linked);
  GrepOptions judged = options;
  judged.file_filter = [&options, &linked](std::string_view path) {
    return options.file_filter(linked.Translate(path));
  };
  return RunGrep(tree, pattern, judged);
}

}  // namespace

Result<std::unique_ptr<ProjectFiles>> OpenFsStore(std::string_view root, const StoreOptions& options,
                                                  FsResolution resolution) {
  if (root.empty()) return InvalidArgumentError("Invalid project '': the directory path is empty");
  std::string root_string(root);
  if (root_string.find('\0') != std::string::npos) {
    return InvalidArgumentError("Invalid project " + Quote(root) + ": contains a NUL byte");
  }
  UniqueFd fd(::open(root_string.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!fd) {
    int error = errno;
    if (error == ENOENT) return NotFoundError("Project directory " + Quote(root) + " does not exist");
    if (error == ENOTDIR) return NotDirectoryError("Project " + Quote(root) + " is not a directory");
    return ErrnoToStatus(error, "Cannot open project directory " + Quote(root));
  }
  char resolved[PATH_MAX];
  std::string proc_path = "/proc/self/fd/" + std::to_string(fd.get());
  ssize_t length = ::readlink(proc_path.c_str(), resolved, sizeof resolved - 1);
  std::string root_path;
  if (length > 0) {
    root_path.assign(resolved, static_cast<size_t>(length));
  } else if (::realpath(root_string.c_str(), resolved) != nullptr) {
    root_path = resolved;  // no /proc: the path as it resolves now
  } else {
    return ErrnoToStatus(errno, "Cannot resolve project directory " + Quote(root));
  }
  return std::unique_ptr<ProjectFiles>(new FsStore(std::move(fd), std::move(root_path), options, resolution));
}

}  // namespace toolvfs
