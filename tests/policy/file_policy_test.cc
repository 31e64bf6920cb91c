// The filesystem policy matrix (SPEC.md §3.2, policy/file_policy.h): reads
// and writes allowed, denied or uncovered by prefixes at every depth,
// sensitive paths, the default policy, and writes of directories that hold
// denied paths. Policies are built from toolvfs.toml text, as users write
// them.

#include "policy/file_policy.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"

namespace toolvfs {
namespace {

constexpr std::string_view kConfigPath = "toolvfs.toml";

// The policy of a tool whose `[tools.t.sandbox]` table holds `sandbox`
// (no table at all for nullopt).
FilePolicy Policy(std::optional<std::string_view> sandbox,
                  std::optional<std::string> config_project_path = std::string(kConfigPath)) {
  std::string text = "[tools.t]\ncommand = \"t\"\n";
  if (sandbox) text += "[tools.t.sandbox]\n" + std::string(*sandbox) + "\n";
  Result<Config> config = ParseConfig(text, kConfigPath);
  EXPECT_TRUE(config.ok()) << config.status().ToString() << "\n" << text;
  if (!config.ok()) return FilePolicy::ForTool(ToolConfig{}, std::nullopt);
  return FilePolicy::ForTool(config->tools.at("t"), std::move(config_project_path));
}

// "allow RULE", "deny RULE" or "uncovered".
std::string Outcome(const PolicyDecision& decision) {
  std::string outcome(DecisionName(decision.decision));
  if (!decision.rule.empty()) outcome += " " + decision.rule;
  return outcome;
}

std::string Read(const FilePolicy& policy, std::string_view path) {
  return Outcome(policy.Check(FileAccess::kRead, path));
}
std::string Write(const FilePolicy& policy, std::string_view path) {
  return Outcome(policy.Check(FileAccess::kWrite, path));
}
std::string ReadHint(const FilePolicy& policy, std::string_view path) {
  return policy.Check(FileAccess::kRead, path).hint;
}
std::string WriteHint(const FilePolicy& policy, std::string_view path) {
  return policy.Check(FileAccess::kWrite, path).hint;
}

// --- prefixes -----------------------------------------------------------------

TEST(FilePolicyTest, ReadsByLongestPrefixAtEveryDepth) {
  FilePolicy policy = Policy(R"(filesystem.allow = ["src", "docs/public"]
filesystem.deny = ["src/secret"])");
  EXPECT_EQ(Read(policy, "src"), R"(allow filesystem.allow "src")");
  EXPECT_EQ(Read(policy, "src/a/b/c.cc"), R"(allow filesystem.allow "src")");
  EXPECT_EQ(Read(policy, "src/secret"), R"(deny filesystem.deny "src/secret")");
  EXPECT_EQ(Read(policy, "src/secret/x/y.txt"), R"(deny filesystem.deny "src/secret")");
  EXPECT_EQ(Read(policy, "docs/public/a.md"), R"(allow filesystem.allow "docs/public")");
  EXPECT_EQ(Read(policy, "docs"), "uncovered");
  EXPECT_EQ(Read(policy, "docs/private/a.md"), "uncovered");
  EXPECT_EQ(Read(policy, "README.md"), "uncovered");
  EXPECT_EQ(Read(policy, ""), "uncovered");
}

TEST(FilePolicyTest, WritesByWritableListAtEveryDepth) {
  FilePolicy policy = Policy(R"(filesystem.allow = ["src"]
filesystem.writable = ["src/gen", "out"]
filesystem.deny = ["src/gen/keep"])");
  EXPECT_EQ(Write(policy, "src/main.cc"), "uncovered");
  EXPECT_EQ(Write(policy, "src/gen/x.h"), R"(allow filesystem.writable "src/gen")");
  // Deleting the directory would delete "src/gen/keep" too.
  EXPECT_EQ(Write(policy, "src/gen"), R"(deny filesystem.deny "src/gen/keep")");
  EXPECT_EQ(Write(policy, "src/gen/a/b.h"), R"(allow filesystem.writable "src/gen")");
  EXPECT_EQ(Write(policy, "src/gen/keep/x.h"), R"(deny filesystem.deny "src/gen/keep")");
  // A writable list allows writes outside the allow list, not reads.
  EXPECT_EQ(Write(policy, "out/report.txt"), R"(allow filesystem.writable "out")");
  EXPECT_EQ(Read(policy, "out/report.txt"), "uncovered");
  EXPECT_EQ(Write(policy, "docs/a.md"), "uncovered");
}

TEST(FilePolicyTest, WritableTrueMakesEveryAllowedPrefixWritable) {
  FilePolicy policy = Policy(R"(filesystem.allow = ["src", "docs"]
filesystem.writable = true)");
  EXPECT_EQ(Write(policy, "src/a.cc"), "allow filesystem.writable = true");
  EXPECT_EQ(Write(policy, "docs/x/y.md"), "allow filesystem.writable = true");
  EXPECT_EQ(Write(policy, "build/a.o"), "uncovered");
}

TEST(FilePolicyTest, WritableFalseWritesNothing) {
  FilePolicy policy = Policy(R"(filesystem.allow = ["."]
filesystem.writable = false)");
  EXPECT_EQ(Read(policy, "src/a.cc"), R"(allow filesystem.allow ".")");
  EXPECT_EQ(Write(policy, "src/a.cc"), "uncovered");
}

TEST(FilePolicyTest, PrefixesMatchWholeComponents) {
  FilePolicy policy = Policy(R"(filesystem.allow = ["src", "proj"]
filesystem.writable = ["src"]
filesystem.deny = ["proj_secrets"])");
  EXPECT_EQ(Read(policy, "src_gen/a.cc"), "uncovered");
  EXPECT_EQ(Read(policy, "srcx"), "uncovered");
  EXPECT_EQ(Write(policy, "src_gen/a.cc"), "uncovered");
  EXPECT_EQ(Write(policy, "src/a.cc"), R"(allow filesystem.writable "src")");
  EXPECT_EQ(Read(policy, "proj/a.txt"), R"(allow filesystem.allow "proj")");
  EXPECT_EQ(Read(policy, "proj_secrets/a.txt"), R"(deny filesystem.deny "proj_secrets")");

  FilePolicy deny_proj = Policy(R"(filesystem.allow = ["."]
filesystem.deny = ["proj"])");
  EXPECT_EQ(Read(deny_proj, "proj_secrets/a.txt"), R"(allow filesystem.allow ".")");
  EXPECT_EQ(Read(deny_proj, "proj/a.txt"), R"(deny filesystem.deny "proj")");
}

TEST(FilePolicyTest, DenyWinsTiesAndLosesToALongerAllow) {
  FilePolicy tie = Policy(R"(filesystem.allow = ["src"]
filesystem.writable = ["src"]
filesystem.deny = ["src"])");
  EXPECT_EQ(Read(tie, "src/a.cc"), R"(deny filesystem.deny "src")");
  EXPECT_EQ(Write(tie, "src/a.cc"), R"(deny filesystem.deny "src")");

  FilePolicy deeper_allow = Policy(R"(filesystem.allow = [".", "secrets/public"]
filesystem.writable = true
filesystem.deny = ["secrets"])");
  EXPECT_EQ(Read(deeper_allow, "secrets/public/a.txt"), R"(allow filesystem.allow "secrets/public")");
  EXPECT_EQ(Write(deeper_allow, "secrets/public/a.txt"), "allow filesystem.writable = true");
  EXPECT_EQ(Read(deeper_allow, "secrets/a.txt"), R"(deny filesystem.deny "secrets")");
  EXPECT_EQ(Write(deeper_allow, "secrets/a.txt"), R"(deny filesystem.deny "secrets")");
  EXPECT_EQ(Read(deeper_allow, "secrets"), R"(deny filesystem.deny "secrets")");

  FilePolicy deeper_deny = Policy(R"(filesystem.allow = ["a"]
filesystem.deny = ["a/b"])");
  EXPECT_EQ(Read(deeper_deny, "a/b/c"), R"(deny filesystem.deny "a/b")");
  EXPECT_EQ(Read(deeper_deny, "a/bc"), R"(allow filesystem.allow "a")");
}

TEST(FilePolicyTest, AnEmptyAllowListAllowsNothing) {
  for (std::string_view sandbox : {"filesystem.allow = []", "filesystem.allow = []\nfilesystem.writable = true",
                                   "network.allow = []"}) {
    FilePolicy policy = Policy(sandbox);
    EXPECT_EQ(Read(policy, ""), "uncovered") << sandbox;
    EXPECT_EQ(Read(policy, "src/a.cc"), "uncovered") << sandbox;
    EXPECT_EQ(Write(policy, "src/a.cc"), "uncovered") << sandbox;
  }
}

TEST(FilePolicyTest, DenyWithoutAnyAllowIsStillADenial) {
  FilePolicy policy = Policy(R"(filesystem.deny = ["secrets"])");
  EXPECT_EQ(Read(policy, "secrets/a"), R"(deny filesystem.deny "secrets")");
  EXPECT_EQ(Read(policy, "src/a"), "uncovered");
}

// --- sensitive paths ------------------------------------------------------------

TEST(FilePolicyTest, EveryBuiltinPatternIsSensitiveInsideAnAllowedPrefix) {
  FilePolicy policy = Policy(R"(filesystem.allow = ["."]
filesystem.writable = true)");
  struct Case {
    std::string path;
    std::string pattern;
  };
  // Whether any of these exists plays no part: the policy never looks.
  const std::vector<Case> cases = {
      {".env", "**/.env"},
      {"services/api/.env", "**/.env"},
      {".env.production", "**/.env.*"},
      {".git/config", "**/.git/config"},
      {"vendor/lib/.git/config", "**/.git/config"},
      {".git/hooks/pre-commit", "**/.git/hooks/**"},
      {".git/hooks", "**/.git/hooks/**"},
      {".ssh/known_hosts", "**/.ssh/**"},
      {"home/.ssh/id_ed25519", "**/.ssh/**"},
      {".aws/credentials", "**/.aws/credentials"},
      {".netrc", "**/.netrc"},
      {"web/.npmrc", "**/.npmrc"},
      {".pypirc", "**/.pypirc"},
      {"certs/server.pem", "**/*.pem"},
      {"tls/server.key", "**/*.key"},
      {"keys/id_rsa.pub", "**/id_rsa*"},
      {"id_ed25519", "**/id_ed25519*"},
      {".toolvfs", ".toolvfs/**"},
      {".toolvfs/audit.jsonl", ".toolvfs/**"},
      {"toolvfs.toml", "toolvfs.toml"},
  };
  for (const Case& c : cases) {
    std::string expected = "deny sensitive path \"" + c.pattern + "\"";
    EXPECT_TRUE(policy.IsSensitive(c.path)) << c.path;
    EXPECT_EQ(Read(policy, c.path), expected) << c.path;
    // Writes below .git are denied earlier, by rule 8 (git internals).
    if (!GitInternalsOf(c.path)) {
      EXPECT_EQ(Write(policy, c.path), expected) << c.path;
    }
  }
  for (std::string_view near_miss : {".envrc", "a.env", "env", ".git/HEAD", ".git", "server.pem.txt", "key.txt",
                                     "my_id_rsa", "docs/toolvfs.toml", ".toolvfsrc", "x/.toolvfs/a"}) {
    EXPECT_FALSE(policy.IsSensitive(near_miss)) << near_miss;
    EXPECT_EQ(Read(policy, near_miss), R"(allow filesystem.allow ".")") << near_miss;
  }
}

TEST(FilePolicyTest, BuiltinListIsTheSpecs) {
  EXPECT_EQ(BuiltinSensitivePatterns(),
            (std::vector<std::string>{"**/.env", "**/.env.*", "**/.git/config", "**/.git/hooks/**", "**/.ssh/**",
                                      "**/.aws/credentials", "**/.netrc", "**/.npmrc", "**/.pypirc", "**/*.pem",
                                      "**/*.key", "**/id_rsa*", "**/id_ed25519*", ".toolvfs/**",
                                      "toolvfs.toml"}));
}

TEST(FilePolicyTest, ConfiguredSensitivePathsArePathsOrGlobs) {
  FilePolicy policy = Policy(R"(filesystem.allow = ["."]
sensitive_paths = ["config/prod.json", "private", "data/*.sqlite"])");
  EXPECT_EQ(Read(policy, "config/prod.json"), R"(deny sensitive path "config/prod.json")");
  EXPECT_EQ(Read(policy, "config/dev.json"), R"(allow filesystem.allow ".")");
  EXPECT_EQ(Read(policy, "private/notes/a.md"), R"(deny sensitive path "private")");
  EXPECT_EQ(Read(policy, "private_gen/a.md"), R"(allow filesystem.allow ".")");
  EXPECT_EQ(Read(policy, "data/users.sqlite"), R"(deny sensitive path "data/*.sqlite")");
  EXPECT_EQ(Read(policy, "data/old/users.sqlite"), R"(allow filesystem.allow ".")");
}

TEST(FilePolicyTest, ASensitivePathNamedByARuleIsAllowed) {
  FilePolicy policy = Policy(R"(filesystem.allow = [".", ".env", "config/prod.key", "private/docs"]
filesystem.writable = ["config/prod.key"]
sensitive_paths = ["config/prod.key", "private"])");
  EXPECT_EQ(Read(policy, ".env"), R"(allow filesystem.allow ".env")");
  // Named for reading only: writing it is the user's call.
  EXPECT_EQ(Write(policy, ".env"), "uncovered");
  EXPECT_EQ(WriteHint(policy, ".env"), R"(add ".env" to filesystem.writable)");
  // The rule must cover the path: another .env stays denied.
  EXPECT_EQ(Read(policy, "sub/.env"), R"(deny sensitive path "**/.env")");
  // Named by both the configured and the built-in pattern.
  EXPECT_EQ(Read(policy, "config/prod.key"), R"(allow filesystem.allow "config/prod.key")");
  EXPECT_EQ(Write(policy, "config/prod.key"), R"(allow filesystem.writable "config/prod.key")");
  EXPECT_EQ(Read(policy, "config/test.key"), R"(deny sensitive path "**/*.key")");
  // A rule below a sensitive directory names that part of it.
  EXPECT_EQ(Read(policy, "private/docs/a.md"), R"(allow filesystem.allow "private/docs")");
  EXPECT_EQ(Read(policy, "private/notes.md"), R"(deny sensitive path "private")");
}

TEST(FilePolicyTest, NamingADirectoryExemptsOnlyFromItsOwnPattern) {
  FilePolicy policy = Policy(R"(filesystem.allow = [".", ".ssh"])");
  EXPECT_EQ(Read(policy, ".ssh/config"), R"(allow filesystem.allow ".ssh")");
  EXPECT_EQ(Read(policy, ".ssh/id_rsa"), R"(deny sensitive path "**/id_rsa*")");
}

TEST(FilePolicyTest, SensitiveHintsNameTheKeyThatAllows) {
  FilePolicy read_only = Policy(R"(filesystem.allow = ["."])");
  EXPECT_EQ(ReadHint(read_only, "config/.env"), R"(name "config/.env" in filesystem.allow to allow it)");
  EXPECT_EQ(WriteHint(read_only, "config/.env"), R"(name "config/.env" in filesystem.writable to allow it)");
  FilePolicy writable = Policy(R"(filesystem.allow = ["."]
filesystem.writable = true)");
  EXPECT_EQ(WriteHint(writable, "config/.env"), R"(name "config/.env" in filesystem.allow to allow it)");
}

TEST(FilePolicyTest, TheConfigFileIsSensitiveWhereItIs) {
  FilePolicy policy = Policy(R"(filesystem.allow = ["."]
filesystem.writable = true)");
  EXPECT_EQ(Read(policy, "toolvfs.toml"), R"(deny sensitive path "toolvfs.toml")");
  EXPECT_EQ(Write(policy, "toolvfs.toml"), R"(deny sensitive path "toolvfs.toml")");

  // A config elsewhere in the project is sensitive, and the project's own
  // toolvfs.toml stays so: the next run without --config reads it.
  FilePolicy elsewhere = Policy(R"(filesystem.allow = ["."]
filesystem.writable = true)",
                                "config/tools.toml");
  EXPECT_EQ(Write(elsewhere, "config/tools.toml"), R"(deny sensitive path "config/tools.toml")");
  EXPECT_EQ(Read(elsewhere, "config/tools.toml"), R"(deny sensitive path "config/tools.toml")");
  EXPECT_EQ(Write(elsewhere, "toolvfs.toml"), R"(deny sensitive path "toolvfs.toml")");
  EXPECT_EQ(Read(elsewhere, "toolvfs.toml"), R"(deny sensitive path "toolvfs.toml")");

