#include "host/tool_session.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <condition_variable>
#include <csignal>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/io.h"
#include "core/text.h"
#include "host/request_audit.h"
#include "protocol/ndjson.h"
#include "protocol/wire_errors.h"

namespace toolvfs {
namespace {

using Clock = std::chrono::steady_clock;

// Answers waiting for room in the tool's stdin, in bytes, past which the
// loop stops reading the tool's stdout: a tool that never reads cannot make
// the host buffer without bound. At least two maximal answers fit, so one
// large answer never stops the loop by itself.
size_t MaxQueuedAnswerBytes(size_t max_message_bytes) {
  return std::max<size_t>(size_t{64} << 20, 2 * (AnswerLimitBytes(max_message_bytes) + 1));
}

// Requests on the worker threads past which the loop stops reading: a tool
// that sends a million greps without waiting queues at most this many.
constexpr size_t kMaxRequestsInFlight = 1024;

// Bytes read from stdout per wake-up before the loop looks at its other
// fds again, so a flooding tool cannot starve cancel, timers or stderr.
constexpr size_t kMaxReadPerWakeup = size_t{4} << 20;

constexpr int kProtocolErrorsToStop = 3;

// epoll user data: which fd an event is for.
enum Source : uint64_t { kToolStdout, kToolStdin, kToolStderr, kChildExit, kCancel, kCompletion, kControl };

void IgnoreSigpipeOnce() {
  // Writing to the stdin of a tool that has exited must give EPIPE, not kill
  // the host. Child processes get default dispositions back from the launcher.
  static std::once_flag once;
  std::call_once(once, [] { std::signal(SIGPIPE, SIG_IGN); });
}

UniqueFd OpenPidfd(pid_t pid) {
#ifdef SYS_pidfd_open
  return UniqueFd(static_cast<int>(syscall(SYS_pidfd_open, pid, 0)));
#else
  (void)pid;
  return UniqueFd();
#endif
}

// When a request arrived and how long its line was, for the audit record.
struct RequestTiming {
  std::chrono::steady_clock::time_point received;
  size_t bytes_in = 0;
};

// The requests handed to worker threads and their answers. Threads start on
// the first blocking request, so a session that never greps starts none.
class WorkerPool {
 public:
  struct Task {
    Message request;
    const MethodSpec* method;
    std::shared_ptr<std::atomic<bool>> cancelled;
    RequestTiming timing;
  };
  // A finished request, or (request unset) a notification for the tool
  // that a handler sent while it ran (`pending`).
  struct Done {
    std::optional<Message> request;
    WireMessage answer;
    std::shared_ptr<std::atomic<bool>> cancelled;
    std::optional<RequestScope> scope;  // unset if the request never ran
    RequestTiming timing;
  };

  WorkerPool(const MethodContext& context, unsigned max_threads, int completion_fd)
      : context_(context), max_threads_(std::max(1u, max_threads)), completion_fd_(completion_fd) {}

  ~WorkerPool() { Stop(); }

  // Drops the requests not started (the session is over: nobody wants
  // their answers) and waits for the running ones; TakeDone then has them.
  void Stop() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
      tasks_.clear();
    }
    work_ready_.notify_all();
    for (std::thread& thread : threads_) thread.join();
    threads_.clear();
  }

  void Submit(Task task) {
    {
      std::lock_guard lock(mutex_);
      tasks_.push_back(std::move(task));
      if (threads_.size() < max_threads_ && idle_threads_ == 0) {
        threads_.emplace_back([this] { WorkLoop(); });
      }
    }
    work_ready_.notify_one();
  }

  // Thread-safe: queues `notification` for the loop to send.
  void PostNotification(WireMessage notification) {
    std::lock_guard lock(mutex_);
    done_.push_back({std::nullopt, std::move(notification), nullptr, std::nullopt, {}});
    const uint64_t one = 1;
    [[maybe_unused]] ssize_t written = write(completion_fd_, &one, sizeof one);
  }

  std::vector<Done> TakeDone() {
    std::lock_guard lock(mutex_);
    std::vector<Done> done;
    done.swap(done_);
    return done;
  }

 private:
  void WorkLoop() {
    std::unique_lock lock(mutex_);
    while (true) {
      ++idle_threads_;
      work_ready_.wait(lock, [this] { return stopping_ || !tasks_.empty(); });
      --idle_threads_;
      if (tasks_.empty()) return;  // stopping
      Task task = std::move(tasks_.front());
      tasks_.pop_front();
      lock.unlock();
      std::optional<WireMessage> answer;
      std::optional<RequestScope> scope;
      // A request the tool cancelled while it waited is not run at all.
      if (!task.cancelled->load()) {
        scope.emplace(task.request.id(), task.method->name, /*may_block=*/true);
        scope->set_cancel_flag(task.cancelled.get());
        answer = task.method->handler(task.request, context_, *scope);
      }
      lock.lock();
      done_.push_back({std::move(task.request), answer ? std::move(*answer) : WireMessage(),
                       std::move(task.cancelled), std::move(scope), task.timing});
      const uint64_t one = 1;
      [[maybe_unused]] ssize_t written = write(completion_fd_, &one, sizeof one);
    }
  }

