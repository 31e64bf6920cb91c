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
//   3. A sensitive path (the built-in list with `.toolvfs/**` and the
//      project's `toolvfs.toml`, the tool's `sensitive_paths`, the config
//      file in use when it lies in the project) is
//      denied even inside an allowed prefix, unless a rule that covers the
//      path is itself sensitive by the same pattern (it names the sensitive
//      path or something below it: `filesystem.allow = [".env"]`; naming
//      ".ssh" exempts ".ssh/config" from `**/.ssh/**` but not ".ssh/id_rsa"
//      from `**/id_rsa*`). Allow and writable prefixes count, for reads and
//      writes alike. Existence plays no part.
//   4. Read: allowed by the longest `filesystem.allow` prefix; otherwise
//      uncovered. An empty allow list allows nothing.
//   5. Write: denied by rules 2 and 3 like a read; allowed by a writable
//      grant: `writable = true` makes every allowed prefix writable, a
//      writable list allows writes below its prefixes (even outside the
//      allow list); otherwise uncovered.
//   6. A tool without a `sandbox` table: reads of the whole project allowed
//      ("default: project readable"), writes uncovered; deny rules and
//      sensitive paths still apply.
//   7. A write of a directory (a recursive delete, a rename) touches what
//      lies below it, so it is also denied when a deny prefix lies strictly
//      below it, or a sensitive pattern may match below it (deleting "."
//      must not delete `.toolvfs/audit.jsonl`). For patterns that match at
//      any depth (`**/.env`) that is judged only once the directory itself
//      takes part in the match (`**/.git/config` lies below "x/.git"): any
//      directory may hold a `.env`, and only its content could tell: a
//      caller that deletes or moves a non-empty directory checks the
//      entries below it too. A pattern is excused by a rule that covers the
//      directory and is sensitive by that pattern, as in rule 3.
//   8. Git internals: a write of a path with a component named `.git` (in
//      any case: a `.git` directory, anything below it, a `.git` file) is
//      denied before any rule is consulted, and no rule lifts it, not even
//      one naming the path. git runs commands its files name
//      (core.fsmonitor in .git/config, .git/commondir, .git/info,
//      .git/worktrees/*, .git/modules/*/config, a `.git` file's gitdir),
//      so whoever writes them runs code as the user at the next
//      `git status`. Reads are unaffected (rule 3 covers .git/config and
//      .git/hooks).
//
// Sensitive patterns (path_glob.h): `*` and `?` within a segment, `**` as a
// whole segment for any number of segments (`dir/**` covers `dir` too); a
// pattern without wildcards is a plain path and covers what lies below it.
// The root itself never counts as a rule that names a sensitive path.
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
#include "policy/path_glob.h"

namespace toolvfs {

enum class FileAccess { kRead, kWrite };

// "read" | "write".
std::string_view FileAccessName(FileAccess access);

// Where the project's own config lies: `toolvfs.toml` at the root. Sensitive
// for every tool whichever config is in use (`--config ELSEWHERE` included):
// a tool that rewrote it would change the policy of the next run.
inline constexpr std::string_view kProjectConfigPath = "toolvfs.toml";

// The built-in sensitive patterns of SPEC.md §3.2 ("**/.env", ...,
// ".toolvfs/**", "toolvfs.toml"); a config file in use elsewhere in the
// project is added per policy (ForTool).
const std::vector<std::string>& BuiltinSensitivePatterns();

// The path of the first component named `.git` (in any case) of the
// project path `path` ("vendor/lib/.git" for "vendor/lib/.git/config"), or
// nullopt: what rule 8 below denies every write of.
std::optional<std::string> GitInternalsOf(std::string_view path);

class FilePolicy {
 public:
  // `tool`: its sandbox table (or the default when it has none).
  // `config_project_path`: the project path of the toolvfs.toml in use when
  // it lies inside the project (normally "toolvfs.toml"), else nullopt;
  // sensitive besides kProjectConfigPath, which always is.
  static FilePolicy ForTool(const ToolConfig& tool,
                            std::optional<std::string> config_project_path);

  // The decision for `access` to the resolved project path `path`.
  PolicyDecision Check(FileAccess access, std::string_view path) const;

  // The decision for the entry `path` alone: Check without rule 7, for a
  // caller that walks a tree and judges every entry below it itself (the
  // sandbox's per-entry grants, AllowedSubtrees).
  PolicyDecision CheckEntry(FileAccess access, std::string_view path) const;

  // Whether `path` is sensitive (rule 3 without the exemption).
  bool IsSensitive(std::string_view path) const;

  // Human-readable lines describing the effective rules, for `toolvfs check`.
  std::vector<std::string> Describe() const;

 private:
  // A rule that grants an access: the prefix, and how the decision names it.
  struct Grant {
    std::string_view prefix;
    std::string rule;
  };

  // Check, with rule 7 only when `judge_below`.
  PolicyDecision Decide(FileAccess access, std::string_view path, bool judge_below) const;
  std::optional<Grant> ReadGrant(std::string_view path) const;
  std::optional<Grant> WriteGrant(std::string_view path) const;
  // The first sensitive pattern `path` matches, unless a rule that covers
  // `path` is itself sensitive (rule 3); null if none.
  const PathGlob* UnexemptedSensitivePattern(std::string_view path) const;
  // Whether an allow or writable prefix (not the root) that covers `path`
  // matches `pattern`.
  bool NamedByRule(std::string_view path, const PathGlob& pattern) const;
  // Rule 7: the denial for a write of `directory` because of what lies
  // below it.
  std::optional<PolicyDecision> DenialBelow(std::string_view directory) const;
  // The key that grants `access` when a path is named in it.
  std::string GrantingKey(FileAccess access) const;

  bool has_sandbox_table_ = false;
  std::vector<std::string> allow_;
  bool writable_all_ = false;
  std::vector<std::string> writable_;
  std::vector<std::string> deny_;
  std::vector<PathGlob> sensitive_;  // built-in, configured, then the config file
};

}  // namespace toolvfs
