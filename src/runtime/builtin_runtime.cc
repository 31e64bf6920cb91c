#include "runtime/builtin_runtime.h"

#include <poll.h>
#include <simdjson.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <thread>
#include <utility>

#include "core/text.h"
#include "core/unique_fd.h"
#include "host/access_gate.h"
#include "host/methods.h"
#include "host/request_audit.h"
#include "policy/tool_policy.h"
#include "project/path.h"
#include "protocol/jsonrpc.h"
#include "runtime/argument_validation.h"
#include "runtime/outcome_json.h"
#include "session/snapshot_tools.h"
#include "session/session_tools.h"
#include "session/session_workspace.h"
#include "protocol/wire_errors.h"

namespace toolvfs {
namespace {

namespace dom = simdjson::dom;
using Clock = std::chrono::steady_clock;

// What a builtin does besides its fs.* request: the request's params from
// the checked arguments, and the content of a successful answer.
struct BuiltinBehaviour {
  // The fs.* params; null: the arguments as they are (same names).
  ConfigValue::Object (*params)(ConfigValue::Object arguments) = nullptr;
  // The content, from the checked arguments and the fs.* `result` object.
  Result<std::vector<ContentBlock>> (*content)(const ConfigValue::Object& arguments, dom::element result) =
      nullptr;
};

// A builtin as declared: its schema is JSON text, parsed once.
struct BuiltinDeclaration {
  std::string_view name;
  std::string_view method;
  std::string_view description;
  std::string_view parameters_json;
  BuiltinBehaviour behaviour;
};

// --- Content ---------------------------------------------------------------

// The argument `name` (a string after validation), or "".
const std::string& StringArgument(const ConfigValue::Object& arguments, std::string_view name) {
  static const std::string kEmpty;
  auto found = arguments.find(name);
  return found != arguments.end() && found->second.is_string() ? found->second.as_string() : kEmpty;
}

// A path argument as messages show it: normalized, quoted, "." for the
// root. The request succeeded, so the path normalizes.
std::string ShownPath(const ConfigValue::Object& arguments, std::string_view name) {
  const std::string& path = StringArgument(arguments, name);
  Result<std::string> normalized = NormalizePath(path);
  return DisplayPath(normalized.ok() ? *normalized : path);
}

// `path` as the URI of a resource block: "project:" and the project path,
// with every byte outside RFC 3986's unreserved set and '/' percent-encoded.
std::string ProjectUri(std::string_view path) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string uri = "project:";
  for (char c : path) {
    unsigned char byte = static_cast<unsigned char>(c);
    bool unreserved = (byte >= 'a' && byte <= 'z') || (byte >= 'A' && byte <= 'Z') ||
                      (byte >= '0' && byte <= '9') || c == '-' || c == '.' || c == '_' || c == '~' ||
                      c == '/';
    if (unreserved) {
      uri += c;
    } else {
      uri += '%';
      uri += kHex[byte >> 4];
      uri += kHex[byte & 0xf];
    }
  }
  return uri;
}

// The result object as compact JSON text in one text block: listings,
// metadata and grep matches keep the protocol's documented shape.
Result<std::vector<ContentBlock>> JsonContent(const ConfigValue::Object&, dom::element result) {
  return std::vector<ContentBlock>{ContentBlock::Text(simdjson::minify(result))};
}

// read_file: text as it is; anything else (fs.read sent it as base64) as a
// resource block whose `blob` holds the bytes, like an MCP embedded
// resource, with a line for people as its text.
Result<std::vector<ContentBlock>> ReadContent(const ConfigValue::Object& arguments, dom::element result) {
  std::string_view content;
  uint64_t size = 0;
  if (result["content"].get(content) != simdjson::SUCCESS || result["size"].get(size) != simdjson::SUCCESS) {
    return Status(StatusCode::kInternal, "fs.read answered without content or size");
  }
  std::string_view encoding;
  if (result["encoding"].get(encoding) != simdjson::SUCCESS) {
    return std::vector<ContentBlock>{ContentBlock::Text(std::string(content))};
  }
  Result<std::string> normalized = NormalizePath(StringArgument(arguments, "path"));
  std::string path = normalized.ok() ? *normalized : StringArgument(arguments, "path");
  return std::vector<ContentBlock>{ContentBlock::Blob(
      ProjectUri(path), "application/octet-stream", content,
      "[" + DisplayPath(path) + ": not UTF-8 text, " + std::to_string(size) +
          " bytes in the file; the content read is base64 in the resource's blob]")};
}

ConfigValue::Object WriteParams(ConfigValue::Object arguments) {
  // fs.write knows one encoding name, base64; text is its default.
  auto encoding = arguments.find("encoding");
  if (encoding != arguments.end() && encoding->second == ConfigValue("utf-8")) arguments.erase(encoding);
  return arguments;
}

Result<std::vector<ContentBlock>> WriteContent(const ConfigValue::Object& arguments, dom::element result) {
  uint64_t size = 0;
  if (result["size"].get(size) != simdjson::SUCCESS) {
    return Status(StatusCode::kInternal, "fs.write answered without size");
  }
  const std::string& mode = StringArgument(arguments, "mode");
  std::string bytes = std::to_string(size) + (size == 1 ? " byte" : " bytes");
  std::string path = ShownPath(arguments, "path");
  std::string line = mode == "create"   ? "Created " + path + " (" + bytes + ")"
                     : mode == "append" ? "Appended " + bytes + " to " + path
                                        : "Wrote " + bytes + " to " + path;
  return std::vector<ContentBlock>{ContentBlock::Text(std::move(line))};
}

Result<std::vector<ContentBlock>> DeleteContent(const ConfigValue::Object& arguments, dom::element) {
  return std::vector<ContentBlock>{ContentBlock::Text("Deleted " + ShownPath(arguments, "path"))};
}

Result<std::vector<ContentBlock>> MoveContent(const ConfigValue::Object& arguments, dom::element) {
  return std::vector<ContentBlock>{
      ContentBlock::Text("Moved " + ShownPath(arguments, "from") + " to " + ShownPath(arguments, "to"))};
}

// --- The registry ----------------------------------------------------------

// Sorted by name. Defaults and bounds live here, so that a model sees them
// in the listing and the fs.* handler gets complete params.
constexpr BuiltinDeclaration kDeclarations[] = {
    {"delete_file", "fs.delete",
     "Deletes a file of the project, or a directory with everything in it when recursive is true",
     R"json({"path":{"type":"string","required":true,"description":"Project path of the file or directory"},
         "recursive":{"type":"boolean","default":false,"description":"Delete a directory and everything in it"}})json",
     {.content = DeleteContent}},
    {"file_info", "fs.metadata",
     "Tells whether a project path is a file, a directory or a symlink, its size in bytes and when it was "
     "last modified: JSON {kind, size, modified}",
     R"json({"path":{"type":"string","required":true,"description":"Project path"}})json",
     {.content = JsonContent}},
    {"grep_files", "fs.grep",
     "Searches the project's files with an RE2 regular expression (like ripgrep: skips .git, ignored and "
     "binary files) and returns JSON {matches: [{path, lines: [{line_number, content, is_match}]}], "
     "truncated}",
     R"json({"pattern":{"type":"string","required":true,"description":"RE2 regular expression"},
         "paths":{"type":"array","items":{"type":"string"},"description":"Files or directories to search (default: the whole project)"},
         "extensions":{"type":"array","items":{"type":"string"},"description":"Only files with these extensions, e.g. [\"py\", \"md\"]"},
         "context":{"type":"integer","minimum":0,"maximum":100,"default":0,"description":"Lines of context before and after each match"},
         "case_insensitive":{"type":"boolean","default":false},
         "max_matches":{"type":"integer","minimum":1,"maximum":100000,"default":1000,"description":"Matching lines returned at most; truncated is true when there were more"},
         "include_ignored":{"type":"boolean","default":false,"description":"Also search files ignored by .gitignore and .ignore"}})json",
     {.content = JsonContent}},
    {"list_directory", "fs.list_dir",
     "Lists a directory of the project, sorted by name: JSON {entries: [{path (the name), kind: "
     "file|dir|symlink}], total}; page with offset and limit",
     R"json({"path":{"type":"string","default":".","description":"Project path of the directory (default: the project root)"},
         "offset":{"type":"integer","minimum":0,"default":0,"description":"Entries to skip"},
         "limit":{"type":"integer","minimum":0,"default":1000,"description":"Entries returned at most; total counts them all"}})json",
     {.content = JsonContent}},
    {"move_file", "fs.rename",
     "Moves or renames a file or directory of the project, creating the destination's parent directories",
     R"json({"from":{"type":"string","required":true,"description":"Project path to move"},
         "to":{"type":"string","required":true,"description":"Its new project path"},
         "overwrite":{"type":"boolean","default":false,"description":"Replace what is at the destination"}})json",
     {.content = MoveContent}},
    {"read_file", "fs.read",
     "Reads a file of the project: its text, or base64 for content that is not UTF-8; offset and length "
     "read a part (in bytes)",
     R"json({"path":{"type":"string","required":true,"description":"Project path of the file"},
         "offset":{"type":"integer","minimum":0,"description":"First byte to read"},
         "length":{"type":"integer","minimum":0,"description":"Bytes to read at most"}})json",
     {.content = ReadContent}},
    {"write_file", "fs.write",
     "Writes a file of the project, creating its parent directories; mode create fails if it exists, "
     "append adds to its end",
     R"json({"path":{"type":"string","required":true,"description":"Project path of the file"},
         "content":{"type":"string","required":true,"description":"The new content (text, or base64 with encoding base64)"},
         "mode":{"type":"string","enum":["overwrite","create","append"],"default":"overwrite"},
         "encoding":{"type":"string","enum":["utf-8","base64"],"default":"utf-8"}})json",
     {.params = WriteParams, .content = WriteContent}},
};

