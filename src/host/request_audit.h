// The audit record of an answered request (SPEC.md §3.4): one record per
// request the host answers, whatever the answer, so that a tool probing the
// policy (`..`, escaping symlinks, invalid URLs, unknown methods, invalid
// params) leaves a trace like one the policy denied.
//
// The contract: whoever answers a request writes exactly one record for it,
// made here, at the moment its answer is final — the session loop
// (tool_session.cc) for vfs tools, the builtin runtime for builtins. Handlers
// do not write records; they only fill the RequestScope through the gate.
//
// What a record holds:
// - Requests the gate decided (every target the request names went
//   through AccessGate::Authorize): the scope's targets (resolved, with
//   redirect hops), decision and rule, and the code answered. A code of
//   -32001 after an allow means the host refused what the policy allowed
//   (a symlink found escaping at use): recorded as a denial.
// - Requests refused before a decision, or before the decision of one of
//   their targets (a rename whose `to` is outside the project): the
//   targets the request named (NamedTargets), decision `deny` (unless the
//   gate denied already, whose rule stands), and a rule that says why:
//   "refused: invalid params", "refused: access denied", … (RefusalRule).
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "host/access_gate.h"
#include "policy/audit.h"
#include "protocol/jsonrpc.h"

namespace toolvfs {

// A named target longer than this is cut (with "… (N bytes)" after it): a
// tool cannot make one audit line megabytes long with a huge path.
inline constexpr size_t kMaxNamedTargetBytes = 4096;

// What the request names, in the order it names it: `path`, `from`, `to`,
// each of `paths` (fs.grep without paths: "." , the whole project), `url`,
// and the command line of `program` and `args`. Read from any method's
// params, an unknown method's included, exactly as sent: a value that is
// not a string is its JSON text.
std::vector<std::string> NamedTargets(std::string_view method, const Params& params);

// Several targets as one audit target: joined by " -> " (a rename's from
// and to, redirect hops, the paths of a refused snapshot_restore).
std::string JoinTargets(const std::vector<std::string>& targets);

// The command line as the user is shown it and the audit log records it:
// each word as is when no shell treats its characters specially, else in
// single quotes ('\'' for a quote).
std::string CommandLine(std::string_view program, std::span<const std::string> args);

// The rule of a request refused before a decision, by the code answered:
// "refused: invalid params" (-32602), "refused: access denied" (-32001),
// "refused: unknown method" (-32601), "refused: invalid request" (-32600),
// "not performed: not found" (-32002), … .
std::string RefusalRule(int code);

struct AnsweredRequest {
  // As the tool sent it: an unknown method is recorded under its own name.
  std::string_view method;
  const Params& params;
  // The handler's scope; null when no handler ran (an unknown method, an
  // id already in use, a request the tool cancelled before it started).
  const RequestScope* scope = nullptr;
  int code = 0;  // the JSON-RPC error code answered, 0 for a result
};

// The record of `request` (see above), stamped now, with `tool` and
// `call_id`. The caller adds bytes_in, bytes_out and duration_us.
AuditRecord AuditRecordForAnswer(const AnsweredRequest& request, std::string_view tool,
                                 std::string_view call_id);

}  // namespace toolvfs
