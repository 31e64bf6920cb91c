#include "sandbox/launcher.h"

#include "sandbox/tool_access.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <utility>

#include "core/io.h"
#include "core/text.h"
#include "sandbox/close_fds.h"
#include "sandbox/mount_masks.h"
#include "sandbox/namespaces.h"
#include "sandbox/process_cgroup.h"
#include "sandbox/vfork_clone.h"

namespace toolvfs {
namespace {

// The child's steps between fork and exec, in the order they run. The values
// index kChildStepNames and are what a failing child reports.
//
// The OS sandbox (SPEC.md §5) runs between kCloseFds and kChdir: the pids
// cgroup (first, so it holds everything the child starts); the user
// namespace; resource limits (after it, so RLIMIT_NPROC counts in it); the
// other namespaces, and for a PID namespace its init and one more fork, the
// tool; PR_SET_NO_NEW_PRIVS; Landlock; seccomp (last, so the filter does
// not have to allow the setup syscalls, forks included; execve stays
// allowed).
enum ChildStep : int {
  kSetsid = 0,
  kParentDeathSignal,
  kParentAlive,
  kRedirectStdio,
  kCloseFds,
  kJoinCgroup,
  kUserNamespace,
  kResourceLimits,
  kNamespaces,
  kMountMasks,
  kPidNamespaceInit,
  kForkIntoPidNamespace,
  kToolParentDeathSignal,
  kNoNewPrivileges,
  kLandlock,
  kSeccomp,
  kChdir,
  kResetSignals,
  kExecve,
  kChildStepCount,
};

constexpr std::string_view kChildStepNames[kChildStepCount] = {
    "setsid",
    "prctl(PR_SET_PDEATHSIG)",
    "parent liveness check",
    "redirecting stdin/stdout/stderr",
    "closing inherited file descriptors",
    "joining the process-limit cgroup",
    "creating the user namespace",
    "setting resource limits",
    "creating the namespaces (IPC, mount, network, PID)",
    "covering the policy's denied paths in the mount namespace",
    "starting the PID namespace's init",
    "starting the tool in the PID namespace",
    "prctl(PR_SET_PDEATHSIG) in the PID namespace",
    "prctl(PR_SET_NO_NEW_PRIVS)",
    "applying the Landlock ruleset",
    "installing the seccomp filter",
    "chdir",  // the message names the directory
    "resetting signals",
    "execve",
};

// What a failing child step reports: into the parent's memory, or written
// to the error pipe (one write < PIPE_BUF, so it arrives whole).
struct ChildFailure {
  int step;
  int error_number;
};

// Everything the child uses, prepared by the parent before fork so the child
// never allocates.
struct ChildPlan {
  const char* program_path;
  char* const* argv;
  char* const* envp;
  const char* working_directory;  // nullptr: keep the current one
  int stdio[3];                   // child ends for fds 0, 1, 2 (all >= 3)
  // Where a failing step is reported: into `shared_failure` when the child
  // shares our memory (CLONE_VM, as glibc's posix_spawn reports), else to
  // `error_fd`, the write end of the error pipe (>= 3; -1 when shared).
  ChildFailure* shared_failure;
  int error_fd;
  pid_t parent_pid;
  int fd_limit;  // the fallback close loop runs up to here
  // The sandbox (null: none). Its Landlock ruleset fd stays open across the
  // fd cleanup; it is close-on-exec.
  bool sandboxed;
  // cgroup.procs of the start's pids cgroup (process_cgroup.h), joined
  // first so everything the child starts counts against pids.max; -1: none.
  int cgroup_procs_fd;
  NamespacePlan namespaces;  // enabled == false: none
  // Applied right after the namespaces, before the PID namespace's init
  // and the tool start, so every process of the run sees them.
  const MountMaskEntry* mount_masks;
  size_t mount_mask_count;
  ResourceLimits resource_limits;
  int landlock_ruleset_fd;  // -1: none
  bool apply_seccomp;
  sock_fprog seccomp_program;
};

[[noreturn]] void FailChildStep(const ChildPlan& plan, ChildStep step, int error_number) {
  if (plan.shared_failure != nullptr) {
    plan.shared_failure->step = step;
    plan.shared_failure->error_number = error_number;
    _exit(127);
  }
  ChildFailure failure{step, error_number};
  ssize_t written;
  do {
    written = write(plan.error_fd, &failure, sizeof failure);
  } while (written < 0 && errno == EINTR);
  _exit(127);
}

// The steps after the namespaces, in the process that becomes the tool:
// PR_SET_NO_NEW_PRIVS, Landlock, seccomp, chdir, signal defaults, execve.
[[noreturn]] void ConfineAndExec(const ChildPlan& plan) {
  if (plan.sandboxed) {
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
      FailChildStep(plan, kNoNewPrivileges, errno);
    }
    if (plan.landlock_ruleset_fd >= 0) {
      if (int error = ApplyLandlockRuleset(plan.landlock_ruleset_fd); error != 0) {
        FailChildStep(plan, kLandlock, error);
      }
    }
    if (plan.apply_seccomp) {
      if (int error = ApplySeccompProgram(plan.seccomp_program); error != 0) {
        FailChildStep(plan, kSeccomp, error);
      }
    }
  }

