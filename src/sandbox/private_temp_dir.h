// The private directory and the fixed environment every tool process gets
// (SPEC.md §5): PATH, LANG, and HOME and TMPDIR pointing at a directory of
// its own that is removed after the run. Used by the vfs runtime for the
// tool and by process.run for each child.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "core/unique_fd.h"

namespace toolvfs {

// The PATH of every tool process, and the search path for program names
// when the host's own environment has no PATH.
inline constexpr std::string_view kFixedPath = "/usr/local/bin:/usr/bin:/bin";

// A fresh directory (mode 0700) under $TMPDIR or /tmp, named
// toolvfs-tool-XXXXXX, removed with everything in it when the object is
// destroyed. Move-only.
//
// A host killed before that leaves it behind; so the object holds an
// in-use lock on it (core/in_use_lock.h), and the first Create() of each
// toolvfs process removes the toolvfs-tool-* directories of the same
// base that nobody holds and nobody has touched for a minute: those of
// hosts that are gone, never a live host's.
class PrivateTempDir {
 public:
  // Fails naming the pattern and the errno if mkdtemp does.
  static Result<PrivateTempDir> Create();

  PrivateTempDir(PrivateTempDir&& other) noexcept;
  PrivateTempDir& operator=(PrivateTempDir&&) = delete;
  PrivateTempDir(const PrivateTempDir&) = delete;
  PrivateTempDir& operator=(const PrivateTempDir&) = delete;
  ~PrivateTempDir();

  const std::string& path() const { return path_; }

 private:
  PrivateTempDir(std::string path, UniqueFd in_use) : path_(std::move(path)), in_use_(std::move(in_use)) {}
  std::string path_;
  UniqueFd in_use_;  // the directory, locked while it is in use
};

// Removes the toolvfs-tool-* directories of `base` that dead hosts left:
// unlocked, untouched for a minute, and this user's (IsAbandoned in
// core/in_use_lock.h). Best effort: what cannot be read or removed stays.
// PrivateTempDir::Create calls it once per process.
void RemoveAbandonedPrivateTempDirs(const std::string& base);

// {"PATH=<kFixedPath>", "LANG=C.UTF-8", "HOME=<dir>", "TMPDIR=<dir>"}, as
// LaunchSpec::environment entries.
std::vector<std::string> FixedEnvironment(const PrivateTempDir& private_dir);

}  // namespace toolvfs
