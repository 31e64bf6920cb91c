// PLACEHOLDER: replaced by the audit work (issue 4).
#include "policy/audit.h"

namespace toolvfs {
std::string_view AuditDecisionName(AuditDecision decision) {
  switch (decision) {
    case AuditDecision::kAllow: return "allow";
    case AuditDecision::kDeny: return "deny";
    case AuditDecision::kAskedAllow: return "asked-allow";
    case AuditDecision::kAskedDeny: return "asked-deny";
  }
  return "deny";
}
std::string AuditRecord::ToJson() const { return "{}"; }
Result<AuditRecord> ParseAuditRecord(std::string_view) { return Status(StatusCode::kUnsupported, "not built yet"); }
std::unique_ptr<AuditSink> NewCallbackAuditSink(std::function<void(const AuditRecord&)>) { return nullptr; }
std::unique_ptr<AuditSink> NewFanOutAuditSink(std::vector<AuditSink*>) { return nullptr; }
std::string FormatAuditLine(const AuditRecord&) { return ""; }
}  // namespace toolvfs
