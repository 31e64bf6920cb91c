// Attack: connect() to a TCP listener on 127.0.0.1:argv[1] (opened by the
// test) and send a byte.
// Stopped by: seccomp (socket() for network families -> EACCES); Landlock
// TCP connect denial (ABI >= 4) would stop connect() too.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "corpus.h"

int main(int argc, char** argv) {
  read_init();
  if (argc < 2) return 2;
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return report_attempt(-1, errno);
  struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons(atoi(argv[1]))};
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, (struct sockaddr*)&address, sizeof address) != 0) return report_attempt(-1, errno);
  long sent = write(fd, "x", 1);
  return report_attempt(sent, errno);
}
