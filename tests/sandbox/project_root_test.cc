// Stdio tools and MCP servers in the project root (issue 22, item 3): with
// `filesystem.allow = ["."]` the process lists the root and, when it is
// writable, creates files there, while toolvfs.toml, .toolvfs/ and the
// sensitive paths stay out of its reach — covered in its own mount
// namespace (src/sandbox/mount_masks.h) — by every way of naming them.
// Through the real toolvfs binary, as the user runs it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "mcp_servers.h"
#include "project/test_util.h"
#include "cli/subprocess.h"

namespace toolvfs {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr const char* kConfigText = "# SECRET-CONFIG\n";
constexpr const char* kEnvText = "TOKEN=SECRET-ENV\n";
constexpr const char* kGitConfigText = "[remote] url = SECRET-GIT\n";
constexpr const char* kAuditText = "{\"SECRET-AUDIT\":1}\n";

// Each attempt prints "ok NAME" or "denied NAME"; what a read printed is
// in the output too, so a leaked secret shows.
constexpr const char* kAttempts = R"SH(
try() { name=$1; shift; if "$@" 2>/dev/null; then echo "ok $name"; else echo "denied $name"; fi; }
try list-root ls -a .
try create sh -c 'echo made > new.txt'
try read-back cat new.txt
try read-config cat toolvfs.toml
try read-env cat .env
try read-git-config cat .git/config
try read-audit cat .toolvfs/audit.jsonl
try list-toolvfs ls .toolvfs
try read-alias cat alias.txt
try read-dotdot cat src/../toolvfs.toml
try read-proc-root cat /proc/self/root$PWD/toolvfs.toml
try read-symlink sh -c 'ln -s toolvfs.toml link.txt && cat link.txt'
try write-config sh -c 'echo x > toolvfs.toml'
try append-env sh -c 'echo x >> .env'
try write-git-head sh -c 'echo x > .git/HEAD'
try create-in-toolvfs sh -c 'echo x > .toolvfs/forged.jsonl'
try rename-config mv toolvfs.toml moved.toml
try rename-toolvfs mv .toolvfs moved-dir
try delete-env rm .env
try delete-config rm -f toolvfs.toml
try hardlink-config ln toolvfs.toml hard.toml
try chmod-config chmod 666 toolvfs.toml
try read-openat python3 -c 'import os; d = os.open(".", os.O_RDONLY); print(os.read(os.open("toolvfs.toml", os.O_RDONLY, dir_fd=d), 100))'
)SH";

// The real binary with `arguments`, run in `directory`.
ProcessResult RunToolvfsIn(const std::string& directory, std::vector<std::string> arguments) {
  std::vector<std::string> argv = {ToolvfsBinary()};
  argv.insert(argv.end(), arguments.begin(), arguments.end());
  ProcessOptions options;
  options.cwd = directory;
  return RunProcess(argv, options);
}

class ProjectRootTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(ToolvfsBinary().empty()) << "TOOLVFS_BINARY is not set";
    Write("toolvfs.toml", kConfigText);
    Write(".env", kEnvText);
    Write(".git/config", kGitConfigText);
    Write(".git/HEAD", "ref: refs/heads/main\n");
    Write(".toolvfs/audit.jsonl", kAuditText);
    Write("src/a.txt", "source\n");
    // Another name of .env's inode: covering the name alone would leave it.
    ASSERT_EQ(link(dir_.Join(".env").c_str(), dir_.Join("alias.txt").c_str()), 0);
  }

  void Write(const std::string& path, const std::string& content) { WriteRealFile(dir_.Join(path), content); }

  ProcessResult Toolvfs(std::vector<std::string> arguments) { return RunToolvfsIn(dir_.path(), std::move(arguments)); }

  // The attempts as a stdio tool with the whole project readable and
  // writable (`--allow-write .`), under `hidden` sandbox mechanisms.
  ProcessResult RunAttempts(const std::string& hidden = "") {
    std::vector<std::string> argv = {ToolvfsBinary(), "exec", "--runtime", "stdio", "--no-audit",
                                     "--no-interaction", "--allow-write", ".", "--",
                                     "sh", "-c", kAttempts};
    ProcessOptions options;
    options.cwd = dir_.path();
    if (!hidden.empty()) options.set_env.push_back("TOOLVFS_TEST_HIDE_SANDBOX=" + hidden);
    return RunProcess(argv, options);
  }

  // `mode_kept`: whether chmod was denied too (Landlock does not govern
  // chmod; a cover's read-only mount does).
  void ExpectSecretsUntouched(bool mode_kept = true) {
    EXPECT_EQ(ReadRealFile(dir_.Join("toolvfs.toml")), kConfigText);
    EXPECT_EQ(ReadRealFile(dir_.Join(".env")), kEnvText);
    EXPECT_EQ(ReadRealFile(dir_.Join(".git/config")), kGitConfigText);
    EXPECT_EQ(ReadRealFile(dir_.Join(".git/HEAD")), "ref: refs/heads/main\n");
    EXPECT_EQ(ReadRealFile(dir_.Join(".toolvfs/audit.jsonl")), kAuditText);
    EXPECT_FALSE(std::filesystem::exists(dir_.Join(".toolvfs/forged.jsonl")));
    EXPECT_FALSE(std::filesystem::exists(dir_.Join("moved.toml")));
    EXPECT_FALSE(std::filesystem::exists(dir_.Join("hard.toml")));
    if (!mode_kept) return;
    struct stat status;
    ASSERT_EQ(stat(dir_.Join("toolvfs.toml").c_str(), &status), 0);
    EXPECT_EQ(status.st_mode & 0777, 0644u);
  }

  TempDir dir_;
};

