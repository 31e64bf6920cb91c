#include "host/access_gate.h"

namespace toolvfs {
namespace {

// Lower is more permissive; a request with several targets keeps the
// least permissive decision for its audit record.
int Strictness(AuditDecision decision) {
  switch (decision) {
    case AuditDecision::kAllow: return 0;
    case AuditDecision::kAskedAllow: return 1;
    case AuditDecision::kAskedDeny: return 2;
    case AuditDecision::kDeny: return 3;
  }
  return 3;
}

}  // namespace

AccessGate::AccessGate(const ToolPolicy& policy, Inquirer& inquirer)
    : policy_(policy), inquirer_(inquirer) {}

Status AccessGate::Authorize(RequestScope& scope, std::string_view operation, std::string_view target,
                             const PolicyDecision& decision) {
  auto record = [&](AuditDecision outcome, std::string_view rule) {
    if (scope.target_count_++ > 0) scope.target_ += " -> ";
    scope.target_ += target;
    if (!scope.decision_ || Strictness(outcome) >= Strictness(*scope.decision_)) {
      scope.decision_ = outcome;
      scope.rule_ = std::string(rule);
    }
  };
  auto denial = [&](std::string_view why) {
    return Status(StatusCode::kPermissionDenied,
                  std::string(scope.method()) + " of '" + EscapeForTerminal(target) + "' " + std::string(why));
  };

  switch (decision.decision) {
    case Decision::kAllow:
      record(AuditDecision::kAllow, decision.rule);
      return Status();
    case Decision::kDeny: {
      record(AuditDecision::kDeny, decision.rule);
      std::string why = "denied by " + decision.rule;
      if (!decision.hint.empty()) why += "; " + (policy_.ad_hoc ? ExecFlagHint(decision.hint) : decision.hint);
      return denial(why);
    }
    case Decision::kUncovered:
      break;
  }

  std::pair<std::string, std::string> key{std::string(operation), std::string(target)};
  // The user's answer for the rest of the run, if they gave one.
  auto remembered = [&]() -> std::optional<Status> {
    std::lock_guard lock(answers_mutex_);
    auto it = run_answers_.find(key);
    if (it == run_answers_.end()) {
      const PatternAnswer* found = nullptr;
      for (const PatternAnswer& answer : pattern_answers_) {
        if (answer.operation != operation || !answer.pattern.Matches(target)) continue;
        if (found == nullptr || !answer.allowed) found = &answer;
        if (!answer.allowed) break;
      }
      if (found == nullptr) return std::nullopt;
      record(found->allowed ? AuditDecision::kAskedAllow : AuditDecision::kAskedDeny,
             "user, for this run: " + found->text);
      if (found->allowed) return Status();
      return denial("denied by the user for the rest of this run (" + found->text + ")");
    }
    record(it->second ? AuditDecision::kAskedAllow : AuditDecision::kAskedDeny, "user, for this run");
    if (it->second) return Status();
    return denial("denied by the user for the rest of this run");
  };
  if (std::optional<Status> answer = remembered()) return *answer;

  Inquiry inquiry{policy_.tool_name, std::string(operation), std::string(target),
                  policy_.ad_hoc ? ExecFlagHint(decision.hint) : decision.hint, policy_.ad_hoc};
  if (!inquirer_.asks_user()) {
    record(AuditDecision::kDeny, "not covered, no interaction");
    return Status(StatusCode::kPermissionDenied, NonInteractiveDenial(inquiry, scope.method()));
  }
  if (!scope.may_block()) {
    scope.needs_worker_ = true;
    return Status(StatusCode::kCancelled, "moved to a worker to ask the user");
  }

  std::lock_guard question(question_mutex_);
  // Another question may have settled this target while we waited.
  if (std::optional<Status> answer = remembered()) return *answer;
  if (pending_sender_) {
    pending_sender_(scope.id(), "asking the user to allow " + std::string(operation) + " of '" +
                                    std::string(target) + "'");
  }
  Result<InquiryReply> reply = inquirer_.AskWithScope(inquiry);
  if (!reply.ok()) {
    record(AuditDecision::kAskedDeny, "user (no answer)");
    return denial("was not answered: " + reply.status().message());
  }
  const InquiryAnswer answer = reply->answer;
  bool allowed = answer == InquiryAnswer::kAllowOnce || answer == InquiryAnswer::kAllowForRun;
  if (answer == InquiryAnswer::kAllowForRun || answer == InquiryAnswer::kDenyForRun) {
    std::lock_guard lock(answers_mutex_);
    run_answers_[key] = allowed;
    if (!reply->pattern.empty()) {
      pattern_answers_.push_back(
          {std::string(operation), PathGlob::Pattern(reply->pattern), reply->pattern, allowed});
    }
  }
  record(allowed ? AuditDecision::kAskedAllow : AuditDecision::kAskedDeny,
         reply->pattern.empty() ? std::string("user") : "user: " + reply->pattern);
  if (allowed) return Status();
  return denial("denied by the user");
}

}  // namespace toolvfs
