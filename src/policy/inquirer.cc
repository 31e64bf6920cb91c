// PLACEHOLDER: replaced by the inquiry work (issue 4).
#include "policy/inquirer.h"

namespace toolvfs {
namespace {
class DenyingInquirer final : public Inquirer {
 public:
  Result<InquiryAnswer> Ask(const Inquiry&) override { return InquiryAnswer::kDenyOnce; }
  bool asks_user() const override { return false; }
};
}  // namespace
std::unique_ptr<Inquirer> NewTerminalInquirer() { return std::make_unique<DenyingInquirer>(); }
bool TerminalAvailable() { return false; }
std::unique_ptr<Inquirer> NewDenyingInquirer() { return std::make_unique<DenyingInquirer>(); }
std::string NonInteractiveDenial(const Inquiry& inquiry, std::string_view method) {
  return std::string(method) + " of '" + inquiry.target + "' was not covered by the policy of tool '" +
         inquiry.tool + "' and was denied (no interaction)";
}
std::string EscapeForTerminal(std::string_view text) { return std::string(text); }
}  // namespace toolvfs
