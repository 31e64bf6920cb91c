// The one process launcher: every tool process (vfs host, stdio runtimes,
// process.run children, SPEC.md §5) starts here, so the sandbox steps are
// applied in one place, in one fixed order, between fork and exec.
//
// Parent-side and child-side code are kept apart: everything the child needs
// (argv, envp, the resolved program, the fd limit) is prepared before the
// child starts; between its start and exec the child only makes
// async-signal-safe syscalls, with no allocation and no logging. A failing
// child step records {step, errno} in the caller's memory, which it shares
// (as glibc's posix_spawn does; a PID namespace's forked supervisor writes
// it to a close-on-exec pipe instead), and _exits, so Launch() returns one
// precise Status instead of a child that silently exits 127.
//
// The child starts like posix_spawn's, with clone(CLONE_VM | CLONE_VFORK)
// (vfork_clone.h): it runs on the caller's memory, which is not copied, and
// the calling thread sleeps until the child has exec'ed or failed. With a
// PID namespace the child stays as the tool's supervisor, so it is forked
// (its own copy of memory), and it starts the tool itself with
// clone(CLONE_VM | CLONE_VFORK).
//
// Thread safety: Launch() may be called from any thread. PR_SET_PDEATHSIG is
// tied to the *thread* that forked: if that thread exits, the child is killed,
// so launch from a thread that outlives the child.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/unique_fd.h"
#include "sandbox/process_cgroup.h"
#include "sandbox/sandbox_profile.h"

namespace toolvfs {

struct LaunchSpec {
  // An absolute path, or a bare name looked up (before fork) on the PATH of
  // `environment` if it sets one, else on the launcher's own PATH.
  std::string program;
  // argv[1..]; argv[0] is `argv0`, or `program` as given when empty.
  std::vector<std::string> args;
  // What the child sees as its name when `program` is a path resolved
  // beforehand (LaunchConfined passes the name the config gave).
  std::string argv0;
  // "K=V" entries: the child's whole environment; nothing is inherited, so
  // no secret of the host leaks into a tool by accident.
  std::vector<std::string> environment;
  // The child's working directory; empty keeps the launcher's.
  std::string working_directory;
  // > 0: the least capacity wanted for the child's stdin pipe
  // (F_SETPIPE_SZ; the kernel rounds up to a power of two pages). A pipe
  // that already holds that much (the default is 16 pages: 64 KiB with
  // 4 KiB pages) is left alone. Where the kernel refuses (above
  // fs.pipe-max-size, or with the user over fs.pipe-user-pages-soft; root
  // is exempt from both) the pipe keeps what it has: a larger pipe only
  // saves wake-ups, it is never needed. 0: as the kernel made it.
  int stdin_pipe_bytes = 0;
  // The confinement to apply between fork and exec (sandbox_profile.h);
  // null: none (tests of the launcher itself, and --sandbox=best-effort on a
  // kernel with nothing to offer). Must outlive the call.
  const SandboxProfile* sandbox = nullptr;
};

// How a reaped child ended.
struct ExitStatus {
  enum class Kind { kExited, kSignaled };
  Kind kind = Kind::kExited;
  int code = 0;    // exit status when kind == kExited
  int signal = 0;  // signal number when kind == kSignaled

  bool exited() const { return kind == Kind::kExited; }
  bool signaled() const { return kind == Kind::kSignaled; }
  bool success() const { return exited() && code == 0; }

  // "exited with status 3" / "killed by signal SIGSEGV" — for error messages.
  std::string Describe() const;

  friend bool operator==(const ExitStatus&, const ExitStatus&) = default;
};

// A started child: leader of its own session and process group (pgid == pid).
// Move-only. Its destructor sends SIGKILL to the whole process group and reaps
// the child if it was not reaped yet, so once a ChildProcess is gone none of
// its processes are left (grandchildren that stay in the group included).
// With a PID namespace (sandbox_profile.h), setsid()'d grandchildren are
// killed by the kernel together with the namespace's init shortly after the
// child is reaped; pid() is then the supervisor outside the namespace,
// which ends the way the tool ended.
class ChildProcess {
 public:
  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&& other) noexcept;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess();

