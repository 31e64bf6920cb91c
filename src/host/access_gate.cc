#include "host/access_gate.h"

#include <unordered_set>

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

// How to allow every target of `open` without asking: each distinct hint
// once, in order, joined by "; ". One target's hint names that target
// only (`add "a.txt" to filesystem.writable`), so a batch's question needs
// each of its own, and never one of a target it does not ask about. At
// most 20 are listed, as InquiryTargetsShown lists the targets.
std::string HintFor(const ToolPolicy& policy, const std::vector<const AccessGate::Judged*>& open) {
  constexpr size_t kListed = 20;
  std::unordered_set<std::string> seen;
  std::string joined;
  for (const AccessGate::Judged* judged : open) {
    std::string hint = policy.ad_hoc ? ExecFlagHint(judged->decision) : judged->decision.hint;
    if (hint.empty() || seen.contains(hint)) continue;
    if (seen.size() < kListed) joined += (seen.empty() ? "" : "; ") + hint;
    seen.insert(std::move(hint));
  }
  if (seen.size() > kListed) joined += "; … and " + std::to_string(seen.size() - kListed) + " more";
  return joined;
}

// The question about `open` (one or more targets of one operation).
Inquiry InquiryFor(const ToolPolicy& policy, std::string_view operation,
                   const std::vector<const AccessGate::Judged*>& open) {
  Inquiry inquiry{policy.tool_name, std::string(operation), open.front()->target, HintFor(policy, open),
                  policy.ad_hoc};
  if (open.size() > 1) {
    for (const AccessGate::Judged* judged : open) inquiry.targets.push_back(judged->target);
  }
  return inquiry;
}

}  // namespace

AccessGate::AccessGate(const ToolPolicy& policy, Inquirer& inquirer)
    : policy_(policy), inquirer_(inquirer) {}

void AccessGate::Record(RequestScope& scope, std::string_view target, AuditDecision outcome, std::string_view rule) {
  if (scope.target_count_++ > 0) scope.target_ += " -> ";
  scope.target_ += target;
  if (outcome == AuditDecision::kDeny || outcome == AuditDecision::kAskedDeny) {
    scope.refused_targets_.emplace_back(target);
  }
  if (!scope.decision_ || Strictness(outcome) >= Strictness(*scope.decision_)) {
    scope.decision_ = outcome;
    scope.rule_ = std::string(rule);
  }
}

std::optional<Status> AccessGate::Remembered(RequestScope& scope, std::string_view operation,
                                             std::string_view target) {
  {
    std::lock_guard lock(answers_mutex_);
    auto it = run_answers_.find({std::string(operation), std::string(target)});
    if (it != run_answers_.end()) {
      Record(scope, target, it->second ? AuditDecision::kAskedAllow : AuditDecision::kAskedDeny,
             "user, for this run");
      if (it->second) return Status();
      return Denial(scope, target, "denied by the user for the rest of this run");
    }
    const PatternAnswer* found = nullptr;
    for (const PatternAnswer& answer : pattern_answers_) {
      if (answer.operation != operation || !answer.pattern.Matches(target)) continue;
      if (found == nullptr || !answer.allowed) found = &answer;
      if (!answer.allowed) break;
    }
    if (found != nullptr) {
      Record(scope, target, found->allowed ? AuditDecision::kAskedAllow : AuditDecision::kAskedDeny,
             "user, for this run: " + found->text);
      if (found->allowed) return Status();
      return Denial(scope, target, "denied by the user for the rest of this run (" + found->text + ")");
    }
  }
  // Last, what the user allowed beyond this run (an MCP session's answer):
  // this run's own denials above win over it.
  std::optional<std::string> earlier = inquirer_.RememberedAllowRule(policy_.tool_name, operation, target);
  if (!earlier) return std::nullopt;
  Record(scope, target, AuditDecision::kAskedAllow, *earlier);
  return Status();
}

Status AccessGate::PolicyAnswer(RequestScope& scope, std::string_view target, const PolicyDecision& decision) {
  if (decision.decision == Decision::kAllow) {
    Record(scope, target, AuditDecision::kAllow, decision.rule);
    return Status();
  }
  Record(scope, target, AuditDecision::kDeny, decision.rule);
  std::string why = "denied by " + decision.rule;
  if (!decision.hint.empty()) why += "; " + (policy_.ad_hoc ? ExecFlagHint(decision) : decision.hint);
  return Denial(scope, target, why);
}

