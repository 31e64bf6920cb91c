#include "host/tool_reports.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <iterator>

#include "core/text.h"

namespace toolvfs {
namespace {

constexpr std::string_view kLevelNames[] = {"debug", "info",     "notice", "warning",
                                            "error", "critical", "alert",  "emergency"};

// A JSON number member as a double; nullopt when absent. The codec has
// checked the literal fits a double, so from_chars only fails for a
// member that is not a number.
Result<std::optional<double>> OptionalNumber(const Params& params, std::string_view name) {
  std::optional<JsonType> type = params.TypeOf(name);
  if (!type || *type == JsonType::kNull) return std::optional<double>();
  const std::string quoted = "'" + std::string(name) + "'";
  if (*type != JsonType::kNumber) {
    return Status(StatusCode::kInvalidArgument, quoted + " must be a number");
  }
  const std::string text = *params.Json(name);
  double value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) {
    return Status(StatusCode::kInvalidArgument, quoted + " must be a finite number, got " + text);
  }
  return std::optional<double>(value);
}

}  // namespace

std::optional<ToolLogLevel> ParseToolLogLevel(std::string_view name) {
  for (size_t index = 0; index < std::size(kLevelNames); ++index) {
    if (kLevelNames[index] == name) return static_cast<ToolLogLevel>(index);
  }
  return std::nullopt;
}

std::string_view ToolLogLevelName(ToolLogLevel level) { return kLevelNames[static_cast<size_t>(level)]; }

ToolReportFilter::ToolReportFilter(ToolReportSink* sink, std::string tool_name, ToolReportLimits limits)
    : sink_(sink), tool_name_(std::move(tool_name)), limits_(limits) {}

bool ToolReportFilter::Take(Bucket& bucket, unsigned burst, unsigned per_second, Clock::time_point now) {
  if (!bucket.initialized) {
    bucket = Bucket{static_cast<double>(burst), now, true};
  } else {
    const double elapsed = std::chrono::duration<double>(now - bucket.refilled).count();
    bucket.tokens = std::min<double>(burst, bucket.tokens + elapsed * per_second);
    bucket.refilled = now;
  }
  if (bucket.tokens < 1) return false;
  bucket.tokens -= 1;
  return true;
}

std::string ToolReportFilter::Bounded(std::string_view text, size_t limit, std::string_view what) const {
  if (text.size() <= limit) return std::string(text);
  // The codec has checked the line is valid UTF-8, so the longest valid
  // prefix of the cut ends at a character boundary.
  std::string cut(text.substr(0, ValidUtf8Prefix(text.substr(0, limit))));
  cut += " [" + std::string(what) + " cut: " + std::to_string(text.size()) + " bytes, the limit is " +
         std::to_string(limit) + "]";
  return cut;
}

void ToolReportFilter::ReportMalformed(std::string_view method, std::string_view reason) {
  if (malformed_reported_ || sink_ == nullptr) return;
  malformed_reported_ = true;
  ToolLogLine line;
  line.tool = tool_name_;
  line.level = ToolLogLevel::kWarning;
  line.logger = "toolvfs";
  line.message = "Tool '" + tool_name_ + "' sent an invalid '" + std::string(method) + "' notification (" +
                 std::string(reason) + "); it was dropped, and so are later invalid ones of this run";
  sink_->OnLog(line);
}

void ToolReportFilter::OnProgress(const Params& params, Clock::time_point now) {
  if (Status only = params.ExpectOnly({"progress", "total", "message"}); !only.ok()) {
    return ReportMalformed("progress", only.message());
  }
  Result<std::optional<double>> progress = OptionalNumber(params, "progress");
  if (!progress.ok()) return ReportMalformed("progress", progress.status().message());
  if (!*progress || **progress < 0) {
    return ReportMalformed("progress", "'progress' must be a non-negative number");
  }
  Result<std::optional<double>> total = OptionalNumber(params, "total");
  if (!total.ok()) return ReportMalformed("progress", total.status().message());
  if (*total && **total <= 0) return ReportMalformed("progress", "'total' must be a positive number");
  Result<std::optional<std::string_view>> message = params.OptionalString("message");
  if (!message.ok()) return ReportMalformed("progress", message.status().message());
  if (!Take(progress_bucket_, limits_.progress_burst, limits_.progress_per_second, now)) {
    ++dropped_progress_;
    return;
  }
  if (sink_ == nullptr) return;
  ToolProgress report;
  report.tool = tool_name_;
  report.progress = **progress;
  report.total = *total;
  if (*message) report.message = Bounded(**message, limits_.max_message_bytes, "message");
  sink_->OnProgress(report);
}

void ToolReportFilter::OnLog(const Params& params, Clock::time_point now) {
  if (Status only = params.ExpectOnly({"level", "message", "logger", "data"}); !only.ok()) {
    return ReportMalformed("log", only.message());
  }
  Result<std::string_view> level_name = params.String("level");
  if (!level_name.ok()) return ReportMalformed("log", level_name.status().message());
  std::optional<ToolLogLevel> level = ParseToolLogLevel(*level_name);
  if (!level) {
    return ReportMalformed("log", "'level' " + Quote(*level_name) +
                                      " is not one of debug, info, notice, warning, error, critical, "
                                      "alert, emergency");
  }
  Result<std::string_view> message = params.String("message");
  if (!message.ok()) return ReportMalformed("log", message.status().message());
  Result<std::optional<std::string_view>> logger = params.OptionalString("logger");
  if (!logger.ok()) return ReportMalformed("log", logger.status().message());
  if (!Take(log_bucket_, limits_.log_burst, limits_.log_per_second, now)) {
    ++dropped_logs_;
    return;
  }
  if (sink_ == nullptr) return;
  ToolLogLine line;
  line.tool = tool_name_;
  line.level = *level;
  line.message = Bounded(*message, limits_.max_message_bytes, "message");
  if (*logger) line.logger = Bounded(**logger, limits_.max_logger_bytes, "logger");
  if (std::optional<std::string> data = params.Json("data"); data && *data != "null") {
    if (data->size() <= limits_.max_data_bytes) {
      line.data_json = std::move(*data);
    } else {
      line.message += " [data left out: " + std::to_string(data->size()) + " bytes of JSON, the limit is " +
                      std::to_string(limits_.max_data_bytes) + "]";
    }
  }
  sink_->OnLog(line);
}

void ToolReportFilter::Finish() {
  if (sink_ == nullptr) return;
  ReportDropped();
  sink_->OnRunEnd();
}

void ToolReportFilter::ReportDropped() {
  if (dropped_progress_ == 0 && dropped_logs_ == 0) return;
  ToolLogLine line;
  line.tool = tool_name_;
  line.level = ToolLogLevel::kWarning;
  line.logger = "toolvfs";
  line.message = "Tool '" + tool_name_ + "' reported faster than the host passes on: dropped " +
                 std::to_string(dropped_logs_) + " log line(s) over " + std::to_string(limits_.log_per_second) +
                 " per second and " + std::to_string(dropped_progress_) + " progress report(s) over " +
                 std::to_string(limits_.progress_per_second) + " per second";
  sink_->OnLog(line);
}

}  // namespace toolvfs
