#include "sandbox/namespaces.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <pthread.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>

#include "core/io.h"
#include "core/unique_fd.h"
#include "sandbox/close_fds.h"

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


pid_t WaitPidRetrying(pid_t pid, int* wait_status) noexcept {
  pid_t result;
  do {
    result = waitpid(pid, wait_status, 0);
  } while (result < 0 && errno == EINTR);
  return result;
}

}  // namespace

NamespacePlan PlanNamespaces(const NamespaceOptions& options, int shared_user_namespace_fd) {
  NamespacePlan plan;
  plan.enabled = true;
  plan.shared_user_namespace_fd = shared_user_namespace_fd;
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
  if (plan.shared_user_namespace_fd >= 0) {
    return setns(plan.shared_user_namespace_fd, CLONE_NEWUSER) == 0 ? 0 : errno;
  }
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
  CloseFdRange(0, -1, fd_limit);
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

namespace {

// A child that enters a new user namespace as a tool start would, reports
// the outcome, and stays until released so the namespace can be opened
// through /proc/PID/ns/user; the open fd then keeps it alive.
Result<UniqueFd> CreateUserNamespace() {
  constexpr std::string_view kWhat = "Cannot create the tool's user namespace";
  int report[2];
  int release[2];
  if (pipe2(report, O_CLOEXEC) != 0) return ErrnoToStatus(errno, kWhat);
  UniqueFd report_read(report[0]);
  UniqueFd report_write(report[1]);
  if (pipe2(release, O_CLOEXEC) != 0) return ErrnoToStatus(errno, kWhat);
  UniqueFd release_read(release[0]);
  UniqueFd release_write(release[1]);
  const NamespacePlan plan = PlanNamespaces(NamespaceOptions{});

  // No handler of ours may run in the child (Ctrl+C reaches it too).
  sigset_t all_signals;
  sigset_t previous_mask;
  sigfillset(&all_signals);
  pthread_sigmask(SIG_SETMASK, &all_signals, &previous_mask);
  const pid_t parent = getpid();
  const int fd_loop_limit = FdLoopLimit();
  const pid_t child = ForkWithoutHandlers();
  if (child == 0) {
    // Async-signal-safe calls only: the host may have other threads. No
    // copy of the host's fds stays open here (a tool's stdin pipe would not
    // see EOF), the release pipe's write end included, so the read below
    // ends with EOF when the host dies; and the child dies with the host.
    const int report_fd = report[1];
    const int release_fd = release[0];
    int kept[2] = {report_fd, release_fd};
    CloseFdsExcept(0, kept, 2, fd_loop_limit);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    int error = getppid() == parent ? EnterUserNamespace(plan) : ESRCH;
    ssize_t ignored = write(report_fd, &error, sizeof error);
    char byte;
    ignored = read(release_fd, &byte, 1);  // a byte, or EOF if the host died
    (void)ignored;
    _exit(0);
  }
  const int fork_error = errno;
  pthread_sigmask(SIG_SETMASK, &previous_mask, nullptr);
  if (child < 0) return ErrnoToStatus(fork_error, kWhat);
  report_write.reset();
  release_read.reset();

  int child_error = 0;
  ssize_t got;
  do {
    got = read(report_read.get(), &child_error, sizeof child_error);
  } while (got < 0 && errno == EINTR);
  if (got != sizeof child_error) child_error = got < 0 ? errno : EIO;
  UniqueFd user_namespace;
  if (child_error == 0) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/ns/user", static_cast<int>(child));
    user_namespace = UniqueFd(open(path, O_RDONLY | O_CLOEXEC));
    if (!user_namespace) {
      child_error = errno;
    } else if (Status moved = MoveAboveStandardStreams(user_namespace, kWhat); !moved.ok()) {
      child_error = EMFILE;
    }
  }
  const char byte = 0;
  ssize_t ignored = write(release_write.get(), &byte, 1);
  (void)ignored;
  int wait_status = 0;
  WaitPidRetrying(child, &wait_status);
  if (child_error != 0) return ErrnoToStatus(child_error, kWhat);
  return user_namespace;
}

}  // namespace

Result<int> SharedUserNamespace(const std::string& key) {
  static std::mutex mutex;
  // The namespace of each key, or why making it failed: a failure is not
  // retried, or every start of the tool would fork the host again.
  static auto* namespaces =
      new std::map<std::string, Result<UniqueFd>, std::less<>>();  // never destroyed: fds live until exit
  // Its id maps name the ids it was made with.
  const std::string full_key = std::to_string(geteuid()) + ":" + std::to_string(getegid()) + ":" + key;
  std::lock_guard lock(mutex);
  auto found = namespaces->find(full_key);
  if (found == namespaces->end()) found = namespaces->emplace(full_key, CreateUserNamespace()).first;
  if (!found->second.ok()) return found->second.status();
  return found->second->get();
}

pid_t ForkWithoutHandlers() noexcept {
  // Only SIGCHLD as flags and no new stack: fork() semantics. The other
  // arguments are null, so their order (which differs between
  // architectures) does not matter.
  return static_cast<pid_t>(syscall(SYS_clone, SIGCHLD, nullptr, nullptr, nullptr, nullptr));
}

void SuperviseTool(pid_t tool, pid_t init, int fd_limit) noexcept {
  CloseFdRange(0, -1, fd_limit);
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
