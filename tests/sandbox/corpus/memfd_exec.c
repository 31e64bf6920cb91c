// Attack: run a program the policy never allowed, from memory: copy this
// very program (readable: it is the tool's own executable) into a memfd and
// execveat(fd, "", AT_EMPTY_PATH) it. No Landlock rule governs a memfd, so
// only its executability stands in the way. The copy, started with
// "--payload", reports "succeeded".
// Stopped by: seccomp (memfd_create without MFD_NOEXEC_SEAL -> EACCES).
// Reports the errno of the executable memfd, but only after checking that
// a memfd that can never be executed (MFD_NOEXEC_SEAL) is still allowed;
// "noexec memfd refused: ..." otherwise. A kernel before 6.3 does not know
// the flag (EINVAL): there the check is skipped.
#include <fcntl.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "corpus.h"

#ifndef MFD_NOEXEC_SEAL
#define MFD_NOEXEC_SEAL 0x0008U
#endif

extern char** environ;

int main(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "--payload") == 0) {
    report("succeeded");
    return 0;
  }
  read_init();
  int sealed = memfd_create("toolvfs-corpus-sealed", MFD_CLOEXEC | MFD_NOEXEC_SEAL);
  if (sealed < 0 && errno != EINVAL) {
    char text[128];
    snprintf(text, sizeof text, "noexec memfd refused: %s", strerrorname_np(errno));
    report(text);
    return 0;
  }
  if (sealed >= 0) close(sealed);

  const char* self = (const char*)getauxval(AT_EXECFN);
  int source = self != NULL ? open(self, O_RDONLY | O_CLOEXEC) : -1;
  if (source < 0) {
    report("cannot read own executable");
    return 0;
  }
  int memory = memfd_create("toolvfs-corpus-payload", MFD_CLOEXEC);
  if (memory < 0) return report_attempt(-1, errno);
  char buffer[65536];
  long length;
  while ((length = read(source, buffer, sizeof buffer)) > 0) {
    if (write(memory, buffer, (size_t)length) != length) return report_attempt(-1, errno);
  }
  char payload[] = "--payload";
  char* payload_argv[] = {argv[0], payload, NULL};
  syscall(SYS_execveat, memory, "", payload_argv, environ, AT_EMPTY_PATH);
  return report_attempt(-1, errno);
}
