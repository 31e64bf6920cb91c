// Linux namespaces of a sandboxed tool process (SPEC.md §5): the step of the
// OS sandbox that gives the tool its own view of users, processes, network,
// System V IPC and mounts "where the kernel allows them". They are a
// backstop on top of Landlock and seccomp, never the only layer, so a kernel
// that refuses them (user namespaces disabled, a container's filter) does
// not stop a tool from starting, even under --sandbox=require; `toolvfs
// doctor` and SandboxProfile::unenforced() (best-effort) say so.
//
// What each namespace gives:
//   user     Unprivileged creation of the others, and RLIMIT_NPROC that
//            counts the tool's own processes instead of every process of
//            the host's user (resource_limits.h). The tool keeps its uid
//            and gid (the outer ids map to themselves, one id each), so
//            files it creates on the host belong to the user who ran
//            toolvfs, and `id` shows nothing surprising. Other ids show as
//            the overflow id (65534); setgroups() is denied.
//   PID      Only for profiles that may create processes (process.run
//            children, stdio tools): the launcher child forks a tiny init
//            (PID 1, which only reaps) and then the tool (PID 2). When the
//            run ends the host SIGKILLs the process group, which includes
//            the init, and the kernel then kills every process left in the
//            namespace — also those that left the group with setsid(). The
//            tool is not PID 1 because PID 1 ignores every signal it has no
//            handler for, and the host's SIGINT/SIGTERM must reach it; the
//            init and the tool stay in the launcher's session and process
//            group. vfs tools get none: seccomp already forbids them any
//            process, and it would cost two forks per start.
//   network  For profiles that may create processes, unless the policy
//            allows network: an empty namespace (only a loopback that is
//            down), so the denial is kernel-level beyond seccomp's socket
//            filter and Landlock's TCP rules. vfs tools get none: seccomp
//            refuses them every socket (unix ones too), and the namespace
//            would cost ~0.5 ms per start (sandbox_profile.cc).
//   IPC      Always: no System V IPC objects or POSIX message queues
//            shared with the host.
//   mount    Always, with every mount made private (no propagation either
//            way). No pivot_root or new root: Landlock decides which files
//            are reachable, and seccomp forbids mount() afterwards.
//
// A vfs tool (the user namespace alone) joins one user namespace per tool
// made once (SharedUserNamespace) instead of creating its own per start.
//
// Order (launcher.cc): EnterUserNamespace, then the resource limits (so
// RLIMIT_NPROC is counted in the new user namespace), then EnterNamespaces,
// then for a PID namespace ForkPidNamespaceInit and the start of the tool
// (clone(CLONE_VM | CLONE_VFORK), vfork_clone.h), then PR_SET_NO_NEW_PRIVS,
// Landlock and seccomp in the tool only.
//
// Thread safety: PlanNamespaces may be called from any thread. The other
// functions are for the launcher child between fork and exec:
// async-signal-safe, no allocation, errors returned as errno values.
#pragma once

#include <sys/types.h>

#include <string>

#include "core/status.h"

namespace toolvfs {

// Which namespaces a profile asks for (the user namespace comes with every
// profile that has namespaces at all).
struct NamespaceOptions {
  bool isolate_network = true;    // CLONE_NEWNET
  bool own_process_tree = false;  // CLONE_NEWPID with a tiny init
  bool isolate_ipc_and_mounts = true;  // CLONE_NEWIPC | CLONE_NEWNS
  friend bool operator==(const NamespaceOptions&, const NamespaceOptions&) = default;
};

// Everything the child needs, as plain data prepared in the parent.
struct NamespacePlan {
  bool enabled = false;
  int flags = 0;  // for EnterNamespaces: CLONE_NEWIPC | CLONE_NEWNS [| NET] [| PID]
  bool pid_namespace = false;
  // "<euid> <euid> 1" and the same for the egid: the caller's ids mapped to
  // themselves (the only mapping an unprivileged process may write).
  char uid_map[32] = {};
  char gid_map[32] = {};
  // >= 0: an existing user namespace to join (SharedUserNamespace) instead
  // of creating one; its id maps are already written.
  int shared_user_namespace_fd = -1;
};

// Parent side: the plan for the calling process's effective uid and gid,
// joining `shared_user_namespace_fd` when it is >= 0.
NamespacePlan PlanNamespaces(const NamespaceOptions& options, int shared_user_namespace_fd = -1);

// The user namespace the starts of one vfs tool share: created on the first
// call for `key` (the tool's name) and the caller's effective uid and gid by a short-lived child that does what
// EnterUserNamespace does, and kept open for the life of the process (a
// close-on-exec fd per key). Joining it with setns costs ~10 µs per start
// where creating one costs ~75 µs (unshare, three /proc writes) plus its
// teardown after the tool exits (docs/benchmarks.md, "Process start").
// What sharing changes: RLIMIT_NPROC counts per user namespace, so
// concurrent runs of one tool count their threads against max_processes
// together; a vfs tool has no other namespace, so nothing else is shared
// (each start still gets its own Landlock domain, which also scopes
// signals on ABI >= 6). Should making it fail, the failure is kept too
// and returned for the key without trying again (the caller then has each
// start create its own). Thread safe; the fd is valid until exit.
Result<int> SharedUserNamespace(const std::string& key);

// setns into plan.shared_user_namespace_fd when it is >= 0; else
// unshare(CLONE_NEWUSER), then /proc/self/setgroups "deny", uid_map and
// gid_map. The caller must be single-threaded and dumpable (after a uid
// change without exec it is not, and /proc/self/uid_map is then root's),
// and for setns must not share its filesystem information (CLONE_FS).
// Returns 0 or errno.
int EnterUserNamespace(const NamespacePlan& plan) noexcept;

// unshare(plan.flags) and, with a mount namespace, makes every mount
// private. Returns 0 or errno.
int EnterNamespaces(const NamespacePlan& plan) noexcept;

// After EnterNamespaces with a PID namespace: forks the namespace's init
// (PID 1), which closes every fd, dies with the caller (PR_SET_PDEATHSIG)
// and reaps orphans until it is killed. Expects every signal blocked (as
// across the launcher's fork); resets SIGCHLD to its default so the
// caller's waitpid sees its children. Returns the init's pid, or -1 with
// errno.
pid_t ForkPidNamespaceInit(int fd_limit) noexcept;

// fork() for the launcher child: the raw syscall, so no pthread_atfork
// handler of the host's libraries runs (they may lock or allocate). Returns
// as fork() does.
pid_t ForkWithoutHandlers() noexcept;

// In the launcher child after it forked the tool (PID 2 of the namespace):
// closes every fd (the pipes belong to the tool; `fd_limit` bounds the
// fallback loop where close_range is missing), waits for the tool, kills
// the init — and with it every process left in the namespace — and ends
// the way the tool ended: same exit status, or killed by the same signal.
[[noreturn]] void SuperviseTool(pid_t tool, pid_t init, int fd_limit) noexcept;

}  // namespace toolvfs
