// Starting the launcher's child the way posix_spawn does:
// clone(CLONE_VM | CLONE_VFORK) on a stack of its own. The child shares the
// parent's memory until it execs or exits, and the calling thread sleeps
// until then, so nothing is copied: fork() copies the parent's page tables
// (more the larger the host), the child then takes copy-on-write faults,
// and its execve tears the copy down (docs/benchmarks.md, "Process start").
//
// What the child may do (the launcher's RunChild keeps to it): raw,
// async-signal-safe syscalls only. No allocation, no lock, no logging, no
// write to memory the parent will read other than through what it was
// given — it runs on the parent's heap and with the parent thread's TLS
// (errno included: the parent's errno is garbage after the call). Signal
// handlers are the parent's until the child resets them, so the caller
// blocks every signal around the call and the child restores dispositions
// before unblocking. A child that must outlive the call without exec (the
// PID namespace's supervisor) cannot be started this way: the parent would
// sleep until it ends.
//
// Thread safety: any thread may call it; each thread has its own stack for
// its children (the thread sleeps while its child uses it, so one suffices),
// mapped on the first call and unmapped when the thread exits.
#pragma once

#include <sys/types.h>

namespace toolvfs {

// Runs `entry(argument)` in a new process sharing this one's memory and
// returns once that process has called execve successfully or exited: its
// pid, or -1 with errno (ENOMEM: no stack could be mapped). Like fork(), the
// new process gets SIGCHLD as its exit signal, copies of the fd table,
// filesystem information and signal dispositions, and no pthread_atfork
// handler runs. `entry` must not return (the process would _exit with its
// value).
pid_t CloneVfork(int (*entry)(void*), void* argument) noexcept;

// Maps the calling thread's stack for CloneVfork now. The launcher calls it
// before fork() when its forked child will call CloneVfork: the first use
// of the per-thread stack registers its cleanup, which may allocate, and a
// forked child of a multithreaded process must not allocate. Returns 0 or
// errno.
int PrepareCloneVfork() noexcept;

}  // namespace toolvfs