  pid_t pid() const { return pid_; }

  // The parent's ends of the child's stdin/stdout/stderr pipes: non-blocking
  // and close-on-exec, meant for a poll loop (SPEC.md §4.4: the host never
  // blocks on a full pipe). Take one with std::move, close it with reset()
  // (closing stdin is how the child sees end of input).
  UniqueFd& stdin_fd() { return stdin_; }
  UniqueFd& stdout_fd() { return stdout_; }
  UniqueFd& stderr_fd() { return stderr_; }

  // Sends `signal_number` to the child's whole process group. A group that no
  // longer exists (ESRCH) is not an error: the processes are gone.
  Status Signal(int signal_number);

  // Reaps the child if it has ended (waitpid WNOHANG); nullopt while it runs.
  // After the child was reaped, returns the same ExitStatus again.
  Result<std::optional<ExitStatus>> TryWait();

  // Blocks until the child ends and reaps it. Grandchildren are not waited
  // for; the destructor kills them.
  Result<ExitStatus> Wait();

 private:
  friend Result<ChildProcess> Launch(const LaunchSpec& spec);
  ChildProcess(pid_t pid, UniqueFd stdin_fd, UniqueFd stdout_fd, UniqueFd stderr_fd);

  // Kills the process group and reaps the child if needed; leaves *this empty.
  void KillAndReap();

  pid_t pid_ = -1;
  std::optional<ExitStatus> exit_status_;  // set once reaped
  UniqueFd stdin_;
  UniqueFd stdout_;
  UniqueFd stderr_;
  // The start's pids cgroup, if any (process_cgroup.h): removed once the
  // child is reaped and its group killed.
  std::optional<ProcessCgroup> cgroup_;
};

// The PATH a bare program name of `spec` is looked up on: the one its
// `environment` sets (a tool's: kFixedPath, or what an MCP server is
// given), else the launcher's own, else "/usr/bin:/bin" (as execvp would).
// LaunchConfined derives the sandbox's rules from this same PATH, so a
// sandboxed and an unsandboxed launch find the same program.
struct LaunchSearchPath {
  std::string directories;
  bool from_environment = false;  // false: the launcher's own PATH
};
LaunchSearchPath SearchPathOf(const LaunchSpec& spec);

// The path execve gets for `spec.program`: itself if it has a slash, else
// the first executable match on SearchPathOf(spec). The one place a
// program is looked up before a launch (LaunchConfined hands the result
// to the sandbox's rules and to Launch). NotFound otherwise, one line
// naming the program and the PATH searched (escaped): "program 'pyhton3'
// was not found on the PATH tools get (/usr/bin:/bin): install it there,
// or give its full path in the tool's command" ("on toolvfs's own PATH
// (...), as the launch sets none" when the environment has no PATH).
Result<std::string> ResolveProgram(const LaunchSpec& spec);

// Starts `spec.program`. Between its start and exec the child runs, in this
// order:
// setsid; PR_SET_PDEATHSIG(SIGKILL) and a check that the parent is still
// alive; stdin/stdout/stderr onto the pipes; close every other fd; with
// spec.sandbox: join the start's pids cgroup (a process-creating profile
// where the host can make one; process_cgroup.h), the user namespace, resource limits, the other namespaces
// (with a PID namespace: fork the init, then the tool, which continues),
// PR_SET_NO_NEW_PRIVS, Landlock, seccomp; chdir; default signal mask and
// dispositions; execve. Fails with a one-line Status
// naming the step and the errno, e.g.
//   "Cannot start '/usr/bin/nope': execve failed: No such file or directory".
// The returned child has been exec'ed successfully.
Result<ChildProcess> Launch(const LaunchSpec& spec);

}  // namespace toolvfs