TEST_F(ProjectRootTest, AStdioToolListsAndWritesTheRootButNeverTheHiddenEntries) {
  ProcessResult result = RunAttempts();
  ASSERT_EQ(result.exit_code, 0) << result;
  const std::string& out = result.out;
  for (const char* allowed : {"ok list-root", "ok create", "ok read-back"}) {
    EXPECT_THAT(out, HasSubstr(allowed)) << out;
  }
  EXPECT_THAT(out, HasSubstr("src\n"));
  EXPECT_THAT(out, HasSubstr("made\n"));
  for (const char* denied :
       {"denied read-config", "denied read-env", "denied read-git-config", "denied read-audit",
        "denied list-toolvfs", "denied read-alias", "denied read-dotdot", "denied read-proc-root",
        "denied read-symlink", "denied write-config", "denied append-env", "denied write-git-head",
        "denied create-in-toolvfs", "denied rename-config", "denied rename-toolvfs", "denied delete-env",
        "denied delete-config", "denied hardlink-config", "denied chmod-config", "denied read-openat"}) {
    EXPECT_THAT(out, HasSubstr(denied)) << out;
  }
  for (const char* secret : {"SECRET-CONFIG", "SECRET-ENV", "SECRET-GIT", "SECRET-AUDIT"}) {
    EXPECT_THAT(out, Not(HasSubstr(secret)));
  }
  EXPECT_EQ(ReadRealFile(dir_.Join("new.txt")), "made\n");
  ExpectSecretsUntouched();
}

TEST_F(ProjectRootTest, WithoutMountMasksTheRootIsSplitAndStillSafe) {
  // The fallback where the kernel cannot cover paths: entry-by-entry
  // grants, so nothing can be created at the root, and nothing leaks.
  ProcessResult result = RunAttempts("mount-masks");
  ASSERT_EQ(result.exit_code, 0) << result;
  EXPECT_THAT(result.out, HasSubstr("denied create"));
  for (const char* secret : {"SECRET-CONFIG", "SECRET-ENV", "SECRET-GIT", "SECRET-AUDIT"}) {
    EXPECT_THAT(result.out, Not(HasSubstr(secret)));
  }
  EXPECT_FALSE(std::filesystem::exists(dir_.Join("new.txt")));
  ExpectSecretsUntouched(/*mode_kept=*/false);
}

TEST_F(ProjectRootTest, AWritableRootWithoutItsConfigStaysSplit) {
  // No mount can cover a toolvfs.toml that does not exist, and a tool that
  // created one would write the next run's policy: the root stays split.
  std::filesystem::remove(dir_.Join("toolvfs.toml"));
  ProcessResult result = RunAttempts();
  ASSERT_EQ(result.exit_code, 0) << result;
  EXPECT_THAT(result.out, HasSubstr("denied create"));
  EXPECT_THAT(result.out, HasSubstr("ok list-root"));
  EXPECT_FALSE(std::filesystem::exists(dir_.Join("toolvfs.toml")));
  EXPECT_THAT(result.out, Not(HasSubstr("SECRET-ENV")));
}

TEST_F(ProjectRootTest, CheckExplainsWhatTheProcessMayTouch) {
  Write("toolvfs.toml",
        "[tools.lister]\ncommand = \"ls -a\"\nruntime = \"stdio\"\n"
        "[tools.lister.sandbox]\nfilesystem.allow = [\".\"]\nfilesystem.writable = true\n");
  ProcessResult result = Toolvfs({"check"});
  ASSERT_EQ(result.exit_code, 0) << result;
  EXPECT_THAT(result.out,
              HasSubstr("process reads . and writes . (granted whole; its own mount namespace covers 6 entries)"));
  EXPECT_THAT(result.out, HasSubstr("hidden (mode 000, read-only): .env, .git/config, .toolvfs, alias.txt, toolvfs.toml"));
  EXPECT_THAT(result.out, HasSubstr("read-only: .git\n"));
}