  // A config outside the project (or none: toolvfs exec) leaves the
  // project's toolvfs.toml sensitive all the same.
  FilePolicy outside = Policy(R"(filesystem.allow = ["."]
filesystem.writable = true)",
                              std::nullopt);
  EXPECT_EQ(Read(outside, "toolvfs.toml"), R"(deny sensitive path "toolvfs.toml")");
  EXPECT_EQ(Write(outside, "toolvfs.toml"), R"(deny sensitive path "toolvfs.toml")");
  EXPECT_EQ(Write(outside, "docs/toolvfs.toml"), "allow filesystem.writable = true");
  EXPECT_EQ(Write(Policy(std::nullopt, std::nullopt), "toolvfs.toml"), R"(deny sensitive path "toolvfs.toml")");
  // Listed once when the config in use is the project's.
  std::vector<std::string> lines = policy.Describe();
  EXPECT_EQ(lines.back().find("\"toolvfs.toml\""), lines.back().rfind("\"toolvfs.toml\"")) << lines.back();
}

// --- git internals ------------------------------------------------------------------

TEST(FilePolicyTest, NothingInOrNamedDotGitIsWritableWhateverTheRulesSay) {
  const std::string_view writable_everywhere = R"(filesystem.allow = ["."]
filesystem.writable = true)";
  // Rules that name .git explicitly do not unlock it either.
  const std::string_view naming_git = R"(filesystem.allow = [".", ".git", "sub/.git/info"]
