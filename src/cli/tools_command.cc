// `toolvfs tools`: the tools of toolvfs.toml with their resolved runtime,
// source and description, as a table for people or a JSON array.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/terminal.h"
#include "cli/tool_invocation.h"
#include "config/config.h"
#include "core/io.h"
#include "core/text.h"
#include "project/project_files.h"
#include "protocol/json_writer.h"

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
  std::string runtime_error;  // ResolveRuntime's message when it failed
  std::string source;
  std::string description;
};

class ToolsCommand final : public Command {
 public:
  void AddOptions(CLI::App& app) override {
    app.add_flag("--json", json_,
                 "Print a JSON array: [{\"name\",\"runtime\",\"source\",\"description\",...}]");
    app.footer(
        "Lists the tools of --config FILE, else of toolvfs.toml in the project directory.\n"
        "Exit codes: 0 listed (also when there are none), 2 the config is missing or invalid.");
  }

  int Run(const CommonOptions& common) override {
    Result<std::unique_ptr<ProjectFiles>> store = OpenProject(common.project);
    if (!store.ok()) return ReportError("--project", store.status().message());
    Result<LoadedConfig> loaded = LoadToolConfig(common);
    if (!loaded.ok()) return ReportError("tools", loaded.status().message());
    ReportConfigWarnings(*loaded, common);

    std::string out = json_ ? Json(loaded->config) : Table(*loaded);
    Status written = WriteFull(STDOUT_FILENO, out, "standard output");
    if (!written.ok()) return ReportError("tools", written.message());
    return kExitOk;
  }

 private:
  static std::vector<Row> Rows(const Config& config) {
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
      row.description = OneLine(tool.description);
      rows.push_back(std::move(row));
    }
    return rows;
  }

  static std::string Table(const LoadedConfig& loaded) {
    if (loaded.config.tools.empty()) return "No tools are configured in " + loaded.path + ".\n";
    Palette palette = MakePalette(ColorEnabled(STDOUT_FILENO));
    std::vector<Row> rows = Rows(loaded.config);
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

  static std::string Json(const Config& config) {
    rapidjson::StringBuffer buffer;
    JsonWriter writer(buffer);
    writer.StartArray();
    for (const auto& [name, tool] : config.tools) {
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
      WriteJsonString(writer, tool.description);
      if (tool.command) {
        WriteJsonKey(writer, "command");
        writer.StartArray();
        WriteJsonString(writer, tool.command->program);
        for (const std::string& argument : tool.command->args) WriteJsonString(writer, argument);
        writer.EndArray();
      }
      WriteJsonKey(writer, "parameters");
      std::string parameters = ConfigValue(tool.parameters).ToJson();
      writer.RawValue(parameters.data(), parameters.size(), rapidjson::kObjectType);
      WriteJsonKey(writer, "stateful");
      writer.Bool(tool.stateful);
      writer.EndObject();
    }
    writer.EndArray();
    std::string json(buffer.GetString(), buffer.GetSize());
    json += '\n';
    return json;
  }

  bool json_ = false;
};

}  // namespace

std::unique_ptr<Command> NewToolsCommand() { return std::make_unique<ToolsCommand>(); }

}  // namespace toolvfs
