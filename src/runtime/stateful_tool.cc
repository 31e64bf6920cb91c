#include "runtime/stateful_tool.h"

#include <simdjson.h>

#include <utility>

#include "core/text.h"
#include "protocol/json_writer.h"
#include "runtime/answers.h"
#include "runtime/outcome_json.h"

namespace toolvfs {
namespace {

namespace dom = simdjson::dom;

// The Text question a `waiting` state without one stands for.
ToolQuestion FreeInputQuestion(const std::vector<ContentBlock>& content) {
  std::string text;
  for (const ContentBlock& block : content) text += (text.empty() ? "" : "\n") + block.text;
  if (text.empty()) text = "The tool waits for input";
  rapidjson::StringBuffer buffer;
  JsonWriter writer(buffer);
  writer.StartObject();
  WriteJsonKey(writer, "id");
  WriteJsonString(writer, kFreeInputQuestionId);
  WriteJsonKey(writer, "text");
  WriteJsonString(writer, text);
  WriteJsonKey(writer, "answer_type");
  WriteJsonString(writer, "Text");
  writer.EndObject();
  ToolQuestion question;
  question.id = std::string(kFreeInputQuestionId);
  question.text = std::move(text);
  question.answer_type = AnswerType::kText;
  question.json = JsonText(buffer);
  return question;
}

}  // namespace

StatefulRun::StatefulRun(std::string tool_name, Body body) : tool_name_(std::move(tool_name)) {
  thread_ = std::thread([this, body = std::move(body)] {
    Outcome outcome = body(control_, [this](const std::string& params_json) { OnState(params_json); });
    std::lock_guard lock(mutex_);
    if (failure_) outcome = FailedOutcome(StatusCode::kInternal, *failure_, outcome.stderr_tail);
    state_.kind = ToolState::Kind::kStopped;
    state_.question.reset();
    state_.outcome = std::move(outcome);
    ++state_.version;
    changed_.notify_all();
  });
}

StatefulRun::~StatefulRun() {
  Abort();
}

ToolState StatefulRun::Fetch() const {
  std::lock_guard lock(mutex_);
  return state_;
}

ToolState StatefulRun::WaitForChange(uint64_t version) const {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return state_.version > version; });
  return state_;
}

ToolState StatefulRun::WaitForQuestion(uint64_t& seen) const {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] {
    return state_.version > seen && (state_.kind == ToolState::Kind::kStopped ||
                                     (state_.kind == ToolState::Kind::kWaiting && state_.question));
  });
  seen = state_.version;
  return state_;
}

Status StatefulRun::Apply(const std::string& input_json) {
  {
    std::lock_guard lock(mutex_);
    if (state_.kind == ToolState::Kind::kStopped) {
      return Status(StatusCode::kInvalidArgument,
                    "Tool " + Quote(tool_name_) + " has stopped; it takes no more input");
    }
  }
  WireMessage apply = SerializeNotification("apply", [&](JsonWriter& writer) {
    writer.StartObject();
    WriteJsonKey(writer, "input");
    writer.RawValue(input_json.data(), input_json.size(), rapidjson::kObjectType);
    writer.EndObject();
  });
  control_.Send(apply.ToString());
  return OkStatus();
}

void StatefulRun::Abort() {
  control_.Abort();
  if (thread_.joinable()) thread_.join();
}

Outcome StatefulRun::Wait() {
  if (thread_.joinable()) thread_.join();
  std::lock_guard lock(mutex_);
  return state_.outcome.value_or(Outcome{});
}

// On the session's loop thread.
void StatefulRun::OnState(const std::string& params_json) {
  dom::parser parser;
  dom::element params;
  if (parser.parse(params_json).get(params) != simdjson::SUCCESS) return;
  std::string_view type;
  if (params["type"].get_string().get(type) != simdjson::SUCCESS) return;
  if (type == "stopped") return;  // published with the outcome, once the tool is gone
  ToolState next;
  next.kind = type == "waiting" ? ToolState::Kind::kWaiting : ToolState::Kind::kRunning;
  Result<std::vector<ContentBlock>> content = ParseContent(params);
  if (content.ok()) next.content = std::move(content).value();
  if (next.kind == ToolState::Kind::kWaiting) {
    dom::element question;
    if (params["question"].get(question) == simdjson::SUCCESS && !question.is_null()) {
      Result<ToolQuestion> parsed = ParseQuestion(question);
      if (!parsed.ok()) {
        std::lock_guard lock(mutex_);
        if (!failure_) {
          failure_ = "Tool " + Quote(tool_name_) + " asked an invalid question: " + parsed.status().message();
        }
        control_.Abort();
        return;
      }
      next.question = std::move(parsed).value();
    } else {
      next.question = FreeInputQuestion(next.content);
    }
  }
  Publish(std::move(next));
}

void StatefulRun::Publish(ToolState state) {
  std::lock_guard lock(mutex_);
  if (state_.kind == ToolState::Kind::kStopped) return;
  state.version = state_.version + 1;
  state_ = std::move(state);
  changed_.notify_all();
}

}  // namespace toolvfs
