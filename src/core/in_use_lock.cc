#include "core/in_use_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <thread>
#include <ctime>
#include <string>

#include "core/unique_fd.h"

namespace toolvfs {

Status LockInUse(int fd, std::string_view what) {
  auto deadline = std::chrono::steady_clock::now() + kInUseLockWait;
  auto pause = std::chrono::microseconds(50);
  while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EINTR) continue;
    if (errno != EWOULDBLOCK) return ErrnoToStatus(errno, "Cannot lock " + std::string(what));
    if (std::chrono::steady_clock::now() >= deadline) {
      return ResourceExhaustedError("Cannot lock " + std::string(what) + ": another process has held a lock on it for " +
                                    std::to_string(kInUseLockWait.count()) + " s");
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(20000));
  }
  return OkStatus();
}

bool IsAbandoned(int directory, const char* name) {
  UniqueFd entry(::openat(directory, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  if (!entry) return false;
  struct stat status;
  if (::fstat(entry.get(), &status) != 0) return false;
  if (!S_ISREG(status.st_mode) && !S_ISDIR(status.st_mode)) return false;
  if (status.st_uid != ::geteuid()) return false;
  if (std::time(nullptr) - status.st_mtim.tv_sec < kAbandonedAfter.count()) return false;
  // Held only while we look; closing `entry` releases it.
  return ::flock(entry.get(), LOCK_EX | LOCK_NB) == 0;
}

}  // namespace toolvfs
