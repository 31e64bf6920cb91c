// Attack: connect to the abstract unix socket "\0argv[1]" the test listens
// on (abstract sockets have no file, so filesystem rules do not see them).
// Stopped by: seccomp (socket(AF_UNIX, ...) -> EACCES); behind it, Landlock
// abstract-unix-socket scoping (ABI >= 6) -> EPERM.
#include <stddef.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "corpus.h"

int main(int argc, char** argv) {
  read_init();
  if (argc < 2) return 2;
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return report_attempt(-1, errno);
  struct sockaddr_un address = {.sun_family = AF_UNIX};
  size_t length = strlen(argv[1]);
  if (length + 1 > sizeof address.sun_path) return 2;
  memcpy(address.sun_path + 1, argv[1], length);
  socklen_t size = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + length);
  if (connect(fd, (struct sockaddr*)&address, size) != 0) return report_attempt(-1, errno);
  long sent = write(fd, "x", 1);
  return report_attempt(sent, errno);
}