  const MethodContext& context_;
  const unsigned max_threads_;
  const int completion_fd_;
  std::mutex mutex_;
  std::condition_variable work_ready_;
  std::deque<Task> tasks_;
  std::vector<Done> done_;
  std::vector<std::thread> threads_;
  unsigned idle_threads_ = 0;
  bool stopping_ = false;
};

// The last `limit` bytes of a stream.
class TailBuffer {
 public:
  explicit TailBuffer(size_t limit) : limit_(limit) {}
  void Append(std::string_view bytes) {
    data_.append(bytes);
    if (data_.size() > 2 * limit_) data_.erase(0, data_.size() - limit_);
  }
  std::string Tail() const {
    std::string_view tail = data_;
    if (tail.size() > limit_) tail.remove_prefix(tail.size() - limit_);
    return ToValidUtf8(tail);
  }

 private:
  size_t limit_;
  std::string data_;
};

std::string LastLine(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.remove_suffix(1);
  size_t newline = text.rfind('\n');
  if (newline != std::string_view::npos) text.remove_prefix(newline + 1);
  if (text.size() > 200) text = text.substr(0, 200);
  return std::string(text);
}

class Session {
 public:
  Session(ChildProcess& child, const SessionSetup& setup, const MethodContext& context,
          CancelToken& cancel)
      : child_(child),
        setup_(setup),
        context_(context),
        cancel_(cancel),
        splitter_(setup.limits.max_message_bytes),
        stderr_tail_(kStderrTailBytes),
        reports_(setup.reports, setup.tool_name, setup.report_limits) {}

  SessionResult Run();

 private:
  Status Setup();
  Status Watch(int fd, Source source, uint32_t events);
  void Unwatch(int fd);

  // Event handlers. They record the end of the session in result_ and set
  // ended_ when the session must stop.
  // Reads what is available (at most kMaxReadPerWakeup) and handles the
  // lines; returns the bytes read.
  size_t ReadStdout();
  void OnStdoutClosed();
  void ReadStderr();
  void FlushAnswers();
  void HandleLine(std::string_view line);
  void HandleProtocolError(const ProtocolError& error);
  void HandleRequest(Message message, size_t line_bytes);
  // Hands a request to the workers; its answer arrives through the
  // completion eventfd.
  void SubmitToWorkers(Message message, const MethodSpec* method, RequestTiming timing);
  // The one way a request is answered: an answer over the answer limit
  // (AnswerLimitBytes) becomes an error, the audit record is written
  // (AuditAnswer), and the answer is queued. `scope` is the handler's, null
  // when none ran; `code` is the error code of `answer`, 0 for a result.
  void AnswerRequest(const Message& request, const RequestScope* scope, int code, WireMessage answer,
                     const RequestTiming& timing);
  // The one audit record of an answered request (request_audit.h), if the
  // session has an audit sink. Called by AnswerRequest, and for the
  // requests answered otherwise: -32005 to a tool's cancel (recorded when
  // the worker is done), or never (still running when the session ended).
  void AuditAnswer(const Message& request, const RequestScope* scope, int code, size_t bytes_out,
                   const RequestTiming& timing);
  // A finished request of the workers that the tool cancelled (answered
  // -32005 then): writes its record and returns true.
  bool AuditIfCancelledByTool(const WorkerPool::Done& done);
  void HandleNotification(const Message& message);
  void HandleToolCancel(const Message& message);
  void HandleState(const Message& message);
  // The tool's final message (result, error, a stopped state) arrived:
  // the run's end, unless the user cancelled; the tool gets the grace to exit.
  void Finish(std::string final_params_json, SessionResult::End end);
  // Lines and the abort request from SessionControl.
  void OnControl();
  void TakeCompletedAnswers();
  void OnChildExit();
  void OnCancel();
  void OnDeadline(Clock::time_point now);

  // Queues a line for the tool's stdin: a notification, a protocol error,
  // or an answer already audited (AnswerRequest for the others).
  void QueueLine(WireMessage line);
  void ProcessLines();
  void UpdateStdoutInterest();
  void End(SessionResult::End end, std::string message);
  void KillTool();
  std::optional<Clock::time_point> NextDeadline() const;
  std::string Name() const { return "Tool " + Quote(setup_.tool_name); }
  // "; its stdout began with something that is not protocol JSON: 'hello'
  // (...)" once such a line came, else empty.
  std::string StrayOutputNote() const {
    if (first_stray_line_.empty()) return {};
    return "; its stdout had a line that is not protocol JSON: " + Quote(first_stray_line_) +
           " (a tool's own messages belong on stderr)";
  }

  ChildProcess& child_;
  const SessionSetup& setup_;
  const MethodContext& context_;
  CancelToken& cancel_;