filesystem.writable = [".git", ".git/commondir", "sub/.git", "vendor"])";
  for (std::string_view sandbox : {writable_everywhere, naming_git}) {
    FilePolicy policy = Policy(sandbox);
    // What git reads as configuration or follows elsewhere; whether any of
    // it exists plays no part.
    for (std::string_view path : {".git", ".git/commondir", ".git/config", ".git/info/attributes",
                                  ".git/info/exclude", ".git/worktrees/w/commondir", ".git/worktrees/w/config.worktree",
                                  ".git/modules/m/config", ".git/objects/ab/cdef", ".git/HEAD", "sub/.git",
                                  "sub/.git/info/x", "vendor/lib/.git", "vendor/lib/.git/config", ".GIT/config",
                                  "sub/.Git"}) {
      PolicyDecision decision = policy.Check(FileAccess::kWrite, path);
      EXPECT_EQ(decision.decision, Decision::kDeny) << sandbox << ": " << path;
      EXPECT_TRUE(decision.rule.starts_with("git internals \"")) << path << ": " << decision.rule;
      EXPECT_EQ(policy.CheckEntry(FileAccess::kWrite, path).decision, Decision::kDeny) << path;
    }
    EXPECT_EQ(Write(policy, "vendor/lib/.git/modules/m/config"),
              R"(deny git internals "vendor/lib/.git", which no rule makes writable)");
    // Names that only look alike are ordinary files.
    for (std::string_view path : {".gitignore", ".github/workflows/ci.yml", "a.git", ".git2/x", "git/config"}) {
      EXPECT_NE(policy.Check(FileAccess::kWrite, path).decision, Decision::kDeny) << sandbox << ": " << path;
    }
  }
  // Reads stay as the policy says: .git/config and hooks are sensitive,
  // the rest readable.
  FilePolicy policy = Policy(writable_everywhere);
  EXPECT_EQ(Read(policy, ".git/HEAD"), R"(allow filesystem.allow ".")");
  EXPECT_EQ(Read(policy, ".git/commondir"), R"(allow filesystem.allow ".")");
  EXPECT_EQ(Read(policy, ".git/config"), R"(deny sensitive path "**/.git/config")");
  EXPECT_EQ(GitInternalsOf("a/.git/b/.git/c"), "a/.git");
  EXPECT_EQ(GitInternalsOf("a/b"), std::nullopt);
  EXPECT_EQ(GitInternalsOf(""), std::nullopt);
}

