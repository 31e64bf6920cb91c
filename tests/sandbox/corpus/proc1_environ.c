// Attack: read /proc/1/environ (init's environment: secrets of the machine
// or of the container).
// Stopped by: Landlock (/proc is not readable) -> EACCES; for an
// unprivileged user the file mode too.
#include <fcntl.h>

#include "corpus.h"

int main(void) {
  read_init();
  int fd = open("/proc/1/environ", O_RDONLY | O_CLOEXEC);
  int error = errno;
  char buffer[64];
  if (fd >= 0 && read(fd, buffer, sizeof buffer) < 0) error = errno, fd = -1;
  return report_attempt(fd, error);
}
