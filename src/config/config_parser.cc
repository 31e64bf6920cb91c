// ParseConfig / LoadConfig / CheckConfigText: toolvfs.toml through toml++
// into the structs of config.h.
//
// toml++ (the Debian shared library) is built with exceptions; the one call
// that throws (toml::parse) is wrapped here, so no exception leaves this file.
// The parser walks the whole document and collects every error with its
// position; callers get them sorted by position.
#include <fcntl.h>
#include <re2/re2.h>
#include <toml++/toml.h>

#include <algorithm>
#include <cerrno>
#include <set>
#include <span>
#include <sstream>

#include "config/config.h"
#include "config/shell_words.h"
#include "config/url_check.h"
#include "core/io.h"
#include "core/text.h"
#include "core/unique_fd.h"
#include "project/path.h"

namespace toolvfs {
namespace {

constexpr uint64_t kMaxConfigBytes = uint64_t{16} << 20;
constexpr size_t kMaxNameLength = 64;

using KeyList = std::span<const std::string_view>;

constexpr std::string_view kTopLevelKeys[] = {"tools", "mcp_servers", "session"};
constexpr std::string_view kSessionKeys[] = {"store",           "max_content_chars", "max_depth",
                                             "max_segment_chars", "max_total_bytes",   "max_files",
                                             "allowed_roots",     "mounts"};
constexpr std::string_view kSessionMountKeys[] = {"host_path",    "mount_path", "include_glob",
                                                  "exclude_glob", "max_bytes",  "follow_symlinks"};
constexpr std::string_view kToolKeys[] = {"source",      "command",    "runtime",
                                          "description", "parameters", "options",
                                          "stateful",    "questions",  "sandbox"};
constexpr std::string_view kCommandTableKeys[] = {"program", "args", "shell"};
constexpr std::string_view kSandboxKeys[] = {"filesystem",      "network",     "commands",
                                             "sensitive_paths", "system_read", "limits"};
constexpr std::string_view kFilesystemKeys[] = {"allow", "writable", "deny"};
constexpr std::string_view kNetworkKeys[] = {"allow", "deny", "envs"};
constexpr std::string_view kCommandRuleKeys[] = {"args", "envs"};
constexpr std::string_view kLimitsKeys[] = {"timeout_s", "idle_timeout_s", "cancel_grace_s",
                                            "memory_mb", "max_message_mb", "max_processes"};
constexpr std::string_view kMcpServerKeys[] = {"command", "args", "env"};
constexpr std::string_view kQuestionKeys[] = {"answer"};
// JSON Schema keywords accepted in a parameter schema.
constexpr std::string_view kSchemaKeys[] = {"type",
                                            "description",
                                            "required",
                                            "default",
                                            "enum",
                                            "items",
                                            "properties",
                                            "title",
                                            "examples",
                                            "minimum",
                                            "maximum",
                                            "exclusiveMinimum",
                                            "exclusiveMaximum",
                                            "minLength",
                                            "maxLength",
                                            "minItems",
                                            "maxItems",
                                            "uniqueItems",
                                            "pattern",
                                            "format"};
constexpr std::string_view kSchemaTypes[] = {"string", "number", "integer", "boolean",
                                             "array",  "object", "null"};
constexpr std::string_view kRuntimeNames[] = {"stdio", "vfs", "wasm"};
constexpr std::string_view kSourceNames[] = {"local", "builtin"};

// ---- Small text helpers ----------------------------------------------------

bool IsBareKey(std::string_view key) {
  if (key.empty()) return false;
  for (char c : key) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

// A key path segment as TOML would spell it: bare, or "quoted" and escaped.
std::string KeySegment(std::string_view key) {
  if (IsBareKey(key)) return std::string(key);
  std::string out = "\"";
  for (char c : EscapeForDisplay(key)) {
    if (c == '"') out += '\\';
    out += c;
  }
  out += '"';
  return out;
}

std::string Child(const std::string& path, std::string_view key) {
  return path.empty() ? KeySegment(key) : path + "." + KeySegment(key);
}

std::string Index(const std::string& path, size_t index) {
  return path + "[" + std::to_string(index) + "]";
}

// 'tools.fmt.command' — the path is already escaped segment by segment.
std::string Named(const std::string& path) { return "'" + path + "'"; }

// A string value as it would appear in the file, shortened for a message.
std::string ShowString(std::string_view text) {
  constexpr size_t kMaxShown = 60;
  bool shortened = false;
  if (text.size() > kMaxShown) {
    size_t cut = kMaxShown;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
    text = text.substr(0, cut);
    shortened = true;
  }
  std::string out = "\"";
  for (char c : EscapeForDisplay(text)) {
    if (c == '"') out += '\\';
    out += c;
  }
  out += shortened ? "...\"" : "\"";
  return out;
}

// What a node is, for "got ...": scalars by value, containers by kind.
std::string Describe(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::string: return ShowString(node.as_string()->get());
    case toml::node_type::integer: return std::to_string(node.as_integer()->get());
    case toml::node_type::boolean: return node.as_boolean()->get() ? "true" : "false";
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return "an array";
    default: {
      std::ostringstream out;  // floats, dates and times in TOML spelling
      node.visit([&](const auto& value) { out << value; });
      return EscapeForDisplay(out.str());
    }
  }
}

// toml++'s own message made one line: it already escapes what it quotes
// ('\n'), so only control characters and bad UTF-8 are replaced here (a
// second EscapeForDisplay would double the backslashes).
std::string TomlMessage(std::string_view description) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (char c : ToValidUtf8(description)) {
    auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7F) {
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 0xF];
    } else {
      out += c;
    }
  }
  return out;
}

