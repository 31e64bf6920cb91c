// The handle of a live stateful tool run (SPEC.md §4.6, RFD 009's spawn →
// fetch → apply → abort): the tool stays alive across `apply {input}` and
// reports `state` notifications (running, waiting with a question, stopped
// with a result). The session loop runs on the handle's own thread, so it
// keeps serving the tool's requests, timers and cancellation while the
// caller takes its time to answer.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/status.h"
#include "host/tool_session.h"
#include "runtime/tool_runtime.h"

namespace toolvfs {

// What a stateful tool is doing, as its last `state` notification said.
struct ToolState {
  enum class Kind {
    kRunning,  // working (or not yet reported anything)
    kWaiting,  // waits for `apply`; `question` says what it wants
    kStopped,  // the run is over and its processes are gone; see `outcome`
  };
  Kind kind = Kind::kRunning;
  // Grows with every change, so a caller can wait for the next one.
  uint64_t version = 0;
  // running / waiting: the state's `content` (progress, the prompt).
  std::vector<ContentBlock> content;
  // waiting: the question. A `waiting` without one asks for free text: a
  // Text question with id "input" and the content as its text.
  std::optional<ToolQuestion> question;
  // stopped: the outcome — the tool's result or error, or why the run
  // ended otherwise (abort, cancel, timeout, crash).
  std::optional<Outcome> outcome;
};

// The id of the question made up for a `waiting` state without one.
inline constexpr std::string_view kFreeInputQuestionId = "input";

class StatefulRun {
 public:
  // What the run's thread executes: the session of an already launched tool
  // with `control` and `on_state` set in its SessionSetup, ending in the
  // run's Outcome.
  using Body = std::function<Outcome(SessionControl& control,
                                     std::function<void(const std::string& params_json)> on_state)>;

  // Starts `body` on the run's own thread.
  StatefulRun(std::string tool_name, Body body);
  StatefulRun(const StatefulRun&) = delete;
  StatefulRun& operator=(const StatefulRun&) = delete;
  // Aborts a run that is still going and waits until it has stopped.
  ~StatefulRun();

  // The current state.
  ToolState Fetch() const;
  // Blocks until the state's version is past `version`; returns that state.
  ToolState WaitForChange(uint64_t version) const;
  // Blocks until a state past `seen` is stopped or waits with a question
  // (states in between are passed over); returns it and moves `seen` there.
  // What a caller that answers questions loops on.
  ToolState WaitForQuestion(uint64_t& seen) const;
  // Sends `apply {input}` with `input` (compact JSON). InvalidArgument
  // once the run has stopped.
  Status Apply(const std::string& input_json);
  // Stops the tool like cancellation (`cancel`, cancel_grace_s, SIGTERM,
  // SIGKILL to its process group) and returns once it is gone. Harmless
  // after the run stopped.
  void Abort();
  // Blocks until the run has stopped; its outcome.
  Outcome Wait();

 private:
  void OnState(const std::string& params_json);
  void Publish(ToolState state);

  const std::string tool_name_;
  SessionControl control_;
  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  ToolState state_;
  // A state the run cannot go on with (an invalid question): the run is
  // aborted and this is its outcome's error.
  std::optional<std::string> failure_;
  std::thread thread_;
};

}  // namespace toolvfs
