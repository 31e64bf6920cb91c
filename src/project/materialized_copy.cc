#include "project/materialized_copy.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <utility>
#include <vector>

#include "core/io.h"
#include "core/open_without_symlinks.h"
#include "core/text.h"
#include "core/unique_fd.h"
#include "project/path.h"

namespace toolvfs {
namespace {

std::string TempDirBase() {
  const char* tmpdir = std::getenv("TMPDIR");
  if (tmpdir != nullptr && tmpdir[0] == '/') return tmpdir;
  return "/tmp";
}

struct timespec ToTimespec(int64_t unix_ms) {
  struct timespec result {};
  result.tv_sec = static_cast<time_t>(unix_ms / 1000);
  result.tv_nsec = static_cast<long>(unix_ms % 1000) * 1000000L;
  if (result.tv_nsec < 0) {
    result.tv_nsec += 1000000000L;
    result.tv_sec -= 1;
  }
  return result;
}

// The size and the content address of the regular file open as `file`
// (`real_path` names it), read one chunk at a time: the walk holds no
// file's content.
Result<CopiedEntry> AddressCopiedFile(int file, const std::string& real_path) {
  ContentAddressBuilder address;
  std::string chunk(kChunkBytes, '\0');
  uint64_t size = 0;
  while (true) {
    ssize_t got = ::read(file, chunk.data(), chunk.size());
    if (got < 0) {
      if (errno == EINTR) continue;
      return ErrnoToStatus(errno, "Cannot sync back " + Quote(real_path));
    }
    if (got == 0) break;
    size += static_cast<uint64_t>(got);
    if (size > kMaxSyncedFileBytes) {  // it grew past the cap since it was stat'ed
      return TooLargeError("Cannot sync back " + Quote(real_path) + ": larger than the read limit of " +
                           FormatBytes(kMaxSyncedFileBytes));
    }
    address.Append(std::string_view(chunk.data(), static_cast<size_t>(got)));
  }
  return CopiedEntry{EntryKind::kFile, size, address.Finish()};
}

Status ReadDirectory(int dir_fd, const std::string& dir, const std::string& real, CopiedAddresses addresses,
                     CopiedTree& out) {
  int listing_fd = ::dup(dir_fd);
  if (listing_fd < 0) return ErrnoToStatus(errno, "Cannot read directory " + Quote(real));
  DIR* listing = ::fdopendir(listing_fd);
  if (listing == nullptr) {
    int saved = errno;
    ::close(listing_fd);
    return ErrnoToStatus(saved, "Cannot read directory " + Quote(real));
  }
  std::unique_ptr<DIR, int (*)(DIR*)> closer(listing, ::closedir);
  std::vector<std::string> names;
  while (true) {
    errno = 0;
    struct dirent* entry = ::readdir(listing);
    if (entry == nullptr) {
      if (errno != 0) return ErrnoToStatus(errno, "Cannot read directory " + Quote(real));
      break;
    }
    std::string_view name = entry->d_name;
    if (name == "." || name == "..") continue;
    names.emplace_back(name);
  }
  for (const std::string& name : names) {
    const std::string path = JoinPath(dir, name);
    const std::string real_path = real + "/" + name;
    Result<std::string> normalized = NormalizePath(path);
    if (!normalized.ok() || *normalized != path) continue;  // not representable in a store
    struct stat info;
    if (::fstatat(dir_fd, name.c_str(), &info, AT_SYMLINK_NOFOLLOW) != 0) {
      return ErrnoToStatus(errno, "Cannot read " + Quote(real_path));
    }
    if (S_ISDIR(info.st_mode)) {
      UniqueFd child(::openat(dir_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (!child) return ErrnoToStatus(errno, "Cannot open directory " + Quote(real_path));
      out.emplace(path, CopiedEntry{EntryKind::kDirectory, 0, std::nullopt});
      TOOLVFS_RETURN_IF_ERROR(ReadDirectory(child.get(), path, real_path, addresses, out));
    } else if (S_ISREG(info.st_mode)) {
      if (static_cast<uint64_t>(info.st_size) > kMaxSyncedFileBytes) {
        return TooLargeError("Cannot sync back " + Quote(real_path) + ": " +
                             FormatBytes(static_cast<uint64_t>(info.st_size)) + " is larger than the limit of " +
                             FormatBytes(kMaxSyncedFileBytes) + " for a file synced back into a store");
      }
      UniqueFd file(::openat(dir_fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
      if (!file) return ErrnoToStatus(errno, "Cannot open " + Quote(real_path));
      if (addresses == CopiedAddresses::kSkip) {
        out.emplace(path, CopiedEntry{EntryKind::kFile, static_cast<uint64_t>(info.st_size), std::nullopt});
      } else {
        TOOLVFS_ASSIGN_OR_RETURN(CopiedEntry entry, AddressCopiedFile(file.get(), real_path));
        out.emplace(path, std::move(entry));
      }
    }
    // Symlinks, FIFOs, sockets and devices are ignored, never followed.
  }
  return OkStatus();
}

// The copy's file at `real_path` is not what the walk saw: `how`.
Status CopyChangedError(const std::string& real_path, const std::string& how) {
  return ChangedError("Cannot sync back " + Quote(real_path) + ": " + how +
                      " since the copy was read (the copy changed while it was synced)");
}

// ReadCopiedFile without the check of entry.address.
Result<std::string> ReadCopiedBytes(const std::string& root, const std::string& path, const CopiedEntry& entry) {
  const std::string real_path = root + "/" + path;
  auto changed = [&](const std::string& how) { return CopyChangedError(real_path, how); };
  UniqueFd root_fd(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!root_fd) return ErrnoToStatus(errno, "Cannot open " + Quote(root));
  // The tools are gone by now, but the tree is still theirs: no symlink
  // on the way is followed, and nothing outside the copy is reached.
  UniqueFd file = OpenWithoutSymlinks(root_fd.get(), path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY,
                                      /*beneath=*/true);
  if (!file) {
    if (errno == ENOENT || errno == ELOOP || errno == ENOTDIR || errno == EXDEV) {
      return changed("it was removed or replaced by a symlink");
    }
    return ErrnoToStatus(errno, "Cannot open " + Quote(real_path));
  }
  struct stat info;
  if (::fstat(file.get(), &info) != 0) return ErrnoToStatus(errno, "Cannot read " + Quote(real_path));
  if (!S_ISREG(info.st_mode)) return changed("it is no longer a regular file");
  if (static_cast<uint64_t>(info.st_size) != entry.size) {
    return changed("its size went from " + std::to_string(entry.size) + " to " + std::to_string(info.st_size) +
                   " bytes");
  }
  TOOLVFS_ASSIGN_OR_RETURN(std::string content, ReadToEnd(file.get(), kMaxSyncedFileBytes,
                                                          "Cannot sync back " + Quote(real_path), entry.size));
  if (content.size() != entry.size) {
    return changed("its size went from " + std::to_string(entry.size) + " to " + std::to_string(content.size()) +
                   " bytes");
  }
  return content;
}

}  // namespace

Result<std::string> MakeMaterializedDirectory(std::string_view display) {
  std::string dir = TempDirBase() + "/toolvfs-materialized-XXXXXX";
  if (::mkdtemp(dir.data()) == nullptr) {  // mode 0700
    return ErrnoToStatus(errno, "Cannot materialize " + Quote(display) +
                                    ": cannot create a temporary directory in " + Quote(TempDirBase()));
  }
  return dir;
}

Status RemoveTree(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code error;
  fs::remove_all(path, error);
  if (!error) return OkStatus();
  std::error_code ignored;
  fs::permissions(path, fs::perms::owner_all, fs::perm_options::add, ignored);
  for (fs::recursive_directory_iterator it(path, fs::directory_options::skip_permission_denied, ignored), end;
       it != end; it.increment(ignored)) {
    if (it->is_directory(ignored) && !it->is_symlink(ignored)) {
      fs::permissions(it->path(), fs::perms::owner_all, fs::perm_options::add, ignored);
    }
    if (ignored) break;
  }
  error.clear();
  fs::remove_all(path, error);
  if (error) return ErrnoToStatus(error.value(), "Cannot remove " + Quote(path));
  return OkStatus();
}

Status WriteCopiedDirectory(int root_fd, const std::string& root, const std::string& path) {
  if (::mkdirat(root_fd, path.c_str(), 0755) != 0) {
    return ErrnoToStatus(errno, "Cannot create directory " + Quote(root + "/" + path));
  }
  return OkStatus();
}

Status WriteCopiedFile(int root_fd, const std::string& root, const std::string& path, std::string_view content,
                       int64_t modified_ms) {
  const std::string where = Quote(root + "/" + path);
  UniqueFd fd(::openat(root_fd, path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
  if (!fd) return ErrnoToStatus(errno, "Cannot create " + where);
  TOOLVFS_RETURN_IF_ERROR(WriteFull(fd.get(), content, "Cannot write " + where));
  struct timespec times[2] = {ToTimespec(modified_ms), ToTimespec(modified_ms)};
  if (::futimens(fd.get(), times) != 0) return ErrnoToStatus(errno, "Cannot set the time of " + where);
  return OkStatus();
}

Status SetCopiedDirectoryTime(int root_fd, const std::string& root, const std::string& path, int64_t modified_ms) {
  struct timespec times[2] = {ToTimespec(modified_ms), ToTimespec(modified_ms)};
  if (::utimensat(root_fd, path.c_str(), times, AT_SYMLINK_NOFOLLOW) != 0) {
    return ErrnoToStatus(errno, "Cannot set the time of " + Quote(root + "/" + path));
  }
  return OkStatus();
}

Result<CopiedTree> ReadCopy(const std::string& root, CopiedAddresses addresses) {
  UniqueFd root_fd(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!root_fd) return ErrnoToStatus(errno, "Cannot open " + Quote(root));
  CopiedTree tree;
  TOOLVFS_RETURN_IF_ERROR(ReadDirectory(root_fd.get(), "", root, addresses, tree));
  return tree;
}

Result<std::string> ReadCopiedFile(const std::string& root, const std::string& path, const CopiedEntry& entry) {
  TOOLVFS_ASSIGN_OR_RETURN(std::string content, ReadCopiedBytes(root, path, entry));
  if (entry.address && ContentAddress(content) != *entry.address) {
    return CopyChangedError(root + "/" + path, "its content changed");
  }
  return content;
}

Result<AddressedContent> ReadAddressedCopiedFile(const std::string& root, const std::string& path,
                                                 const CopiedEntry& entry) {
  if (!entry.address) {
    return InternalError("The walk of the copy " + Quote(root) + " did not address " + Quote(path));
  }
  TOOLVFS_ASSIGN_OR_RETURN(std::string bytes, ReadCopiedBytes(root, path, entry));
  AddressedContent content(std::move(bytes));
  if (content.address() != *entry.address) return CopyChangedError(root + "/" + path, "its content changed");
  return content;
}

Status CheckSyncedTotal(uint64_t changed_bytes) {
  if (changed_bytes <= kMaxSyncedTotalBytes) return OkStatus();
  return TooLargeError("the files changed in it come to more than " + FormatBytes(kMaxSyncedTotalBytes) +
                       ", the limit for one sync back into a store");
}

Status ReleaseMaterializedCopy(const std::string& dir, const std::function<Status()>& sync_back) {
  Status synced = sync_back();
  if (!synced.ok()) {
    return Status(synced.code(), "Cannot sync the materialized copy " + Quote(dir) +
                                     " back (nothing was synced; the copy is kept): " + synced.message());
  }
  Status removed = RemoveTree(dir);
  if (!removed.ok()) {
    return Status(removed.code(), "Synced the materialized copy back, but it is kept: " + removed.message());
  }
  return OkStatus();
}

bool CopyChangeAllowed(const CopyChangeFilter* filter, std::string_view path, std::vector<RefusedChange>& refused) {
  if (filter == nullptr) return true;
  std::optional<std::string> refusal = filter->Refusal(path);
  if (!refusal) return true;
  refused.push_back({std::string(path), std::move(*refusal)});
  return false;
}

void ReportRefusedChanges(const std::vector<RefusedChange>& refused) {
  for (const RefusedChange& change : refused) {
    std::fprintf(stderr, "toolvfs: not synced back from the materialized copy: %s (%s)\n",
                 Quote(change.path).c_str(), EscapeForDisplay(change.reason).c_str());
  }
}

void ReportFailedRelease(const Status& release) {
  if (!release.ok()) std::fprintf(stderr, "toolvfs: %s\n", EscapeForDisplay(release.message()).c_str());
}

}  // namespace toolvfs
