#include "core/io.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace toolvfs {

Status WriteFull(int fd, std::string_view data, std::string_view what) {
  while (!data.empty()) {
    ssize_t written = ::write(fd, data.data(), data.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      return ErrnoToStatus(errno, what);
    }
    data.remove_prefix(static_cast<size_t>(written));
  }
  return OkStatus();
}

Status MoveAboveStandardStreams(UniqueFd& fd, std::string_view what) {
  if (fd.get() >= 3) return OkStatus();
  const int moved = fcntl(fd.get(), F_DUPFD_CLOEXEC, 3);
  if (moved < 0) return ErrnoToStatus(errno, what);
  fd.reset(moved);
  return OkStatus();
}

Result<std::string> ReadToEnd(int fd, uint64_t limit, std::string_view what,
                              uint64_t size_hint) {
  std::string buffer;
  // One byte past the hint lets a file of exactly hint bytes finish in one
  // read plus the read that sees end of file.
  size_t capacity = static_cast<size_t>(std::min<uint64_t>(size_hint, limit)) + 1;
  buffer.resize(std::max<size_t>(capacity, 4096));
  size_t used = 0;
  while (true) {
    if (used == buffer.size()) {
      if (used > limit) break;
      buffer.resize(std::min<uint64_t>(buffer.size() * 2, limit + 1));
      if (used == buffer.size()) break;
    }
    const size_t wanted = buffer.size() - used;
    ssize_t got = ::read(fd, buffer.data() + used, wanted);
    if (got < 0) {
      if (errno == EINTR) continue;
      return ErrnoToStatus(errno, what);
    }
    if (got == 0) break;
    used += static_cast<size_t>(got);
    if (used > limit) break;
    // A regular file returns less than asked only at its end: once the
    // expected size is in, a short read saves the read that returns 0.
    if (size_hint > 0 && used >= size_hint && static_cast<size_t>(got) < wanted) break;
  }
  if (used > limit) {
    return TooLargeError(std::string(what) + ": larger than the read limit of " +
                         FormatBytes(limit));
  }
  buffer.resize(used);
  return buffer;
}

std::string FormatBytes(uint64_t bytes) {
  constexpr uint64_t kKiB = 1024, kMiB = kKiB * 1024, kGiB = kMiB * 1024;
  if (bytes >= kGiB && bytes % kGiB == 0) return std::to_string(bytes / kGiB) + " GiB";
  if (bytes >= kMiB && bytes % kMiB == 0) return std::to_string(bytes / kMiB) + " MiB";
  if (bytes >= kKiB && bytes % kKiB == 0) return std::to_string(bytes / kKiB) + " KiB";
  return std::to_string(bytes) + (bytes == 1 ? " byte" : " bytes");
}

}  // namespace toolvfs
