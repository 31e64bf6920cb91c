// `toolvfs audit`: the audit log (SPEC.md §3.4) as a readable timeline, or
// its records as JSON lines, filtered by tool, run, time and denial, and
// followed as it grows with --follow.
#include <unistd.h>

#include <time.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "cli/command.h"
#include "cli/project_opening.h"
#include "cli/terminal.h"
#include "cli/tool_invocation.h"
#include "core/io.h"
#include "core/text.h"
#include "policy/audit.h"
#include "project/append_only_file.h"
#include "project/project_files.h"

namespace toolvfs {
namespace {

constexpr size_t kFlushBytes = 64 * 1024;
// --follow: how often the log is read again once its end is reached.
constexpr std::chrono::milliseconds kFollowInterval{200};
// A damaged log could have millions of bad lines: report the first few.
constexpr uint64_t kReportedMalformedLines = 10;

bool IsDenial(AuditDecision decision) {
  return decision == AuditDecision::kDeny || decision == AuditDecision::kAskedDeny;
}

class AuditCommand final : public Command {
 public:
  void AddOptions(CLI::App& app) override {
    app.add_option("--tool", tool_, "Only the records of this tool")->type_name("NAME");
    app.add_option("--run", run_, "Only the records of this run (its run id, the call_id)")->type_name("ID");
    app.add_option("--since", since_,
                   "Only records from TIME on: 2026-11-21, '2026-11-21 08:30[:00]' or 2026-11-21T08:30:00Z "
                   "(UTC), or a time ago: 90s, 10m, 2h, 3d")
        ->type_name("TIME");
    app.add_flag("-f,--follow", follow_, "Keep printing records as they are appended (until Ctrl+C)");
    app.add_flag("--denied", denied_, "Only denied requests (deny and asked-deny)");
    app.add_flag("--json", json_, "Print the matching records as JSON lines, as the log keeps them");
    app.footer(
        "Reads --audit PATH, else .toolvfs/audit.jsonl in the project directory.\n"
        "Output: one line per record, in the order recorded (times in UTC):\n"
        "  2026-11-21 08:30:00.125  gen  run.start  vfs  run 9f2c...\n"
        "  2026-11-21 08:30:00.140  gen  fs.write  src/gen/a.rs  asked-allow (user)  12 µs\n"
        "  2026-11-21 08:30:01.002  gen  run.end  completed  run 9f2c...  exit 0  877 ms\n"
        "Malformed lines are reported on stderr with their line number and skipped.\n"
        "Example: toolvfs audit --tool rename_symbol --since 1h\n"
        "Exit codes: 0 the log was read, 2 no log, an unreadable log or malformed lines.");
  }

  unsigned UsedCommonOptions() const override { return kOptionProject | kOptionAudit; }

  int Run(const CommonOptions& common) override {
    if (since_) {
      Result<int64_t> since = ParseSince(*since_);
      if (!since.ok()) return ReportError("--since", since.status().message());
      since_ms_ = *since;
    }
    Result<std::string> path = LogPath(common);
    if (!path.ok()) return ReportError("audit", path.status().message());
    Result<FileLineReader> reader = FileLineReader::Open(*path);
    if (!reader.ok()) {
      if (reader.status().code() == StatusCode::kNotFound) {
        return ReportError("audit", "No audit log at " + Quote(*path) +
                                        " (toolvfs run and exec write it unless --no-audit; "
                                        "name another log with --audit PATH)");
      }
      return ReportError("audit", reader.status().message());
    }

    Status printed = PrintRecords(*reader);
    if (!printed.ok()) return ReportError("audit", printed.message());
    if (malformed_lines_ > kReportedMalformedLines) {
      ReportNote("audit", std::to_string(malformed_lines_ - kReportedMalformedLines) +
                              " more malformed lines of " + Quote(*path) + " were skipped");
    }
    return malformed_lines_ > 0 ? kExitUsage : kExitOk;
  }

 private:
  // --audit PATH, else the project's own log (which only a store with a
  // directory has).
  static Result<std::string> LogPath(const CommonOptions& common) {
    if (!common.audit_path.empty()) return common.audit_path;
    TOOLVFS_ASSIGN_OR_RETURN(std::unique_ptr<ProjectFiles> store,
                             OpenCommandProject(common.project, ProjectUse::kRead));
    std::optional<std::string> directory = ProjectDirectory(common.project);
    if (!directory) {
      return InvalidArgumentError("The project " + Quote(common.project) +
                                  " has no directory, so no audit log; name one with --audit PATH");
    }
    return *directory + "/" + std::string(kProjectAuditLogPath);
  }

