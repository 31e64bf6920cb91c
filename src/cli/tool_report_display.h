// How the CLI (`toolvfs run`, `exec`) shows a vfs tool's own progress and
// log lines (host/tool_reports.h, docs/cli.md "A tool's progress and log
// lines"):
// - log lines on stderr, "toolvfs: TOOL: LEVEL: message", when their level
//   is at or above --log-level (error: error and worse; warn: warning and
//   worse; info: info, notice and worse; debug: all);
// - progress on a terminal as one status line redrawn in place
//   (progress_line.h) and removed when the run ends; off a terminal, as
//   plain lines at --log-level info or debug only, so that a log file gets
//   them only when asked for.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "cli/progress_line.h"
#include "host/tool_reports.h"

namespace toolvfs {

// The lowest tool log level shown at `cli_log_level` ("error", "warn",
// "info", "debug").
ToolLogLevel ThresholdForCliLogLevel(std::string_view cli_log_level);

// "TOOL: 42% (42/100) indexing" and the like: the text of a progress
// report, as the status line shows it.
std::string DescribeProgress(const ToolProgress& progress);

class ToolReportDisplay final : public ToolReportSink {
 public:
  // `progress_line` draws the status (a disabled one: plain lines
  // instead, see above); by default the stderr line of every long command,
  // off at --log-level error as theirs is.
  explicit ToolReportDisplay(std::string_view cli_log_level, std::unique_ptr<ProgressLine> progress_line = nullptr);

  void OnProgress(const ToolProgress& progress) override;
  void OnLog(const ToolLogLine& line) override;
  void OnRunEnd() override;

 private:
  void PrintLine(const std::string& line);

  ToolLogLevel threshold_;
  std::unique_ptr<ProgressLine> progress_line_;
  bool progress_as_lines_;  // off a terminal at info/debug
};

}  // namespace toolvfs
