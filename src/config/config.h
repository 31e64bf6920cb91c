// toolvfs.toml: the typed tool configuration (SPEC.md §3.1, §6.2–6.4).
//
// This layer only parses and validates; nothing here enforces anything. The
// policy turns SandboxConfig into decisions, the runtimes run ToolConfigs.
// Parsing is strict because a typo must never silently weaken a policy:
// every unknown key, wrong type, malformed URL or path is an error that names
// the file, line, column and key. docs/config.md is the reference for the
// format and for the defaults below.
//
// Everything here is a plain value: safe to copy and to read from many
// threads once loaded.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config_value.h"
#include "core/status.h"

namespace toolvfs {

// Where a tool comes from: `source = "local" | "builtin" | "mcp.SERVER" |
// "mcp.SERVER.TOOL"`. Absent means local.
enum class ToolSource { kLocal, kBuiltin, kMcp };

// How a tool runs. A config's `runtime` key can only name kStdio, kVfs or
// kWasm; ResolveRuntime also yields kBuiltin and kMcp, decided by the source.
enum class RuntimeKind { kStdio, kVfs, kWasm, kBuiltin, kMcp };

// Stable lower-case names: "local", "builtin", "mcp"; "stdio", "vfs", "wasm",
// "builtin", "mcp".
std::string_view ToolSourceName(ToolSource source);
std::string_view RuntimeKindName(RuntimeKind runtime);

// A local tool's command line. The string form is split into words like a
// shell would (SplitShellWords): the first word is the program. The table
// form `{ program, args = [], shell = false }` is taken as written. Elements
// may hold `{{ ... }}` templates; they are rendered by the stdio runtime.
struct CommandSpec {
  std::string program;  // never empty
  std::vector<std::string> args;
  bool shell = false;        // table form only; the runtime decides its meaning
  bool from_string = false;  // written as one string (for messages)

  friend bool operator==(const CommandSpec&, const CommandSpec&) = default;
};

// `filesystem.writable`: true (everything readable is writable), false, or
// a list of writable prefixes.
struct WritableConfig {
  bool all = false;                   // writable = true
  std::vector<std::string> prefixes;  // writable = [...]; empty for true/false

  friend bool operator==(const WritableConfig&, const WritableConfig&) = default;
};

// `commands.NAME`: `false` denies the program; a table allows it.
struct CommandRule {
  bool denied = false;  // commands.NAME = false
  // Allowed argument lists; each may end in "**" (any remainder). nullopt:
  // no `args` key (any arguments). An empty list: the key with no entries.
  std::optional<std::vector<std::vector<std::string>>> args;
  std::vector<std::string> envs;  // variable names the program may receive

  friend bool operator==(const CommandRule&, const CommandRule&) = default;
};

// `limits`; every value is a positive integer no greater than kMaxLimit,
// small enough that a conversion to milliseconds or bytes cannot overflow.
struct LimitsConfig {
  static constexpr int64_t kMaxLimit = 2147483647;
  int64_t timeout_s = 600;      // whole run
  int64_t idle_timeout_s = 60;  // no message from the tool
  int64_t cancel_grace_s = 5;   // after `cancel`, before SIGTERM
  int64_t memory_mb = 1024;     // address-space limit of the tool process
  int64_t max_message_mb = 10;  // one NDJSON line, either direction
  int64_t max_processes = 64;   // RLIMIT_NPROC-style cap

  friend bool operator==(const LimitsConfig&, const LimitsConfig&) = default;
};

// `[tools.NAME.sandbox]`. Project paths are stored normalized (NormalizePath:
// "." is stored as "", "secrets/" as "secrets"); URLs are stored as written
// (validated, not normalized).
struct SandboxConfig {
  std::vector<std::string> filesystem_allow;  // readable prefixes
  WritableConfig filesystem_writable;
  std::vector<std::string> filesystem_deny;  // never readable or writable
  std::vector<std::string> network_allow;    // URL prefixes
  std::vector<std::string> network_deny;
  std::vector<std::string> network_envs;        // variables usable as ${VAR} in headers
  std::map<std::string, CommandRule> commands;  // by program name
  std::vector<std::string> sensitive_paths;     // added to the built-in list; may be globs
  std::vector<std::string> system_read;         // absolute host paths, as written
  LimitsConfig limits;

  friend bool operator==(const SandboxConfig&, const SandboxConfig&) = default;
};

// `[tools.NAME]`.
struct ToolConfig {
  std::string name;
  ToolSource source = ToolSource::kLocal;
  std::string mcp_server;              // kMcp: the server
  std::string mcp_tool;                // kMcp: the tool; empty for "mcp.SERVER" (all its tools)
  std::optional<CommandSpec> command;  // always set for a local tool
  std::optional<RuntimeKind> runtime;  // as written; see ResolveRuntime
  std::string description;
  // name → JSON-Schema-like object ({type, description, required, default,
  // enum, items, properties, ...}), keyword types checked at parse time.
  ConfigValue::Object parameters;
  ConfigValue::Object options;  // free-form, handed to the tool
  bool stateful = false;
  // `questions.ID.answer`: static answers (a bool or a string) to questions
  // the tool asks, typed by the question when it is asked (runtime/answers.h).
  std::map<std::string, ConfigValue> question_answers;
  // False when the tool has no `sandbox` table: the policy then applies the
  // default (project readable, everything else uncovered) and `sandbox`
  // below holds only defaults.
  bool has_sandbox_table = false;
  SandboxConfig sandbox;
  // `toolvfs exec`: a tool without a config file, whose policy comes from
  // exec's --allow-* flags; hints then name those flags, not config keys.
  bool ad_hoc = false;