// " (did you mean 'x'?)" for the closest candidate within two edits, or "".
std::string Suggestion(std::string_view word, KeyList candidates) {
  constexpr size_t kMaxCompared = 64;  // keeps the distance table small
  if (word.size() > kMaxCompared) return "";
  std::string_view best;
  size_t best_distance = 3;
  for (std::string_view candidate : candidates) {
    size_t distance = EditDistance(word, candidate);
    if (distance < best_distance && distance < std::max(word.size(), candidate.size())) {
      best = candidate;
      best_distance = distance;
    }
  }
  return best.empty() ? "" : " (did you mean '" + std::string(best) + "'?)";
}

bool Contains(KeyList list, std::string_view word) {
  return std::find(list.begin(), list.end(), word) != list.end();
}

bool IsEnvName(std::string_view name) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
              (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

bool IsLoaderVariable(std::string_view name) {
  return name.starts_with("LD_") || name.starts_with("DYLD_");
}

bool HasControlCharacter(std::string_view text) {
  for (char c : text) {
    auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7F) return true;
  }
  return false;
}

// Tool and MCP server names: what LLM APIs accept as a tool name, and
// unambiguous inside "mcp.SERVER.TOOL".
bool IsValidName(std::string_view name) {
  return !name.empty() && name.size() <= kMaxNameLength && IsBareKey(name);
}

ConfigValue ToConfigValue(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::table: {
      ConfigValue::Object object;
      for (auto&& [key, member] : *node.as_table()) {
        object.emplace(std::string(key.str()), ToConfigValue(member));
      }
      return object;
    }
    case toml::node_type::array: {
      ConfigValue::Array array;
      for (const toml::node& element : *node.as_array()) array.push_back(ToConfigValue(element));
      return array;
    }
    case toml::node_type::string: return ConfigValue(node.as_string()->get());
    case toml::node_type::integer: return ConfigValue(node.as_integer()->get());
    case toml::node_type::floating_point: return ConfigValue(node.as_floating_point()->get());
    case toml::node_type::boolean: return ConfigValue(node.as_boolean()->get());
    default: {
      std::ostringstream out;
      node.visit([&](const auto& value) { out << value; });
      return ConfigValue(out.str());
    }
  }
}

// ---- The parser -------------------------------------------------------------

struct Diagnostic {
  uint32_t line = 0;
  uint32_t column = 0;
  std::string text;
};

class ConfigParser {
 public:
  ConfigParser(std::string_view source_name, const ConfigVariables& variables)
      : source_name_(source_name), variables_(variables) {
    config_.path = std::string(source_name);
  }

  void Parse(std::string_view text) {
    toml::table root;
    try {
      root = toml::parse(text, std::string_view(source_name_));
    } catch (const toml::parse_error& error) {
      AddError(error.source().begin, TomlMessage(error.description()));
      return;
    } catch (const std::exception& error) {  // e.g. bad_alloc; never escapes
      AddError({}, "cannot parse: " + EscapeForDisplay(error.what()));
      return;
    }
    ParseRoot(root);
  }

  ConfigCheck Finish() && {
    ConfigCheck check;
    check.config = std::move(config_);
    check.errors = Format(std::move(errors_));
    check.config.warnings = Format(std::move(warnings_));
    return check;
  }

 private:
  // ---- Reporting ----

  void AddError(const toml::source_position& where, std::string text) {
    errors_.push_back({where.line, where.column, std::move(text)});
  }
  void Error(const toml::node& node, std::string text) {
    AddError(node.source().begin, std::move(text));
  }
  void Error(const toml::key& key, std::string text) {
    AddError(key.source().begin, std::move(text));
  }
  void Warning(const toml::node& node, std::string text) {
    warnings_.push_back({node.source().begin.line, node.source().begin.column, std::move(text)});
  }

  std::vector<std::string> Format(std::vector<Diagnostic> diagnostics) const {
    std::stable_sort(diagnostics.begin(), diagnostics.end(),
                     [](const Diagnostic& a, const Diagnostic& b) {
                       return a.line != b.line ? a.line < b.line : a.column < b.column;
                     });
    std::vector<std::string> lines;
    std::string file = EscapeForDisplay(source_name_);
    for (Diagnostic& diagnostic : diagnostics) {
      if (diagnostic.line == 0) {
        lines.push_back(file + ": " + diagnostic.text);
      } else {
        lines.push_back(file + ":" + std::to_string(diagnostic.line) + ":" +
                        std::to_string(diagnostic.column) + ": " + diagnostic.text);
      }
    }
    return lines;
  }

  void WrongType(const toml::node& node, const std::string& path, std::string_view expected) {
    Error(node, Named(path) + " must be " + std::string(expected) + ", got " + Describe(node));
  }

  // Reports every key of `table` that is not in `known`.
  void RejectUnknownKeys(const toml::table& table, const std::string& path, KeyList known) {
    for (auto&& [key, value] : table) {
      if (Contains(known, key.str())) continue;
      Error(key, "unknown key " + Named(Child(path, key.str())) + Suggestion(key.str(), known));
    }
  }

  // ---- Typed access; each reports its own error and returns nullopt ----

  const toml::table* ExpectTable(const toml::node& node, const std::string& path) {
    if (const toml::table* table = node.as_table()) return table;
    WrongType(node, path, "a table");
    return nullptr;
  }

  std::optional<std::string> ExpectString(const toml::node& node, const std::string& path) {
    if (const auto* value = node.as_string()) return value->get();
    WrongType(node, path, "a string");
    return std::nullopt;
  }

  // A string that ends up in an argv or a path: no NUL byte.
  std::optional<std::string> ExpectArgument(const toml::node& node, const std::string& path) {
    std::optional<std::string> value = ExpectString(node, path);
    if (value && value->find('\0') != std::string::npos) {
      Error(node, Named(path) + " must not contain a NUL byte, got " + ShowString(*value));
      return std::nullopt;
    }
    return value;
  }

