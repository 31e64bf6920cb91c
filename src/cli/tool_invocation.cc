#include "cli/tool_invocation.h"

#include <fcntl.h>
#include <signal.h>
#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <simdjson.h>
#include <unistd.h>

extern char** environ;

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "cli/rule_writer.h"
#include "cli/terminal.h"
#include "cli/tool_report_display.h"
#include "core/io.h"
#include "core/text.h"
#include "core/unique_fd.h"
#include "host/tool_session.h"
#include "policy/file_policy.h"
#include "project/sql/postgres_store.h"
#include "protocol/json_writer.h"
#include "runtime/argument_validation.h"
#include "runtime/outcome_json.h"
#include "runtime/session_quota_runtime.h"
#include "runtime/sdk_location.h"
#include "runtime/stateful_tool.h"

namespace toolvfs {
namespace {

namespace fs = std::filesystem;

// --args and --args @FILE: more than this is surely a mistake (the tool
// gets the arguments in its init line, which the message limit bounds too).
constexpr uint64_t kMaxArgumentsBytes = uint64_t{64} << 20;

// How much of a failed tool's stderr the text output shows: the last lines,
// each cut at a length that still fits a terminal's scrollback.
constexpr size_t kStderrTailLines = 10;
constexpr size_t kStderrLineBytes = 1000;

// --- Ctrl+C ----------------------------------------------------------------

// The token the signal handler cancels. A signal handler can only reach
// what is global; this is set for the duration of one run (InterruptScope).
std::atomic<CancelToken*> g_interrupt_target{nullptr};
static_assert(std::atomic<CancelToken*>::is_always_lock_free,
              "the signal handler needs a lock-free pointer");
volatile sig_atomic_t g_interrupt_signal = 0;
// What the first signal prints on a terminal (built before the run: a
// handler cannot format), or null; and what a second Ctrl+C prints when it
// stops the tool at once, or null when a second one changes nothing.
std::atomic<const std::string*> g_interrupt_notice{nullptr};
std::atomic<const std::string*> g_kill_notice{nullptr};
// Whether a second SIGINT stops the tool with SIGKILL (tools run as a
// process by the vfs and stdio runtimes).
volatile sig_atomic_t g_second_interrupt_kills = 0;
volatile sig_atomic_t g_kill_sent = 0;

extern "C" void OnInterrupt(int signal_number) {
  const bool first = g_interrupt_signal == 0;
  g_interrupt_signal = signal_number;
  CancelToken* token = g_interrupt_target.load(std::memory_order_acquire);
  // The user pressed Ctrl+C and the tool may take its grace period to stop:
  // say so at once rather than seem to hang. write(2) is async-signal-safe.
  if (first) {
    const std::string* notice = g_interrupt_notice.load(std::memory_order_acquire);
    if (notice != nullptr) static_cast<void>(::write(STDERR_FILENO, notice->data(), notice->size()));
    // Cancel() is async-signal-safe (an atomic store and a write(2)).
    if (token != nullptr) token->Cancel();
    return;
  }
  // A second Ctrl+C does not wait for the grace period: the tool is killed
  // (its cleanup is cut short; the user asked). SIGTERM again changes
  // nothing, so a supervisor's repeated TERM never skips the grace.
  // A third one changes nothing more, and says nothing again.
  if (signal_number != SIGINT || g_second_interrupt_kills == 0 || g_kill_sent != 0) return;
  g_kill_sent = 1;
  const std::string* notice = g_kill_notice.load(std::memory_order_acquire);
  if (notice != nullptr) static_cast<void>(::write(STDERR_FILENO, notice->data(), notice->size()));
  if (token != nullptr) token->RequestKill();
}

// For the lifetime of the scope: SIGINT and SIGTERM cancel `token` instead
// of killing toolvfs, and SIGPIPE is ignored (writing to a tool that has
// just exited must be an error, not the end of the host). A signal the
// caller started us with ignored (nohup, a background job of a shell
// without job control) stays ignored. The launcher resets every signal to
// its default in the tool process, so none of this leaks into the tool.
class InterruptScope {
 public:
  // `tool`: named in the notice the first signal prints when stderr is a
  // terminal ("waiting up to 5 s for tool 'x' to stop...").
  InterruptScope(CancelToken& token, const ToolConfig& tool) {
    g_interrupt_signal = 0;
    g_kill_sent = 0;
    Result<RuntimeKind> runtime = ResolveRuntime(tool);
    const bool is_process = runtime.ok() && (*runtime == RuntimeKind::kVfs || *runtime == RuntimeKind::kStdio);
    g_second_interrupt_kills = is_process ? 1 : 0;
    if (isatty(STDERR_FILENO) == 1) {
      // The line starts afresh: ^C was echoed where the cursor stood.
      notice_ = "\ntoolvfs: cancelling tool " + Quote(tool.name) + ": waiting up to " +
                std::to_string(tool.sandbox.limits.cancel_grace_s) +
                " s for it to stop, then it is terminated (SIGTERM, then SIGKILL)" +
                (is_process ? "; press Ctrl+C again to stop it at once" : "") + "\n";
      kill_notice_ = "\ntoolvfs: stopping tool " + Quote(tool.name) + " at once (SIGKILL)\n";
      g_interrupt_notice.store(&notice_, std::memory_order_release);
      g_kill_notice.store(&kill_notice_, std::memory_order_release);
    }
    g_interrupt_target.store(&token, std::memory_order_release);
    struct sigaction action {};
    action.sa_handler = OnInterrupt;
    sigfillset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    for (Saved& saved : saved_) {
      if (sigaction(saved.signal, nullptr, &saved.previous) != 0) continue;
      if (saved.signal != SIGPIPE && saved.previous.sa_handler == SIG_IGN) continue;
      struct sigaction installed = action;
      if (saved.signal == SIGPIPE) {
        installed = {};
        installed.sa_handler = SIG_IGN;
      }
      saved.installed = sigaction(saved.signal, &installed, nullptr) == 0;
    }
  }

  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;

