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

Status Denial(const RequestScope& scope, std::string_view target, std::string_view why) {
  return Status(StatusCode::kPermissionDenied,
                std::string(scope.method()) + " of '" + EscapeForTerminal(target) + "' " + std::string(why));
}

}  // namespace

AccessGate::AccessGate(const ToolPolicy& policy, Inquirer& inquirer)
    : policy_(policy), inquirer_(inquirer) {}

void AccessGate::Record(RequestScope& scope, std::string_view target, AuditDecision outcome, std::string_view rule) {
  if (scope.target_count_++ > 0) scope.target_ += " -> ";
  scope.target_ += target;
  if (!scope.decision_ || Strictness(outcome) >= Strictness(*scope.decision_)) {
    scope.decision_ = outcome;
    scope.rule_ = std::string(rule);
  }
}

std::optional<Status> AccessGate::Remembered(RequestScope& scope, std::string_view operation,
                                             std::string_view target) {
  std::lock_guard lock(answers_mutex_);
  auto it = run_answers_.find({std::string(operation), std::string(target)});
  if (it == run_answers_.end()) {
    const PatternAnswer* found = nullptr;
    for (const PatternAnswer& answer : pattern_answers_) {
      if (answer.operation != operation || !answer.pattern.Matches(target)) continue;
      if (found == nullptr || !answer.allowed) found = &answer;
      if (!answer.allowed) break;
    }
    if (found == nullptr) return std::nullopt;
    Record(scope, target, found->allowed ? AuditDecision::kAskedAllow : AuditDecision::kAskedDeny,
           "user, for this run: " + found->text);
    if (found->allowed) return Status();
    return Denial(scope, target, "denied by the user for the rest of this run (" + found->text + ")");
  }
  Record(scope, target, it->second ? AuditDecision::kAskedAllow : AuditDecision::kAskedDeny, "user, for this run");
  if (it->second) return Status();
  return Denial(scope, target, "denied by the user for the rest of this run");
}

std::optional<Status> AccessGate::Settled(RequestScope& scope, std::string_view operation, std::string_view target,
                                          const PolicyDecision& decision) {
  switch (decision.decision) {
    case Decision::kAllow:
      Record(scope, target, AuditDecision::kAllow, decision.rule);
      return Status();
    case Decision::kDeny: {
      Record(scope, target, AuditDecision::kDeny, decision.rule);
      std::string why = "denied by " + decision.rule;
      if (!decision.hint.empty()) why += "; " + (policy_.ad_hoc ? ExecFlagHint(decision) : decision.hint);
      return Denial(scope, target, why);
    }
    case Decision::kUncovered:
      break;
  }
  return Remembered(scope, operation, target);
}

Status AccessGate::Authorize(RequestScope& scope, std::string_view operation, std::string_view target,
                             const PolicyDecision& decision) {
  if (std::optional<Status> settled = Settled(scope, operation, target, decision)) return *settled;

  Inquiry inquiry{policy_.tool_name, std::string(operation), std::string(target),
                  policy_.ad_hoc ? ExecFlagHint(decision) : decision.hint, policy_.ad_hoc};
  if (!inquirer_.asks_user()) {
    Record(scope, target, AuditDecision::kDeny, "not covered, no interaction");
    return Status(StatusCode::kPermissionDenied, NonInteractiveDenial(inquiry, scope.method()));
  }
  if (!scope.may_block()) {
    scope.needs_worker_ = true;
    return Status(StatusCode::kCancelled, "moved to a worker to ask the user");
  }

  std::lock_guard question(question_mutex_);
  // Another question may have settled this target while we waited.
  if (std::optional<Status> answer = Remembered(scope, operation, target)) return *answer;
  if (pending_sender_) {
    pending_sender_(scope.id(), "asking the user to allow " + std::string(operation) + " of '" +
                                    std::string(target) + "'");
  }
  Result<InquiryReply> reply = inquirer_.AskWithScope(inquiry);
  if (!reply.ok()) {
    Record(scope, target, AuditDecision::kAskedDeny, "user (no answer)");
    return Denial(scope, target, "was not answered: " + reply.status().message());
  }
  const InquiryAnswer answer = reply->answer;
  bool allowed = answer == InquiryAnswer::kAllowOnce || answer == InquiryAnswer::kAllowForRun;
  if (answer == InquiryAnswer::kAllowForRun || answer == InquiryAnswer::kDenyForRun) {
    std::lock_guard lock(answers_mutex_);
    run_answers_[{std::string(operation), std::string(target)}] = allowed;
    if (!reply->pattern.empty()) {
      pattern_answers_.push_back(
          {std::string(operation), PathGlob::Pattern(reply->pattern), reply->pattern, allowed});
    }
  }
  Record(scope, target, allowed ? AuditDecision::kAskedAllow : AuditDecision::kAskedDeny,
         reply->pattern.empty() ? std::string("user") : "user: " + reply->pattern);
  if (allowed) return Status();
  return Denial(scope, target, "denied by the user");
}