  std::optional<bool> ExpectBool(const toml::node& node, const std::string& path) {
    if (const auto* value = node.as_boolean()) return value->get();
    WrongType(node, path, "true or false");
    return std::nullopt;
  }

  // Calls `each(element, element_path)` for every element of an array.
  template <typename Each>
  void ForEachElement(const toml::node& node, const std::string& path, std::string_view expected,
                      Each each) {
    const toml::array* array = node.as_array();
    if (array == nullptr) {
      WrongType(node, path, expected);
      return;
    }
    for (size_t i = 0; i < array->size(); ++i) each((*array)[i], Index(path, i));
  }

  std::vector<std::string> ExpectArgumentList(const toml::node& node, const std::string& path) {
    std::vector<std::string> values;
    ForEachElement(node, path, "an array of strings",
                   [&](const toml::node& element, const std::string& element_path) {
                     if (auto value = ExpectArgument(element, element_path))
                       values.push_back(std::move(*value));
                   });
    return values;
  }

  // `word` of the command at `path` with every `${toolvfs.NAME}` replaced
  // by its value; nullopt (and an error naming the variable) for an
  // unknown name, one without a value here, or a missing '}'. Other `$`
  // text is left alone: a shell command may use its own variables.
  std::optional<std::string> ExpandVariables(const toml::node& node, const std::string& path,
                                             std::string_view word) {
    constexpr std::string_view kOpening = "${toolvfs.";
    std::string expanded;
    size_t at = 0;
    while (true) {
      size_t start = word.find(kOpening, at);
      if (start == std::string_view::npos) break;
      expanded += word.substr(at, start - at);
      size_t name_start = start + kOpening.size();
      size_t end = word.find('}', name_start);
      if (end == std::string_view::npos) {
        Error(node, Named(path) + " has " + ShowString(word.substr(start)) +
                        " without its closing '}'");
        return std::nullopt;
      }
      std::string_view name = word.substr(name_start, end - name_start);
      if (!Contains(kConfigVariableNames, name)) {
        Error(node, Named(path) + " uses unknown variable ${toolvfs." + std::string(name) + "}" +
                        Suggestion(name, kConfigVariableNames) + "; known: ${toolvfs.prefix}, ${toolvfs.sdk}");
        return std::nullopt;
      }
      auto value = variables_.find(name);
      if (value == variables_.end() || value->second.empty()) {
        Error(node, Named(path) + " uses ${toolvfs." + std::string(name) +
                        "}, which has no value here: this toolvfs found no share/toolvfs/sdk "
                        "directory near its binary (TOOLVFS_SDK_DIR=/abs/dir sets ${toolvfs.sdk}; "
                        "otherwise write the path itself)");
        return std::nullopt;
      }
      expanded += value->second;
      at = end + 1;
    }
    expanded += word.substr(at);
    return expanded;
  }

  // ExpandVariables for each word; false after the first error.
  bool ExpandVariables(const toml::node& node, const std::string& path, std::vector<std::string>& words) {
    for (std::string& word : words) {
      std::optional<std::string> expanded = ExpandVariables(node, path, word);
      if (!expanded) return false;
      word = std::move(*expanded);
    }
    return true;
  }

  std::vector<std::string> ExpectEnvNames(const toml::node& node, const std::string& path) {
    std::vector<std::string> names;
    ForEachElement(node, path, "an array of environment variable names",
                   [&](const toml::node& element, const std::string& element_path) {
                     std::optional<std::string> name = ExpectString(element, element_path);
                     if (!name) return;
                     if (!IsEnvName(*name)) {
                       Error(element, Named(element_path) +
                                          " must be an environment variable name "
                                          "([A-Za-z_][A-Za-z0-9_]*), got " +
                                          ShowString(*name));
                       return;
                     }
                     names.push_back(std::move(*name));
                   });
    return names;
  }

  // A project-relative prefix (or, with `glob`, pattern), normalized.
  std::optional<std::string> ExpectProjectPath(const toml::node& node, const std::string& path,
                                               bool glob) {
    std::optional<std::string> value = ExpectString(node, path);
    if (!value) return std::nullopt;
    auto reject = [&](std::string_view why) {
      Error(node, Named(path) + " " + std::string(why) + ", got " + ShowString(*value));
      return std::nullopt;
    };
    if (value->empty()) return reject("must be a project path (\".\" is the whole project)");
    if (HasControlCharacter(*value)) return reject("must not contain control characters");
    if (value->front() == '/') return reject("must be relative to the project root");
    if (!glob && value->find('*') != std::string::npos) {
      return reject(
          "is a prefix, not a pattern ('*' is not supported here; patterns belong in "
          "sensitive_paths)");
    }
    Result<std::string> normalized = NormalizePath(*value);
    if (!normalized.ok()) {
      if (normalized.status().code() == StatusCode::kPermissionDenied) {
        return reject("must stay inside the project root");
      }
      return reject("is not a valid project path");
    }
    return std::move(normalized).value();
  }

  std::vector<std::string> ExpectProjectPaths(const toml::node& node, const std::string& path,
                                              bool glob) {
    std::vector<std::string> paths;
    ForEachElement(node, path, "an array of project paths",
                   [&](const toml::node& element, const std::string& element_path) {
                     if (auto value = ExpectProjectPath(element, element_path, glob)) {
                       paths.push_back(std::move(*value));
                     }
                   });
    return paths;
  }

  // ---- Sections ----

