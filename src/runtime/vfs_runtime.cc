#include "runtime/vfs_runtime.h"

#include <simdjson.h>

#include <chrono>
#include <mutex>
#include <utility>

#include "core/text.h"
#include "host/access_gate.h"
#include "host/init_message.h"
#include "host/tool_session.h"
#include "policy/tool_policy.h"
#include "protocol/json_writer.h"
#include "runtime/confined_launch.h"
#include "runtime/outcome_json.h"
#include "sandbox/private_temp_dir.h"

namespace toolvfs {
namespace {

namespace dom = simdjson::dom;

std::chrono::milliseconds Seconds(int64_t seconds) {
  return std::chrono::milliseconds(seconds * 1000);
}

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
      outcome.kind = Outcome::Kind::kCancelled;
      outcome.failure = StatusCode::kCancelled;
      outcome.is_error = true;
      outcome.error = ToolError{session.message, {}, false};
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
  return outcome;
}

std::string OptionsJson(const ConfigValue::Object& options) {
  return ConfigValue(options).ToJson();
}

}  // namespace

VfsRuntime::VfsRuntime(ProjectFiles& project, VfsRuntimeOptions options)
    : project_(project), options_(std::move(options)) {}

Result<ChildProcess> VfsRuntime::LaunchConfined(const LaunchSpec& spec, const ToolConfig& tool,
                                                ToolKind kind, const std::string& project_directory) {
  if (options_.launcher) return options_.launcher(spec, tool);
  return toolvfs::LaunchConfined(spec, tool, kind, project_directory,
                                 ConfinementOptions{.sandbox = options_.sandbox,
                                                    .hidden_for_testing = options_.sandbox_hidden_for_testing,
                                                    .warn = options_.warn,
                                                    .config_project_path = options_.config_project_path});
}

Result<Outcome> VfsRuntime::Execute(const ToolCall& call, const ToolConfig& tool,
                                    CancelToken& cancel) {
  if (!tool.command) {
    return Status(StatusCode::kInvalidArgument,
                  "Tool " + Quote(tool.name) + " has no command to run");
  }
  TOOLVFS_ASSIGN_OR_RETURN(PrivateTempDir temp, PrivateTempDir::Create());

  LaunchSpec spec;
  spec.program = tool.command->program;
  spec.args = tool.command->args;
  spec.working_directory = options_.working_directory;
  spec.environment = FixedEnvironment(temp);
  // The Python SDK is importable as `import toolvfs_tool`.
  spec.environment.push_back(std::string("PYTHONPATH=") + TOOLVFS_SDK_DIR);
  // The tool itself never sees the project's directory; its rules only
  // keep install prefixes out of it, where there is one on disk.
  const std::string& root = project_.DisplayRoot();
  Result<ChildProcess> child =
      LaunchConfined(spec, tool, ToolKind::kVfs, root.starts_with('/') ? root : std::string());
  if (!child.ok()) return std::move(child).status();

  InitInfo init;
  init.tool_name = tool.name;
  init.arguments_json = call.arguments_json;
  init.answers_json = call.answers_json;
  init.options_json = OptionsJson(tool.options);
  init.root = project_.DisplayRoot();

  const LimitsConfig& limits = tool.sandbox.limits;
  SessionSetup setup{
      .tool_name = tool.name,
      .init = BuildInitNotification(init),
      .limits = {.total_timeout = Seconds(limits.timeout_s),
                 .idle_timeout = Seconds(limits.idle_timeout_s),
                 .cancel_grace = Seconds(limits.cancel_grace_s),
                 .max_message_bytes = static_cast<size_t>(limits.max_message_mb) << 20},
      .worker_threads = options_.worker_threads,
  };
  setup.audit = options_.audit;
  setup.call_id = call.id.empty() ? NewCallId() : call.id;

  ToolPolicy policy = ToolPolicy::ForTool(tool, options_.config_project_path);
  std::unique_ptr<Inquirer> denying;
  Inquirer* inquirer = options_.inquirer;
  if (inquirer == nullptr) {
    denying = NewDenyingInquirer();
    inquirer = denying.get();
  }
  AccessGate gate(policy, *inquirer);
  // process.run children work in the project's real directory, made on the
  // first process.run (a synced copy for stores without one) and synced
  // back when the run ends.
  std::once_flag materialize_once;
  Result<std::unique_ptr<MaterializedView>> view = Status(StatusCode::kNoProject, "not materialized");
  auto project_directory = [&]() -> Result<std::string> {
    std::call_once(materialize_once, [&] { view = project_.Materialize(); });
    if (!view.ok()) return view.status();
    return view.value()->path();
  };
  MethodContext context{
      .project = project_,
      .gate = gate,
      .host_environment = options_.host_environment,
      .process_working_directory = project_directory,
      .launch_process = [&](const LaunchSpec& process) -> Result<ChildProcess> {
        TOOLVFS_ASSIGN_OR_RETURN(std::string directory, project_directory());
        return LaunchConfined(process, tool, ToolKind::kProcessChild, directory);
      },
      .http = options_.http,
  };
  SessionResult session = RunToolSession(child.value(), setup, context, cancel);
  return MapSessionResult(std::move(session), tool.name);
}

}  // namespace toolvfs
