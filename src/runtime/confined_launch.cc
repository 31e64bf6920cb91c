#include "runtime/confined_launch.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <system_error>

#include "core/text.h"
#include "policy/file_policy.h"
#include "project/allowed_subtrees.h"
#include "project/path.h"
#include "runtime/sdk_location.h"

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

// More covers than this per start fall back to the entry-by-entry grants:
// each is a mount in the tool's namespace, made at every start.
constexpr size_t kMaximumMountMasks = 1024;

// The name MasksFor asks the policy about to learn whether a pattern covers
// everything in a directory.
constexpr std::string_view kAnyEntryName = "toolvfs-any-entry";

// Entries whose absence at the root of a writable project must keep the
// root split: a tool that could create them would write the next run's
// policy (`toolvfs.toml`), the audit log (`.toolvfs/`) or a repository
// whose config git obeys at the user's next `git status` (`.git`:
// core.fsmonitor runs a command), and no mount can cover a path that does
// not exist. A materialized copy never holds `.toolvfs` nor `.git`.
constexpr std::string_view kGuardedRootEntries[] = {kProjectConfigPath, ".toolvfs", ".git"};

// Narrows the project prefixes of `access` to what `policy` allows entry
// by entry: Landlock can only allow, so exceptions inside a prefix (deny
// rules, sensitive paths) become a finer set of grants around them. For
// writes the root is never granted whole, even when all it holds is
// allowed: that grant would let the tool create kGuardedRootEntries,
// which nothing could cover.
Status SplitAroundExceptions(std::vector<std::string>& prefixes, const std::string& root,
                             const FilePolicy& policy, FileAccess file_access) {
  if (prefixes.empty()) return OkStatus();
  auto allowed = [&](std::string_view path, bool) {
    return policy.CheckEntry(file_access, path).decision == Decision::kAllow;
  };
  // A grant lands on an inode: another name of a denied file (`notes.txt`
  // linked to `.env`) must not be granted either.
  TOOLVFS_ASSIGN_OR_RETURN(std::vector<PolicyException> exceptions, PolicyExceptions(root, prefixes, allowed));
  std::set<std::string, std::less<>> excepted;
  for (PolicyException& exception : exceptions) excepted.insert(std::move(exception.path));
  auto allowed_and_no_alias = [&](std::string_view path, bool is_directory) {
    return !excepted.contains(path) && allowed(path, is_directory);
  };
  AllowedSubtreesOptions options;
  if (file_access == FileAccess::kWrite) options.split_directories = {""};
  TOOLVFS_ASSIGN_OR_RETURN(prefixes, AllowedSubtrees(root, prefixes, allowed_and_no_alias, options));
  return OkStatus();
}

bool WritesTheRoot(const std::vector<std::string>& writable_prefixes) {
  return std::any_of(writable_prefixes.begin(), writable_prefixes.end(), [](const std::string& prefix) {
    Result<std::string> normalized = NormalizePath(prefix);
    return normalized.ok() && normalized->empty();
  });
}

// What NarrowToPolicy did that a description must tell (DescribeDirectAccess).
struct Narrowing {
  bool masked = false;  // mount masks cover the exceptions: the prefixes were granted whole
  // The kGuardedRootEntries a writable root lacks, when mount masks cover
  // the reads but the writes were split for want of them; else empty.
  std::vector<std::string_view> root_lacks;
};

