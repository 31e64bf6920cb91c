// A program on a new pseudo-terminal that is its controlling terminal, for
// the tests that play the user of toolvfs at a real terminal (questions,
// progress).
#pragma once

#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "core/unique_fd.h"
#include "subprocess.h"

namespace toolvfs {

// A program on a new pseudo-terminal that is its controlling terminal (so
// /dev/tty is this terminal): the test plays the user on the master side.
class TerminalProcess {
 public:
  TerminalProcess(const std::vector<std::string>& argv, const std::string& cwd) {
    std::vector<std::string> arguments = argv;
    std::vector<char*> pointers = PointerArray(arguments);
    ProcessOptions options;
    std::vector<std::string> environment = BuildEnvironment(options);
    std::vector<char*> environment_pointers = PointerArray(environment);
    int master = -1;
    pid_ = ::forkpty(&master, nullptr, nullptr, nullptr);
    if (pid_ == 0) {
      // Only async-signal-safe calls between fork and exec.
      if (::chdir(cwd.c_str()) != 0) ::_exit(126);
      ::execve(pointers[0], pointers.data(), environment_pointers.data());
      ::_exit(127);
    }
    if (pid_ < 0) {
      ADD_FAILURE() << "forkpty failed";
      return;
    }
    master_.reset(master);
  }
  TerminalProcess(const TerminalProcess&) = delete;
  TerminalProcess& operator=(const TerminalProcess&) = delete;
  ~TerminalProcess() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }

  // What the terminal showed until `marker` appeared (or 20 s passed).
  std::string ReadUntil(std::string_view marker) {
    std::chrono::steady_clock::time_point end = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (seen_.find(marker, consumed_) == std::string::npos && std::chrono::steady_clock::now() < end) {
      if (!ReadSome(200)) break;
    }
    size_t found = seen_.find(marker, consumed_);
    std::string shown = seen_.substr(consumed_, found == std::string::npos ? std::string::npos
                                                                           : found + marker.size() - consumed_);
    consumed_ = found == std::string::npos ? seen_.size() : found + marker.size();
    return shown;
  }

  int master() const { return master_.get(); }

  void Type(std::string_view text) { ASSERT_EQ(::write(master_.get(), text.data(), text.size()), ssize_t(text.size())); }

  // Reads the rest and reaps the process: its exit code and all it showed.
  int Wait(std::string& rest) {
    std::chrono::steady_clock::time_point end = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < end && ReadSome(200)) {
    }
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    rest = seen_.substr(consumed_);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

 private:
  // False at the end of output (EIO once the program closed the terminal).
  bool ReadSome(int timeout_ms) {
    struct pollfd ready = {master_.get(), POLLIN, 0};
    int count = ::poll(&ready, 1, timeout_ms);
    if (count == 0) return true;
    char buffer[4096];
    ssize_t got = ::read(master_.get(), buffer, sizeof buffer);
    if (got <= 0) return false;
    seen_.append(buffer, static_cast<size_t>(got));
    return true;
  }

  pid_t pid_ = -1;
  UniqueFd master_;
  std::string seen_;
  size_t consumed_ = 0;
};

}  // namespace toolvfs
