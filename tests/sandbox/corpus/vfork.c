// Attack: vfork() (the vfork syscall itself, not clone).
// Stopped by: seccomp -> EPERM.
#include <sys/syscall.h>
#include <sys/wait.h>

#include "corpus.h"

int main(void) {
  read_init();
  pid_t pid = vfork();
  if (pid == 0) _exit(0);
  int error = errno;
  if (pid > 0) waitpid(pid, NULL, 0);
  return report_attempt(pid, error);
}
