// Attack: SIGKILL the host (getppid()). The host must survive and report
// this tool's result.
// Stopped by: Landlock signal scoping (ABI >= 6: no signals to processes
// outside the tool's domain) -> EPERM.
#include <signal.h>

#include "corpus.h"

int main(void) {
  read_init();
  int killed = kill(getppid(), SIGKILL);
  return report_attempt(killed, errno);
}