  void ParseRoot(const toml::table& root) {
    RejectUnknownKeys(root, "", kTopLevelKeys);
    // Servers first: tool sources refer to them.
    if (const toml::node* servers = root.get("mcp_servers")) ParseMcpServers(*servers);
    if (const toml::node* tools = root.get("tools")) ParseTools(*tools);
    if (const toml::node* session = root.get("session")) ParseSession(*session);
  }

  std::optional<uint64_t> ExpectPositive(const toml::node& node, const std::string& path) {
    const auto* number = node.as_integer();
    if (number == nullptr || number->get() <= 0) {
      WrongType(node, path, "a positive integer");
      return std::nullopt;
    }
    return static_cast<uint64_t>(number->get());
  }

  void ParseSession(const toml::node& node) {
    const toml::table* table = ExpectTable(node, "session");
    if (table == nullptr) return;
    RejectUnknownKeys(*table, "session", kSessionKeys);
    SessionConfig session;
    if (const toml::node* store = table->get("store")) session.store = ExpectArgument(*store, "session.store");
    if (const toml::node* value = table->get("max_content_chars"))
      session.max_content_chars = ExpectPositive(*value, "session.max_content_chars");
    if (const toml::node* value = table->get("max_depth"))
      session.max_depth = ExpectPositive(*value, "session.max_depth");
    if (const toml::node* value = table->get("max_segment_chars"))
      session.max_segment_chars = ExpectPositive(*value, "session.max_segment_chars");
    if (const toml::node* value = table->get("max_total_bytes"))
      session.max_total_bytes = ExpectPositive(*value, "session.max_total_bytes");
    if (const toml::node* value = table->get("max_files"))
      session.max_files = ExpectPositive(*value, "session.max_files");
    if (const toml::node* roots = table->get("allowed_roots"))
      session.allowed_roots = ExpectArgumentList(*roots, "session.allowed_roots");
    if (const toml::node* mounts = table->get("mounts")) {
      ForEachElement(*mounts, "session.mounts", "an array of tables ([[session.mounts]])",
                     [&](const toml::node& element, const std::string& element_path) {
                       if (auto mount = ParseSessionMount(element, element_path)) {
                         session.mounts.push_back(std::move(*mount));
                       }
                     });
    }
    config_.session = std::move(session);
  }

  std::optional<SessionMountConfig> ParseSessionMount(const toml::node& node, const std::string& path) {
    const toml::table* table = ExpectTable(node, path);
    if (table == nullptr) return std::nullopt;
    RejectUnknownKeys(*table, path, kSessionMountKeys);
    SessionMountConfig mount;
    const toml::node* host_path = table->get("host_path");
    if (host_path == nullptr) {
      Error(node, Named(path) + " has no 'host_path'; a mount needs the host folder to load");
      return std::nullopt;
    }
    std::optional<std::string> host = ExpectArgument(*host_path, Child(path, "host_path"));
    if (!host) return std::nullopt;
    mount.host_path = std::move(*host);
    if (const toml::node* value = table->get("mount_path")) {
      if (auto text = ExpectArgument(*value, Child(path, "mount_path"))) mount.mount_path = std::move(*text);
    }
    if (const toml::node* value = table->get("include_glob"))
      mount.include_glob = ExpectArgumentList(*value, Child(path, "include_glob"));
    if (const toml::node* value = table->get("exclude_glob"))
      mount.exclude_glob = ExpectArgumentList(*value, Child(path, "exclude_glob"));
    if (const toml::node* value = table->get("max_bytes"))
      mount.max_bytes = ExpectPositive(*value, Child(path, "max_bytes"));
    if (const toml::node* value = table->get("follow_symlinks")) {
      if (auto flag = ExpectBool(*value, Child(path, "follow_symlinks"))) mount.follow_symlinks = *flag;
    }
    return mount;
  }

  void ParseMcpServers(const toml::node& node) {
    const toml::table* servers = ExpectTable(node, "mcp_servers");
    if (servers == nullptr) return;
    for (auto&& [key, value] : *servers) {
      std::string name(key.str());
      std::string path = Child("mcp_servers", name);
      if (!IsValidName(name)) {
        Error(key, "MCP server name " + Named(path) +
                       " must be 1-64 characters of A-Z, a-z, 0-9, '_' and '-'");
        continue;
      }
      declared_servers_.insert(name);
      const toml::table* table = ExpectTable(value, path);
      if (table == nullptr) continue;
      RejectUnknownKeys(*table, path, kMcpServerKeys);
      McpServerConfig server;
      server.name = name;
      if (const toml::node* command = table->get("command")) {
        if (auto program = ExpectArgument(*command, Child(path, "command"))) {
          if (program->empty()) {
            Error(*command, Named(Child(path, "command")) + " must not be empty");
          }
          server.command = std::move(*program);
        }
      } else {
        Error(value, Named(path) + " has no 'command'; an MCP server needs the program to start");
      }
      if (const toml::node* command = table->get("command"); command != nullptr && !server.command.empty()) {
        if (auto expanded = ExpandVariables(*command, Child(path, "command"), server.command)) {
          server.command = std::move(*expanded);
        }
      }
      if (const toml::node* args = table->get("args")) {
        server.args = ExpectArgumentList(*args, Child(path, "args"));
        ExpandVariables(*args, Child(path, "args"), server.args);
      }
      if (const toml::node* env = table->get("env"))
        server.env = ExpectEnvNames(*env, Child(path, "env"));
      config_.mcp_servers.emplace(name, std::move(server));
    }
  }

