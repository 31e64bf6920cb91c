#include "project/allowed_subtrees.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>
#include <set>
#include <utility>

#include "core/open_without_symlinks.h"
#include "core/text.h"
#include "core/unique_fd.h"
#include "project/path.h"

namespace toolvfs {
namespace {

Status WalkError(std::string_view path, int error) {
  return Status(error == EACCES ? StatusCode::kPermissionDenied : StatusCode::kIo,
                "cannot walk " + Quote(path.empty() ? "." : path) + " to build the sandbox rules: " +
                    std::strerror(error));
}

using DirectoryListing = std::unique_ptr<DIR, int (*)(DIR*)>;

// A listing of `directory_fd` (taken: closed with the listing).
Result<DirectoryListing> OpenListing(UniqueFd directory_fd, std::string_view path) {
  DirectoryListing listing(fdopendir(directory_fd.get()), closedir);
  if (listing == nullptr) return WalkError(path, errno);
  directory_fd.release();
  return listing;
}

struct DirectoryEntry {
  std::string name;
  bool is_directory;
  bool is_symlink;
};

// The entries of `directory` (at project path `path`) but "." and "..",
// sorted by name; counts them in `walked` against options.max_entries.
Result<std::vector<DirectoryEntry>> ListDirectory(DIR* directory, std::string_view path, size_t& walked,
                                                  const AllowedSubtreesOptions& options) {
  std::vector<DirectoryEntry> entries;
  errno = 0;
  while (dirent* entry = readdir(directory)) {
    std::string_view name = entry->d_name;
    if (name == "." || name == "..") continue;
    if (++walked > options.max_entries) {
      return Status(StatusCode::kResourceExhausted,
                    "the project has more than " + std::to_string(options.max_entries) +
                        " entries below the policy's prefixes; too many to build sandbox rules for");
    }
    unsigned char type = entry->d_type;
    if (type == DT_UNKNOWN) {
      struct stat status;
      if (fstatat(dirfd(directory), entry->d_name, &status, AT_SYMLINK_NOFOLLOW) != 0) {
        errno = 0;  // gone meanwhile: not readdir's error
        continue;
      }
      type = S_ISDIR(status.st_mode) ? DT_DIR : S_ISLNK(status.st_mode) ? DT_LNK : DT_REG;
    }
    entries.push_back({std::string(name), type == DT_DIR, type == DT_LNK});
    errno = 0;
  }
  if (errno != 0) return WalkError(path, errno);
  std::sort(entries.begin(), entries.end(),
            [](const DirectoryEntry& a, const DirectoryEntry& b) { return a.name < b.name; });
  return entries;
}

class Walker {
 public:
  Walker(const std::function<bool(std::string_view, bool)>& allowed, const AllowedSubtreesOptions& options,
         std::vector<std::string>& granted)
      : allowed_(allowed), options_(options), granted_(granted) {}