  ~InterruptScope() {
    for (Saved& saved : saved_) {
      if (saved.installed) sigaction(saved.signal, &saved.previous, nullptr);
    }
    g_interrupt_target.store(nullptr, std::memory_order_release);
    g_interrupt_notice.store(nullptr, std::memory_order_release);
    g_kill_notice.store(nullptr, std::memory_order_release);
    g_second_interrupt_kills = 0;
  }

  // The signal that arrived during the scope, or 0.
  int signal() const { return g_interrupt_signal; }

 private:
  struct Saved {
    int signal;
    struct sigaction previous {};
    bool installed = false;
  };
  Saved saved_[3] = {{SIGINT}, {SIGTERM}, {SIGPIPE}};
  std::string notice_;
  std::string kill_notice_;
};

// --- Printing --------------------------------------------------------------

// Text from a tool made safe for a terminal: control characters escaped
// (\x1b), so a tool cannot drive the user's terminal; tabs kept, and line
// breaks too when `keep_line_breaks` (ReportError folds them).
std::string EscapeControls(std::string_view text, bool keep_line_breaks) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    unsigned char byte = static_cast<unsigned char>(c);
    bool line_break = c == '\n' || c == '\r';
    if ((byte < 0x20 && c != '\t' && !(keep_line_breaks && line_break)) || byte == 0x7f) {
      out += EscapeForDisplay(std::string_view(&c, 1));
    } else {
      out += c;
    }
  }
  return out;
}

std::string SanitizeMessage(std::string_view message) { return EscapeControls(message, true); }

// The last `count` lines of `tail`, each indented by two spaces.
std::string IndentedTail(std::string_view tail, size_t count) {
  std::vector<std::string_view> lines;
  while (!tail.empty()) {
    size_t newline = tail.find('\n');
    std::string_view line = tail.substr(0, newline);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    if (newline == std::string_view::npos) break;
    tail.remove_prefix(newline + 1);
  }
  while (!lines.empty() && lines.back().empty()) lines.pop_back();
  size_t first = lines.size() > count ? lines.size() - count : 0;
  std::string out;
  for (size_t index = first; index < lines.size(); ++index) {
    std::string_view line = lines[index];
    bool cut = line.size() > kStderrLineBytes;
    if (cut) line = line.substr(0, ValidUtf8Prefix(line.substr(0, kStderrLineBytes)));
    out += "  ";
    out += EscapeControls(line, false);
    if (cut) out += " [...]";
    out += '\n';
  }
  return out;
}

const char* SignalName(int signal_number) {
  const char* name = sigabbrev_np(signal_number);
  return name != nullptr ? name : "a signal";
}

// What the command line reports: the Outcome's kind, except that a run the
// user interrupted and that did not complete successfully counts as
// cancelled, also when the tool answered `cancel` with its own `error`
// notification (the polite way to stop), which the runtime reports as the
// tool's word. A tool that still sent `result` completed.
enum class Verdict { kCompleted, kError, kTimeout, kNeedsInput, kCancelled };

Verdict Judge(const Outcome& outcome, bool interrupted) {
  if (outcome.kind == Outcome::Kind::kCancelled || outcome.failure == StatusCode::kCancelled) {
    return Verdict::kCancelled;
  }
  if (outcome.kind == Outcome::Kind::kNeedsInput) {
    return interrupted ? Verdict::kCancelled : Verdict::kNeedsInput;
  }
  if (!outcome.is_error) return Verdict::kCompleted;
  if (interrupted) return Verdict::kCancelled;
  return outcome.failure == StatusCode::kTimeout ? Verdict::kTimeout : Verdict::kError;
}

std::string_view StatusName(Verdict verdict) {
  switch (verdict) {
    case Verdict::kCompleted: return "completed";
    case Verdict::kError:
    case Verdict::kTimeout: return "error";
    case Verdict::kNeedsInput: return "needs_input";
    case Verdict::kCancelled: return "cancelled";
  }
  return "error";
}

int ExitCodeOf(Verdict verdict) {
  switch (verdict) {
    case Verdict::kCompleted: return kExitOk;
    case Verdict::kError: return kExitToolError;
    case Verdict::kTimeout: return kExitTimeout;
    case Verdict::kNeedsInput: return kExitNeedsInput;
    case Verdict::kCancelled: return kExitCancelled;
  }
  return kExitToolError;
}

void WriteRawJson(JsonWriter& writer, std::string_view json, rapidjson::Type type) {
  writer.RawValue(json.data(), json.size(), type);
}

// error.kind of an outcome's error (docs/cli.md): what a harness branches on.
std::string_view ErrorKindOf(const Outcome& outcome, Verdict verdict) {
  switch (verdict) {
    case Verdict::kTimeout: return "timeout";
    case Verdict::kCancelled: return "cancelled";
    case Verdict::kNeedsInput: return "needs_input";
    case Verdict::kCompleted:
    case Verdict::kError: break;
  }
  // The tool's own error (it sent `error`) unless the run broke down; a
  // refusal of the policy during the run is most likely why it failed.
  if (outcome.failure != StatusCode::kOk) return "failed";
  return outcome.denied_requests > 0 ? "denied" : "tool_error";
}

