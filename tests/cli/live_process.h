// A subprocess the test talks to while it runs: bytes on its stdin, signals
// sent to it, its output collected when it ends. RunProcess (subprocess.h)
// covers the fire-and-wait case; this one is for Ctrl+C and `--args @-`.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include "core/unique_fd.h"
#include "subprocess.h"

namespace toolvfs {

class LiveProcess {
 public:
  // Starts `argv` with `stdin_data` on its stdin (then end of input) and
  // stdout/stderr on pipes. SIGINT, SIGTERM and SIGPIPE start at their
  // defaults and no signal is blocked, whatever the test runner inherited.
  // Fails the current test (pid() is -1) if it cannot start.
  LiveProcess(const std::vector<std::string>& argv, const ProcessOptions& options,
              const std::string& stdin_data = "");
  LiveProcess(const LiveProcess&) = delete;
  LiveProcess& operator=(const LiveProcess&) = delete;
  // Kills and reaps the process if Wait() was not called.
  ~LiveProcess();

  pid_t pid() const { return pid_; }
  void Signal(int signal_number) const;

  // Reads stdout and stderr to their end and reaps the process. If it has
  // not ended within `timeout`, fails the test, kills it and returns what
  // it printed.
  ProcessResult Wait(std::chrono::milliseconds timeout = std::chrono::seconds(60));

 private:
  pid_t pid_ = -1;
  UniqueFd out_;
  UniqueFd err_;
};

// Polls for `path` to exist for up to `timeout`; true when it does.
bool WaitForFile(const std::string& path, std::chrono::milliseconds timeout);

}  // namespace toolvfs
