#include "sandbox/private_temp_dir.h"

#include <stdlib.h>

#include <cerrno>
#include <filesystem>
#include <system_error>
#include <utility>

#include "core/text.h"

namespace toolvfs {

Result<PrivateTempDir> PrivateTempDir::Create() {
  const char* base = getenv("TMPDIR");
  std::string pattern =
      std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/toolvfs-tool-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) {
    return ErrnoToStatus(errno, "Cannot create the tool's private temporary directory " + Quote(pattern));
  }
  return PrivateTempDir(std::move(pattern));
}

PrivateTempDir::PrivateTempDir(PrivateTempDir&& other) noexcept : path_(std::exchange(other.path_, {})) {}

PrivateTempDir::~PrivateTempDir() {
  if (path_.empty()) return;
  std::error_code ignored;  // a directory the tool made unremovable is left behind
  std::filesystem::remove_all(path_, ignored);
}

std::vector<std::string> FixedEnvironment(const PrivateTempDir& private_dir) {
  return {
      "PATH=" + std::string(kFixedPath),
      "LANG=C.UTF-8",
      "HOME=" + private_dir.path(),
      "TMPDIR=" + private_dir.path(),
  };
}

}  // namespace toolvfs
