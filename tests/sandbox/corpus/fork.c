// Attack: fork() (glibc: clone without CLONE_THREAD).
// Stopped by: seccomp (vfs tools create threads only) -> EPERM.
#include <sys/wait.h>

#include "corpus.h"

int main(void) {
  read_init();
  pid_t pid = fork();
  if (pid == 0) _exit(0);
  int error = errno;
  if (pid > 0) waitpid(pid, NULL, 0);
  return report_attempt(pid, error);
}
