// Approvals through the MCP client (issue 21 item 3, docs/mcp.md
// "Approvals"): a request the policy does not cover is put to the user
// with `elicitation/create`, a form with one choice (allow once, allow for
// this session, deny), when the client declared the `elicitation`
// capability; without it the inquirer does not ask, so the host denies at
// once with its usual "how to allow it" message (NonInteractiveDenial).
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <tuple>

#include "mcp/mcp_server.h"
#include "policy/inquirer.h"

namespace toolvfs {

// The audit rule of a request allowed by an earlier "allow for this
// session" answer, without a question (docs/policy.md, "Audit log").
inline constexpr std::string_view kSessionApprovalRule = "user, for this MCP session";

// What the user allowed "for this session": kept for the MCP session (the
// server's life over stdio), shared by every call. Thread-safe.
class McpSessionApprovals {
 public:
  // Whether `tool`'s `operation` on this exact `target` was allowed for
  // the session.
  bool Allowed(std::string_view tool, std::string_view operation, std::string_view target) const;
  // Allows the inquiry's operation on its target (on each of its targets,
  // for a question about several) for the rest of the session.
  void Allow(const Inquiry& inquiry);
  // Forgets what was allowed to the tools `changed` names (a reload that
  // gave a tool another program or policy: the user allowed the old one).
  void ForgetTools(const std::function<bool(std::string_view tool)>& changed);

 private:
  mutable std::mutex mutex_;
  // (tool, operation, target); std::less<> finds string_views without a copy.
  std::set<std::tuple<std::string, std::string, std::string>, std::less<>> allowed_;
};

// The inquirer of one call: asks through `call` (which must outlive it),
// remembers "allow for this session" in `approvals` (idem) and tells the
// call's gate of those (RememberedAllowRule, kSessionApprovalRule), so the
// gate asks only about the targets the session has not allowed, and the
// audit tells the two apart. A declined or cancelled form, an answer
// that is not one of the choices, a client error and a timeout are
// denials (the last three as a failed Ask, which the host turns into a
// denial saying why). Its questions end when `call.cancel()` fires, so it
// says ends_questions_on_cancel: run the tool with that token.
std::unique_ptr<Inquirer> NewElicitationInquirer(McpCall& call, McpSessionApprovals& approvals,
                                                 std::string protocol_version);

// The params of the elicitation/create request for `inquiry`, compact JSON:
// form mode (named for 2025-11-25; earlier revisions have only forms), a
// message naming tool, operation and target (escaped for display), and a
// schema with one required string `decision`: "allow_once",
// "allow_session" or "deny", titled with oneOf (2025-11-25) or enumNames
// (earlier revisions).
std::string ElicitationParamsJson(const Inquiry& inquiry, std::string_view protocol_version);

// The answer in an elicitation/create result (`{"action", "content"}`):
// accept with decision allow_once or allow_session allows; decline,
// cancel and deny are kDenyOnce. InvalidArgument for a result that is not
// one of these.
Result<InquiryAnswer> ParseElicitationAnswer(std::string_view result_json);

}  // namespace toolvfs
