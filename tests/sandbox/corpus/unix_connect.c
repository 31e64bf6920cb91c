// Attack: connect to the path-named unix socket argv[1], which the test
// listens on outside the sandbox (in /tmp): a tmux, Docker or agent socket
// there would run commands outside the sandbox. Landlock up to ABI 7 does
// not govern connect() on socket files, and a process.run child's network
// namespace does not cover path-named sockets.
// Stopped by: seccomp (socket(AF_UNIX, ...) -> EACCES).
#include <sys/socket.h>
#include <sys/un.h>

#include "corpus.h"

int main(int argc, char** argv) {
  read_init();
  if (argc < 2) return 2;
  struct sockaddr_un address = {.sun_family = AF_UNIX};
  if (strlen(argv[1]) + 1 > sizeof address.sun_path) return 2;
  strcpy(address.sun_path, argv[1]);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return report_attempt(-1, errno);
  if (connect(fd, (struct sockaddr*)&address, sizeof address) != 0) return report_attempt(-1, errno);
  long sent = write(fd, "x", 1);
  return report_attempt(sent, errno);
}
