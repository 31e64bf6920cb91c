// Attack: send a UDP datagram to 127.0.0.1:argv[1] (a socket the test
// bound).
// Stopped by: seccomp (socket() for network families -> EACCES).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "corpus.h"

int main(int argc, char** argv) {
  read_init();
  if (argc < 2) return 2;
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return report_attempt(-1, errno);
  struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons(atoi(argv[1]))};
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  long sent = sendto(fd, "x", 1, 0, (struct sockaddr*)&address, sizeof address);
  return report_attempt(sent, errno);
}