  void ParseTools(const toml::node& node) {
    const toml::table* tools = ExpectTable(node, "tools");
    if (tools == nullptr) return;
    for (auto&& [key, value] : *tools) {
      std::string name(key.str());
      std::string path = Child("tools", name);
      if (!IsValidName(name)) {
        Error(key, "tool name " + Named(path) +
                       " must be 1-64 characters of A-Z, a-z, 0-9, '_' and '-'");
        continue;
      }
      const toml::table* table = ExpectTable(value, path);
      if (table == nullptr) continue;
      ToolConfig tool;
      tool.name = name;
      ParseTool(*table, path, tool);
      config_.tools.emplace(name, std::move(tool));
    }
  }

  void ParseTool(const toml::table& table, const std::string& path, ToolConfig& tool) {
    RejectUnknownKeys(table, path, kToolKeys);
    bool source_known = true;
    if (const toml::node* source = table.get("source")) {
      source_known = ParseSource(*source, Child(path, "source"), tool);
    }

    // With an unreadable source there is no telling whether a command belongs.
    const toml::node* command = table.get("command");
    if (source_known && tool.source == ToolSource::kLocal) {
      if (command != nullptr) {
        tool.command = ParseCommand(*command, Child(path, "command"));
      } else {
        Error(table, Named(path) + " has no 'command'; a local tool needs the program to run");
      }
    } else if (source_known && command != nullptr) {
      Error(*command,
            Named(Child(path, "command")) + " is not used by " +
                std::string(ToolSourceName(tool.source)) + " tools" +
                (tool.source == ToolSource::kMcp ? "; the server's command is set in [mcp_servers]"
                                                 : "") +
                "; remove it");
    }

    if (const toml::node* runtime = table.get("runtime")) {
      std::string runtime_path = Child(path, "runtime");
      if (auto name = ExpectString(*runtime, runtime_path)) {
        if (*name == "stdio") {
          tool.runtime = RuntimeKind::kStdio;
        } else if (*name == "vfs") {
          tool.runtime = RuntimeKind::kVfs;
        } else if (*name == "wasm") {
          tool.runtime = RuntimeKind::kWasm;
        } else {
          Error(*runtime, Named(runtime_path) + " must be \"stdio\", \"vfs\" or \"wasm\", got " +
                              ShowString(*name) + Suggestion(*name, kRuntimeNames));
        }
        if (tool.runtime && source_known && tool.source != ToolSource::kLocal) {
          Warning(*runtime, Named(runtime_path) +
                                " is ignored: " + std::string(ToolSourceName(tool.source)) +
                                " tools always run in the " +
                                std::string(ToolSourceName(tool.source)) + " runtime");
        }
      }
    }

    if (const toml::node* description = table.get("description")) {
      if (auto text = ExpectString(*description, Child(path, "description")))
        tool.description = std::move(*text);
    }
    if (const toml::node* parameters = table.get("parameters")) {
      ParseParameters(*parameters, Child(path, "parameters"), tool.parameters);
    }
    if (const toml::node* options = table.get("options")) {
      if (ExpectTable(*options, Child(path, "options")) != nullptr) {
        tool.options = ToConfigValue(*options).as_object();
      }
    }
    if (const toml::node* stateful = table.get("stateful")) {
      if (auto value = ExpectBool(*stateful, Child(path, "stateful"))) tool.stateful = *value;
    }
    if (const toml::node* questions = table.get("questions")) {
      ParseQuestions(*questions, Child(path, "questions"), tool);
    }
    if (const toml::node* sandbox = table.get("sandbox")) {
      tool.has_sandbox_table = true;
      ParseSandbox(*sandbox, Child(path, "sandbox"), tool.sandbox);
    }
  }

  // False if the source is not one of the known forms (the error is reported).
  bool ParseSource(const toml::node& node, const std::string& path, ToolConfig& tool) {
    std::optional<std::string> source = ExpectString(node, path);
    if (!source) return false;
    if (*source == "local") {
      tool.source = ToolSource::kLocal;
      return true;
    }
    if (*source == "builtin") {
      tool.source = ToolSource::kBuiltin;
      return true;
    }
    if (source->starts_with("mcp.")) {
      std::string_view rest = std::string_view(*source).substr(4);
      size_t dot = rest.find('.');
      std::string_view server = rest.substr(0, dot);
      std::string_view mcp_tool = dot == std::string_view::npos ? "" : rest.substr(dot + 1);
      if (!IsValidName(server) || (dot != std::string_view::npos && mcp_tool.empty()) ||
          HasControlCharacter(mcp_tool)) {
        Error(node, Named(path) + " must be \"mcp.SERVER\" or \"mcp.SERVER.TOOL\", got " +
                        ShowString(*source));
        return false;
      }
      // An mcp tool even when the server is unknown: the error below is the
      // only one (a `command` is still out of place).
      tool.source = ToolSource::kMcp;
      tool.mcp_server = std::string(server);
      tool.mcp_tool = std::string(mcp_tool);
      if (!declared_servers_.contains(tool.mcp_server)) {
        Error(node, Named(path) + " names the MCP server " + Quote(server) +
                        ", which is not configured; add [mcp_servers." + std::string(server) + "]");
      }
      return true;
    }
    if (*source == "mcp") {
      Error(node, Named(path) + " must name the server: \"mcp.SERVER\" or \"mcp.SERVER.TOOL\"");
      return false;
    }
    Error(node, Named(path) +
                    " must be \"local\", \"builtin\", \"mcp.SERVER\" or \"mcp.SERVER.TOOL\", got " +
                    ShowString(*source) + Suggestion(*source, kSourceNames));
    return false;
  }

