#include "cli/tool_report_display.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/text.h"

namespace toolvfs {
namespace {

// A number as people write it: 42, 0.5, 12.25 (no trailing zeros).
std::string FormatNumber(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.2f", value);
  std::string text = buffer;
  while (text.back() == '0') text.pop_back();
  if (text.back() == '.') text.pop_back();
  return text;
}

}  // namespace

ToolLogLevel ThresholdForCliLogLevel(std::string_view cli_log_level) {
  if (cli_log_level == "debug") return ToolLogLevel::kDebug;
  if (cli_log_level == "info") return ToolLogLevel::kInfo;
  if (cli_log_level == "error") return ToolLogLevel::kError;
  return ToolLogLevel::kWarning;
}

std::string DescribeProgress(const ToolProgress& progress) {
  std::string text = progress.tool;
  text += ": ";
  if (progress.total) {
    const double percent = std::min(100.0, std::floor(100 * progress.progress / *progress.total));
    text += FormatNumber(percent) + "% (" + FormatNumber(progress.progress) + "/" + FormatNumber(*progress.total) +
            ")";
  } else {
    text += FormatNumber(progress.progress);
  }
  if (!progress.message.empty()) text += " " + progress.message;
  return text;
}

ToolReportDisplay::ToolReportDisplay(std::string_view cli_log_level, std::unique_ptr<ProgressLine> progress_line)
    : threshold_(ThresholdForCliLogLevel(cli_log_level)),
      progress_line_(progress_line != nullptr
                         ? std::move(progress_line)
                         : std::make_unique<ProgressLine>(ProgressLine::ForStderr(cli_log_level != "error"))),
      progress_as_lines_(!progress_line_->enabled() && threshold_ <= ToolLogLevel::kInfo) {}

void ToolReportDisplay::OnProgress(const ToolProgress& progress) {
  const std::string text = DescribeProgress(progress);
  if (progress_as_lines_) {
    PrintLine("toolvfs: progress: " + EscapeForDisplay(text));
    return;
  }
  // Each report drawn (the host already limits their rate), once the run
  // has lasted long enough for a status line to be worth it.
  progress_line_->ShowNow(text);
}

void ToolReportDisplay::OnLog(const ToolLogLine& line) {
  if (line.level < threshold_) return;
  std::string text = "toolvfs: " + line.tool + ": " + std::string(ToolLogLevelName(line.level)) + ": ";
  if (!line.logger.empty()) text += line.logger + ": ";
  text += line.message;
  if (!line.data_json.empty()) text += " " + line.data_json;
  // One line per log line, whatever the tool put in it.
  PrintLine(EscapeForDisplay(text));
}

void ToolReportDisplay::PrintLine(const std::string& line) {
  // Above the progress line: erased first, drawn again at the next report.
  progress_line_->WhileCleared([&line] { std::fprintf(stderr, "%s\n", line.c_str()); });
}

void ToolReportDisplay::OnRunEnd() { progress_line_->Clear(); }

}  // namespace toolvfs
