#include "sandbox/namespaces.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace toolvfs {
namespace {

// Writes `text` to `path` in one write(); returns 0 or errno. /proc's id
// map files accept exactly one write per open.
int WriteProcFile(const char* path, const char* text) noexcept {
  const int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  const size_t length = strlen(text);
  ssize_t written;
  do {
    written = write(fd, text, length);
  } while (written < 0 && errno == EINTR);
  const int error = written < 0 ? errno : (static_cast<size_t>(written) == length ? 0 : EIO);
  close(fd);
  return error;
}

// Every fd of the calling process, with close_range where the kernel has it.
void CloseAllFds(int fd_limit) noexcept {
  if (close_range(0, ~0U, 0) == 0) return;
  for (int fd = 0; fd < fd_limit; ++fd) close(fd);
}

pid_t WaitPidRetrying(pid_t pid, int* wait_status) noexcept {
  pid_t result;
  do {
    result = waitpid(pid, wait_status, 0);
  } while (result < 0 && errno == EINTR);
  return result;
}

}  // namespace

NamespacePlan PlanNamespaces(const NamespaceOptions& options) {
  NamespacePlan plan;
  plan.enabled = true;
  plan.flags = options.isolate_ipc_and_mounts ? CLONE_NEWIPC | CLONE_NEWNS : 0;
  if (options.isolate_network) plan.flags |= CLONE_NEWNET;
  if (options.own_process_tree) plan.flags |= CLONE_NEWPID;
  plan.pid_namespace = options.own_process_tree;
  const unsigned uid = geteuid();
  const unsigned gid = getegid();
  snprintf(plan.uid_map, sizeof plan.uid_map, "%u %u 1\n", uid, uid);
  snprintf(plan.gid_map, sizeof plan.gid_map, "%u %u 1\n", gid, gid);
  return plan;
}

int EnterUserNamespace(const NamespacePlan& plan) noexcept {
  if (unshare(CLONE_NEWUSER) != 0) return errno;
  // Without CAP_SETGID in the parent namespace, gid_map may only be written
  // once setgroups() is denied (else dropping a group could grant access).
  if (int error = WriteProcFile("/proc/self/setgroups", "deny"); error != 0) return error;
  if (int error = WriteProcFile("/proc/self/uid_map", plan.uid_map); error != 0) return error;
  return WriteProcFile("/proc/self/gid_map", plan.gid_map);
}

int EnterNamespaces(const NamespacePlan& plan) noexcept {
  if (plan.flags == 0) return 0;  // the user namespace alone
  if (unshare(plan.flags) != 0) return errno;
  // No mount event of the tool's namespace reaches the host, nor the other
  // way round (a new mount namespace in a user namespace already turns
  // shared mounts into slaves; private also stops host events).
  if ((plan.flags & CLONE_NEWNS) != 0 &&
      mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
    return errno;
  }
  return 0;
}

pid_t ForkPidNamespaceInit(int fd_limit) noexcept {
  // The host may ignore SIGCHLD (auto-reaping), which would make the
  // supervisor's waitpid fail; the tool resets every disposition anyway.
  struct sigaction default_action;
  memset(&default_action, 0, sizeof default_action);
  default_action.sa_handler = SIG_DFL;
  if (sigaction(SIGCHLD, &default_action, nullptr) != 0) return -1;

  const pid_t init = ForkWithoutHandlers();
  if (init != 0) return init;  // the caller, or -1

  // The init (PID 1): holds no fd, so the tool's pipes and the error pipe
  // close when the tool's do; dies with the supervisor; reaps orphans.
  // Every signal stays blocked: blocked signals are queued, not dropped,
  // so SIGCHLD wakes sigwaitinfo; SIGKILL from the supervisor or the host
  // ends it, and with it the namespace.
  CloseAllFds(fd_limit);
  // If the supervisor died before this, the host's kill of the process
  // group (which the init is in) still ends it.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  sigset_t child_signal;
  sigemptyset(&child_signal);
  sigaddset(&child_signal, SIGCHLD);
  for (;;) {
    while (waitpid(-1, nullptr, WNOHANG | __WALL) > 0) {
    }
    sigwaitinfo(&child_signal, nullptr);
  }
}

pid_t ForkWithoutHandlers() noexcept {
  // Only SIGCHLD as flags and no new stack: fork() semantics. The other
  // arguments are null, so their order (which differs between
  // architectures) does not matter.
  return static_cast<pid_t>(syscall(SYS_clone, SIGCHLD, nullptr, nullptr, nullptr, nullptr));
}

void SuperviseTool(pid_t tool, pid_t init, int fd_limit) noexcept {
  CloseAllFds(fd_limit);
  int wait_status = 0;
  const bool waited = WaitPidRetrying(tool, &wait_status) == tool;
  // Killing the init makes the kernel kill every process of the namespace,
  // setsid()'d grandchildren included, before the init can be reaped.
  kill(init, SIGKILL);
  int init_status = 0;
  WaitPidRetrying(init, &init_status);
  if (!waited) _exit(127);
  if (WIFEXITED(wait_status)) _exit(WEXITSTATUS(wait_status));
  const int signal_number = WTERMSIG(wait_status);
  struct sigaction default_action;
  memset(&default_action, 0, sizeof default_action);
  default_action.sa_handler = SIG_DFL;
  sigaction(signal_number, &default_action, nullptr);
  sigset_t only_that;
  sigemptyset(&only_that);
  sigaddset(&only_that, signal_number);
  kill(getpid(), signal_number);  // pending while blocked...
  sigprocmask(SIG_UNBLOCK, &only_that, nullptr);  // ...delivered here
  _exit(128 + signal_number);  // a signal whose default is not to terminate
}

}  // namespace toolvfs
