// Helpers for tests that need real files: a private temporary directory that
// removes itself, and plain file operations for setting up and inspecting
// trees outside any ProjectFiles store. Failures of the setup helpers are
// reported as test failures (ADD_FAILURE), so tests stay short.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace toolvfs {

// A fresh directory (mode 0700) under $TMPDIR or /tmp, removed with
// everything in it on destruction. path() is absolute and canonical (no
// symlinks), so it compares equal to what an fs store reports as its root.
class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern =
        std::string(base != nullptr && base[0] == '/' ? base : "/tmp") + "/toolvfs-test-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) {
      ADD_FAILURE() << "mkdtemp " << pattern << ": " << std::strerror(errno);
      return;
    }
    std::error_code error;
    std::filesystem::path canonical = std::filesystem::canonical(pattern, error);
    path_ = error ? pattern : canonical.string();
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() { RemoveAll(path_); }

  const std::string& path() const { return path_; }

  // path() + "/" + relative.
  std::string Join(std::string_view relative) const { return path_ + "/" + std::string(relative); }

  // Removes `path` recursively without following symlinks, making
  // directories writable first if a plain removal fails (tests make some
  // read-only).
  static void RemoveAll(const std::string& path) {
    namespace fs = std::filesystem;
    if (path.empty()) return;
    std::error_code error;
    fs::remove_all(path, error);
    if (!error) return;
    std::error_code ignored;
    fs::permissions(path, fs::perms::owner_all, fs::perm_options::add, ignored);
    for (fs::recursive_directory_iterator it(path, ignored), end; !ignored && it != end;
         it.increment(ignored)) {
      if (it->is_directory(ignored) && !it->is_symlink(ignored)) {
        fs::permissions(it->path(), fs::perms::owner_all, fs::perm_options::add, ignored);
      }
    }
    error.clear();
    fs::remove_all(path, error);
    if (error) ADD_FAILURE() << "cannot remove " << path << ": " << error.message();
  }

 private:
  std::string path_;
};

// Creates the real directory `path` and its missing parents.
inline void MakeDirectory(const std::string& path) {
  std::error_code error;
  std::filesystem::create_directories(path, error);
  if (error) ADD_FAILURE() << "cannot create directory " << path << ": " << error.message();
}

// Writes `content` to the real file `path` (mode 0644 before umask),
// creating missing parents.
inline void WriteRealFile(const std::string& path, std::string_view content) {
  MakeDirectory(std::filesystem::path(path).parent_path().string());
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    ADD_FAILURE() << "cannot create " << path << ": " << std::strerror(errno);
    return;
  }
  while (!content.empty()) {
    ssize_t written = ::write(fd, content.data(), content.size());
    if (written < 0 && errno == EINTR) continue;
    if (written < 0) {
      ADD_FAILURE() << "cannot write " << path << ": " << std::strerror(errno);
      break;
    }
    content.remove_prefix(static_cast<size_t>(written));
  }
  ::close(fd);
}

// The content of the real file `path`; "<cannot read PATH: why>" if it
// cannot be read, so a comparison with the expected content fails and says
// why.
inline std::string ReadRealFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "<cannot read " + path + ": " + std::strerror(errno) + ">";
  std::string content;
  char buffer[65536];
  while (true) {
    ssize_t got = ::read(fd, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      content = "<cannot read " + path + ": " + std::strerror(errno) + ">";
      break;
    }
    if (got == 0) break;
    content.append(buffer, static_cast<size_t>(got));
  }
  ::close(fd);
  return content;
}

// The names in the real directory `path`, sorted; empty if it cannot be read.
inline std::vector<std::string> ListRealDirectory(const std::string& path) {
  std::vector<std::string> names;
  std::error_code error;
  for (std::filesystem::directory_iterator it(path, error), end; !error && it != end;
       it.increment(error)) {
    names.push_back(it->path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

// Creates the symlink `link` pointing at `target`.
inline void MakeSymlink(const std::string& target, const std::string& link) {
  if (::symlink(target.c_str(), link.c_str()) != 0) {
    ADD_FAILURE() << "symlink " << link << " -> " << target << ": " << std::strerror(errno);
  }
}

// Whether anything, a dangling symlink included, is at `path`.
inline bool RealPathExists(const std::string& path) {
  struct stat info;
  return ::lstat(path.c_str(), &info) == 0;
}

inline bool IsSymlink(const std::string& path) {
  struct stat info;
  return ::lstat(path.c_str(), &info) == 0 && S_ISLNK(info.st_mode);
}

}  // namespace toolvfs
