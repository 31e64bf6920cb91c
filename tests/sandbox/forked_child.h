// Runs a piece of test code in a forked child, so that what it applies to
// itself (a seccomp filter, rlimits, a uid change) never touches the test
// binary, and reports how the child ended and what it wrote to a pipe.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <functional>
#include <string>

namespace toolvfs {

struct ForkedChildOutcome {
  bool exited = false;
  int code = 0;    // the body's return value (0–255) when exited
  int signal = 0;  // the signal that killed the child otherwise
  std::string report;  // everything the body wrote to its report fd

  std::string Describe() const {
    return exited ? "exited with " + std::to_string(code)
                  : "killed by signal " + std::to_string(signal);
  }
};

// Forks; the child runs body(report_fd) and _exits with its return value. A
// child still running after `alarm_seconds` dies of SIGALRM, so a test that
// goes wrong fails instead of hanging.
inline ForkedChildOutcome RunInForkedChild(const std::function<int(int report_fd)>& body,
                                           unsigned alarm_seconds = 20) {
  ForkedChildOutcome outcome;
  int report_pipe[2];
  if (pipe2(report_pipe, O_CLOEXEC) != 0) return outcome;
  const pid_t pid = fork();
  if (pid == 0) {
    close(report_pipe[0]);
    alarm(alarm_seconds);
    _exit(body(report_pipe[1]) & 0xff);
  }
  close(report_pipe[1]);
  char buffer[256];
  ssize_t received;
  while ((received = read(report_pipe[0], buffer, sizeof buffer)) != 0) {
    if (received < 0 && errno == EINTR) continue;
    if (received < 0) break;
    outcome.report.append(buffer, static_cast<size_t>(received));
  }
  close(report_pipe[0]);
  int wait_status = 0;
  while (waitpid(pid, &wait_status, 0) < 0 && errno == EINTR) {
  }
  outcome.exited = WIFEXITED(wait_status);
  outcome.code = outcome.exited ? WEXITSTATUS(wait_status) : 0;
  outcome.signal = WIFSIGNALED(wait_status) ? WTERMSIG(wait_status) : 0;
  return outcome;
}

// 0 if a syscall-style result is not negative, else errno.
inline int ErrnoOf(long result) { return result < 0 ? errno : 0; }

}  // namespace toolvfs