  // --since: a UTC date and time, or a time before now.
  static Result<int64_t> ParseSince(const std::string& text) {
    auto invalid = [&]() {
      return InvalidArgumentError(Quote(text) +
                                  " is no time: give 2026-11-21, '2026-11-21 08:30[:00]', "
                                  "2026-11-21T08:30:00Z (UTC) or a time ago such as 90s, 10m, 2h, 3d");
    };
    const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count();
    if (text.size() >= 2 && text.find_first_not_of("0123456789") == text.size() - 1) {
      int64_t unit_ms = 0;
      switch (text.back()) {
        case 's': unit_ms = 1000; break;
        case 'm': unit_ms = 60 * 1000; break;
        case 'h': unit_ms = 3600 * 1000; break;
        case 'd': unit_ms = 86400 * 1000; break;
        default: return invalid();
      }
      if (text.size() > 10) return invalid();  // keeps the product in range
      return now_ms - std::stoll(text.substr(0, text.size() - 1)) * unit_ms;
    }
    // YYYY-MM-DD, then optionally [T ]HH:MM[:SS], then an optional Z.
    std::string_view rest = text;
    if (rest.ends_with('Z')) rest.remove_suffix(1);
    int fields[6] = {0, 0, 0, 0, 0, 0};
    constexpr std::string_view kShape = "dddd-dd-dd?dd:dd:dd";
    if (rest.size() != 10 && rest.size() != 16 && rest.size() != 19) return invalid();
    for (size_t i = 0; i < rest.size(); ++i) {
      char want = kShape[i];
      bool digit = rest[i] >= '0' && rest[i] <= '9';
      if (want == 'd' ? !digit : want == '?' ? rest[i] != 'T' && rest[i] != ' ' : rest[i] != want) return invalid();
    }
    auto number = [&](size_t position, size_t length) {
      int value = 0;
      for (size_t i = position; i < position + length; ++i) value = value * 10 + (rest[i] - '0');
      return value;
    };
    fields[0] = number(0, 4);
    fields[1] = number(5, 2);
    fields[2] = number(8, 2);
    if (rest.size() >= 16) {
      fields[3] = number(11, 2);
      fields[4] = number(14, 2);
    }
    if (rest.size() == 19) fields[5] = number(17, 2);
    if (fields[1] < 1 || fields[1] > 12 || fields[2] < 1 || fields[2] > 31 || fields[3] > 23 || fields[4] > 59 ||
        fields[5] > 60) {
      return invalid();
    }
    struct tm utc = {};
    utc.tm_year = fields[0] - 1900;
    utc.tm_mon = fields[1] - 1;
    utc.tm_mday = fields[2];
    utc.tm_hour = fields[3];
    utc.tm_min = fields[4];
    utc.tm_sec = fields[5];
    return static_cast<int64_t>(timegm(&utc)) * 1000;
  }

  bool Matches(const AuditRecord& record) const {
    if (tool_ && record.tool != *tool_) return false;
    if (run_ && record.call_id != *run_) return false;
    if (since_ms_ && record.timestamp_ms < *since_ms_) return false;
    return !denied_ || IsDenial(record.decision);
  }

  Status PrintRecords(FileLineReader& reader) {
    std::string out;
    uint64_t records = 0, shown = 0;
    while (true) {
      Result<std::optional<std::string_view>> line = reader.NextLine();
      if (!line.ok() && line.status().code() != StatusCode::kTooLarge) return line.status();
      if (line.ok() && !line->has_value()) {
        if (!follow_) break;
        // Following: what matched so far goes out now, then the log is
        // read again for what was appended since.
        TOOLVFS_RETURN_IF_ERROR(WriteFull(STDOUT_FILENO, out, "standard output"));
        out.clear();
        std::this_thread::sleep_for(kFollowInterval);
        reader.ResumeAfterEnd();
        continue;
      }
      if (line.ok() && (*line)->empty()) continue;
      Result<AuditRecord> record =
          line.ok() ? ParseAuditRecord(**line) : Result<AuditRecord>(line.status());
      if (!record.ok()) {
        ReportMalformed(reader, record.status());
        continue;
      }
      ++records;
      if (!Matches(*record)) continue;
      ++shown;
      out += json_ ? record->ToJson() : FormatAuditLine(*record);
      out += '\n';
      if (out.size() >= kFlushBytes) {
        TOOLVFS_RETURN_IF_ERROR(WriteFull(STDOUT_FILENO, out, "standard output"));
        out.clear();
      }
    }
    if (shown == 0 && !json_) {
      out = records == 0 ? "The audit log " + Quote(reader.path()) + " has no records.\n"
                         : "None of the " + std::to_string(records) + " records of " + Quote(reader.path()) +
                               " match.\n";
    }
    return WriteFull(STDOUT_FILENO, out, "standard output");
  }

  void ReportMalformed(const FileLineReader& reader, const Status& problem) {
    if (++malformed_lines_ > kReportedMalformedLines) return;
    ReportError("audit", reader.path() + ":" + std::to_string(reader.line_number()) + ": " +
                             problem.message() + "; line skipped");
  }

  std::optional<std::string> tool_;
  std::optional<std::string> run_;
  std::optional<std::string> since_;
  std::optional<int64_t> since_ms_;
  bool follow_ = false;
  bool denied_ = false;
  bool json_ = false;
  uint64_t malformed_lines_ = 0;
};

}  // namespace

std::unique_ptr<Command> NewAuditCommand() { return std::make_unique<AuditCommand>(); }

}  // namespace toolvfs
