#include "sandbox/vfork_clone.h"

#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>

namespace toolvfs {
namespace {

// The child's stack: 64 KiB above a guard page (PROT_NONE), so an overflow
// faults instead of writing into the parent's memory. The launcher child
// needs a few KiB (glibc's posix_spawn sizes its stack from argv, as
// little as 32 KiB).
constexpr size_t kUsableStackBytes = 64 * 1024;

class ChildStack {
 public:
  ChildStack() = default;
  ChildStack(const ChildStack&) = delete;
  ChildStack& operator=(const ChildStack&) = delete;
  ~ChildStack() {
    if (mapping_ != nullptr) munmap(mapping_, mapping_bytes_);
  }

  // The highest address (the stack grows down on every architecture glibc's
  // clone() supports here), or nullptr with errno.
  void* Top() noexcept {
    if (mapping_ == nullptr && !Map()) return nullptr;
    return static_cast<char*>(mapping_) + mapping_bytes_;
  }

 private:
  bool Map() noexcept {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    const size_t bytes = kUsableStackBytes + page;
    void* mapping = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK | MAP_NORESERVE, -1, 0);
    if (mapping == MAP_FAILED) return false;
    if (mprotect(mapping, page, PROT_NONE) != 0) {
      const int error = errno;
      munmap(mapping, bytes);
      errno = error;
      return false;
    }
    mapping_ = mapping;
    mapping_bytes_ = bytes;
    return true;
  }

  void* mapping_ = nullptr;
  size_t mapping_bytes_ = 0;
};

// One per thread: the thread sleeps while its child runs on it, and the
// child is done with it (exec'ed or exited) when the thread wakes up.
thread_local ChildStack child_stack;

}  // namespace

int PrepareCloneVfork() noexcept { return child_stack.Top() != nullptr ? 0 : errno; }

pid_t CloneVfork(int (*entry)(void*), void* argument) noexcept {
  void* top = child_stack.Top();
  if (top == nullptr) {
    errno = ENOMEM;
    return -1;
  }
  return clone(entry, top, CLONE_VM | CLONE_VFORK | SIGCHLD, argument);
}

}  // namespace toolvfs