std::string OutcomeJson(const Outcome& outcome, Verdict verdict) {
  rapidjson::StringBuffer buffer;
  JsonWriter writer(buffer);
  writer.StartObject();
  WriteJsonKey(writer, "status");
  WriteJsonString(writer, StatusName(verdict));
  WriteJsonKey(writer, "content");
  writer.StartArray();
  for (const ContentBlock& block : outcome.content) {
    if (!block.json.empty()) {
      WriteRawJson(writer, block.json, rapidjson::kObjectType);
    } else {
      WriteRawJson(writer, ContentBlock::Text(block.text).json, rapidjson::kObjectType);
    }
  }
  writer.EndArray();
  if (outcome.error) {
    WriteJsonKey(writer, "error");
    writer.StartObject();
    WriteJsonKey(writer, "kind");
    WriteJsonString(writer, ErrorKindOf(outcome, verdict));
    WriteJsonKey(writer, "message");
    WriteJsonString(writer, outcome.error->message);
    WriteJsonKey(writer, "trace");
    writer.StartArray();
    for (const std::string& line : outcome.error->trace) WriteJsonString(writer, line);
    writer.EndArray();
    WriteJsonKey(writer, "transient");
    writer.Bool(outcome.error->transient);
    writer.EndObject();
  }
  if (outcome.question) {
    WriteJsonKey(writer, "question");
    if (!outcome.question->json.empty()) {
      WriteRawJson(writer, outcome.question->json, rapidjson::kObjectType);
    } else {
      writer.StartObject();
      WriteJsonKey(writer, "id");
      WriteJsonString(writer, outcome.question->id);
      WriteJsonKey(writer, "text");
      WriteJsonString(writer, outcome.question->text);
      writer.EndObject();
    }
  }
  writer.EndObject();
  std::string json = JsonText(buffer);
  json += '\n';
  return json;
}

// The content as a person reads it: each block's text, ending in a newline.
std::string ContentText(const Outcome& outcome) {
  std::string out;
  for (const ContentBlock& block : outcome.content) {
    if (block.text.empty()) continue;
    out += block.text;
    if (out.back() != '\n') out += '\n';
  }
  return out;
}

// Text output: content on stdout, what went wrong on stderr.
void PrintOutcomeText(const Outcome& outcome, Verdict verdict, const ToolConfig& tool,
                      int interrupt_signal) {
  std::string content = ContentText(outcome);
  Status written = WriteFull(STDOUT_FILENO, content, "standard output");
  if (!written.ok()) ReportError("output", written.message());

  std::string what = "tool " + Quote(tool.name);
  if (verdict == Verdict::kCancelled) {
    std::string why = interrupt_signal != 0
                          ? std::string("interrupted by SIG") + SignalName(interrupt_signal)
                          : std::string("the run was cancelled");
    // The tool's own last word (an `error` answering `cancel`), if it had one.
    if (outcome.failure == StatusCode::kOk && outcome.error && !outcome.error->message.empty()) {
      why += "; the tool said: " + SanitizeMessage(outcome.error->message);
    }
    ReportError(what + " cancelled", why);
    return;
  }
  if (verdict == Verdict::kNeedsInput) {
    std::string why =
        outcome.question ? SanitizeMessage(outcome.question->text) : std::string("a question");
    if (outcome.question && !outcome.question->id.empty()) {
      why += " (answer with --answer " + SanitizeMessage(outcome.question->id) + "=VALUE)";
    }
    ReportError(what + " needs input", why);
    return;
  }
  if (verdict == Verdict::kCompleted) return;
  std::string message = outcome.error ? outcome.error->message : std::string();
  if (message.empty()) message = "the tool reported an error";
  const bool show_tail = outcome.failure != StatusCode::kOk && !outcome.stderr_tail.empty();
  // The host's message ends with the stderr's last line for the harnesses
  // that only read the message; here the tail follows, so it is said once.
  if (size_t quoted = message.find(kStderrEndsWith); show_tail && quoted != std::string::npos) {
    message.resize(quoted);
    message += "; its stderr ends with:";
  }
  ReportError(what + " failed", SanitizeMessage(message));
  // A run failure (crash, timeout, exit without a result): the tool's last
  // words usually say why. A tool that reported its own error said it already.
  if (show_tail) {
    std::string tail = IndentedTail(outcome.stderr_tail, kStderrTailLines);
    std::fwrite(tail.data(), 1, tail.size(), stderr);
  }
}

// --- Arguments --------------------------------------------------------------

std::string_view JsonTypeName(simdjson::dom::element_type type) {
  switch (type) {
    case simdjson::dom::element_type::ARRAY: return "an array";
    case simdjson::dom::element_type::OBJECT: return "an object";
    case simdjson::dom::element_type::INT64:
    case simdjson::dom::element_type::UINT64:
    case simdjson::dom::element_type::DOUBLE: return "a number";
    case simdjson::dom::element_type::STRING: return "a string";
    case simdjson::dom::element_type::BOOL: return "a boolean";
    case simdjson::dom::element_type::NULL_VALUE: return "null";
  }
  return "something else";
}

Result<std::string> ReadSource(std::string_view source) {
  if (source == "-") return ReadToEnd(STDIN_FILENO, kMaxArgumentsBytes, "standard input");
  std::string path(source);
  std::string what = "Cannot read " + Quote(path);
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return ErrnoToStatus(errno, what);
  return ReadToEnd(fd.get(), kMaxArgumentsBytes, what);
}

}  // namespace

// --- Config ----------------------------------------------------------------

Result<std::unique_ptr<AuditSink>> OpenAuditSink(const CommonOptions& common) {
  if (common.no_audit) return std::unique_ptr<AuditSink>();
  std::optional<Result<std::unique_ptr<AuditSink>>> sink;
  if (!common.audit_path.empty()) {
    sink = OpenAuditLogFile(common.audit_path);
  } else if (std::optional<std::string> directory = ProjectDirectory(common.project)) {
    // Below the project no link is followed: a cloned repository's
    // `.toolvfs` linking out of it must not receive the log.
    sink = OpenAuditLogFileBelow(*directory, kProjectAuditLogPath);
  }
  if (!sink) return std::unique_ptr<AuditSink>();
  if (!sink->ok()) {
    return Status(sink->status().code(),
                  sink->status().message() + " (--audit PATH puts it elsewhere, --no-audit turns it off)");
  }
  return std::move(*sink).value();
}

