// The inquirers (SPEC.md §3.2): the terminal inquirer driven through pipes
// and a pseudo-terminal, the escaping of what it shows, the denial message
// without interaction, the scripted inquirer, and the scopes of the
// answers as the AccessGate applies them.
#include "policy/inquirer.h"

#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <termios.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cli/pseudo_terminal.h"
#include "core/io.h"
#include "core/url.h"
#include "host/access_gate.h"
#include "policy/tool_policy.h"

namespace toolvfs {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

Inquiry WriteInquiry(std::string target = "src/gen/a.rs") {
  return Inquiry{"gen", "write", std::move(target), "add \"src/gen\" to filesystem.writable"};
}

struct Pipe {
  UniqueFd read;
  UniqueFd write;
};

Pipe MakePipe() {
  int ends[2];
  EXPECT_EQ(::pipe2(ends, O_CLOEXEC), 0);
  return Pipe{UniqueFd(ends[0]), UniqueFd(ends[1])};
}

// What one Ask on pipes answered and printed.
struct Asked {
  Result<InquiryAnswer> answer = InternalError("not asked");
  std::string prompt;
};

// Asks `inquiry` with `typed` as everything the user types (then end of
// input), and collects the prompt.
Asked AskWithInput(const std::string& typed, const Inquiry& inquiry = WriteInquiry()) {
  Pipe input = MakePipe();
  Pipe output = MakePipe();
  EXPECT_TRUE(WriteFull(input.write.get(), typed, "input").ok());
  input.write.reset();
  std::unique_ptr<Inquirer> inquirer = NewTerminalInquirer(std::move(input.read), std::move(output.write));
  Asked asked;
  asked.answer = inquirer->Ask(inquiry);
  inquirer.reset();  // closes the output's write end
  Result<std::string> prompt = ReadToEnd(output.read.get(), 1 << 20, "output");
  EXPECT_TRUE(prompt.ok());
  if (prompt.ok()) asked.prompt = *prompt;
  return asked;
}

TEST(TerminalInquirerTest, EachAnswerLetterGivesItsAnswer) {
  struct Case {
    std::string typed;
    InquiryAnswer expected;
  };
  for (const Case& c : {Case{"y\n", InquiryAnswer::kAllowOnce}, Case{"a\n", InquiryAnswer::kAllowForRun},
                        Case{"n\n", InquiryAnswer::kDenyOnce}, Case{"d\n", InquiryAnswer::kDenyForRun},
                        Case{"Y\n", InquiryAnswer::kAllowOnce}, Case{"  D \t\n", InquiryAnswer::kDenyForRun},
                        Case{"a\r\n", InquiryAnswer::kAllowForRun}}) {
    Asked asked = AskWithInput(c.typed);
    ASSERT_TRUE(asked.answer.ok()) << c.typed << ": " << asked.answer.status().ToString();
    EXPECT_EQ(*asked.answer, c.expected) << c.typed;
  }
}

TEST(TerminalInquirerTest, PromptShowsToolOperationExactTargetAndTheFullConfigKey) {
  Asked asked = AskWithInput("y\n");
  EXPECT_THAT(asked.prompt, HasSubstr("tool 'gen' asks to write 'src/gen/a.rs'"));
  EXPECT_THAT(asked.prompt, HasSubstr("add \"src/gen\" to tools.gen.sandbox.filesystem.writable"));
  EXPECT_THAT(asked.prompt, HasSubstr("y: allow once"));
  EXPECT_THAT(asked.prompt, HasSubstr("d: deny for this run"));
  EXPECT_THAT(asked.prompt, HasSubstr("t: allow all of 'src/gen/' for this run   x: deny it for this run"));
  EXPECT_THAT(asked.prompt, testing::EndsWith("Allow? [y/a/n/d/t/x/p] "));
  // No rule writer: no "s". Not a file operation: no directory or pattern.
  EXPECT_THAT(asked.prompt, Not(HasSubstr("s: save")));
  Asked url = AskWithInput("y\n", Inquiry{"gen", "GET", "https://example.com/a", ""});
  EXPECT_THAT(url.prompt, testing::EndsWith("Allow? [y/a/n/d] "));
}

TEST(TerminalInquirerTest, WaitsWhileAnotherQuestionHoldsTheTerminal) {
  // A tool's own question (runtime/answers.h) holds the prompt lock: the
  // policy's question must not print, nor read, until it is answered.
  Pipe input = MakePipe();
  Pipe output = MakePipe();
  ASSERT_TRUE(WriteFull(input.write.get(), "y\n", "input").ok());
  input.write.reset();
  std::unique_ptr<Inquirer> inquirer = NewTerminalInquirer(std::move(input.read), std::move(output.write));
  std::unique_lock other_question(TerminalPromptMutex());
  std::atomic<bool> answered = false;
  std::thread asking([&] {
    EXPECT_EQ(inquirer->Ask(WriteInquiry()).value(), InquiryAnswer::kAllowOnce);
    answered = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_FALSE(answered.load()) << "asked while another question held the terminal";
  pollfd ready{.fd = output.read.get(), .events = POLLIN, .revents = 0};
  EXPECT_EQ(::poll(&ready, 1, 0), 0) << "a prompt was printed over the other question";
  other_question.unlock();
  asking.join();
  EXPECT_TRUE(answered.load());
}

TEST(TerminalInquirerTest, DirectoryAndPatternAnswersReachBeyondTheTarget) {
  struct Case {
    std::string typed;
    InquiryAnswer expected;
    std::string pattern;
  };
  for (const Case& c : {Case{"t\n", InquiryAnswer::kAllowForRun, "src/gen/**"},
                        Case{"X\n", InquiryAnswer::kDenyForRun, "src/gen/**"},
                        Case{"p\nsrc/**/*.rs\nd\n", InquiryAnswer::kDenyForRun, "src/**/*.rs"},
                        Case{"p\n\ny\n", InquiryAnswer::kAllowOnce, ""}}) {
    Pipe input = MakePipe();
    Pipe output = MakePipe();
    ASSERT_TRUE(WriteFull(input.write.get(), c.typed, "input").ok());
    input.write.reset();
    std::unique_ptr<Inquirer> inquirer = NewTerminalInquirer(std::move(input.read), std::move(output.write));
    Result<InquiryReply> reply = inquirer->AskWithScope(WriteInquiry());
    ASSERT_TRUE(reply.ok()) << c.typed << ": " << reply.status().ToString();
    EXPECT_EQ(reply->answer, c.expected) << c.typed;
    EXPECT_EQ(reply->pattern, c.pattern) << c.typed;
  }
}

TEST(TerminalInquirerTest, AnythingElseAsksAgain) {
  Asked asked = AskWithInput("yes\n\nq\nyy\ny\n");
  ASSERT_TRUE(asked.answer.ok()) << asked.answer.status().ToString();
  EXPECT_EQ(*asked.answer, InquiryAnswer::kAllowOnce);
  size_t again = 0;
  for (size_t at = asked.prompt.find("Please answer"); at != std::string::npos;
       at = asked.prompt.find("Please answer", at + 1)) {
    ++again;
  }
  EXPECT_EQ(again, 4u);
}

TEST(TerminalInquirerTest, AVeryLongLineIsNotAnAnswer) {
  // 50000 bytes: more than any answer, less than a pipe holds.
  Asked asked = AskWithInput(std::string(50000, 'y') + "\nn\n");
  ASSERT_TRUE(asked.answer.ok()) << asked.answer.status().ToString();
  EXPECT_EQ(*asked.answer, InquiryAnswer::kDenyOnce);
}

TEST(TerminalInquirerTest, EndOfInputFails) {
  Asked nothing = AskWithInput("");
  EXPECT_FALSE(nothing.answer.ok());
  EXPECT_THAT(nothing.answer.status().message(), HasSubstr("end of input"));
  // A letter never confirmed with Enter is no answer either.
  Asked unconfirmed = AskWithInput("y");
  EXPECT_FALSE(unconfirmed.answer.ok());
  Asked garbage = AskWithInput("maybe\n");
  EXPECT_FALSE(garbage.answer.ok());
}

TEST(TerminalInquirerTest, AnsiEscapesInTheTargetAreShownEscaped) {
  const std::string target = "src/\x1b[2K\x1b[1Aok.txt\r\x1b]0;title\x07\xc2\x9b" "31m\x7f";
  Asked asked = AskWithInput("n\n", WriteInquiry(target));
  ASSERT_TRUE(asked.answer.ok());
  EXPECT_EQ(asked.prompt.find('\x1b'), std::string::npos);
  EXPECT_EQ(asked.prompt.find('\r'), std::string::npos);
  EXPECT_EQ(asked.prompt.find('\x07'), std::string::npos);
  EXPECT_EQ(asked.prompt.find("\xc2\x9b"), std::string::npos);
  EXPECT_THAT(asked.prompt,
              HasSubstr("'src/\\x1b[2K\\x1b[1Aok.txt\\x0d\\x1b]0;title\\x07\\xc2\\x9b31m\\x7f'"));
}

TEST(TerminalInquirerTest, CancelEndsAnAskInProgressAndLaterOnes) {
  Pipe input = MakePipe();
  Pipe output = MakePipe();
  std::unique_ptr<Inquirer> inquirer = NewTerminalInquirer(std::move(input.read), std::move(output.write));
  std::optional<Result<InquiryAnswer>> answer;
  std::thread asking([&] { answer = inquirer->Ask(WriteInquiry()); });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  inquirer->Cancel();
  asking.join();
  ASSERT_TRUE(answer.has_value());
  EXPECT_EQ(answer->status().code(), StatusCode::kCancelled);
  EXPECT_EQ(inquirer->Ask(WriteInquiry()).status().code(), StatusCode::kCancelled);
}

TEST(TerminalInquirerTest, TypeAheadIsDiscardedOnATerminal) {
  PseudoTerminal terminal;
  ASSERT_TRUE(terminal.ok()) << "openpty failed";
  // "y" typed before the question is on the screen must not answer it.
  terminal.Type("y\n");
  ASSERT_TRUE(terminal.LineReady());
  std::unique_ptr<Inquirer> inquirer = NewTerminalInquirer(terminal.DupSlave(), terminal.DupSlave());
  std::optional<Result<InquiryAnswer>> answer;
  std::thread asking([&] { answer = inquirer->Ask(WriteInquiry()); });
  std::string prompt = terminal.ReadUntil("Allow? [");
  EXPECT_THAT(prompt, HasSubstr("'src/gen/a.rs'"));
  terminal.Type("n\n");
  asking.join();
  ASSERT_TRUE(answer.has_value());
  ASSERT_TRUE(answer->ok()) << answer->status().ToString();
  EXPECT_EQ(**answer, InquiryAnswer::kDenyOnce);
}

TEST(TerminalInquirerTest, ATerminalClosedWhileAskingFails) {
  PseudoTerminal terminal;
  ASSERT_TRUE(terminal.ok()) << "openpty failed";
  std::unique_ptr<Inquirer> inquirer = NewTerminalInquirer(terminal.DupSlave(), terminal.DupSlave());
  std::optional<Result<InquiryAnswer>> answer;
  std::thread asking([&] { answer = inquirer->Ask(WriteInquiry()); });
  terminal.ReadUntil("Allow? [");
  terminal.Type("\x04");  // Ctrl+D at the start of a line: end of input
  asking.join();
  ASSERT_TRUE(answer.has_value());
  EXPECT_FALSE(answer->ok());
}

TEST(EscapeForTerminalTest, ControlsAreShownAsBytesAndTextStaysAsItIs) {
  EXPECT_EQ(EscapeForTerminal("src/a b.txt"), "src/a b.txt");
  const std::string letters = "caf\xc3\xa9/\xe6\x97\xa5\xf0\x9f\x98\x80";
  EXPECT_EQ(EscapeForTerminal(letters), letters);
  EXPECT_EQ(EscapeForTerminal(std::string("a\0b", 3)), "a\\x00b");
  EXPECT_EQ(EscapeForTerminal("\n\t\r\x1b\x7f"), "\\x0a\\x09\\x0d\\x1b\\x7f");
  EXPECT_EQ(EscapeForTerminal("a\\x1b"), "a\\\\x1b");  // a literal backslash is not an escape
  EXPECT_EQ(EscapeForTerminal("\xc2\x80\xc2\x9b\xc2\x9f\xc2\xa0"), "\\xc2\\x80\\xc2\\x9b\\xc2\\x9f\xc2\xa0");
  // Invalid UTF-8: a lone continuation byte, a truncated sequence, an
  // overlong '/', a surrogate.
  EXPECT_EQ(EscapeForTerminal("\x80"), "\\x80");
  EXPECT_EQ(EscapeForTerminal("a\xe6\x97"), "a\\xe6\\x97");
  EXPECT_EQ(EscapeForTerminal("\xc0\xaf"), "\\xc0\\xaf");
  EXPECT_EQ(EscapeForTerminal("\xed\xa0\x80"), "\\xed\\xa0\\x80");
  // Bidi overrides and line separators would show text other than the target.
  EXPECT_EQ(EscapeForTerminal("a\xe2\x80\xae" "b"), "a\\xe2\\x80\\xaeb");
  EXPECT_EQ(EscapeForTerminal("\xe2\x81\xa6\xe2\x80\xa8"), "\\xe2\\x81\\xa6\\xe2\\x80\\xa8");
}

TEST(NonInteractiveDenialTest, SaysNotCoveredAndTheFullKeyThatAllowsIt) {
  EXPECT_EQ(NonInteractiveDenial(WriteInquiry(), "fs.write"),
            "fs.write of 'src/gen/a.rs' was not covered by the policy of tool 'gen' and was denied without "
            "asking (no interaction); to allow it, add \"src/gen\" to tools.gen.sandbox.filesystem.writable");
}

TEST(NonInteractiveDenialTest, IsOneLineWithoutAHint) {
  Inquiry inquiry{"my tool", "run", "rm -rf /\n\x1b[2J", ""};
  std::string message = NonInteractiveDenial(inquiry, "process.run");
  EXPECT_EQ(message.find('\n'), std::string::npos);
  EXPECT_EQ(message.find('\x1b'), std::string::npos);
  EXPECT_THAT(message, HasSubstr("'rm -rf /\\x0a\\x1b[2J'"));
  EXPECT_THAT(message, HasSubstr("add a rule for it to tools.\"my tool\".sandbox in toolvfs.toml"));
}

TEST(QualifyPolicyHintTest, PrefixesEverySandboxKeyOnce) {
  EXPECT_EQ(QualifyPolicyHint("gen", "set filesystem.writable = true"),
            "set tools.gen.sandbox.filesystem.writable = true");
  EXPECT_EQ(QualifyPolicyHint("gh", "add \"https://api.github.com/\" to network.allow"),
            "add \"https://api.github.com/\" to tools.gh.sandbox.network.allow");
  EXPECT_EQ(QualifyPolicyHint("x", "add a rule commands.rg = { args = [[\"-n\", \"**\"]] }"),
            "add a rule tools.x.sandbox.commands.rg = { args = [[\"-n\", \"**\"]] }");
  EXPECT_EQ(QualifyPolicyHint("x", "name it in sensitive_paths or (filesystem.allow)"),
            "name it in tools.x.sandbox.sensitive_paths or (tools.x.sandbox.filesystem.allow)");
  // Already whole, or inside a quoted value: unchanged.
  EXPECT_EQ(QualifyPolicyHint("x", "add \"a\" to tools.x.sandbox.filesystem.allow"),
            "add \"a\" to tools.x.sandbox.filesystem.allow");
  EXPECT_EQ(QualifyPolicyHint("x", "add \"filesystem.allow\" to filesystem.deny"),
            "add \"filesystem.allow\" to tools.x.sandbox.filesystem.deny");
  EXPECT_EQ(QualifyPolicyHint("a.b", "filesystem.allow"), "tools.\"a.b\".sandbox.filesystem.allow");
}

TEST(ScriptedInquirerTest, AnswersInOrderRecordsWhatWasAskedAndFailsWhenOut) {
  std::vector<Inquiry> asked;
  std::unique_ptr<Inquirer> inquirer =
      NewScriptedInquirer({InquiryAnswer::kAllowOnce, InquiryAnswer::kDenyForRun}, &asked);
  EXPECT_TRUE(inquirer->asks_user());
  EXPECT_EQ(*inquirer->Ask(WriteInquiry("a")), InquiryAnswer::kAllowOnce);
  EXPECT_EQ(*inquirer->Ask(WriteInquiry("b")), InquiryAnswer::kDenyForRun);
  EXPECT_FALSE(inquirer->Ask(WriteInquiry("c")).ok());
  ASSERT_EQ(asked.size(), 3u);
  EXPECT_EQ(asked[0].target, "a");
  EXPECT_EQ(asked[2].target, "c");
  EXPECT_EQ(asked[1].tool, "gen");
}

TEST(DenyingInquirerTest, DeniesWithoutAsking) {
  std::unique_ptr<Inquirer> inquirer = NewDenyingInquirer();
  EXPECT_FALSE(inquirer->asks_user());
  EXPECT_EQ(*inquirer->Ask(WriteInquiry()), InquiryAnswer::kDenyOnce);
}

// The answers' scopes as the gate applies them: y and n decide one
// request, a and d the same operation on the same exact target for the
// rest of the run.
class AnswerScopeTest : public ::testing::Test {
 protected:
  Status Write(std::string_view target) {
    RequestScope scope(RequestId(1), "fs.write", /*may_block=*/true);
    return gate_.Authorize(scope, "write", target,
                           PolicyDecision::Uncovered("add \"x\" to filesystem.writable"));
  }

  ToolConfig tool_;
  ToolPolicy policy_ = ToolPolicy::ForTool(tool_, std::nullopt);
  std::vector<Inquiry> asked_;
  std::unique_ptr<Inquirer> inquirer_ = NewScriptedInquirer(
      {InquiryAnswer::kAllowOnce, InquiryAnswer::kDenyOnce, InquiryAnswer::kAllowForRun,
       InquiryAnswer::kDenyForRun},
      &asked_);
  AccessGate gate_{policy_, *inquirer_};
};

TEST_F(AnswerScopeTest, OnceAnswersAskAgainRunAnswersDoNot) {
  EXPECT_TRUE(Write("a.txt").ok());                                            // y
  EXPECT_EQ(Write("a.txt").code(), StatusCode::kPermissionDenied);             // n: asked again
  EXPECT_TRUE(Write("b.txt").ok());                                            // a
  EXPECT_TRUE(Write("b.txt").ok());                                            // remembered
  EXPECT_EQ(Write("c.txt").code(), StatusCode::kPermissionDenied);             // d
  EXPECT_EQ(Write("c.txt").code(), StatusCode::kPermissionDenied);             // remembered
  // "a" for b.txt grants b.txt only, exactly: not a sibling, not a prefix.
  EXPECT_FALSE(Write("b.txt2").ok());  // out of answers: asked, no answer
  ASSERT_EQ(asked_.size(), 5u);
  EXPECT_EQ(asked_[4].target, "b.txt2");
}

// AuthorizeAll and Authorize share one asking path: run-scoped answers
// first, then one question for every target left; a refusal names every
// target it refused, in the message and in the scope the audit record is
// made from.
class AuthorizeAllTest : public ::testing::Test {
 protected:
  static std::vector<AccessGate::Judged> Open(std::initializer_list<const char*> paths) {
    std::vector<AccessGate::Judged> open;
    for (const char* path : paths) open.push_back({path, PolicyDecision::Uncovered("add \"x\" to filesystem.writable")});
    return open;
  }
  // Open with the policy's own decisions, whose hints name each path.
  std::vector<AccessGate::Judged> Judged(std::initializer_list<const char*> paths) const {
    std::vector<AccessGate::Judged> judged;
    for (const char* path : paths) judged.push_back({path, policy_.files.Check(FileAccess::kWrite, path)});
    return judged;
  }

  ToolConfig tool_;
  ToolPolicy policy_ = ToolPolicy::ForTool(tool_, std::nullopt);
  std::vector<Inquiry> asked_;
};

TEST_F(AuthorizeAllTest, WithoutInteractionEveryOpenTargetIsRefusedAndNamed) {
  std::unique_ptr<Inquirer> denying = NewDenyingInquirer();
  AccessGate gate(policy_, *denying);
  RequestScope scope(RequestId(1), "snapshot.restore", /*may_block=*/true);
  Status refused = gate.AuthorizeAll(scope, "write", Open({"a.txt", "b.txt", "c.txt"}));
  EXPECT_EQ(refused.code(), StatusCode::kPermissionDenied);
  EXPECT_THAT(refused.message(), StartsWith("snapshot.restore of 3 paths: 'a.txt', 'b.txt', 'c.txt' was not covered"));
  EXPECT_EQ(scope.refused_targets(), (std::vector<std::string>{"a.txt", "b.txt", "c.txt"}));
  EXPECT_EQ(scope.decision(), AuditDecision::kDeny);
  EXPECT_EQ(scope.rule(), "not covered, no interaction");
}

TEST_F(AuthorizeAllTest, ARefusedQuestionNamesEveryPathAndNothingIsAskedTwice) {
  std::unique_ptr<Inquirer> inquirer =
      NewScriptedInquirer({InquiryAnswer::kDenyForRun, InquiryAnswer::kAllowOnce}, &asked_);
  AccessGate gate(policy_, *inquirer);
  {
    RequestScope scope(RequestId(1), "snapshot.restore", /*may_block=*/true);
    Status refused = gate.AuthorizeAll(scope, "write", Open({"a.txt", "b.txt"}));
    EXPECT_EQ(refused.message(), "snapshot.restore of 2 paths: 'a.txt', 'b.txt' denied by the user");
    EXPECT_EQ(scope.refused_targets(), (std::vector<std::string>{"a.txt", "b.txt"}));
    EXPECT_EQ(scope.target(), "a.txt -> b.txt");
    EXPECT_EQ(scope.decision(), AuditDecision::kAskedDeny);
  }
  // Both denials are remembered: a batch with them and a new path is
  // refused without a question, naming the two.
  {
    RequestScope scope(RequestId(2), "snapshot.restore", /*may_block=*/true);
    Status refused = gate.AuthorizeAll(scope, "write", Open({"a.txt", "new.txt", "b.txt"}));
    EXPECT_EQ(refused.message(),
              "snapshot.restore of 2 paths: 'a.txt', 'b.txt' denied by the user for the rest of this run");
    EXPECT_EQ(scope.refused_targets(), (std::vector<std::string>{"a.txt", "b.txt"}));
    EXPECT_EQ(scope.rule(), "user, for this run");
  }
  ASSERT_EQ(asked_.size(), 1u);
  // One open target is Authorize's own question: no list, the plain target.
  {
    RequestScope scope(RequestId(3), "snapshot.restore", /*may_block=*/true);
    EXPECT_TRUE(gate.AuthorizeAll(scope, "write", Open({"new.txt"})).ok());
    ASSERT_EQ(asked_.size(), 2u);
    EXPECT_EQ(asked_[1].target, "new.txt");
    EXPECT_TRUE(asked_[1].targets.empty());
    EXPECT_TRUE(scope.refused_targets().empty());
    EXPECT_EQ(scope.decision(), AuditDecision::kAskedAllow);
  }
  // Nothing open is nothing to ask.
  RequestScope scope(RequestId(4), "snapshot.restore", /*may_block=*/true);
  EXPECT_TRUE(gate.AuthorizeAll(scope, "write", {}).ok());
  EXPECT_FALSE(scope.decided());
}

// What the policy decides is never put to the user: a denied target in a
// batch refuses it before any question, whatever the user would answer;
// an allowed one is not asked about.
TEST_F(AuthorizeAllTest, APolicyDenialInABatchRefusesWithoutAQuestion) {
  std::unique_ptr<Inquirer> inquirer = NewScriptedInquirer({InquiryAnswer::kAllowForRun}, &asked_);
  AccessGate gate(policy_, *inquirer);
  std::vector<AccessGate::Judged> batch = Open({"a.txt"});
  batch.push_back({"secret.txt", PolicyDecision::Deny("filesystem.deny \"secret.txt\"")});
  RequestScope scope(RequestId(1), "snapshot.restore", /*may_block=*/true);
  Status refused = gate.AuthorizeAll(scope, "write", batch);
  EXPECT_EQ(refused.code(), StatusCode::kPermissionDenied);
  EXPECT_THAT(refused.message(), HasSubstr("secret.txt"));
  EXPECT_TRUE(asked_.empty());

  std::vector<AccessGate::Judged> allowed = Open({"a.txt"});
  allowed.push_back({"public.txt", PolicyDecision::Allow("filesystem.writable \"public.txt\"")});
  RequestScope second(RequestId(2), "snapshot.restore", /*may_block=*/true);
  EXPECT_TRUE(gate.AuthorizeAll(second, "write", allowed).ok());
  ASSERT_EQ(asked_.size(), 1u);
  EXPECT_EQ(asked_[0].target, "a.txt");
  EXPECT_TRUE(asked_[0].targets.empty());
}

// On the loop thread a batch that needs a question moves to a worker, as
// Authorize does; one settled by run-scoped answers does not.
TEST_F(AuthorizeAllTest, OnTheLoopThreadAQuestionMovesToAWorker) {
  std::unique_ptr<Inquirer> inquirer = NewScriptedInquirer({InquiryAnswer::kAllowForRun}, &asked_);
  AccessGate gate(policy_, *inquirer);
  RequestScope loop(RequestId(1), "snapshot.restore", /*may_block=*/false);
  EXPECT_EQ(gate.AuthorizeAll(loop, "write", Open({"a.txt", "b.txt"})).code(), StatusCode::kCancelled);
  EXPECT_TRUE(loop.needs_worker());
  EXPECT_TRUE(asked_.empty());
  RequestScope worker(RequestId(1), "snapshot.restore", /*may_block=*/true);
  EXPECT_TRUE(gate.AuthorizeAll(worker, "write", Open({"a.txt", "b.txt"})).ok());
  RequestScope again(RequestId(2), "snapshot.restore", /*may_block=*/false);
  EXPECT_TRUE(gate.AuthorizeAll(again, "write", Open({"b.txt", "a.txt"})).ok());
  EXPECT_FALSE(again.needs_worker());
  EXPECT_EQ(asked_.size(), 1u);
}

// An inquirer that remembers allows from before the run (an MCP session's
// "allow for this session") tells the gate of them: a batch asks only
// about the rest, its `pending` names only those, and the allows it
// remembered are recorded as such, not as answers given now.
TEST_F(AuthorizeAllTest, AllowsRememberedBeyondTheRunAreNotAskedAgain) {
  class RememberingInquirer final : public Inquirer {
   public:
    explicit RememberingInquirer(std::unique_ptr<Inquirer> asker) : asker_(std::move(asker)) {}
    Result<InquiryAnswer> Ask(const Inquiry& inquiry) override { return asker_->Ask(inquiry); }
    bool asks_user() const override { return true; }
    std::optional<std::string> RememberedAllowRule(std::string_view, std::string_view operation,
                                                   std::string_view target) const override {
      if (operation == "write" && (target == "a.txt" || target == "c.txt")) return "user, earlier";
      return std::nullopt;
    }

   private:
    std::unique_ptr<Inquirer> asker_;
  };
  RememberingInquirer inquirer(NewScriptedInquirer({InquiryAnswer::kAllowOnce}, &asked_));
  AccessGate gate(policy_, inquirer);
  std::vector<std::string> pending;
  gate.set_pending_sender([&](const RequestId&, std::string_view reason) { pending.emplace_back(reason); });
  {
    RequestScope scope(RequestId(1), "snapshot.restore", /*may_block=*/true);
    EXPECT_TRUE(gate.AuthorizeAll(scope, "write", Open({"a.txt", "c.txt"})).ok());
    EXPECT_EQ(scope.decision(), AuditDecision::kAskedAllow);
    EXPECT_EQ(scope.rule(), "user, earlier");
    EXPECT_TRUE(asked_.empty());
    EXPECT_TRUE(pending.empty());
  }
  RequestScope scope(RequestId(2), "snapshot.restore", /*may_block=*/true);
  EXPECT_TRUE(gate.AuthorizeAll(scope, "write", Judged({"a.txt", "b.txt", "c.txt", "d.txt"})).ok());
  ASSERT_EQ(asked_.size(), 1u);
  EXPECT_EQ(asked_[0].target, "b.txt");
  EXPECT_EQ(asked_[0].targets, (std::vector<std::string>{"b.txt", "d.txt"}));
  // The hint is that of the paths asked about, not of the batch's first.
  EXPECT_EQ(asked_[0].hint, "add \"b.txt\" to filesystem.writable; add \"d.txt\" to filesystem.writable");
  EXPECT_EQ(pending, (std::vector<std::string>{"asking the user to allow write of 2 paths: 'b.txt', 'd.txt'"}));
  // A question was asked in this request: its answer is the record's.
  EXPECT_EQ(scope.decision(), AuditDecision::kAskedAllow);
  EXPECT_EQ(scope.rule(), "user");
}

// A batch's question says how to allow each of its paths (one path's hint
// names that path only), each hint once and at most 20 of them; under
// `toolvfs exec` as its flags.
TEST_F(AuthorizeAllTest, TheHintOfABatchNamesEveryPathAskedAbout) {
  std::unique_ptr<Inquirer> inquirer = NewScriptedInquirer({InquiryAnswer::kAllowOnce, InquiryAnswer::kAllowOnce,
                                                            InquiryAnswer::kAllowOnce}, &asked_);
  AccessGate gate(policy_, *inquirer);
  RequestScope scope(RequestId(1), "snapshot.restore", /*may_block=*/true);
  ASSERT_TRUE(gate.AuthorizeAll(scope, "write", Judged({"a.txt", "docs/b.txt"})).ok());
  ASSERT_EQ(asked_.size(), 1u);
  EXPECT_EQ(asked_[0].hint, "add \"a.txt\" to filesystem.writable; add \"docs/b.txt\" to filesystem.writable");
  EXPECT_EQ(QualifyPolicyHint("t", asked_[0].hint),
            "add \"a.txt\" to tools.t.sandbox.filesystem.writable; add \"docs/b.txt\" to "
            "tools.t.sandbox.filesystem.writable");

  std::vector<AccessGate::Judged> many;
  for (int i = 0; i < 25; ++i) {
    const std::string path = "f" + std::to_string(i);
    many.push_back({path, policy_.files.Check(FileAccess::kWrite, path)});
    many.push_back({path + "-again", PolicyDecision::Uncovered("one shared hint")});
  }
  RequestScope batch(RequestId(2), "snapshot.restore", /*may_block=*/true);
  ASSERT_TRUE(gate.AuthorizeAll(batch, "write", many).ok());
  ASSERT_EQ(asked_.size(), 2u);
  EXPECT_THAT(asked_[1].hint, StartsWith("add \"f0\" to filesystem.writable; one shared hint; add \"f1\""));
  EXPECT_THAT(asked_[1].hint, HasSubstr("; add \"f18\" to filesystem.writable; … and 6 more"));
  EXPECT_THAT(asked_[1].hint, Not(HasSubstr("f19")));

  ToolConfig exec_tool;
  ToolPolicy exec_policy = ToolPolicy::ForTool(exec_tool, std::nullopt);
  exec_policy.ad_hoc = true;
  AccessGate exec_gate(exec_policy, *inquirer);
  RequestScope exec(RequestId(3), "snapshot.restore", /*may_block=*/true);
  std::vector<AccessGate::Judged> exec_batch = {{"a.txt", exec_policy.files.Check(FileAccess::kWrite, "a.txt")},
                                                {"b c", exec_policy.files.Check(FileAccess::kWrite, "b c")}};
  ASSERT_TRUE(exec_gate.AuthorizeAll(exec, "write", exec_batch).ok());
  ASSERT_EQ(asked_.size(), 3u);
  EXPECT_EQ(asked_[2].hint, "pass --allow-write a.txt; pass --allow-write 'b c'");
}

// `toolvfs exec`'s flags come from the decision's grant, not from its
// prose: a hint without one (a deny rule to remove, an environment
// variable to list) is shown as it is.
TEST(ExecFlagHintTest, TheFlagComesFromTheGrant) {
  ToolConfig tool;
  tool.has_sandbox_table = true;
  tool.sandbox.filesystem_allow = {"src"};
  const ToolPolicy policy = ToolPolicy::ForTool(tool, std::nullopt);
  EXPECT_EQ(ExecFlagHint(policy.files.Check(FileAccess::kWrite, "todo list.txt")), "pass --allow-write 'todo list.txt'");
  EXPECT_EQ(ExecFlagHint(policy.files.Check(FileAccess::kRead, "docs/a.md")), "pass --allow-read docs/a.md");
  EXPECT_EQ(ExecFlagHint(policy.files.Check(FileAccess::kRead, "")), "pass --allow-read .");
  EXPECT_EQ(ExecFlagHint(PolicyDecision::Uncovered("add a commands.rg rule", PolicyGrant{PolicyGrant::Kind::kCommand, "rg"})),
            "pass --allow-cmd rg");
  // A URL: the prefix the policy would add, without the query.
  Result<NormalizedUrl> url = NormalizeUrl("https://api.example.com/v1/items?page=2");
  ASSERT_TRUE(url.ok()) << url.status().ToString();
  EXPECT_EQ(ExecFlagHint(policy.network.Check(*url)), "pass --allow-net https://api.example.com/v1/items");
  // Mentions commands.rg, but --allow-cmd would not forward the variable.
  const PolicyDecision envs =
      PolicyDecision::Deny("commands.rg.envs", "\"TOKEN\" is not listed; add it to commands.rg.envs to forward it");
  EXPECT_EQ(ExecFlagHint(envs), envs.hint);
}

// What the gate says of an uncovered URL under `toolvfs exec
// --no-interaction`: the --allow-net flag, not the config key.
TEST(ExecFlagHintTest, TheGateNamesAllowNetForAnUncoveredUrl) {
  ToolConfig tool;
  tool.name = "fetch.py";
  tool.ad_hoc = true;
  const ToolPolicy policy = ToolPolicy::ForTool(tool, std::nullopt);
  std::unique_ptr<Inquirer> denying = NewDenyingInquirer();
  AccessGate gate(policy, *denying);
  RequestScope scope(RequestId(1), "http.get", /*may_block=*/true);
  Result<NormalizedUrl> url = NormalizeUrl("https://api.example.com/v1/items?page=2");
  ASSERT_TRUE(url.ok()) << url.status().ToString();
  Status refused = gate.Authorize(scope, "GET", url->ToString(), policy.network.Check(*url));
  EXPECT_EQ(refused.code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(refused.message(),
            "http.get of 'https://api.example.com/v1/items?page=2' was not covered by the policy of tool 'fetch.py' "
            "and was denied without asking (no interaction); to allow it, pass --allow-net "
            "https://api.example.com/v1/items");
}

}  // namespace
}  // namespace toolvfs
