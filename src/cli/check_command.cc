// `toolvfs check`: validates a toolvfs.toml and prints, for each tool, its
// runtime and the effective policy the host will enforce — what the config
// means, not only whether it parses.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "cli/command.h"
#include "cli/terminal.h"
#include "cli/tool_invocation.h"
#include "config/config.h"
#include "core/io.h"
#include "core/text.h"
#include "policy/tool_policy.h"
#include "runtime/confined_launch.h"

namespace toolvfs {
namespace {

class CheckCommand final : public Command {
 public:
  void AddOptions(CLI::App& app) override {
    app.footer(
        "Checks --config FILE, else toolvfs.toml in the project directory: every error is "
        "listed as FILE:LINE:COL: what. Then prints each tool's runtime and effective policy.\n"
        "Exit codes: 0 valid, 2 missing or invalid (also when a tool uses an unsupported runtime).");
  }

  int Run(const CommonOptions& common) override {
    std::string path = ConfigPath(common);
    Result<ConfigCheck> checked = CheckConfigFile(path);
    if (!checked.ok()) return ReportError("check", checked.status().message());
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
};

}  // namespace

std::unique_ptr<Command> NewCheckCommand() { return std::make_unique<CheckCommand>(); }

}  // namespace toolvfs
