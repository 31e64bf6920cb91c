// Runs a program as a real subprocess and captures what it printed: the
// end-to-end layer of the CLI tests drives the built toolvfs this way.
#pragma once

#include <string>
#include <vector>

namespace toolvfs {

struct ProcessResult {
  int exit_code = -1;  // 128 + signal number if the process was killed
  std::string out;     // standard output (the terminal's output with use_tty)
  std::string err;     // standard error
};

struct ProcessOptions {
  std::string cwd;                        // empty: the test's own directory
  std::vector<std::string> set_env;       // "NAME=VALUE" added to the test's environment
  std::vector<std::string> unset_env;     // names removed from it
  bool use_tty = false;                   // stdout is a pseudo-terminal instead of a pipe
};

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

}  // namespace toolvfs
