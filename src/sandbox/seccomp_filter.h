// The seccomp filter of the OS sandbox (SPEC.md §5): which system calls a tool
// process may not make at all, whatever Landlock and the namespaces allow.
//
// The BPF program is built once per tool configuration in the parent
// (BuildSeccompProgram) and only installed by the child between fork and exec
// (ApplySeccompProgram), so a tool start costs one syscall and the child
// never allocates. The program is written here, not by libseccomp, because
// the install is paid on every start and grows with the program: the kernel
// converts and JIT-compiles every instruction and runs the filter once per
// syscall number to fill its allow cache. A search over ranges of syscall
// numbers plus mask tests for clone's flags takes 73 instructions and ~9.1
// steps per syscall number for the vfs row where libseccomp's binary tree
// takes 166 and ~14.6 (an install cost ~44 instead of ~61 µs here, ~17 µs
// for a 1-instruction filter, measured at 65 against 137 instructions,
// before the socketpair and memfd_create checks). libseccomp still resolves the syscall names,
// and BuildSeccompProgramWithLibseccomp compiles the same rules with it as
// the reference the tests compare the written program against.
//
// Design: default-allow with explicit denials. Tools are arbitrary programs
// (C++, Python, Node, build tools) over whatever libc and runtime the machine
// has; an allowlist of the hundreds of syscalls those need breaks tools on
// every libc or kernel upgrade, and Landlock, not seccomp, is what confines
// files. The filter removes what no tool needs and what would bypass the
// other layers: kernel attack surface (bpf, io_uring, perf_event_open,
// userfaultfd, keyrings, kernel modules, kexec), escapes from the namespaces
// and mounts (mount and the new mount API, pivot_root, unshare, setns, clone
// with namespace flags), other processes' memory (ptrace, process_vm_*),
// sockets that could reach outside (socket() for AF_UNIX, whose connect()
// to a path-named socket Landlock up to ABI 7 does not govern, and for the
// network unless the policy allows it; socketpair() but for AF_UNIX stream
// and seqpacket pairs), executable memfds (memfd_create without
// MFD_NOEXEC_SEAL: no Landlock rule governs what a memfd runs), terminal
// injection (TIOCSTI) and, for vfs tools, process creation except threads.
// Denials return an errno (EPERM; EACCES for sockets and memfd_create, as the
// kernel's own refusals of those read; ENOSYS for clone3) rather than killing,
// so a tool reports a clear error instead of vanishing. The price of
// default-allow: a syscall added by a future kernel is allowed until it is
// listed here. Syscalls this libseccomp does not know are skipped (they are
// listed in SeccompProgram::unknown_syscalls() for the doctor).
//
// Other architectures: only the native ABI is allowed. A syscall made through
// another ABI (int 0x80 i386 calls, x32 calls on x86_64) kills the process
// (SECCOMP_RET_KILL_PROCESS), so 32-bit syscall numbers cannot slip past
// rules written for 64-bit ones.
//
// execve stays allowed: the filter is installed before the tool's own
// execve. Which files may be executed is Landlock's job
// (LANDLOCK_ACCESS_FS_EXECUTE); a vfs tool cannot start a process to run
// them anyway (fork/vfork/clone without CLONE_THREAD are denied).
//
// Options by runtime (the launcher decides; SeccompOptions{} is the vfs row):
//
//   runtime              allow_process_creation  deny_network_sockets
//   vfs                  false                   true
//   stdio, MCP servers   true                    policy allows no network
//   process.run child    true                    caller's policy allows no network
//
// Thread safety: BuildSeccompProgram may be called from any thread; a
// SeccompProgram is immutable once built and may be shared by reference
// across threads and forks. Between fork and exec only ApplySeccompProgram
// and SeccompProgram::program() may be called (no allocation, no locks).
#pragma once

#include <linux/filter.h>

#include <string>
#include <utility>
#include <vector>

#include "core/status.h"

