#include "mcp/mcp_approvals.h"

#include <simdjson.h>

#include <utility>

#include "protocol/json_writer.h"

namespace toolvfs {
namespace {

constexpr std::string_view kAllowOnce = "allow_once";
constexpr std::string_view kAllowSession = "allow_session";
constexpr std::string_view kDeny = "deny";

class ElicitationInquirer final : public Inquirer {
 public:
  ElicitationInquirer(McpCall& call, McpSessionApprovals& approvals, std::string protocol_version)
      : call_(call), approvals_(approvals), protocol_version_(std::move(protocol_version)) {}

  // The gate has asked RememberedAllowRule about each target first: what
  // is asked here is what the session has not allowed yet.
  Result<InquiryAnswer> Ask(const Inquiry& inquiry) override {
    if (questions_cancelled_.cancelled()) return Status(StatusCode::kCancelled, "the run is being cancelled");
    Result<std::string> result = call_.RequestClient(
        "elicitation/create", ElicitationParamsJson(inquiry, protocol_version_), &questions_cancelled_);
    if (!result.ok()) return result.status();
    Result<InquiryAnswer> answer = ParseElicitationAnswer(*result);
    if (answer.ok() && *answer == InquiryAnswer::kAllowForRun) approvals_.Allow(inquiry);
    return answer;
  }

  // The gate of a call knows nothing of earlier calls: the session's
  // approvals reach it here.
  std::optional<std::string> RememberedAllowRule(std::string_view tool, std::string_view operation,
                                                 std::string_view target) const override {
    if (!approvals_.Allowed(tool, operation, target)) return std::nullopt;
    return std::string(kSessionApprovalRule);
  }

  bool asks_user() const override { return call_.ClientHas("elicitation"); }
  // RequestClient ends a question when the call's token fires, and the
  // runtime is given that token (cli/mcp_command.cc): no watcher thread
  // per call is needed.
  bool ends_questions_on_cancel() const override { return true; }

  void Cancel() override { questions_cancelled_.Cancel(); }

 private:
  McpCall& call_;
  McpSessionApprovals& approvals_;
  std::string protocol_version_;
  CancelToken questions_cancelled_;
};

}  // namespace

bool McpSessionApprovals::Allowed(std::string_view tool, std::string_view operation, std::string_view target) const {
  std::lock_guard lock(mutex_);
  return allowed_.contains(std::make_tuple(tool, operation, target));
}

void McpSessionApprovals::Allow(const Inquiry& inquiry) {
  std::lock_guard lock(mutex_);
  allowed_.emplace(inquiry.tool, inquiry.operation, inquiry.target);
  for (const std::string& target : inquiry.targets) allowed_.emplace(inquiry.tool, inquiry.operation, target);
}

void McpSessionApprovals::ForgetTools(const std::function<bool(std::string_view tool)>& changed) {
  std::lock_guard lock(mutex_);
  std::erase_if(allowed_, [&](const auto& approval) { return changed(std::get<0>(approval)); });
}

std::unique_ptr<Inquirer> NewElicitationInquirer(McpCall& call, McpSessionApprovals& approvals,
                                                 std::string protocol_version) {
  return std::make_unique<ElicitationInquirer>(call, approvals, std::move(protocol_version));
}

std::string ElicitationParamsJson(const Inquiry& inquiry, std::string_view protocol_version) {
  const bool titled_with_one_of = protocol_version >= "2025-11-25";
  std::string message = "Tool '" + EscapeForTerminal(inquiry.tool) + "' asks to " +
                        EscapeForTerminal(inquiry.operation) + " " + InquiryTargetsShown(inquiry) +
                        ", which its policy does not cover. Allow it?";
  if (!inquiry.hint.empty()) {
    message += " (To allow it for good: " + EscapeForTerminal(QualifyPolicyHint(inquiry.tool, inquiry.hint)) + ".)";
  }
  rapidjson::StringBuffer buffer;
  JsonWriter writer(buffer);
  writer.StartObject();
  if (titled_with_one_of) {
    WriteJsonKey(writer, "mode");
    writer.String("form");
  }
  WriteJsonKey(writer, "message");
  writer.String(message);
  WriteJsonKey(writer, "requestedSchema");
  writer.StartObject();
  WriteJsonKey(writer, "type");
  writer.String("object");
  WriteJsonKey(writer, "properties");
  writer.StartObject();
  WriteJsonKey(writer, "decision");
  writer.StartObject();
  WriteJsonKey(writer, "type");
  writer.String("string");
  WriteJsonKey(writer, "title");
  writer.String("Decision");
  WriteJsonKey(writer, "description");
  writer.String("Allow this request once, allow it for the rest of this MCP session, or deny it");
  const std::pair<std::string_view, std::string_view> choices[] = {
      {kAllowOnce, "Allow once"}, {kAllowSession, "Allow for this session"}, {kDeny, "Deny"}};
  if (titled_with_one_of) {
    WriteJsonKey(writer, "oneOf");
    writer.StartArray();
    for (const auto& [value, title] : choices) {
      writer.StartObject();
      WriteJsonKey(writer, "const");
      writer.String(value);
      WriteJsonKey(writer, "title");
      writer.String(title);
      writer.EndObject();
    }
    writer.EndArray();
  } else {
    WriteJsonKey(writer, "enum");
    writer.StartArray();
    for (const auto& choice : choices) writer.String(choice.first);
    writer.EndArray();
    WriteJsonKey(writer, "enumNames");
    writer.StartArray();
    for (const auto& choice : choices) writer.String(choice.second);
    writer.EndArray();
  }
  WriteJsonKey(writer, "default");
  writer.String(kDeny);
  writer.EndObject();
  writer.EndObject();
  WriteJsonKey(writer, "required");
  writer.StartArray();
  writer.String("decision");
  writer.EndArray();
  writer.EndObject();
  writer.EndObject();
  return JsonText(buffer);
}

Result<InquiryAnswer> ParseElicitationAnswer(std::string_view result_json) {
  simdjson::dom::parser parser;
  simdjson::dom::element result;
  std::string_view action;
  if (parser.parse(simdjson::padded_string(result_json)).get(result) != simdjson::SUCCESS ||
      result["action"].get_string().get(action) != simdjson::SUCCESS) {
    return Status(StatusCode::kInvalidArgument, "the client's elicitation result has no 'action': " +
                                                    std::string(result_json.substr(0, 200)));
  }
  if (action == "decline" || action == "cancel") return InquiryAnswer::kDenyOnce;
  if (action != "accept") {
    return Status(StatusCode::kInvalidArgument,
                  "the client's elicitation result has an unknown action '" + std::string(action) + "'");
  }
  std::string_view decision;
  if (result["content"]["decision"].get_string().get(decision) != simdjson::SUCCESS) {
    return Status(StatusCode::kInvalidArgument, "the client accepted the approval form without a 'decision'");
  }
  if (decision == kAllowOnce) return InquiryAnswer::kAllowOnce;
  if (decision == kAllowSession) return InquiryAnswer::kAllowForRun;
  if (decision == kDeny) return InquiryAnswer::kDenyOnce;
  return Status(StatusCode::kInvalidArgument, "the client's approval decision '" + std::string(decision) +
                                                  "' is none of allow_once, allow_session, deny");
}

}  // namespace toolvfs
