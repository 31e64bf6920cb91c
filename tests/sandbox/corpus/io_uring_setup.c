// Attack: io_uring_setup (io_uring performs file and network operations
// without the syscalls seccomp sees).
// Stopped by: seccomp (io_uring_* denied) -> EPERM.
#include <linux/io_uring.h>
#include <sys/syscall.h>

#include "corpus.h"

int main(void) {
  read_init();
  struct io_uring_params params;
  memset(&params, 0, sizeof params);
  long fd = syscall(SYS_io_uring_setup, 4, &params);
  return report_attempt(fd, errno);
}
