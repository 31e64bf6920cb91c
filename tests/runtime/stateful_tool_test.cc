// Stateful vfs tools through the library handle (StatefulRun from
// VfsRuntime::Start) and through Execute for callers that make single calls,
// with the scripted survey tool of tests/sdk/tools/stateful_survey.py; and
// the answering chain's parts (typing, the terminal asker on a pty).
#include "runtime/stateful_tool.h"

#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <termios.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cli/pseudo_terminal.h"
#include "core/io.h"
#include "project/fs_store.h"
#include "project/test_util.h"
#include "runtime/answers.h"
#include "runtime/outcome_text.h"
#include "runtime/vfs_runtime.h"

namespace toolvfs {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

std::string SurveyScript() {
  const char* source = std::getenv("TOOLVFS_SOURCE_DIR");
  return std::string(source != nullptr ? source : TOOLVFS_BUILT_SOURCE_DIR) + "/tests/sdk/tools/stateful_survey.py";
}


// Running, not a zombie (a killed grandchild waits for init to reap it);
// SIGKILL is asynchronous, so the kernel gets up to 2 s.
bool ProcessAlive(pid_t pid) {
  auto running = [pid] {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string fields;
    if (!std::getline(stat, fields)) return false;
    size_t close = fields.rfind(')');
    return close != std::string::npos && close + 2 < fields.size() && fields[close + 2] != 'Z';
  };
  for (int i = 0; i < 200 && running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return running();
}

class StatefulToolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<std::unique_ptr<ProjectFiles>> store = OpenFsStore(dir_.path());
    ASSERT_TRUE(store.ok()) << store.status().message();
    store_ = std::move(store).value();
    tool_.name = "survey";
    tool_.runtime = RuntimeKind::kVfs;
    tool_.stateful = true;
    tool_.command = CommandSpec{.program = TOOLVFS_TEST_PYTHON3, .args = {SurveyScript()}};
    tool_.has_sandbox_table = true;
    tool_.sandbox.filesystem_allow = {""};
    tool_.sandbox.filesystem_writable.prefixes = {"survey"};
    tool_.sandbox.limits.cancel_grace_s = 1;
  }

  VfsRuntime Runtime() {
    return VfsRuntime(*store_, VfsRuntimeOptions{.working_directory = dir_.path(), .confinement = {.sandbox = sandbox_}});
  }

  TempDir dir_;
  std::unique_ptr<ProjectFiles> store_;
  ToolConfig tool_;
  std::optional<SandboxMode> sandbox_ = SandboxMode::kRequire;
  CancelToken cancel_;
};

TEST_F(StatefulToolTest, FetchApplyUntilStopped) {
  VfsRuntime runtime = Runtime();
  Result<std::unique_ptr<StatefulRun>> started = runtime.Start(ToolCall{.name = "survey"}, tool_, cancel_);
  ASSERT_TRUE(started.ok()) << started.status().message();
  StatefulRun& run = **started;
  uint64_t seen = 0;

  ToolState first = run.WaitForQuestion(seen);
  ASSERT_EQ(first.kind, ToolState::Kind::kWaiting) << (first.outcome ? OutcomeText(*first.outcome) : "");
  ASSERT_TRUE(first.question);
  EXPECT_EQ(first.question->id, "proceed");
  EXPECT_EQ(first.question->answer_type, AnswerType::kBoolean);
  ASSERT_EQ(first.content.size(), 1u);
  EXPECT_EQ(first.content[0].text, "first question");
  // Fetch sees the same state; the tool waits (no idle timeout) meanwhile.
  EXPECT_EQ(run.Fetch().version, first.version);
  ASSERT_TRUE(run.Apply("true").ok());

  ToolState second = run.WaitForQuestion(seen);
  ASSERT_EQ(second.kind, ToolState::Kind::kWaiting);
  ASSERT_TRUE(second.question);
  EXPECT_EQ(second.question->id, "color");
  EXPECT_EQ(second.question->answer_type, AnswerType::kSelect);
  EXPECT_THAT(second.question->options, ::testing::ElementsAre("red", "green", "blue"));
  // Between the questions the tool wrote through the host.
  EXPECT_EQ(ReadRealFile(dir_.Join("survey/progress.txt")), "proceed=true\n");
  ASSERT_TRUE(run.Apply("\"green\"").ok());

  ToolState stopped = run.WaitForQuestion(seen);
  ASSERT_EQ(stopped.kind, ToolState::Kind::kStopped);
  ASSERT_TRUE(stopped.outcome);
  EXPECT_EQ(OutcomeText(*stopped.outcome), "proceed=true color=green");
  EXPECT_EQ(run.Wait().kind, Outcome::Kind::kCompleted);
  EXPECT_FALSE(run.Apply("1").ok());  // nobody listens any more
}

