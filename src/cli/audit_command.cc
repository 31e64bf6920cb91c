// `toolvfs audit`: the audit log (SPEC.md §3.4) as a readable timeline, or
// its records as JSON lines, filtered by tool and by denial.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <memory>
#include <optional>
#include <string>

#include "cli/command.h"
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
// A damaged log could have millions of bad lines: report the first few.
constexpr uint64_t kReportedMalformedLines = 10;

bool IsDenial(AuditDecision decision) {
  return decision == AuditDecision::kDeny || decision == AuditDecision::kAskedDeny;
}

class AuditCommand final : public Command {
 public:
  void AddOptions(CLI::App& app) override {
    app.add_option("--tool", tool_, "Only the requests of this tool")->type_name("NAME");
    app.add_flag("--denied", denied_, "Only denied requests (deny and asked-deny)");
    app.add_flag("--json", json_, "Print the matching records as JSON lines, as the log keeps them");
    app.footer(
        "Reads --audit PATH, else .toolvfs/audit.jsonl in the project directory.\n"
        "Output: one line per request, in the order recorded (times in UTC):\n"
        "  2026-11-21 08:30:00.125  gen  fs.write  src/gen/a.rs  asked-allow (user)  12 µs\n"
        "Malformed lines are reported on stderr with their line number and skipped.\n"
        "Exit codes: 0 the log was read, 2 no log, an unreadable log or malformed lines.");
  }

  int Run(const CommonOptions& common) override {
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
    TOOLVFS_ASSIGN_OR_RETURN(std::unique_ptr<ProjectFiles> store, OpenProject(common.project));
    std::optional<std::string> directory = ProjectDirectory(common.project);
    if (!directory) {
      return InvalidArgumentError("The project " + Quote(common.project) +
                                  " has no directory, so no audit log; name one with --audit PATH");
    }
    return *directory + "/" + std::string(kProjectAuditLogPath);
  }

  bool Matches(const AuditRecord& record) const {
    if (tool_ && record.tool != *tool_) return false;
    return !denied_ || IsDenial(record.decision);
  }

  Status PrintRecords(FileLineReader& reader) {
    std::string out;
    uint64_t records = 0, shown = 0;
    while (true) {
      Result<std::optional<std::string_view>> line = reader.NextLine();
      if (!line.ok() && line.status().code() != StatusCode::kTooLarge) return line.status();
      if (line.ok() && !line->has_value()) break;
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
  bool denied_ = false;
  bool json_ = false;
  uint64_t malformed_lines_ = 0;
};

}  // namespace

std::unique_ptr<Command> NewAuditCommand() { return std::make_unique<AuditCommand>(); }

}  // namespace toolvfs
