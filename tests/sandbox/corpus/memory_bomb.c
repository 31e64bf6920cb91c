// Attack: allocate and touch memory until something gives (bounded at
// 1 GiB so a broken limit fails the test rather than the machine).
// Stopped by: the address-space rlimit from limits.memory_mb: malloc fails
// (ENOMEM) or the tool is killed.
#include "corpus.h"

int main(void) {
  read_init();
  enum { kChunk = 1 << 20, kMaxChunks = 1024 };
  for (int chunks = 0; chunks < kMaxChunks; ++chunks) {
    char* block = malloc(kChunk);
    if (block == NULL) {
      char text[64];
      snprintf(text, sizeof text, "ENOMEM after %d MiB", chunks);
      report(text);
      return 0;
    }
    memset(block, 0x5a, kChunk);
  }
  report("succeeded: 1024 MiB");
  return 0;
}