  friend bool operator==(const ToolConfig&, const ToolConfig&) = default;
};

// `[mcp_servers.NAME]`.
struct McpServerConfig {
  std::string name;
  std::string command;  // the program; not split into words
  std::vector<std::string> args;
  std::vector<std::string> env;  // host variables the server may receive

  friend bool operator==(const McpServerConfig&, const McpServerConfig&) = default;
};

// One `[[session.mounts]]` entry: a host folder loaded into every session
// made with this config (docs/sessions.md, "Mounts").
struct SessionMountConfig {
  std::string host_path;
  std::string mount_path;  // "" = the workspace root
  std::vector<std::string> include_glob;
  std::vector<std::string> exclude_glob;
  std::optional<uint64_t> max_bytes;
  bool follow_symlinks = false;
};

// The `[session]` table (docs/sessions.md): where sessions live and the
// tool layer's limits. Absent keys keep the defaults of SessionWorkspaceLimits.
struct SessionConfig {
  std::optional<std::string> store;  // a store URI, e.g. "sqlite:sessions.db#NAME"
  std::optional<uint64_t> max_content_chars;
  std::optional<uint64_t> max_depth;
  std::optional<uint64_t> max_segment_chars;
  std::optional<uint64_t> max_total_bytes;  // the session's quota
  std::optional<uint64_t> max_files;
  std::vector<std::string> allowed_roots;
  std::vector<SessionMountConfig> mounts;
};

struct Config {
  std::map<std::string, ToolConfig> tools;
  std::optional<SessionConfig> session;  // the [session] table, when present
  std::map<std::string, McpServerConfig> mcp_servers;
  std::string path;  // the file it came from (the source name for ParseConfig)
  // Accepted-but-ignored settings, one line each, "file:line:col: ...", e.g.
  // `runtime` on a builtin tool or a loader variable in a command's envs.
  std::vector<std::string> warnings;
};

// The values of `${toolvfs.NAME}` in tool commands and MCP server commands
// (docs/config.md, "Where toolvfs is"), by NAME without the "toolvfs."
// prefix. The names a config may use are fixed here (kConfigVariableNames);
// their values — where this toolvfs is installed — are known only above
// this layer (runtime/sdk_location.h), so the caller passes them in. A name
// missing from the map or mapped to "" has no value in this process: a
// config using it fails to parse, naming the variable.
using ConfigVariables = std::map<std::string, std::string, std::less<>>;

// "prefix" (the directory holding share/toolvfs: the install prefix, or the
// build directory before installing) and "sdk" (the tool SDKs).
inline constexpr std::string_view kConfigVariableNames[] = {"prefix", "sdk"};

// Parses `text` as a toolvfs.toml; `source_name` is used in messages and
// stored as Config::path. `${toolvfs.NAME}` in commands is replaced by
// `variables` word by word (after the command string is split, so a value
// with spaces stays one word). Fails with InvalidArgument whose one-line message
// is the first error in file order, "FILE:LINE:COL: <what>", followed by
// " (and N more errors)" when there are more; CheckConfigText lists them all.
Result<Config> ParseConfig(std::string_view text, std::string_view source_name,
                           const ConfigVariables& variables = {});

// Reads and parses the file at `path`. Fails with NotFound (naming the path)
// if it does not exist, another code if it cannot be read or is over 16 MiB,
// or as ParseConfig.
Result<Config> LoadConfig(const std::string& path, const ConfigVariables& variables = {});

// The text of the config file at `path`, with LoadConfig's size limit and
// errors: for tools that edit the file (the inquiry's "save as a rule").
Result<std::string> ReadConfigText(const std::string& path);

// Every problem in one file, for `toolvfs check`.
struct ConfigCheck {
  Config config;                    // complete only when `errors` is empty
  std::vector<std::string> errors;  // "FILE:LINE:COL: <what>", in file order
};
ConfigCheck CheckConfigText(std::string_view text, std::string_view source_name,
                            const ConfigVariables& variables = {});

// Reads the file at `path` (errors as LoadConfig) and checks it.
Result<ConfigCheck> CheckConfigFile(const std::string& path, const ConfigVariables& variables = {});

// The runtime a tool runs under (SPEC.md §6.2): builtin and mcp tools by
// their source (their `runtime` key was ignored with a warning at parse
// time); for a local tool an explicit `runtime` wins, else a program ending
// in ".wasm" means wasm, else stdio. Wasm fails with Unsupported and exactly
// "Tool 'NAME' uses runtime 'wasm', which is not yet supported." — only for
// that tool, when it is resolved; the rest of the config is unaffected.
Result<RuntimeKind> ResolveRuntime(const ToolConfig& tool);

}  // namespace toolvfs