struct Builtin {
  BuiltinToolInfo info;
  BuiltinBehaviour behaviour;
};

const std::vector<Builtin>& Registry() {
  static const std::vector<Builtin> registry = [] {
    std::vector<Builtin> builtins;
    for (const BuiltinDeclaration& declaration : kDeclarations) {
      Result<ConfigValue> parameters = ParseJsonValue(declaration.parameters_json);
      if (!parameters.ok() || !parameters->is_object()) {
        // Constant data: a typo here is caught by the first test that runs.
        std::fprintf(stderr, "toolvfs: builtin %s: bad parameter schema: %s\n",
                     std::string(declaration.name).c_str(),
                     parameters.ok() ? "not an object" : parameters.status().message().c_str());
        std::abort();
      }
      builtins.push_back({.info = {.name = std::string(declaration.name),
                                   .description = std::string(declaration.description),
                                   .parameters = std::move(parameters->as_object()),
                                   .method = std::string(declaration.method)},
                          .behaviour = declaration.behaviour});
    }
    return builtins;
  }();
  return registry;
}

const Builtin* FindBuiltin(std::string_view name) {
  for (const Builtin& builtin : Registry()) {
    if (builtin.info.name == name) return &builtin;
  }
  return nullptr;
}

// --- Running ---------------------------------------------------------------

