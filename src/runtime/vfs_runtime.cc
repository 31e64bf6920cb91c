#include "runtime/vfs_runtime.h"

#include <simdjson.h>

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <utility>

#include "core/text.h"
#include "host/access_gate.h"
#include "host/init_message.h"
#include "host/tool_session.h"
#include "policy/tool_policy.h"
#include "protocol/json_writer.h"
#include "runtime/answers.h"
#include "runtime/argument_validation.h"
#include "runtime/confined_launch.h"
#include "runtime/outcome_json.h"
#include "runtime/sdk_location.h"
#include "runtime/stateful_tool.h"
#include "sandbox/private_temp_dir.h"

namespace toolvfs {
namespace {

namespace dom = simdjson::dom;

Outcome MapSessionResult(SessionResult session, const std::string& tool_name) {
  Outcome outcome;
  using End = SessionResult::End;
  switch (session.end) {
    case End::kResult:
    case End::kToolError: {
      dom::parser parser;
      dom::element params;
      if (parser.parse(session.final_params_json).get(params) != simdjson::SUCCESS) {
        outcome = FailedOutcome(StatusCode::kInternal,
                                "Tool " + Quote(tool_name) + " sent an unreadable final message",
                                session.stderr_tail);
        break;
      }
      if (session.end == End::kToolError) {
        outcome.is_error = true;
        outcome.error = ParseToolError(params);
        break;
      }
      Result<std::vector<ContentBlock>> content = ParseContent(params);
      if (!content.ok()) {
        outcome = FailedOutcome(StatusCode::kInternal,
                                "Tool " + Quote(tool_name) + " sent an invalid result: " +
                                    content.status().message(),
                                session.stderr_tail);
        break;
      }
      outcome.content = std::move(content).value();
      break;
    }
    case End::kCancelled:
      outcome = CancelledOutcome(session.message);
      break;
    case End::kIdleTimeout:
    case End::kTotalTimeout:
      outcome = FailedOutcome(StatusCode::kTimeout, session.message, session.stderr_tail);
      outcome.error->transient = true;
      break;
    case End::kExited:
    case End::kSignaled:
    case End::kProtocolErrors:
    case End::kHostError:
      outcome = FailedOutcome(StatusCode::kInternal, session.message, session.stderr_tail);
      break;
  }
  outcome.stderr_tail = std::move(session.stderr_tail);
  outcome.denied_requests = session.denied_requests;
  return outcome;
}

std::string OptionsJson(const ConfigValue::Object& options) {
  return ConfigValue(options).ToJson();
}

}  // namespace

VfsRuntime::VfsRuntime(ProjectFiles& project, VfsRuntimeOptions options)
    : project_(project), options_(std::move(options)), answer_memory_(options_.answer_memory_bytes) {}

Result<ChildProcess> VfsRuntime::LaunchConfined(const LaunchSpec& spec, const ToolConfig& tool,
                                                ToolKind kind, const std::string& project_directory) {
  if (options_.launcher) return options_.launcher(spec, tool);
  return toolvfs::LaunchConfined(spec, tool, kind, project_directory,
                                 options_.confinement);
}

// Everything one run of a vfs tool owns, from the launch to the end of its
// session: the tool process, its temporary directory, its policy and gate,
// the lazily materialized project directory. Heap-allocated and never
// moved: the method context refers to its members.
struct VfsRuntime::PreparedRun {
  PreparedRun(ProjectFiles& project, const ToolConfig& tool_config, const PrebuiltToolPolicy& prebuilt,
              const std::optional<std::string>& config_project_path, Inquirer* inquirer)
      : tool(tool_config),
        policy(prebuilt.For(tool_config, config_project_path, built_policy)),
        denying(inquirer == nullptr ? NewDenyingInquirer() : nullptr),
        gate(policy, inquirer == nullptr ? *denying : *inquirer),
        context{.project = project, .gate = gate} {}

