// Runs a program as a real subprocess and captures what it printed: the
// end-to-end layer of the CLI tests drives the built toolvfs this way.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace toolvfs {

struct ProcessResult {
  int exit_code = -1;  // 128 + signal number if the process was killed
  std::string out;     // standard output (the terminal's output with use_tty)
  std::string err;     // standard error
  bool deadline_passed = false;  // killed at ProcessOptions::deadline
  std::chrono::steady_clock::duration elapsed{};
};

struct ProcessOptions {
  std::string cwd;                        // empty: the test's own directory
  std::vector<std::string> set_env;       // "NAME=VALUE" added to the test's environment
  std::vector<std::string> unset_env;     // names removed from it
  bool use_tty = false;                   // stdout is a pseudo-terminal instead of a pipe
  // With a deadline the process runs in its own process group, which is
  // killed when the deadline passes (and after the run, so nothing of it
  // outlives the test): a hanging program fails its test instead of
  // hanging the suite.
  std::optional<std::chrono::milliseconds> deadline;
};

// Reads both descriptors until both reach end of file (EIO on a pty master
// once the child closed its side), so neither pipe can fill up. False if
// `end` came first (what was read so far is kept).
bool DrainOutputs(int out_fd, int err_fd, std::string& out, std::string& err,
                  std::optional<std::chrono::steady_clock::time_point> end = std::nullopt);

// "exit N (killed at the deadline)", then stdout and stderr: for test
// failure messages.
std::ostream& operator<<(std::ostream& stream, const ProcessResult& result);

// Runs `argv` (argv[0] is the program path) with stdin from /dev/null.
// Fails the current test (and returns exit_code -1) if it cannot start.
ProcessResult RunProcess(const std::vector<std::string>& argv, const ProcessOptions& options = {});

// Expects the error form of every toolvfs command on `result.err`: exactly
// one line "toolvfs: <what>: <why>\n".
void ExpectOneLineError(const ProcessResult& result);

// The test process's environment with options.unset_env removed and
// options.set_env applied: what a child of RunProcess (or LiveProcess) gets.
std::vector<std::string> BuildEnvironment(const ProcessOptions& options);

// argv/envp-style pointers into `strings`, null-terminated.
std::vector<char*> PointerArray(std::vector<std::string>& strings);

// $TOOLVFS_BINARY, the toolvfs under test (set by tests/CMakeLists.txt),
// else the toolvfs this test was built with.
std::string ToolvfsBinary();

// $TOOLVFS_SOURCE_DIR, else the repository this test was built from.
std::string SourceDir();

// How many processes descending from `ancestor` (read from /proc) run
// `command`: their command line, its words joined by spaces. A test waits
// for a tool to run by polling this with a deadline, never a fixed nap.
size_t DescendantsRunning(pid_t ancestor, std::string_view command);
// Polls DescendantsRunning every 10 ms until at least `count` run, at most
// `timeout`; whether they did.
bool WaitForDescendants(pid_t ancestor, std::string_view command, size_t count,
                        std::chrono::milliseconds timeout = std::chrono::seconds(30));

}  // namespace toolvfs