Status AccessGate::DropRemembered(RequestScope& scope, std::string_view operation, std::vector<const Judged*>& open) {
  std::vector<const Judged*> unanswered;
  std::optional<Status> first_refusal;
  std::vector<const Judged*> refused;
  for (const Judged* judged : open) {
    std::optional<Status> answer = Remembered(scope, operation, judged->target);
    if (!answer) {
      unanswered.push_back(judged);
    } else if (!answer->ok()) {
      if (!first_refusal) first_refusal = std::move(*answer);
      refused.push_back(judged);
    }
  }
  open = std::move(unanswered);
  if (refused.empty()) return OkStatus();
  if (refused.size() == 1) return *first_refusal;
  return Status(StatusCode::kPermissionDenied, std::string(scope.method()) + " of " +
                                                   InquiryTargetsShown(InquiryFor(policy_, operation, refused)) +
                                                   " denied by the user for the rest of this run");
}

Status AccessGate::Ask(RequestScope& scope, std::string_view operation, std::vector<const Judged*> open) {
  TOOLVFS_RETURN_IF_ERROR(DropRemembered(scope, operation, open));
  if (open.empty()) return OkStatus();
  if (!inquirer_.asks_user()) {
    for (const Judged* judged : open) {
      Record(scope, judged->target, AuditDecision::kDeny, "not covered, no interaction");
    }
    return Status(StatusCode::kPermissionDenied,
                  NonInteractiveDenial(InquiryFor(policy_, operation, open), scope.method()));
  }
  if (!scope.may_block()) {
    scope.needs_worker_ = true;
    return Status(StatusCode::kCancelled, "moved to a worker to ask the user");
  }

  std::lock_guard question(question_mutex_);
  // Another question may have settled some of them while we waited.
  TOOLVFS_RETURN_IF_ERROR(DropRemembered(scope, operation, open));
  if (open.empty()) return OkStatus();
  const Inquiry inquiry = InquiryFor(policy_, operation, open);
  if (pending_sender_) {
    pending_sender_(scope.id(),
                    "asking the user to allow " + std::string(operation) + " of " + InquiryTargetsShown(inquiry));
  }
  Result<InquiryReply> reply = inquirer_.AskWithScope(inquiry);
  const InquiryAnswer answer = reply.ok() ? reply->answer : InquiryAnswer::kDenyOnce;
  const bool allowed = answer == InquiryAnswer::kAllowOnce || answer == InquiryAnswer::kAllowForRun;
  const bool for_run = answer == InquiryAnswer::kAllowForRun || answer == InquiryAnswer::kDenyForRun;
  if (for_run) {
    std::lock_guard lock(answers_mutex_);
    for (const Judged* judged : open) run_answers_[{std::string(operation), judged->target}] = allowed;
    if (!reply->pattern.empty()) {
      pattern_answers_.push_back({std::string(operation), PathGlob::Pattern(reply->pattern), reply->pattern, allowed});
    }
  }
  const std::string rule =
      !reply.ok() ? "user (no answer)" : reply->pattern.empty() ? "user" : "user: " + reply->pattern;
  for (const Judged* judged : open) {
    Record(scope, judged->target, allowed ? AuditDecision::kAskedAllow : AuditDecision::kAskedDeny, rule);
  }
  if (allowed) return OkStatus();
  const std::string why = reply.ok() ? "denied by the user" : "was not answered: " + reply.status().message();
  return Status(StatusCode::kPermissionDenied,
                std::string(scope.method()) + " of " + InquiryTargetsShown(inquiry) + " " + why);
}

Status AccessGate::Authorize(RequestScope& scope, std::string_view operation, std::string_view target,
                             const PolicyDecision& decision) {
  if (decision.decision != Decision::kUncovered) return PolicyAnswer(scope, target, decision);
  const Judged judged{std::string(target), decision};
  return Ask(scope, operation, {&judged});
}

Status AccessGate::AuthorizeAll(RequestScope& scope, std::string_view operation, const std::vector<Judged>& targets) {
  std::vector<const Judged*> open;
  open.reserve(targets.size());
  for (const Judged& judged : targets) {
    if (judged.decision.decision != Decision::kUncovered) {
      // What the policy decides is not the user's to overrule.
      TOOLVFS_RETURN_IF_ERROR(PolicyAnswer(scope, judged.target, judged.decision));
      continue;
    }
    open.push_back(&judged);
  }
  return Ask(scope, operation, std::move(open));
}

}  // namespace toolvfs