  std::optional<CommandSpec> ParseCommand(const toml::node& node, const std::string& path) {
    CommandSpec command;
    if (const auto* text = node.as_string()) {
      if (text->get().find('\0') != std::string::npos) {
        Error(node, Named(path) + " must not contain a NUL byte");
        return std::nullopt;
      }
      Result<std::vector<std::string>> words = SplitShellWords(text->get());
      if (!words.ok()) {
        Error(node, Named(path) + " " + words.status().message());
        return std::nullopt;
      }
      if (!ExpandVariables(node, path, *words)) return std::nullopt;
      command.from_string = true;
      command.program = std::move(words->front());
      command.args.assign(std::make_move_iterator(words->begin() + 1),
                          std::make_move_iterator(words->end()));
      if (command.program.empty()) {
        Error(node, Named(path) + " starts with an empty program name");
        return std::nullopt;
      }
      return command;
    }
    const toml::table* table = node.as_table();
    if (table == nullptr) {
      WrongType(node, path, "a string or a table { program, args, shell }");
      return std::nullopt;
    }
    RejectUnknownKeys(*table, path, kCommandTableKeys);
    bool valid = true;
    if (const toml::node* program = table->get("program")) {
      std::optional<std::string> value = ExpectArgument(*program, Child(path, "program"));
      if (value && value->empty()) {
        Error(*program, Named(Child(path, "program")) + " must not be empty");
        value.reset();
      }
      std::optional<std::string> expanded;
      if (value) expanded = ExpandVariables(*program, Child(path, "program"), *value);
      if (expanded) command.program = std::move(*expanded);
      valid = valid && expanded.has_value();
    } else {
      Error(node, Named(path) + " has no 'program'");
      valid = false;
    }
    if (const toml::node* args = table->get("args")) {
      command.args = ExpectArgumentList(*args, Child(path, "args"));
      valid = ExpandVariables(*args, Child(path, "args"), command.args) && valid;
    }
    if (const toml::node* shell = table->get("shell")) {
      if (auto value = ExpectBool(*shell, Child(path, "shell"))) command.shell = *value;
    }
    if (!valid) return std::nullopt;
    return command;
  }

  void ParseParameters(const toml::node& node, const std::string& path, ConfigValue::Object& out) {
    const toml::table* table = ExpectTable(node, path);
    if (table == nullptr) return;
    for (auto&& [key, value] : *table) {
      std::string parameter_path = Child(path, key.str());
      const toml::table* schema = value.as_table();
      if (schema == nullptr) {
        WrongType(value, parameter_path,
                  "a table (a parameter schema such as { type = \"string\" })");
        continue;
      }
      CheckSchema(*schema, parameter_path);
      out.emplace(std::string(key.str()), ToConfigValue(value));
    }
  }

  // Checks the keyword types of one JSON-Schema-like parameter schema.
  void CheckSchema(const toml::table& schema, const std::string& path) {
    RejectUnknownKeys(schema, path, kSchemaKeys);
    for (auto&& [key, value] : schema) {
      std::string_view keyword = key.str();
      std::string keyword_path = Child(path, keyword);
      if (keyword == "type") {
        CheckSchemaType(value, keyword_path);
      } else if (keyword == "pattern") {
        // Checked here so a typo fails `toolvfs check`, not the first call.
        std::optional<std::string> pattern = ExpectString(value, keyword_path);
        if (pattern) {
          RE2 expression(*pattern, RE2::Quiet);
          if (!expression.ok()) {
            Error(value, Quote(keyword_path) + " is not a valid regular expression (RE2 syntax): " +
                             expression.error());
          }
        }
      } else if (keyword == "description" || keyword == "title" || keyword == "format") {
        (void)ExpectString(value, keyword_path);
      } else if (keyword == "required") {
        if (!value.is_boolean()) {
          WrongType(value, keyword_path,
                    "true or false (each parameter says whether it is required)");
        }
      } else if (keyword == "uniqueItems") {
        (void)ExpectBool(value, keyword_path);
      } else if (keyword == "enum") {
        const toml::array* values = value.as_array();
        if (values == nullptr || values->empty())
          WrongType(value, keyword_path, "a non-empty array");
      } else if (keyword == "examples") {
        if (!value.is_array()) WrongType(value, keyword_path, "an array");
      } else if (keyword == "items") {
        if (const toml::table* items = ExpectTable(value, keyword_path))
          CheckSchema(*items, keyword_path);
      } else if (keyword == "properties") {
        const toml::table* properties = ExpectTable(value, keyword_path);
        if (properties == nullptr) continue;
        for (auto&& [property, property_schema] : *properties) {
          std::string property_path = Child(keyword_path, property.str());
          if (const toml::table* nested = property_schema.as_table()) {
            CheckSchema(*nested, property_path);
          } else {
            WrongType(property_schema, property_path, "a table (a parameter schema)");
          }
        }
      } else if (keyword == "minimum" || keyword == "maximum" || keyword == "exclusiveMinimum" ||
                 keyword == "exclusiveMaximum") {
        if (!value.is_number()) WrongType(value, keyword_path, "a number");
      } else if (keyword == "minLength" || keyword == "maxLength" || keyword == "minItems" ||
                 keyword == "maxItems") {
        const auto* number = value.as_integer();
        if (number == nullptr || number->get() < 0)
          WrongType(value, keyword_path, "a non-negative integer");
      }
      // "default": any value.
    }
  }

  void CheckSchemaType(const toml::node& node, const std::string& path) {
    auto check_name = [&](const toml::node& element, const std::string& element_path) {
      std::optional<std::string> name = ExpectString(element, element_path);
      if (name && !Contains(kSchemaTypes, *name)) {
        Error(element,
              Named(element_path) +
                  " must be one of string, number, integer, boolean, array, object, null; got " +
                  ShowString(*name) + Suggestion(*name, kSchemaTypes));
      }
    };
    if (const toml::array* names = node.as_array()) {
      if (names->empty()) WrongType(node, path, "a type name or a non-empty array of type names");
      for (size_t i = 0; i < names->size(); ++i) check_name((*names)[i], Index(path, i));
      return;
    }
    if (!node.is_string()) {
      WrongType(node, path, "a type name or an array of type names");
      return;
    }
    check_name(node, path);
  }

