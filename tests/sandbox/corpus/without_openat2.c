// Not an attack: the environment of a container whose seccomp profile
// refuses openat2 (older Docker and runc profiles answered ENOSYS), for the
// host rather than the tool. Installs a filter that fails openat2 with
// ENOSYS (argv[1] == "EPERM": with EPERM), then execs argv[2..], which
// inherits it. Exits 125 if the filter does not take.
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_openat2
#define SYS_openat2 437
#endif

#if defined(__x86_64__)
#define THIS_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define THIS_ARCH AUDIT_ARCH_AARCH64
#else
#error "without_openat2: add this architecture's AUDIT_ARCH"
#endif

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: without_openat2 ENOSYS|EPERM PROGRAM [ARGS]\n");
    return 125;
  }
  const int error = strcmp(argv[1], "EPERM") == 0 ? EPERM : ENOSYS;
  struct sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, THIS_ARCH, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat2, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (unsigned)error),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog program = {.len = sizeof filter / sizeof filter[0], .filter = filter};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) != 0) {
    perror("without_openat2: installing the filter");
    return 125;
  }
  if (syscall(SYS_openat2, AT_FDCWD, ".", NULL, 0) != -1 || errno != error) {
    fprintf(stderr, "without_openat2: openat2 is not refused\n");
    return 125;
  }
  execv(argv[2], argv + 2);
  perror("without_openat2: execv");
  return 127;
}
