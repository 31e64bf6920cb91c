#include "policy/audit.h"

#include <simdjson.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <mutex>
#include <optional>

#include "core/io.h"
#include "core/text.h"
#include "policy/inquirer.h"
#include "project/append_only_file.h"
#include "project/project_files.h"
#include "protocol/json_writer.h"

namespace toolvfs {
namespace {

constexpr AuditDecision kAllDecisions[] = {AuditDecision::kAllow, AuditDecision::kDeny,
                                           AuditDecision::kAskedAllow, AuditDecision::kAskedDeny};

// Strings reach the JSON writer only as valid UTF-8 (its contract). Every
// field comes from a JSON request or from toolvfs itself, so this copies
// only in the impossible case.
void WriteText(JsonWriter& writer, std::string_view text) {
  if (IsValidUtf8(text)) {
    WriteJsonString(writer, text);
  } else {
    WriteJsonString(writer, ToValidUtf8(text));
  }
}

// Parses exactly what FormatTimestamp writes ("2026-11-21T08:30:00.125Z")
// back into Unix milliseconds.
std::optional<int64_t> ParseTimestamp(std::string_view text) {
  // YYYY-MM-DDTHH:MM:SS.mmmZ
  constexpr std::string_view kShape = "dddd-dd-ddTdd:dd:dd.dddZ";
  if (text.size() != kShape.size()) return std::nullopt;
  for (size_t i = 0; i < kShape.size(); ++i) {
    bool digit = text[i] >= '0' && text[i] <= '9';
    if (kShape[i] == 'd' ? !digit : text[i] != kShape[i]) return std::nullopt;
  }
  auto number = [&](size_t position, size_t length) {
    int value = 0;
    for (size_t i = position; i < position + length; ++i) value = value * 10 + (text[i] - '0');
    return value;
  };
  struct tm utc = {};
  utc.tm_year = number(0, 4) - 1900;
  utc.tm_mon = number(5, 2) - 1;
  utc.tm_mday = number(8, 2);
  utc.tm_hour = number(11, 2);
  utc.tm_min = number(14, 2);
  utc.tm_sec = number(17, 2);
  int64_t milliseconds = static_cast<int64_t>(timegm(&utc)) * 1000 + number(20, 3);
  // timegm normalizes "02-30" into March: only a date that formats back to
  // the same text is one FormatTimestamp wrote.
  if (FormatTimestamp(milliseconds) != text) return std::nullopt;
  return milliseconds;
}

std::optional<AuditDecision> ParseDecisionName(std::string_view name) {
  for (AuditDecision decision : kAllDecisions) {
    if (AuditDecisionName(decision) == name) return decision;
  }
  return std::nullopt;
}

// The members of one record line, read with the error naming the member.
class RecordReader {
 public:
  explicit RecordReader(simdjson::dom::object object) : object_(object) {}

  Result<std::string> String(std::string_view name) const {
    std::string_view value;
    if (object_[name].get_string().get(value) != simdjson::SUCCESS) return Missing(name, "a string");
    return std::string(value);
  }
  Result<int64_t> Int(std::string_view name) const {
    int64_t value;
    if (object_[name].get_int64().get(value) != simdjson::SUCCESS) return Missing(name, "an integer");
    return value;
  }
  Result<uint64_t> Uint(std::string_view name) const {
    uint64_t value;
    if (object_[name].get_uint64().get(value) != simdjson::SUCCESS) {
      return Missing(name, "a non-negative integer");
    }
    return value;
  }

 private:
  static Status Missing(std::string_view name, std::string_view type) {
    return InvalidArgumentError("Invalid audit record: '" + std::string(name) + "' must be " +
                                std::string(type));
  }

  simdjson::dom::object object_;
};

// "12 µs", "3.4 ms", "2.05 s": three significant figures at most.
std::string FormatDuration(uint64_t microseconds) {
  if (microseconds < 1000) return std::to_string(microseconds) + " µs";
  char buffer[32];
  double value = static_cast<double>(microseconds) / 1000.0;
  const char* unit = "ms";
  if (microseconds >= 1000000) {
    value /= 1000.0;
    unit = "s";
  }
  snprintf(buffer, sizeof buffer, "%.*f %s", value < 10 ? 2 : value < 100 ? 1 : 0, value, unit);
  return buffer;
}

class CallbackAuditSink final : public AuditSink {
 public:
  explicit CallbackAuditSink(std::function<void(const AuditRecord&)> callback)
      : callback_(std::move(callback)) {}