  UniqueFd epoll_;
  UniqueFd pidfd_;
  UniqueFd completion_;
  std::unique_ptr<WorkerPool> workers_;

  LineSplitter splitter_;
  MessageParser parser_;
  TailBuffer stderr_tail_;
  ToolReportFilter reports_;

  std::deque<WireMessage> answers_;
  size_t answer_offset_ = 0;  // bytes of answers_.front() already written
  size_t queued_bytes_ = 0;
  bool stdin_watched_ = false;
  bool stdout_watched_ = false;
  bool stdout_open_ = true;
  // Complete lines wait in the splitter while back pressure holds.
  bool lines_pending_ = false;
  // The tool exited or closed stdout: read and handle what it wrote
  // regardless of back pressure.
  bool draining_ = false;

  // Requests on the workers, by id; the flag drops an answer the tool no
  // longer wants.
  std::unordered_map<RequestId, std::shared_ptr<std::atomic<bool>>, RequestIdHash> in_flight_;
  // The requests the tool cancelled (answered -32005 at once) whose
  // worker has not reported back, by their flag: audited with that code
  // and the size of that answer.
  std::unordered_map<const std::atomic<bool>*, size_t> cancelled_by_tool_;

  int protocol_errors_in_a_row_ = 0;
  // The first bytes of the first stdout line that was not protocol JSON.
  std::string first_stray_line_;

  Clock::time_point started_ = Clock::now();
  Clock::time_point last_activity_ = started_;
  // After a final notification, after cancel, or once stdout closed: when
  // to escalate next, and how far escalation has gone.
  std::optional<Clock::time_point> escalate_at_;
  int escalation_ = 0;  // signals sent: 0, 1 (SIGTERM), 2 (SIGKILL)
  bool final_received_ = false;
  bool cancel_sent_ = false;
  bool child_exited_ = false;
  // A stateful tool's last state was `waiting`: it waits for `apply` from
  // the caller, so its silence is not idleness.
  bool waiting_for_input_ = false;

  bool ended_ = false;
  SessionResult result_;
};

Status Session::Watch(int fd, Source source, uint32_t events) {
  epoll_event event{};
  event.events = events;
  event.data.u64 = source;
  if (epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, fd, &event) != 0) {
    return ErrnoToStatus(errno, "Cannot watch the tool's pipes (epoll_ctl)");
  }
  return OkStatus();
}

void Session::Unwatch(int fd) { epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, fd, nullptr); }

Status Session::Setup() {
  IgnoreSigpipeOnce();
  epoll_ = UniqueFd(epoll_create1(EPOLL_CLOEXEC));
  if (!epoll_) return ErrnoToStatus(errno, "Cannot create the session's epoll instance");
  completion_ = UniqueFd(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!completion_) return ErrnoToStatus(errno, "Cannot create the session's eventfd");
  TOOLVFS_RETURN_IF_ERROR(Watch(completion_.get(), kCompletion, EPOLLIN));
  TOOLVFS_RETURN_IF_ERROR(Watch(child_.stdout_fd().get(), kToolStdout, EPOLLIN));
  stdout_watched_ = true;
  TOOLVFS_RETURN_IF_ERROR(Watch(child_.stderr_fd().get(), kToolStderr, EPOLLIN));
  pidfd_ = OpenPidfd(child_.pid());
  if (pidfd_) TOOLVFS_RETURN_IF_ERROR(Watch(pidfd_.get(), kChildExit, EPOLLIN));
  // Edge-triggered: the eventfd stays readable once cancelled (other
  // pollers share it), and each later write (a kill request) is one event.
  if (cancel_.fd() >= 0) TOOLVFS_RETURN_IF_ERROR(Watch(cancel_.fd(), kCancel, EPOLLIN | EPOLLET));
  if (setup_.control != nullptr) {
    // Without its eventfd no `apply` or abort could ever reach the loop.
    if (setup_.control->fd() < 0) {
      return Status(StatusCode::kResourceExhausted, "cannot create the session's control eventfd");
    }
    TOOLVFS_RETURN_IF_ERROR(Watch(setup_.control->fd(), kControl, EPOLLIN));
  }
  workers_ = std::make_unique<WorkerPool>(context_, setup_.worker_threads, completion_.get());
  // A handler about to ask the user tells the tool first (SPEC.md §4.4):
  // the notification goes through the workers' queue to this loop.
  context_.gate.set_pending_sender([workers = workers_.get()](const RequestId& id, std::string_view reason) {
    workers->PostNotification(SerializeNotification("pending", [&](JsonWriter& writer) {
      writer.StartObject();
      WriteJsonKey(writer, "request_id");
      id.WriteTo(writer);
      WriteJsonKey(writer, "reason");
      WriteJsonString(writer, reason);
      writer.EndObject();
    }));
  });
  return OkStatus();
}

