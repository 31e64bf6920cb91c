#include "host/request_audit.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <utility>

#include "core/text.h"

namespace toolvfs {
namespace {

std::string Bounded(std::string_view text) {
  if (text.size() <= kMaxNamedTargetBytes) return std::string(text);
  return std::string(text.substr(0, kMaxNamedTargetBytes)) + "… (" + std::to_string(text.size()) +
         " bytes)";
}

// A parameter as sent: a string as is, anything else as its JSON text.
std::optional<std::string> ParamText(const Params& params, std::string_view name) {
  if (!params.TypeOf(name)) return std::nullopt;
  if (Result<std::string_view> text = params.String(name); text.ok()) return std::string(*text);
  return params.Json(name);
}

bool Allows(AuditDecision decision) {
  return decision == AuditDecision::kAllow || decision == AuditDecision::kAskedAllow;
}

}  // namespace

std::vector<std::string> NamedTargets(std::string_view method, const Params& params) {
  std::vector<std::string> targets;
  for (std::string_view name : {"path", "from", "to"}) {
    if (std::optional<std::string> text = ParamText(params, name)) targets.push_back(Bounded(*text));
  }
  if (params.TypeOf("paths")) {
    Result<std::vector<std::string_view>> paths = params.StringArray("paths");
    if (!paths.ok()) {
      targets.push_back(Bounded(params.Json("paths").value_or("")));
    } else {
      for (std::string_view path : *paths) targets.push_back(Bounded(path));
    }
  } else if (method == "fs.grep") {
    targets.emplace_back(".");  // the whole project, as the handler records it
  }
  if (std::optional<std::string> url = ParamText(params, "url")) targets.push_back(Bounded(*url));
  if (std::optional<std::string> program = ParamText(params, "program")) {
    std::vector<std::string> args;
    if (Result<std::vector<std::string_view>> words = params.StringArray("args"); words.ok()) {
      args.assign(words->begin(), words->end());
    } else if (std::optional<std::string> json = params.Json("args")) {
      args.push_back(std::move(*json));
    }
    targets.push_back(Bounded(CommandLine(*program, args)));
  }
  return targets;
}

std::string JoinTargets(const std::vector<std::string>& targets) {
  std::string joined;
  for (const std::string& target : targets) {
    if (!joined.empty()) joined += " -> ";
    joined += target;
  }
  return joined;
}

std::string CommandLine(std::string_view program, std::span<const std::string> args) {
  std::string line = ShellWord(program);
  for (const std::string& arg : args) line += " " + ShellWord(arg);
  return line;
}

std::string RefusalRule(int code) {
  switch (code) {
    case kJsonRpcInvalidRequest: return "refused: invalid request";
    case kJsonRpcMethodNotFound: return "refused: unknown method";
    case kJsonRpcInvalidParams: return "refused: invalid params";
    case kJsonRpcAccessDenied: return "refused: access denied";
    case kJsonRpcNotFound: return "not performed: not found";
    case kJsonRpcAlreadyExists: return "not performed: already exists";
    case kJsonRpcTimeout: return "not performed: timed out";
    case kJsonRpcCancelled: return "not performed: cancelled";
    case kJsonRpcUnavailable: return "not performed: store unavailable";
    case kJsonRpcInternalError: return "not performed: internal error";
    default: return "not performed: error " + std::to_string(code);
  }
}

AuditRecord AuditRecordForAnswer(const AnsweredRequest& request, std::string_view tool,
                                 std::string_view call_id) {
  AuditRecord record;
  record.timestamp_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count();
  record.tool = std::string(tool);
  record.call_id = std::string(call_id);
  record.method = std::string(request.method);
  record.code = request.code;

  const RequestScope* scope = request.scope;
  const bool decided = scope != nullptr && scope->decided();
  std::vector<std::string> named = NamedTargets(request.method, request.params);
  if (decided && scope->target_count() >= named.size()) {
    // Every target went through the gate: what it judged is the record.
    record.target = scope->target();
    record.decision = scope->decision();
    record.rule = scope->rule();
    if (request.code == kJsonRpcAccessDenied && Allows(record.decision)) {
      record.decision = AuditDecision::kDeny;
      record.rule = RefusalRule(request.code);
    }
    return record;
  }
  // Refused before the gate saw all of it: what the request named.
  record.target = JoinTargets(named);
  if (decided && (!Allows(scope->decision()) || request.code == 0)) {
    record.decision = scope->decision();
    record.rule = scope->rule();
  } else if (request.code == 0) {
    record.decision = AuditDecision::kAllow;  // no handler answers so; recorded as it happened
    record.rule = "no policy decision";
  } else {
    record.decision = AuditDecision::kDeny;
    record.rule = RefusalRule(request.code);
  }
  return record;
}

}  // namespace toolvfs
