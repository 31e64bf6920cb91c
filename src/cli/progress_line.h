// A one-line status on the terminal's stderr, redrawn in place ("\r",
// erase to the end of the line), for progress that would otherwise flood
// the screen: a tool's own progress (tool_report_display.h); meant to be
// reused by any command that shows progress (grep, workspace transfers).
//
// Only on a terminal (isatty(2), TERM not "dumb"); elsewhere every call is
// a no-op, so a log file never gets carriage returns. Thread-safe: lines
// printed through PrintAbove never end up glued to the status.
#pragma once

#include <mutex>
#include <string>
#include <string_view>

namespace toolvfs {

class ProgressLine {
 public:
  // `enabled`: draw at all (the default asks whether stderr is a terminal).
  ProgressLine();
  explicit ProgressLine(bool enabled) : enabled_(enabled) {}
  ~ProgressLine() { Clear(); }
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  bool enabled() const { return enabled_; }

  // Replaces the status with `text` (one line; cut to the terminal's
  // width so it never wraps, control characters escaped).
  void Show(std::string_view text);
  // Removes the status (the cursor stays at the start of the line).
  void Clear();
  // Writes `line` (without its '\n') on stderr as a line of its own, then
  // draws the status again below it. Works when disabled too.
  void PrintAbove(std::string_view line);

 private:
  void EraseLocked();
  void DrawLocked();

  const bool enabled_;
  std::mutex mutex_;
  std::string status_;  // what is shown; empty: nothing
};

}  // namespace toolvfs
