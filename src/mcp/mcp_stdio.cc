#include "mcp/mcp_stdio.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include <sys/epoll.h>

#include <atomic>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/unique_fd.h"
#include "host/cancel_token.h"

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
  std::unique_lock lock(mutex_);
  if (writing_) {
    // Another sender is writing: it writes this one too, after what it
    // has (so each sender's messages keep their order), and this sender
    // goes on instead of sleeping on the lock while the writer waits for
    // the client or for a CPU (a lock convoy on a busy machine). Queued
    // bytes are bounded: past the bound a sender waits its turn.
    drained_.wait(lock, [&] { return closed_.cancelled() || !writing_ || queued_bytes_ < kMaxQueuedBytes; });
    if (closed_.cancelled()) return;
    if (writing_) {
      queue_.emplace_back(message.bytes());
      queued_bytes_ += message.size();
      return;
    }
  }
  if (closed_.cancelled()) return;
  writing_ = true;
  lock.unlock();
  bool open = WriteWhole(message.bytes());
  lock.lock();
  while (open && !queue_.empty()) {
    std::string next = std::move(queue_.front());
    queue_.pop_front();
    queued_bytes_ -= next.size();
    lock.unlock();
    open = WriteWhole(next);
    lock.lock();
  }
  if (!open) {
    queue_.clear();  // for nobody: the client is gone
    queued_bytes_ = 0;
  }
  writing_ = false;
  drained_.notify_all();
}

bool McpStdioWriter::WriteWhole(std::string_view rest) {
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
      return false;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      if (options_.log) {
        options_.log("the client has not read its output for " +
                     std::to_string(std::chrono::duration_cast<std::chrono::seconds>(options_.stall_timeout).count()) +
                     " s; taking it as gone and stopping");
      }
      closed_.Cancel();
      return false;
    }
    pollfd output{options_.output_fd, POLLOUT, 0};
    poll(&output, 1, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
  }
  return true;
}

namespace {

// The readers of one stdio session, leader/followers style: every reader
// thread waits in epoll_wait on the input, armed one-shot, so exactly one
// wakes per arrival. It reads and accepts the lines it got in input order
// (under read_mutex_, so a cancellation is never handled before the call
// it names), re-arms the input, and then runs the tools/call it read
// itself and writes its answer, while the others wait for the next line.
// So a call costs no hand-off between threads (the reader-to-worker wake
// and its context switches were most of a read_file's time,
// bench/mcp_bench), and before a reader runs a call it makes sure another
// one is waiting, starting one if none is, so a cancellation or ping is
// read while calls run. The calling thread is the first reader; the
// others are kept: at most one per call that may run at once, plus one.
// The reader that sees the end (of input, or of the output) is idle, so
// it is the one that gives running calls their grace and cancels them.
class StdioReaders {
 public:
  StdioReaders(McpServer& server, McpStdioWriter& writer, const McpStdioOptions& options)
      : server_(server),
        writer_(writer),
        options_(options),
        splitter_(options.max_line_bytes),
        epoll_(epoll_create1(EPOLL_CLOEXEC)),
        max_readers_(server.max_concurrent_calls() + 1) {}

  ~StdioReaders() {
    Stop();
    // No reader is added once stop_ is cancelled (AddReader's caller checks it
    // under readers_mutex_), so the list taken here is complete.
    std::vector<std::thread> readers;
    {
      std::lock_guard lock(readers_mutex_);
      readers.swap(readers_);
    }
    for (std::thread& reader : readers) reader.join();
  }