// While alive, ends a question on the screen once `cancel` fires: the
// terminal inquirer waits for input and knows nothing of the token, and the
// builtin asks on the caller's thread, so someone else has to watch.
class QuestionCanceller {
 public:
  QuestionCanceller(const CancelToken& cancel, AccessGate& gate) : stop_(::eventfd(0, EFD_CLOEXEC)) {
    if (!stop_ || cancel.fd() < 0) return;  // no way to wait: questions stay uncancellable
    thread_ = std::thread([this, &cancel, &gate] {
      struct pollfd fds[2] = {{cancel.fd(), POLLIN, 0}, {stop_.get(), POLLIN, 0}};
      while (true) {
        int ready = ::poll(fds, 2, -1);
        if (ready < 0 && errno == EINTR) continue;
        if (ready < 0 || fds[1].revents != 0) return;
        if (fds[0].revents != 0) {
          gate.CancelQuestions();
          return;
        }
      }
    });
  }
  QuestionCanceller(const QuestionCanceller&) = delete;
  QuestionCanceller& operator=(const QuestionCanceller&) = delete;
  ~QuestionCanceller() {
    if (!thread_.joinable()) return;
    uint64_t one = 1;
    static_cast<void>(::write(stop_.get(), &one, sizeof one));
    thread_.join();
  }

