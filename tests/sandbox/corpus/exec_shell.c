// Attack: execve("/bin/sh"). If it ran, the shell itself would answer
// "succeeded" (it inherits the protocol's stdout).
// Stopped by: Landlock (execute is granted only on the tool's own
// executable and interpreter, not on /bin/sh) -> EACCES.
#include "corpus.h"

int main(void) {
  read_init();
  char* argv[] = {"sh", "-c",
                  "echo '{\"jsonrpc\":\"2.0\",\"method\":\"result\",\"params\":{\"content\":\"succeeded: sh ran\"}}'",
                  NULL};
  char* envp[] = {NULL};
  execve("/bin/sh", argv, envp);
  report_errno(errno);
  return 0;
}
