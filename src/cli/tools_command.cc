// `toolvfs tools`: the tools of toolvfs.toml with their resolved runtime,
// source and description, as a table for people or a JSON array.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/project_opening.h"
#include "cli/terminal.h"
#include "cli/tool_invocation.h"
#include "config/config.h"
#include "core/io.h"
#include "core/text.h"
#include "project/project_files.h"
#include "protocol/json_writer.h"
#include "runtime/builtin_runtime.h"
#include "runtime/mcp_runtime.h"
#include "runtime/tool_schema.h"
#include "session/session_tools.h"
#include "session/session_workspace.h"

namespace toolvfs {
namespace {

// "local", "builtin", "mcp.SERVER" or "mcp.SERVER.TOOL": the `source` key
// as written (the default spelled out).
std::string SourceText(const ToolConfig& tool) {
  if (tool.source != ToolSource::kMcp) return std::string(ToolSourceName(tool.source));
  std::string source = "mcp." + tool.mcp_server;
  if (!tool.mcp_tool.empty()) source += "." + tool.mcp_tool;
  return source;
}

// A description on one line: runs of whitespace (line breaks included)
// become one space, other control characters are escaped.
std::string OneLine(std::string_view text) {
  std::string out;
  bool space = false;
  for (char c : text) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    unsigned char byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) {
      out += EscapeForDisplay(std::string_view(&c, 1));
    } else {
      out += c;
    }
  }
  return out;
}

struct Row {
  std::string name;
  std::string runtime;        // resolved runtime, or "unsupported"
  std::string runtime_error;  // ResolveRuntime's message when it failed, or the MCP server's
  std::string source;
  std::string description;
};

// What the MCP servers say about the config's mcp tools: the tools each
// `source = "mcp.SERVER"` entry imports, and the server's description of
// `mcp.SERVER.TOOL` entries that have none of their own. Listing starts
// the servers that are needed (and only those), each under its entry's
// sandbox; a server that fails is reported on its entry's row.
struct McpListing {
  ImportedMcpTools imports;
  // entry name -> the server's inputSchema of a `mcp.SERVER.TOOL` entry
  // that declares no parameters of its own (listed for --json only).
  std::map<std::string, std::string> input_schemas;
  std::map<std::string, std::string> descriptions;  // entry name -> the server's description
  std::map<std::string, std::string> errors;        // entry name -> why its server said nothing
};

// How the project's builtins run: on a session workspace list_directory,
// read_file, write_file and delete_file are the session tools, with their
// own schemas and descriptions (docs/sessions.md).
struct Builtins {
  const BuiltinRuntime& runtime;
  bool session = false;
};

// What a tool says it does: the config's description; for an mcp tool
// without one, its server's; for a builtin without one, its own (the
// session tool's on a session workspace).
std::string DescriptionOf(const std::string& name, const ToolConfig& tool, const McpListing& mcp,
                          const Builtins& builtins) {
  if (auto described = mcp.descriptions.find(name); described != mcp.descriptions.end()) return described->second;
  if (tool.description.empty() && tool.source == ToolSource::kBuiltin) {
    if (const SessionToolInfo* session_tool = FindSessionTool(name); session_tool && builtins.session) {
      return std::string(session_tool->description);
    }
    if (const BuiltinToolInfo* builtin = FindBuiltinTool(name)) return builtin->description;
  }
  return tool.description;
}

// The parameters a call is checked against: a builtin declares its own
// (ToolRuntime::Parameters, so the session tools' on a session workspace).
const ConfigValue::Object& ParametersOf(const ToolConfig& tool, const Builtins& builtins) {
  if (tool.source == ToolSource::kBuiltin) return builtins.runtime.Parameters(tool);
  return tool.parameters;
}

// Whether the server of an `mcp.SERVER.TOOL` entry must be asked about it:
// for its description, and with `schemas` for its input schema.
bool NeedsServer(const ToolConfig& tool, bool schemas) {
  if (tool.source != ToolSource::kMcp || IsMcpImport(tool)) return false;
  return tool.description.empty() || (schemas && tool.parameters.empty());
}