SessionResult Session::Run() {
  if (Status status = Setup(); !status.ok()) {
    End(SessionResult::End::kHostError, status.message());
  } else {
    QueueLine(WireMessage::Copy(setup_.init.bytes()));
    if (cancel_.cancelled()) OnCancel();
    if (setup_.control != nullptr) OnControl();
  }

  epoll_event events[8];
  while (!ended_) {
    if (lines_pending_ && stdout_watched_) {
      ProcessLines();
      continue;
    }
    Clock::time_point now = Clock::now();
    int timeout_ms = -1;
    if (std::optional<Clock::time_point> deadline = NextDeadline()) {
      if (*deadline <= now) {
        OnDeadline(now);
        continue;
      }
      auto wait = std::chrono::ceil<std::chrono::milliseconds>(*deadline - now);
      timeout_ms = static_cast<int>(std::min<int64_t>(wait.count(), 1 << 30));
    }
    if (!pidfd_) timeout_ms = timeout_ms < 0 ? 50 : std::min(timeout_ms, 50);
    int count = epoll_wait(epoll_.get(), events, 8, timeout_ms);
    if (count < 0) {
      if (errno == EINTR) continue;
      End(SessionResult::End::kHostError, ErrnoToStatus(errno, "epoll_wait failed").message());
      break;
    }
    if (!pidfd_ && !child_exited_) {
      Result<std::optional<ExitStatus>> status = child_.TryWait();
      if (status.ok() && status.value()) OnChildExit();
    }
    for (int i = 0; i < count && !ended_; ++i) {
      switch (static_cast<Source>(events[i].data.u64)) {
        case kToolStdout: ReadStdout(); break;
        case kToolStdin: FlushAnswers(); break;
        case kToolStderr: ReadStderr(); break;
        case kChildExit: OnChildExit(); break;
        case kCancel: OnCancel(); break;
        case kCompletion: TakeCompletedAnswers(); break;
        case kControl: OnControl(); break;
      }
    }
  }

  KillTool();
  context_.gate.CancelQuestions();  // a worker may be waiting for the user
  // ... or for a child process or a download: nobody wants those answers.
  for (auto& [id, cancelled] : in_flight_) cancelled->store(true);
  if (workers_) {
    workers_->Stop();  // joins the workers: nothing touches the project after return
    // What they did is recorded even though nobody gets the answers.
    for (WorkerPool::Done& done : workers_->TakeDone()) {
      if (!done.request || AuditIfCancelledByTool(done)) continue;
      // Never answered: recorded with what its handler returned.
      AuditAnswer(*done.request, &*done.scope, done.scope->error_code(), 0, done.timing);
    }
    workers_.reset();
  }
  context_.gate.set_pending_sender(nullptr);
  reports_.Finish();
  ReadStderr();
  result_.stderr_tail = stderr_tail_.Tail();
  if (!result_.exit_status) {
    Result<ExitStatus> status = child_.Wait();
    if (status.ok()) result_.exit_status = status.value();
  }
  return std::move(result_);
}

std::optional<Clock::time_point> Session::NextDeadline() const {
  std::optional<Clock::time_point> deadline = started_ + setup_.limits.total_timeout;
  auto earliest = [&](Clock::time_point candidate) {
    if (!deadline || candidate < *deadline) deadline = candidate;
  };
  // A tool waiting for its own slow request is not idle.
  if (in_flight_.empty() && !final_received_ && !cancel_sent_ && !waiting_for_input_) {
    earliest(last_activity_ + setup_.limits.idle_timeout);
  }
  if (escalate_at_) earliest(*escalate_at_);
  return deadline;
}

void Session::OnDeadline(Clock::time_point now) {
  if (now >= started_ + setup_.limits.total_timeout) {
    End(SessionResult::End::kTotalTimeout,
        Name() + " timed out: it ran longer than " +
            std::to_string(setup_.limits.total_timeout.count() / 1000) +
            " s (limits.timeout_s)");
    return;
  }
  if (escalate_at_ && now >= *escalate_at_) {
    if (escalation_ == 0 && !final_received_ && stdout_open_) {
      // The grace after `cancel` is over: SIGTERM, then SIGKILL after another.
      escalation_ = 1;
      static_cast<void>(child_.Signal(SIGTERM));
      escalate_at_ = now + setup_.limits.cancel_grace;
    } else {
      escalation_ = 2;
      static_cast<void>(child_.Signal(SIGKILL));
      escalate_at_.reset();
    }
    return;
  }
  if (in_flight_.empty() && !final_received_ && !cancel_sent_ && !waiting_for_input_ &&
      now >= last_activity_ + setup_.limits.idle_timeout) {
    const std::string seconds = std::to_string(setup_.limits.idle_timeout.count() / 1000);
    std::string message =
        splitter_.discarding()
            ? Name() + " sent no complete line for " + seconds +
                  " s and was stopped (limits.idle_timeout_s); it was writing a line longer than the "
                  "limit of " + std::to_string(splitter_.max_line_bytes()) + " bytes (max_message_mb)"
            : Name() + " was silent for " + seconds + " s and was stopped (limits.idle_timeout_s)";
    if (queued_bytes_ > 0) {
      message += "; it did not read " + FormatBytes(queued_bytes_) + " of answers on its stdin";
    }
    End(SessionResult::End::kIdleTimeout, std::move(message));
  }
}

