// Attack: read /etc/passwd directly instead of asking the host.
// Stopped by: Landlock (only the tool's executable, its interpreter, the
// system library dirs and a few named files are readable) -> EACCES.
#include <fcntl.h>

#include "corpus.h"

int main(void) {
  read_init();
  int fd = open("/etc/passwd", O_RDONLY | O_CLOEXEC);
  int error = errno;
  char buffer[64];
  if (fd >= 0 && read(fd, buffer, sizeof buffer) <= 0) error = errno, fd = -1;
  return report_attempt(fd, error);
}
