// Not an attack: proves the tool ran, by writing marker.txt through the
// protocol (fs.write, allowed by --allow-write marker.txt), which works
// under the sandbox. The --sandbox tests check it does not appear when the
// run must be refused.
#include "corpus.h"

int main(void) {
  read_init();
  printf("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"fs.write\","
         "\"params\":{\"path\":\"marker.txt\",\"content\":\"ran\"}}\n");
  fflush(stdout);
  char response[4096];
  size_t length = 0;
  char c;
  while (length + 1 < sizeof response && read(STDIN_FILENO, &c, 1) == 1 && c != '\n') {
    response[length++] = c;
  }
  response[length] = '\0';
  report(strstr(response, "\"error\"") == NULL ? "wrote marker" : "fs.write failed");
  return 0;
}
