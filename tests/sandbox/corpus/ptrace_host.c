// Attack: PTRACE_ATTACH to the host (the tool's parent, getppid()), which
// would give the tool the host's memory and so every file it can open.
// Stopped by: seccomp (ptrace denied) -> EPERM; Yama and the dumpable
// flag as well on many machines.
#include <sys/ptrace.h>
#include <sys/wait.h>

#include "corpus.h"

int main(void) {
  read_init();
  pid_t host = getppid();
  long attached = ptrace(PTRACE_ATTACH, host, NULL, NULL);
  int error = errno;
  if (attached == 0) {
    waitpid(host, NULL, __WALL);
    ptrace(PTRACE_DETACH, host, NULL, NULL);
  }
  return report_attempt(attached, error);
}
