#include "mcp/mcp_stdio.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include <string>

namespace toolvfs {

McpStdioWriter::McpStdioWriter(const McpStdioOptions& options)
    : options_(options), send_([this](const WireMessage& message) { Send(message); }) {
  saved_flags_ = fcntl(options_.output_fd, F_GETFL);
  if (saved_flags_ >= 0) fcntl(options_.output_fd, F_SETFL, saved_flags_ | O_NONBLOCK);
}

McpStdioWriter::~McpStdioWriter() {
  if (saved_flags_ >= 0) fcntl(options_.output_fd, F_SETFL, saved_flags_);
}

void McpStdioWriter::Send(const WireMessage& message) {
  std::lock_guard lock(mutex_);
  if (closed_.cancelled()) return;
  std::string_view rest = message.bytes();
  auto deadline = std::chrono::steady_clock::now() + options_.stall_timeout;
  while (!rest.empty()) {
    const ssize_t written = write(options_.output_fd, rest.data(), rest.size());
    if (written > 0) {
      rest.remove_prefix(static_cast<size_t>(written));
      // The client reads: the stall clock starts again.
      deadline = std::chrono::steady_clock::now() + options_.stall_timeout;
      continue;
    }
    if (written < 0 && errno == EINTR) continue;
    if (written < 0 && errno != EAGAIN) {
      if (options_.log) options_.log(std::string("the output is closed (") + strerror(errno) + "); stopping");
      closed_.Cancel();
      return;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      if (options_.log) {
        options_.log("the client has not read its output for " +
                     std::to_string(std::chrono::duration_cast<std::chrono::seconds>(options_.stall_timeout).count()) +
                     " s; taking it as gone and stopping");
      }
      closed_.Cancel();
      return;
    }
    pollfd output{options_.output_fd, POLLOUT, 0};
    poll(&output, 1, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
  }
}

Status ServeMcpOverStdio(McpServer& server, McpStdioWriter& writer, const McpStdioOptions& options) {
  const McpSend& send = writer.send();
  LineSplitter splitter(options.max_line_bytes);
  Status status;
  bool end_of_input = false;
  while (!writer.closed() && !end_of_input) {
    pollfd fds[2] = {{options.input_fd, POLLIN, 0}, {writer.closed_fd(), POLLIN, 0}};
    const int ready = poll(fds, writer.closed_fd() >= 0 ? 2 : 1, 1000);
    if (ready < 0 && errno != EINTR) {
      status = Status(StatusCode::kIo, std::string("toolvfs mcp: poll on stdin failed: ") + strerror(errno));
      break;
    }
    if (ready <= 0 || fds[0].revents == 0) continue;
    std::span<char> space = splitter.PrepareAppend();
    const ssize_t got = read(options.input_fd, space.data(), space.size());
    if (got < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      status = Status(StatusCode::kIo, std::string("toolvfs mcp: reading stdin failed: ") + strerror(errno));
      break;
    }
    splitter.CommitAppend(static_cast<size_t>(got));
    if (got == 0) end_of_input = true;
    while (std::optional<LineSplitter::Event> event = splitter.Next()) {
      if (writer.closed()) break;  // the client is gone: the rest is for nobody
      if (event->kind == LineSplitter::EventKind::kTooLong) {
        send(SerializeProtocolError(LineTooLongError(options.max_line_bytes)));
      } else {
        server.Submit(event->line, send);
      }
    }
    if (end_of_input) {
      // A last message without its newline is taken as it is: the
      // client closed its end right after it.
      if (std::optional<LineSplitter::Event> rest = splitter.Finish()) server.Submit(rest->line, send);
    }
  }
  // The client shut down (end of input) or is gone (output closed or
  // stalled): calls still running get the grace to finish, then are
  // cancelled, so no tool outlives the session.
  if (writer.closed() || !server.WaitForCalls(options.shutdown_grace)) {
    server.CancelAll();
    server.WaitForCalls(std::chrono::hours(24));
  }
  return status;
}

}  // namespace toolvfs