TEST(FilePolicyTest, TheAuditLogIsNeitherReadableNorWritable) {
  FilePolicy policy = Policy(R"(filesystem.allow = ["."]
filesystem.writable = true)");
  EXPECT_EQ(Read(policy, ".toolvfs/audit.jsonl"), R"(deny sensitive path ".toolvfs/**")");
  EXPECT_EQ(Write(policy, ".toolvfs/audit.jsonl"), R"(deny sensitive path ".toolvfs/**")");
  EXPECT_EQ(Write(policy, ".toolvfs"), R"(deny sensitive path ".toolvfs/**")");
}

// --- the default policy -----------------------------------------------------------

TEST(FilePolicyTest, WithoutASandboxTableTheProjectIsReadableAndWritesAreUncovered) {
  FilePolicy policy = Policy(std::nullopt);
  EXPECT_EQ(Read(policy, ""), "allow default: project readable");
  EXPECT_EQ(Read(policy, "src/deep/a.cc"), "allow default: project readable");
  EXPECT_EQ(Write(policy, "src/a.cc"), "uncovered");
  EXPECT_EQ(WriteHint(policy, "src/a.cc"), R"(add "src/a.cc" to filesystem.writable)");
  EXPECT_EQ(Read(policy, ".env"), R"(deny sensitive path "**/.env")");
  EXPECT_EQ(Read(policy, "toolvfs.toml"), R"(deny sensitive path "toolvfs.toml")");
  EXPECT_EQ(Write(policy, ".toolvfs/audit.jsonl"), R"(deny sensitive path ".toolvfs/**")");
}

// --- writes of directories ----------------------------------------------------------

TEST(FilePolicyTest, WritingADirectoryIsDeniedWhenSomethingBelowIsDenied) {
  FilePolicy policy = Policy(R"(filesystem.allow = ["."]
filesystem.writable = true
filesystem.deny = ["build/keep"]
sensitive_paths = ["config/prod.json", "secrets/*.key"])");
  // Deleting or moving "build" would take "build/keep" with it.
  EXPECT_EQ(Write(policy, "build"), R"(deny filesystem.deny "build/keep")");
  EXPECT_EQ(WriteHint(policy, "build"), R"("build/keep" lies below "build")");
  EXPECT_EQ(Write(policy, "build/out"), "allow filesystem.writable = true");
  EXPECT_EQ(Read(policy, "build"), R"(allow filesystem.allow ".")");
  EXPECT_EQ(Write(policy, "config"), R"(deny sensitive path "config/prod.json")");
  EXPECT_EQ(Write(policy, "config/dev.json"), "allow filesystem.writable = true");
  EXPECT_EQ(Write(policy, "secrets"), R"(deny sensitive path "secrets/*.key")");
  EXPECT_EQ(Write(policy, "secrets/readme.txt"), "allow filesystem.writable = true");
  // A repository's .git is never written (git internals).
  EXPECT_EQ(Write(policy, "vendor/lib/.git"), R"(deny git internals "vendor/lib/.git", which no rule makes writable)");
  EXPECT_EQ(Write(policy, "vendor/lib"), "allow filesystem.writable = true");
  // Patterns that match at any depth are not judged below an unrelated
  // directory: the caller checks the content of what it deletes.
  EXPECT_EQ(Write(policy, "src"), "allow filesystem.writable = true");
}

TEST(FilePolicyTest, CheckEntryJudgesTheEntryAloneNotWhatLiesBelow) {
  FilePolicy policy = Policy(R"(filesystem.allow = ["."]
filesystem.writable = true
filesystem.deny = ["build/keep"])");
  EXPECT_EQ(policy.Check(FileAccess::kWrite, "build").decision, Decision::kDeny);
  EXPECT_EQ(policy.CheckEntry(FileAccess::kWrite, "build").decision, Decision::kAllow);
  // The entry's own rules still hold.
  EXPECT_EQ(policy.CheckEntry(FileAccess::kWrite, "build/keep").decision, Decision::kDeny);
  EXPECT_EQ(policy.CheckEntry(FileAccess::kWrite, "build/keep/x").decision, Decision::kDeny);
  EXPECT_EQ(policy.CheckEntry(FileAccess::kRead, ".env").decision, Decision::kDeny);
  EXPECT_EQ(policy.CheckEntry(FileAccess::kWrite, "").decision, Decision::kAllow);
}

TEST(FilePolicyTest, WritingTheRootIsAlwaysDenied) {
  FilePolicy policy = Policy(R"(filesystem.allow = ["."]
filesystem.writable = true)");
  // Deleting "." must not delete .toolvfs/ (nor toolvfs.toml).
  EXPECT_EQ(Write(policy, ""), R"(deny sensitive path ".toolvfs/**")");
  EXPECT_EQ(WriteHint(policy, ""), R"(paths below "." match it)");
  FilePolicy with_deny = Policy(R"(filesystem.allow = ["."]
filesystem.writable = true
filesystem.deny = ["secrets"])");
  EXPECT_EQ(Write(with_deny, ""), R"(deny filesystem.deny "secrets")");
  EXPECT_EQ(Write(Policy(std::nullopt), ""), R"(deny sensitive path ".toolvfs/**")");
}

TEST(FilePolicyTest, ADirectoryNamedByASensitiveRuleMayBeWritten) {
  FilePolicy policy = Policy(R"(filesystem.allow = ["."]
filesystem.writable = [".toolvfs/cache"])");
  EXPECT_EQ(Write(policy, ".toolvfs/cache"), R"(allow filesystem.writable ".toolvfs/cache")");
  EXPECT_EQ(Write(policy, ".toolvfs/cache/a/b"), R"(allow filesystem.writable ".toolvfs/cache")");
  EXPECT_EQ(Write(policy, ".toolvfs/audit.jsonl"), R"(deny sensitive path ".toolvfs/**")");
  EXPECT_EQ(Write(policy, ".toolvfs"), R"(deny sensitive path ".toolvfs/**")");
}

// --- messages ---------------------------------------------------------------------

TEST(FilePolicyTest, HintsNameTheConfigKey) {
  FilePolicy policy = Policy(R"(filesystem.allow = ["src"]
filesystem.deny = ["src/secret"])");
  EXPECT_EQ(ReadHint(policy, "docs/a.md"), R"(add "docs/a.md" to filesystem.allow)");
  EXPECT_EQ(ReadHint(policy, ""), R"(add "." to filesystem.allow)");
  EXPECT_EQ(WriteHint(policy, "src/gen/a.h"), R"(add "src/gen/a.h" to filesystem.writable)");
  EXPECT_EQ(ReadHint(policy, "src/secret/a"), R"(remove "src/secret" from filesystem.deny to allow it)");
  EXPECT_EQ(ReadHint(Policy("filesystem.writable = true"), "a"), R"(add "a" to filesystem.allow)");
  EXPECT_EQ(WriteHint(Policy("filesystem.writable = true"), "a"), R"(add "a" to filesystem.allow)");
  EXPECT_EQ(policy.Check(FileAccess::kRead, "src/a").hint, "");
}

TEST(FilePolicyTest, RulesQuotePathsAsTomlStrings) {
  FilePolicy policy = Policy(R"(filesystem.allow = ['we"ird\dir'])");
  EXPECT_EQ(Read(policy, "we\"ird\\dir/a"), R"(allow filesystem.allow "we\"ird\\dir")");
  EXPECT_EQ(ReadHint(policy, "x\"y"), R"(add "x\"y" to filesystem.allow)");
}

TEST(FilePolicyTest, DescribeHasOneLinePerRuleAndOneForSensitivePaths) {
  FilePolicy policy = Policy(R"(filesystem.allow = ["src"]
filesystem.writable = ["out"]
filesystem.deny = ["src/secret"]
sensitive_paths = ["config/prod.key"])");
  std::vector<std::string> lines = policy.Describe();
  std::vector<std::string> expected = {
      R"(read "src": allow (filesystem.allow))",
      R"(write "out": allow (filesystem.writable))",
      R"(read and write "src/secret": deny (filesystem.deny))",
  };
  expected.push_back("write anything named .git or below it: deny, whatever the rules say (git internals)");
  std::string sensitive = R"(sensitive paths, denied unless a rule names them: "config/prod.key")";
  for (const std::string& pattern : BuiltinSensitivePatterns()) sensitive += " \"" + pattern + "\"";
  expected.push_back(sensitive);
  EXPECT_EQ(lines, expected);

  std::vector<std::string> default_lines = Policy(std::nullopt, std::nullopt).Describe();
  ASSERT_GE(default_lines.size(), 2u);
  EXPECT_EQ(default_lines[0], R"(read ".": allow (default: project readable))");
  EXPECT_EQ(default_lines[1], "write: uncovered, the user is asked (no sandbox table)");
  EXPECT_EQ(Policy("filesystem.allow = []").Describe()[0], "read: nothing is allowed (filesystem.allow is empty)");
}

}  // namespace
}  // namespace toolvfs
