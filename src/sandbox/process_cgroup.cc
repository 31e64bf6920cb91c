#include "sandbox/process_cgroup.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <ctime>
#include <fstream>
#include <optional>
#include <sstream>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "core/in_use_lock.h"
#include "core/io.h"

namespace toolvfs {
namespace {

constexpr std::string_view kDirectoryPrefix = "toolvfs-";

struct CgroupParent {
  std::string directory;    // empty: none
  std::string description;  // where, or why none
};

std::optional<std::string> ReadSmallFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream content;
  content << in.rdbuf();
  return content.str();
}

std::vector<std::string_view> Split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  while (true) {
    const size_t at = text.find(separator);
    parts.push_back(text.substr(0, at));
    if (at == std::string_view::npos) return parts;
    text.remove_prefix(at + 1);
  }
}

bool ListContains(std::string_view list, std::string_view word, char separator) {
  for (const std::string_view part : Split(list, separator)) {
    if (part == word) return true;
  }
  return false;
}

// The host's cgroup directory in the hierarchy with the pids controller.
// /proc/self/cgroup lines are "ID:CONTROLLERS:PATH" ("0::PATH" for v2);
// mountinfo lines "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS ... - FSTYPE
// SOURCE SUPER_OPTIONS". Mount points with spaces (octal escapes) are not
// expected under /sys/fs/cgroup and are skipped.
CgroupParent FindCgroupParent() {
  const std::optional<std::string> cgroups = ReadSmallFile("/proc/self/cgroup");
  const std::optional<std::string> mounts = ReadSmallFile("/proc/self/mountinfo");
  if (!cgroups || !mounts) return {"", "cannot read /proc/self/cgroup or /proc/self/mountinfo"};
  std::optional<std::string> v1_path, v2_path;
  for (const std::string_view line : Split(*cgroups, '\n')) {
    const std::vector<std::string_view> fields = Split(line, ':');
    if (fields.size() < 3) continue;
    // The path may itself contain ':'.
    const std::string path(line.substr(fields[0].size() + fields[1].size() + 2));
    if (fields[0] == "0" && fields[1].empty()) v2_path = path;
    if (ListContains(fields[1], "pids", ',')) v1_path = path;
  }
  for (const std::string_view line : Split(*mounts, '\n')) {
    const size_t dash = line.find(" - ");
    if (dash == std::string_view::npos) continue;
    const std::vector<std::string_view> fields = Split(line.substr(0, dash), ' ');
    const std::vector<std::string_view> tail = Split(line.substr(dash + 3), ' ');
    if (fields.size() < 5 || tail.size() < 3) continue;
    const std::string_view root = fields[3];
    const std::string_view mount_point = fields[4];
    const bool v1 = tail[0] == "cgroup" && ListContains(tail[2], "pids", ',') && v1_path;
    const bool v2 = tail[0] == "cgroup2" && v2_path && !v1_path;
    if (!v1 && !v2) continue;
    // The host's path relative to the mount's root (a container sees its
    // own cgroup as the root of a cgroup-namespaced mount).
    std::string_view path = v1 ? *v1_path : *v2_path;
    if (root != "/") {
      if (!path.starts_with(root)) continue;
      path.remove_prefix(root.size());
    }
    std::string directory(mount_point);
    if (!path.empty() && path != "/") directory += path;
    if (v2) {
      // Child cgroups get the pids controller only if this one delegates it.
      const std::optional<std::string> delegated =
          ReadSmallFile(directory + "/cgroup.subtree_control");
      std::string_view controllers = delegated ? std::string_view(*delegated) : "";
      while (controllers.ends_with('\n')) controllers.remove_suffix(1);
      if (!ListContains(controllers, "pids", ' ')) {
        return {"", "cgroup v2 at " + directory + " does not delegate the pids controller"};
      }
      return {directory, "cgroup v2 pids controller at " + directory};
    }
    return {directory, "cgroup v1 pids controller at " + directory};
  }
  return {"", "no cgroup hierarchy with the pids controller is mounted"};
}