std::optional<std::string> ProjectDirectory(std::string_view project_uri) {
  if (project_uri.starts_with("fs:")) return std::string(project_uri.substr(3));
  // Workspaces in a database have no directory: their config and audit log
  // come from the current directory or --config / --audit, like memory:.
  if (project_uri.starts_with("memory:") || project_uri == "null:" || project_uri.starts_with("sqlite:") ||
      IsPostgresUri(project_uri)) {
    return std::nullopt;
  }
  return std::string(project_uri);
}

std::string ConfigPath(const CommonOptions& common) {
  if (!common.config.empty()) return common.config;
  std::string directory = ProjectDirectory(common.project).value_or(".");
  return (fs::path(directory) / "toolvfs.toml").lexically_normal().string();
}

Status WithMissingConfigHint(const CommonOptions& common, const Status& status) {
  if (status.code() != StatusCode::kNotFound || !common.config.empty()) return status;
  return Status(StatusCode::kNotFound,
                status.message() + " (create it, or name a config file with --config FILE; see docs/config.md)");
}

Result<LoadedConfig> LoadToolConfig(const CommonOptions& common) {
  std::string path = ConfigPath(common);
  Result<Config> config = LoadConfig(path, InstallationVariables());
  if (!config.ok()) {
    if (config.status().code() != StatusCode::kNotFound) {
      // A config that does not parse: check lists every error, not just
      // the first, and shows what the rest means.
      return Status(config.status().code(),
                    config.status().message() + " (toolvfs check --config " + ShellQuoted(path) +
                        " lists every error)");
    }
    return WithMissingConfigHint(common, config.status());
  }
  std::error_code error;
  fs::path absolute = fs::absolute(path, error);
  if (error) return ErrnoToStatus(error.value(), "Cannot resolve " + Quote(path));
  LoadedConfig loaded;
  loaded.config = std::move(config).value();
  loaded.path = path;
  loaded.directory = absolute.lexically_normal().parent_path().string();
  LogDebug("config " + absolute.lexically_normal().string() + ": " + std::to_string(loaded.config.tools.size()) +
           " tools, " + std::to_string(loaded.config.mcp_servers.size()) + " MCP servers; tools run in " +
           loaded.directory);
  return loaded;
}

// --- Policy services ---------------------------------------------------------

namespace {

std::map<std::string, std::string> HostEnvironment() {
  std::map<std::string, std::string> variables;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    std::string_view text(*entry);
    size_t equals = text.find('=');
    if (equals == std::string_view::npos || equals == 0) continue;
    variables.emplace(std::string(text.substr(0, equals)), std::string(text.substr(equals + 1)));
  }
  return variables;
}

// The project path of `file` if it lies inside `project_directory`.
std::optional<std::string> PathInProject(const std::string& project_directory, const std::string& file) {
  std::error_code error;
  fs::path root = fs::weakly_canonical(project_directory, error);
  if (error) return std::nullopt;
  fs::path target = fs::weakly_canonical(file, error);
  if (error) return std::nullopt;
  fs::path relative = target.lexically_relative(root);
  if (relative.empty() || *relative.begin() == "..") return std::nullopt;
  return relative.generic_string();
}

}  // namespace

ConfinementOptions RunServices::Confinement() const {
  return ConfinementOptions{.sandbox = sandbox_mode,
                            .hidden_for_testing = sandbox_hidden_for_testing,
                            .warn = [](const std::string& warning) { ReportNote("warning", warning); },
                            .config_project_path = config_project_path};
}

void RunServices::ConfigureRuntime(VfsRuntimeOptions& options) const {
  options.confinement = Confinement();
  options.inquirer = inquirer.get();
  options.audit = audit.get();
  options.reports = reports.get();
  options.host_environment = &environment;
}

void RunServices::ConfigureRuntime(StdioRuntimeOptions& options) const { options.confinement = Confinement(); }

void RunServices::ConfigureRuntime(McpRuntimeOptions& options) const {
  options.confinement = Confinement();
  options.host_environment = environment;
}

void RunServices::ConfigureRuntime(BuiltinRuntimeOptions& options) const {
  options.inquirer = inquirer.get();
  options.audit = audit.get();
  options.config_project_path = config_project_path;
}

std::vector<std::string> HiddenSandboxMechanismsForTesting() {
  std::vector<std::string> hidden;
  const char* variable = getenv("TOOLVFS_TEST_HIDE_SANDBOX");
  std::string_view list = variable == nullptr ? std::string_view() : std::string_view(variable);
  while (!list.empty()) {
    size_t comma = list.find(',');
    if (std::string_view name = list.substr(0, comma); !name.empty()) hidden.emplace_back(name);
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
  }
  return hidden;
}

