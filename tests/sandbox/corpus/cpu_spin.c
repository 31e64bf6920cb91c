// Attack: spin on the CPU forever without answering.
// Stopped by: the host's wall-clock limit (limits.timeout_s): the tool is
// killed and the run ends with exit code 124.
#include "corpus.h"

int main(void) {
  read_init();
  volatile unsigned long counter = 0;
  for (;;) ++counter;
}
