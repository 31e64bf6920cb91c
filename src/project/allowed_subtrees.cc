#include "project/allowed_subtrees.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
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
    std::unique_ptr<DIR, int (*)(DIR*)> listing(fdopendir(directory_fd.get()), closedir);
    if (listing == nullptr) return WalkError(path, errno);
    directory_fd.release();
    DIR* directory = listing.get();
    struct Entry {
      std::string name;
      bool is_directory;
      bool is_symlink;
    };
    std::vector<Entry> entries;
    errno = 0;
    while (dirent* entry = readdir(directory)) {
      std::string_view name = entry->d_name;
      if (name == "." || name == "..") continue;
      if (++walked_ > options_.max_entries) {
        return Status(StatusCode::kResourceExhausted,
                      "the project has more than " + std::to_string(options_.max_entries) +
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
    std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.name < b.name; });

    // Per entry: allowed whole (kept until we know whether the directory is
    // whole), or partly (its parts are already granted). A symlink allowed
    // whole keeps the directory whole but is never granted by itself: that
    // would grant its target.
    std::vector<std::string> whole_entries;
    bool whole = true;
    for (const Entry& entry : entries) {
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
    if (whole) return true;
    for (std::string& entry_path : whole_entries) granted_.push_back(std::move(entry_path));
    return false;
  }

 private:
  const std::function<bool(std::string_view, bool)>& allowed_;
  const AllowedSubtreesOptions& options_;
  std::vector<std::string>& granted_;
  size_t walked_ = 0;
};

}  // namespace

Result<std::vector<std::string>> AllowedSubtrees(
    const std::string& root, const std::vector<std::string>& prefixes,
    const std::function<bool(std::string_view path, bool is_directory)>& allowed,
    const AllowedSubtreesOptions& options) {
  UniqueFd root_fd(open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!root_fd.valid()) return WalkError(root, errno);
  std::vector<std::string> granted;
  Walker walker(allowed, options, granted);
  for (const std::string& written : prefixes) {
    Result<std::string> prefix = NormalizePath(written);
    if (!prefix.ok()) return prefix.status();
    // Resolved beneath the root without following symlinks, like the rules'
    // own paths: a prefix that is a symlink grants nothing here.
    UniqueFd entry = OpenWithoutSymlinks(root_fd.get(), *prefix, O_PATH | O_NOFOLLOW, /*beneath=*/true);
    if (!entry.valid()) {
      if (errno == ENOENT || errno == ELOOP || errno == ENOTDIR || errno == EXDEV) continue;
      return WalkError(*prefix, errno);
    }
    struct stat status;
    if (fstat(entry.get(), &status) != 0) return WalkError(*prefix, errno);
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