  void Record(const AuditRecord& record) override {
    std::lock_guard lock(mutex_);
    callback_(record);
  }

 private:
  std::mutex mutex_;
  std::function<void(const AuditRecord&)> callback_;
};

class FanOutAuditSink final : public AuditSink {
 public:
  explicit FanOutAuditSink(std::vector<AuditSink*> sinks) : sinks_(std::move(sinks)) {}

  // Each sink is thread-safe itself: no lock here.
  void Record(const AuditRecord& record) override {
    for (AuditSink* sink : sinks_) sink->Record(record);
  }

 private:
  std::vector<AuditSink*> sinks_;
};

class FileAuditSink final : public AuditSink {
 public:
  explicit FileAuditSink(AppendOnlyFile file) : file_(std::move(file)) {}

  // Group commit: the thread that finds no write under way writes every
  // line queued so far in one write(2), and again for lines queued
  // meanwhile; the others only queue theirs. Holding a lock across the
  // write instead made concurrent sessions queue up behind each other's
  // disk writes, each waiter a sleep and a wake-up: with 8 to 32 sessions
  // the host spent 1.5x the CPU per request (docs/benchmarks.md, "Scaling
  // with sessions"). A record is on disk before Record returns unless
  // another thread is writing, which writes it before it returns. One
  // write of whole lines keeps lines whole against other processes
  // appending to the same log (O_APPEND).
  void Record(const AuditRecord& record) override {
    std::string line = record.ToJson();
    line += '\n';
    std::unique_lock lock(mutex_);
    queued_ += line;
    if (writing_) return;
    writing_ = true;
    while (!queued_.empty()) {
      std::string batch;
      batch.swap(queued_);
      lock.unlock();
      Status appended = file_.Append(batch);
      if (!appended.ok() && !failure_reported_.exchange(true)) {
        // Best effort by design: a full disk must not fail the tool's request.
        std::string warning = "toolvfs: warning: audit log: " + appended.message() +
                              " (records are being lost; further failures are not reported)\n";
        static_cast<void>(WriteFull(STDERR_FILENO, warning, "standard error"));
      }
      lock.lock();
    }
    writing_ = false;
  }

