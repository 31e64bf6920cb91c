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

// `prefix`/share/toolvfs/sdk, or "" for no prefix.
std::string SdkUnder(const std::string& prefix) {
  return prefix.empty() ? prefix : (std::filesystem::path(prefix) / "share" / "toolvfs" / "sdk").string();
}

}  // namespace

std::string FindPrefixFrom(const std::string& start_directory) {
  if (start_directory.empty()) return {};
  std::filesystem::path directory(start_directory);
  for (int level = 0; level <= kLevelsSearched; ++level) {
    if (IsDirectory(SdkUnder(directory.string()))) return directory.string();
    if (!directory.has_parent_path() || directory.parent_path() == directory) break;
    directory = directory.parent_path();
  }
  return {};
}

std::string FindSdkDirectoryFrom(const std::string& start_directory) {
  return SdkUnder(FindPrefixFrom(start_directory));
}

const std::string& InstallPrefix() {
  static const std::string prefix = FindPrefixFrom(DirectoryOfThisCode());
  return prefix;
}

const std::string& SdkDirectory() {
  static const std::string directory = [] {
    const char* overridden = std::getenv("TOOLVFS_SDK_DIR");
    if (overridden != nullptr && overridden[0] == '/') return std::string(overridden);
    return SdkUnder(InstallPrefix());
  }();
  return directory;
}

ConfigVariables InstallationVariables() {
  ConfigVariables variables;
  if (!InstallPrefix().empty()) variables.emplace("prefix", InstallPrefix());
  if (!SdkDirectory().empty()) variables.emplace("sdk", SdkDirectory());
  return variables;
}

}  // namespace toolvfs