  if (plan.working_directory != nullptr && chdir(plan.working_directory) != 0) {
    FailChildStep(plan, kChdir, errno);
  }

  // All signals were blocked across the start (so no handler of the host
  // runs here, on its memory); restore default dispositions first, then
  // unblock.
  struct sigaction default_action;
  memset(&default_action, 0, sizeof default_action);
  default_action.sa_handler = SIG_DFL;
  for (int signal_number = 1; signal_number < NSIG; ++signal_number) {
    if (signal_number == SIGKILL || signal_number == SIGSTOP) continue;
    sigaction(signal_number, &default_action, nullptr);  // EINVAL for glibc's own
  }
  sigset_t empty_set;
  sigemptyset(&empty_set);
  if (sigprocmask(SIG_SETMASK, &empty_set, nullptr) != 0) {
    FailChildStep(plan, kResetSignals, errno);
  }

  execve(plan.program_path, plan.argv, plan.envp);
  FailChildStep(plan, kExecve, errno);
}

// The tool in a PID namespace (PID 2), started by the supervisor with
// CloneVfork: PR_SET_PDEATHSIG is not inherited, so it is set again. No
// liveness check is possible (getppid() is 0 across the namespace
// boundary); a tool orphaned in between is still in the host's process
// group.
int RunToolInPidNamespace(void* plan_pointer) {
  const ChildPlan& plan = *static_cast<const ChildPlan*>(plan_pointer);
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) {
    FailChildStep(plan, kToolParentDeathSignal, errno);
  }
  ConfineAndExec(plan);
}

