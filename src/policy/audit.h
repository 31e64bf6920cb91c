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

struct AuditRecord {
  int64_t timestamp_ms = 0;  // Unix epoch milliseconds; "ts" on the wire (RFC 3339)
  std::string tool;
  std::string call_id;       // the tool run this request belongs to
  std::string method;        // "fs.read", "http.get", "process.run"
  std::string target;        // exact: path, URL or command line
  AuditDecision decision = AuditDecision::kAllow;
  std::string rule;          // PolicyDecision::rule; "user" for asked-*
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

// InvalidArgument naming the line's problem for anything ToJson could not
// have written.
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

// `toolvfs audit`: a readable timeline, one line per record, e.g.
// "08:30:00.125  gen  fs.write  src/gen/a.rs  asked-allow (user)  12 µs".
std::string FormatAuditLine(const AuditRecord& record);

}  // namespace toolvfs