// The mount masks that let the prefixes of `access` be granted whole:
// what the policy denies to read is hidden, what it denies to write (but
// lets read) in a writable prefix is read-only. nullopt when there are
// too many. When the root is writable and lacks a guarded entry, the
// masks cover the reads only and the writable prefixes are split instead,
// in `access`; `narrowing` says which entries it lacks.
Result<std::optional<std::vector<MountMask>>> MasksFor(ToolAccessRequest& access, const FilePolicy& policy,
                                                       const std::string& root, Narrowing& narrowing) {
  // A directory is covered whole when the policy denies whatever it holds
  // (".toolvfs/**", "**/.git/hooks/**"), judged by an entry no pattern
  // names: covering only the files inside would let a tool add new ones.
  auto allowed_for = [&](FileAccess file_access) {
    return [&policy, file_access](std::string_view path, bool is_directory) {
      if (policy.CheckEntry(file_access, path).decision != Decision::kAllow) return false;
      return !is_directory ||
             policy.CheckEntry(file_access, std::string(path) + "/" + std::string(kAnyEntryName)).decision ==
                 Decision::kAllow;
    };
  };
  std::map<std::string, MountMask> masks;
  auto add = [&](const PolicyException& exception, MountMaskKind kind) {
    MountMask& mask = masks[exception.path];
    if (mask.path.empty() || kind == MountMaskKind::kHidden) {
      mask = MountMask{.path = exception.path.empty() ? root : root + "/" + exception.path,
                       .kind = kind,
                       .is_directory = exception.is_directory,
                       .device = exception.device,
                       .inode = exception.inode};
    }
  };
  TOOLVFS_ASSIGN_OR_RETURN(std::vector<PolicyException> unreadable,
                           PolicyExceptions(root, access.readable_prefixes, allowed_for(FileAccess::kRead)));
  for (const PolicyException& exception : unreadable) add(exception, MountMaskKind::kHidden);

  narrowing.root_lacks.clear();
  if (WritesTheRoot(access.writable_prefixes)) {
    for (std::string_view entry : kGuardedRootEntries) {
      TOOLVFS_ASSIGN_OR_RETURN(bool exists, ProjectEntryExists(root, entry));
      if (!exists) narrowing.root_lacks.push_back(entry);
    }
  }
  if (narrowing.root_lacks.empty()) {
    TOOLVFS_ASSIGN_OR_RETURN(std::vector<PolicyException> unwritable,
                             PolicyExceptions(root, access.writable_prefixes, allowed_for(FileAccess::kWrite)));
    for (const PolicyException& exception : unwritable) {
      const bool readable = policy.CheckEntry(FileAccess::kRead, exception.path).decision == Decision::kAllow;
      add(exception, readable ? MountMaskKind::kReadOnly : MountMaskKind::kHidden);
    }
  } else {
    TOOLVFS_RETURN_IF_ERROR(SplitAroundExceptions(access.writable_prefixes, root, policy, FileAccess::kWrite));
  }
  if (masks.size() > kMaximumMountMasks) {
    narrowing.root_lacks.clear();  // every prefix is split: nothing particular to the root to tell
    return std::optional<std::vector<MountMask>>();
  }
  std::vector<MountMask> result;
  result.reserve(masks.size());
  for (auto& [path, mask] : masks) result.push_back(std::move(mask));
  return std::optional<std::vector<MountMask>>(std::move(result));
}

