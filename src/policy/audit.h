// The audit log (SPEC.md §3.4): one record per mediated request.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace toolvfs {

// How a request was decided, as recorded.
enum class AuditDecision { kAllow, kDeny, kAskedAllow, kAskedDeny };

// "allow" | "deny" | "asked-allow" | "asked-deny".
std::string_view AuditDecisionName(AuditDecision decision);

// The methods of the two records every `toolvfs run` and `exec` writes
// around a run, whatever its runtime (stdio and MCP tools, whose file
// access the log cannot see, included): `call_id` is the run id (the
// request records of a vfs or builtin run carry the same), `target` the
// runtime ("vfs", "stdio", "builtin", "mcp") on the start record and the
// outcome's status ("completed", "error", "needs_input", "cancelled") on
// the end record, whose `rule` is the error kind (docs/cli.md; "" when
// completed), `code` the exit code and `duration_us` the run's length.
inline constexpr std::string_view kRunStartMethod = "run.start";
inline constexpr std::string_view kRunEndMethod = "run.end";

struct AuditRecord {
  int64_t timestamp_ms = 0;  // Unix epoch milliseconds; "ts" on the wire (RFC 3339)
  std::string tool;
  std::string call_id;       // the tool run this request belongs to
  std::string method;        // "fs.read", "http.get", "process.run"
  std::string target;        // exact: path, URL or command line
  AuditDecision decision = AuditDecision::kAllow;
  // PolicyDecision::rule; for asked-*: "user" (answered now), "user, for
  // this run" or "user, for this MCP session" (an earlier answer decided).
  std::string rule;
  int code = 0;              // 0 for success, else the JSON-RPC error code answered
  uint64_t bytes_in = 0;     // request line bytes
  uint64_t bytes_out = 0;    // answer line bytes
  uint64_t duration_us = 0;  // from receipt to answer

  // One compact JSON object, no newline:
  // {"ts":"2026-11-21T08:30:00.125Z","tool":...,"call_id":...,"method":...,
  //  "target":...,"decision":"allow","rule":...,"code":0,"bytes_in":..,
  //  "bytes_out":..,"duration_us":..}
  std::string ToJson() const;
};

// The record of one line ToJson wrote. InvalidArgument naming the problem
// for a line that is not a JSON object with every member of ToJson, each of
// its type ("ts" exactly as ToJson writes it, "decision" one of the four
// names). Members it does not know are ignored, so an older toolvfs can
// read the log of a newer one.
Result<AuditRecord> ParseAuditRecord(std::string_view json_line);

// Receives records; implementations must be thread-safe (requests of one
// run are served on several threads). Record never fails the request: an
// implementation that cannot write reports it once on stderr and keeps on.
class AuditSink {
 public:
  virtual ~AuditSink() = default;
  virtual void Record(const AuditRecord& record) = 0;
};

// For embedders: calls `callback` for every record (under a mutex).
std::unique_ptr<AuditSink> NewCallbackAuditSink(std::function<void(const AuditRecord&)> callback);

// Sends each record to every sink in `sinks` (not owned).
std::unique_ptr<AuditSink> NewFanOutAuditSink(std::vector<AuditSink*> sinks);

// Appends each record as ToJson() plus '\n' to the file at `path` (opened
// as AppendOnlyFile::Open does: created 0600 with its directories, never
// truncated, never through a symbolic link), one write per record so runs
// in other processes appending to the same log never split a line. Errors
// of the open name the path; a later failed write is reported once on
// stderr ("toolvfs: warning: audit log ...") and never fails the request.
Result<std::unique_ptr<AuditSink>> OpenAuditLogFile(const std::string& path);

// OpenAuditLogFile for `relative_path` below `directory`, through no
// symbolic link at all (AppendOnlyFile::OpenBelow): the project's own log,
// whose directory a cloned repository could otherwise link elsewhere.
Result<std::unique_ptr<AuditSink>> OpenAuditLogFileBelow(const std::string& directory,
                                                         std::string_view relative_path);

// Where CLI runs keep the audit log, relative to the project directory.
inline constexpr std::string_view kProjectAuditLogPath = ".toolvfs/audit.jsonl";

// `toolvfs audit`: a readable timeline, one line per record (UTC):
// "2026-11-21 08:30:00.125  gen  fs.write  src/gen/a.rs  asked-allow (user)  12 µs"
// plus "  error -32001" when the request failed; a run's own records
// "... gen  run.start  vfs  run 9f2c..." and
// "... gen  run.end  error  run 9f2c... (denied)  exit 1  1.2 s". Every field is escaped
// with EscapeForTerminal: what a tool asked for cannot drive the terminal.
std::string FormatAuditLine(const AuditRecord& record);

}  // namespace toolvfs