  // Prepares the wait for input. An input epoll cannot watch (a regular
  // file, /dev/null) is always readable: readers then just take turns at it.
  Status Start() {
    if (!epoll_ || stop_.fd() < 0) return Status(StatusCode::kIo, std::string("toolvfs mcp: ") + strerror(errno));
    epoll_event stop{EPOLLIN, {.u32 = kStopEvent}};
    epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, stop_.fd(), &stop);
    for (const int end_fd : {writer_.closed_fd(), options_.stop_fd}) {
      if (end_fd < 0) continue;
      epoll_event end{EPOLLIN, {.u32 = kStopEvent}};
      epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, end_fd, &end);
    }
    epoll_event input{EPOLLIN | EPOLLONESHOT, {.u32 = kInputEvent}};
    if (epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, options_.input_fd, &input) != 0) {
      if (errno != EPERM) {
        return Status(StatusCode::kIo, std::string("toolvfs mcp: cannot watch stdin: ") + strerror(errno));
      }
      input_pollable_ = false;
    }
    return Status();
  }

  // Reads and runs calls on the calling thread (and the readers it
  // starts) until the input ended or failed or the output is gone, and
  // the calls then running ended.
  void Serve() {
    ReadAndRun();
    server_.WaitForCalls(std::chrono::hours(24));
  }

  // Ends every reader's wait (a reader running a call stops after it).
  void Stop() {
    stop_.Cancel();
  }

  Status status() {
    std::lock_guard lock(read_mutex_);
    return status_;
  }

 private:
  static constexpr uint32_t kInputEvent = 1;
  static constexpr uint32_t kStopEvent = 2;

  // With readers_mutex_ held.
  void AddReader() {
    ++idle_readers_;
    readers_.emplace_back([this] { ReadAndRun(); });
  }

  void ReadAndRun() {
    Loop();
    // The first reader out was idle when the end came (a reader running a
    // call leaves after it): it ends the session's calls.
    if (!ending_.exchange(true)) EndCalls();
  }

  // The client shut down (end of input) or is gone (output closed or
  // stalled): calls still running get the grace to finish, then are
  // cancelled, so no tool outlives the session.
  void EndCalls() {
    if (writer_.closed() || !server_.WaitForCalls(options_.shutdown_grace)) {
      server_.CancelAll();
      server_.WaitForCalls(std::chrono::hours(24));
    }
  }

  void Loop() {
    while (WaitForInput()) {
      std::function<void()> call = ReadAndAccept();
      if (!call) continue;
      if (stop_.cancelled()) {
        // The input ended (with this call, or since): this reader, idle
        // again, is to give the call its grace and cancel it after that,
        // so the pool runs it.
        server_.RunOnPool(std::move(call));
        continue;
      }
      {
        std::lock_guard lock(readers_mutex_);
        --idle_readers_;
        if (idle_readers_ == 0 && readers_.size() + 1 < max_readers_ && !stop_.cancelled()) AddReader();
      }
      call();
      std::lock_guard lock(readers_mutex_);
      ++idle_readers_;
    }
  }

  // True when there is input to read, false when the readers stop.
  bool WaitForInput() {
    if (!input_pollable_) return !stop_.cancelled() && !writer_.closed() && !StopAsked();
    for (;;) {
      epoll_event events[3];
      const int ready = epoll_wait(epoll_.get(), events, 3, -1);
      if (ready < 0 && errno == EINTR) continue;
      if (ready < 0) {
        Status failed(StatusCode::kIo, std::string("toolvfs mcp: waiting for stdin failed: ") + strerror(errno));
        std::lock_guard lock(read_mutex_);
        Finish(std::move(failed));
        return false;
      }
      bool input = false;
      for (int i = 0; i < ready; ++i) {
        if (events[i].data.u32 == kStopEvent) return false;
        input = true;
      }
      if (input) return true;
    }
  }

  // Reads what the input has and accepts its lines in order; returns the
  // last tools/call read, for this thread to run (any earlier one of the
  // same read goes to the server's pool, so neither waits for the other).
  std::function<void()> ReadAndAccept() {
    std::lock_guard lock(read_mutex_);
    if (stop_.cancelled()) return {};
    std::span<char> space = splitter_.PrepareAppend();
    const ssize_t got = read(options_.input_fd, space.data(), space.size());
    if (got < 0) {
      if (errno == EINTR || errno == EAGAIN) {
        Rearm();
        return {};
      }
      Finish(Status(StatusCode::kIo, std::string("toolvfs mcp: reading stdin failed: ") + strerror(errno)));
      return {};
    }
    splitter_.CommitAppend(static_cast<size_t>(got));
    std::function<void()> call;
    const auto accept = [&](std::string_view line) {
      // A call held from earlier in this read goes to the pool before the
      // next line is accepted: it already counts against
      // max_concurrent_calls, and Accept may wait for a free slot, which a
      // held call would never give back (with a limit of 1, a deadlock).
      if (call) server_.RunOnPool(std::exchange(call, nullptr));
      // Parsed in place: the splitter pads every line it yields.
      call = server_.Accept(parser_.ParsePadded(line), writer_.send());
    };
    while (std::optional<LineSplitter::Event> event = splitter_.Next()) {
      if (writer_.closed()) break;  // the client is gone: the rest is for nobody
      if (event->kind == LineSplitter::EventKind::kTooLong) {
        writer_.Send(SerializeProtocolError(LineTooLongError(options_.max_line_bytes)));
      } else {
        accept(event->line);
      }
    }
    if (got == 0) {
      // A last message without its newline is taken as it is: the
      // client closed its end right after it.
      if (std::optional<LineSplitter::Event> rest = splitter_.Finish()) accept(rest->line);
      Finish(Status());
    } else {
      Rearm();
    }
    return call;
  }

  // Whether options_.stop_fd is readable (for an input epoll cannot watch).
  bool StopAsked() const {
    if (options_.stop_fd < 0) return false;
    pollfd stop{options_.stop_fd, POLLIN, 0};
    return poll(&stop, 1, 0) == 1;
  }

  // With read_mutex_ held: the next arrival wakes one reader again.
  void Rearm() {
    if (!input_pollable_) return;
    epoll_event input{EPOLLIN | EPOLLONESHOT, {.u32 = kInputEvent}};
    epoll_ctl(epoll_.get(), EPOLL_CTL_MOD, options_.input_fd, &input);
  }

  // With read_mutex_ held (or before the readers start).
  void Finish(Status status) {
    status_ = std::move(status);
    Stop();
  }

  McpServer& server_;
  McpStdioWriter& writer_;
  const McpStdioOptions& options_;
  std::mutex read_mutex_;  // splitter_, parser_, status_, the read itself and the accepting of what it read
  LineSplitter splitter_;
  MessageParser parser_;
  Status status_;
  UniqueFd epoll_;
  bool input_pollable_ = true;
  CancelToken stop_;  // cancelled (and its fd readable) once the readers are to stop
  std::atomic<bool> ending_{false};  // a reader is ending the calls
  const size_t max_readers_;
  std::mutex readers_mutex_;  // readers_, idle_readers_
  std::vector<std::thread> readers_;  // the readers besides the caller of Serve
  size_t idle_readers_ = 1;  // readers not running a call (the caller of Serve first)
};

}  // namespace

Status ServeMcpOverStdio(McpServer& server, McpStdioWriter& writer, const McpStdioOptions& options) {
  StdioReaders readers(server, writer, options);
  TOOLVFS_RETURN_IF_ERROR(readers.Start());
  readers.Serve();
  readers.Stop();
  return readers.status();
}

}  // namespace toolvfs