// A raw NDJSON stateful tool (no SDK) that sends one `waiting` state:
// "free" without a question, then stops with what `apply` brought;
// "malformed" with a question of an answer type that does not exist.
constexpr std::string_view kRawStatefulTool = R"PY(
import json, sys
sys.stdin.readline()  # init
def state(params):
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "method": "state", "params": params}) + "\n")
    sys.stdout.flush()
if sys.argv[1] == "free":
    state({"type": "waiting", "content": "Your name?"})
    applied = json.loads(sys.stdin.readline())
    state({"type": "stopped", "result": "hello " + applied["params"]["input"]})
else:
    state({"type": "waiting", "question": {"id": "q", "text": "?", "answer_type": "Colour"}})
    sys.stdin.readline()
)PY";

class RawStatefulToolTest : public StatefulToolTest {
 protected:
  void UseRawTool(const std::string& mode) {
    WriteRealFile(scripts_.Join("raw_stateful.py"), std::string(kRawStatefulTool));
    tool_.name = "raw";
    tool_.command = CommandSpec{.program = TOOLVFS_TEST_PYTHON3, .args = {scripts_.Join("raw_stateful.py"), mode}};
  }
  TempDir scripts_;  // outside the project: named on the command line, so readable
};

TEST_F(RawStatefulToolTest, AWaitingStateWithoutAQuestionAsksForFreeText) {
  UseRawTool("free");
  VfsRuntime runtime = Runtime();
  Result<std::unique_ptr<StatefulRun>> started = runtime.Start(ToolCall{.name = "raw"}, tool_, cancel_);
  ASSERT_TRUE(started.ok()) << started.status().message();
  StatefulRun& run = **started;
  uint64_t seen = 0;
  ToolState waiting = run.WaitForQuestion(seen);
  ASSERT_EQ(waiting.kind, ToolState::Kind::kWaiting) << (waiting.outcome ? OutcomeText(*waiting.outcome) : "");
  ASSERT_TRUE(waiting.question);
  EXPECT_EQ(waiting.question->id, "input");
  EXPECT_EQ(waiting.question->answer_type, AnswerType::kText);
  EXPECT_EQ(waiting.question->text, "Your name?");
  ASSERT_TRUE(run.Apply("\"Ada\"").ok());
  ToolState stopped = run.WaitForQuestion(seen);
  ASSERT_EQ(stopped.kind, ToolState::Kind::kStopped);
  ASSERT_TRUE(stopped.outcome);
  EXPECT_EQ(OutcomeText(*stopped.outcome), "hello Ada");
}