  ToolConfig tool;
  std::optional<ToolPolicy> built_policy;  // when the run builds its own (PrebuiltToolPolicy::For)
  const ToolPolicy& policy;
  std::unique_ptr<Inquirer> denying;
  AccessGate gate;
  MethodContext context;
  SessionSetup setup;
  std::optional<PrivateTempDir> temp;
  std::optional<ChildProcess> child;
  // process.run children work in the project's real directory, made on the
  // first process.run (a synced copy for stores without one) and synced
  // back when the run ends.
  std::once_flag materialize_once;
  Result<std::unique_ptr<MaterializedView>> view = Status(StatusCode::kNoProject, "not materialized");

  SessionResult Run(CancelToken& cancel) { return RunToolSession(*child, setup, context, cancel); }
};

VfsRuntime::~VfsRuntime() = default;

Result<std::unique_ptr<VfsRuntime::PreparedRun>> VfsRuntime::Prepare(const ToolCall& call, const ToolConfig& tool) {
  if (!tool.command) {
    return Status(StatusCode::kInvalidArgument,
                  "Tool " + Quote(tool.name) + " has no command to run");
  }
  // Checked and defaulted as every runtime does (a missing required
  // argument never reaches the tool); without declared parameters the
  // input is free-form and goes on as written.
  TOOLVFS_ASSIGN_OR_RETURN(ConfigValue checked_arguments,
                           CheckCallArguments(tool.name, call.arguments_json, tool.parameters));
  std::string arguments_json = tool.parameters.empty() ? call.arguments_json : checked_arguments.ToJson();
  // The answers go into `init` as they are: they must be one JSON object.
  TOOLVFS_RETURN_IF_ERROR(ParseCallAnswers(tool.name, call.answers_json).status());
  auto run = std::make_unique<PreparedRun>(project_, tool, options_.prebuilt_policy,
                                           options_.confinement.config_project_path, options_.inquirer);
  TOOLVFS_ASSIGN_OR_RETURN(PrivateTempDir temp, PrivateTempDir::Create());
  run->temp.emplace(std::move(temp));

  LaunchSpec spec;
  spec.program = tool.command->program;
  spec.args = tool.command->args;
  spec.working_directory = options_.working_directory;
  spec.stdin_pipe_bytes = kToolStdinPipeBytes;
  spec.environment = FixedEnvironment(*run->temp);
  // The Python SDK is importable as `import toolvfs_tool`.
  if (!SdkDirectory().empty()) spec.environment.push_back("PYTHONPATH=" + SdkDirectory());
  // ... without leaving __pycache__ in the SDK's directory (a tool run
  // without the sandbox could write it).
  spec.environment.push_back("PYTHONDONTWRITEBYTECODE=1");
  // The tool itself never sees the project's directory; its rules only
  // keep install prefixes out of it, where there is one on disk.
  const std::string& root = project_.DisplayRoot();
  Result<ChildProcess> child =
      LaunchConfined(spec, tool, ToolKind::kVfs, root.starts_with('/') ? root : std::string());
  if (!child.ok()) return std::move(child).status();
  run->child.emplace(std::move(child).value());

  InitInfo init;
  init.tool_name = tool.name;
  init.arguments_json = std::move(arguments_json);
  init.answers_json = call.answers_json;
  init.options_json = OptionsJson(tool.options);
  init.root = project_.DisplayRoot();

  const LimitsConfig& limits = tool.sandbox.limits;
  run->setup = SessionSetup{
      .tool_name = tool.name,
      .init = BuildInitNotification(init),
      .limits = {.total_timeout = std::chrono::seconds(limits.timeout_s),
                 .idle_timeout = std::chrono::seconds(limits.idle_timeout_s),
                 .cancel_grace = std::chrono::seconds(limits.cancel_grace_s),
                 .max_message_bytes = static_cast<size_t>(limits.max_message_mb) << 20},
      .worker_threads = options_.worker_threads,
  };
  run->setup.audit = options_.audit;
  run->setup.reports = options_.reports;
  run->setup.call_id = call.id.empty() ? NewCallId() : call.id;

  PreparedRun* prepared = run.get();
  auto project_directory = [prepared, this]() -> Result<std::string> {
    std::call_once(prepared->materialize_once, [&] {
      prepared->view = project_.Materialize();
      if (!prepared->view.ok()) return;
      // process.run children write the copy: what their sandbox cannot
      // refuse is refused when it is synced back.
      auto write_policies = std::make_shared<ToolWritePolicies>();
      write_policies->Add(prepared->tool, options_.confinement.config_project_path);
      prepared->view.value()->FilterChanges(std::move(write_policies));
    });
    if (!prepared->view.ok()) return prepared->view.status();
    return prepared->view.value()->path();
  };
  run->context.host_environment = options_.host_environment;
  run->context.process_working_directory = project_directory;
  run->context.launch_process = [prepared, project_directory, this](const LaunchSpec& process) -> Result<ChildProcess> {
    TOOLVFS_ASSIGN_OR_RETURN(std::string directory, project_directory());
    return LaunchConfined(process, prepared->tool, ToolKind::kProcessChild, directory);
  };
  run->context.http = options_.http;
  // One read must fit one answer (tool_session.h, AnswerLimitBytes).
  run->context.max_read_bytes = run->setup.limits.max_message_bytes;
  run->context.max_answer_bytes = AnswerLimitBytes(run->setup.limits.max_message_bytes);
  run->context.answer_memory = &answer_memory_;
  return run;
}

Result<std::unique_ptr<StatefulRun>> VfsRuntime::Start(const ToolCall& call, const ToolConfig& tool,
                                                       CancelToken& cancel) {
  TOOLVFS_ASSIGN_OR_RETURN(std::unique_ptr<PreparedRun> prepared, Prepare(call, tool));
  std::shared_ptr<PreparedRun> run(std::move(prepared));
  return std::make_unique<StatefulRun>(
      tool.name, [run, &cancel](SessionControl& control, std::function<void(const std::string&)> on_state) mutable {
        run->setup.control = &control;
        run->setup.on_state = std::move(on_state);
        Outcome outcome = MapSessionResult(run->Run(cancel), run->tool.name);
        // The process group is gone; the materialized view is synced back
        // and the temporary directory removed before the run counts as
        // stopped.
        run.reset();
        return outcome;
      });
}

Result<Outcome> VfsRuntime::Execute(const ToolCall& call, const ToolConfig& tool,
                                    CancelToken& cancel) {
  if (tool.stateful) return ExecuteStateful(call, tool, cancel);
  TOOLVFS_ASSIGN_OR_RETURN(std::unique_ptr<PreparedRun> run, Prepare(call, tool));
  return MapSessionResult(run->Run(cancel), tool.name);
}

// A stateful tool for a caller that makes one call: the tool's questions
// are answered from call.answers_json (each at most once per run); the
// first question without an answer there ends the run as needs_input, for
// the caller to call again with the answer added.
Result<Outcome> VfsRuntime::ExecuteStateful(const ToolCall& call, const ToolConfig& tool, CancelToken& cancel) {
  TOOLVFS_ASSIGN_OR_RETURN(const ConfigValue::Object answers, ParseCallAnswers(tool.name, call.answers_json));
  TOOLVFS_ASSIGN_OR_RETURN(std::unique_ptr<StatefulRun> run, Start(call, tool, cancel));
  std::set<std::string, std::less<>> applied;
  uint64_t seen = 0;
  while (true) {
    ToolState state = run->WaitForQuestion(seen);
    if (state.kind == ToolState::Kind::kStopped) return std::move(*state.outcome);
    auto answer = answers.find(state.question->id);
    if (answer == answers.end() || applied.contains(state.question->id)) {
      run->Abort();
      Outcome outcome;
      outcome.kind = Outcome::Kind::kNeedsInput;
      outcome.question = std::move(state.question);
      outcome.content = std::move(state.content);
      outcome.stderr_tail = run->Wait().stderr_tail;
      return outcome;
    }
    applied.insert(answer->first);
    // Typed by the question like every other answer (SPEC.md §4.6): "yes"
    // for a Boolean question is applied as true.
    Result<ConfigValue> typed = TypeConfigAnswer(*state.question, answer->second, "the call's answers");
    if (!typed.ok()) return typed.status();  // the handle's destructor stops the tool
    // Refused only by a tool that stopped meanwhile: its own outcome is the
    // next state.
    static_cast<void>(run->Apply(typed->ToJson()));
  }
}

}  // namespace toolvfs
