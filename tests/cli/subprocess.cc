#include "subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string_view>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/unique_fd.h"

extern char** environ;

namespace toolvfs {
using Clock = std::chrono::steady_clock;


std::vector<std::string> BuildEnvironment(const ProcessOptions& options) {
  std::vector<std::string> environment;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    std::string_view variable = *entry;
    std::string_view name = variable.substr(0, variable.find('='));
    bool drop = false;
    for (const std::string& unset : options.unset_env) drop = drop || name == unset;
    for (const std::string& set : options.set_env) {
      drop = drop || name == std::string_view(set).substr(0, set.find('='));
    }
    if (!drop) environment.emplace_back(variable);
  }
  for (const std::string& set : options.set_env) environment.push_back(set);
  return environment;
}

std::vector<char*> PointerArray(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (std::string& text : strings) pointers.push_back(text.data());
  pointers.push_back(nullptr);
  return pointers;
}

ProcessResult RunProcess(const std::vector<std::string>& argv, const ProcessOptions& options) {
  ProcessResult result;
  UniqueFd out_read, out_write, err_read, err_write;
  int fds[2];
  if (options.use_tty) {
    if (openpty(&fds[0], &fds[1], nullptr, nullptr, nullptr) != 0) {
      ADD_FAILURE() << "openpty: " << std::strerror(errno);
      return result;
    }
    fcntl(fds[0], F_SETFD, FD_CLOEXEC);
    fcntl(fds[1], F_SETFD, FD_CLOEXEC);
  } else if (pipe2(fds, O_CLOEXEC) != 0) {
    ADD_FAILURE() << "pipe2: " << std::strerror(errno);
    return result;
  }
  out_read.reset(fds[0]);
  out_write.reset(fds[1]);
  if (pipe2(fds, O_CLOEXEC) != 0) {
    ADD_FAILURE() << "pipe2: " << std::strerror(errno);
    return result;
  }
  err_read.reset(fds[0]);
  err_write.reset(fds[1]);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_write.get(), STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err_write.get(), STDERR_FILENO);
  if (!options.cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, options.cwd.c_str());
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  if (options.deadline) {
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attributes, 0);
  }

  std::vector<std::string> arguments = argv;
  std::vector<std::string> environment = BuildEnvironment(options);
  std::vector<char*> argument_pointers = PointerArray(arguments);
  std::vector<char*> environment_pointers = PointerArray(environment);
  const Clock::time_point start = Clock::now();
  std::optional<Clock::time_point> end;
  if (options.deadline) end = start + *options.deadline;
  pid_t pid = -1;
  int spawn_error = posix_spawn(&pid, argv.at(0).c_str(), &actions, &attributes,
                                argument_pointers.data(), environment_pointers.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (spawn_error != 0) {
    ADD_FAILURE() << "posix_spawn " << argv.at(0) << ": " << std::strerror(spawn_error);
    return result;
  }
  out_write.reset();
  err_write.reset();
  if (!DrainOutputs(out_read.get(), err_read.get(), result.out, result.err, end)) {
    result.deadline_passed = true;
    kill(-pid, SIGKILL);
  }

  int status = 0;
  // Output closed: the process is ending. With a deadline the wait is bounded
  // too, since a grandchild could hold the pipes open while it hangs.
  while (true) {
    pid_t reaped = waitpid(pid, &status, end ? WNOHANG : 0);
    if (reaped == pid) break;
    if (reaped < 0 && errno != EINTR) {
      ADD_FAILURE() << "waitpid: " << std::strerror(errno);
      return result;
    }
    if (reaped == 0 && Clock::now() >= *end && !result.deadline_passed) {
      result.deadline_passed = true;
      kill(-pid, SIGKILL);
    }
    if (reaped == 0) poll(nullptr, 0, 10);  // a short pause between checks, not a synchronization
  }
  if (options.deadline) kill(-pid, SIGKILL);  // nothing of the run may outlive it
  result.elapsed = Clock::now() - start;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

bool DrainOutputs(int out_fd, int err_fd, std::string& out, std::string& err,
                  std::optional<std::chrono::steady_clock::time_point> end) {
  pollfd fds[2] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
  std::string* sinks[2] = {&out, &err};
  int open_count = 2;
  char buffer[65536];
  while (open_count > 0) {
    int timeout_ms = -1;
    if (end) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*end - Clock::now());
      if (left.count() <= 0) return false;
      timeout_ms = static_cast<int>(left.count());
    }
    int ready = poll(fds, 2, timeout_ms);
    if (ready < 0) {
      if (errno == EINTR) continue;
      ADD_FAILURE() << "poll: " << std::strerror(errno);
      return true;
    }
    for (int index = 0; index < 2; ++index) {
      if (fds[index].fd < 0 || fds[index].revents == 0) continue;
      ssize_t length = read(fds[index].fd, buffer, sizeof buffer);
      if (length < 0 && errno == EINTR) continue;
      if (length <= 0) {
        fds[index].fd = -1;
        --open_count;
        continue;
      }
      sinks[index]->append(buffer, static_cast<size_t>(length));
    }
  }
  return true;
}