size_t Session::ReadStdout() {
  size_t total = 0;
  // Once the tool has exited, back pressure no longer matters: what it
  // wrote before exiting (its result) is read whatever is queued.
  while (stdout_open_ && !ended_ && (stdout_watched_ || draining_) &&
         total < kMaxReadPerWakeup) {
    std::span<char> space = splitter_.PrepareAppend();
    ssize_t got = read(child_.stdout_fd().get(), space.data(), space.size());
    if (got < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) break;
      End(SessionResult::End::kHostError,
          ErrnoToStatus(errno, "Cannot read the tool's stdout").message());
      return total;
    }
    if (got == 0) {
      OnStdoutClosed();
      return total;
    }
    const bool was_discarding = splitter_.discarding();
    splitter_.CommitAppend(static_cast<size_t>(got));
    total += static_cast<size_t>(got);
    // An over-long line is one protocol error however long it is (its
    // -32700 went out when it passed the limit), so its rest costs nothing
    // but the reading. Those bytes are no line either: a tool that writes
    // nothing else is idle, and the idle timeout stops a line that never
    // ends.
    if (!(was_discarding && splitter_.discarding())) last_activity_ = Clock::now();
    ProcessLines();
    if (lines_pending_) break;
    // The pipe held less than asked: it is empty now, and epoll says when
    // more comes (saves a read that would return EAGAIN per request).
    if (static_cast<size_t>(got) < space.size() && !draining_) break;
  }
  return total;
}

void Session::ProcessLines() {
  lines_pending_ = false;
  while (!ended_) {
    if (!stdout_watched_ && !draining_) {
      lines_pending_ = true;  // resumed by Run() once the tool catches up
      return;
    }
    std::optional<LineSplitter::Event> event = splitter_.Next();
    if (!event) return;
    if (event->kind == LineSplitter::EventKind::kLine) {
      HandleLine(event->line);
    } else {
      HandleProtocolError(LineTooLongError(splitter_.max_line_bytes()));
    }
  }
}

void Session::OnStdoutClosed() {
  stdout_open_ = false;
  if (stdout_watched_) Unwatch(child_.stdout_fd().get());
  stdout_watched_ = false;
  draining_ = true;
  ProcessLines();
  if (ended_) return;
  if (std::optional<LineSplitter::Event> rest = splitter_.Finish()) {
    HandleProtocolError(UnterminatedLineError(rest->line));
  }
  if (!final_received_ && !ended_ && !escalate_at_) {
    // Without stdout the tool cannot finish properly; give it the grace
    // period to exit on its own.
    escalate_at_ = Clock::now() + setup_.limits.cancel_grace;
    escalation_ = 1;
  }
}

void Session::ReadStderr() {
  if (!child_.stderr_fd()) return;
  char buffer[16384];
  for (size_t total = 0; total < kMaxReadPerWakeup;) {
    ssize_t got = read(child_.stderr_fd().get(), buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      if (got == 0 || errno != EAGAIN) {
        if (epoll_) Unwatch(child_.stderr_fd().get());
        child_.stderr_fd().reset();
      }
      return;
    }
    stderr_tail_.Append(std::string_view(buffer, static_cast<size_t>(got)));
    total += static_cast<size_t>(got);
  }
}

void Session::HandleLine(std::string_view line) {
  if (final_received_ || (cancel_sent_ && escalation_ > 0)) return;
  ParsedLine parsed = parser_.ParsePadded(line);
  if (parsed.is_blank()) return;
  if (parsed.is_error()) {
    // The first stray line is the likeliest clue to a tool that printed
    // to stdout what belongs on stderr: its first bytes go into the end
    // message.
    if (first_stray_line_.empty()) {
      first_stray_line_ = std::string(line.substr(0, kQuotedStrayOutputBytes));
      if (line.size() > kQuotedStrayOutputBytes) first_stray_line_ += "...";
    }
    HandleProtocolError(parsed.error());
    return;
  }
  protocol_errors_in_a_row_ = 0;
  Message& message = parsed.message();
  switch (message.kind()) {
    case MessageKind::kRequest: HandleRequest(std::move(message), line.size() + 1); break;
    case MessageKind::kNotification: HandleNotification(message); break;
    case MessageKind::kResponse: break;  // the host sends no requests: nothing to match
  }
}

void Session::HandleProtocolError(const ProtocolError& error) {
  if (final_received_) return;
  ++result_.protocol_errors;
  QueueLine(SerializeProtocolError(error));
  if (++protocol_errors_in_a_row_ >= kProtocolErrorsToStop) {
    End(SessionResult::End::kProtocolErrors,
        Name() + " sent " + std::to_string(kProtocolErrorsToStop) +
            " invalid protocol lines in a row and was stopped; the last: " + error.message +
            StrayOutputNote());
  }
}