McpListing ListMcpTools(const CommonOptions& common, ProjectFiles& store, const Config& config, bool schemas) {
  McpListing listing;
  bool needed = false;
  for (const auto& [name, tool] : config.tools) needed = needed || IsMcpImport(tool) || NeedsServer(tool, schemas);
  if (!needed) return listing;
  CommonOptions quiet = common;
  quiet.no_audit = true;
  Result<RunServices> services = PrepareRunServices(quiet, ConfigPath(common));
  if (!services.ok()) {
    for (const auto& [name, tool] : config.tools) {
      if (tool.source == ToolSource::kMcp) listing.errors.emplace(name, services.status().message());
    }
    return listing;
  }
  McpRuntimeOptions options;
  services->ConfigureRuntime(options);
  McpRuntime runtime(store, config.mcp_servers, std::move(options));
  CancelToken cancel;
  listing.imports = ListImportedMcpTools(runtime, config, cancel);
  listing.errors = listing.imports.errors;
  for (const auto& [name, tool] : config.tools) {
    if (!NeedsServer(tool, schemas)) continue;
    Result<std::vector<McpToolInfo>> tools = runtime.ListTools(tool, cancel);
    if (!tools.ok()) {
      listing.errors.emplace(name, tools.status().message());
      continue;
    }
    bool found = false;
    for (const McpToolInfo& info : *tools) {
      if (info.name != tool.mcp_tool) continue;
      if (tool.description.empty()) listing.descriptions.emplace(name, info.description);
      if (tool.parameters.empty()) listing.input_schemas.emplace(name, info.input_schema_json);
      found = true;
    }
    if (!found) {
      listing.errors.emplace(name, "MCP server " + Quote(tool.mcp_server) + " has no tool " + Quote(tool.mcp_tool));
    }
  }
  return listing;
}

class ToolsCommand final : public Command {
 public:
  void AddOptions(CLI::App& app) override {
    app.add_flag("--json", json_,
                 "Print a JSON array: [{\"name\",\"runtime\",\"source\",\"description\",\"input_schema\",...}]");
    app.footer(
        "Lists the tools of --config FILE, else of toolvfs.toml in the project directory.\n"
        "Example: toolvfs tools --json --project examples/project\n"
        "Exit codes: 0 listed (also when there are none), 2 the config is missing or invalid, 69 the "
        "store's server is unavailable (try again).");
  }

  unsigned UsedCommonOptions() const override { return kOptionProject | kOptionConfig | kOptionLogLevel; }

  int Run(const CommonOptions& common) override {
    Result<std::unique_ptr<ProjectFiles>> store = OpenCommandProject(common.project, ProjectUse::kRead);
    if (!store.ok()) return ReportStatus("--project", store.status());
    Result<LoadedConfig> loaded = LoadToolConfig(common);
    if (!loaded.ok()) return ReportError("tools", loaded.status().message());
    ReportConfigWarnings(*loaded, common);

    const McpListing mcp = ListMcpTools(common, **store, loaded->config, json_);
    // A project that cannot say (the null store) is no session.
    Result<bool> is_session = SessionWorkspace::IsSession(**store);
    const bool session = is_session.ok() && *is_session;
    BuiltinRuntime runtime(**store, BuiltinRuntimeOptions{.session_workspace = session});
    const Builtins builtins{runtime, session};
    std::string out = json_ ? Json(loaded->config, mcp, builtins) : Table(*loaded, mcp, builtins);
    Status written = WriteFull(STDOUT_FILENO, out, "standard output");
    if (!written.ok()) return ReportError("tools", written.message());
    return kExitOk;
  }

 private:
  // The configured tools in name order, each import entry followed by the
  // tools it imports (named as `toolvfs run` takes them).
  static std::vector<Row> Rows(const Config& config, const McpListing& mcp, const Builtins& builtins) {
    std::vector<Row> rows;
    for (const auto& [name, tool] : config.tools) {
      Row row;
      row.name = name;
      Result<RuntimeKind> runtime = ResolveRuntime(tool);
      if (runtime.ok()) {
        row.runtime = RuntimeKindName(*runtime);
      } else {
        row.runtime = "unsupported";
        row.runtime_error = runtime.status().message();
      }
      row.source = SourceText(tool);
      row.description = OneLine(DescriptionOf(name, tool, mcp, builtins));
      // What a server says reaches the terminal escaped, like descriptions.
      if (auto error = mcp.errors.find(name); error != mcp.errors.end()) row.runtime_error = OneLine(error->second);
      if (IsMcpImport(tool) && row.description.empty()) row.description = "(imports every tool of the server)";
      rows.push_back(std::move(row));
      for (const ImportedMcpTool& imported : mcp.imports.tools) {
        if (imported.entry != name) continue;
        rows.push_back(Row{.name = OneLine(imported.name),
                           .runtime = "mcp",
                           .runtime_error = {},
                           .source = SourceText(imported.tool),
                           .description = OneLine(imported.tool.description)});
      }
    }
    return rows;
  }