// Removes toolvfs-PID-N directories of hosts that are gone (a host killed
// with SIGKILL cannot remove its own); rmdir fails harmlessly on any that
// still holds tasks. Only those older than a minute: a host in another PID
// namespace (kill() cannot see it) may have just made one it has not
// joined yet.
void RemoveLeftovers(const std::string& parent) {
  DIR* directory = opendir(parent.c_str());
  if (directory == nullptr) return;
  while (const dirent* entry = readdir(directory)) {
    const std::string_view name = entry->d_name;
    if (!name.starts_with(kDirectoryPrefix)) continue;
    const std::string_view rest = name.substr(kDirectoryPrefix.size());
    pid_t owner = 0;
    const auto [end, error] = std::from_chars(rest.data(), rest.data() + rest.size(), owner);
    if (error != std::errc() || end == rest.data() || *end != '-' || owner <= 0) continue;
    if (owner == getpid() || kill(owner, 0) == 0 || errno != ESRCH) continue;
    const std::string path = parent + "/" + std::string(name);
    struct stat status;
    if (stat(path.c_str(), &status) != 0 || time(nullptr) - status.st_mtime < kAbandonedAfter.count()) continue;
    (void)rmdir(path.c_str());
  }
  closedir(directory);
}

Status WriteSmallFile(const std::string& path, std::string_view text) {
  UniqueFd file(open(path.c_str(), O_WRONLY | O_CLOEXEC));
  if (!file) return ErrnoToStatus(errno, "Cannot open " + path);
  return WriteFull(file.get(), text, path);
}

std::atomic<uint64_t> next_cgroup_number{0};

const std::pair<FeatureProbe, std::string>& CachedProbe() {
  static const std::pair<FeatureProbe, std::string> probe = [] {
    const CgroupParent parent = FindCgroupParent();
    if (parent.directory.empty()) {
      return std::pair(FeatureProbe{.available = false, .detail = parent.description}, std::string());
    }
    RemoveLeftovers(parent.directory);
    // Only a real cgroup with a limit proves the directory writable.
    Result<ProcessCgroup> trial = ProcessCgroup::Create(parent.directory, 1);
    if (!trial.ok()) {
      return std::pair(FeatureProbe{.available = false,
                                    .detail = parent.description + ": " + trial.status().message()},
                       std::string());
    }
    return std::pair(FeatureProbe{.available = true, .detail = parent.description},
                     parent.directory);
  }();
  return probe;
}

}  // namespace

FeatureProbe ProbeProcessCgroups() { return CachedProbe().first; }

const std::string& ProcessCgroupParent() { return CachedProbe().second; }

Result<ProcessCgroup> ProcessCgroup::Create(const std::string& parent, uint64_t max_tasks) {
  const std::string path = parent + "/" + std::string(kDirectoryPrefix) + std::to_string(getpid()) +
                           "-" + std::to_string(next_cgroup_number.fetch_add(1));
  if (mkdir(path.c_str(), 0755) != 0) {
    return ErrnoToStatus(errno, "Cannot create the process-limit cgroup " + path);
  }
  // Owns the directory from here: an error below removes it.
  ProcessCgroup cgroup(path, UniqueFd());
  TOOLVFS_RETURN_IF_ERROR(WriteSmallFile(path + "/pids.max", std::to_string(max_tasks)));
  cgroup.procs_.reset(open((path + "/cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC));
  if (!cgroup.procs_) return ErrnoToStatus(errno, "Cannot open " + path + "/cgroup.procs");
  return cgroup;
}

ProcessCgroup::ProcessCgroup(ProcessCgroup&& other) noexcept
    : path_(std::exchange(other.path_, std::string())), procs_(std::move(other.procs_)) {}

ProcessCgroup& ProcessCgroup::operator=(ProcessCgroup&& other) noexcept {
  if (this != &other) {
    Remove();
    path_ = std::exchange(other.path_, std::string());
    procs_ = std::move(other.procs_);
  }
  return *this;
}

ProcessCgroup::~ProcessCgroup() { Remove(); }

void ProcessCgroup::Remove() noexcept {
  procs_.reset();
  if (path_.empty()) return;
  const int saved_errno = errno;
  // Tasks of a PID namespace die with its init, a moment after the host's
  // process-group kill; anything else left (no PID namespace, or a task
  // that left the group) is killed by pid. A pid read from cgroup.procs
  // belongs to this cgroup at that moment; only a pid reused between the
  // read and the kill could hit another process, within microseconds.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  auto pause = std::chrono::microseconds(100);
  for (int attempt = 0;; ++attempt) {
    if (rmdir(path_.c_str()) == 0 || errno == ENOENT) break;
    if (errno != EBUSY || std::chrono::steady_clock::now() >= deadline) break;
    if (attempt >= 3) {
      if (const std::optional<std::string> tasks = ReadSmallFile(path_ + "/cgroup.procs")) {
        for (const std::string_view line : Split(*tasks, '\n')) {
          pid_t pid = 0;
          const auto [end, error] = std::from_chars(line.data(), line.data() + line.size(), pid);
          if (error == std::errc() && pid > 0) kill(pid, SIGKILL);
        }
      }
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(50'000));
  }
  path_.clear();
  errno = saved_errno;
}

}  // namespace toolvfs