Result<RunServices> PrepareRunServices(const CommonOptions& common,
                                       std::optional<std::string> config_path) {
  RunServices services;
  TOOLVFS_ASSIGN_OR_RETURN(services.sandbox_mode, ParseSandboxMode(common.sandbox));
  services.sandbox_hidden_for_testing = HiddenSandboxMechanismsForTesting();
  if (!common.no_interaction && TerminalAvailable()) {
    // With a config file, "s" at a question saves the rule in it.
    services.inquirer = NewTerminalInquirer(config_path ? NewConfigRuleWriter(*config_path) : nullptr);
  }
  services.environment = HostEnvironment();
  TOOLVFS_ASSIGN_OR_RETURN(services.audit, OpenAuditSink(common));
  services.reports = std::make_unique<ToolReportDisplay>(common.log_level);
  if (DebugLogging()) {
    LogDebug("project " + common.project + "; sandbox " + common.sandbox + "; questions " +
             (services.inquirer    ? std::string("asked on the terminal")
              : common.no_interaction ? std::string("denied (--no-interaction)")
                                      : std::string("denied (no terminal)")) +
             "; audit log " + (services.audit ? std::string("on") : std::string("off")));
    // Every decided request on stderr as well, as the audit log has it.
    std::shared_ptr<AuditSink> file(std::move(services.audit));
    services.audit = NewCallbackAuditSink([file](const AuditRecord& record) {
      // A run's own start and end records are logged by InvokeTool.
      if (!record.method.starts_with("run.")) {
        LogDebug(record.method + " " + Quote(record.target) + ": " + std::string(AuditDecisionName(record.decision)) +
               (record.rule.empty() ? "" : " (" + record.rule + ")") + ", code " + std::to_string(record.code) +
                 ", " + std::to_string(record.duration_us) + " us");
      }
      if (file) file->Record(record);
    });
  }
  // The config in use when it lies in the project; toolvfs.toml itself is
  // always sensitive (FilePolicy), but it may be a link to another file of
  // the project, which the policy judges by its target: with --config
  // ELSEWHERE (or none, for exec) that target is the one to protect.
  if (config_path) services.config_project_path = ConfigPathInProject(common, *config_path);
  if (!services.config_project_path) {
    CommonOptions project_default = common;
    project_default.config.clear();
    std::optional<std::string> project_config = ConfigPathInProject(common, ConfigPath(project_default));
    if (project_config && *project_config != kProjectConfigPath) services.config_project_path = project_config;
  }
  return services;
}

std::optional<std::string> ConfigPathInProject(const CommonOptions& common, const std::string& config_path) {
  std::optional<std::string> project_directory = ProjectDirectory(common.project);
  if (!project_directory) return std::nullopt;
  return PathInProject(*project_directory, config_path);
}

void ReportConfigWarnings(const LoadedConfig& loaded, const CommonOptions& common) {
  if (common.log_level == "error") return;
  for (const std::string& warning : loaded.config.warnings) ReportNote("warning", warning);
}

// --- Arguments --------------------------------------------------------------

namespace {

// "Invalid JSON on the command line at line 1, column 9: Missing a name
// for object member (near '{"a": 1,,}')": where the text breaks, which
// simdjson does not say. RapidJSON parses the text again only to find the
// position of the error, so the user sees which character to fix.
std::string JsonSyntaxError(std::string_view text, std::string_view where) {
  rapidjson::Document document;
  document.Parse<rapidjson::kParseStopWhenDoneFlag>(text.data(), text.size());
  std::string message = "Invalid JSON " + std::string(where);
  if (!document.HasParseError()) return message + ": the text is not valid JSON";
  const size_t offset = std::min(document.GetErrorOffset(), text.size());
  size_t line = 1;
  size_t line_start = 0;
  for (size_t index = 0; index < offset; ++index) {
    if (text[index] == '\n') {
      ++line;
      line_start = index + 1;
    }
  }
  message += " at line " + std::to_string(line) + ", column " + std::to_string(offset - line_start + 1) +
             ": " + std::string(rapidjson::GetParseError_En(document.GetParseError()));
  if (message.ends_with('.')) message.pop_back();  // RapidJSON's sentences end with one
  // A little of the text around the spot, one line.
  constexpr size_t kContext = 12;
  const size_t from = offset > kContext ? offset - kContext : 0;
  message += " (at " + Quote(text.substr(offset, kContext)) + ", after " +
             Quote(text.substr(from, offset - from)) + ")";
  return message;
}

}  // namespace

Result<std::string> ReadArgumentsJson(std::string_view value) {
  std::string where = "on the command line";
  std::string text;
  if (value.starts_with("@")) {
    std::string_view source = value.substr(1);
    if (source.empty()) {
      return InvalidArgumentError("'@' needs a file name: @FILE, or @- for standard input");
    }
    TOOLVFS_ASSIGN_OR_RETURN(text, ReadSource(source));
    where = source == "-" ? std::string("on standard input") : "in " + Quote(source);
  } else {
    text = std::string(value);
  }
  // An empty value (--args '' or an empty file) means no arguments.
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) return std::string("{}");

  simdjson::dom::parser parser;
  simdjson::dom::element root;
  simdjson::error_code error = parser.parse(text).get(root);
  if (error != simdjson::SUCCESS) return InvalidArgumentError(JsonSyntaxError(text, where));
  if (root.type() != simdjson::dom::element_type::OBJECT) {
    return InvalidArgumentError("The arguments " + where +
                                " must be a JSON object ({\"NAME\": VALUE, ...}), got " +
                                std::string(JsonTypeName(root.type())));
  }
  // Compact, with numbers spelled as the user wrote them (the DOM parse
  // above validated the text; the minifier only drops whitespace).
  std::string compact(text.size(), '\0');
  size_t length = 0;
  if (simdjson::minify(text.data(), text.size(), compact.data(), length) != simdjson::SUCCESS) {
    return InternalError("Cannot minify the arguments " + where);
  }
  compact.resize(length);
  return compact;
}

// --- Running ---------------------------------------------------------------

