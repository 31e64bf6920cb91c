#include "project/append_only_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "core/io.h"
#include "core/text.h"

namespace toolvfs {
namespace {

constexpr size_t kReadChunkBytes = 64 * 1024;

// mkdir -p with mode 0700 for the directories it creates.
Status CreateDirectories(const std::string& directory) {
  if (directory.empty() || directory == "/" || directory == ".") return OkStatus();
  if (::mkdir(directory.c_str(), 0700) == 0 || errno == EEXIST) return OkStatus();
  if (errno != ENOENT) return ErrnoToStatus(errno, "Cannot create directory " + Quote(directory));
  size_t slash = directory.find_last_of('/');
  if (slash == std::string::npos) return ErrnoToStatus(ENOENT, "Cannot create directory " + Quote(directory));
  TOOLVFS_RETURN_IF_ERROR(CreateDirectories(directory.substr(0, slash)));
  if (::mkdir(directory.c_str(), 0700) == 0 || errno == EEXIST) return OkStatus();
  return ErrnoToStatus(errno, "Cannot create directory " + Quote(directory));
}

Status NotRegularFileError(const std::string& path) {
  return InvalidArgumentError("Cannot use " + Quote(path) + " as a log file: it is not a regular file");
}

std::string ParentDirectory(const std::string& path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string SymlinkRefusal(const std::string& path, std::string_view link) {
  return "Cannot open log file " + Quote(path) + ": " + Quote(link) +
         " is a symbolic link, which is never followed";
}

// Whether `name` in `directory_fd` is a symbolic link (the entry itself).
bool IsSymlinkAt(int directory_fd, const std::string& name) {
  struct stat status;
  return ::fstatat(directory_fd, name.c_str(), &status, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(status.st_mode);
}

// How a log file is opened. O_NONBLOCK: opening a FIFO planted at the path
// must fail (ENXIO, without a reader), not block; it changes nothing for a
// regular file.
constexpr int kLogFileFlags = O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK;

// Refuses anything but a regular file opened as `file` for the log at `path`.
Status CheckRegularFile(const UniqueFd& file, const std::string& path) {
  struct stat status;
  if (::fstat(file.get(), &status) != 0) return ErrnoToStatus(errno, "Cannot stat log file " + Quote(path));
  if (!S_ISREG(status.st_mode)) return NotRegularFileError(path);
  return OkStatus();
}

}  // namespace

Result<AppendOnlyFile> AppendOnlyFile::OpenBelow(const std::string& directory, std::string_view relative_path) {
  std::string path = directory + "/" + std::string(relative_path);
  if (relative_path.empty() || relative_path.starts_with('/')) {
    return InvalidArgumentError("The log file path " + Quote(path) + " is not below " + Quote(directory));
  }
  int opened = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (opened < 0) return ErrnoToStatus(errno, "Cannot open directory " + Quote(directory));
  UniqueFd current(opened);
  std::string walked;  // relative_path up to the component at hand
  std::string_view rest = relative_path;
  while (true) {
    size_t slash = rest.find('/');
    std::string name(rest.substr(0, slash));
    walked += walked.empty() ? name : "/" + name;
    if (name.empty() || name == "." || name == "..") {
      return InvalidArgumentError("The log file path " + Quote(path) + " is not below " + Quote(directory));
    }
    if (slash == std::string_view::npos) {
      int fd = ::openat(current.get(), name.c_str(), kLogFileFlags, 0600);
      if (fd < 0) {
        if (errno == ELOOP) return PermissionDeniedError(SymlinkRefusal(path, directory + "/" + walked));
        if (errno == ENXIO) return NotRegularFileError(path);
        return ErrnoToStatus(errno, "Cannot open log file " + Quote(path));
      }
      UniqueFd file(fd);
      TOOLVFS_RETURN_IF_ERROR(CheckRegularFile(file, path));
      return AppendOnlyFile(std::move(file), path);
    }
    constexpr int kDirectoryFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
    int next = ::openat(current.get(), name.c_str(), kDirectoryFlags);
    if (next < 0 && errno == ENOENT) {
      if (::mkdirat(current.get(), name.c_str(), 0700) != 0 && errno != EEXIST) {
        return ErrnoToStatus(errno, "Cannot create directory " + Quote(directory + "/" + walked));
      }
      next = ::openat(current.get(), name.c_str(), kDirectoryFlags);
    }
    if (next < 0) {
      // O_NOFOLLOW with O_DIRECTORY reports a link as ELOOP or ENOTDIR,
      // depending on the kernel: ask the entry itself.
      int error = errno;
      if (error == ELOOP || IsSymlinkAt(current.get(), name)) {
        return PermissionDeniedError(SymlinkRefusal(path, directory + "/" + walked));
      }
      return ErrnoToStatus(error, "Cannot open directory " + Quote(directory + "/" + walked));
    }
    current = UniqueFd(next);
    rest.remove_prefix(slash + 1);
  }
}

Result<AppendOnlyFile> AppendOnlyFile::Open(const std::string& path) {
  if (path.empty()) return InvalidArgumentError("The log file path is empty");
  int fd = ::open(path.c_str(), kLogFileFlags, 0600);
  if (fd < 0 && errno == ENOENT) {
    TOOLVFS_RETURN_IF_ERROR(CreateDirectories(ParentDirectory(path)));
    fd = ::open(path.c_str(), kLogFileFlags, 0600);
  }
  if (fd < 0) {
    if (errno == ELOOP) {
      return PermissionDeniedError("Cannot open log file " + Quote(path) +
                                   ": it is a symbolic link, which is never followed");
    }
    // ENXIO: a FIFO without a reader (the O_NONBLOCK open refuses to wait).
    if (errno == ENXIO) return NotRegularFileError(path);
    return ErrnoToStatus(errno, "Cannot open log file " + Quote(path));
  }
  UniqueFd file(fd);
  TOOLVFS_RETURN_IF_ERROR(CheckRegularFile(file, path));
  return AppendOnlyFile(std::move(file), path);
}

Status AppendOnlyFile::Append(std::string_view line) {
  // WriteFull issues one write(2) for the whole line and loops only on
  // EINTR or a short write.
  return WriteFull(fd_.get(), line, "Cannot append to " + Quote(path_));
}

Result<FileLineReader> FileLineReader::Open(const std::string& path, size_t max_line_bytes) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ENOENT) return NotFoundError("File " + Quote(path) + " does not exist");
    return ErrnoToStatus(errno, "Cannot open " + Quote(path));
  }
  UniqueFd file(fd);
  struct stat status;
  if (::fstat(file.get(), &status) != 0) return ErrnoToStatus(errno, "Cannot stat " + Quote(path));
  if (S_ISDIR(status.st_mode)) return IsDirectoryError("Cannot read " + Quote(path) + ": it is a directory");
  if (!S_ISREG(status.st_mode)) {
    return InvalidArgumentError("Cannot read " + Quote(path) + ": it is not a regular file");
  }
  return FileLineReader(std::move(file), path, max_line_bytes);
}