TEST_F(RawStatefulToolTest, AMalformedQuestionFailsTheRunAndStopsTheTool) {
  UseRawTool("malformed");
  VfsRuntime runtime = Runtime();
  Result<std::unique_ptr<StatefulRun>> started = runtime.Start(ToolCall{.name = "raw"}, tool_, cancel_);
  ASSERT_TRUE(started.ok()) << started.status().message();
  uint64_t seen = 0;
  ToolState stopped = (*started)->WaitForQuestion(seen);
  ASSERT_EQ(stopped.kind, ToolState::Kind::kStopped);
  ASSERT_TRUE(stopped.outcome);
  EXPECT_TRUE(stopped.outcome->is_error);
  EXPECT_THAT(OutcomeText(*stopped.outcome), HasSubstr("Tool 'raw' asked an invalid question: "));
  EXPECT_THAT(OutcomeText(*stopped.outcome), HasSubstr("Colour"));
}

// WaitForChange shows every change a caller may want to show (progress
// included), and blocks while the tool waits for its answer.
TEST_F(StatefulToolTest, WaitForChangeReturnsEachNewerStateAndBlocksWhileWaiting) {
  VfsRuntime runtime = Runtime();
  Result<std::unique_ptr<StatefulRun>> started = runtime.Start(ToolCall{.name = "survey"}, tool_, cancel_);
  ASSERT_TRUE(started.ok()) << started.status().message();
  StatefulRun& run = **started;
  ToolState state = run.WaitForChange(0);
  while (state.kind == ToolState::Kind::kRunning) {
    const uint64_t before = state.version;
    state = run.WaitForChange(before);
    ASSERT_GT(state.version, before);
  }
  ASSERT_EQ(state.kind, ToolState::Kind::kWaiting);
  ASSERT_TRUE(state.question);
  std::atomic<bool> returned = false;
  ToolState next;
  std::thread waiter([&] {
    next = run.WaitForChange(state.version);
    returned = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_FALSE(returned) << "WaitForChange returned while the tool waited";
  ASSERT_TRUE(run.Apply("true").ok());
  waiter.join();
  EXPECT_GT(next.version, state.version);
  EXPECT_NE(next.kind, ToolState::Kind::kStopped);  // progress or the next question, not the end
  run.Abort();
}

TEST_F(StatefulToolTest, WaitingForTheCallerIsNotIdleness) {
  tool_.sandbox.limits.idle_timeout_s = 1;
  VfsRuntime runtime = Runtime();
  Result<std::unique_ptr<StatefulRun>> started = runtime.Start(ToolCall{.name = "survey"}, tool_, cancel_);
  ASSERT_TRUE(started.ok()) << started.status().message();
  uint64_t seen = 0;
  ASSERT_EQ((*started)->WaitForQuestion(seen).kind, ToolState::Kind::kWaiting);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // past the idle timeout
  ASSERT_EQ((*started)->Fetch().kind, ToolState::Kind::kWaiting);
  ASSERT_TRUE((*started)->Apply("true").ok());
  ASSERT_EQ((*started)->WaitForQuestion(seen).kind, ToolState::Kind::kWaiting);
  ASSERT_TRUE((*started)->Apply("\"red\"").ok());
  EXPECT_EQ(OutcomeText((*started)->Wait()), "proceed=true color=red");
}

TEST_F(StatefulToolTest, AnswerOfTheWrongTypeIsTheToolsError) {
  VfsRuntime runtime = Runtime();
  Result<std::unique_ptr<StatefulRun>> started = runtime.Start(ToolCall{.name = "survey"}, tool_, cancel_);
  ASSERT_TRUE(started.ok()) << started.status().message();
  uint64_t seen = 0;
  ASSERT_EQ((*started)->WaitForQuestion(seen).kind, ToolState::Kind::kWaiting);
  ASSERT_TRUE((*started)->Apply("\"yes\"").ok());  // untyped: the tool wants a boolean
  Outcome outcome = (*started)->Wait();
  EXPECT_EQ(OutcomeText(outcome), "ERROR: proceed must be a JSON boolean, got \"yes\"");
}

TEST_F(StatefulToolTest, AbortLeavesNoProcessBehind) {
  sandbox_ = std::nullopt;  // the tool forks a sleeping child, which the sandbox forbids
  VfsRuntime runtime = Runtime();
  Result<std::unique_ptr<StatefulRun>> started =
      runtime.Start(ToolCall{.name = "survey", .arguments_json = R"({"fork":true})"}, tool_, cancel_);
  ASSERT_TRUE(started.ok()) << started.status().message();
  uint64_t seen = 0;
  ASSERT_EQ((*started)->WaitForQuestion(seen).kind, ToolState::Kind::kWaiting);
  std::istringstream pids(ReadRealFile(dir_.Join("survey/pids.txt")));
  pid_t tool_pid = 0, child_pid = 0;
  pids >> tool_pid >> child_pid;
  ASSERT_GT(tool_pid, 0);
  ASSERT_GT(child_pid, 0);
  ASSERT_TRUE(ProcessAlive(child_pid));

  auto begun = std::chrono::steady_clock::now();
  (*started)->Abort();
  // The SDK answers `cancel` at once, so the grace is not waited out.
  EXPECT_LT(std::chrono::steady_clock::now() - begun, std::chrono::seconds(5));
  ToolState state = (*started)->Fetch();
  ASSERT_EQ(state.kind, ToolState::Kind::kStopped);
  ASSERT_TRUE(state.outcome);
  EXPECT_EQ(state.outcome->kind, Outcome::Kind::kCancelled);
  EXPECT_FALSE(ProcessAlive(tool_pid));
  EXPECT_FALSE(ProcessAlive(child_pid));
  (*started)->Abort();  // harmless once stopped
}

TEST_F(StatefulToolTest, DestroyingALiveHandleAbortsTheTool) {
  VfsRuntime runtime = Runtime();
  {
    Result<std::unique_ptr<StatefulRun>> started = runtime.Start(ToolCall{.name = "survey"}, tool_, cancel_);
    ASSERT_TRUE(started.ok()) << started.status().message();
    uint64_t seen = 0;
    ASSERT_EQ((*started)->WaitForQuestion(seen).kind, ToolState::Kind::kWaiting);
  }
  SUCCEED();  // the destructor returned: the session ended and was joined
}

TEST_F(StatefulToolTest, ExecuteAnswersFromTheCallOrReturnsTheQuestion) {
  VfsRuntime runtime = Runtime();
  // No answers: the first question comes back as needs_input.
  Result<Outcome> asked = runtime.Execute(ToolCall{.name = "survey"}, tool_, cancel_);
  ASSERT_TRUE(asked.ok()) << asked.status().message();
  ASSERT_EQ(asked->kind, Outcome::Kind::kNeedsInput) << OutcomeText(*asked);
  EXPECT_EQ(asked->question->id, "proceed");
  // One answer: the second question.
  asked = runtime.Execute(ToolCall{.name = "survey", .answers_json = R"({"proceed":false})"}, tool_, cancel_);
  ASSERT_TRUE(asked.ok()) << asked.status().message();
  ASSERT_EQ(asked->kind, Outcome::Kind::kNeedsInput) << OutcomeText(*asked);
  EXPECT_EQ(asked->question->id, "color");
  // Both: the tool finishes in one run.
  Result<Outcome> done = runtime.Execute(
      ToolCall{.name = "survey", .answers_json = R"({"color":"blue","proceed":false})"}, tool_, cancel_);
  ASSERT_TRUE(done.ok()) << done.status().message();
  EXPECT_EQ(OutcomeText(*done), "proceed=false color=blue");
  // Answers are typed by the question like every other source: "yes" for
  // a Boolean is applied as true; one that fits no type is an error.
  Result<Outcome> typed = runtime.Execute(
      ToolCall{.name = "survey", .answers_json = R"({"color":"blue","proceed":"yes"})"}, tool_, cancel_);
  ASSERT_TRUE(typed.ok()) << typed.status().message();
  EXPECT_EQ(OutcomeText(*typed), "proceed=true color=blue");
  Result<Outcome> wrong =
      runtime.Execute(ToolCall{.name = "survey", .answers_json = R"({"proceed":"maybe"})"}, tool_, cancel_);
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(wrong.status().message(), HasSubstr("'maybe'"));
  // Answers that are not one JSON object are refused before the tool
  // starts, by every way into the vfs runtime: they would go into `init`.
  ToolConfig single_call = tool_;
  single_call.stateful = false;
  for (const char* malformed : {"[1]", "{\"proceed\":", "null"}) {
    const ToolCall call{.name = "survey", .answers_json = malformed};
    Result<Outcome> refused = runtime.Execute(call, tool_, cancel_);
    Result<Outcome> refused_single = runtime.Execute(call, single_call, cancel_);
    Result<std::unique_ptr<StatefulRun>> not_started = runtime.Start(call, tool_, cancel_);
    for (const Status& status : {refused.status(), refused_single.status(), not_started.status()}) {
      EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << malformed;
      EXPECT_THAT(status.message(), ::testing::StartsWith("Tool 'survey': the answers are ")) << malformed;
    }
  }
}

TEST_F(StatefulToolTest, CancelWhileWaitingEndsTheRun) {
  VfsRuntime runtime = Runtime();
  Result<std::unique_ptr<StatefulRun>> started = runtime.Start(ToolCall{.name = "survey"}, tool_, cancel_);
  ASSERT_TRUE(started.ok()) << started.status().message();
  uint64_t seen = 0;
  ASSERT_EQ((*started)->WaitForQuestion(seen).kind, ToolState::Kind::kWaiting);
  cancel_.Cancel();
  EXPECT_EQ((*started)->Wait().kind, Outcome::Kind::kCancelled);
}

// --- Typing answers ------------------------------------------------------------

ToolQuestion Question(std::string_view json) {
  Result<ToolQuestion> question = ParseQuestionJson(json);
  EXPECT_TRUE(question.ok()) << question.status().message();
  return question.ok() ? std::move(question).value() : ToolQuestion{};
}

TEST(AnswerTypingTest, BooleanTextAndSelect) {
  ToolQuestion boolean = Question(R"({"id":"go","text":"Go?","answer_type":"Boolean"})");
  for (const char* yes : {"true", "yes", "YES", "True"}) EXPECT_EQ(TypeAnswer(boolean, yes)->ToJson(), "true") << yes;
  for (const char* no : {"false", "no", "No"}) EXPECT_EQ(TypeAnswer(boolean, no)->ToJson(), "false") << no;
  Result<ConfigValue> maybe = TypeAnswer(boolean, "maybe", "--answer");
  ASSERT_FALSE(maybe.ok());
  EXPECT_EQ(maybe.status().message(),
            "the answer 'maybe' to question 'go' (--answer) is not a Boolean: use true, false, yes or no");

  ToolQuestion text = Question(R"({"id":"name","text":"Name?","answer_type":"Text"})");
  EXPECT_EQ(TypeAnswer(text, "yes")->ToJson(), "\"yes\"");

  for (const char* json : {R"({"id":"c","text":"C?","answer_type":{"Select":{"options":["red","green"]}}})",
                           R"({"id":"c","text":"C?","answer_type":"Select","options":["red","green"]})"}) {
    ToolQuestion select = Question(json);
    EXPECT_EQ(TypeAnswer(select, "green")->ToJson(), "\"green\"");
    Result<ConfigValue> blue = TypeAnswer(select, "blue");
    ASSERT_FALSE(blue.ok());
    EXPECT_EQ(blue.status().message(), "the answer 'blue' to question 'c' is not one of its options: 'red', 'green'");
  }
}

TEST(AnswerTypingTest, ConfigAnswersAreCheckedTheSameWay) {
  ToolQuestion boolean = Question(R"({"id":"go","text":"Go?","answer_type":"Boolean"})");
  ToolQuestion select = Question(R"({"id":"c","text":"C?","answer_type":{"Select":{"options":["red"]}}})");
  EXPECT_EQ(TypeConfigAnswer(boolean, ConfigValue(true))->ToJson(), "true");
  EXPECT_EQ(TypeConfigAnswer(boolean, ConfigValue("no"))->ToJson(), "false");
  EXPECT_THAT(TypeConfigAnswer(select, ConfigValue(true)).status().message(),
              HasSubstr("is a boolean, but the question is Select"));
  EXPECT_FALSE(TypeConfigAnswer(select, ConfigValue("blue")).ok());
}

TEST(AnswerTypingTest, MalformedQuestionsAreRefused) {
  for (const char* json : {R"({"text":"x","answer_type":"Text"})", R"({"id":"q","answer_type":"Text"})",
                           R"({"id":"q","text":"x","answer_type":"Number"})",
                           R"({"id":"q","text":"x","answer_type":{"Select":{"options":[]}}})",
                           R"({"id":"q","text":"x","answer_type":{"Select":{"options":[1]}}})",
                           R"({"id":"q","text":"x","answer_type":"Select"})"}) {
    EXPECT_FALSE(ParseQuestionJson(json).ok()) << json;
  }
}

TEST(AnswerTypingTest, FindAnswerTakesFlagsThenConfigThenNobody) {
  ToolQuestion boolean = Question(R"({"id":"go","text":"Go?","answer_type":"Boolean"})");
  std::map<std::string, ConfigValue> configured{{"go", ConfigValue(false)}};
  CancelToken cancel;
  AnswerSources sources{.given = {{"go", "yes"}}, .configured = &configured};
  Result<std::optional<FoundAnswer>> found = FindAnswer(boolean, "t", sources, cancel);
  ASSERT_TRUE(found.ok() && found->has_value());
  EXPECT_EQ((*found)->source, AnswerSource::kGiven);
  EXPECT_EQ((*found)->value.ToJson(), "true");
  sources.given.clear();
  found = FindAnswer(boolean, "t", sources, cancel);
  ASSERT_TRUE(found.ok() && found->has_value());
  EXPECT_EQ((*found)->source, AnswerSource::kConfigured);
  EXPECT_EQ((*found)->value.ToJson(), "false");
  sources.configured = nullptr;
  found = FindAnswer(boolean, "t", sources, cancel);
  ASSERT_TRUE(found.ok());
  EXPECT_FALSE(found->has_value());
}

TEST(AnswerTypingTest, AddAnswerKeepsTheOthers) {
  EXPECT_EQ(*AddAnswer("{}", "go", ConfigValue(true)), R"({"go":true})");
  EXPECT_EQ(*AddAnswer(R"({"a":"x"})", "b", ConfigValue("y")), R"({"a":"x","b":"y"})");
}

// --- The terminal asker on a pseudo-terminal (cli/pseudo_terminal.h) --------

TEST(TerminalQuestionAskerTest, SelectByNumberAfterAWrongAnswerWithControlsEscaped) {
  PseudoTerminal terminal;
  ASSERT_TRUE(terminal.ok()) << "openpty failed";
  std::unique_ptr<QuestionAsker> asker = NewTerminalQuestionAsker(terminal.DupSlave(), terminal.DupSlave());
  ToolQuestion select =
      Question(R"({"id":"c","text":"Pick\u001b[2J one","answer_type":{"Select":{"options":["red","gr\u001béen"]}}})");
  CancelToken cancel;
  std::optional<Result<std::string>> answer;
  std::thread asking([&] { answer = asker->Ask(select, "paint", cancel); });
  std::string prompt = terminal.ReadUntil("choose 1-2: ");
  EXPECT_THAT(prompt, HasSubstr("tool 'paint' asks (c): Pick\\x1b[2J one"));
  EXPECT_THAT(prompt, HasSubstr("2) gr\\x1b\xc3\xa9" "en"));
  EXPECT_EQ(prompt.find('\x1b'), std::string::npos);
  terminal.Type("7\n");
  terminal.ReadUntil("from 1 to 2: ");
  terminal.Type("2\n");
  asking.join();
  ASSERT_TRUE(answer && answer->ok()) << (answer ? answer->status().message() : "");
  EXPECT_EQ(**answer, "gr\x1b\xc3\xa9" "en");
}

TEST(TerminalQuestionAskerTest, BooleanYesNoAndCancel) {
  PseudoTerminal terminal;
  ASSERT_TRUE(terminal.ok()) << "openpty failed";
  std::unique_ptr<QuestionAsker> asker = NewTerminalQuestionAsker(terminal.DupSlave(), terminal.DupSlave());
  ToolQuestion boolean = Question(R"({"id":"go","text":"Go?","answer_type":"Boolean"})");
  CancelToken cancel;
  std::optional<Result<std::string>> answer;
  std::thread asking([&] { answer = asker->Ask(boolean, "t", cancel); });
  terminal.ReadUntil("[y/n] ");
  terminal.Type("N\n");
  asking.join();
  ASSERT_TRUE(answer && answer->ok());
  EXPECT_EQ(**answer, "false");

  std::thread waiting([&] { answer = asker->Ask(boolean, "t", cancel); });
  terminal.ReadUntil("[y/n] ");
  cancel.Cancel();  // Ctrl+C while the question is on the screen
  waiting.join();
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->status().code(), StatusCode::kCancelled);
}

TEST(TerminalQuestionAskerTest, AnEmptyLineTakesTheDefaultWhereThereIsOne) {
  PseudoTerminal terminal;
  ASSERT_TRUE(terminal.ok()) << "openpty failed";
  std::unique_ptr<QuestionAsker> asker = NewTerminalQuestionAsker(terminal.DupSlave(), terminal.DupSlave());
  CancelToken cancel;
  std::optional<Result<std::string>> answer;
  auto ask = [&](const ToolQuestion& question, std::string_view prompt_end, std::string_view typed) {
    std::thread asking([&] { answer = asker->Ask(question, "t", cancel); });
    std::string prompt = terminal.ReadUntil(prompt_end);
    terminal.Type(typed);
    asking.join();
    return prompt;
  };

  ToolQuestion select = Question(
      R"({"id":"c","text":"Colour?","answer_type":{"Select":{"options":["red","green"]}},"default":"green"})");
  EXPECT_THAT(ask(select, "[default: green]: ", "\n"), HasSubstr("choose 1-2 [default: green]: "));
  ASSERT_TRUE(answer && answer->ok()) << (answer ? answer->status().message() : "");
  EXPECT_EQ(**answer, "green");

  ToolQuestion text = Question(R"({"id":"n","text":"Name?","answer_type":"Text","default":"Ada"})");
  ask(text, "[default: Ada]: ", "\n");
  ASSERT_TRUE(answer && answer->ok());
  EXPECT_EQ(**answer, "Ada");
  ask(text, "[default: Ada]: ", "Grace\n");  // a typed answer wins
  ASSERT_TRUE(answer && answer->ok());
  EXPECT_EQ(**answer, "Grace");

  // Without a default an empty line is no answer to a yes/no question.
  ToolQuestion boolean = Question(R"({"id":"go","text":"Go?","answer_type":"Boolean"})");
  std::thread asking([&] { answer = asker->Ask(boolean, "t", cancel); });
  terminal.ReadUntil("[y/n] ");
  terminal.Type("\n");
  terminal.ReadUntil("Please answer y or n. [y/n] ");
  terminal.Type("y\n");
  asking.join();
  ASSERT_TRUE(answer && answer->ok());
  EXPECT_EQ(**answer, "true");
}

}  // namespace
}  // namespace toolvfs
