// Attack: a socket of a socketpair (which cannot reach outside as a pair)
// re-targeted at the path-named datagram socket argv[1] the test binds in
// /tmp: a datagram end's connect() and sendto() name any socket file, such
// as /dev/log or a daemon's.
// Stopped by: seccomp (socketpair(AF_UNIX, SOCK_DGRAM, ...) -> EACCES).
#include <sys/socket.h>
#include <sys/un.h>

#include "corpus.h"

int main(int argc, char** argv) {
  read_init();
  if (argc < 2) return 2;
  struct sockaddr_un address = {.sun_family = AF_UNIX};
  if (strlen(argv[1]) + 1 > sizeof address.sun_path) return 2;
  strcpy(address.sun_path, argv[1]);
  int pair[2];
  if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, pair) != 0) return report_attempt(-1, errno);
  long sent = sendto(pair[0], "x", 1, 0, (struct sockaddr*)&address, sizeof address);
  return report_attempt(sent, errno);
}