TEST_F(ProjectRootTest, CheckSaysTheWritesAreSplitWhenTheRootLacksAGuardedEntry) {
  // The masks still cover the reads, but no mount can cover a .git that
  // does not exist: the writes are granted entry by entry, and check says
  // so rather than "granted whole".
  std::filesystem::remove_all(dir_.Join(".git"));
  Write("toolvfs.toml",
        "[tools.lister]\ncommand = \"ls -a\"\nruntime = \"stdio\"\n"
        "[tools.lister.sandbox]\nfilesystem.allow = [\".\"]\nfilesystem.writable = true\n");
  ProcessResult result = Toolvfs({"check"});
  ASSERT_EQ(result.exit_code, 0) << result;
  EXPECT_THAT(result.out, HasSubstr("process reads . (granted whole; its own mount namespace covers 4 entries)\n"));
  EXPECT_THAT(result.out, HasSubstr("process writes src (granted entry by entry: the root lacks .git, which a tool "
                                    "must not create; nothing can be created at the root)\n"));
  EXPECT_THAT(result.out, Not(HasSubstr("writes . (granted whole")));
}

TEST_F(ProjectRootTest, TheOfficialFilesystemServerWritesInTheRoot) {
  const std::string script = McpServerScript("server-filesystem");
  ASSERT_TRUE(std::filesystem::exists(script))
      << script << " is missing: scripts/install-mcp-servers.sh installs it";
  Write("toolvfs.toml", "[mcp_servers.files]\ncommand = \"node\"\nargs = [\"" + script +
                            "\", \".\"]\nenv = []\n"
                            "[tools.files]\nsource = \"mcp.files\"\n"
                            "[tools.files.sandbox]\nfilesystem.allow = [\".\"]\nfilesystem.writable = true\n");
  ProcessResult written =
      Toolvfs({"run", "--no-audit", "files.write_file", "--args", R"({"path":"created.txt","content":"hello"})"});
  EXPECT_EQ(written.exit_code, 0) << written;
  EXPECT_EQ(ReadRealFile(dir_.Join("created.txt")), "hello");
  ProcessResult listed = Toolvfs({"run", "--no-audit", "files.list_directory", "--args", R"({"path":"."})"});
  EXPECT_EQ(listed.exit_code, 0) << listed;
  EXPECT_THAT(listed.out, HasSubstr("created.txt"));
  ProcessResult secret = Toolvfs({"run", "--no-audit", "files.read_text_file", "--args", R"({"path":".env"})"});
  EXPECT_NE(secret.exit_code, 0) << secret;
  EXPECT_THAT(secret.out + secret.err, Not(HasSubstr("SECRET-ENV")));
}

TEST_F(ProjectRootTest, AWritableRootWithoutGitStaysSplit) {
  // git obeys a .git/config it finds (core.fsmonitor runs a command at the
  // user's next `git status`): a tool must not create one at the root.
  std::filesystem::remove_all(dir_.Join(".git"));
  ProcessResult result = RunAttempts();
  ASSERT_EQ(result.exit_code, 0) << result;
  EXPECT_THAT(result.out, HasSubstr("denied create"));
  ProcessResult git = Toolvfs({"exec", "--runtime", "stdio", "--no-audit", "--no-interaction", "--allow-write", ".",
                               "--", "sh", "-c", "mkdir .git && echo x > .git/config"});
  EXPECT_NE(git.exit_code, 0) << git;
  EXPECT_FALSE(std::filesystem::exists(dir_.Join(".git")));
}

// What a tool tries to leave behind in its project, each attempt printing
// "ok NAME" or "denied NAME": at the root the names the policy refuses
// (the next run's policy, the audit log, a repository whose config git
// obeys), below it a `.git` and a `.env` in a directory it may write, and
// its legitimate writes.
constexpr const char* kPlantings = R"SH(
try() { name=$1; shift; if "$@" 2>/dev/null; then echo "ok $name"; else echo "denied $name"; fi; }
try plant-config sh -c 'echo x > toolvfs.toml'
try plant-toolvfs sh -c 'mkdir .toolvfs && echo x > .toolvfs/x'
try plant-git sh -c 'mkdir .git && printf "[core]\n\tfsmonitor = touch PWNED\n" > .git/config'
try plant-root-file sh -c 'echo x > new-at-root.txt'
try plant-sub-git sh -c 'mkdir sub/.git && echo x > sub/.git/config'
try plant-sub-env sh -c 'echo TOKEN=x > sub/.env'
try write-sub sh -c 'echo made > sub/new.txt && mkdir sub/deeper && echo deep > sub/deeper/d.txt'
try write-root-file sh -c 'echo changed > notes.txt'
)SH";

