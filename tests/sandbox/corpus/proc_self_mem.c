// Attack: write to /proc/self/mem (the classic way to patch one's own code
// or bypass memory protections, and a step toward other processes' mem).
// Stopped by: Landlock (/proc is not in the readable or writable set)
// -> EACCES.
#include <fcntl.h>
#include <stdint.h>

#include "corpus.h"

static volatile int target = 1;

int main(void) {
  read_init();
  int fd = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
  if (fd < 0) return report_attempt(-1, errno);
  int value = 2;
  long written = pwrite(fd, &value, sizeof value, (off_t)(uintptr_t)&target);
  return report_attempt(written, errno);
}