Status AccessGate::AuthorizeAll(RequestScope& scope, std::string_view operation, const std::vector<Judged>& targets) {
  // The policy's decisions first: a denial among them refuses before
  // anything is asked.
  std::vector<const Judged*> open;
  for (const Judged& judged : targets) {
    if (judged.decision.decision != Decision::kUncovered) {
      if (Status settled = *Settled(scope, operation, judged.target, judged.decision); !settled.ok()) return settled;
    } else {
      open.push_back(&judged);
    }
  }
  if (open.size() == 1 || !inquirer_.asks_user() || !scope.may_block()) {
    // Authorize's own answers: the first open target refused without
    // interaction, or the move to a worker.
    for (const Judged* judged : open) {
      TOOLVFS_RETURN_IF_ERROR(Authorize(scope, operation, judged->target, judged->decision));
    }
    return OkStatus();
  }

  std::lock_guard question(question_mutex_);
  // The run's answers, those given while we waited included.
  std::vector<const Judged*> asked;
  for (const Judged* judged : open) {
    std::optional<Status> answer = Remembered(scope, operation, judged->target);
    if (!answer) {
      asked.push_back(judged);
    } else if (!answer->ok()) {
      return *answer;
    }
  }
  if (asked.empty()) return OkStatus();
  Inquiry inquiry{policy_.tool_name, std::string(operation), asked.front()->target,
                  policy_.ad_hoc ? ExecFlagHint(asked.front()->decision) : asked.front()->decision.hint,
                  policy_.ad_hoc};
  if (asked.size() > 1) {
    for (const Judged* judged : asked) inquiry.targets.push_back(judged->target);
  }
  if (pending_sender_) {
    pending_sender_(scope.id(),
                    "asking the user to allow " + std::string(operation) + " of " + InquiryTargetsShown(inquiry));
  }
  Result<InquiryReply> reply = inquirer_.AskWithScope(inquiry);
  const InquiryAnswer answer = reply.ok() ? reply->answer : InquiryAnswer::kDenyOnce;
  const bool allowed = answer == InquiryAnswer::kAllowOnce || answer == InquiryAnswer::kAllowForRun;
  const bool for_run = answer == InquiryAnswer::kAllowForRun || answer == InquiryAnswer::kDenyForRun;
  std::string rule = !reply.ok() ? "user (no answer)" : reply->pattern.empty() ? "user" : "user: " + reply->pattern;
  {
    std::lock_guard lock(answers_mutex_);
    if (for_run && reply.ok() && !reply->pattern.empty()) {
      pattern_answers_.push_back({std::string(operation), PathGlob::Pattern(reply->pattern), reply->pattern, allowed});
    }
    for (const Judged* judged : asked) {
      if (for_run) run_answers_[{std::string(operation), judged->target}] = allowed;
    }
  }
  for (const Judged* judged : asked) {
    Record(scope, judged->target, allowed ? AuditDecision::kAskedAllow : AuditDecision::kAskedDeny, rule);
  }
  if (allowed) return OkStatus();
  const std::string why = reply.ok() ? "denied by the user" : "was not answered: " + reply.status().message();
  return Status(StatusCode::kPermissionDenied,
                std::string(scope.method()) + " of " + InquiryTargetsShown(inquiry) + " " + why);
}

}  // namespace toolvfs