std::ostream& operator<<(std::ostream& stream, const ProcessResult& result) {
  return stream << "exit " << result.exit_code << (result.deadline_passed ? " (killed at the deadline)" : "")
                << "\n--- stdout:\n" << result.out << "\n--- stderr:\n" << result.err;
}

// The environment wins; the build's paths (compile definitions) are the
// fallback, so the binary also runs outside ctest.
std::string ToolvfsBinary() {
  const char* binary = std::getenv("TOOLVFS_BINARY");
  return binary != nullptr && binary[0] != '\0' ? binary : TOOLVFS_BUILT_BINARY;
}

std::string SourceDir() {
  const char* source = std::getenv("TOOLVFS_SOURCE_DIR");
  return source != nullptr && source[0] != '\0' ? source : TOOLVFS_BUILT_SOURCE_DIR;
}

void ExpectOneLineError(const ProcessResult& result) {
  EXPECT_THAT(result.err, ::testing::StartsWith("toolvfs: "));
  EXPECT_THAT(result.err, ::testing::EndsWith("\n"));
  EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
  EXPECT_GE(std::count(result.err.begin(), result.err.end(), ':'), 2) << result.err;
}

size_t DescendantsRunning(pid_t ancestor, std::string_view command) {
  std::map<pid_t, pid_t> parents;
  std::vector<pid_t> matching;
  for (const std::filesystem::directory_entry& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || !std::isdigit(static_cast<unsigned char>(name[0]))) continue;
    const pid_t pid = static_cast<pid_t>(std::atoi(name.c_str()));
    std::string stat;
    std::getline(std::ifstream(entry.path() / "stat"), stat);
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses.
    const size_t comm_end = stat.rfind(')');
    if (comm_end == std::string::npos || comm_end + 4 >= stat.size()) continue;
    parents[pid] = static_cast<pid_t>(std::atoi(stat.c_str() + comm_end + 4));
    std::string words;
    std::getline(std::ifstream(entry.path() / "cmdline"), words, '\n');
    while (!words.empty() && words.back() == '\0') words.pop_back();
    for (char& c : words) c = c == '\0' ? ' ' : c;
    if (words == command) matching.push_back(pid);
  }
  size_t count = 0;
  for (pid_t pid : matching) {
    for (int depth = 0; depth < 64 && pid > 1; ++depth) {
      auto parent = parents.find(pid);
      if (parent == parents.end()) break;
      pid = parent->second;
      if (pid == ancestor) {
        ++count;
        break;
      }
    }
  }
  return count;
}

bool WaitForDescendants(pid_t ancestor, std::string_view command, size_t count, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (DescendantsRunning(ancestor, command) < count) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

}  // namespace toolvfs
