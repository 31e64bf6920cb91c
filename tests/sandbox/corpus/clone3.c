// Attack: clone3 (its flags live in a struct seccomp cannot inspect, so a
// filter that let it through would let any process or namespace through).
// Stopped by: seccomp answering ENOSYS (glibc then falls back to clone,
// whose flags are checked).
#include <linux/sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "corpus.h"

int main(void) {
  read_init();
  struct clone_args args = {.exit_signal = SIGCHLD};
  long pid = syscall(SYS_clone3, &args, sizeof args);
  if (pid == 0) _exit(0);
  int error = errno;
  if (pid > 0) waitpid((pid_t)pid, NULL, 0);
  return report_attempt(pid, error);
}
