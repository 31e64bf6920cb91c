// Attack: read a project file with open(), bypassing the protocol and so the
// policy and the audit log. The path comes in the call's arguments
// ({"path": ABSOLUTE}), not on the command line: files named on the
// configured command line are readable by design (the script of
// `python3 tool.py`, SPEC.md §5).
// Stopped by: Landlock (nothing in the project is readable for vfs tools)
// -> EACCES.
#include <fcntl.h>

#include "corpus.h"

int main(void) {
  char init[65536];
  char path[4096];
  read_init_line(init, sizeof init);
  if (string_field(init, "path", path, sizeof path) == NULL) {
    report("no path in the arguments");
    return 0;
  }
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  int error = errno;
  char buffer[64];
  if (fd >= 0 && read(fd, buffer, sizeof buffer) <= 0) error = errno, fd = -1;
  return report_attempt(fd, error);
}
