// Attack: create the file argv[1] (in /tmp, or in the project) directly.
// Stopped by: Landlock (a vfs tool may write nowhere but its private
// TMPDIR) -> EACCES.
#include <fcntl.h>

#include "corpus.h"

int main(int argc, char** argv) {
  read_init();
  if (argc < 2) return 2;
  int fd = open(argv[1], O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  int error = errno;
  if (fd >= 0 && write(fd, "pwned\n", 6) != 6) error = errno, fd = -1;
  return report_attempt(fd, error);
}
