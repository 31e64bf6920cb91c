// What a vfsd session may touch: allowed prefixes and read-only.
//
// The command line sets them (--allow PATH..., --read-only); the client's
// `init` may narrow them, never widen them. Judging reuses the access
// policy of the rest of toolvfs (policy/file_policy.h): prefixes match by
// path component ("logs" allows "logs/a", not "logs2"), "." is the whole
// project, no prefix allows nothing, and the built-in sensitive paths
// (.env, keys, .toolvfs/ with the audit log, toolvfs.toml) and writes into
// .git stay denied inside an allowed prefix. Paths judged are resolved
// project paths (ProjectFiles::ResolvePath): a symlink is judged by where
// it leads.
//
// Thread safety: immutable; copy to change.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "policy/file_policy.h"

namespace toolvfs {

class Allowlist {
 public:
  // InvalidArgument (or PermissionDenied for a ".." escape) naming a
  // prefix that is not a valid project path.
  static Result<Allowlist> Create(const std::vector<std::string>& prefixes, bool read_only);

  // `init`: this allowlist narrowed to `prefixes` (each at or below one of
  // ours) and read-only if either is. PermissionDenied naming the first
  // prefix that would widen it; InvalidArgument for an invalid path.
  Result<Allowlist> Narrow(const std::vector<std::string>& prefixes, bool read_only) const;

  // OK if `access` to the resolved project path `path` is allowed, else
  // PermissionDenied: "Access denied: cannot write 'x': the session is
  // read-only". `rule` receives the rule that decided (for the audit log).
  Status Check(FileAccess access, std::string_view path, std::string& rule) const;

  // Whether `path` lies strictly above an allowed prefix (a directory on
  // the way to one): such a directory can be listed, showing only what
  // leads to allowed prefixes, and stat'ed.
  bool IsAncestorOfAllowed(std::string_view path) const;

  // Whether `path` is at, below or above an allowed prefix: what a
  // filtered listing of an ancestor shows.
  bool TouchesAllowed(std::string_view path) const;

  const std::vector<std::string>& prefixes() const { return prefixes_; }
  bool read_only() const { return read_only_; }

 private:
  Allowlist(std::vector<std::string> prefixes, bool read_only);

  std::vector<std::string> prefixes_;  // normalized project paths; "" is the root
  bool read_only_ = false;
  FilePolicy policy_;
};

}  // namespace toolvfs