namespace toolvfs {

struct SeccompOptions {
  // false: fork, vfork and clone without CLONE_THREAD fail with EPERM, so
  // only threads can be created (pthread_create, std::thread); System V
  // IPC and POSIX message queues fail with EPERM too (no IPC namespace).
  bool allow_process_creation = false;
  // true: socket() fails with EACCES for every family, AF_UNIX included.
  // false: AF_INET, AF_INET6 and AF_NETLINK (getaddrinfo) are allowed.
  // Other families (AF_UNIX, AF_PACKET, AF_ALG, AF_VSOCK, ...) are always
  // denied. Either way socketpair() allows exactly AF_UNIX SOCK_STREAM and
  // SOCK_SEQPACKET pairs, whose ends reach only each other.
  bool deny_network_sockets = true;
  friend bool operator==(const SeccompOptions&, const SeccompOptions&) = default;
};

// A compiled filter: classic BPF instructions ready for seccomp(2).
// Move-only; program() points into this object, so it must outlive every
// child that applies it (until the child has exec'ed).
class SeccompProgram {
 public:
  SeccompProgram(SeccompProgram&&) noexcept = default;
  SeccompProgram& operator=(SeccompProgram&&) noexcept = default;
  SeccompProgram(const SeccompProgram&) = delete;
  SeccompProgram& operator=(const SeccompProgram&) = delete;

  // The program for ApplySeccompProgram. Async-signal-safe.
  sock_fprog program() const noexcept {
    return sock_fprog{.len = static_cast<unsigned short>(instructions_.size()),
                      .filter = const_cast<sock_filter*>(instructions_.data())};
  }
  size_t instruction_count() const { return instructions_.size(); }

  // Syscall names this libseccomp does not know for the native architecture,
  // hence not denied; empty on a current system.
  const std::vector<std::string>& unknown_syscalls() const { return unknown_syscalls_; }

 private:
  friend Result<SeccompProgram> BuildSeccompProgram(const SeccompOptions& options);
  friend Result<SeccompProgram> BuildSeccompProgramWithLibseccomp(const SeccompOptions& options);
  SeccompProgram(std::vector<sock_filter> instructions, std::vector<std::string> unknown_syscalls)
      : instructions_(std::move(instructions)), unknown_syscalls_(std::move(unknown_syscalls)) {}

  std::vector<sock_filter> instructions_;
  std::vector<std::string> unknown_syscalls_;
};

// Builds the filter for `options`: a search over ranges of syscall numbers;
// only clone, socket, socketpair, memfd_create and ioctl read an argument
// (socket none when the network is denied), so every other
// syscall's answer is constant and cached by the kernel. Fails with Internal
// only on a bug here (a jump the program cannot encode). Takes ~0.1 ms
// here: build once per tool configuration, not per start.
Result<SeccompProgram> BuildSeccompProgram(const SeccompOptions& options);

// The same rules compiled by libseccomp (its binary tree; 166 instructions
// for the vfs row): the reference against which the tests check
// BuildSeccompProgram's decisions, syscall by syscall. Not for the launcher,
// whose starts would pay for the longer program. Fails with Internal if
// libseccomp rejects a rule and with the errno's code if the program cannot
// be exported. Takes 0.1–0.2 ms.
Result<SeccompProgram> BuildSeccompProgramWithLibseccomp(const SeccompOptions& options);

// Installs `program` on the calling thread (only: the child between fork and
// exec is single-threaded, so no SECCOMP_FILTER_FLAG_TSYNC). Needs
// PR_SET_NO_NEW_PRIVS set first (or CAP_SYS_ADMIN), else EACCES. Filters
// stack: one installed earlier (a container's) still applies. Returns 0, or
// the errno of seccomp(2) (prctl(PR_SET_SECCOMP) where seccomp(2) is
// missing). Async-signal-safe: meant for the child between fork and exec.
int ApplySeccompProgram(const sock_fprog& program) noexcept;

}  // namespace toolvfs
