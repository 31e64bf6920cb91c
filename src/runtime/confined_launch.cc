#include "runtime/confined_launch.h"

#include <filesystem>
#include <system_error>

#include "core/text.h"
#include "policy/file_policy.h"
#include "project/allowed_subtrees.h"
#include "runtime/sdk_location.h"
#include "sandbox/private_temp_dir.h"

namespace toolvfs {

namespace {

// The arguments whose files the tool may read directly (ToolAccessRequest::
// args): only words the user wrote. A rendered `{{ tool.arguments.path }}`
// comes from the model and a process.run child's arguments from the tool;
// granting the files they name would let either read any file past the
// policy (`cat .env`), so those get nothing here — a stdio tool and a
// child read the project through their policy's prefixes only.
std::vector<std::string> TrustedCommandWords(const LaunchSpec& spec, const ToolConfig& tool, ToolKind kind) {
  if (kind == ToolKind::kProcessChild) return {};
  if (kind == ToolKind::kStdio) {
    std::vector<std::string> words;
    if (!tool.command) return words;
    for (const std::string& word : tool.command->args) {
      if (word.find("{{") == std::string::npos) words.push_back(word);
    }
    return words;
  }
  // A vfs tool's command line is the configured one, not templated; an MCP
  // server's is its [mcp_servers] command and args.
  return spec.args;
}

// Narrows the project prefixes of `access` to what `policy` allows entry
// by entry: Landlock can only allow, so exceptions inside a prefix (deny
// rules, sensitive paths) become a finer set of grants around them.
Status NarrowToPolicy(ToolAccessRequest& access, const FilePolicy& policy) {
  if (access.project_root.empty()) return OkStatus();
  auto narrow = [&](std::vector<std::string>& prefixes, FileAccess file_access) -> Status {
    if (prefixes.empty()) return OkStatus();
    auto allowed = [&](std::string_view path, bool) {
      return policy.CheckEntry(file_access, path).decision == Decision::kAllow;
    };
    TOOLVFS_ASSIGN_OR_RETURN(prefixes, AllowedSubtrees(access.project_root, prefixes, allowed));
    return OkStatus();
  };
  TOOLVFS_RETURN_IF_ERROR(narrow(access.readable_prefixes, FileAccess::kRead));
  return narrow(access.writable_prefixes, FileAccess::kWrite);
}

}  // namespace

DirectProjectAccess DirectAccessOf(const ToolConfig& tool, ToolKind kind) {
  DirectProjectAccess direct;
  if (kind == ToolKind::kVfs) return direct;
  // Without a sandbox table, the default policy: the project readable.
  direct.readable_prefixes = tool.has_sandbox_table ? tool.sandbox.filesystem_allow : std::vector<std::string>{""};
  direct.writable_prefixes = tool.sandbox.filesystem_writable.all ? direct.readable_prefixes
                                                                  : tool.sandbox.filesystem_writable.prefixes;
  direct.network = tool.has_sandbox_table && !tool.sandbox.network_allow.empty();
  return direct;
}

SandboxRequest ConfinementRequest(const LaunchSpec& spec, const ToolConfig& tool, ToolKind kind,
                                  const std::string& project_directory) {
  SandboxRequest request;
  request.tool_name = tool.name;
  ToolAccessRequest& access = request.access;
  access.kind = kind;
  access.program = spec.program;
  access.args = TrustedCommandWords(spec, tool, kind);
  access.working_directory = spec.working_directory;
  access.path_env = std::string(kFixedPath);
  for (const std::string& entry : spec.environment) {
    if (entry.starts_with("PATH=")) access.path_env = entry.substr(5);
    // HOME and TMPDIR name the same private directory (FixedEnvironment).
    if (entry.starts_with("TMPDIR=")) access.private_temp_dir = entry.substr(7);
  }
  access.sdk_dir = SdkDirectory();
  access.system_read = tool.sandbox.system_read;
  access.project_root = project_directory;
  const DirectProjectAccess direct = DirectAccessOf(tool, kind);
  access.readable_prefixes = direct.readable_prefixes;
  access.writable_prefixes = direct.writable_prefixes;
  access.network_allowed = direct.network;
  request.seccomp.allow_process_creation = kind != ToolKind::kVfs;
  request.seccomp.deny_network_sockets = !direct.network;
  // SandboxProfile::Build drops max_processes where no user namespace can
  // be made (it would cap the host's user, not the tool).
  request.limits = FromLimitsConfig(tool.sandbox.limits);
  return request;
}

namespace {

// A program that is not there is the user's typo or a missing package, not
// a sandbox failure: said as such before the sandbox is built (which would
// fail on it with "Cannot sandbox ...").
Status CheckProgramExists(const LaunchSpec& spec) {
  if (spec.program.find('/') != std::string::npos) {
    std::filesystem::path program(spec.program);
    if (program.is_relative() && !spec.working_directory.empty()) {
      program = std::filesystem::path(spec.working_directory) / program;
    }
    std::error_code error;
    if (std::filesystem::is_regular_file(program, error)) return OkStatus();
    return NotFoundError("program " + Quote(spec.program) + " does not exist (looked for " + Quote(program.lexically_normal().string()) + ")");
  }
  std::string search_path(kFixedPath);
  for (const std::string& entry : spec.environment) {
    if (entry.starts_with("PATH=")) search_path = entry.substr(5);
  }
  if (FindProgramOnPath(spec.program, search_path).ok()) return OkStatus();
  return NotFoundError("program " + Quote(spec.program) + " was not found on the PATH tools get (" + search_path +
                       "): install it there, or give its full path in the tool's command");
}

}  // namespace

Result<ChildProcess> LaunchConfined(const LaunchSpec& spec, const ToolConfig& tool, ToolKind kind,
                                    const std::string& project_directory,
                                    const ConfinementOptions& confinement) {
  TOOLVFS_RETURN_IF_ERROR(CheckProgramExists(spec));
  if (!confinement.sandbox) return Launch(spec);
  SandboxRequest request = ConfinementRequest(spec, tool, kind, project_directory);
  request.hidden_for_testing = confinement.hidden_for_testing;
  if (kind != ToolKind::kVfs) {
    Status narrowed =
        NarrowToPolicy(request.access, FilePolicy::ForTool(tool, confinement.config_project_path));
    if (!narrowed.ok()) {
      return Status(narrowed.code(), "Cannot sandbox tool " + Quote(tool.name) + ": " + narrowed.message());
    }
  }

  TOOLVFS_ASSIGN_OR_RETURN(SandboxProfile profile, SandboxProfile::Build(request, *confinement.sandbox));
  if (confinement.warn) {
    for (const std::string& missing : profile.unenforced()) {
      confinement.warn("tool " + Quote(tool.name) + " runs without " + missing + " (--sandbox=best-effort)");
    }
  }
  LaunchSpec confined = spec;
  confined.sandbox = &profile;
  return Launch(confined);
}

}  // namespace toolvfs