 private:
  UniqueFd stop_;
  std::thread thread_;
};

Outcome CancelledOutcome(const ToolConfig& tool) {
  return toolvfs::CancelledOutcome("Tool " + Quote(tool.name) + " was cancelled");
}

Outcome ErrorOutcome(std::string message) {
  Outcome outcome;
  outcome.is_error = true;
  outcome.error = ToolError{std::move(message), {}, false};
  return outcome;
}

std::string BuiltinNames() {
  std::string names;
  for (const BuiltinToolInfo& tool : BuiltinTools()) {
    if (!names.empty()) names += ", ";
    names += tool.name;
  }
  return names;
}

// The checked arguments of `call`, defaults filled in.
Result<ConfigValue::Object> CheckArguments(const ToolCall& call, const ToolConfig& tool, const Builtin& builtin) {
  TOOLVFS_ASSIGN_OR_RETURN(ConfigValue checked,
                           CheckCallArguments(tool.name, call.arguments_json, builtin.info.parameters));
  if (!checked.is_object()) {
    return Status(StatusCode::kInvalidArgument, "Tool " + Quote(tool.name) + ": the arguments must be a JSON object");
  }
  return std::move(checked.as_object());
}

// The handlers word some errors for a tool that speaks the protocol; the
// builtin's caller never saw params.
std::string WithoutProtocolPrefix(std::string_view message) {
  constexpr std::string_view kPrefix = "Invalid params: ";
  if (message.starts_with(kPrefix)) message.remove_prefix(kPrefix.size());
  return std::string(message);
}

// The session tools' schemas, parsed once, in SessionTools() order.
const std::vector<ConfigValue::Object>& SessionSchemas() {
  static const std::vector<ConfigValue::Object> schemas = [] {
    std::vector<ConfigValue::Object> parsed;
    for (const SessionToolInfo& tool : SessionTools()) {
      Result<ConfigValue> parameters = ParseJsonValue(tool.parameters_json);
      if (!parameters.ok() || !parameters->is_object()) {
        std::fprintf(stderr, "toolvfs: session tool %s: bad parameter schema\n", std::string(tool.name).c_str());
        std::abort();
      }
      parsed.push_back(std::move(parameters->as_object()));
    }
    return parsed;
  }();
  return schemas;
}

// A judged path as audit records and messages show it: "." for the root.
std::string ShownTarget(const std::string& path) { return path.empty() ? "." : path; }

const ConfigValue::Object& SessionSchema(std::string_view name) {
  const std::vector<SessionToolInfo>& tools = SessionTools();
  for (size_t i = 0; i < tools.size(); ++i) {
    if (tools[i].name == name) return SessionSchemas()[i];
  }
  static const ConfigValue::Object kNone;
  return kNone;
}

}  // namespace

const std::vector<BuiltinToolInfo>& BuiltinTools() {
  static const std::vector<BuiltinToolInfo> tools = [] {
    std::vector<BuiltinToolInfo> infos;
    for (const Builtin& builtin : Registry()) infos.push_back(builtin.info);
    // The snapshot tools act on the store's snapshots, not through an fs.*
    // method (session/snapshot_tools.h).
    for (const SnapshotToolInfo& tool : SnapshotTools()) {
      Result<ConfigValue> parameters = ParseJsonValue(tool.parameters_json);
      if (!parameters.ok() || !parameters->is_object()) {
        std::fprintf(stderr, "toolvfs: snapshot tool %s: bad parameter schema\n", std::string(tool.name).c_str());
        std::abort();
      }
      std::string method(tool.name);
      method.replace(method.find('_'), 1, ".");
      infos.push_back(BuiltinToolInfo{std::string(tool.name), std::string(tool.description),
                                      std::move(parameters->as_object()), std::move(method)});
    }
    std::sort(infos.begin(), infos.end(),
              [](const BuiltinToolInfo& a, const BuiltinToolInfo& b) { return a.name < b.name; });
    return infos;
  }();
  return tools;
}

const BuiltinToolInfo* FindBuiltinTool(std::string_view name) {
  for (const BuiltinToolInfo& tool : BuiltinTools()) {
    if (tool.name == name) return &tool;
  }
  return nullptr;
}