// Runs in the child between its start and exec: async-signal-safe syscalls
// only. Without a PID namespace the child shares the parent's memory
// (vfork_clone.h): it reads `plan` and writes nothing of the parent's but
// *plan.shared_failure, the step that failed.
[[noreturn]] void RunChild(const ChildPlan& plan) {
  if (setsid() < 0) FailChildStep(plan, kSetsid, errno);

  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) {
    FailChildStep(plan, kParentDeathSignal, errno);
  }
  // The parent may have died before PR_SET_PDEATHSIG took effect.
  if (getppid() != plan.parent_pid) FailChildStep(plan, kParentAlive, ESRCH);

  for (int target = 0; target < 3; ++target) {
    if (dup2(plan.stdio[target], target) < 0) {
      FailChildStep(plan, kRedirectStdio, errno);
    }
  }

  // Everything above 2 except the error pipe (if any), the Landlock ruleset, the
  // shared user namespace and the cgroup's cgroup.procs, all close-on-exec.
  int kept[4] = {plan.error_fd, plan.landlock_ruleset_fd, plan.namespaces.shared_user_namespace_fd,
                 plan.cgroup_procs_fd};
  const bool closed = CloseFdsExcept(3, kept, 4, plan.fd_limit);
  if (!closed) FailChildStep(plan, kCloseFds, errno);

  // Before the user namespace, while this process is still the host's user
  // in the host's namespaces: "0" moves the writer itself.
  if (plan.cgroup_procs_fd >= 0) {
    ssize_t written;
    do {
      written = write(plan.cgroup_procs_fd, "0", 1);
    } while (written < 0 && errno == EINTR);
    if (written != 1) FailChildStep(plan, kJoinCgroup, written < 0 ? errno : EIO);
    close(plan.cgroup_procs_fd);
  }

  if (plan.sandboxed) {
    if (plan.namespaces.enabled) {
      if (int error = EnterUserNamespace(plan.namespaces); error != 0) {
        FailChildStep(plan, kUserNamespace, error);
      }
    }
    if (int error = ApplyResourceLimits(plan.resource_limits); error != 0) {
      FailChildStep(plan, kResourceLimits, error);
    }
    if (plan.namespaces.enabled) {
      if (int error = EnterNamespaces(plan.namespaces); error != 0) {
        FailChildStep(plan, kNamespaces, error);
      }
    }
    if (plan.mount_mask_count > 0) {
      if (int error = ApplyMountMasks(plan.mount_masks, plan.mount_mask_count); error != 0) {
        FailChildStep(plan, kMountMasks, error);
      }
    }
    if (plan.namespaces.pid_namespace) {
      // unshare(CLONE_NEWPID) only moves later children: the first becomes
      // the init, the next the tool. This process stays outside, unconfined
      // by Landlock and seccomp but running only SuperviseTool, and is
      // what the host's ChildProcess waits for. The init gets memory of its
      // own (it outlives this call and must not share this unconfined
      // process's memory); the tool shares it only until its execve, like
      // the launcher child without a PID namespace.
      const pid_t init = ForkPidNamespaceInit(plan.fd_limit);
      if (init < 0) FailChildStep(plan, kPidNamespaceInit, errno);
      const pid_t tool = CloneVfork(RunToolInPidNamespace, const_cast<ChildPlan*>(&plan));
      if (tool < 0) FailChildStep(plan, kForkIntoPidNamespace, errno);
      SuperviseTool(tool, init, plan.fd_limit);
    }
  }
  ConfineAndExec(plan);
}

int RunClonedChild(void* plan) { RunChild(*static_cast<const ChildPlan*>(plan)); }

// A pipe whose both ends are close-on-exec and >= 3, so that dup2 onto 0–2 in
// the child never overwrites another pipe end (the host may run with 0–2
// closed).
Status MakePipe(UniqueFd& read_end, UniqueFd& write_end, std::string_view what) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return ErrnoToStatus(errno, what);
  read_end.reset(fds[0]);
  write_end.reset(fds[1]);
  TOOLVFS_RETURN_IF_ERROR(MoveAboveStandardStreams(read_end, what));
  return MoveAboveStandardStreams(write_end, what);
}

// For a pipe end fresh from MakePipe: it has no other status flag to keep
// (F_SETFL ignores the access mode), so no F_GETFL first.
Status SetNonBlocking(const UniqueFd& fd, std::string_view what) {
  if (fcntl(fd.get(), F_SETFL, O_NONBLOCK) != 0) return ErrnoToStatus(errno, what);
  return OkStatus();
}

ExitStatus FromWaitStatus(int wait_status) {
  ExitStatus status;
  if (WIFSIGNALED(wait_status)) {
    status.kind = ExitStatus::Kind::kSignaled;
    status.signal = WTERMSIG(wait_status);
  } else {
    status.kind = ExitStatus::Kind::kExited;
    status.code = WEXITSTATUS(wait_status);
  }
  return status;
}

// waitpid with EINTR retry; returns the pid, 0 (WNOHANG, still running) or -1.
pid_t WaitPid(pid_t pid, int* wait_status, int flags) {
  pid_t result;
  do {
    result = waitpid(pid, wait_status, flags);
  } while (result < 0 && errno == EINTR);
  return result;
}

// The limits the child applies. With a PID namespace, the supervising
// process and the init count as processes of the user namespace like the
// tool's own: RLIMIT_NPROC gets two more, so that `processes` stays what
// the tool itself may have (itself and its threads included).
ResourceLimits ChildResourceLimits(const SandboxProfile* sandbox) {
  if (sandbox == nullptr) return ResourceLimits();
  ResourceLimits limits = sandbox->limits();
  if (sandbox->namespaces() && sandbox->namespaces()->own_process_tree &&
      limits.processes != ResourceLimits::kInherit) {
    limits.processes += 2;
  }
  return limits;
}

}  // namespace