// Turns the policy's exceptions inside the prefixes of `request` into
// what the sandbox can enforce: mount masks where the kernel allows them
// (the prefixes then stay whole), else finer grants around them.
Status NarrowToPolicy(SandboxRequest& request, const FilePolicy& policy, Narrowing& narrowing) {
  ToolAccessRequest& access = request.access;
  if (access.project_root.empty()) return OkStatus();
  if (MountMasksAvailable(request.hidden_for_testing)) {
    // The child opens the covered paths without following any symlink.
    std::error_code error;
    const std::string root = std::filesystem::canonical(access.project_root, error).string();
    if (error) return Status(StatusCode::kIo, "cannot resolve the project root " + Quote(access.project_root) + ": " + error.message());
    ToolAccessRequest narrowed = access;
    TOOLVFS_ASSIGN_OR_RETURN(std::optional<std::vector<MountMask>> masks,
                             MasksFor(narrowed, policy, root, narrowing));
    if (masks) {
      narrowing.masked = true;
      access = std::move(narrowed);
      request.mount_masks = std::move(*masks);
      return OkStatus();
    }
  }
  TOOLVFS_RETURN_IF_ERROR(SplitAroundExceptions(access.readable_prefixes, access.project_root, policy, FileAccess::kRead));
  return SplitAroundExceptions(access.writable_prefixes, access.project_root, policy, FileAccess::kWrite);
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

namespace {

// "a, b, c" with at most `shown` of them, then "and N more".
std::string JoinShown(const std::vector<std::string>& items, size_t shown = 20) {
  std::string joined;
  for (size_t index = 0; index < items.size() && index < shown; ++index) {
    if (index > 0) joined += ", ";
    joined += items[index].empty() ? "." : items[index];
  }
  if (items.size() > shown) joined += " and " + std::to_string(items.size() - shown) + " more";
  return joined;
}

}  // namespace

Result<std::vector<std::string>> DescribeDirectAccess(const ToolConfig& tool, ToolKind kind,
                                                      const std::string& project_directory,
                                                      const ConfinementOptions& confinement) {
  if (kind == ToolKind::kVfs) return std::vector<std::string>{"process: nothing of the project (all through the protocol)"};
  const DirectProjectAccess direct = DirectAccessOf(tool, kind);
  SandboxRequest request;
  request.tool_name = tool.name;
  request.hidden_for_testing = confinement.hidden_for_testing;
  request.access.kind = kind;
  request.access.project_root = project_directory;
  request.access.readable_prefixes = direct.readable_prefixes;
  request.access.writable_prefixes = direct.writable_prefixes;
  Narrowing narrowing;
  TOOLVFS_RETURN_IF_ERROR(
      NarrowToPolicy(request, FilePolicy::ForTool(tool, confinement.config_project_path), narrowing));
  const ToolAccessRequest& access = request.access;
  std::vector<std::string> lines;
  const std::string reads = "process reads " + (access.readable_prefixes.empty() ? std::string("nothing")
                                                                                : JoinShown(access.readable_prefixes));
  const std::string writes = access.writable_prefixes.empty() ? "" : JoinShown(access.writable_prefixes);
  const std::string covered =
      request.mount_masks.empty()
          ? " (granted whole; nothing to cover)"
          : " (granted whole; its own mount namespace covers " + std::to_string(request.mount_masks.size()) +
                (request.mount_masks.size() == 1 ? " entry)" : " entries)");
  if (narrowing.masked && !narrowing.root_lacks.empty()) {
    // The masks cover the reads; the writes are split, root and all, for
    // want of entries no mount can cover: two grants, told apart.
    std::string lacks;
    for (std::string_view entry : narrowing.root_lacks) {
      lacks += (lacks.empty() ? "" : " and ") + std::string(entry);
    }
    lines.push_back(reads + covered);
    lines.push_back("process writes " + (writes.empty() ? std::string("nothing") : writes) +
                    " (granted entry by entry: the root lacks " + lacks +
                    ", which a tool must not create; nothing can be created at the root)");
  } else if (narrowing.masked) {
    lines.push_back(reads + (writes.empty() ? "" : " and writes " + writes) + covered);
  } else {
    const std::string why = MountMasksAvailable(request.hidden_for_testing)
                                ? "more than " + std::to_string(kMaximumMountMasks) + " entries to cover"
                                : std::string("this kernel cannot cover paths in a mount namespace");
    lines.push_back(reads + (writes.empty() ? "" : " and writes " + writes) +
                    " (granted entry by entry around the policy's exceptions: " + why +
                    "; nothing can be created where an exception lies" +
                    (WritesTheRoot(direct.writable_prefixes) ? " nor at the root)" : ")"));
  }
  std::vector<std::string> hidden;
  std::vector<std::string> read_only;
  std::error_code error;
  const size_t root_length = std::filesystem::canonical(project_directory, error).string().size() + 1;
  for (const MountMask& mask : request.mount_masks) {
    std::string path = mask.path.size() > root_length ? mask.path.substr(root_length) : "";
    (mask.kind == MountMaskKind::kHidden ? hidden : read_only).push_back(std::move(path));
  }
  if (!hidden.empty()) lines.push_back("  hidden (mode 000, read-only): " + JoinShown(hidden));
  if (!read_only.empty()) lines.push_back("  read-only: " + JoinShown(read_only));
  return lines;
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
  // The PATH the child gets, where a shebang's `env NAME` looks. Without
  // one, ToolAccessRules searches the fixed tools PATH, never toolvfs's
  // own: that may hold directories a tool can write (process.run drops a
  // PATH with project entries), and a program a tool wrote must not be
  // granted by name. The program itself was resolved to a full path
  // before (ResolveProgram), so it is granted either way.
  const LaunchSearchPath search_path = SearchPathOf(spec);
  if (search_path.from_environment) access.path_env = search_path.directories;
  for (const std::string& entry : spec.environment) {
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

// A program given by path that is not there is the user's typo, not a
// sandbox failure: said as such before the sandbox is built (which would
// fail on it with "Cannot sandbox ..."). A bare name is looked up once, by
// ResolveProgram, which says the same of one not on the PATH.
Status CheckProgramFileExists(const LaunchSpec& spec) {
  if (spec.program.find('/') == std::string::npos) return OkStatus();
  std::filesystem::path program(spec.program);
  if (program.is_relative() && !spec.working_directory.empty()) {
    program = std::filesystem::path(spec.working_directory) / program;
  }
  std::error_code error;
  if (std::filesystem::is_regular_file(program, error)) return OkStatus();
  return NotFoundError("program " + Quote(spec.program) + " does not exist (looked for " +
                       Quote(program.lexically_normal().string()) + ")");
}

}  // namespace

Result<ChildProcess> LaunchConfined(const LaunchSpec& spec, const ToolConfig& tool, ToolKind kind,
                                    const std::string& project_directory,
                                    const ConfinementOptions& confinement) {
  TOOLVFS_RETURN_IF_ERROR(CheckProgramFileExists(spec));
  // The program is found once, as Launch would find it; the sandbox's
  // rules and the launch then use that path.
  LaunchSpec resolved = spec;
  TOOLVFS_ASSIGN_OR_RETURN(resolved.program, ResolveProgram(spec));
  resolved.argv0 = spec.program;
  if (!confinement.sandbox) return Launch(resolved);
  SandboxRequest request = ConfinementRequest(spec, tool, kind, project_directory);
  request.access.program = resolved.program;
  request.hidden_for_testing = confinement.hidden_for_testing;
  if (kind != ToolKind::kVfs) {
    Narrowing narrowing;  // told by `toolvfs check` only
    Status narrowed = NarrowToPolicy(request, FilePolicy::ForTool(tool, confinement.config_project_path), narrowing);
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
  resolved.sandbox = &profile;
  return Launch(resolved);
}

void ToolWritePolicies::Add(const ToolConfig& tool, const std::optional<std::string>& config_project_path) {
  FilePolicy policy = FilePolicy::ForTool(tool, config_project_path);
  std::lock_guard lock(mutex_);
  policies_.push_back(std::move(policy));
}

std::optional<std::string> ToolWritePolicies::Refusal(std::string_view path) const {
  std::lock_guard lock(mutex_);
  std::optional<std::string> refusal;
  for (const FilePolicy& policy : policies_) {
    PolicyDecision decision = policy.CheckEntry(FileAccess::kWrite, path);
    if (decision.decision == Decision::kAllow) return std::nullopt;
    if (refusal) continue;
    refusal = decision.decision == Decision::kDeny ? "the tool's policy denies writing it: " + decision.rule
                                                   : "no rule of the tool's policy lets it write there";
  }
  if (refusal) return refusal;
  return "no tool's policy lets it write there";
}

}  // namespace toolvfs
