#include "sandbox/private_temp_dir.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>

#include <cerrno>
#include <filesystem>
#include <mutex>
#include <string_view>
#include <system_error>
#include <utility>

#include "core/in_use_lock.h"
#include "core/text.h"

namespace toolvfs {
namespace {

constexpr std::string_view kNamePrefix = "toolvfs-tool-";

}  // namespace

void RemoveAbandonedPrivateTempDirs(const std::string& base) {
  UniqueFd directory(::open(base.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!directory) return;
  DIR* stream = ::fdopendir(::fcntl(directory.get(), F_DUPFD_CLOEXEC, 0));
  if (stream == nullptr) return;
  std::vector<std::string> abandoned;
  while (struct dirent* entry = ::readdir(stream)) {
    if (std::string_view(entry->d_name).starts_with(kNamePrefix) && IsAbandoned(directory.get(), entry->d_name)) {
      abandoned.emplace_back(entry->d_name);
    }
  }
  ::closedir(stream);
  for (const std::string& name : abandoned) {
    std::error_code ignored;
    std::filesystem::remove_all(base + "/" + name, ignored);
  }
}

Result<PrivateTempDir> PrivateTempDir::Create() {
  const char* base_variable = getenv("TMPDIR");
  std::string base = base_variable != nullptr && *base_variable != '\0' ? base_variable : "/tmp";
  static std::once_flag reaped;
  std::call_once(reaped, [&base] { RemoveAbandonedPrivateTempDirs(base); });
  std::string pattern = base + "/" + std::string(kNamePrefix) + "XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) {
    return ErrnoToStatus(errno, "Cannot create the tool's private temporary directory " + Quote(pattern));
  }
  UniqueFd in_use(::open(pattern.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  Status locked = in_use ? LockInUse(in_use.get(), Quote(pattern))
                         : ErrnoToStatus(errno, "Cannot open the tool's private temporary directory " + Quote(pattern));
  if (!locked.ok()) {
    std::error_code ignored;
    std::filesystem::remove_all(pattern, ignored);
    return locked;
  }
  return PrivateTempDir(std::move(pattern), std::move(in_use));
}

PrivateTempDir::PrivateTempDir(PrivateTempDir&& other) noexcept
    : path_(std::exchange(other.path_, {})), in_use_(std::move(other.in_use_)) {}

PrivateTempDir::~PrivateTempDir() {
  if (path_.empty()) return;
  std::error_code ignored;  // a directory the tool made unremovable is left behind
  std::filesystem::remove_all(path_, ignored);
  // in_use_ closes after: the lock outlives the directory.
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