void Session::HandleRequest(Message message, size_t line_bytes) {
  ++result_.requests;
  const RequestTiming timing{Clock::now(), line_bytes};
  const std::string_view method_name = message.method();
  if (in_flight_.contains(message.id())) {
    AnswerRequest(message, nullptr, kJsonRpcInvalidRequest,
                  SerializeError(message.id(), kJsonRpcInvalidRequest,
                                 "Invalid Request: id " + message.id().ToJson() +
                                     " is already used by a request in progress; ids must be "
                                     "unique among outstanding requests"),
                  timing);
    return;
  }
  const MethodSpec* method = FindMethod(method_name);
  if (method == nullptr) {
    std::string known;
    for (const MethodSpec& spec : AllMethods()) {
      known += known.empty() ? "" : ", ";
      known += spec.name;
    }
    std::string hint = method_name.find('.') == std::string_view::npos
                           ? "; methods are namespaced, e.g. fs.read"
                           : "";
    AnswerRequest(message, nullptr, kJsonRpcMethodNotFound,
                  SerializeError(message.id(), kJsonRpcMethodNotFound,
                                 "Method not found: " + Quote(method_name) + hint +
                                     " (this host serves " + known + ")"),
                  timing);
    return;
  }
  if (!method->may_block) {
    RequestScope scope(message.id(), method->name, /*may_block=*/false);
    WireMessage answer = method->handler(message, context_, scope);
    if (scope.needs_worker()) {
      // The user must be asked: never on this thread, which keeps serving.
      SubmitToWorkers(std::move(message), method, timing);
      return;
    }
    AnswerRequest(message, &scope, scope.error_code(), std::move(answer), timing);
    return;
  }
  SubmitToWorkers(std::move(message), method, timing);
}

void Session::SubmitToWorkers(Message message, const MethodSpec* method, RequestTiming timing) {
  auto cancelled = std::make_shared<std::atomic<bool>>(false);
  in_flight_.emplace(message.id(), cancelled);
  workers_->Submit({std::move(message), method, std::move(cancelled), timing});
  UpdateStdoutInterest();
}

void Session::AnswerRequest(const Message& request, const RequestScope* scope, int code, WireMessage answer,
                            const RequestTiming& timing) {
  const size_t answer_limit = AnswerLimitBytes(setup_.limits.max_message_bytes);
  if (answer.size() > answer_limit + 1) {
    // Bounds the host's memory and the tool's lines; the tool can ask for
    // less. An fs.read within the read limits never gets here (its answer
    // is what the limit is sized for).
    std::string_view hint = request.method() == "fs.read"
                                ? "; read the file in ranges with 'offset' and 'length'"
                                : "; ask for less (a narrower path, fewer matches)";
    code = kJsonRpcInvalidParams;
    answer = SerializeError(request.id(), code,
                            "Invalid params: the answer of " + std::to_string(answer.size() - 1) +
                                " bytes is larger than the answer limit of " + std::to_string(answer_limit) +
                                " bytes (7 x max_message_mb + 4 KiB)" + std::string(hint));
  }
  if (code == kJsonRpcAccessDenied) ++result_.denied_requests;
  AuditAnswer(request, scope, code, answer.size(), timing);
  QueueLine(std::move(answer));
}

void Session::AuditAnswer(const Message& request, const RequestScope* scope, int code, size_t bytes_out,
                          const RequestTiming& timing) {
  if (setup_.audit == nullptr) return;
  AuditRecord record = AuditRecordForAnswer({request.method(), request.params(), scope, code},
                                            setup_.tool_name, setup_.call_id);
  record.bytes_in = timing.bytes_in;
  record.bytes_out = bytes_out;
  record.duration_us = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - timing.received).count());
  setup_.audit->Record(record);
}

bool Session::AuditIfCancelledByTool(const WorkerPool::Done& done) {
  auto cancelled = cancelled_by_tool_.find(done.cancelled.get());
  // A request that did not run was cancelled by the tool too.
  if (cancelled == cancelled_by_tool_.end() && done.scope) return false;
  size_t bytes_out = 0;
  if (cancelled != cancelled_by_tool_.end()) {
    bytes_out = cancelled->second;
    cancelled_by_tool_.erase(cancelled);
  }
  AuditAnswer(*done.request, done.scope ? &*done.scope : nullptr, kJsonRpcCancelled, bytes_out, done.timing);
  return true;
}

void Session::HandleNotification(const Message& message) {
  const std::string_view method = message.method();
  // The first final message counts; whatever the tool says after it (a
  // second result, a `waiting` state) would ask about a finished run.
  if (final_received_ && (method == "result" || method == "error" || method == "state")) return;
  if (method == "result" || method == "error") {
    Finish(message.params().ToJson(),
           method == "result" ? SessionResult::End::kResult : SessionResult::End::kToolError);
    return;
  }
  if (method == "cancel") {
    HandleToolCancel(message);
    return;
  }
  // The tool's own progress and log lines (tool_reports.h); after its
  // final message the run is over for whoever shows them.
  if (method == "progress" || method == "log") {
    if (final_received_) return;
    if (method == "progress") {
      reports_.OnProgress(message.params(), Clock::now());
    } else {
      reports_.OnLog(message.params(), Clock::now());
    }
    return;
  }
  // `state` belongs to stateful tools (SPEC.md §4.6); one-shot runs ignore
  // it, like every other notification they do not know.
  if (method == "state" && setup_.on_state) HandleState(message);
}

