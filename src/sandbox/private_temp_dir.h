// The private directory and the fixed environment every tool process gets
// (SPEC.md §5): PATH, LANG, and HOME and TMPDIR pointing at a directory of
// its own that is removed after the run. Used by the vfs runtime for the
// tool and by process.run for each child.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace toolvfs {

// The PATH of every tool process, and the search path for program names
// when the host's own environment has no PATH.
inline constexpr std::string_view kFixedPath = "/usr/local/bin:/usr/bin:/bin";

// A fresh directory (mode 0700) under $TMPDIR or /tmp, removed with
// everything in it when the object is destroyed. Move-only.
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
  explicit PrivateTempDir(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

// {"PATH=<kFixedPath>", "LANG=C.UTF-8", "HOME=<dir>", "TMPDIR=<dir>"}, as
// LaunchSpec::environment entries.
std::vector<std::string> FixedEnvironment(const PrivateTempDir& private_dir);

}  // namespace toolvfs
