// Filesystem decisions for one tool (SPEC.md §3.1 `filesystem.*`,
// `sensitive_paths`; §3.2).
//
// Paths given to Check are project paths that have already been normalized
// and resolved (symlinks inside the root followed: ProjectFiles::ResolvePath),
// so a link cannot smuggle a denied target past a prefix rule.
//
// Rules, in order:
//   1. Prefixes match component-wise ("src" covers "src/a", not "src_gen");
//      "" (written ".") is the whole project.
//   2. The longest matching `filesystem.deny` prefix beats the longest
//      matching allow prefix unless the allow prefix is strictly longer
//      (more components): deny wins ties.
//   3. A sensitive path (the built-in list, the tool's `sensitive_paths`,
//      the config file when it lies in the project, `.toolvfs/**`) is
//      denied even inside an allowed prefix, unless a rule that covers the
//      path is itself sensitive (it names the sensitive path or something
//      below it: `filesystem.allow = [".env"]`). Existence plays no part.
//   4. Read: allowed by the longest `filesystem.allow` prefix; otherwise
//      uncovered. An empty allow list allows nothing.
//   5. Write: denied by rules 2 and 3 like a read; allowed by a writable
//      grant: `writable = true` makes every allowed prefix writable, a
//      writable list allows writes below its prefixes (even outside the
//      allow list); otherwise uncovered.
//   6. A tool without a `sandbox` table: reads of the whole project allowed
//      ("default: project readable"), writes uncovered; deny rules and
//      sensitive paths still apply.
//
// Thread safety: immutable after construction; Check may be called from any
// thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"
#include "policy/decision.h"

namespace toolvfs {

enum class FileAccess { kRead, kWrite };

// "read" | "write".
std::string_view FileAccessName(FileAccess access);

// The built-in sensitive patterns of SPEC.md §3.2 ("**/.env", ...).
const std::vector<std::string>& BuiltinSensitivePatterns();

class FilePolicy {
 public:
  // `tool`: its sandbox table (or the default when it has none).
  // `config_project_path`: the project path of the toolvfs.toml in use when
  // it lies inside the project (normally "toolvfs.toml"), else nullopt.
  static FilePolicy ForTool(const ToolConfig& tool,
                            std::optional<std::string> config_project_path);

  // The decision for `access` to the resolved project path `path`.
  PolicyDecision Check(FileAccess access, std::string_view path) const;

  // Whether `path` is sensitive (rule 3 without the exemption).
  bool IsSensitive(std::string_view path) const;

  // Human-readable lines describing the effective rules, for `toolvfs check`.
  std::vector<std::string> Describe() const;

 private:
  bool has_sandbox_table_ = false;
  std::vector<std::string> allow_;
  bool writable_all_ = false;
  std::vector<std::string> writable_;
  std::vector<std::string> deny_;
  std::vector<std::string> sensitive_patterns_;  // built-in + configured
  std::optional<std::string> config_project_path_;
};

}  // namespace toolvfs
