#include "live_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include <gtest/gtest.h>

namespace toolvfs {
namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

LiveProcess::LiveProcess(const std::vector<std::string>& argv, const ProcessOptions& options,
                         const std::string& stdin_data) {
  // Small enough for the pipe buffer: written whole before the child reads.
  EXPECT_LT(stdin_data.size(), size_t{60000});
  int in[2], out[2], err[2];
  if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) {
    ADD_FAILURE() << "pipe2: " << std::strerror(errno);
    return;
  }
  UniqueFd in_read(in[0]), in_write(in[1]), out_write(out[1]), err_write(err[1]);
  out_.reset(out[0]);
  err_.reset(err[0]);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in_read.get(), STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out_write.get(), STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err_write.get(), STDERR_FILENO);
  if (!options.cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, options.cwd.c_str());
  // A test runner started in the background by a shell without job control
  // has SIGINT ignored, and an ignored signal stays ignored across exec.
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t defaults, empty;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGTERM);
  sigaddset(&defaults, SIGPIPE);
  sigemptyset(&empty);
  posix_spawnattr_setsigdefault(&attributes, &defaults);
  posix_spawnattr_setsigmask(&attributes, &empty);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);

  std::vector<std::string> arguments = argv;
  std::vector<std::string> environment = BuildEnvironment(options);
  std::vector<char*> argument_pointers = PointerArray(arguments);
  std::vector<char*> environment_pointers = PointerArray(environment);
  int spawn_error = posix_spawn(&pid_, argv.at(0).c_str(), &actions, &attributes,
                                argument_pointers.data(), environment_pointers.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (spawn_error != 0) {
    pid_ = -1;
    ADD_FAILURE() << "posix_spawn " << argv.at(0) << ": " << std::strerror(spawn_error);
    return;
  }
  in_read.reset();
  out_write.reset();
  err_write.reset();
  size_t done = 0;
  while (done < stdin_data.size()) {
    ssize_t written = write(in_write.get(), stdin_data.data() + done, stdin_data.size() - done);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) break;  // the child closed its stdin: fine
    done += static_cast<size_t>(written);
  }
}

LiveProcess::~LiveProcess() {
  if (pid_ <= 0) return;
  kill(pid_, SIGKILL);
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
}

void LiveProcess::Signal(int signal_number) const {
  if (pid_ <= 0) return;
  EXPECT_EQ(kill(pid_, signal_number), 0) << std::strerror(errno);
}

ProcessResult LiveProcess::Wait(std::chrono::milliseconds timeout) {
  ProcessResult result;
  if (pid_ <= 0) return result;
  if (!DrainOutputs(out_.get(), err_.get(), result.out, result.err, Clock::now() + timeout)) {
    ADD_FAILURE() << "the process did not end within " << timeout.count() << " ms";
    kill(pid_, SIGKILL);
    // What it wrote before it died; bounded, should a grandchild hold a pipe.
    DrainOutputs(out_.get(), err_.get(), result.out, result.err, Clock::now() + std::chrono::seconds(5));
  }
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0) {
    if (errno != EINTR) {
      ADD_FAILURE() << "waitpid: " << std::strerror(errno);
      pid_ = -1;
      return result;
    }
  }
  pid_ = -1;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

bool WaitForFile(const std::string& path, std::chrono::milliseconds timeout) {
  Clock::time_point deadline = Clock::now() + timeout;
  struct stat info;
  while (Clock::now() < deadline) {
    if (stat(path.c_str(), &info) == 0) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return stat(path.c_str(), &info) == 0;
}

}  // namespace toolvfs
