// Attack: a fork bomb. Bounded (at most 64 forks, children exit at once) so
// that a broken sandbox fails the test instead of the machine.
// Stopped by: seccomp (no process creation for vfs tools): the first fork
// fails with EPERM.
#include <sys/wait.h>

#include "corpus.h"

int main(void) {
  read_init();
  for (int count = 1; count <= 64; ++count) {
    pid_t pid = fork();
    if (pid == 0) _exit(0);
    if (pid < 0) {
      char text[64];
      const char* name = strerrorname_np(errno);
      snprintf(text, sizeof text, "%s at fork %d", name != NULL ? name : "?", count);
      report(text);
      return 0;
    }
  }
  while (wait(NULL) > 0) {
  }
  report("succeeded: 64 forks");
  return 0;
}
