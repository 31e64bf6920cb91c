// A tool's own progress and log lines (docs/protocol.md, "Progress and
// log lines"): the `progress` and `log` notifications a vfs tool sends
// while it runs, checked, bounded and handed to whoever shows them (the
// CLI on stderr and the terminal, `toolvfs mcp` as notifications/progress
// and notifications/message).
//
// Bounded so that a chatty or hostile tool cannot flood the front end:
// texts are cut (at a UTF-8 boundary, with a note), `data` over its limit
// is left out (with a note), and each kind has a rate (a token bucket:
// a burst, then so many per second). What is over the rate is dropped and
// counted; the count is reported once, as a warning log line, when the
// run ends. A malformed notification is dropped too, and the first one of
// a run is reported as a warning naming the value and the reason, so a
// tool author sees the mistake without the run failing for it.
//
// Not audited: neither kind asks for access to anything (like the tool's
// stderr, which is not audited either).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "protocol/jsonrpc.h"

namespace toolvfs {

// The levels of a log line: syslog's severities (RFC 5424), as MCP's
// logging uses them, least severe first.
enum class ToolLogLevel { kDebug, kInfo, kNotice, kWarning, kError, kCritical, kAlert, kEmergency };

// "debug", "info", ...; nullopt for a name that is none of them.
std::optional<ToolLogLevel> ParseToolLogLevel(std::string_view name);
std::string_view ToolLogLevelName(ToolLogLevel level);

struct ToolProgress {
  std::string tool;             // the tool's name (which run this is)
  double progress = 0;          // how far: a count, or a share of `total`
  std::optional<double> total;  // the whole, when the tool knows it
  std::string message;          // what it is doing now; may be empty
};

struct ToolLogLine {
  std::string tool;  // the tool's name (which run this is)
  ToolLogLevel level = ToolLogLevel::kInfo;
  std::string message;
  std::string logger;     // the tool's component; empty: the tool itself
  std::string data_json;  // any JSON value, compact; empty: none
};

// Receives one run's reports. Called on the session's loop thread, in the
// order the tool sent them, always before the run's outcome is returned;
// an implementation must not block for long (the tool's requests wait).
class ToolReportSink {
 public:
  virtual ~ToolReportSink() = default;
  virtual void OnProgress(const ToolProgress& progress) = 0;
  virtual void OnLog(const ToolLogLine& line) = 0;
  // The run is over: nothing more comes for it (a display clears its
  // progress line). Called once per run, after the last report.
  virtual void OnRunEnd() {}
};

struct ToolReportLimits {
  size_t max_message_bytes = 4096;    // `message` of either kind
  size_t max_logger_bytes = 128;      // `logger`
  size_t max_data_bytes = 16384;      // `data`, as compact JSON
  // Token buckets: `burst` at once, then `per_second`.
  unsigned progress_burst = 20;
  unsigned progress_per_second = 20;
  unsigned log_burst = 100;
  unsigned log_per_second = 50;
};

// Turns one run's `progress`/`log` notifications into reports for a sink,
// within the limits. Not thread-safe: one per run, used by its loop.
class ToolReportFilter {
 public:
  using Clock = std::chrono::steady_clock;

  // `sink` may be null (nobody listens: notifications are checked and
  // dropped); not owned. `tool_name` names the tool in warnings.
  ToolReportFilter(ToolReportSink* sink, std::string tool_name, ToolReportLimits limits = {});

  // The params of a `progress` / `log` notification, arriving at `now`.
  void OnProgress(const Params& params, Clock::time_point now);
  void OnLog(const Params& params, Clock::time_point now);

  // The run ended: reports what was dropped for the rate, if anything,
  // then tells the sink the run is over.
  void Finish();

 private:
  struct Bucket {
    double tokens;
    Clock::time_point refilled;
    bool initialized = false;
  };
  // Takes a token from `bucket`; false when it is empty.
  static bool Take(Bucket& bucket, unsigned burst, unsigned per_second, Clock::time_point now);
  void ReportDropped();
  // Reports the first malformed notification of the run as a warning.
  void ReportMalformed(std::string_view method, std::string_view reason);
  std::string Bounded(std::string_view text, size_t limit, std::string_view what) const;

  ToolReportSink* sink_;
  std::string tool_name_;
  ToolReportLimits limits_;
  Bucket progress_bucket_{};
  Bucket log_bucket_{};
  uint64_t dropped_progress_ = 0;
  uint64_t dropped_logs_ = 0;
  bool malformed_reported_ = false;
};

}  // namespace toolvfs