Result<bool> FileLineReader::Fill() {
  size_t used = buffer_.size();
  buffer_.resize(used + kReadChunkBytes);
  while (true) {
    ssize_t got = ::read(fd_.get(), buffer_.data() + used, kReadChunkBytes);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      int error = errno;
      buffer_.resize(used);
      return ErrnoToStatus(error, "Cannot read " + Quote(path_));
    }
    buffer_.resize(used + static_cast<size_t>(got));
    return got > 0;
  }
}

Result<std::optional<std::string_view>> FileLineReader::NextLine() {
  bool skipping = false;  // inside a line over the limit: its bytes are dropped
  size_t search_from = consumed_;
  while (true) {
    size_t newline = buffer_.find('\n', search_from);
    if (newline != std::string::npos) {
      std::string_view line(buffer_.data() + consumed_, newline - consumed_);
      consumed_ = newline + 1;
      ++line_number_;
      if (skipping) {
        return TooLargeError("Line " + std::to_string(line_number_) + " of " + Quote(path_) +
                             " is longer than " + FormatBytes(max_line_bytes_));
      }
      return std::optional<std::string_view>(line);
    }
    // No newline in what is buffered: keep only the unread part, and none of
    // a line that is already over the limit.
    buffer_.erase(0, consumed_);
    consumed_ = 0;
    if (buffer_.size() > max_line_bytes_) {
      skipping = true;
      buffer_.clear();
    }
    search_from = buffer_.size();
    bool more = false;
    if (!end_of_file_) {
      TOOLVFS_ASSIGN_OR_RETURN(more, Fill());
      end_of_file_ = !more;
    }
    if (more) continue;
    if (skipping) {
      ++line_number_;
      return TooLargeError("Line " + std::to_string(line_number_) + " of " + Quote(path_) +
                           " is longer than " + FormatBytes(max_line_bytes_));
    }
    if (buffer_.empty()) return std::optional<std::string_view>();
    consumed_ = buffer_.size();
    ++line_number_;
    return std::optional<std::string_view>(std::string_view(buffer_));
  }
}

}  // namespace toolvfs
