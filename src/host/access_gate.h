// The one place a tool's request is decided (SPEC.md §3.2–3.4): the policy's
// answer, the inquirer for what the policy does not cover, the answers the
// user gave for the rest of the run, the `pending` notification before a
// question, and what the audit log records.
//
// Handlers call Authorize once per target after checking their params and
// before touching anything; a request is only performed when every
// Authorize returned OK. Whoever answers the request (the session loop, the
// builtin runtime) writes its one audit record from the RequestScope once
// the answer is known (request_audit.h).
//
// Thread safety: Authorize may be called from the loop thread and from
// workers at once. Questions are asked one at a time.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"
#include "policy/audit.h"
#include "policy/decision.h"
#include "policy/inquirer.h"
#include "policy/path_glob.h"
#include "policy/tool_policy.h"
#include "protocol/jsonrpc.h"

namespace toolvfs {

// One request on its way through a handler.
class RequestScope {
 public:
  RequestScope(const RequestId& id, std::string_view method, bool may_block)
      : id_(id), method_(method), may_block_(may_block) {}

  const RequestId& id() const { return id_; }
  std::string_view method() const { return method_; }
  // False on the loop thread: a question must not be asked there.
  bool may_block() const { return may_block_; }

  // Set by Authorize when a question is needed on the loop thread: the loop
  // drops the handler's answer and runs the request again on a worker.
  bool needs_worker() const { return needs_worker_; }

  // The audit view, filled by Authorize (several targets are joined with
  // " -> ", the least permissive decision is kept). The audit record is
  // made from it by AuditRecordForAnswer (request_audit.h).
  bool decided() const { return decision_.has_value(); }
  const std::string& target() const { return target_; }
  // How many targets Authorize decided: fewer than the request names
  // when one was refused before its decision (a rename's `to` outside
  // the project).
  size_t target_count() const { return target_count_; }
  AuditDecision decision() const { return *decision_; }
  const std::string& rule() const { return rule_; }
  // The targets Authorize refused (by the policy, the user or a run-scoped
  // answer), in the order decided: every path of a refused batch, so the
  // audit record can name each one.
  const std::vector<std::string>& refused_targets() const { return refused_targets_; }

  // Set when the tool cancelled this request or the session is ending: a
  // handler that waits (a child process, a download) stops and answers
  // Cancelled. Never set for inline requests.
  bool cancelled() const { return cancel_flag_ != nullptr && cancel_flag_->load(); }
  // `flag` must outlive the handler's run (the session's in-flight entry).
  void set_cancel_flag(const std::atomic<bool>* flag) { cancel_flag_ = flag; }

  // The JSON-RPC error code answered, 0 for a result (set by Handle).
  int error_code() const { return error_code_; }
  void set_error_code(int code) { error_code_ = code; }

 private:
  friend class AccessGate;
  RequestId id_;
  std::string_view method_;
  bool may_block_;
  bool needs_worker_ = false;
  std::string target_;
  size_t target_count_ = 0;
  std::optional<AuditDecision> decision_;
  std::string rule_;
  std::vector<std::string> refused_targets_;
  int error_code_ = 0;
  const std::atomic<bool>* cancel_flag_ = nullptr;
};

class AccessGate {
 public:
  // Sends the tool `pending {request_id, reason}`; set by the session loop.
  using PendingSender = std::function<void(const RequestId& id, std::string_view reason)>;

  // `policy` and `inquirer` must outlive the gate.
  AccessGate(const ToolPolicy& policy, Inquirer& inquirer);

  const ToolPolicy& policy() const { return policy_; }

  // Ends a question in progress and every later one (Inquirer::Cancel):
  // the run is over or cancelled, and a worker blocked on the user must not
  // hold it up.
  void CancelQuestions() { inquirer_.Cancel(); }
  void set_pending_sender(PendingSender sender) { pending_sender_ = std::move(sender); }

  // Decides `operation` ("read", "write", "GET", "POST", "run") on `target`
  // (the exact path, URL or command line) given the policy's `decision`:
  // allow -> OK; deny -> PermissionDenied "<method> of '<target>' denied by
  // <rule>"; uncovered -> a run-scoped answer if the user gave one for this
  // operation and target, or an allow the inquirer remembers from before
  // the run (Inquirer::RememberedAllowRule), else (on a worker) `pending`,
  // then the inquirer; a denial is PermissionDenied with the inquirer's
  // message. On the loop thread an uncovered request that needs a question
  // marks the scope needs_worker() and returns Cancelled (the answer is
  // dropped).
  Status Authorize(RequestScope& scope, std::string_view operation, std::string_view target,
                   const PolicyDecision& decision);

  // One target of AuthorizeAll with the policy's decision on it.
  struct Judged {
    std::string target;
    PolicyDecision decision;
  };
  // Authorize for each of `targets` (one operation on many: the paths a
  // snapshot_restore changes). The policy's own decisions come first and
  // are never put to the user: a denial refuses before any question, an
  // allowed target is recorded and not asked about. Those no run-scoped answer
  // decides are one question: the user answers once for the set, and "for
  // this run" is remembered per target. OK when `targets` is empty or every
  // target is allowed; a refusal names every refused target (the message
  // and RequestScope::refused_targets). With a single target the question
  // is Authorize's own (its wider answers included).
  Status AuthorizeAll(RequestScope& scope, std::string_view operation, const std::vector<Judged>& targets);

 private:
  // The audit view of one decided target (RequestScope's fields).
  static void Record(RequestScope& scope, std::string_view target, AuditDecision outcome, std::string_view rule);
  // The policy's own answer on a target it allows or denies.
  Status PolicyAnswer(RequestScope& scope, std::string_view target, const PolicyDecision& decision);
  // The run-scoped answer on `target`, else an allow the inquirer
  // remembers from before the run, recorded; nullopt if none.
  std::optional<Status> Remembered(RequestScope& scope, std::string_view operation, std::string_view target);
  // Keeps in `open` the targets no remembered answer decides; a refusal
  // when one or more of them has a denying one (naming each).
  Status DropRemembered(RequestScope& scope, std::string_view operation, std::vector<const Judged*>& open);
  // The one asking path of Authorize and AuthorizeAll for targets the
  // policy leaves open: run-scoped answers, the refusal without
  // interaction, the move to a worker, `pending`, one question for all
  // that are left, and the answer remembered for the run.
  Status Ask(RequestScope& scope, std::string_view operation, std::vector<const Judged*> open);

  const ToolPolicy& policy_;
  Inquirer& inquirer_;
  PendingSender pending_sender_;
  std::mutex question_mutex_;  // one question at a time
  std::mutex answers_mutex_;
  // (operation, target) -> allowed for the rest of the run?
  std::map<std::pair<std::string, std::string>, bool> run_answers_;
  // Wider answers for the rest of the run (a directory, a pattern, a saved
  // rule): a denying one wins over an allowing one that also matches.
  struct PatternAnswer {
    std::string operation;
    PathGlob pattern;
    std::string text;  // as the user gave it, for the audit rule
    bool allowed;
  };
  std::vector<PatternAnswer> pattern_answers_;
};

}  // namespace toolvfs