namespace {

// How the answering chain ended a run, besides the outcome itself.
struct AnsweredRun {
  Outcome outcome;
  // A given or configured answer that does not fit its question (exit 2).
  Status bad_answer;
  // The outcome's question has no answer and nobody could be asked.
  bool unanswered = false;
};

Outcome NeedsInput(ToolQuestion question, std::vector<ContentBlock> content) {
  Outcome outcome;
  outcome.kind = Outcome::Kind::kNeedsInput;
  outcome.question = std::move(question);
  outcome.content = std::move(content);
  return outcome;
}

Outcome TooManyQuestions(const ToolConfig& tool, const ToolQuestion& last) {
  return FailedOutcome(StatusCode::kInternal,
                       "Tool " + Quote(tool.name) + " asked " + std::to_string(kMaxAnswerRounds + 1) +
                           " questions without finishing (the last: " + Quote(last.id) +
                           "); it may be rejecting the answer it is given",
                       "");
}

// A finished answer lookup: an answer, or the reason the run ends here.
// `ended` is set when there is no answer to give.
struct Lookup {
  std::optional<ConfigValue> answer;
  std::optional<AnsweredRun> ended;
};

Lookup LookUp(const ToolQuestion& question, const ToolConfig& tool, const AnswerSources& sources,
              CancelToken& cancel) {
  Result<std::optional<FoundAnswer>> found = FindAnswer(question, tool.name, sources, cancel);
  Lookup lookup;
  if (!found.ok()) {
    AnsweredRun ended;
    if (cancel.cancelled()) {
      ended.outcome = CancelledOutcome("Tool " + Quote(tool.name) + " was cancelled while its question was asked");
    } else if (found.status().code() == StatusCode::kInvalidArgument) {
      ended.bad_answer = found.status();
    } else {
      // The terminal went away (end of input): nobody can answer.
      ended.outcome = NeedsInput(question, {});
      ended.unanswered = true;
    }
    lookup.ended = std::move(ended);
    return lookup;
  }
  if (!found->has_value()) {
    AnsweredRun ended;
    ended.outcome = NeedsInput(question, {});
    ended.unanswered = true;
    lookup.ended = std::move(ended);
    return lookup;
  }
  lookup.answer = std::move((*found)->value);
  return lookup;
}

// One-shot runtimes: each answer means another run with the answer added
// to the call's answers (the jp stdio contract).
Result<AnsweredRun> RunAnswering(ToolRuntime& runtime, ToolCall call, const ToolConfig& tool,
                                 const AnswerSources& sources, CancelToken& cancel) {
  for (int round = 0;; ++round) {
    TOOLVFS_ASSIGN_OR_RETURN(Outcome outcome, runtime.Execute(call, tool, cancel));
    if (outcome.kind != Outcome::Kind::kNeedsInput || !outcome.question || cancel.cancelled()) {
      return AnsweredRun{.outcome = std::move(outcome)};
    }
    if (round == kMaxAnswerRounds) return AnsweredRun{.outcome = TooManyQuestions(tool, *outcome.question)};
    Lookup lookup = LookUp(*outcome.question, tool, sources, cancel);
    if (lookup.ended) {
      lookup.ended->outcome.content = std::move(outcome.content);
      lookup.ended->outcome.stderr_tail = std::move(outcome.stderr_tail);
      return std::move(*lookup.ended);
    }
    TOOLVFS_ASSIGN_OR_RETURN(call.answers_json, AddAnswer(call.answers_json, outcome.question->id, *lookup.answer));
  }
}

// Stateful tools: one live run; each answer is `apply {input}`.
Result<AnsweredRun> DriveStateful(ToolRuntime& runtime, const ToolCall& call, const ToolConfig& tool,
                                  const AnswerSources& sources, CancelToken& cancel) {
  TOOLVFS_ASSIGN_OR_RETURN(std::unique_ptr<StatefulRun> run, runtime.Start(call, tool, cancel));
  uint64_t seen = 0;
  int questions = 0;
  while (true) {
    ToolState state = run->WaitForQuestion(seen);
    if (state.kind == ToolState::Kind::kStopped) return AnsweredRun{.outcome = std::move(*state.outcome)};
    if (++questions > kMaxAnswerRounds) {
      run->Abort();
      return AnsweredRun{.outcome = TooManyQuestions(tool, *state.question)};
    }
    Lookup lookup = LookUp(*state.question, tool, sources, cancel);
    if (lookup.ended) {
      // The tool cannot go on without the answer: stop it (a Ctrl+C stopped
      // it already; its own outcome says so).
      run->Abort();
      Outcome stopped = run->Wait();
      if (cancel.cancelled()) return AnsweredRun{.outcome = std::move(stopped)};
      lookup.ended->outcome.content = std::move(state.content);
      lookup.ended->outcome.stderr_tail = std::move(stopped.stderr_tail);
      return std::move(*lookup.ended);
    }
    // Refused only by a tool that stopped meanwhile (crashed, timed out
    // while the user thought): then its own outcome is the next state.
    static_cast<void>(run->Apply(lookup.answer->ToJson()));
  }
}

// stderr for a question nobody answered: what it asks and how to answer.
void ReportUnanswered(const ToolConfig& tool, const ToolQuestion& question) {
  ReportError("tool " + Quote(tool.name) + " needs input",
              "1 question has no answer (give it with --answer ID=VALUE, or questions.ID.answer in the "
              "config, or run on a terminal without --no-interaction)");
  std::string line = DescribeQuestion(question) + "\n";
  std::fwrite(line.data(), 1, line.size(), stderr);
}

InvocationError ArgumentInvocationError(const ArgumentError& problem, const std::string& message,
                                        const ConfigValue::Object& parameters) {
  InvocationError error{.kind = "invalid_argument", .message = message, .argument = problem.argument};
  switch (problem.problem) {
    case ArgumentProblem::kNotAnObject: error.kind = "invalid_arguments"; break;
    case ArgumentProblem::kMissing: error.kind = "missing_argument"; break;
    case ArgumentProblem::kInvalid: error.kind = "invalid_argument"; break;
    case ArgumentProblem::kUnknown: {
      error.kind = "unknown_argument";
      // Names to suggest are known at the top level; a nested unknown key
      // is named by its path in the message.
      if (problem.argument.find_first_of(".[") == std::string::npos) {
        std::vector<std::string> names;
        for (const auto& [name, schema] : parameters) names.push_back(name);
        error.did_you_mean = ClosestNames(problem.argument, names);
      }
      break;
    }
  }
  return error;
}

}  // namespace