void Session::HandleState(const Message& message) {
  const Params& params = message.params();
  Result<std::string_view> type = params.String("type");
  if (!type.ok()) return;  // not a state update the caller could act on
  const bool stopped = *type == "stopped";
  if (!stopped && *type != "running" && *type != "waiting") return;
  waiting_for_input_ = *type == "waiting";
  setup_.on_state(params.ToJson());
  if (!stopped) return;
  // The tool is done: its result is final, like a `result` notification.
  std::optional<std::string> content = params.Json("result");
  if (!content || *content == "null") content = params.Json("content");
  waiting_for_input_ = false;
  Finish("{\"content\":" + (content ? *content : std::string("null")) + "}", SessionResult::End::kResult);
}

void Session::Finish(std::string final_params_json, SessionResult::End end) {
  final_received_ = true;
  result_.final_params_json = std::move(final_params_json);
  result_.end = end;
  if (cancel_sent_) {
    // The user asked to stop; a tool that wraps up politely is still a
    // cancelled run (its final params are kept).
    result_.end = SessionResult::End::kCancelled;
    result_.message = Name() + " was cancelled";
  } else {
    // The tool is about to exit; if it does not, it is stopped after the grace.
    escalate_at_ = Clock::now() + setup_.limits.cancel_grace;
    escalation_ = 1;
  }
  if (child_exited_) ended_ = true;
}

void Session::OnControl() {
  SessionControl& control = *setup_.control;
  uint64_t count = 0;
  [[maybe_unused]] ssize_t got = read(control.fd(), &count, sizeof count);
  for (std::string& line : control.TakeLines()) {
    if (final_received_ || cancel_sent_) continue;  // nobody is listening any more
    waiting_for_input_ = false;
    last_activity_ = Clock::now();  // the idle timeout starts again from the input
    QueueLine(WireMessage::Copy(line));
  }
  if (control.abort_requested()) OnCancel();
}

void Session::HandleToolCancel(const Message& message) {
  const Params& params = message.params();
  std::optional<RequestId> id;
  if (params.TypeOf("id") == JsonType::kString) {
    if (Result<std::string_view> text = params.String("id"); text.ok()) {
      id = RequestId(std::string(text.value()));
    }
  } else if (params.TypeOf("id") == JsonType::kNumber) {
    std::optional<std::string> json = params.Json("id");
    int64_t value = 0;
    if (json && std::from_chars(json->data(), json->data() + json->size(), value).ec == std::errc() ) {
      id = RequestId(value);
    }
  }
  if (!id) return;
  auto found = in_flight_.find(*id);
  if (found == in_flight_.end()) return;  // already answered: nothing to abandon
  found->second->store(true);
  WireMessage answer = SerializeError(
      *id, kJsonRpcCancelled, "Cancelled: request " + id->ToJson() + " was cancelled by the tool");
  // Audited when its worker reports back: it may still decide and act.
  cancelled_by_tool_.emplace(found->second.get(), answer.size());
  QueueLine(std::move(answer));
  in_flight_.erase(found);
  UpdateStdoutInterest();
}

void Session::TakeCompletedAnswers() {
  uint64_t count = 0;
  [[maybe_unused]] ssize_t got = read(completion_.get(), &count, sizeof count);
  for (WorkerPool::Done& done : workers_->TakeDone()) {
    if (!done.request) {  // a notification, e.g. `pending`
      QueueLine(std::move(done.answer));
      continue;
    }
    if (AuditIfCancelledByTool(done)) continue;
    in_flight_.erase(done.request->id());
    AnswerRequest(*done.request, &*done.scope, done.scope->error_code(), std::move(done.answer),
                  done.timing);
  }
  UpdateStdoutInterest();
}

void Session::QueueLine(WireMessage line) {
  if (!child_.stdin_fd()) return;  // the tool closed its stdin: nobody to tell
  queued_bytes_ += line.size();
  answers_.push_back(std::move(line));
  if (answers_.size() == 1) FlushAnswers();  // usually written at once, no epoll round
  UpdateStdoutInterest();
}

