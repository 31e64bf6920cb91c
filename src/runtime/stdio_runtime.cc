#include "runtime/stdio_runtime.h"

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <simdjson.h>

#include <cerrno>
#include <chrono>
#include <memory>
#include <utility>

#include "core/text.h"
#include "runtime/answers.h"
#include "runtime/argument_validation.h"
#include "runtime/command_template.h"
#include "runtime/confined_launch.h"
#include "runtime/outcome_json.h"
#include "sandbox/private_temp_dir.h"

namespace toolvfs {
namespace {

namespace dom = simdjson::dom;
using Clock = std::chrono::steady_clock;

constexpr size_t kStderrTailBytes = size_t{64} << 10;
// How often the loop looks at the clock when nothing happens.
constexpr int kPollSliceMs = 50;

Status Invalid(std::string message) { return Status(StatusCode::kInvalidArgument, std::move(message)); }

// The outcome of a JSON object on stdout, or nullopt when the object is
// none of the shapes (then stdout is raw text).
std::optional<Result<Outcome>> ParseOutcomeObject(dom::element object) {
  std::string_view type;
  Outcome outcome;
  if (object["type"].get_string().get(type) == simdjson::SUCCESS) {
    if (type == "success") {
      Result<std::vector<ContentBlock>> content = ParseContent(object);
      if (!content.ok()) return Result<Outcome>(content.status());
      outcome.content = std::move(content).value();
      return std::optional<Result<Outcome>>(std::in_place, std::move(outcome));
    }
    if (type == "error") {
      outcome.is_error = true;
      outcome.error = ParseToolError(object);
      return std::optional<Result<Outcome>>(std::in_place, std::move(outcome));
    }
    if (type == "needs_input") {
      dom::element question;
      if (object["question"].get(question) != simdjson::SUCCESS) {
        return Result<Outcome>(Invalid("needs_input without a 'question'"));
      }
      Result<ToolQuestion> parsed = ParseQuestion(question);
      if (!parsed.ok()) return Result<Outcome>(parsed.status());
      outcome.kind = Outcome::Kind::kNeedsInput;
      outcome.question = std::move(parsed).value();
      return std::optional<Result<Outcome>>(std::in_place, std::move(outcome));
    }
    return std::nullopt;
  }
  dom::element content;
  if (object["content"].get(content) == simdjson::SUCCESS && content.is_array()) {
    Result<std::vector<ContentBlock>> blocks = ParseContent(object);
    if (!blocks.ok()) return Result<Outcome>(blocks.status());
    outcome.content = std::move(blocks).value();
    bool is_error = false;
    if (object["isError"].get_bool().get(is_error) == simdjson::SUCCESS && is_error) {
      outcome.is_error = true;
      std::string message;
      for (const ContentBlock& block : outcome.content) message += (message.empty() ? "" : "\n") + block.text;
      outcome.error = ToolError{message.empty() ? "the tool reported an error" : message, {}, false};
    }
    return std::optional<Result<Outcome>>(std::in_place, std::move(outcome));
  }
  return std::nullopt;
}

// Reads what is there from a non-blocking `fd` into `sink`; closes `fd` at
// end of file or on a read error.
void Drain(UniqueFd& fd, std::string& sink) {
  char buffer[65536];
  while (fd.valid()) {
    ssize_t count = read(fd.get(), buffer, sizeof buffer);
    if (count > 0) {
      sink.append(buffer, static_cast<size_t>(count));
      continue;
    }
    if (count < 0 && errno == EINTR) continue;
    if (count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    fd.reset();
  }
}

enum class RunEnd { kFinished, kTimeout, kCancelled, kTooMuchOutput };

struct ProcessRun {
  RunEnd end = RunEnd::kFinished;
  StdioCapture capture;
};

// Runs `child` to its end: stdout whole, stderr's tail, the timeout,
// cancellation (SIGTERM, SIGKILL after `grace`), the stdout cap.
Result<ProcessRun> Supervise(ChildProcess& child, CancelToken& cancel, std::chrono::milliseconds timeout,
                             std::chrono::milliseconds grace, size_t max_stdout_bytes) {
  child.stdin_fd().reset();
  ProcessRun run;
  const Clock::time_point deadline = Clock::now() + timeout;
  std::optional<Clock::time_point> kill_at;
  bool killed = false;
  std::string stderr_text;
  while (true) {
    const Clock::time_point now = Clock::now();
    if (run.end == RunEnd::kFinished) {
      if (cancel.cancelled()) {
        run.end = RunEnd::kCancelled;
        (void)child.Signal(SIGTERM);
        kill_at = now + grace;
      } else if (now >= deadline) {
        run.end = RunEnd::kTimeout;
        kill_at = now;
      } else if (run.capture.stdout_text.size() > max_stdout_bytes) {
        run.end = RunEnd::kTooMuchOutput;
        kill_at = now;
      }
    }
    // A second Ctrl+C: no grace.
    if (run.end == RunEnd::kCancelled && cancel.kill_requested()) kill_at = now;
    if (kill_at && now >= *kill_at && !killed) {
      (void)child.Signal(SIGKILL);
      killed = true;
    }

    TOOLVFS_ASSIGN_OR_RETURN(std::optional<ExitStatus> exit, child.TryWait());
    const bool pipes_open = child.stdout_fd().valid() || child.stderr_fd().valid();
    if (exit && (!pipes_open || killed)) {
      run.capture.exit = *exit;
      break;
    }

    pollfd fds[3];
    nfds_t count = 0;
    for (UniqueFd* fd : {&child.stdout_fd(), &child.stderr_fd()}) {
      if (fd->valid()) fds[count++] = pollfd{.fd = fd->get(), .events = POLLIN, .revents = 0};
    }
    if (cancel.fd() >= 0 && run.end == RunEnd::kFinished) {
      fds[count++] = pollfd{.fd = cancel.fd(), .events = POLLIN, .revents = 0};
    }
    (void)poll(fds, count, kPollSliceMs);
    Drain(child.stdout_fd(), run.capture.stdout_text);
    Drain(child.stderr_fd(), stderr_text);
    if (stderr_text.size() > kStderrTailBytes) stderr_text.erase(0, stderr_text.size() - kStderrTailBytes);
  }
  run.capture.stderr_tail = ToValidUtf8(stderr_text);
  return run;
}


}  // namespace

Outcome ParseStdioOutput(const StdioCapture& capture, std::string_view tool_name) {
  // Raw output's error message names no tool: front ends say whose it is.
  const std::string& text = capture.stdout_text;
  dom::parser parser;
  dom::element element;
  if (parser.parse(text).get(element) == simdjson::SUCCESS && element.is_object()) {
    std::optional<Result<Outcome>> parsed = ParseOutcomeObject(element);
    if (parsed) {
      if (!parsed->ok()) {
        return FailedOutcome(StatusCode::kInternal,
                             "Tool " + Quote(tool_name) + " printed an invalid outcome: " + parsed->status().message(),
                             capture.stderr_tail);
      }
      Outcome outcome = std::move(*parsed).value();
      outcome.stderr_tail = capture.stderr_tail;
      return outcome;
    }
  }
  Outcome outcome;
  if (!text.empty()) outcome.content.push_back(ContentBlock::Text(ToValidUtf8(text)));
  if (!capture.exit.success()) {
    outcome.is_error = true;
    std::string message = capture.exit.Describe();
    std::vector<std::string> trace = LastLines(capture.stderr_tail, kTraceLines);
    if (!trace.empty()) message += ": " + trace.back();
    outcome.error = ToolError{std::move(message), std::move(trace), false};
  }
  outcome.stderr_tail = capture.stderr_tail;
  return outcome;
}

StdioRuntime::StdioRuntime(ProjectFiles& project, StdioRuntimeOptions options)
    : project_(project), options_(std::move(options)) {}

Result<Outcome> StdioRuntime::Execute(const ToolCall& call, const ToolConfig& tool, CancelToken& cancel) {
  if (!tool.command) return Invalid("Tool " + Quote(tool.name) + " has no command to run");
  Result<ConfigValue> checked = CheckCallArguments(tool.name, call.arguments_json, tool.parameters);
  if (!checked.ok()) return checked.status();
  TOOLVFS_ASSIGN_OR_RETURN(ConfigValue::Object answers, ParseCallAnswers(tool.name, call.answers_json));

  TOOLVFS_ASSIGN_OR_RETURN(std::unique_ptr<MaterializedView> view, project_.Materialize());
  // What the sandbox cannot refuse (a new `.env` in a directory granted
  // whole) is refused when the copy is synced back.
  auto write_policies = std::make_shared<ToolWritePolicies>();
  write_policies->Add(tool, options_.confinement.config_project_path);
  view->FilterChanges(std::move(write_policies));
  ConfigValue context = TemplateContext(TemplateInputs{.tool_name = tool.name,
                                                       .arguments = std::move(checked).value(),
                                                       .answers = ConfigValue(std::move(answers)),
                                                       .options = tool.options,
                                                       .root = view->path(),
                                                       .access = DirectAccessOf(tool, ToolKind::kStdio)});
  Result<std::vector<std::string>> argv = RenderCommand(*tool.command, context);
  if (!argv.ok()) return Invalid("Tool " + Quote(tool.name) + ": " + argv.status().message());

  TOOLVFS_ASSIGN_OR_RETURN(PrivateTempDir temp, PrivateTempDir::Create());
  LaunchSpec spec;
  spec.program = argv->front();
  spec.args.assign(argv->begin() + 1, argv->end());
  spec.working_directory = view->path();
  spec.environment = FixedEnvironment(temp);
  Result<ChildProcess> child =
      LaunchConfined(spec, tool, ToolKind::kStdio, view->path(),
                     options_.confinement);
  if (!child.ok()) return std::move(child).status();

  const LimitsConfig& limits = tool.sandbox.limits;
  TOOLVFS_ASSIGN_OR_RETURN(ProcessRun run, Supervise(*child, cancel, std::chrono::seconds(limits.timeout_s),
                                                     std::chrono::seconds(limits.cancel_grace_s), options_.max_stdout_bytes));
  Status synced = view->Release();
  Outcome outcome;
  switch (run.end) {
    case RunEnd::kFinished:
      outcome = ParseStdioOutput(run.capture, tool.name);
      break;
    case RunEnd::kCancelled:
      outcome = CancelledOutcome("Tool " + Quote(tool.name) + " was cancelled", run.capture.stderr_tail);
      break;
    case RunEnd::kTimeout:
      outcome = FailedOutcome(StatusCode::kTimeout,
                              "Tool " + Quote(tool.name) + " timed out after " + std::to_string(limits.timeout_s) + " s",
                              run.capture.stderr_tail);
      outcome.error->transient = true;
      outcome.stderr_tail = run.capture.stderr_tail;
      break;
    case RunEnd::kTooMuchOutput:
      outcome = FailedOutcome(StatusCode::kInternal,
                              "Tool " + Quote(tool.name) + " printed more than " +
                                  std::to_string(options_.max_stdout_bytes) + " bytes on stdout",
                              run.capture.stderr_tail);
      outcome.stderr_tail = run.capture.stderr_tail;
      break;
  }
  if (!synced.ok() && !outcome.is_error) {
    outcome = FailedOutcome(StatusCode::kInternal,
                            "Tool " + Quote(tool.name) + "'s changes could not be synced back: " + synced.message(),
                            run.capture.stderr_tail);
  }
  return outcome;
}

}  // namespace toolvfs