// A stdio tool on a materialized copy (a sqlite project), which never holds
// toolvfs.toml, .toolvfs nor .git: nothing can be created at its root, and
// what the tool's policy refuses below it is not synced back.
class MaterializedRootTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(ToolvfsBinary().empty()) << "TOOLVFS_BINARY is not set";
    WriteRealFile(dir_.Join("source/notes.txt"), "notes\n");
    WriteRealFile(dir_.Join("source/sub/a.txt"), "a\n");
    ASSERT_EQ(Toolvfs({"workspace", "init", "--from", dir_.Join("source"), "--project", project_}).exit_code, 0);
  }

  ProcessResult Toolvfs(std::vector<std::string> arguments) { return RunToolvfsIn(dir_.path(), std::move(arguments)); }

  TempDir dir_;
  const std::string project_ = "sqlite:" + dir_.Join("store.db") + "#agent";
};

TEST_F(MaterializedRootTest, NothingTheToolsPolicyRefusesReachesTheWorkspace) {
  ProcessResult result = Toolvfs({"exec", "--project", project_, "--runtime", "stdio", "--no-audit",
                                  "--no-interaction", "--allow-write", ".", "--", "sh", "-c", kPlantings});
  ASSERT_EQ(result.exit_code, 0) << result;
  for (const char* denied : {"denied plant-config", "denied plant-toolvfs", "denied plant-git",
                             "denied plant-root-file"}) {
    EXPECT_THAT(result.out, HasSubstr(denied)) << result;
  }
  EXPECT_THAT(result.out, HasSubstr("ok write-sub")) << result;
  EXPECT_THAT(result.out, HasSubstr("ok write-root-file")) << result;
  // Inside a directory granted whole the sandbox cannot refuse a new name;
  // the sync-back does, and says so.
  for (const char* path : {"'sub/.env'", "'sub/.git'", "'sub/.git/config'"}) {
    EXPECT_THAT(result.err, HasSubstr(std::string("not synced back from the materialized copy: ") + path)) << result;
  }
  ProcessResult listed = Toolvfs({"workspace", "ls", "--recursive", "--project", project_});
  ASSERT_EQ(listed.exit_code, 0) << listed;
  for (const char* refused : {"toolvfs.toml", ".toolvfs", ".git", "new-at-root.txt", ".env"}) {
    EXPECT_THAT(listed.out, Not(HasSubstr(refused))) << listed;
  }
  for (const char* kept : {"sub/new.txt", "sub/deeper/d.txt"}) EXPECT_THAT(listed.out, HasSubstr(kept)) << listed;
  EXPECT_EQ(Toolvfs({"workspace", "cat", "notes.txt", "--project", project_}).out, "changed\n");
}

// An fs project whose audit log is elsewhere (--audit) lacks .toolvfs, and
// one without config lacks toolvfs.toml: its root stays split too.
TEST(FsProjectRootTest, WithTheAuditLogElsewhereTheToolCreatesNothingAtTheRoot) {
  ASSERT_FALSE(ToolvfsBinary().empty()) << "TOOLVFS_BINARY is not set";
  TempDir dir;
  WriteRealFile(dir.Join("project/notes.txt"), "notes\n");
  WriteRealFile(dir.Join("project/sub/a.txt"), "a\n");
  ProcessOptions options;
  options.cwd = dir.Join("project");
  ProcessResult result =
      RunProcess({ToolvfsBinary(), "exec", "--runtime", "stdio", "--audit", dir.Join("audit.jsonl"),
                  "--no-interaction", "--allow-write", ".", "--", "sh", "-c", kPlantings},
                 options);
  ASSERT_EQ(result.exit_code, 0) << result;
  for (const char* denied : {"denied plant-config", "denied plant-toolvfs", "denied plant-git",
                             "denied plant-root-file"}) {
    EXPECT_THAT(result.out, HasSubstr(denied)) << result;
  }
  EXPECT_THAT(result.out, HasSubstr("ok write-sub")) << result;
  for (const char* refused : {"toolvfs.toml", ".toolvfs", ".git", "new-at-root.txt"}) {
    EXPECT_FALSE(std::filesystem::exists(dir.Join("project/") + refused)) << refused;
  }
  EXPECT_EQ(ReadRealFile(dir.Join("project/sub/new.txt")), "made\n");
  EXPECT_EQ(ReadRealFile(dir.Join("project/notes.txt")), "changed\n");
}

}  // namespace
}  // namespace toolvfs
