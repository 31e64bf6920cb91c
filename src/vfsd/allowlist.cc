#include "vfsd/allowlist.h"

#include <utility>

#include "config/config.h"
#include "project/path.h"

namespace toolvfs {
namespace {

Result<std::vector<std::string>> NormalizePrefixes(const std::vector<std::string>& prefixes) {
  std::vector<std::string> normalized;
  for (const std::string& prefix : prefixes) {
    Result<std::string> path = NormalizePath(prefix);
    if (!path.ok()) {
      return Status(path.status().code(), "Invalid allowed prefix: " + path.status().message());
    }
    normalized.push_back(std::move(*path));
  }
  return normalized;
}

std::string DescribePrefixes(const std::vector<std::string>& prefixes) {
  if (prefixes.empty()) return "no prefix is allowed";
  std::string text = "allowed: ";
  for (size_t index = 0; index < prefixes.size(); ++index) {
    if (index > 0) text += ", ";
    text += DisplayPath(prefixes[index]);
  }
  return text;
}

}  // namespace

Allowlist::Allowlist(std::vector<std::string> prefixes, bool read_only)
    : prefixes_(std::move(prefixes)), read_only_(read_only) {
  // The policy of a tool whose sandbox table allows exactly these prefixes:
  // the same component matching, sensitive paths and .git protection as
  // every other front end.
  ToolConfig tool;
  tool.name = "vfsd";
  tool.has_sandbox_table = true;
  tool.sandbox.filesystem_allow = prefixes_;
  tool.sandbox.filesystem_writable.all = !read_only_;
  policy_ = FilePolicy::ForTool(tool, std::nullopt);
}

Result<Allowlist> Allowlist::Create(const std::vector<std::string>& prefixes, bool read_only) {
  TOOLVFS_ASSIGN_OR_RETURN(std::vector<std::string> normalized, NormalizePrefixes(prefixes));
  return Allowlist(std::move(normalized), read_only);
}

Result<Allowlist> Allowlist::Narrow(const std::vector<std::string>& prefixes, bool read_only) const {
  TOOLVFS_ASSIGN_OR_RETURN(std::vector<std::string> normalized, NormalizePrefixes(prefixes));
  for (const std::string& prefix : normalized) {
    bool inside = false;
    for (const std::string& allowed : prefixes_) inside = inside || PathContains(allowed, prefix);
    if (!inside) {
      return PermissionDeniedError("Access denied: init cannot allow " + DisplayPath(prefix) +
                                   ": it is not at or below an allowed prefix (" + DescribePrefixes(prefixes_) +
                                   "); init can only narrow the allowlist");
    }
  }
  return Allowlist(std::move(normalized), read_only_ || read_only);
}

Status Allowlist::Check(FileAccess access, std::string_view path, std::string& rule) const {
  std::string_view verb = access == FileAccess::kRead ? "read" : "write";
  if (access == FileAccess::kWrite && read_only_) {
    rule = "read-only";
    return PermissionDeniedError("Access denied: cannot write " + DisplayPath(path) + ": the session is read-only");
  }
  PolicyDecision decision = policy_.Check(access, path);
  if (decision.decision == Decision::kAllow) {
    rule = decision.rule;
    return OkStatus();
  }
  if (decision.decision == Decision::kDeny) {
    rule = decision.rule;
    return PermissionDeniedError("Access denied: cannot " + std::string(verb) + " " + DisplayPath(path) +
                                 ": denied by " + decision.rule);
  }
  rule = "not allowed";
  return PermissionDeniedError("Access denied: cannot " + std::string(verb) + " " + DisplayPath(path) +
                               ": it is not at or below an allowed prefix (" + DescribePrefixes(prefixes_) + ")");
}

bool Allowlist::IsAncestorOfAllowed(std::string_view path) const {
  for (const std::string& allowed : prefixes_) {
    if (allowed != path && PathContains(path, allowed)) return true;
  }
  return false;
}

bool Allowlist::TouchesAllowed(std::string_view path) const {
  for (const std::string& allowed : prefixes_) {
    if (PathContains(path, allowed) || PathContains(allowed, path)) return true;
  }
  return false;
}

}  // namespace toolvfs