  void ParseQuestions(const toml::node& node, const std::string& path, ToolConfig& tool) {
    const toml::table* questions = ExpectTable(node, path);
    if (questions == nullptr) return;
    for (auto&& [key, value] : *questions) {
      std::string question_path = Child(path, key.str());
      const toml::table* question = ExpectTable(value, question_path);
      if (question == nullptr) continue;
      RejectUnknownKeys(*question, question_path, kQuestionKeys);
      const toml::node* answer = question->get("answer");
      if (answer == nullptr) {
        Error(value, Named(question_path) + " has no 'answer'");
        continue;
      }
      if (!answer->is_boolean() && !answer->is_string()) {
        WrongType(*answer, Child(question_path, "answer"), "true, false or a string");
        continue;
      }
      tool.question_answers.emplace(std::string(key.str()), ToConfigValue(*answer));
    }
  }

  void ParseSandbox(const toml::node& node, const std::string& path, SandboxConfig& sandbox) {
    const toml::table* table = ExpectTable(node, path);
    if (table == nullptr) return;
    RejectUnknownKeys(*table, path, kSandboxKeys);
    if (const toml::node* filesystem = table->get("filesystem")) {
      ParseFilesystem(*filesystem, Child(path, "filesystem"), sandbox);
    }
    if (const toml::node* network = table->get("network")) {
      ParseNetwork(*network, Child(path, "network"), sandbox);
    }
    if (const toml::node* commands = table->get("commands")) {
      ParseCommands(*commands, Child(path, "commands"), sandbox);
    }
    if (const toml::node* sensitive = table->get("sensitive_paths")) {
      sandbox.sensitive_paths =
          ExpectProjectPaths(*sensitive, Child(path, "sensitive_paths"), /*glob=*/true);
    }
    if (const toml::node* system_read = table->get("system_read")) {
      ParseSystemRead(*system_read, Child(path, "system_read"), sandbox);
    }
    if (const toml::node* limits = table->get("limits")) {
      ParseLimits(*limits, Child(path, "limits"), sandbox.limits);
    }
  }

  void ParseFilesystem(const toml::node& node, const std::string& path, SandboxConfig& sandbox) {
    const toml::table* table = ExpectTable(node, path);
    if (table == nullptr) return;
    RejectUnknownKeys(*table, path, kFilesystemKeys);
    if (const toml::node* allow = table->get("allow")) {
      sandbox.filesystem_allow = ExpectProjectPaths(*allow, Child(path, "allow"), /*glob=*/false);
    }
    if (const toml::node* writable = table->get("writable")) {
      std::string writable_path = Child(path, "writable");
      if (const auto* flag = writable->as_boolean()) {
        sandbox.filesystem_writable.all = flag->get();
      } else if (writable->is_array()) {
        sandbox.filesystem_writable.prefixes =
            ExpectProjectPaths(*writable, writable_path, /*glob=*/false);
      } else {
        WrongType(*writable, writable_path, "true, false or an array of project paths");
      }
    }
    if (const toml::node* deny = table->get("deny")) {
      sandbox.filesystem_deny = ExpectProjectPaths(*deny, Child(path, "deny"), /*glob=*/false);
    }
  }

  std::vector<std::string> ExpectUrlPrefixes(const toml::node& node, const std::string& path) {
    std::vector<std::string> urls;
    ForEachElement(node, path, "an array of URL prefixes",
                   [&](const toml::node& element, const std::string& element_path) {
                     std::optional<std::string> url = ExpectString(element, element_path);
                     if (!url) return;
                     Status valid = CheckUrlPrefix(*url);
                     if (!valid.ok()) {
                       Error(element, Named(element_path) + " is not a valid URL prefix: it " +
                                          valid.message() + "; got " + ShowString(*url));
                       return;
                     }
                     urls.push_back(std::move(*url));
                   });
    return urls;
  }

  void ParseNetwork(const toml::node& node, const std::string& path, SandboxConfig& sandbox) {
    const toml::table* table = ExpectTable(node, path);
    if (table == nullptr) return;
    RejectUnknownKeys(*table, path, kNetworkKeys);
    if (const toml::node* allow = table->get("allow"))
      sandbox.network_allow = ExpectUrlPrefixes(*allow, Child(path, "allow"));
    if (const toml::node* deny = table->get("deny"))
      sandbox.network_deny = ExpectUrlPrefixes(*deny, Child(path, "deny"));
    if (const toml::node* envs = table->get("envs"))
      sandbox.network_envs = ExpectEnvNames(*envs, Child(path, "envs"));
  }

  void ParseCommands(const toml::node& node, const std::string& path, SandboxConfig& sandbox) {
    const toml::table* table = ExpectTable(node, path);
    if (table == nullptr) return;
    for (auto&& [key, value] : *table) {
      std::string program(key.str());
      std::string rule_path = Child(path, program);
      if (program.empty() || HasControlCharacter(program) ||
          program.find_first_of(" \t") != std::string::npos) {
        Error(key, Named(rule_path) +
                       " must be named after a program (no spaces; arguments go in 'args')");
        continue;
      }
      if (auto rule = ParseCommandRule(value, rule_path))
        sandbox.commands.emplace(program, std::move(*rule));
    }
  }

