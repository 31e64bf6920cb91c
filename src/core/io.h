// EINTR-safe whole-buffer I/O on file descriptors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "core/status.h"
#include "core/unique_fd.h"

namespace toolvfs {

// Writes all of `data` to `fd`, retrying on EINTR and short writes.
// `what` names the target in the error message.
Status WriteFull(int fd, std::string_view data, std::string_view what);

// Reads from `fd` until end of file. Fails with TooLarge, naming `limit`,
// if there are more than `limit` bytes; `size_hint` presizes the buffer and,
// for a regular file (the only kind of fd a caller may give one for), is its
// size from fstat: a short read once that many bytes are in ends the read.
Result<std::string> ReadToEnd(int fd, uint64_t limit, std::string_view what,
                              uint64_t size_hint = 0);

// The same with `what` built only if the read fails: the fs store reads
// files by the thousand, and naming each one up front cost a quoted,
// escaped copy of its path per read.
Result<std::string> ReadToEnd(int fd, uint64_t limit, const std::function<std::string()>& what,
                              uint64_t size_hint = 0);

// Moves `fd` to a number >= 3 (close-on-exec) if it is 0, 1 or 2: a host
// started with stdin, stdout or stderr closed gets those numbers from open()
// and pipe(), and a launched child's dup2 onto 0-2 would then replace them.
Status MoveAboveStandardStreams(UniqueFd& fd, std::string_view what);

// Formats a byte count for messages: "10 MiB", "512 KiB", "17 bytes".
std::string FormatBytes(uint64_t bytes);

}  // namespace toolvfs
