#include "core/io.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>

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

namespace {

// Where read(2) copies to matters: from the page cache, the kernel's copy
// to user space runs about 3x slower on this project's reference CPU (AMD
// Zen 3) when the destination sits 1-31 bytes past the source modulo
// 4 KiB (docs/benchmarks.md, "Where the time goes"). malloc puts a large
// buffer exactly there, 16 bytes past a page, whenever it maps it or
// carves it from a freshly trimmed heap, so whether a 1 MiB read took
// about 3x longer depended on what had been freed before. Such a buffer is read
// this many bytes further on and moved back (a user-space move of 1 MiB
// costs about 30 µs, at any alignment). Small reads are left alone.
size_t ReadShift(const std::string& buffer, size_t capacity) {
  if (capacity < (size_t{64} << 10)) return 0;
  const size_t misalignment = reinterpret_cast<uintptr_t>(buffer.data()) % 4096;
  return misalignment > 0 && misalignment < 32 ? 64 - misalignment : 0;
}

}  // namespace

Result<std::string> ReadToEnd(int fd, uint64_t limit, std::string_view what,
                              uint64_t size_hint) {
  return ReadToEnd(fd, limit, [what] { return std::string(what); }, size_hint);
}

Result<std::string> ReadToEnd(int fd, uint64_t limit, const std::function<std::string()>& what,
                              uint64_t size_hint) {
  std::string buffer;
  // One byte past the hint lets a file of exactly hint bytes finish in one
  // read plus the read that sees end of file.
  size_t capacity = std::max<size_t>(static_cast<size_t>(std::min<uint64_t>(size_hint, limit)) + 1, 4096);
  buffer.reserve(capacity + 64);  // room for the shift, so that it stays where it is measured
  // The bytes read start at `shift`; `used` counts them.
  const size_t shift = ReadShift(buffer, capacity);
  buffer.resize(shift + capacity);
  size_t used = 0;
  while (true) {
    if (shift + used == buffer.size()) {
      if (used > limit) break;
      buffer.resize(shift + std::min<uint64_t>((buffer.size() - shift) * 2, limit + 1));
      if (shift + used == buffer.size()) break;
    }
    const size_t wanted = buffer.size() - shift - used;
    ssize_t got = ::read(fd, buffer.data() + shift + used, wanted);
    if (got < 0) {
      const int error = errno;  // before what(), which runs the caller's code
      if (error == EINTR) continue;
      return ErrnoToStatus(error, what());
    }
    if (got == 0) break;
    used += static_cast<size_t>(got);
    if (used > limit) break;
    // A regular file returns less than asked only at its end: once the
    // expected size is in, a short read saves the read that returns 0.
    if (size_hint > 0 && used >= size_hint && static_cast<size_t>(got) < wanted) break;
  }
  if (used > limit) {
    return TooLargeError(what() + ": larger than the read limit of " +
                         FormatBytes(limit));
  }
  buffer.resize(shift + used);
  if (shift > 0) buffer.erase(0, shift);
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