LaunchSearchPath SearchPathOf(const LaunchSpec& spec) {
  // The first PATH entry, the one getenv in the child returns.
  for (const std::string& entry : spec.environment) {
    if (entry.starts_with("PATH=")) return LaunchSearchPath{entry.substr(5), /*from_environment=*/true};
  }
  const char* own_path = getenv("PATH");
  return LaunchSearchPath{own_path != nullptr ? own_path : "/usr/bin:/bin", /*from_environment=*/false};
}

Result<std::string> ResolveProgram(const LaunchSpec& spec) {
  if (spec.program.empty()) return InvalidArgumentError("Cannot start a process: no program given");
  if (spec.program.find('/') != std::string::npos) return spec.program;
  const LaunchSearchPath search_path = SearchPathOf(spec);
  Result<std::string> found = FindProgramOnPath(spec.program, search_path.directories);
  if (found.ok()) return found;
  const std::string shown = EscapeForDisplay(search_path.directories);
  return NotFoundError("program " + Quote(spec.program) + " was not found on " +
                       (search_path.from_environment ? "the PATH tools get (" + shown + ")"
                                                     : "toolvfs's own PATH (" + shown + "), as the launch sets none") +
                       ": install it there, or give its full path in the tool's command");
}

std::string ExitStatus::Describe() const {
  if (exited()) return "exited with status " + std::to_string(code);
  const char* abbreviation = sigabbrev_np(signal);
  if (abbreviation == nullptr) return "killed by signal " + std::to_string(signal);
  return std::string("killed by signal SIG") + abbreviation;
}

ChildProcess::ChildProcess(pid_t pid, UniqueFd stdin_fd, UniqueFd stdout_fd,
                           UniqueFd stderr_fd)
    : pid_(pid),
      stdin_(std::move(stdin_fd)),
      stdout_(std::move(stdout_fd)),
      stderr_(std::move(stderr_fd)) {}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)),
      exit_status_(std::exchange(other.exit_status_, std::nullopt)),
      stdin_(std::move(other.stdin_)),
      stdout_(std::move(other.stdout_)),
      stderr_(std::move(other.stderr_)),
      cgroup_(std::exchange(other.cgroup_, std::nullopt)) {}

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
  if (this != &other) {
    KillAndReap();
    pid_ = std::exchange(other.pid_, -1);
    exit_status_ = std::exchange(other.exit_status_, std::nullopt);
    stdin_ = std::move(other.stdin_);
    stdout_ = std::move(other.stdout_);
    stderr_ = std::move(other.stderr_);
    cgroup_ = std::exchange(other.cgroup_, std::nullopt);
  }
  return *this;
}

ChildProcess::~ChildProcess() { KillAndReap(); }

void ChildProcess::KillAndReap() {
  stdin_.reset();
  stdout_.reset();
  stderr_.reset();
  if (pid_ <= 0) return;
  // Even after the leader was reaped its group lives on while members do,
  // and the kernel does not reuse a pid that is still a process group id.
  const int saved_errno = errno;
  kill(-pid_, SIGKILL);
  if (!exit_status_.has_value()) {
    int wait_status = 0;
    WaitPid(pid_, &wait_status, 0);
  }
  pid_ = -1;
  exit_status_.reset();
  // Once every process of the run is gone: removing it waits for that.
  cgroup_.reset();
  errno = saved_errno;
}

Status ChildProcess::Signal(int signal_number) {
  if (pid_ <= 0) return InternalError("Signal() on an empty ChildProcess");
  if (kill(-pid_, signal_number) != 0 && errno != ESRCH) {
    return ErrnoToStatus(errno, "Cannot signal process group " + std::to_string(pid_));
  }
  return OkStatus();
}

Result<std::optional<ExitStatus>> ChildProcess::TryWait() {
  if (pid_ <= 0) return InternalError("TryWait() on an empty ChildProcess");
  if (exit_status_.has_value()) return exit_status_;
  int wait_status = 0;
  const pid_t result = WaitPid(pid_, &wait_status, WNOHANG);
  if (result < 0) return ErrnoToStatus(errno, "Cannot wait for process " + std::to_string(pid_));
  if (result == 0) return std::optional<ExitStatus>();
  exit_status_ = FromWaitStatus(wait_status);
  return exit_status_;
}

