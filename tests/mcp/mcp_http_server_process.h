// A running `toolvfs mcp --http 127.0.0.1:0` for the tests that drive it
// (mcp_http_test, mcp_sdk_test, the conformance run): started on a free
// port, its stderr in a log file the port is read from, stopped with
// SIGTERM (and expected to exit 0) when the test is done.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "../cli/live_process.h"
#include "../cli/subprocess.h"
#include "core/unique_fd.h"

namespace toolvfs {

class McpHttpServerProcess {
 public:
  // Serves `project` (its toolvfs.toml) with `extra_arguments` after
  // --http; the log goes to `log_path`.
  McpHttpServerProcess(const std::filesystem::path& project, std::string log_path,
                       const std::vector<std::string>& extra_arguments)
      : log_(std::move(log_path)) {
    std::string command =
        "exec \"$0\" mcp --no-audit --sandbox best-effort --project \"$1\" --http 127.0.0.1:0";
    std::vector<std::string> argv = {"/bin/sh", "-c", "", ToolvfsBinary(), project.string()};
    for (size_t i = 0; i < extra_arguments.size(); ++i) {
      command += " \"$" + std::to_string(i + 2) + "\"";
      argv.push_back(extra_arguments[i]);
    }
    command += " 2> \"" + log_ + "\"";
    argv[2] = command;
    process_ = std::make_unique<LiveProcess>(argv, ProcessOptions{.cwd = project.string()});
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    constexpr std::string_view kListening = "listening on http://127.0.0.1:";
    while (std::chrono::steady_clock::now() < deadline) {
      const std::string log = Log();
      const size_t at = log.find(kListening);
      if (at != std::string::npos) {
        port_ = static_cast<uint16_t>(std::atoi(log.c_str() + at + kListening.size()));
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    EXPECT_NE(port_, 0) << "the server did not say where it listens: " << Log();
  }

  McpHttpServerProcess(const McpHttpServerProcess&) = delete;
  McpHttpServerProcess& operator=(const McpHttpServerProcess&) = delete;

  ~McpHttpServerProcess() {
    if (process_) Stop();
  }

  uint16_t port() const { return port_; }
  // The server's process id (the tools it runs descend from it).
  pid_t pid() const { return process_->pid(); }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/mcp"; }

  // What the server printed on stderr so far.
  std::string Log() const {
    UniqueFd fd(open(log_.c_str(), O_RDONLY | O_CLOEXEC));
    std::string text;
    char buffer[4096];
    for (ssize_t got; fd.get() >= 0 && (got = read(fd.get(), buffer, sizeof buffer)) > 0;) {
      text.append(buffer, static_cast<size_t>(got));
    }
    return text;
  }

  // SIGTERM, then the exit code (0 when every session ended cleanly).
  int Stop() {
    process_->Signal(SIGTERM);
    const int code = process_->Wait(std::chrono::seconds(30)).exit_code;
    process_.reset();
    return code;
  }

 private:
  std::string log_;
  std::unique_ptr<LiveProcess> process_;
  uint16_t port_ = 0;
};

}  // namespace toolvfs