  static std::string Table(const LoadedConfig& loaded, const McpListing& mcp, const Builtins& builtins) {
    if (loaded.config.tools.empty()) return "No tools are configured in " + loaded.path + ".\n";
    Palette palette = MakePalette(ColorEnabled(STDOUT_FILENO));
    std::vector<Row> rows = Rows(loaded.config, mcp, builtins);
    size_t name_width = 4, runtime_width = 7, source_width = 6;  // the headings
    for (const Row& row : rows) {
      name_width = std::max(name_width, row.name.size());
      runtime_width = std::max(runtime_width, row.runtime.size());
      source_width = std::max(source_width, row.source.size());
    }
    auto pad = [](std::string& out, size_t used, size_t width) { out.append(width - used + 2, ' '); };
    std::string out = "NAME";
    pad(out, 4, name_width);
    out += "RUNTIME";
    pad(out, 7, runtime_width);
    out += "SOURCE";
    pad(out, 6, source_width);
    out += "DESCRIPTION\n";
    for (const Row& row : rows) {
      out += row.name;
      pad(out, row.name.size(), name_width);
      if (!row.runtime_error.empty()) out += palette.bad;
      out += row.runtime;
      if (!row.runtime_error.empty()) out += palette.reset;
      pad(out, row.runtime.size(), runtime_width);
      out += row.source;
      if (row.description.empty()) {
        out += '\n';
      } else {
        pad(out, row.source.size(), source_width);
        out += row.description;
        out += '\n';
      }
      if (!row.runtime_error.empty()) {
        out.append(name_width + 2, ' ');
        out += row.runtime_error;
        out += '\n';
      }
    }
    return out;
  }

  static std::string Json(const Config& config, const McpListing& mcp, const Builtins& builtins) {
    rapidjson::StringBuffer buffer;
    JsonWriter writer(buffer);
    writer.StartArray();
    for (const auto& [name, tool] : config.tools) {
      std::string description = DescriptionOf(name, tool, mcp, builtins);
      writer.StartObject();
      WriteJsonKey(writer, "name");
      WriteJsonString(writer, name);
      WriteJsonKey(writer, "runtime");
      Result<RuntimeKind> runtime = ResolveRuntime(tool);
      if (runtime.ok()) {
        WriteJsonString(writer, RuntimeKindName(*runtime));
      } else {
        writer.Null();
        WriteJsonKey(writer, "runtime_error");
        WriteJsonString(writer, runtime.status().message());
      }
      WriteJsonKey(writer, "source");
      WriteJsonString(writer, SourceText(tool));
      WriteJsonKey(writer, "description");
      WriteJsonString(writer, description);
      if (auto error = mcp.errors.find(name); error != mcp.errors.end()) {
        WriteJsonKey(writer, "mcp_error");
        WriteJsonString(writer, error->second);
      }
      if (tool.command) {
        WriteJsonKey(writer, "command");
        writer.StartArray();
        WriteJsonString(writer, tool.command->program);
        for (const std::string& argument : tool.command->args) WriteJsonString(writer, argument);
        writer.EndArray();
      }
      WriteJsonKey(writer, "parameters");
      std::string parameters = ConfigValue(ParametersOf(tool, builtins)).ToJson();
      writer.RawValue(parameters.data(), parameters.size(), rapidjson::kObjectType);
      // What a model API takes as the tool's input schema. An import entry
      // is no tool of its own (its tools follow); an mcp tool without
      // parameters of its own has its server's schema.
      if (!IsMcpImport(tool)) {
        auto server_schema = mcp.input_schemas.find(name);
        std::string schema =
            server_schema != mcp.input_schemas.end() ? server_schema->second : InputSchemaJson(ParametersOf(tool, builtins));
        WriteJsonKey(writer, "input_schema");
        writer.RawValue(schema.data(), schema.size(), rapidjson::kObjectType);
      }
      WriteJsonKey(writer, "stateful");
      writer.Bool(tool.stateful);
      writer.EndObject();
      for (const ImportedMcpTool& imported : mcp.imports.tools) {
        if (imported.entry != name) continue;
        writer.StartObject();
        WriteJsonKey(writer, "name");
        WriteJsonString(writer, imported.name);
        WriteJsonKey(writer, "runtime");
        WriteJsonString(writer, "mcp");
        WriteJsonKey(writer, "source");
        WriteJsonString(writer, SourceText(imported.tool));
        WriteJsonKey(writer, "description");
        WriteJsonString(writer, imported.tool.description);
        WriteJsonKey(writer, "imported_by");
        WriteJsonString(writer, name);
        WriteJsonKey(writer, "parameters");
        writer.StartObject();
        writer.EndObject();
        WriteJsonKey(writer, "input_schema");
        writer.RawValue(imported.input_schema_json.data(), imported.input_schema_json.size(), rapidjson::kObjectType);
        WriteJsonKey(writer, "stateful");
        writer.Bool(false);
        writer.EndObject();
      }
    }
    writer.EndArray();
    std::string json = JsonText(buffer);
    json += '\n';
    return json;
  }

  bool json_ = false;
};

}  // namespace

std::unique_ptr<Command> NewToolsCommand() { return std::make_unique<ToolsCommand>(); }

}  // namespace toolvfs
