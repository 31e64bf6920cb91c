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

#include "core/io.h"
#include "core/text.h"
#include "core/unique_fd.h"
#include "project/grep.h"
#include "project/path.h"

namespace toolvfs {
namespace {

// Linux's own limit on symlinks followed in one resolution.
constexpr int kMaxSymlinkHops = 40;

constexpr std::string_view kTempPrefix = ".toolvfs-tmp-";

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

// "Cannot <verb> '<path>': <reason>" with our wording for the common errors.
Status PathError(int error_number, std::string_view verb, std::string_view path) {
  std::string what = "Cannot " + std::string(verb) + " " + DisplayPath(path);
  switch (error_number) {
    case ENOENT: return NotFoundError(what + ": no such file or directory");
    case EEXIST: return AlreadyExistsError(what + ": it already exists");
    case EISDIR: return IsDirectoryError(what + ": it is a directory");
    case ENOTDIR: return NotDirectoryError(what + ": a parent is not a directory");
    case ENOTEMPTY:
      return NotEmptyError(what + ": the directory is not empty");
    case ELOOP:
    case EXDEV: return EscapeError(path);
    default: return ErrnoToStatus(error_number, what);
  }
}

UniqueFd Duplicate(int fd) { return UniqueFd(::fcntl(fd, F_DUPFD_CLOEXEC, 0)); }

Result<std::string> ReadLink(int symlink_fd, std::string_view path) {
  char buffer[PATH_MAX];
  ssize_t length = ::readlinkat(symlink_fd, "", buffer, sizeof buffer);
  if (length < 0) return PathError(errno, "read the symlink", path);
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
Status CopyFileContent(int source, int destination, std::string_view path) {
  while (true) {
    ssize_t copied = ::copy_file_range(source, nullptr, destination, nullptr, 1 << 30, 0);
    if (copied == 0) return OkStatus();
    if (copied > 0) continue;
    if (errno == EINTR) continue;
    if (errno != EXDEV && errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP) {
      return PathError(errno, "append to", path);
    }
    break;  // Not supported here: copy through a buffer.
  }
  char buffer[65536];
  while (true) {
    ssize_t got = ::read(source, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return PathError(errno, "append to", path);
    if (got == 0) return OkStatus();
    TOOLVFS_RETURN_IF_ERROR(WriteFull(destination, std::string_view(buffer, static_cast<size_t>(got)),
                                      "Cannot append to " + DisplayPath(path)));
  }
}

// Where a resolved path's final entry lives.
struct Location {
  UniqueFd parent;   // the directory holding the entry
  std::string name;  // the entry's name in `parent`; empty for the root itself
};

class FsStore;

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
  FsStore(UniqueFd root, std::string root_path, const StoreOptions& options,
          FsResolution resolution)
      : root_(std::move(root)),
        root_path_(std::move(root_path)),
        options_(options),
        use_openat2_(resolution == FsResolution::kAuto) {}

  Result<std::string> Read(std::string_view raw_path) override {
    TOOLVFS_ASSIGN_OR_RETURN(std::string path, NormalizePath(raw_path));
    TOOLVFS_ASSIGN_OR_RETURN(UniqueFd fd, OpenResolved(path, O_RDONLY | O_NONBLOCK | O_NOCTTY, "read"));
    struct stat status;
    if (::fstat(fd.get(), &status) != 0) return PathError(errno, "read", path);
    if (S_ISDIR(status.st_mode)) return PathError(EISDIR, "read", path);
    if (!S_ISREG(status.st_mode)) return SpecialFileError("read", path, status.st_mode);
    std::string what = "Cannot read " + DisplayPath(path);
    if (static_cast<uint64_t>(status.st_size) > options_.max_read_bytes) {
      return TooLargeError(what + ": " + FormatBytes(static_cast<uint64_t>(status.st_size)) +
                           " is larger than the read limit of " + FormatBytes(options_.max_read_bytes));
    }
    return ReadToEnd(fd.get(), options_.max_read_bytes, what, static_cast<uint64_t>(status.st_size));
  }

  Status Write(std::string_view raw_path, std::string_view content, WriteMode mode) override {
    TOOLVFS_ASSIGN_OR_RETURN(std::string path, NormalizePath(raw_path));
    if (path.empty()) return InvalidArgumentError("Cannot write '.': it is the project root");
    TOOLVFS_ASSIGN_OR_RETURN(Location location, Walk(path, /*follow_final=*/true,
                                                     /*create_parents=*/true, "write"));
    if (location.name.empty()) return PathError(EISDIR, "write", path);
    int parent = location.parent.get();
    const char* name = location.name.c_str();

    struct stat existing;
    bool exists = ::fstatat(parent, name, &existing, AT_SYMLINK_NOFOLLOW) == 0;
    if (!exists && errno != ENOENT) return PathError(errno, "write", path);
    if (exists) {
      if (S_ISDIR(existing.st_mode)) return PathError(EISDIR, "write", path);
      // The walk followed every symlink; one here was put in place since.
      if (S_ISLNK(existing.st_mode)) return PathError(ELOOP, "write", path);
      if (!S_ISREG(existing.st_mode)) return SpecialFileError("write", path, existing.st_mode);
      if (mode == WriteMode::kCreate) return PathError(EEXIST, "create", path);
    }

    // New content goes to a temporary file in the same directory, which
    // then replaces the entry in one rename: readers see old or new.
    std::string temp_name = std::string(kTempPrefix) + RandomSuffix();
    UniqueFd temp(::openat(parent, temp_name.c_str(),
                           O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0666));
    if (!temp) return PathError(errno, "write", path);
    Status status = FillTemp(temp.get(), parent, name, exists ? &existing : nullptr, content,
                             mode, path);
    if (status.ok()) {
      int result = mode == WriteMode::kCreate || !exists
                       ? RenameNoReplace(parent, temp_name.c_str(), parent, name)
                       : ::renameat(parent, temp_name.c_str(), parent, name);
      if (result != 0) {
        status = errno == EEXIST && mode != WriteMode::kCreate
                     // Someone created the file since we looked: last writer wins.
                     ? (::renameat(parent, temp_name.c_str(), parent, name) == 0
                            ? OkStatus()
                            : PathError(errno, "write", path))
                     : PathError(errno, mode == WriteMode::kCreate ? "create" : "write", path);
      }
    }
    if (!status.ok()) ::unlinkat(parent, temp_name.c_str(), 0);
    return status;
  }

  Result<bool> Exists(std::string_view raw_path) override {
    TOOLVFS_ASSIGN_OR_RETURN(std::string path, NormalizePath(raw_path));
    Result<UniqueFd> fd = OpenResolved(path, O_PATH, "check");
    if (fd.ok()) return true;
    StatusCode code = fd.status().code();
    if (code == StatusCode::kNotFound || code == StatusCode::kNotDirectory) return false;
    return std::move(fd).status();
  }

  Result<std::vector<DirEntry>> ListDir(std::string_view raw_path) override {
    TOOLVFS_ASSIGN_OR_RETURN(std::string path, NormalizePath(raw_path));
    TOOLVFS_ASSIGN_OR_RETURN(UniqueFd fd, OpenDirectory(path, "list"));
    std::vector<DirEntry> entries;
    TOOLVFS_RETURN_IF_ERROR(ForEachEntry(std::move(fd), path, [&](std::string_view name, EntryKind kind) {
      if (kind == EntryKind::kSymlink) {
        // A symlink inside the root shows what it points to.
        Result<EntryKind> target = ResolveKind(JoinPath(path, name));
        if (target.ok()) kind = *target;
      }
      entries.push_back(DirEntry{std::string(name), kind});
    }));
    std::sort(entries.begin(), entries.end(),
              [](const DirEntry& a, const DirEntry& b) { return a.name < b.name; });
    return entries;
  }

  Result<FileMetadata> Metadata(std::string_view raw_path) override {
    TOOLVFS_ASSIGN_OR_RETURN(std::string path, NormalizePath(raw_path));
    TOOLVFS_ASSIGN_OR_RETURN(UniqueFd fd, OpenResolved(path, O_PATH, "get metadata of"));
    struct stat status;
    if (::fstat(fd.get(), &status) != 0) return PathError(errno, "get metadata of", path);
    if (IsSpecialFile(status.st_mode)) return SpecialFileError("get metadata of", path, status.st_mode);
    FileMetadata metadata;
    metadata.kind = S_ISDIR(status.st_mode) ? EntryKind::kDirectory : EntryKind::kFile;
    metadata.size = S_ISDIR(status.st_mode) ? 0 : static_cast<uint64_t>(status.st_size);
    metadata.modified_ms = ToMilliseconds(status.st_mtim);
    return metadata;
  }

  Status Delete(std::string_view raw_path, bool recursive) override {
    TOOLVFS_ASSIGN_OR_RETURN(std::string path, NormalizePath(raw_path));
    if (path.empty()) return InvalidArgumentError("Cannot delete '.': it is the project root");
    TOOLVFS_ASSIGN_OR_RETURN(Location location, LocateEntry(path, "delete"));
    int parent = location.parent.get();
    const char* name = location.name.c_str();
    struct stat status;
    if (::fstatat(parent, name, &status, AT_SYMLINK_NOFOLLOW) != 0) return PathError(errno, "delete", path);
    if (S_ISDIR(status.st_mode)) {
      if (recursive) return RemoveTree(parent, location.name, path);
      if (::unlinkat(parent, name, AT_REMOVEDIR) == 0) return OkStatus();
      if (errno == ENOTEMPTY || errno == EEXIST) {
        return NotEmptyError("Cannot delete " + DisplayPath(path) +
                             ": the directory is not empty (pass recursive to delete it with its contents)");
      }
      return PathError(errno, "delete", path);
    }
    if (IsSpecialFile(status.st_mode)) return SpecialFileError("delete", path, status.st_mode);
    if (::unlinkat(parent, name, 0) != 0) return PathError(errno, "delete", path);
    return OkStatus();
  }

  Status Rename(std::string_view raw_from, std::string_view raw_to, bool overwrite) override {
    TOOLVFS_ASSIGN_OR_RETURN(std::string from, NormalizePath(raw_from));
    TOOLVFS_ASSIGN_OR_RETURN(std::string to, NormalizePath(raw_to));
    if (from.empty() || to.empty()) {
      return InvalidArgumentError("Cannot rename " + DisplayPath(from) + " to " + DisplayPath(to) +
                                  ": the project root cannot be moved or replaced");
    }
    TOOLVFS_ASSIGN_OR_RETURN(Location source, LocateEntry(from, "rename"));
    struct stat source_status;
    if (::fstatat(source.parent.get(), source.name.c_str(), &source_status, AT_SYMLINK_NOFOLLOW) != 0) {
      return PathError(errno, "rename", from);
    }
    if (IsSpecialFile(source_status.st_mode)) return SpecialFileError("rename", from, source_status.st_mode);
    if (from == to) return OkStatus();
    if (PathContains(from, to)) {
      return InvalidArgumentError("Cannot rename " + DisplayPath(from) + " to " + DisplayPath(to) +
                                  ": a directory cannot move inside itself");
    }
    TOOLVFS_ASSIGN_OR_RETURN(Location target, Walk(to, /*follow_final=*/false,
                                                   /*create_parents=*/true, "rename to"));
    if (target.name.empty()) return PathError(EEXIST, "rename to", to);
    struct stat target_status;
    if (::fstatat(target.parent.get(), target.name.c_str(), &target_status, AT_SYMLINK_NOFOLLOW) == 0) {
      if (S_ISLNK(target_status.st_mode)) TOOLVFS_RETURN_IF_ERROR(CheckSymlinkStaysInside(to, "rename to"));
      if (IsSpecialFile(target_status.st_mode)) return SpecialFileError("replace", to, target_status.st_mode);
    }
    std::string what = "Cannot rename " + DisplayPath(from) + " to " + DisplayPath(to);
    if (!overwrite) {
      if (RenameNoReplace(source.parent.get(), source.name.c_str(), target.parent.get(),
                          target.name.c_str()) == 0) {
        return OkStatus();
      }
      if (errno == EEXIST) return AlreadyExistsError(what + ": the target already exists (pass overwrite to replace it)");
      return RenameError(errno, what);
    }
    if (::renameat(source.parent.get(), source.name.c_str(), target.parent.get(), target.name.c_str()) == 0) {
      return OkStatus();
    }
    return RenameError(errno, what);
  }

  Result<GrepResult> Grep(std::string_view pattern, const GrepOptions& options) override;

  Result<std::unique_ptr<MaterializedView>> Materialize() override {
    return std::unique_ptr<MaterializedView>(new FsMaterializedView(root_path_));
  }

  const std::string& DisplayRoot() const override { return root_path_; }

  // Opens normalized `path`, following symlinks that stay inside, with
  // `flags` (O_CLOEXEC is added). `verb` words the error message.
  Result<UniqueFd> OpenResolved(std::string_view path, int flags, std::string_view verb) {
    if (use_openat2_.load(std::memory_order_relaxed)) {
      for (int attempt = 0; attempt < 3; ++attempt) {
        struct open_how how = {};
        how.flags = static_cast<uint64_t>(flags | O_CLOEXEC);
        how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
        std::string path_string(path.empty() ? std::string_view(".") : path);
        long fd = ::syscall(SYS_openat2, root_.get(), path_string.c_str(), &how, sizeof how);
        if (fd >= 0) return UniqueFd(static_cast<int>(fd));
        if (errno == ENOSYS || errno == EPERM /* seccomp without openat2 */) {
          use_openat2_.store(false, std::memory_order_relaxed);
          break;
        }
        if (errno == EAGAIN || errno == EINTR) continue;  // a concurrent rename: retry
        if (errno != EXDEV && errno != ELOOP) return PathError(errno, verb, path);
        break;  // refused: the walk tells an escape from an absolute symlink inside
      }
    }
    // O_NOFOLLOW asks for the entry itself: the walk must not follow it either.
    bool follow_final = (flags & O_NOFOLLOW) == 0;
    TOOLVFS_ASSIGN_OR_RETURN(Location location, Walk(path, follow_final,
                                                     /*create_parents=*/false, verb));
    UniqueFd fd(location.name.empty()
                    ? ::openat(location.parent.get(), ".", flags | O_CLOEXEC)
                    : ::openat(location.parent.get(), location.name.c_str(), flags | O_CLOEXEC | O_NOFOLLOW));
    if (!fd) return PathError(errno, verb, path);
    return fd;
  }

  // Opens normalized `path` as a directory for reading its entries.
  Result<UniqueFd> OpenDirectory(std::string_view path, std::string_view verb) {
    Result<UniqueFd> fd = OpenResolved(path, O_RDONLY | O_DIRECTORY | O_NONBLOCK, verb);
    if (!fd.ok() && fd.status().code() == StatusCode::kNotDirectory) {
      // ENOTDIR from O_DIRECTORY: the path itself is not a directory.
      return NotDirectoryError("Cannot " + std::string(verb) + " " + DisplayPath(path) +
                               ": not a directory");
    }
    return fd;
  }

  // Kind of normalized `path` after following symlinks that stay inside.
  Result<EntryKind> ResolveKind(std::string_view path) {
    TOOLVFS_ASSIGN_OR_RETURN(UniqueFd fd, OpenResolved(path, O_PATH, "resolve"));
    struct stat status;
    if (::fstat(fd.get(), &status) != 0) return PathError(errno, "resolve", path);
    if (IsSpecialFile(status.st_mode)) return SpecialFileError("resolve", path, status.st_mode);
    return S_ISDIR(status.st_mode) ? EntryKind::kDirectory : EntryKind::kFile;
  }

  // Calls `visit(name, kind)` for each entry of the directory `fd`, kinds as
  // the entries are (a symlink is kSymlink); special files are left out.
  template <typename Visitor>
  Status ForEachEntry(UniqueFd fd, std::string_view path, Visitor&& visit) {
    int raw = fd.get();
    DIR* directory = ::fdopendir(raw);
    if (directory == nullptr) return PathError(errno, "list", path);
    fd.release();  // now owned by `directory`
    errno = 0;
    while (struct dirent* entry = ::readdir(directory)) {
      std::string_view name = entry->d_name;
      if (name == "." || name == "..") continue;
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
    ::closedir(directory);
    if (error != 0) return PathError(error, "list", path);
    return OkStatus();
  }

  // Reads the regular file at normalized `path` into `content`.
  Status ReadForGrep(std::string_view path, bool follow_symlinks, std::string& content) {
    int flags = O_RDONLY | O_NONBLOCK | O_NOCTTY | (follow_symlinks ? 0 : O_NOFOLLOW);
    TOOLVFS_ASSIGN_OR_RETURN(UniqueFd fd, OpenResolved(path, flags, "read"));
    struct stat status;
    if (::fstat(fd.get(), &status) != 0) return PathError(errno, "read", path);
    if (!S_ISREG(status.st_mode)) return SpecialFileError("read", path, status.st_mode);
    size_t size = static_cast<size_t>(status.st_size);
    content.resize(size + 1);  // one spare byte notices a file that grew
    size_t used = 0;
    while (true) {
      if (used == content.size()) content.resize(content.size() * 2);
      ssize_t got = ::read(fd.get(), content.data() + used, content.size() - used);
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) return PathError(errno, "read", path);
      if (got == 0) break;
      used += static_cast<size_t>(got);
    }
    content.resize(used);
    return OkStatus();
  }

 private:
  // Resolves normalized `path` component by component (see the file
  // comment). Symlinks before the final component are followed when they
  // stay inside and are an access denial when they leave; the final one is
  // followed only with `follow_final`. With `create_parents`, missing
  // directories on the way are created. The final entry need not exist.
  Result<Location> Walk(std::string_view path, bool follow_final, bool create_parents,
                        std::string_view verb) {
    std::vector<UniqueFd> chain;  // chain[0] is the root; then each directory entered
    chain.push_back(Duplicate(root_.get()));
    if (!chain.back()) return PathError(errno, verb, path);
    std::vector<std::string> pending;  // components still to resolve, next at the back
    PushComponents(path, pending);
    int hops = 0;
    while (!pending.empty()) {
      std::string name = std::move(pending.back());
      pending.pop_back();
      if (name.empty() || name == ".") continue;
      if (name == "..") {
        if (chain.size() == 1) return EscapeError(path);
        chain.pop_back();
        continue;
      }
      bool is_final = pending.empty();
      int directory = chain.back().get();
      UniqueFd entry(::openat(directory, name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
      if (!entry) {
        if (errno == ENOENT && is_final) return Location{std::move(chain.back()), std::move(name)};
        if (errno == ENOENT && create_parents) {
          if (::mkdirat(directory, name.c_str(), 0777) != 0 && errno != EEXIST) {
            return PathError(errno, verb, path);
          }
          pending.push_back(std::move(name));  // open what we (or a racer) made
          continue;
        }
        return PathError(errno, verb, path);
      }
      struct stat status;
      if (::fstat(entry.get(), &status) != 0) return PathError(errno, verb, path);
      if (S_ISLNK(status.st_mode) && (!is_final || follow_final)) {
        if (++hops > kMaxSymlinkHops) {
          return InvalidArgumentError("Cannot " + std::string(verb) + " " + DisplayPath(path) +
                                      ": too many levels of symbolic links");
        }
        TOOLVFS_ASSIGN_OR_RETURN(std::string target, ReadLink(entry.get(), path));
        if (!target.empty() && target.front() == '/') {
          // Absolute: acceptable only if it names a place inside the root.
          std::string absolute = NormalizeAbsolute(target);
          if (!PathContains(root_path_ == "/" ? "" : root_path_, absolute)) return EscapeError(path);
          chain.resize(1);
          PushComponents(std::string_view(absolute).substr(root_path_ == "/" ? 0 : root_path_.size()),
                         pending);
        } else {
          PushComponents(target, pending);
        }
        continue;
      }
      if (is_final) return Location{std::move(chain.back()), std::move(name)};
      if (!S_ISDIR(status.st_mode)) return PathError(ENOTDIR, verb, path);
      chain.push_back(std::move(entry));
    }
    // Resolved to a directory without a final name: the root, or a path
    // ending in ".." inside a symlink's target.
    if (chain.size() == 1) return Location{std::move(chain.back()), ""};
    UniqueFd self = std::move(chain.back());
    chain.pop_back();
    // Name the directory in its parent by looking it up by identity.
    struct stat self_status;
    if (::fstat(self.get(), &self_status) != 0) return PathError(errno, verb, path);
    std::string found_name;
    Status listed = ForEachEntry(Duplicate(chain.back().get()), path, [&](std::string_view name, EntryKind kind) {
      struct stat status;
      if (kind == EntryKind::kDirectory &&
          ::fstatat(chain.back().get(), std::string(name).c_str(), &status, AT_SYMLINK_NOFOLLOW) == 0 &&
          status.st_ino == self_status.st_ino && status.st_dev == self_status.st_dev) {
        found_name = name;
      }
    });
    TOOLVFS_RETURN_IF_ERROR(listed);
    if (found_name.empty()) return PathError(ENOENT, verb, path);
    return Location{std::move(chain.back()), std::move(found_name)};
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
  Result<Location> LocateEntry(std::string_view path, std::string_view verb) {
    TOOLVFS_ASSIGN_OR_RETURN(Location location, Walk(path, /*follow_final=*/false,
                                                     /*create_parents=*/false, verb));
    struct stat status;
    if (!location.name.empty() &&
        ::fstatat(location.parent.get(), location.name.c_str(), &status, AT_SYMLINK_NOFOLLOW) == 0 &&
        S_ISLNK(status.st_mode)) {
      TOOLVFS_RETURN_IF_ERROR(CheckSymlinkStaysInside(path, verb));
    }
    return location;
  }

  // PermissionDenied if following the symlink at `path` leaves the root; a
  // dangling symlink that stays inside is fine.
  Status CheckSymlinkStaysInside(std::string_view path, std::string_view verb) {
    Result<Location> followed = Walk(path, /*follow_final=*/true, /*create_parents=*/false, verb);
    if (followed.ok() || followed.status().code() != StatusCode::kPermissionDenied) return OkStatus();
    return std::move(followed).status();
  }

  Status FillTemp(int temp, int parent, const char* name, const struct stat* existing,
                  std::string_view content, WriteMode mode, std::string_view path) {
    if (existing != nullptr && mode == WriteMode::kAppend) {
      UniqueFd old(::openat(parent, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
      if (!old) return PathError(errno, "append to", path);
      TOOLVFS_RETURN_IF_ERROR(CopyFileContent(old.get(), temp, path));
    }
    TOOLVFS_RETURN_IF_ERROR(WriteFull(temp, content, "Cannot write " + DisplayPath(path)));
    if (existing != nullptr) {
      if (::fchmod(temp, existing->st_mode & 07777) != 0) return PathError(errno, "write", path);
      // Keep the owner too when we may; an unprivileged writer cannot, and
      // the file then belongs to the writer, as with any editor's save.
      if (::geteuid() == 0) (void)!::fchown(temp, existing->st_uid, existing->st_gid);
    }
    if (options_.sync_writes && ::fdatasync(temp) != 0) return PathError(errno, "write", path);
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

  static Status RenameError(int error_number, const std::string& what) {
    switch (error_number) {
      case EISDIR: return IsDirectoryError(what + ": the target is a directory and the source is not");
      case ENOTDIR: return NotDirectoryError(what + ": the source is a directory and the target is not");
      case ENOTEMPTY:
      case EEXIST: return NotEmptyError(what + ": the target is a directory that is not empty");
      case EINVAL: return InvalidArgumentError(what + ": a directory cannot move inside itself");
      case ENOENT: return NotFoundError(what + ": no such file or directory");
      default: return ErrnoToStatus(error_number, what);
    }
  }

  // Deletes the directory `name` in `parent` and everything in it, without
  // following any symlink.
  Status RemoveTree(int parent, const std::string& name, std::string_view path) {
    UniqueFd directory(::openat(parent, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!directory) return PathError(errno, "delete", path);
    int raw = directory.get();
    std::vector<std::pair<std::string, bool>> children;  // name, is directory
    TOOLVFS_RETURN_IF_ERROR(ForEachEntry(Duplicate(raw), path, [&](std::string_view child, EntryKind kind) {
      children.emplace_back(child, kind == EntryKind::kDirectory);
    }));
    // ForEachEntry leaves out special files; they go too.
    for (auto& [child, is_directory] : children) {
      std::string child_path = JoinPath(path, child);
      if (is_directory) {
        TOOLVFS_RETURN_IF_ERROR(RemoveTree(raw, child, child_path));
      } else if (::unlinkat(raw, child.c_str(), 0) != 0 && errno != ENOENT) {
        return PathError(errno, "delete", child_path);
      }
    }
    TOOLVFS_RETURN_IF_ERROR(RemoveSpecialFiles(raw, path));
    if (::unlinkat(parent, name.c_str(), AT_REMOVEDIR) != 0) return PathError(errno, "delete", path);
    return OkStatus();
  }

  static Status RemoveSpecialFiles(int directory_fd, std::string_view path) {
    UniqueFd fd(::openat(directory_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!fd) return PathError(errno, "delete", path);
    DIR* directory = ::fdopendir(fd.get());
    if (directory == nullptr) return PathError(errno, "delete", path);
    fd.release();
    while (struct dirent* entry = ::readdir(directory)) {
      std::string_view name = entry->d_name;
      if (name == "." || name == ".." || entry->d_type == DT_DIR) continue;
      ::unlinkat(directory_fd, entry->d_name, 0);
    }
    ::closedir(directory);
    return OkStatus();
  }

  UniqueFd root_;
  std::string root_path_;  // absolute, symlinks resolved; for display and absolute symlinks
  StoreOptions options_;
  std::atomic<bool> use_openat2_;
};

// The grep engine's view of an fs store.
class FsGrepTree final : public GrepTree {
 public:
  explicit FsGrepTree(FsStore& store) : store_(store) {}

  Result<std::vector<Entry>> List(std::string_view path) override {
    TOOLVFS_ASSIGN_OR_RETURN(UniqueFd fd, store_.OpenDirectory(path, "list"));
    std::vector<Entry> entries;
    TOOLVFS_RETURN_IF_ERROR(store_.ForEachEntry(std::move(fd), path, [&](std::string_view name, EntryKind kind) {
      entries.push_back(Entry{std::string(name), kind});
    }));
    return entries;
  }

  Result<EntryKind> Resolve(std::string_view path) override { return store_.ResolveKind(path); }

  Status ReadFile(std::string_view path, bool follow_symlinks, std::string& content) override {
    return store_.ReadForGrep(path, follow_symlinks, content);
  }

 private:
  FsStore& store_;
};

Result<GrepResult> FsStore::Grep(std::string_view pattern, const GrepOptions& options) {
  FsGrepTree tree(*this);
  return RunGrep(tree, pattern, options);
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