std::vector<std::string> ClosestNames(std::string_view name, const std::vector<std::string>& candidates) {
  constexpr size_t kMaxCompared = 64;  // keeps the distance table small
  constexpr size_t kMaxDistance = 2;
  constexpr size_t kMaxNames = 3;
  std::vector<std::pair<size_t, std::string>> close;
  if (name.size() > kMaxCompared) return {};
  for (const std::string& candidate : candidates) {
    if (candidate.size() > kMaxCompared) continue;
    size_t distance = EditDistance(name, candidate);
    if (distance <= kMaxDistance && distance < std::max(name.size(), candidate.size())) {
      close.emplace_back(distance, candidate);
    }
  }
  std::stable_sort(close.begin(), close.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> names;
  for (size_t index = 0; index < close.size() && index < kMaxNames; ++index) names.push_back(close[index].second);
  return names;
}

int ReportInvocationError(bool json, int exit_code, std::string_view what, const InvocationError& error) {
  ReportError(what, error.message);
  if (!json) return exit_code;
  rapidjson::StringBuffer buffer;
  JsonWriter writer(buffer);
  writer.StartObject();
  WriteJsonKey(writer, "status");
  WriteJsonString(writer, "error");
  WriteJsonKey(writer, "content");
  writer.StartArray();
  writer.EndArray();
  WriteJsonKey(writer, "error");
  writer.StartObject();
  WriteJsonKey(writer, "kind");
  WriteJsonString(writer, error.kind);
  WriteJsonKey(writer, "message");
  WriteJsonString(writer, error.message);
  WriteJsonKey(writer, "trace");
  writer.StartArray();
  writer.EndArray();
  WriteJsonKey(writer, "transient");
  writer.Bool(false);
  if (!error.argument.empty()) {
    WriteJsonKey(writer, "argument");
    WriteJsonString(writer, error.argument);
  }
  if (!error.did_you_mean.empty()) {
    WriteJsonKey(writer, "did_you_mean");
    writer.StartArray();
    for (const std::string& name : error.did_you_mean) WriteJsonString(writer, name);
    writer.EndArray();
  }
  writer.EndObject();
  writer.EndObject();
  std::string out = JsonText(buffer);
  out += '\n';
  Status written = WriteFull(STDOUT_FILENO, out, "standard output");
  if (!written.ok()) ReportError("output", written.message());
  return exit_code;
}

namespace {

// How a run ended, for its end record: the outcome's status and error kind.
struct RunEnd {
  std::string status = "error";
  std::string kind;
};

// Whether the tool's last words say it could not load a toolvfs SDK: the
// interpreter's (or compiler's) own message, which names no fix.
bool FailedToLoadSdk(const Outcome& outcome) {
  constexpr std::string_view kSigns[] = {"No module named 'toolvfs_tool'", "No module named 'toolvfs_vfsd'",
                                         "Cannot find module 'toolvfs_tool'", "toolvfs/tool.h: No such file"};
  const std::string_view message = outcome.error ? std::string_view(outcome.error->message) : std::string_view();
  return std::any_of(std::begin(kSigns), std::end(kSigns), [&](std::string_view sign) {
    return outcome.stderr_tail.find(sign) != std::string::npos || message.find(sign) != std::string_view::npos;
  });
}

// The SDKs are on the path of vfs tools only (PYTHONPATH, the sandbox's
// grant), so a tool written for them but configured without `runtime =
// "vfs"` (inferred as stdio) fails to import one with the interpreter's
// bare message; this names the fix.
void HintAtSdkOfStdioTool(const Outcome& outcome, const ToolConfig& tool, RuntimeKind runtime) {
  if (runtime != RuntimeKind::kStdio || !WarningsWanted() || !FailedToLoadSdk(outcome)) return;
  ReportNote("hint", "tool " + Quote(tool.name) +
                         " could not load the toolvfs SDK, which only vfs tools get: set runtime = \"vfs\" in "
                         "its [tools." + tool.name + "] table (toolvfs exec: --runtime vfs)");
}

// Where this binary is, for a message about what is missing beside it.
std::string ThisProgram() {
  std::error_code error;
  std::string path = fs::read_symlink("/proc/self/exe", error).string();
  return error ? std::string("toolvfs") : path;
}

int RunAndReport(ToolRuntime& runtime, const ToolCall& call, const ToolConfig& tool,
                 const InvocationOutput& output, RunEnd& end) {
  // The runtimes check the arguments too; checking here first tells the
  // kinds of mistake apart for --json before anything starts.
  const ConfigValue::Object& parameters = runtime.Parameters(tool);
  ArgumentError problem;
  Result<ConfigValue> checked = CheckCallArguments(tool.name, call.arguments_json, parameters, &problem);
  if (!checked.ok()) {
    end.kind = ArgumentInvocationError(problem, checked.status().message(), parameters).kind;
    return ReportInvocationError(output.json, kExitUsage, "tool " + Quote(tool.name) + " got bad arguments",
                                 ArgumentInvocationError(problem, checked.status().message(), parameters));
  }
  CancelToken cancel;
  std::unique_ptr<QuestionAsker> asker = output.interactive ? NewTerminalQuestionAsker() : nullptr;
  const AnswerSources sources{.given = output.answers, .configured = &tool.question_answers, .asker = asker.get()};
  std::optional<Result<AnsweredRun>> executed;
  int interrupt_signal = 0;
  {
    InterruptScope interrupts(cancel, tool);
    executed.emplace(tool.stateful ? DriveStateful(runtime, call, tool, sources, cancel)
                                   : RunAnswering(runtime, call, tool, sources, cancel));
    interrupt_signal = interrupts.signal();
  }
  Result<AnsweredRun>& result = *executed;
  if (!result.ok()) {
    // The run never started (the program cannot be executed, ...): a
    // problem of the configuration or the command line, or of the machine.
    const bool sandbox = IsSandboxUnavailable(result.status());
    end.kind = sandbox ? "sandbox_unavailable" : "start_failed";
    return ReportInvocationError(output.json, sandbox ? kExitSandbox : kExitUsage,
                                 "tool " + Quote(tool.name) + " could not start",
                                 {.kind = sandbox ? "sandbox_unavailable" : "start_failed",
                                  .message = result.status().message()});
  }
  if (!result->bad_answer.ok()) {
    end.kind = "bad_answer";
    return ReportInvocationError(output.json, kExitUsage, "tool " + Quote(tool.name) + " got a bad answer",
                                 {.kind = "bad_answer", .message = result->bad_answer.message()});
  }
  const Outcome& outcome = result->outcome;
  Verdict verdict = Judge(outcome, interrupt_signal != 0 || cancel.cancelled());
  end.status = std::string(StatusName(verdict));
  if (verdict != Verdict::kCompleted) end.kind = std::string(ErrorKindOf(outcome, verdict));
  if (result->unanswered && verdict == Verdict::kNeedsInput && outcome.question) {
    ReportUnanswered(tool, *outcome.question);
    if (output.json) {
      Status written = WriteFull(STDOUT_FILENO, OutcomeJson(outcome, verdict), "standard output");
      if (!written.ok()) ReportError("output", written.message());
    }
    return ExitCodeOf(verdict);
  }
  if (output.json) {
    Status written = WriteFull(STDOUT_FILENO, OutcomeJson(outcome, verdict), "standard output");
    if (!written.ok()) ReportError("output", written.message());
  } else {
    PrintOutcomeText(outcome, verdict, tool, interrupt_signal);
  }
  if (verdict == Verdict::kError) HintAtSdkOfStdioTool(outcome, tool, output.runtime);
  return ExitCodeOf(verdict);
}


AuditRecord RunRecord(std::string_view method, const ToolConfig& tool, const std::string& run_id) {
  AuditRecord record;
  record.timestamp_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count();
  record.tool = tool.name;
  record.call_id = run_id;
  record.method = std::string(method);
  return record;
}

}  // namespace

int InvokeTool(ToolRuntime& runtime, const ToolCall& call, const ToolConfig& tool,
               const InvocationOutput& output) {
  // One run id for the start and end records and the requests between.
  ToolCall identified = call;
  if (identified.id.empty()) identified.id = NewCallId();
  const auto started = std::chrono::steady_clock::now();
  if (DebugLogging()) {
    std::string command;
    if (tool.command) {
      command = ShellQuoted(tool.command->program);
      for (const std::string& argument : tool.command->args) command += " " + ShellQuoted(argument);
    }
    LogDebug("run " + identified.id + ": tool " + Quote(tool.name) + ", runtime " +
             std::string(RuntimeKindName(output.runtime)) + (command.empty() ? "" : ", command " + command) +
             ", arguments " + identified.arguments_json);
  }
  if (output.audit != nullptr) {
    AuditRecord start = RunRecord(kRunStartMethod, tool, identified.id);
    start.target = std::string(RuntimeKindName(output.runtime));
    output.audit->Record(start);
  }
  // A relocated binary (`cp build/toolvfs /tmp/x`) finds no SDK beside it:
  // said before the tool fails to import it, naming the way out.
  if (output.runtime == RuntimeKind::kVfs && SdkDirectory().empty() && WarningsWanted()) {
    ReportNote("warning", "no tool SDK (share/toolvfs/sdk) was found near " + Quote(ThisProgram()) +
                              ", so tool " + Quote(tool.name) +
                              " cannot import toolvfs_tool; set TOOLVFS_SDK_DIR to the absolute path of the "
                              "directory that holds toolvfs_tool.py");
  }
  RunEnd end;
  const int exit_code = RunAndReport(runtime, identified, tool, output, end);
  LogDebug("run " + identified.id + " ended: " + end.status + (end.kind.empty() ? "" : " (" + end.kind + ")") +
           ", exit code " + std::to_string(exit_code) + " after " +
           std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::steady_clock::now() - started)
                              .count()) +
           " ms");
  if (output.audit != nullptr) {
    AuditRecord finished = RunRecord(kRunEndMethod, tool, identified.id);
    finished.target = end.status;
    finished.rule = end.kind;
    finished.code = exit_code;
    finished.duration_us = static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - started).count());
    output.audit->Record(finished);
  }
  return exit_code;
}

int InvokeToolOnProject(ToolRuntime& runtime, ProjectFiles& project, const ToolCall& call, const ToolConfig& tool,
                        const InvocationOutput& output) {
  Result<bool> counted = CountsSessionQuotaAfter(project, output.runtime == RuntimeKind::kBuiltin, tool.name);
  if (!counted.ok()) return ReportStatus(tool.name, counted.status());
  if (!*counted) return InvokeTool(runtime, call, tool, output);
  SessionQuotaRuntime quota(runtime, project);
  return InvokeTool(quota, call, tool, output);
}

}  // namespace toolvfs
