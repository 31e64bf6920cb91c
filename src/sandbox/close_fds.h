// Closing the file descriptors a child inherited, between fork (or clone)
// and execve: async-signal-safe, no allocation.
#pragma once

namespace toolvfs {

// The highest fd count the fallback loops below need to cover: the
// RLIMIT_NOFILE soft limit, capped at 2^20. Call it in the parent.
int FdLoopLimit();

// Closes [first, last] (last == -1: through the highest possible fd) with
// close_range where the kernel has it, else (ENOSYS, or EPERM from a
// seccomp filter) with a plain loop below `loop_limit`; no /proc walk,
// which would allocate. False with errno on another close_range error.
bool CloseFdRange(int first, int last, int loop_limit);

// Closes every fd from `first` up except the `count` ones in `kept`
// (sorted in place; -1 and repeats are fine).
bool CloseFdsExcept(int first, int* kept, int count, int loop_limit);

}  // namespace toolvfs