 private:
  std::mutex mutex_;
  std::string queued_;    // whole lines waiting for the writer
  bool writing_ = false;  // a thread is in the loop above
  AppendOnlyFile file_;
  std::atomic<bool> failure_reported_{false};
};

}  // namespace

std::string_view AuditDecisionName(AuditDecision decision) {
  switch (decision) {
    case AuditDecision::kAllow: return "allow";
    case AuditDecision::kDeny: return "deny";
    case AuditDecision::kAskedAllow: return "asked-allow";
    case AuditDecision::kAskedDeny: return "asked-deny";
  }
  return "deny";
}

std::string AuditRecord::ToJson() const {
  rapidjson::StringBuffer buffer;
  JsonWriter writer(buffer);
  writer.StartObject();
  WriteJsonKey(writer, "ts");
  WriteJsonString(writer, FormatTimestamp(timestamp_ms));
  WriteJsonKey(writer, "tool");
  WriteText(writer, tool);
  WriteJsonKey(writer, "call_id");
  WriteText(writer, call_id);
  WriteJsonKey(writer, "method");
  WriteText(writer, method);
  WriteJsonKey(writer, "target");
  WriteText(writer, target);
  WriteJsonKey(writer, "decision");
  WriteJsonString(writer, AuditDecisionName(decision));
  WriteJsonKey(writer, "rule");
  WriteText(writer, rule);
  WriteJsonKey(writer, "code");
  writer.Int(code);
  WriteJsonKey(writer, "bytes_in");
  writer.Uint64(bytes_in);
  WriteJsonKey(writer, "bytes_out");
  writer.Uint64(bytes_out);
  WriteJsonKey(writer, "duration_us");
  writer.Uint64(duration_us);
  writer.EndObject();
  return JsonText(buffer);
}

Result<AuditRecord> ParseAuditRecord(std::string_view json_line) {
  // One parser per thread: `toolvfs audit` parses every line of a large log.
  thread_local simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (auto error = parser.parse(json_line.data(), json_line.size()).get(root); error) {
    return InvalidArgumentError(std::string("Invalid audit record: not JSON: ") +
                                simdjson::error_message(error));
  }
  simdjson::dom::object object;
  if (root.get_object().get(object) != simdjson::SUCCESS) {
    return InvalidArgumentError("Invalid audit record: not a JSON object");
  }
  RecordReader reader(object);
  AuditRecord record;
  TOOLVFS_ASSIGN_OR_RETURN(std::string timestamp, reader.String("ts"));
  std::optional<int64_t> milliseconds = ParseTimestamp(timestamp);
  if (!milliseconds) {
    return InvalidArgumentError("Invalid audit record: 'ts' must be a UTC time like "
                                "\"2026-11-21T08:30:00.125Z\", got " + Quote(timestamp));
  }
  record.timestamp_ms = *milliseconds;
  TOOLVFS_ASSIGN_OR_RETURN(record.tool, reader.String("tool"));
  TOOLVFS_ASSIGN_OR_RETURN(record.call_id, reader.String("call_id"));
  TOOLVFS_ASSIGN_OR_RETURN(record.method, reader.String("method"));
  TOOLVFS_ASSIGN_OR_RETURN(record.target, reader.String("target"));
  TOOLVFS_ASSIGN_OR_RETURN(std::string decision_name, reader.String("decision"));
  std::optional<AuditDecision> decision = ParseDecisionName(decision_name);
  if (!decision) {
    return InvalidArgumentError("Invalid audit record: 'decision' must be allow, deny, asked-allow or "
                                "asked-deny, got " + Quote(decision_name));
  }
  record.decision = *decision;
  TOOLVFS_ASSIGN_OR_RETURN(record.rule, reader.String("rule"));
  TOOLVFS_ASSIGN_OR_RETURN(int64_t code, reader.Int("code"));
  if (code < INT32_MIN || code > INT32_MAX) {
    return InvalidArgumentError("Invalid audit record: 'code' " + std::to_string(code) + " is out of range");
  }
  record.code = static_cast<int>(code);
  TOOLVFS_ASSIGN_OR_RETURN(record.bytes_in, reader.Uint("bytes_in"));
  TOOLVFS_ASSIGN_OR_RETURN(record.bytes_out, reader.Uint("bytes_out"));
  TOOLVFS_ASSIGN_OR_RETURN(record.duration_us, reader.Uint("duration_us"));
  return record;
}

std::unique_ptr<AuditSink> NewCallbackAuditSink(std::function<void(const AuditRecord&)> callback) {
  return std::make_unique<CallbackAuditSink>(std::move(callback));
}

std::unique_ptr<AuditSink> NewFanOutAuditSink(std::vector<AuditSink*> sinks) {
  return std::make_unique<FanOutAuditSink>(std::move(sinks));
}

Result<std::unique_ptr<AuditSink>> OpenAuditLogFile(const std::string& path) {
  TOOLVFS_ASSIGN_OR_RETURN(AppendOnlyFile file, AppendOnlyFile::Open(path));
  return std::unique_ptr<AuditSink>(std::make_unique<FileAuditSink>(std::move(file)));
}

Result<std::unique_ptr<AuditSink>> OpenAuditLogFileBelow(const std::string& directory,
                                                         std::string_view relative_path) {
  TOOLVFS_ASSIGN_OR_RETURN(AppendOnlyFile file, AppendOnlyFile::OpenBelow(directory, relative_path));
  return std::unique_ptr<AuditSink>(std::make_unique<FileAuditSink>(std::move(file)));
}

std::string FormatAuditLine(const AuditRecord& record) {
  // "2026-11-21T08:30:00.125Z" -> "2026-11-21 08:30:00.125"
  std::string line = FormatTimestamp(record.timestamp_ms);
  if (line.size() == 24) {
    line[10] = ' ';
    line.pop_back();
  }
  line += "  ";
  line += EscapeForTerminal(record.tool);
  line += "  ";
  line += EscapeForTerminal(record.method);
  line += "  ";
  line += EscapeForTerminal(record.target);
  // A run's own records: which run, and how it ended; no decision.
  if (record.method == kRunStartMethod || record.method == kRunEndMethod) {
    line += "  run " + EscapeForTerminal(record.call_id);
    if (record.method == kRunEndMethod) {
      if (!record.rule.empty()) line += " (" + EscapeForTerminal(record.rule) + ")";
      line += "  exit " + std::to_string(record.code) + "  " + FormatDuration(record.duration_us);
    }
    return line;
  }
  line += "  ";
  line += AuditDecisionName(record.decision);
  if (!record.rule.empty()) {
    line += " (";
    line += EscapeForTerminal(record.rule);
    line += ')';
  }
  line += "  ";
  line += FormatDuration(record.duration_us);
  if (record.code != 0) line += "  error " + std::to_string(record.code);
  return line;
}

}  // namespace toolvfs
