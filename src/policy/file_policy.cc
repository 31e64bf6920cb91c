#include "policy/file_policy.h"

#include <algorithm>

#include "project/path.h"

namespace toolvfs {
namespace {

PolicyGrant GrantOf(FileAccess access, std::string_view path) {
  return {access == FileAccess::kRead ? PolicyGrant::Kind::kRead : PolicyGrant::Kind::kWrite, std::string(path)};
}

// A path as rules and hints show it: a TOML string that can be pasted into
// toolvfs.toml as it is, "." for the root. Project paths hold no control
// characters, so only quotes and backslashes need escaping.
std::string ConfigPath(std::string_view path) {
  if (path.empty()) return "\".\"";
  std::string quoted = "\"";
  for (char c : path) {
    if (c == '"' || c == '\\') quoted += '\\';
    quoted += c;
  }
  return quoted + "\"";
}

// How specific a prefix is: its number of components ("" has none).
size_t Depth(std::string_view path) {
  return path.empty() ? 0 : static_cast<size_t>(std::count(path.begin(), path.end(), '/')) + 1;
}

// The most specific of `prefixes` that contains `path`.
std::optional<std::string_view> LongestContaining(const std::vector<std::string>& prefixes,
                                                  std::string_view path) {
  std::optional<std::string_view> longest;
  for (const std::string& prefix : prefixes) {
    if (PathContains(prefix, path) && (!longest || Depth(prefix) > Depth(*longest))) longest = prefix;
  }
  return longest;
}

}  // namespace

std::string_view FileAccessName(FileAccess access) { return access == FileAccess::kRead ? "read" : "write"; }

const std::vector<std::string>& BuiltinSensitivePatterns() {
  static const std::vector<std::string> patterns = {
      "**/.env",      "**/.env.*",  "**/.git/config", "**/.git/hooks/**", "**/.ssh/**",
      "**/.aws/credentials",        "**/.netrc",      "**/.npmrc",        "**/.pypirc",
      "**/*.pem",     "**/*.key",   "**/id_rsa*",     "**/id_ed25519*",   ".toolvfs/**",
      std::string(kProjectConfigPath)};
  return patterns;
}

std::optional<std::string> GitInternalsOf(std::string_view path) {
  // ASCII case-insensitive: on a case-insensitive file system (vfat, ext4
  // casefold, a macOS volume over the network) ".GIT" is the same entry.
  auto is_git = [](std::string_view segment) {
    return segment.size() == 4 && segment[0] == '.' && (segment[1] | 0x20) == 'g' && (segment[2] | 0x20) == 'i' &&
           (segment[3] | 0x20) == 't';
  };
  for (std::string_view segment : PathSegments(path)) {
    if (!is_git(segment)) continue;
    size_t end = static_cast<size_t>(segment.data() - path.data()) + segment.size();
    return std::string(path.substr(0, end));
  }
  return std::nullopt;
}

FilePolicy FilePolicy::ForTool(const ToolConfig& tool, std::optional<std::string> config_project_path) {
  FilePolicy policy;
  policy.has_sandbox_table_ = tool.has_sandbox_table;
  if (tool.has_sandbox_table) {
    const SandboxConfig& sandbox = tool.sandbox;
    policy.allow_ = sandbox.filesystem_allow;
    policy.writable_all_ = sandbox.filesystem_writable.all;
    policy.writable_ = sandbox.filesystem_writable.prefixes;
    policy.deny_ = sandbox.filesystem_deny;
    for (const std::string& pattern : sandbox.sensitive_paths) {
      policy.sensitive_.push_back(PathGlob::Pattern(pattern));
    }
  }
  for (const std::string& pattern : BuiltinSensitivePatterns()) {
    policy.sensitive_.push_back(PathGlob::Pattern(pattern));
  }
  // The project's own toolvfs.toml is built in; a config elsewhere in the
  // project is added beside it.
  if (config_project_path && *config_project_path != kProjectConfigPath) {
    policy.sensitive_.push_back(PathGlob::Literal(*config_project_path));
  }
  return policy;
}

PolicyDecision FilePolicy::Check(FileAccess access, std::string_view path) const {
  return Decide(access, path, /*judge_below=*/true);
}

PolicyDecision FilePolicy::CheckEntry(FileAccess access, std::string_view path) const {
  return Decide(access, path, /*judge_below=*/false);
}

PolicyDecision FilePolicy::Decide(FileAccess access, std::string_view path, bool judge_below) const {
  if (access == FileAccess::kWrite) {
    // Before any grant: no rule can make git's own files writable (rule 8).
    if (std::optional<std::string> git = GitInternalsOf(path)) {
      return PolicyDecision::Deny("git internals " + ConfigPath(*git) + ", which no rule makes writable");
    }
  }
  std::optional<Grant> grant = access == FileAccess::kRead ? ReadGrant(path) : WriteGrant(path);
  if (std::optional<std::string_view> denied = LongestContaining(deny_, path)) {
    // Deny wins ties: a grant beats it only by being more specific.
    if (!grant || Depth(grant->prefix) <= Depth(*denied)) {
      return PolicyDecision::Deny("filesystem.deny " + ConfigPath(*denied),
                                  "remove " + ConfigPath(*denied) + " from filesystem.deny to allow it");
    }
  }
  if (const PathGlob* sensitive = UnexemptedSensitivePattern(path)) {
    return PolicyDecision::Deny("sensitive path " + ConfigPath(sensitive->text()),
                                "name " + ConfigPath(path) + " in " + GrantingKey(access) + " to allow it",
                                GrantOf(access, path));
  }
  if (access == FileAccess::kWrite && judge_below) {
    if (std::optional<PolicyDecision> denial = DenialBelow(path)) return *std::move(denial);
  }
  if (grant) return PolicyDecision::Allow(std::move(grant->rule));
  return PolicyDecision::Uncovered("add " + ConfigPath(path) + " to " + GrantingKey(access), GrantOf(access, path));
}

bool FilePolicy::IsSensitive(std::string_view path) const {
  return std::any_of(sensitive_.begin(), sensitive_.end(),
                     [path](const PathGlob& pattern) { return pattern.Matches(path); });
}

std::optional<FilePolicy::Grant> FilePolicy::ReadGrant(std::string_view path) const {
  if (!has_sandbox_table_) return Grant{"", "default: project readable"};
  std::optional<std::string_view> allowed = LongestContaining(allow_, path);
  if (!allowed) return std::nullopt;
  return Grant{*allowed, "filesystem.allow " + ConfigPath(*allowed)};
}

std::optional<FilePolicy::Grant> FilePolicy::WriteGrant(std::string_view path) const {
  if (writable_all_) {
    std::optional<std::string_view> allowed = LongestContaining(allow_, path);
    if (!allowed) return std::nullopt;
    return Grant{*allowed, "filesystem.writable = true"};
  }
  std::optional<std::string_view> writable = LongestContaining(writable_, path);
  if (!writable) return std::nullopt;
  return Grant{*writable, "filesystem.writable " + ConfigPath(*writable)};
}

const PathGlob* FilePolicy::UnexemptedSensitivePattern(std::string_view path) const {
  for (const PathGlob& pattern : sensitive_) {
    if (pattern.Matches(path) && !NamedByRule(path, pattern)) return &pattern;
  }
  return nullptr;
}

bool FilePolicy::NamedByRule(std::string_view path, const PathGlob& pattern) const {
  auto names = [&](const std::string& prefix) {
    return !prefix.empty() && PathContains(prefix, path) && pattern.Matches(prefix);
  };
  return std::any_of(allow_.begin(), allow_.end(), names) ||
         std::any_of(writable_.begin(), writable_.end(), names);
}

std::optional<PolicyDecision> FilePolicy::DenialBelow(std::string_view directory) const {
  for (const std::string& denied : deny_) {
    if (denied != directory && PathContains(directory, denied)) {
      return PolicyDecision::Deny("filesystem.deny " + ConfigPath(denied),
                                  ConfigPath(denied) + " lies below " + ConfigPath(directory));
    }
  }
  for (const PathGlob& pattern : sensitive_) {
    if (pattern.MayMatchBelow(directory) && !NamedByRule(directory, pattern)) {
      return PolicyDecision::Deny("sensitive path " + ConfigPath(pattern.text()),
                                  "paths below " + ConfigPath(directory) + " match it");
    }
  }
  return std::nullopt;
}

std::string FilePolicy::GrantingKey(FileAccess access) const {
  // With `writable = true` whatever is allowed is writable too.
  return access == FileAccess::kWrite && !writable_all_ ? "filesystem.writable" : "filesystem.allow";
}

std::vector<std::string> FilePolicy::Describe() const {
  std::vector<std::string> lines;
  if (!has_sandbox_table_) {
    lines.push_back("read \".\": allow (default: project readable)");
    lines.push_back("write: uncovered, the user is asked (no sandbox table)");
  } else {
    if (allow_.empty()) lines.push_back("read: nothing is allowed (filesystem.allow is empty)");
    for (const std::string& prefix : allow_) {
      lines.push_back("read " + ConfigPath(prefix) + ": allow (filesystem.allow)");
    }
    if (writable_all_) {
      lines.push_back("write: allow wherever read is allowed (filesystem.writable = true)");
    } else if (writable_.empty()) {
      lines.push_back("write: uncovered, the user is asked (filesystem.writable = false)");
    }
    for (const std::string& prefix : writable_) {
      lines.push_back("write " + ConfigPath(prefix) + ": allow (filesystem.writable)");
    }
  }
  for (const std::string& prefix : deny_) {
    lines.push_back("read and write " + ConfigPath(prefix) + ": deny (filesystem.deny)");
  }
  lines.push_back("write anything named .git or below it: deny, whatever the rules say (git internals)");
  // One line: the built-in list alone is 15 patterns.
  std::string sensitive = "sensitive paths, denied unless a rule names them:";
  for (const PathGlob& pattern : sensitive_) sensitive += " " + ConfigPath(pattern.text());
  lines.push_back(std::move(sensitive));
  return lines;
}

}  // namespace toolvfs
