// A one-line progress display for long work on a terminal (issue 22):
// `grep` over a large tree, `workspace import/export/copy`.
//
// The line is drawn on stderr with "\r" and erase-to-end-of-line, so each
// redraw replaces the last and nothing piles up in the scrollback. It stays
// silent unless stderr is a terminal (a log file or a harness reading
// stderr gets no control sequences), and it is quiet for quick work: the
// first draw comes only after `first_after`, then at most one per
// `interval` however often Update is called. Clear() erases it, so what
// follows (the command's final message, a line of results on the same
// terminal) starts on a clean line; the destructor clears too.
//
// Thread-safe: Update may be called from the threads doing the work
// (grep's searchers) while another prints through WhileCleared.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>

namespace toolvfs {

class ProgressLine {
 public:
  using Clock = std::chrono::steady_clock;

  struct Options {
    // Where the bytes go; empty: the line is off (Update never draws).
    std::function<void(std::string_view)> write;
    // The time (tests pass a fake clock); empty: Clock::now.
    std::function<Clock::time_point()> now;
    std::chrono::milliseconds first_after{250};
    std::chrono::milliseconds interval{100};
    // Columns of the terminal: a line is cut to one less, since a line that
    // wraps could not be erased by "\r".
    size_t width = 80;
  };

  explicit ProgressLine(Options options);
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;
  ~ProgressLine();

  // The line for a command on stderr: on only when `wanted` (the command
  // is not printing --json, not --log-level error), stderr is a terminal
  // and TERM is not "dumb"; the width is the terminal's.
  // TOOLVFS_PROGRESS_AFTER_MS=N in the environment sets first_after.
  static Options ForStderr(bool wanted);

  bool enabled() const { return static_cast<bool>(options_.write); }

  // Draws `text()` if a draw is due (text is not built otherwise, so
  // callers may format freely). Control characters in the text are
  // replaced by '?': it may hold project paths.
  void Update(const std::function<std::string()>& text);

  // Draws `text` now, whatever the interval: for a change of phase that
  // may take a while ("writing the workspace"). Still nothing before
  // first_after, so quick work stays silent.
  void ShowNow(std::string_view text);

  // Erases the line if it is drawn; the next Update draws again when due.
  void Clear();

  // Runs `print` with the line erased and no redraw in between: for output
  // that goes to the same terminal while the work goes on.
  void WhileCleared(const std::function<void()>& print);

 private:
  Clock::time_point Now() const;
  void DrawLocked(std::string line, Clock::time_point now);
  void ClearLocked();

  Options options_;
  std::mutex mutex_;
  // Clock ticks of the next allowed draw; read without the lock.
  std::atomic<Clock::rep> next_draw_{0};
  Clock::time_point first_draw_;
  bool drawn_ = false;
};

// "850 ms", "12.4 s", "3 min 05 s": the elapsed time of a progress line.
std::string FormatElapsed(std::chrono::nanoseconds elapsed);

// "512 B", "12.3 KiB", "4.0 MiB", "1.2 GiB": sizes at a glance (core/io.h's
// FormatBytes is exact, for limits).
std::string FormatApproximateBytes(uint64_t bytes);

// "1,234,567": counts in a progress line, readable at a glance.
std::string FormatCount(uint64_t count);

}  // namespace toolvfs
