#include "runtime/sdk_location.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace toolvfs {
namespace {

constexpr int kLevelsSearched = 4;  // bin/, lib/, lib/x86_64-linux-gnu/, tests/AREA/

bool IsDirectory(const std::string& path) {
  struct stat status {};
  return ::stat(path.c_str(), &status) == 0 && S_ISDIR(status.st_mode);
}

// The directory of the file this function's code was loaded from.
std::string DirectoryOfThisCode() {
  Dl_info info{};
  if (::dladdr(reinterpret_cast<const void*>(&DirectoryOfThisCode), &info) == 0 ||
      info.dli_fname == nullptr) {
    return {};
  }
  std::error_code error;
  // dli_fname is argv[0]-like for the main program (maybe relative, maybe a
  // symlink such as /usr/local/bin/toolvfs -> ../../opt/...); the real file
  // is what sits in the prefix.
  std::filesystem::path file = std::filesystem::canonical(info.dli_fname, error);
  if (error) file = std::filesystem::canonical("/proc/self/exe", error);
  if (error) return {};
  return file.parent_path().string();
}

}  // namespace

std::string FindSdkDirectoryFrom(const std::string& start_directory) {
  if (start_directory.empty()) return {};
  std::filesystem::path directory(start_directory);
  for (int level = 0; level <= kLevelsSearched; ++level) {
    std::string candidate = (directory / "share" / "toolvfs" / "sdk").string();
    if (IsDirectory(candidate)) return candidate;
    if (!directory.has_parent_path() || directory.parent_path() == directory) break;
    directory = directory.parent_path();
  }
  return {};
}

const std::string& SdkDirectory() {
  static const std::string directory = [] {
    const char* overridden = std::getenv("TOOLVFS_SDK_DIR");
    if (overridden != nullptr && overridden[0] == '/') return std::string(overridden);
    return FindSdkDirectoryFrom(DirectoryOfThisCode());
  }();
  return directory;
}

}  // namespace toolvfs