  // Walks the directory `directory_fd` (taken: it is closed with the
  // listing) at project path `path` (itself allowed). Returns whether the
  // whole subtree is allowed; if not, the allowed parts have been appended
  // to `granted_`.
  Result<bool> WalkDirectory(UniqueFd directory_fd, const std::string& path) {
    TOOLVFS_ASSIGN_OR_RETURN(DirectoryListing listing, OpenListing(std::move(directory_fd), path));
    DIR* directory = listing.get();
    TOOLVFS_ASSIGN_OR_RETURN(std::vector<DirectoryEntry> entries,
                             ListDirectory(directory, path, walked_, options_));

    // Per entry: allowed whole (kept until we know whether the directory is
    // whole), or partly (its parts are already granted). A symlink allowed
    // whole keeps the directory whole but is never granted by itself: that
    // would grant its target.
    std::vector<std::string> whole_entries;
    bool whole = true;
    for (const DirectoryEntry& entry : entries) {
      std::string entry_path = JoinPath(path, entry.name);
      if (!allowed_(entry_path, entry.is_directory)) {
        whole = false;
        continue;
      }
      if (!entry.is_directory) {
        if (!entry.is_symlink) whole_entries.push_back(entry_path);
        continue;
      }
      UniqueFd child(openat(dirfd(directory), entry.name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (!child.valid()) {
        // Unreadable for this user (lost+found, another user's volume),
        // removed or replaced meanwhile: nothing below it is granted, and
        // the start goes on — the process could not open it either way.
        whole = false;
        continue;
      }
      Result<bool> child_whole = WalkDirectory(std::move(child), entry_path);
      if (!child_whole.ok()) {
        if (child_whole.status().code() == StatusCode::kResourceExhausted) return child_whole.status();
        whole = false;  // unlistable: as above
        continue;
      }
      if (*child_whole) {
        whole_entries.push_back(entry_path);
      } else {
        whole = false;
      }
    }
    if (whole && !IsSplitDirectory(path)) return true;
    for (std::string& entry_path : whole_entries) granted_.push_back(std::move(entry_path));
    return false;
  }

 private:
  bool IsSplitDirectory(const std::string& path) const {
    const std::vector<std::string>& split = options_.split_directories;
    return std::find(split.begin(), split.end(), path) != split.end();
  }

  const std::function<bool(std::string_view, bool)>& allowed_;
  const AllowedSubtreesOptions& options_;
  std::vector<std::string>& granted_;
  size_t walked_ = 0;
};

struct OpenedPrefix {
  std::string path;  // normalized
  UniqueFd fd;       // O_PATH
  struct stat status;
};

// The prefix `written` beneath `root_fd`, resolved without following
// symlinks, like the rules' own paths: nullopt when it does not exist or a
// symlink is on its way (it grants nothing, and has nothing to except).
Result<std::optional<OpenedPrefix>> OpenPrefix(int root_fd, const std::string& written) {
  TOOLVFS_ASSIGN_OR_RETURN(std::string prefix, NormalizePath(written));
  UniqueFd entry = OpenWithoutSymlinks(root_fd, prefix, O_PATH | O_NOFOLLOW, /*beneath=*/true);
  if (!entry.valid()) {
    if (errno == ENOENT || errno == ELOOP || errno == ENOTDIR || errno == EXDEV) return std::optional<OpenedPrefix>();
    return WalkError(prefix, errno);
  }
  OpenedPrefix opened{.path = std::move(prefix), .fd = std::move(entry), .status = {}};
  if (fstat(opened.fd.get(), &opened.status) != 0) return WalkError(opened.path, errno);
  return std::optional<OpenedPrefix>(std::move(opened));
}

// The inodes of excepted regular files that have other hard links.
using LinkedInodes = std::set<std::pair<dev_t, ino_t>>;

// Collects PolicyExceptions below one directory, and in `linked` the
// inodes of those with other hard links (from the stat that listed them);
// with `aliases_of`, lists instead every regular file whose inode is in it
// (the second pass, only run when `linked` is not empty).
class ExceptionWalker {
 public:
  ExceptionWalker(const std::function<bool(std::string_view, bool)>& allowed,
                  const AllowedSubtreesOptions& options, std::vector<PolicyException>& exceptions,
                  LinkedInodes& linked, const LinkedInodes* aliases_of)
      : allowed_(allowed), options_(options), exceptions_(exceptions), linked_(linked), aliases_of_(aliases_of) {}

  // Walks the directory `directory_fd` (taken) at project path `path`.
  Status WalkDirectory(UniqueFd directory_fd, const std::string& path) {
    TOOLVFS_ASSIGN_OR_RETURN(DirectoryListing listing, OpenListing(std::move(directory_fd), path));
    DIR* directory = listing.get();
    TOOLVFS_ASSIGN_OR_RETURN(std::vector<DirectoryEntry> entries,
                             ListDirectory(directory, path, walked_, options_));
    for (const DirectoryEntry& entry : entries) {
      if (entry.is_symlink) continue;
      std::string entry_path = JoinPath(path, entry.name);
      const bool excepted = !allowed_(entry_path, entry.is_directory);
      if (aliases_of_ == nullptr && !excepted && !entry.is_directory) continue;
      struct stat status;
      if (fstatat(dirfd(directory), entry.name.c_str(), &status, AT_SYMLINK_NOFOLLOW) != 0) continue;
      if (S_ISLNK(status.st_mode)) continue;  // swapped meanwhile; grants nothing of its own
      if (aliases_of_ != nullptr) {
        if (!excepted && S_ISREG(status.st_mode) && status.st_nlink > 1 &&
            aliases_of_->contains({status.st_dev, status.st_ino})) {
          Add(std::move(entry_path), status);
        }
        if (excepted || !S_ISDIR(status.st_mode)) continue;
      } else if (excepted) {
        Add(std::move(entry_path), status);
        continue;
      }
      if (!S_ISDIR(status.st_mode)) continue;
      UniqueFd child(openat(dirfd(directory), entry.name.c_str(),
                            O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      Status walked = child.valid() ? WalkDirectory(std::move(child), entry_path)
                                    : WalkError(entry_path, errno);
      if (walked.code() == StatusCode::kResourceExhausted) return walked;
      // Unreadable for this user, removed or replaced meanwhile: covered
      // whole, as AllowedSubtrees grants nothing below it.
      if (!walked.ok() && aliases_of_ == nullptr) Add(std::move(entry_path), status);
    }
    return OkStatus();
  }

  void Add(std::string path, const struct stat& status) {
    if (aliases_of_ == nullptr && S_ISREG(status.st_mode) && status.st_nlink > 1) {
      linked_.insert({status.st_dev, status.st_ino});
    }
    exceptions_.push_back({.path = std::move(path),
                           .is_directory = S_ISDIR(status.st_mode),
                           .device = status.st_dev,
                           .inode = status.st_ino});
  }

 private:
  const std::function<bool(std::string_view, bool)>& allowed_;
  const AllowedSubtreesOptions& options_;
  std::vector<PolicyException>& exceptions_;
  LinkedInodes& linked_;
  const LinkedInodes* aliases_of_;
  size_t walked_ = 0;
};

// One pass of PolicyExceptions over every prefix.
Status CollectExceptions(int root_fd, const std::vector<std::string>& prefixes,
                         const std::function<bool(std::string_view, bool)>& allowed,
                         const AllowedSubtreesOptions& options, std::vector<PolicyException>& exceptions,
                         LinkedInodes& linked, const LinkedInodes* aliases_of) {
  ExceptionWalker walker(allowed, options, exceptions, linked, aliases_of);
  for (const std::string& written : prefixes) {
    TOOLVFS_ASSIGN_OR_RETURN(std::optional<OpenedPrefix> opened, OpenPrefix(root_fd, written));
    if (!opened) continue;
    const bool is_directory = S_ISDIR(opened->status.st_mode);
    if (!opened->path.empty() && !allowed(opened->path, is_directory)) {
      if (aliases_of == nullptr) walker.Add(opened->path, opened->status);
      continue;
    }
    if (!is_directory) continue;
    UniqueFd directory(openat(opened->fd.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!directory.valid()) return WalkError(opened->path, errno);
    TOOLVFS_RETURN_IF_ERROR(walker.WalkDirectory(std::move(directory), opened->path));
  }
  return OkStatus();
}

}  // namespace

Result<std::vector<PolicyException>> PolicyExceptions(
    const std::string& root, const std::vector<std::string>& prefixes,
    const std::function<bool(std::string_view path, bool is_directory)>& allowed,
    const AllowedSubtreesOptions& options) {
  UniqueFd root_fd(open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!root_fd.valid()) return WalkError(root, errno);
  std::vector<PolicyException> exceptions;
  LinkedInodes linked;
  TOOLVFS_RETURN_IF_ERROR(CollectExceptions(root_fd.get(), prefixes, allowed, options, exceptions, linked, nullptr));
  // Another name of an excepted file's inode reads and writes the same
  // content, and the cover is on the name: cover every other name too. The
  // second pass stats every file, so it runs only when some excepted file
  // has other links at all.
  if (!linked.empty()) {
    LinkedInodes unused;
    TOOLVFS_RETURN_IF_ERROR(
        CollectExceptions(root_fd.get(), prefixes, allowed, options, exceptions, unused, &linked));
  }
  std::sort(exceptions.begin(), exceptions.end(),
            [](const PolicyException& a, const PolicyException& b) { return a.path < b.path; });
  exceptions.erase(std::unique(exceptions.begin(), exceptions.end(),
                               [](const PolicyException& a, const PolicyException& b) { return a.path == b.path; }),
                   exceptions.end());
  return exceptions;
}

Result<bool> ProjectEntryExists(const std::string& root, std::string_view path) {
  UniqueFd root_fd(open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!root_fd.valid()) return WalkError(root, errno);
  UniqueFd entry = OpenWithoutSymlinks(root_fd.get(), path, O_PATH | O_NOFOLLOW, /*beneath=*/true);
  if (entry.valid()) return true;
  if (errno == ENOENT || errno == ENOTDIR) return false;
  return WalkError(path, errno);
}

Result<std::vector<std::string>> AllowedSubtrees(
    const std::string& root, const std::vector<std::string>& prefixes,
    const std::function<bool(std::string_view path, bool is_directory)>& allowed,
    const AllowedSubtreesOptions& options) {
  UniqueFd root_fd(open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!root_fd.valid()) return WalkError(root, errno);
  std::vector<std::string> granted;
  Walker walker(allowed, options, granted);
  for (const std::string& written : prefixes) {
    TOOLVFS_ASSIGN_OR_RETURN(std::optional<OpenedPrefix> opened, OpenPrefix(root_fd.get(), written));
    if (!opened) continue;
    const std::string* prefix = &opened->path;
    UniqueFd& entry = opened->fd;
    const struct stat& status = opened->status;
    const bool is_directory = S_ISDIR(status.st_mode);
    if (!prefix->empty() && !allowed(*prefix, is_directory)) continue;
    if (!is_directory) {
      if (S_ISREG(status.st_mode)) granted.push_back(*prefix);
      continue;
    }
    // Through the fd just checked, not the path again: the path could be
    // swapped for a symlink in between.
    UniqueFd directory(openat(entry.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!directory.valid()) return WalkError(*prefix, errno);
    TOOLVFS_ASSIGN_OR_RETURN(bool whole, walker.WalkDirectory(std::move(directory), *prefix));
    if (whole) granted.push_back(*prefix);
  }
  // Sorted, deduplicated, nothing below something already granted: a path
  // is kept unless it or one of its ancestors is. Shorter paths first, so
  // ancestors are judged before what lies below them.
  std::sort(granted.begin(), granted.end(), [](const std::string& a, const std::string& b) {
    return a.size() != b.size() ? a.size() < b.size() : a < b;
  });
  std::set<std::string, std::less<>> kept;
  for (std::string& path : granted) {
    if (kept.contains("")) break;  // the whole project
    bool covered = kept.contains(path);
    for (size_t slash = path.find('/'); !covered && slash != std::string::npos; slash = path.find('/', slash + 1)) {
      covered = kept.contains(std::string_view(path).substr(0, slash));
    }
    if (!covered) kept.insert(std::move(path));
  }
  return std::vector<std::string>(kept.begin(), kept.end());
}

}  // namespace toolvfs
