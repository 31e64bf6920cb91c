// `toolvfs check`: validates a toolvfs.toml and prints, for each tool, its
// runtime and the effective policy the host will enforce — what the config
// means, not only whether it parses.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/terminal.h"
#include "cli/tool_invocation.h"
#include "config/config.h"
#include "core/io.h"
#include "core/text.h"
#include "policy/tool_policy.h"
#include "runtime/confined_launch.h"
#include "runtime/sdk_location.h"
#include "protocol/json_writer.h"

namespace toolvfs {
namespace {

class CheckCommand final : public Command {
 public:
  void AddOptions(CLI::App& app) override {
    app.add_flag("--json", json_,
                 "Print one JSON object: {\"config\",\"valid\",\"errors\",\"warnings\",\"tools\",\"mcp_servers\"}");
    app.footer(
        "Checks --config FILE, else toolvfs.toml in the project directory: every error is "
        "listed as FILE:LINE:COL: what. Then prints each tool's runtime and effective policy.\n"
        "Example: toolvfs check --project examples/project --json\n"
        "Exit codes: 0 valid, 2 missing or invalid (also when a tool uses an unsupported runtime).");
  }

  unsigned UsedCommonOptions() const override { return kOptionProject | kOptionConfig; }

  int Run(const CommonOptions& common) override {
    std::string path = ConfigPath(common);
    Result<ConfigCheck> checked = CheckConfigFile(path, InstallationVariables());
    if (!checked.ok()) return ReportError("check", WithMissingConfigHint(common, checked.status()).message());
    if (json_) return PrintJson(common, path, *checked);
    if (!checked->errors.empty()) {
      for (const std::string& error : checked->errors) ReportError("check", error);
      ReportError("check", path + " has " + std::to_string(checked->errors.size()) +
                               (checked->errors.size() == 1 ? " error" : " errors"));
      return kExitUsage;
    }
    const Config& config = checked->config;
    for (const std::string& warning : config.warnings) ReportNote("warning", warning);

    std::optional<std::string> config_in_project = ConfigPathInProject(common, path);
    std::string out;
    int exit_code = kExitOk;
    for (const auto& [name, tool] : config.tools) {
      out += "tool " + name;
      Result<RuntimeKind> runtime = ResolveRuntime(tool);
      if (runtime.ok()) {
        out += " (runtime " + std::string(RuntimeKindName(*runtime)) + ")\n";
      } else {
        out += " (runtime unsupported)\n";
        ReportError("check", runtime.status().message());
        exit_code = kExitUsage;
      }
      for (const std::string& line : ToolPolicy::ForTool(tool, config_in_project).Describe()) {
        out += "  " + line + "\n";
      }
      // What the tool's own process may touch directly (docs/sandbox.md).
      const std::optional<std::string> directory = ProjectDirectory(common.project);
      const bool own_process = runtime.ok() && (*runtime == RuntimeKind::kStdio || *runtime == RuntimeKind::kMcp);
      if (own_process && directory) {
        ConfinementOptions confinement;
        confinement.config_project_path = config_in_project;
        confinement.hidden_for_testing = HiddenSandboxMechanismsForTesting();
        Result<std::vector<std::string>> lines = DescribeDirectAccess(
            tool, *runtime == RuntimeKind::kMcp ? ToolKind::kMcpServer : ToolKind::kStdio, *directory, confinement);
        if (!lines.ok()) {
          out += "  process: cannot tell: " + lines.status().message() + "\n";
        } else {
          for (const std::string& line : *lines) out += "  " + line + "\n";
        }
      }
    }
    for (const auto& [name, server] : config.mcp_servers) {
      out += "mcp server " + name + ": " + server.command + "\n";
    }
    out += path + ": " + std::to_string(config.tools.size()) +
           (config.tools.size() == 1 ? " tool" : " tools") + ", " +
           std::to_string(config.mcp_servers.size()) + " MCP " +
           (config.mcp_servers.size() == 1 ? "server" : "servers") + "\n";
    Status written = WriteFull(STDOUT_FILENO, out, "standard output");
    if (!written.ok()) return ReportError("check", written.message());
    return exit_code;
  }

 private:
  // --json: everything the text says, as one object on one line, so an
  // editor or a CI job can show errors at their position and each tool's
  // policy without parsing prose. Errors are on stdout here (also on
  // stderr, as always); exit codes are the text form's.
  int PrintJson(const CommonOptions& common, const std::string& path, const ConfigCheck& checked) {
    rapidjson::StringBuffer buffer;
    JsonWriter writer(buffer);
    int exit_code = checked.errors.empty() ? kExitOk : kExitUsage;
    for (const std::string& error : checked.errors) ReportError("check", error);
    writer.StartObject();
    WriteJsonKey(writer, "config");
    writer.String(path);
    auto strings = [&](const std::vector<std::string>& values) {
      writer.StartArray();
      for (const std::string& value : values) writer.String(value);
      writer.EndArray();
    };
    WriteJsonKey(writer, "errors");
    strings(checked.errors);
    WriteJsonKey(writer, "warnings");
    strings(checked.errors.empty() ? checked.config.warnings : std::vector<std::string>());
    WriteJsonKey(writer, "tools");
    writer.StartArray();
    std::optional<std::string> config_in_project = ConfigPathInProject(common, path);
    if (checked.errors.empty()) {
      for (const auto& [name, tool] : checked.config.tools) {
        writer.StartObject();
        WriteJsonKey(writer, "name");
        writer.String(name);
        WriteJsonKey(writer, "runtime");
        Result<RuntimeKind> runtime = ResolveRuntime(tool);
        if (runtime.ok()) {
          writer.String(RuntimeKindName(*runtime));
        } else {
          writer.Null();
          WriteJsonKey(writer, "runtime_error");
          writer.String(runtime.status().message());
          ReportError("check", runtime.status().message());
          exit_code = kExitUsage;
        }
        WriteJsonKey(writer, "policy");
        strings(ToolPolicy::ForTool(tool, config_in_project).Describe());
        writer.EndObject();
      }
    }
    writer.EndArray();
    WriteJsonKey(writer, "mcp_servers");
    writer.StartArray();
    if (checked.errors.empty()) {
      for (const auto& [name, server] : checked.config.mcp_servers) {
        writer.StartObject();
        WriteJsonKey(writer, "name");
        writer.String(name);
        WriteJsonKey(writer, "command");
        writer.String(server.command);
        WriteJsonKey(writer, "args");
        strings(server.args);
        writer.EndObject();
      }
    }
    writer.EndArray();
    WriteJsonKey(writer, "valid");
    writer.Bool(exit_code == kExitOk);
    writer.EndObject();
    std::string out = JsonText(buffer);
    out += '\n';
    Status written = WriteFull(STDOUT_FILENO, out, "standard output");
    if (!written.ok()) return ReportError("check", written.message());
    return exit_code;
  }

  bool json_ = false;
};

}  // namespace

std::unique_ptr<Command> NewCheckCommand() { return std::make_unique<CheckCommand>(); }

}  // namespace toolvfs