BuiltinRuntime::BuiltinRuntime(ProjectFiles& project, BuiltinRuntimeOptions options)
    : project_(project), options_(std::move(options)) {}

Result<Outcome> BuiltinRuntime::Execute(const ToolCall& call, const ToolConfig& tool, CancelToken& cancel) {
  // A session workspace is marked by its session record (docs/sessions.md,
  // "Which tools run"); the caller found it: there the session suite
  // replaces the generic four.
  const bool is_session = options_.session_workspace;
  if (is_session && FindSessionTool(tool.name) != nullptr) return ExecuteSessionTool(call, tool, cancel);
  if (options_.session_id && !is_session) {
    return Status(StatusCode::kInvalidArgument, "--session " + Quote(*options_.session_id) + ": " +
                                                    Quote(project_.DisplayRoot()) +
                                                    " is not a session workspace (create one with `toolvfs "
                                                    "workspace init NAME --session`)");
  }
  if (FindSnapshotTool(tool.name) != nullptr) return ExecuteSnapshotTool(call, tool, cancel);
  const Builtin* builtin = FindBuiltin(tool.name);
  if (builtin == nullptr) {
    return Status(StatusCode::kInvalidArgument,
                  "Tool " + Quote(tool.name) + " has source \"builtin\", but there is no builtin named " +
                      Quote(tool.name) + "; the builtins are " + BuiltinNames());
  }
  const MethodSpec* method = FindMethod(builtin->info.method);
  if (method == nullptr) {
    return Status(StatusCode::kInternal, "builtin " + Quote(tool.name) + ": the host has no method " +
                                             builtin->info.method);
  }
  TOOLVFS_ASSIGN_OR_RETURN(ConfigValue::Object arguments, CheckArguments(call, tool, *builtin));
  if (cancel.cancelled()) return CancelledOutcome(tool);

  ConfigValue::Object params = builtin->behaviour.params ? builtin->behaviour.params(arguments) : arguments;
  // The request as a tool would send it, through the host's own parser.
  const WireMessage line = SerializeRequest(1, method->name, ConfigValue(params).ToJson());
  MessageParser parser;
  ParsedLine parsed = parser.Parse(line.line());
  if (!parsed.is_message() || parsed.message().kind() != MessageKind::kRequest) {
    return Status(StatusCode::kInternal, "builtin " + Quote(tool.name) + " built an unreadable request");
  }
  const Message& request = parsed.message();

  std::optional<ToolPolicy> built;
  const ToolPolicy& policy = options_.prebuilt_policy.For(tool, options_.config_project_path, built);
  std::unique_ptr<Inquirer> denying;
  Inquirer* inquirer = options_.inquirer;
  if (inquirer == nullptr) {
    denying = NewDenyingInquirer();
    inquirer = denying.get();
  }
  AccessGate gate(policy, *inquirer);
  MethodContext context{.project = project_, .gate = gate};
  // On the caller's thread, which may wait for the user: questions are
  // asked right here (may_block), and end when the run is cancelled.
  RequestScope scope(request.id(), method->name, /*may_block=*/true);
  scope.set_cancel_flag(&cancel.flag());
  const Clock::time_point started = Clock::now();
  WireMessage answer = [&] {
    std::optional<QuestionCanceller> canceller;
    if (inquirer->asks_user() && !inquirer->ends_questions_on_cancel()) canceller.emplace(cancel, gate);
    return method->handler(request, context, scope);
  }();
  if (options_.audit != nullptr) {
    // One record per request, refused ones included (request_audit.h).
    AuditRecord record = AuditRecordForAnswer({request.method(), request.params(), &scope, scope.error_code()},
                                              tool.name, call.id.empty() ? NewCallId() : call.id);
    record.bytes_in = line.size();  // with its newline, as a tool's line is counted
    record.bytes_out = answer.size();
    record.duration_us = static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - started).count());
    options_.audit->Record(record);
  }

  ParsedLine response = parser.Parse(answer.line());
  if (!response.is_message() || response.message().kind() != MessageKind::kResponse) {
    return Status(StatusCode::kInternal, "builtin " + Quote(tool.name) + ": " + builtin->info.method +
                                             " gave an unreadable answer");
  }
  const Message& reply = response.message();
  if (reply.is_error()) {
    // A grep stopped between files, a question ended unanswered: the run
    // was cancelled, whatever the handler made of it.
    if (cancel.cancelled()) return CancelledOutcome(tool);
    Outcome refused = ErrorOutcome(WithoutProtocolPrefix(reply.error_message()));
    if (reply.error_code() == kJsonRpcAccessDenied) refused.denied_requests = 1;
    return refused;
  }
  dom::parser result_parser;
  dom::element result;
  if (result_parser.parse(reply.result_json()).get(result) != simdjson::SUCCESS || !result.is_object()) {
    return Status(StatusCode::kInternal, "builtin " + Quote(tool.name) + ": " + builtin->info.method +
                                             " answered without a result object");
  }
  Result<std::vector<ContentBlock>> content = builtin->behaviour.content(arguments, result);
  if (!content.ok()) return ErrorOutcome(content.status().message());
  Outcome outcome;
  outcome.content = std::move(content).value();
  return outcome;
}

