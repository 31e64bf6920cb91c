#include "sandbox/close_fds.h"

#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>

namespace toolvfs {

int FdLoopLimit() {
  constexpr int kCap = 1 << 20;
  struct rlimit limit;
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY &&
      limit.rlim_cur < static_cast<rlim_t>(kCap)) {
    return static_cast<int>(limit.rlim_cur);
  }
  return kCap;
}

bool CloseFdRange(int first, int last, int loop_limit) {
  const unsigned range_end = last < 0 ? ~0U : static_cast<unsigned>(last);
  if (last >= 0 && first > last) return true;
  if (close_range(static_cast<unsigned>(first), range_end, 0) == 0) return true;
  if (errno != ENOSYS && errno != EPERM) return false;
  const int loop_end = last < 0 ? loop_limit - 1 : last;
  for (int fd = first; fd <= loop_end; ++fd) close(fd);
  return true;
}

bool CloseFdsExcept(int first, int* kept, int count, int loop_limit) {
  for (int i = 1; i < count; ++i) {  // insertion sort: a handful of fds
    for (int j = i; j > 0 && kept[j] < kept[j - 1]; --j) {
      const int swap = kept[j];
      kept[j] = kept[j - 1];
      kept[j - 1] = swap;
    }
  }
  int next_to_close = first;
  for (int i = 0; i < count; ++i) {
    if (kept[i] < next_to_close) continue;  // -1, a repeat, or below `first`
    if (!CloseFdRange(next_to_close, kept[i] - 1, loop_limit)) return false;
    next_to_close = kept[i] + 1;
  }
  return CloseFdRange(next_to_close, -1, loop_limit);
}

}  // namespace toolvfs
