#include "runtime/vfs_runtime.h"

#include <simdjson.h>

#include <chrono>
#include <utility>

#include "core/text.h"
#include "host/access_gate.h"
#include "host/init_message.h"
#include "host/tool_session.h"
#include "policy/tool_policy.h"
#include "protocol/json_writer.h"
#include "sandbox/private_temp_dir.h"

namespace toolvfs {
namespace {

namespace dom = simdjson::dom;

// Lines of the stderr tail put in the trace of a failed run.
constexpr size_t kTraceLines = 20;

std::chrono::milliseconds Seconds(int64_t seconds) {
  return std::chrono::milliseconds(seconds * 1000);
}

std::string ToJson(const dom::element& element) { return simdjson::minify(element); }

std::string TextOf(dom::element element, std::string_view key) {
  std::string_view text;
  if (element[key].get_string().get(text) == simdjson::SUCCESS) return std::string(text);
  return {};
}

// One block of a `result` content array (RFD 058). Unknown types are kept
// as they came, for front ends that know them.
Result<ContentBlock> ParseBlock(dom::element element, size_t index) {
  std::string_view type;
  if (!element.is_object() || element["type"].get_string().get(type) != simdjson::SUCCESS) {
    return Status(StatusCode::kInvalidArgument,
                  "content[" + std::to_string(index) + "] is not an object with a string 'type'");
  }
  ContentBlock block;
  block.type = std::string(type);
  block.json = ToJson(element);
  if (type == "text") {
    std::string_view text;
    if (element["text"].get_string().get(text) != simdjson::SUCCESS) {
      return Status(StatusCode::kInvalidArgument,
                    "content[" + std::to_string(index) + "] is a text block without a string 'text'");
    }
    block.text = std::string(text);
  } else if (type == "resource") {
    dom::element resource;
    if (element["resource"].get(resource) == simdjson::SUCCESS && resource.is_object()) {
      block.text = TextOf(resource, "text");
      if (block.text.empty()) block.text = "[resource " + TextOf(resource, "uri") + "]";
    } else {
      block.text = "[resource " + TextOf(element, "uri") + "]";
    }
  } else {
    block.text = "[" + block.type + " block]";
  }
  return block;
}

// `result {content}`: a string (one text block) or an array of blocks.
Result<std::vector<ContentBlock>> ParseContent(dom::element params) {
  dom::element content;
  if (params["content"].get(content) != simdjson::SUCCESS || content.is_null()) return std::vector<ContentBlock>();
  std::vector<ContentBlock> blocks;
  if (content.is_string()) {
    blocks.push_back(ContentBlock::Text(std::string(content.get_string().value())));
    return blocks;
  }
  dom::array array;
  if (content.get_array().get(array) != simdjson::SUCCESS) {
    return Status(StatusCode::kInvalidArgument,
                  "'content' is neither a string nor an array of content blocks");
  }
  size_t index = 0;
  for (dom::element element : array) {
    TOOLVFS_ASSIGN_OR_RETURN(ContentBlock block, ParseBlock(element, index++));
    blocks.push_back(std::move(block));
  }
  return blocks;
}

// `error {message, trace?, transient?}`; trace may be a string or strings.
ToolError ParseToolError(dom::element params) {
  ToolError error;
  error.message = TextOf(params, "message");
  if (error.message.empty()) error.message = "the tool reported an error without a message";
  dom::element trace;
  if (params["trace"].get(trace) == simdjson::SUCCESS) {
    if (trace.is_string()) {
      error.trace.emplace_back(trace.get_string().value());
    } else if (dom::array lines; trace.get_array().get(lines) == simdjson::SUCCESS) {
      for (dom::element line : lines) {
        error.trace.push_back(line.is_string() ? std::string(line.get_string().value())
                                               : ToJson(line));
      }
    }
  }
  bool transient = false;
  if (params["transient"].get_bool().get(transient) == simdjson::SUCCESS) {
    error.transient = transient;
  }
  return error;
}

std::vector<std::string> LastLines(std::string_view text, size_t count) {
  std::vector<std::string> lines;
  while (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  while (!text.empty() && lines.size() < count) {
    size_t newline = text.rfind('\n');
    std::string_view line = newline == std::string_view::npos ? text : text.substr(newline + 1);
    lines.insert(lines.begin(), std::string(line));
    text = newline == std::string_view::npos ? std::string_view() : text.substr(0, newline);
  }
  return lines;
}

Outcome FailedOutcome(StatusCode failure, std::string message, const std::string& stderr_tail) {
  Outcome outcome;
  outcome.is_error = true;
  outcome.failure = failure;
  outcome.error = ToolError{std::move(message), LastLines(stderr_tail, kTraceLines), false};
  return outcome;
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
  if (!options_.sandbox) return Launch(spec);

  SandboxRequest request;
  ToolAccessRequest& access = request.access;
  access.kind = kind;
  access.program = spec.program;
  access.args = spec.args;
  access.working_directory = spec.working_directory;
  access.path_env = std::string(kFixedPath);
  for (const std::string& entry : spec.environment) {
    if (entry.starts_with("PATH=")) access.path_env = entry.substr(5);
    // HOME and TMPDIR name the same private directory (FixedEnvironment).
    if (entry.starts_with("TMPDIR=")) access.private_temp_dir = entry.substr(7);
  }
  access.sdk_dir = TOOLVFS_SDK_DIR;
  access.system_read = tool.sandbox.system_read;
  access.project_root = project_directory;
  const bool network_allowed = tool.has_sandbox_table && !tool.sandbox.network_allow.empty();
  if (kind == ToolKind::kProcessChild) {
    // The calling tool's filesystem policy (SPEC.md §5); without a sandbox
    // table, the default: the project readable.
    access.readable_prefixes = tool.has_sandbox_table ? tool.sandbox.filesystem_allow
                                                      : std::vector<std::string>{""};
    access.writable_prefixes = tool.sandbox.filesystem_writable.all ? access.readable_prefixes
                                                                    : tool.sandbox.filesystem_writable.prefixes;
    access.network_allowed = network_allowed;
  }
  request.seccomp.allow_process_creation = kind != ToolKind::kVfs;
  request.seccomp.deny_network_sockets = kind == ToolKind::kVfs || !network_allowed;
  // SandboxProfile::Build drops max_processes where no user namespace can
  // be made (it would cap the host's user, not the tool).
  request.limits = FromLimitsConfig(tool.sandbox.limits);
  request.hidden_for_testing = options_.sandbox_hidden_for_testing;

  TOOLVFS_ASSIGN_OR_RETURN(SandboxProfile profile, SandboxProfile::Build(request, *options_.sandbox));
  if (options_.warn) {
    for (const std::string& missing : profile.unenforced()) {
      options_.warn("tool " + Quote(tool.name) + " runs without " + missing + " (--sandbox=best-effort)");
    }
  }
  LaunchSpec confined = spec;
  confined.sandbox = &profile;
  return Launch(confined);
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
  // process.run children work in the project's real directory: free for
  // the fs store, a synced temporary copy for the others.
  Result<std::unique_ptr<MaterializedView>> view = project_.Materialize();
  const std::string project_directory = view.ok() ? view.value()->path() : std::string();
  Result<ChildProcess> child = LaunchConfined(spec, tool, ToolKind::kVfs, project_directory);
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
  MethodContext context{
      .project = project_,
      .gate = gate,
      .host_environment = options_.host_environment,
      .process_working_directory = project_directory,
      .launch_process = [&](const LaunchSpec& process) -> Result<ChildProcess> {
        return LaunchConfined(process, tool, ToolKind::kProcessChild, project_directory);
      },
      .http = options_.http,
  };
  SessionResult session = RunToolSession(child.value(), setup, context, cancel);
  return MapSessionResult(std::move(session), tool.name);
}

}  // namespace toolvfs