const ConfigValue::Object& BuiltinRuntime::Parameters(const ToolConfig& tool) const {
  if (options_.session_workspace && FindSessionTool(tool.name) != nullptr) return SessionSchema(tool.name);
  if (const BuiltinToolInfo* builtin = FindBuiltinTool(tool.name)) return builtin->parameters;
  return tool.parameters;
}

Result<Outcome> BuiltinRuntime::ExecuteSessionTool(const ToolCall& call, const ToolConfig& tool,
                                                   CancelToken& cancel) {
  TOOLVFS_ASSIGN_OR_RETURN(ConfigValue checked,
                           CheckCallArguments(tool.name, call.arguments_json, SessionSchema(tool.name)));
  if (!checked.is_object()) {
    return Status(StatusCode::kInvalidArgument, "Tool " + Quote(tool.name) + ": the arguments must be a JSON object");
  }
  const ConfigValue::Object& arguments = checked.as_object();
  if (cancel.cancelled()) return CancelledOutcome(tool);
  TOOLVFS_ASSIGN_OR_RETURN(std::unique_ptr<SessionWorkspace> session, SessionWorkspace::Open(project_));
  const bool writes = FindSessionTool(tool.name)->writes;
  return ExecuteJudged(
      call, tool, cancel, "session." + tool.name,
      [&](JudgedCall& judged) -> Status {
        TOOLVFS_ASSIGN_OR_RETURN(SessionToolTarget target, SessionToolTargetOf(*session, tool.name, arguments));
        judged.path = target.path;
        if (target.mode) judged.method += ":" + *target.mode;
        judged.access = writes ? FileAccess::kWrite : FileAccess::kRead;
        if (options_.session_id) TOOLVFS_RETURN_IF_ERROR(session->CheckSession(*options_.session_id));
        return OkStatus();
      },
      // Every file delete_file removes is judged too: deleting `src` must
      // not take a file the policy keeps (`src/.env`) with it.
      [&](const WriteCheck& check) { return RunSessionTool(*session, tool.name, arguments, check); });
}

Result<Outcome> BuiltinRuntime::ExecuteSnapshotTool(const ToolCall& call, const ToolConfig& tool,
                                                    CancelToken& cancel) {
  TOOLVFS_ASSIGN_OR_RETURN(ConfigValue checked,
                           CheckCallArguments(tool.name, call.arguments_json, FindBuiltinTool(tool.name)->parameters));
  if (!checked.is_object()) {
    return Status(StatusCode::kInvalidArgument, "Tool " + Quote(tool.name) + ": the arguments must be a JSON object");
  }
  const ConfigValue::Object& arguments = checked.as_object();
  if (cancel.cancelled()) return CancelledOutcome(tool);
  std::unique_ptr<SessionWorkspace> session;
  if (options_.session_workspace) {
    TOOLVFS_ASSIGN_OR_RETURN(session, SessionWorkspace::Open(project_));
  }
  const SnapshotToolInfo* info = FindSnapshotTool(tool.name);
  return ExecuteJudged(
      call, tool, cancel, FindBuiltinTool(tool.name)->method,  // snapshot.create, ...
      [&](JudgedCall& judged) -> Status {
        // A snapshot reads the whole project: the policy judges reading its
        // root. A restore writes what changed since the snapshot: each such
        // path is judged as a write (WriteCheck), on its own.
        judged.path = "";
        judged.access = FileAccess::kRead;
        judged.writes_need_own_decision = info->writes;
        if (session && options_.session_id) TOOLVFS_RETURN_IF_ERROR(session->CheckSession(*options_.session_id));
        return OkStatus();
      },
      [&](const WriteCheck& check) { return RunSnapshotTool(project_, session.get(), tool.name, arguments, check); });
}

