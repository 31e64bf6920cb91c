// The stdio transport of `toolvfs mcp` (MCP "stdio" transport): one
// JSON-RPC message per line on the input, answers and server messages one
// line each on the output, through McpServer::Accept. The thread that
// reads a tools/call runs it and writes its answer (no hand-off to a
// worker); other reader threads keep reading meanwhile, so calls overlap
// and a cancellation or ping is read while calls run (mcp_stdio.cc).
//
// Bounded whatever the client does: a line longer than max_line_bytes is
// answered with -32600 and skipped without being buffered (LineSplitter);
// output is buffered only while another message is being written (at most
// McpStdioWriter::kMaxQueuedBytes), and a sender then waits for the client
// to read. A client that leaves output
// unread for stall_timeout is taken as gone (as is a closed output): the
// transport stops reading and cancels the running calls, so memory,
// threads and tool processes stay bounded by max_concurrent_calls.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <string>

#include "core/status.h"
#include "mcp/mcp_server.h"
#include "protocol/ndjson.h"

namespace toolvfs {

struct McpStdioOptions {
  int input_fd = 0;
  int output_fd = 1;  // made non-blocking for the transport's life
  // Readable once the server is to stop (SIGTERM to `toolvfs mcp`), or -1:
  // taken as the end of input, so running calls get shutdown_grace too.
  int stop_fd = -1;
  size_t max_line_bytes = kDefaultMaxLineBytes;
  // A message the client does not read within this time ends the session.
  std::chrono::milliseconds stall_timeout = std::chrono::seconds(30);
  // At end of input (the client's way of shutting down), calls still
  // running get this long to end, and are then cancelled.
  std::chrono::milliseconds shutdown_grace = std::chrono::seconds(2);
  // Told about the transport's own events (client gone, output stalled),
  // one line each; may be empty.
  std::function<void(std::string_view)> log;
};

// A thread-safe writer of whole lines to a non-blocking fd with the stall
// rule above. One sender writes at a time; a message sent meanwhile is
// queued for that sender to write next (at most kMaxQueuedBytes; beyond
// them a sender waits), so senders do not queue up on a lock while the
// writer waits for the client. Once the output failed or stalled, every
// Send is dropped.
class McpStdioWriter {
 public:
  static constexpr size_t kMaxQueuedBytes = size_t{1} << 20;

  explicit McpStdioWriter(const McpStdioOptions& options);
  ~McpStdioWriter();
  McpStdioWriter(const McpStdioWriter&) = delete;
  McpStdioWriter& operator=(const McpStdioWriter&) = delete;

  // Writes `message` whole or not at all (a stalled write ends the output),
  // or queues it behind the message being written.
  void Send(const WireMessage& message);
  // Send as an McpSend, living as long as the writer (hand it to the
  // server, which must not outlive the writer).
  const McpSend& send() const { return send_; }
  bool closed() const { return closed_.cancelled(); }
  // Readable once the output is closed, for the reader's poll.
  int closed_fd() const { return closed_.fd(); }

 private:
  // Writes all of `bytes` with the stall rule; false when the output is
  // gone (closed_ is then cancelled).
  bool WriteWhole(std::string_view bytes);

  const McpStdioOptions& options_;
  std::mutex mutex_;  // writing_, queue_, queued_bytes_
  std::condition_variable drained_;
  bool writing_ = false;  // a sender is writing; it also writes queue_
  std::deque<std::string> queue_;
  size_t queued_bytes_ = 0;
  CancelToken closed_;
  int saved_flags_ = -1;
  McpSend send_;
};

// Serves `server` until end of input, stop_fd or the output is gone; then
// lets running calls end (shutdown_grace) and cancels the rest, waiting
// for them. OK at a clean end of input; Io when the input failed.
Status ServeMcpOverStdio(McpServer& server, McpStdioWriter& writer, const McpStdioOptions& options);

}  // namespace toolvfs