  std::optional<CommandRule> ParseCommandRule(const toml::node& node, const std::string& path) {
    CommandRule rule;
    if (const auto* flag = node.as_boolean()) {
      if (flag->get()) {
        Error(node, Named(path) +
                        " must be false (deny) or a table { args, envs }; "
                        "to allow any arguments write {}");
        return std::nullopt;
      }
      rule.denied = true;
      return rule;
    }
    const toml::table* table = node.as_table();
    if (table == nullptr) {
      WrongType(node, path, "false or a table { args, envs }");
      return std::nullopt;
    }
    RejectUnknownKeys(*table, path, kCommandRuleKeys);
    if (const toml::node* args = table->get("args")) {
      std::string args_path = Child(path, "args");
      std::vector<std::vector<std::string>> lists;
      ForEachElement(
          *args, args_path, "an array of argument lists, e.g. [[\"check\", \"**\"]]",
          [&](const toml::node& element, const std::string& list_path) {
            if (!element.is_array()) {
              WrongType(
                  element, list_path,
                  "an array of strings (one allowed argument list, e.g. [\"check\", \"**\"])");
              return;
            }
            std::vector<std::string> list = ExpectArgumentList(element, list_path);
            const toml::array& elements = *element.as_array();
            for (size_t i = 0; i + 1 < list.size() && i + 1 < elements.size(); ++i) {
              if (list[i] == "**") {
                Error(elements[i],
                      Named(Index(list_path, i)) +
                          ": \"**\" is only allowed as the last element of an argument list");
              }
            }
            lists.push_back(std::move(list));
          });
      rule.args = std::move(lists);
    }
    if (const toml::node* envs = table->get("envs")) {
      std::string envs_path = Child(path, "envs");
      rule.envs = ExpectEnvNames(*envs, envs_path);
      if (const toml::array* array = envs->as_array()) {
        for (size_t i = 0; i < array->size(); ++i) {
          const auto* name = (*array)[i].as_string();
          if (name != nullptr && IsLoaderVariable(name->get())) {
            Warning((*array)[i], Named(Index(envs_path, i)) +
                                     ": loader variables (LD_*, DYLD_*) are never "
                                     "forwarded; " +
                                     Quote(name->get()) + " has no effect");
          }
        }
      }
    }
    return rule;
  }

  void ParseSystemRead(const toml::node& node, const std::string& path, SandboxConfig& sandbox) {
    ForEachElement(
        node, path, "an array of absolute paths",
        [&](const toml::node& element, const std::string& element_path) {
          std::optional<std::string> value = ExpectString(element, element_path);
          if (!value) return;
          if (value->empty() || value->front() != '/') {
            Error(element,
                  Named(element_path) + " must be an absolute path, got " + ShowString(*value));
            return;
          }
          if (HasControlCharacter(*value)) {
            Error(element, Named(element_path) + " must not contain control characters, got " +
                               ShowString(*value));
            return;
          }
          sandbox.system_read.push_back(std::move(*value));
        });
  }

  void ParseLimits(const toml::node& node, const std::string& path, LimitsConfig& limits) {
    const toml::table* table = ExpectTable(node, path);
    if (table == nullptr) return;
    RejectUnknownKeys(*table, path, kLimitsKeys);
    struct Field {
      std::string_view key;
      int64_t* target;
    };
    const Field fields[] = {
        {"timeout_s", &limits.timeout_s},           {"idle_timeout_s", &limits.idle_timeout_s},
        {"cancel_grace_s", &limits.cancel_grace_s}, {"memory_mb", &limits.memory_mb},
        {"max_message_mb", &limits.max_message_mb}, {"max_processes", &limits.max_processes},
    };
    for (const Field& field : fields) {
      const toml::node* value = table->get(field.key);
      if (value == nullptr) continue;
      std::string field_path = Child(path, field.key);
      const auto* number = value->as_integer();
      if (number == nullptr || number->get() <= 0) {
        WrongType(*value, field_path, "a positive integer");
      } else if (number->get() > LimitsConfig::kMaxLimit) {
        Error(*value, Named(field_path) + " must be at most " +
                          std::to_string(LimitsConfig::kMaxLimit) + ", got " +
                          std::to_string(number->get()));
      } else {
        *field.target = number->get();
      }
    }
  }

  std::string source_name_;
  const ConfigVariables& variables_;
  Config config_;
  std::set<std::string, std::less<>> declared_servers_;
  std::vector<Diagnostic> errors_;
  std::vector<Diagnostic> warnings_;
};

}  // namespace

ConfigCheck CheckConfigText(std::string_view text, std::string_view source_name,
                            const ConfigVariables& variables) {
  ConfigParser parser(source_name, variables);
  parser.Parse(text);
  return std::move(parser).Finish();
}

Result<Config> ParseConfig(std::string_view text, std::string_view source_name,
                           const ConfigVariables& variables) {
  ConfigCheck check = CheckConfigText(text, source_name, variables);
  if (check.errors.empty()) return std::move(check.config);
  std::string message = std::move(check.errors.front());
  size_t more = check.errors.size() - 1;
  if (more > 0) {
    message += " (and " + std::to_string(more) + (more == 1 ? " more error)" : " more errors)");
  }
  return InvalidArgumentError(std::move(message));
}

Result<std::string> ReadConfigText(const std::string& path) {
  std::string what = "Cannot read config file " + Quote(path);
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return ErrnoToStatus(errno, what);
  return ReadToEnd(fd.get(), kMaxConfigBytes, what);
}

Result<Config> LoadConfig(const std::string& path, const ConfigVariables& variables) {
  TOOLVFS_ASSIGN_OR_RETURN(std::string text, ReadConfigText(path));
  return ParseConfig(text, path, variables);
}

Result<ConfigCheck> CheckConfigFile(const std::string& path, const ConfigVariables& variables) {
  TOOLVFS_ASSIGN_OR_RETURN(std::string text, ReadConfigText(path));
  return CheckConfigText(text, path, variables);
}

}  // namespace toolvfs