Result<ExitStatus> ChildProcess::Wait() {
  if (pid_ <= 0) return InternalError("Wait() on an empty ChildProcess");
  if (exit_status_.has_value()) return *exit_status_;
  int wait_status = 0;
  if (WaitPid(pid_, &wait_status, 0) < 0) {
    return ErrnoToStatus(errno, "Cannot wait for process " + std::to_string(pid_));
  }
  exit_status_ = FromWaitStatus(wait_status);
  return *exit_status_;
}

Result<ChildProcess> Launch(const LaunchSpec& spec) {
  TOOLVFS_ASSIGN_OR_RETURN(std::string program_path, ResolveProgram(spec));
  const std::string what = "Cannot start '" + spec.program + "'";

  // argv and envp point into `spec` and `program_path`, which outlive fork.
  std::vector<char*> argv;
  argv.reserve(spec.args.size() + 2);
  argv.push_back(const_cast<char*>(spec.argv0.empty() ? spec.program.c_str() : spec.argv0.c_str()));
  for (const std::string& arg : spec.args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  envp.reserve(spec.environment.size() + 1);
  for (const std::string& entry : spec.environment) {
    envp.push_back(const_cast<char*>(entry.c_str()));
  }
  envp.push_back(nullptr);

  UniqueFd stdin_read, stdin_write, stdout_read, stdout_write, stderr_read, stderr_write;
  UniqueFd error_read, error_write;
  TOOLVFS_RETURN_IF_ERROR(MakePipe(stdin_read, stdin_write, what + ": stdin pipe"));
  TOOLVFS_RETURN_IF_ERROR(MakePipe(stdout_read, stdout_write, what + ": stdout pipe"));
  TOOLVFS_RETURN_IF_ERROR(MakePipe(stderr_read, stderr_write, what + ": stderr pipe"));
  // The child shares our memory and we sleep until it has exec'ed
  // (vfork_clone.h: no page-table copy), except with a PID namespace:
  // there the child stays, as the tool's supervisor, until the tool ends,
  // so it needs an address space of its own (fork). Only that child
  // reports a failing step through a pipe; the others write it into
  // `failure` below, as glibc's posix_spawn does.
  const bool own_memory = spec.sandbox != nullptr && spec.sandbox->namespaces() &&
                          spec.sandbox->namespaces()->own_process_tree;
  if (own_memory) TOOLVFS_RETURN_IF_ERROR(MakePipe(error_read, error_write, what + ": error pipe"));
  ChildFailure failure{-1, 0};
  TOOLVFS_RETURN_IF_ERROR(SetNonBlocking(stdin_write, what + ": stdin pipe"));
  // Only ever larger: with 64 KiB pages the default is already 1 MiB.
  if (spec.stdin_pipe_bytes > 0 && fcntl(stdin_write.get(), F_GETPIPE_SZ) < spec.stdin_pipe_bytes) {
    (void)fcntl(stdin_write.get(), F_SETPIPE_SZ, spec.stdin_pipe_bytes);
  }
  TOOLVFS_RETURN_IF_ERROR(SetNonBlocking(stdout_read, what + ": stdout pipe"));
  TOOLVFS_RETURN_IF_ERROR(SetNonBlocking(stderr_read, what + ": stderr pipe"));

  // Where RLIMIT_NPROC does not hold (the host runs as root), the process
  // limit is the pids.max of a cgroup of this start's own.
  std::optional<ProcessCgroup> cgroup;
  if (spec.sandbox != nullptr && !spec.sandbox->process_cgroup_parent().empty()) {
    Result<ProcessCgroup> created = ProcessCgroup::Create(spec.sandbox->process_cgroup_parent(),
                                                          spec.sandbox->process_cgroup_max_tasks());
    if (!created.ok()) return Status(created.status().code(), what + ": " + created.status().message());
    cgroup = std::move(created).value();
  }

  const ChildPlan plan{
      .program_path = program_path.c_str(),
      .argv = argv.data(),
      .envp = envp.data(),
      .working_directory =
          spec.working_directory.empty() ? nullptr : spec.working_directory.c_str(),
      .stdio = {stdin_read.get(), stdout_write.get(), stderr_write.get()},
      .shared_failure = own_memory ? nullptr : &failure,
      .error_fd = own_memory ? error_write.get() : -1,
      .parent_pid = getpid(),
      .fd_limit = FdLoopLimit(),
      .sandboxed = spec.sandbox != nullptr,
      .cgroup_procs_fd = cgroup ? cgroup->procs_fd() : -1,
      .namespaces = spec.sandbox != nullptr && spec.sandbox->namespaces()
                        ? PlanNamespaces(*spec.sandbox->namespaces(),
                                         spec.sandbox->shared_user_namespace_fd())
                        : NamespacePlan(),
      .mount_masks = spec.sandbox != nullptr ? spec.sandbox->mount_mask_entries().data() : nullptr,
      .mount_mask_count = spec.sandbox != nullptr ? spec.sandbox->mount_mask_entries().size() : 0,
      .resource_limits = ChildResourceLimits(spec.sandbox),
      .landlock_ruleset_fd = spec.sandbox != nullptr ? spec.sandbox->landlock_ruleset_fd() : -1,
      .apply_seccomp = spec.sandbox != nullptr && spec.sandbox->seccomp_program().has_value(),
      .seccomp_program = spec.sandbox != nullptr && spec.sandbox->seccomp_program()
                             ? *spec.sandbox->seccomp_program()
                             : sock_fprog{},
  };

  // Block every signal across the start so no handler of ours runs in the
  // child; the child restores defaults before unblocking.
  //
  // The forked child starts the tool with CloneVfork (RunChild).
  if (own_memory) {
    if (const int error = PrepareCloneVfork(); error != 0) {
      return ErrnoToStatus(error, what + ": mapping the stack for the tool's start failed");
    }
  }
  sigset_t all_signals, previous_mask;
  sigfillset(&all_signals);
  pthread_sigmask(SIG_SETMASK, &all_signals, &previous_mask);
  pid_t pid;
  if (own_memory) {
    pid = fork();
    if (pid == 0) RunChild(plan);
  } else {
    pid = CloneVfork(RunClonedChild, const_cast<ChildPlan*>(&plan));
  }
  const int start_errno = errno;
  pthread_sigmask(SIG_SETMASK, &previous_mask, nullptr);
  if (pid < 0) {
    return ErrnoToStatus(start_errno, what + (own_memory ? ": fork failed" : ": clone failed"));
  }

  stdin_read.reset();
  stdout_write.reset();
  stderr_write.reset();
  error_write.reset();
  // From here the child is ours to reap, whatever happens.
  if (cgroup) cgroup->CloseProcsFd();
  ChildProcess child(pid, std::move(stdin_write), std::move(stdout_read),
                     std::move(stderr_read));
  child.cgroup_ = std::move(cgroup);

  if (own_memory) {
    ssize_t received;
    do {
      received = read(error_read.get(), &failure, sizeof failure);
    } while (received < 0 && errno == EINTR);
    if (received == 0) return child;  // EOF: execve closed the pipe.
    if (received < 0) return ErrnoToStatus(errno, what + ": reading the error pipe failed");
    if (received != sizeof failure) return InternalError(what + ": garbled report from the child");
  } else if (failure.step < 0) {
    return child;  // it has exec'ed (or was killed first: its exit status says so)
  }
  if (failure.step < 0 || failure.step >= kChildStepCount) {
    return InternalError(what + ": garbled report from the child");
  }
  (void)child.Wait();  // it has _exit(127)ed; the destructor would reap it too
  std::string step_name(kChildStepNames[failure.step]);
  if (failure.step == kChdir) step_name = "chdir to '" + spec.working_directory + "'";
  if (failure.step == kMountMasks && failure.error_number == ESTALE) {
    return Status(StatusCode::kChanged,
                  what + ": " + step_name + " failed: the project changed while the tool was starting; run it again");
  }
  return ErrnoToStatus(failure.error_number, what + ": " + step_name + " failed");
}

}  // namespace toolvfs
