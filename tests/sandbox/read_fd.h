// Reading what a launched test child wrote, without hanging a test.
#pragma once

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <string>
#include <string_view>

namespace toolvfs {

// Reads a non-blocking fd until end of file, or until `stop_at` appears when
// it is non-empty; gives up after five seconds.
inline std::string ReadFd(int fd, std::string_view stop_at = "") {
  std::string text;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (std::chrono::steady_clock::now() < deadline) {
    if (!stop_at.empty() && text.find(stop_at) != std::string::npos) break;
    pollfd poll_fd{.fd = fd, .events = POLLIN, .revents = 0};
    if (poll(&poll_fd, 1, 100) < 0 && errno != EINTR) break;
    char buffer[4096];
    const ssize_t received = read(fd, buffer, sizeof buffer);
    if (received == 0) break;
    if (received > 0) text.append(buffer, static_cast<size_t>(received));
  }
  return text;
}

}  // namespace toolvfs
