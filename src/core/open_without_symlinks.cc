#include "core/open_without_symlinks.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <string>

#ifndef SYS_openat2
#define SYS_openat2 437
#endif

namespace toolvfs {
namespace {

// False once openat2 was refused with ENOSYS (an old kernel) or EPERM (a
// container's seccomp filter): the answer will not change in this process.
std::atomic<bool> openat2_works{true};

// After an EPERM: whether openat2 itself is refused (a seccomp filter), not
// just this path (a security module): then "." is refused too. errno is kept.
bool Openat2IsRefused() {
  const int error = errno;
  struct open_how how = {};
  how.flags = O_PATH | O_CLOEXEC;
  long fd = syscall(SYS_openat2, AT_FDCWD, ".", &how, sizeof how);
  const bool refused = fd < 0 && (errno == EPERM || errno == ENOSYS);
  if (fd >= 0) close(static_cast<int>(fd));
  errno = error;
  return refused;
}

// The directory `name` in `at`, opened O_PATH without following it; ELOOP
// for a symlink, ENOTDIR for anything else that is not a directory.
UniqueFd OpenDirectoryStep(int at, const std::string& name) {
  UniqueFd next(openat(at, name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
  if (!next) return next;
  struct stat status;
  if (fstat(next.get(), &status) != 0) return UniqueFd();
  if (!S_ISDIR(status.st_mode)) {
    errno = S_ISLNK(status.st_mode) ? ELOOP : ENOTDIR;
    return UniqueFd();
  }
  return next;
}

// The caller has refused ".." and absolute paths for `beneath` already.
UniqueFd OpenByWalk(int directory_fd, std::string_view path, int flags) {
  UniqueFd owned;  // the directory reached so far, once it is not `directory_fd`
  int at = directory_fd;
  if (!path.empty() && path.front() == '/') {
    owned.reset(open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!owned) return UniqueFd();
    at = owned.get();
  }
  // The components, "" and "." dropped; the last one is opened with `flags`.
  std::string last = ".";
  bool last_must_be_directory = false;  // "a/" or "a/.", as openat2 reads them
  size_t start = 0;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    if (slash == std::string_view::npos) slash = path.size();
    std::string_view component = path.substr(start, slash - start);
    start = slash + 1;
    if (component.empty() || component == ".") {
      last_must_be_directory = true;  // reset by a real component after it
      continue;
    }
    if (last != ".") {  // the previous component was not the last: step into it
      owned = OpenDirectoryStep(at, last);
      if (!owned) return UniqueFd();
      at = owned.get();
    }
    last.assign(component);
    last_must_be_directory = false;
  }
  if (last_must_be_directory && last != ".") {
    owned = OpenDirectoryStep(at, last);
    if (!owned) return UniqueFd();
    return UniqueFd(openat(owned.get(), ".", flags | O_NOFOLLOW | O_CLOEXEC));
  }
  return UniqueFd(openat(at, last.c_str(), flags | O_NOFOLLOW | O_CLOEXEC));
}

// Whether `path` has a ".." component. openat2's RESOLVE_BENEATH allows one
// that stays beneath ("a/../b"); the walk cannot tell without tracking
// depth, so both refuse them alike.
bool HasParentComponent(std::string_view path) {
  for (size_t at = path.find(".."); at != std::string_view::npos; at = path.find("..", at + 1)) {
    if ((at == 0 || path[at - 1] == '/') && (at + 2 == path.size() || path[at + 2] == '/')) return true;
  }
  return false;
}

}  // namespace

UniqueFd Openat2(int directory_fd, const char* path, int flags, uint64_t resolve) {
  if (!openat2_works.load(std::memory_order_relaxed)) {
    errno = ENOSYS;
    return UniqueFd();
  }
  struct open_how how = {};
  how.flags = static_cast<uint64_t>(flags | O_CLOEXEC);
  how.resolve = resolve;
  for (int attempt = 0; attempt < 3; ++attempt) {
    long fd = syscall(SYS_openat2, directory_fd, path, &how, sizeof how);
    if (fd >= 0) return UniqueFd(static_cast<int>(fd));
    if (errno == ENOSYS || (errno == EPERM && Openat2IsRefused())) {
      openat2_works.store(false, std::memory_order_relaxed);
      errno = ENOSYS;
      return UniqueFd();
    }
    if (errno != EAGAIN && errno != EINTR) break;
  }
  return UniqueFd();
}

UniqueFd OpenWithoutSymlinks(int directory_fd, std::string_view path, int flags, bool beneath,
                             SymlinkFreeMethod method) {
  if (beneath && (HasParentComponent(path) || (!path.empty() && path.front() == '/'))) {
    errno = EXDEV;
    return UniqueFd();
  }
  if (method == SymlinkFreeMethod::kAuto) {
    const std::string path_string(path.empty() ? std::string_view(".") : path);
    UniqueFd fd = Openat2(directory_fd, path_string.c_str(), flags,
                          RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | (beneath ? RESOLVE_BENEATH : 0));
    if (fd || errno != ENOSYS) return fd;
  }
  return OpenByWalk(directory_fd, path, flags);
}

}  // namespace toolvfs