Result<Outcome> BuiltinRuntime::ExecuteJudged(const ToolCall& call, const ToolConfig& tool, CancelToken& cancel,
                                              const std::string& scope_method,
                                              const std::function<Status(JudgedCall&)>& judge,
                                              const std::function<Result<std::string>(const WriteCheck&)>& act) {
  std::optional<ToolPolicy> built;
  const ToolPolicy& policy = options_.prebuilt_policy.For(tool, options_.config_project_path, built);
  std::unique_ptr<Inquirer> denying;
  Inquirer* inquirer = options_.inquirer;
  if (inquirer == nullptr) {
    denying = NewDenyingInquirer();
    inquirer = denying.get();
  }
  AccessGate gate(policy, *inquirer);
  RequestScope scope(RequestId(int64_t{1}), scope_method, /*may_block=*/true);
  scope.set_cancel_flag(&cancel.flag());
  const Clock::time_point started = Clock::now();
  JudgedCall judged{.method = scope_method};
  // Validate, check the session, judge, act: an error at any step changes
  // nothing and is the outcome.
  Result<std::string> result = [&]() -> Result<std::string> {
    TOOLVFS_RETURN_IF_ERROR(judge(judged));
    std::optional<QuestionCanceller> canceller;
    if (inquirer->asks_user() && !inquirer->ends_questions_on_cancel()) canceller.emplace(cancel, gate);
    TOOLVFS_RETURN_IF_ERROR(gate.Authorize(scope, FileAccessName(judged.access), ShownTarget(judged.path),
                                           policy.files.Check(judged.access, judged.path)));
    return act([&](const std::vector<std::string>& paths) -> Status {
      // A policy denial refuses before any question; the paths the policy
      // leaves open are one question together (a restore of 40 files is
      // not 40): AccessGate::AuthorizeAll.
      std::vector<AccessGate::Judged> judged_paths;
      for (const std::string& path : paths) {
        PolicyDecision decision = policy.files.Check(FileAccess::kWrite, path);
        if (decision.decision == Decision::kAllow) continue;
        if (decision.decision == Decision::kDeny || judged.writes_need_own_decision) {
          judged_paths.push_back({path, std::move(decision)});
        }
      }
      return gate.AuthorizeAll(scope, FileAccessName(FileAccess::kWrite), judged_paths);
    });
  }();
  if (options_.audit != nullptr) {
    AuditRecord record;
    record.timestamp_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::system_clock::now().time_since_epoch())
                              .count();
    record.tool = tool.name;
    record.call_id = call.id.empty() ? NewCallId() : call.id;
    record.method = judged.method;
    // What the gate refused, every path of a refused batch; else the call's own target.
    record.target = scope.refused_targets().empty() ? ShownTarget(judged.path) : JoinTargets(scope.refused_targets());
    record.code = result.ok() ? 0 : JsonRpcErrorCode(result.status().code());
    if (scope.decided()) {
      record.decision = scope.decision();
      record.rule = scope.rule();
    } else {
      record.decision = AuditDecision::kDeny;
      record.rule = RefusalRule(record.code);
    }
    record.bytes_in = call.arguments_json.size();
    record.bytes_out = result.ok() ? result->size() : result.status().message().size();
    record.duration_us = static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - started).count());
    options_.audit->Record(record);
  }
  if (!result.ok()) {
    if (cancel.cancelled()) return CancelledOutcome(tool);
    return ErrorOutcome(result.status().message());
  }
  Outcome outcome;
  outcome.content.push_back(ContentBlock::Text(std::move(result).value()));
  return outcome;
}

}  // namespace toolvfs
