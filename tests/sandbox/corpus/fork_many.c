// Attack: a fork bomb that keeps its processes: fork argv[1] children that
// all wait, and count how many the kernel let it have at once. As root the
// kernel never applies RLIMIT_NPROC, so max_processes held only where a
// pids cgroup holds it.
// Stopped by: pids.max of the start's cgroup (as root), RLIMIT_NPROC in
// the user namespace (other users) -> EAGAIN after about max_processes.
// Reports "forked N of M" (and the first errno), then kills its children.
#include <signal.h>
#include <sys/wait.h>

#include "corpus.h"

int main(int argc, char** argv) {
  read_init();
  int wanted = argc > 1 ? atoi(argv[1]) : 300;
  if (wanted < 1 || wanted > 4096) return 2;
  pid_t* children = calloc((size_t)wanted, sizeof *children);
  if (children == NULL) return 2;
  int forked = 0;
  int first_error = 0;
  for (int attempt = 0; attempt < wanted; ++attempt) {
    pid_t child = fork();
    if (child == 0) {
      pause();
      _exit(0);
    }
    if (child < 0) {
      if (first_error == 0) first_error = errno;
      continue;
    }
    children[forked++] = child;
  }
  for (int index = 0; index < forked; ++index) kill(children[index], SIGKILL);
  for (int index = 0; index < forked; ++index) waitpid(children[index], NULL, 0);
  char text[128];
  snprintf(text, sizeof text, "forked %d of %d: %s", forked, wanted,
           first_error == 0 ? "no error" : strerrorname_np(first_error));
  report(text);
  return 0;
}