void Session::FlushAnswers() {
  while (!answers_.empty()) {
    std::string_view bytes = answers_.front().bytes().substr(answer_offset_);
    ssize_t written = write(child_.stdin_fd().get(), bytes.data(), bytes.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) break;
      // EPIPE: the tool closed its stdin or exited. Its answers are moot.
      if (stdin_watched_) Unwatch(child_.stdin_fd().get());
      stdin_watched_ = false;
      child_.stdin_fd().reset();
      answers_.clear();
      answer_offset_ = 0;
      queued_bytes_ = 0;
      UpdateStdoutInterest();
      return;
    }
    answer_offset_ += static_cast<size_t>(written);
    queued_bytes_ -= static_cast<size_t>(written);
    if (answer_offset_ == answers_.front().size()) {
      answers_.pop_front();
      answer_offset_ = 0;
    }
  }
  const bool want_writable = !answers_.empty();
  if (want_writable != stdin_watched_) {
    if (want_writable) {
      if (!Watch(child_.stdin_fd().get(), kToolStdin, EPOLLOUT).ok()) return;
    } else {
      Unwatch(child_.stdin_fd().get());
    }
    stdin_watched_ = want_writable;
  }
  UpdateStdoutInterest();
}

void Session::UpdateStdoutInterest() {
  if (!stdout_open_ || ended_) return;
  // Back pressure: with too many answers unread or requests running, stop
  // reading until the tool catches up. Resuming at half avoids flapping.
  const size_t max_queued = MaxQueuedAnswerBytes(setup_.limits.max_message_bytes);
  bool want = stdout_watched_ ? queued_bytes_ <= max_queued && in_flight_.size() < kMaxRequestsInFlight
                              : queued_bytes_ <= max_queued / 2 &&
                                    in_flight_.size() < kMaxRequestsInFlight / 2;
  if (want == stdout_watched_) return;
  if (want) {
    if (!Watch(child_.stdout_fd().get(), kToolStdout, EPOLLIN).ok()) return;
  } else {
    Unwatch(child_.stdout_fd().get());
  }
  stdout_watched_ = want;
}

void Session::OnChildExit() {
  if (child_exited_) return;
  Result<std::optional<ExitStatus>> waited = child_.TryWait();
  if (!waited.ok() || !waited.value()) return;  // not yet (spurious wake-up)
  child_exited_ = true;
  result_.exit_status = *waited.value();
  if (pidfd_) Unwatch(pidfd_.get());
  // What the tool wrote before it exited is in the pipe: handle it all
  // first, a final `result` included. Stop at EAGAIN: a grandchild may hold
  // the pipe open.
  draining_ = true;
  ProcessLines();
  while (stdout_open_ && !ended_ && ReadStdout() > 0) {
  }
  ReadStderr();
  if (ended_) return;
  if (final_received_) {
    ended_ = true;
    return;
  }
  if (cancel_sent_) {
    End(SessionResult::End::kCancelled, Name() + " was cancelled");
    return;
  }
  const ExitStatus& status = *result_.exit_status;
  std::string message = Name() + " " + status.Describe() + " without sending a result";
  message += StrayOutputNote();
  std::string last = LastLine(stderr_tail_.Tail());
  if (!last.empty()) message += std::string(kStderrEndsWith) + EscapeForDisplay(last);
  End(status.signaled() ? SessionResult::End::kSignaled : SessionResult::End::kExited,
      std::move(message));
}

void Session::OnCancel() {
  if (cancel_.kill_requested() && !ended_ && escalation_ < 2 && !child_exited_) {
    // The user asked for it not to wait for the grace period (a second
    // Ctrl+C): the run ends as cancelled once the tool is gone.
    cancel_sent_ = true;
    context_.gate.CancelQuestions();
    escalation_ = 2;
    static_cast<void>(child_.Signal(SIGKILL));
    escalate_at_.reset();
    return;
  }
  if (cancel_sent_ || ended_) return;
  cancel_sent_ = true;
  context_.gate.CancelQuestions();  // Ctrl+C must not wait for an answer
  if (final_received_) return;  // the tool has finished already
  QueueLine(SerializeNotification("cancel"));
  escalate_at_ = Clock::now() + setup_.limits.cancel_grace;
  escalation_ = 0;
}

void Session::End(SessionResult::End end, std::string message) {
  if (ended_) return;
  ended_ = true;
  if (final_received_ && end != SessionResult::End::kHostError) return;  // the tool's word stands
  result_.end = end;
  result_.message = std::move(message);
}

void Session::KillTool() {
  static_cast<void>(child_.Signal(SIGKILL));
}

}  // namespace

SessionControl::SessionControl() : event_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}

void SessionControl::Send(std::string line) {
  {
    std::lock_guard lock(mutex_);
    lines_.push_back(std::move(line));
  }
  Wake();
}

void SessionControl::Abort() {
  abort_.store(true);
  Wake();
}

std::vector<std::string> SessionControl::TakeLines() {
  std::lock_guard lock(mutex_);
  std::vector<std::string> lines;
  lines.swap(lines_);
  return lines;
}

void SessionControl::Wake() {
  const uint64_t one = 1;
  if (event_) {
    [[maybe_unused]] ssize_t written = write(event_.get(), &one, sizeof one);
  }
}

SessionResult RunToolSession(ChildProcess& child, const SessionSetup& setup,
                             const MethodContext& context, CancelToken& cancel) {
  return Session(child, setup, context, cancel).Run();
}

}  // namespace toolvfs
