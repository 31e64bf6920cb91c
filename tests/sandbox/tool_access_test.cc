#include "sandbox/tool_access.h"

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "project/test_util.h"
#include "sandbox/private_temp_dir.h"
#include "sandbox/restricted_child.h"

namespace toolvfs {
namespace {

using ::testing::HasSubstr;

std::string Canonical(const std::string& path) { return std::filesystem::canonical(path).string(); }

// The rule for `path`, if the rules have one.
std::optional<LandlockPathRule> RuleFor(const LandlockRules& rules, const std::string& path) {
  for (const LandlockPathRule& rule : rules.paths) {
    if (rule.path == path) return rule;
  }
  return std::nullopt;
}

// Whether any rule covers `path` (is it or an ancestor of it).
bool AnyRuleCovers(const LandlockRules& rules, const std::string& path) {
  return std::any_of(rules.paths.begin(), rules.paths.end(), [&](const LandlockPathRule& rule) {
    return rule.path == "/" || path == rule.path || path.starts_with(rule.path + "/");
  });
}

LandlockPathRule ReadExecute(std::string path) {
  return {.path = std::move(path), .read = true, .write = false, .execute = true};
}
LandlockPathRule ReadOnly(std::string path) {
  return {.path = std::move(path), .read = true, .write = false, .execute = false};
}
LandlockPathRule ReadWrite(std::string path) {
  return {.path = std::move(path), .read = true, .write = true, .execute = false};
}
// Project paths: opened without following symlinks (landlock.h).
LandlockPathRule InProject(LandlockPathRule rule) {
  rule.follow_symlinks = false;
  return rule;
}

void MakeExecutable(const std::string& path) { ASSERT_EQ(chmod(path.c_str(), 0755), 0); }

LandlockRules RulesOrDie(const ToolAccessRequest& request) {
  Result<LandlockRules> rules = ToolAccessRules(request);
  EXPECT_TRUE(rules.ok()) << rules.status().ToString();
  return rules.ok() ? *rules : LandlockRules{};
}

TEST(ToolAccessTest, EnvShebangResolvesInterpreterOnPathAndItsPrefix) {
  TempDir directory;
  const std::string project = directory.Join("project");
  MakeDirectory(project);
  WriteRealFile(directory.Join("tools/tool.py"), "#!/usr/bin/env -S python3 -u\nprint(1)\n");
  MakeExecutable(directory.Join("tools/tool.py"));
  const LandlockRules rules = RulesOrDie({.kind = ToolKind::kVfs,
                                          .program = directory.Join("tools/tool.py"),
                                          .args = {"--verbose", "missing.txt"},
                                          .working_directory = project,
                                          .sdk_dir = "/opt/toolvfs/sdk",
                                          .private_temp_dir = directory.Join("home"),
                                          .system_read = {"/etc/ssl/certs"},
                                          .project_root = project,
                                          .readable_prefixes = {""},
                                          .network_allowed = true});
  const std::string python = Canonical("/usr/bin/python3");
  EXPECT_EQ(RuleFor(rules, directory.Join("tools/tool.py")),
            ReadExecute(directory.Join("tools/tool.py")));
  EXPECT_EQ(RuleFor(rules, Canonical("/usr/bin/env")), ReadExecute(Canonical("/usr/bin/env")));
  EXPECT_EQ(RuleFor(rules, python), ReadExecute(python));
  // The prefix of /usr/bin/python3.11 is /usr.
  EXPECT_EQ(RuleFor(rules, "/usr/lib"), ReadExecute("/usr/lib"));
  EXPECT_EQ(RuleFor(rules, "/usr/share"), ReadOnly("/usr/share"));
  EXPECT_FALSE(AnyRuleCovers(rules, "/usr/bin/sh"));
  EXPECT_EQ(RuleFor(rules, "/opt/toolvfs/sdk"), ReadOnly("/opt/toolvfs/sdk"));
  EXPECT_EQ(RuleFor(rules, "/etc/ssl/certs"), ReadOnly("/etc/ssl/certs"));
  EXPECT_EQ(RuleFor(rules, "/etc/ld.so.cache"), ReadOnly("/etc/ld.so.cache"));
  EXPECT_EQ(RuleFor(rules, "/dev/null"), ReadWrite("/dev/null"));
  EXPECT_EQ(RuleFor(rules, directory.Join("home")), ReadWrite(directory.Join("home")));
  // A vfs tool: nothing of the project however the request is filled, no TCP.
  EXPECT_FALSE(AnyRuleCovers(rules, project));
  EXPECT_FALSE(AnyRuleCovers(rules, "/etc/passwd"));
  EXPECT_TRUE(rules.deny_tcp_bind_connect);
  EXPECT_TRUE(rules.scope_signals_and_abstract_unix_sockets);
}

TEST(ToolAccessTest, ScriptOnTheCommandLineIsReadable) {
  TempDir project;
  WriteRealFile(project.Join("tool.py"), "print(1)\n");
  const LandlockRules rules = RulesOrDie({.kind = ToolKind::kVfs,
                                          .program = "python3",
                                          .args = {"-u", "tool.py", "notes.txt", "tool.py"},
                                          .working_directory = project.path(),
                                          .project_root = project.path()});
  EXPECT_EQ(RuleFor(rules, project.Join("tool.py")), InProject(ReadOnly(project.Join("tool.py"))));
  EXPECT_FALSE(RuleFor(rules, project.Join("notes.txt")).has_value());  // does not exist
  EXPECT_FALSE(AnyRuleCovers(rules, project.Join("other.py")));
  const std::string python = Canonical("/usr/bin/python3");
  EXPECT_EQ(RuleFor(rules, python), ReadExecute(python));
}

TEST(ToolAccessTest, AFileOnTheCommandLineSwappedForASymlinkInTheProjectGrantsNothing) {
  // Tools may write the project: a data file or a directory on the way
  // replaced by a symlink must not carry the grant to its target.
  TempDir directory;
  const std::string project = directory.Join("project");
  WriteRealFile(directory.Join("home/.ssh/id_rsa"), "key");
  WriteRealFile(project + "/.env", "secret");
  WriteRealFile(project + "/data/real.json", "{}");
  MakeSymlink(directory.Join("home/.ssh/id_rsa"), project + "/notes.txt");
  MakeSymlink(project + "/.env", project + "/settings.json");
  MakeSymlink(directory.Join("home/.ssh"), project + "/keys");
  MakeSymlink(project + "/data", project + "/linked");
  const LandlockRules rules = RulesOrDie({.kind = ToolKind::kVfs,
                                          .program = "python3",
                                          .args = {"notes.txt", "settings.json", "keys/id_rsa",
                                                   "linked/real.json", "data/real.json"},
                                          .working_directory = project,
                                          .project_root = project});
  EXPECT_FALSE(AnyRuleCovers(rules, directory.Join("home/.ssh/id_rsa")));
  EXPECT_FALSE(AnyRuleCovers(rules, project + "/.env"));
  EXPECT_FALSE(AnyRuleCovers(rules, project + "/notes.txt"));
  EXPECT_FALSE(AnyRuleCovers(rules, project + "/linked/real.json"));
  // The file named without a symlink on the way is granted, and only it.
  EXPECT_EQ(RuleFor(rules, project + "/data/real.json"), InProject(ReadOnly(project + "/data/real.json")));
}

TEST(ToolAccessTest, AFileReachedThroughASymlinkAboveTheProjectIsGranted) {
  // /home -> /data/home: the project's own path may go through a symlink;
  // only symlinks inside the project count.
  TempDir directory;
  const std::string project = directory.Join("data/project");
  WriteRealFile(project + "/tool.py", "print(1)\n");
  MakeSymlink(directory.Join("data"), directory.Join("home"));
  const LandlockRules rules = RulesOrDie({.kind = ToolKind::kVfs,
                                          .program = "python3",
                                          .args = {directory.Join("home/project/tool.py")},
                                          .working_directory = directory.Join("home/project"),
                                          .project_root = directory.Join("home/project")});
  EXPECT_EQ(RuleFor(rules, project + "/tool.py"), InProject(ReadOnly(project + "/tool.py")));
}

TEST(ToolAccessTest, SymlinkedInterpreterGetsBothPrefixes) {
  TempDir directory;
  MakeDirectory(directory.Join("venv/bin"));
  MakeSymlink(Canonical("/usr/bin/python3"), directory.Join("venv/bin/python"));
  WriteRealFile(directory.Join("tool"), "#!" + directory.Join("venv/bin/python") + "\n");
  const LandlockRules rules = RulesOrDie({.program = directory.Join("tool")});
  const std::string python = Canonical("/usr/bin/python3");
  EXPECT_EQ(RuleFor(rules, python), ReadExecute(python));
  EXPECT_EQ(RuleFor(rules, directory.Join("venv/lib")), ReadExecute(directory.Join("venv/lib")));
  EXPECT_EQ(RuleFor(rules, directory.Join("venv/pyvenv.cfg")),
            ReadOnly(directory.Join("venv/pyvenv.cfg")));
  EXPECT_EQ(RuleFor(rules, "/usr/lib"), ReadExecute("/usr/lib"));
}

TEST(ToolAccessTest, InstallPrefixNeverReachesIntoTheProject) {
  TempDir project;
  WriteRealFile(project.Join("bin/tool"), "#!/bin/sh\necho hi\n");
  MakeExecutable(project.Join("bin/tool"));
  const LandlockRules rules =
      RulesOrDie({.program = project.Join("bin/tool"), .project_root = project.path()});
  EXPECT_EQ(RuleFor(rules, project.Join("bin/tool")), ReadExecute(project.Join("bin/tool")));
  EXPECT_FALSE(RuleFor(rules, project.Join("lib")).has_value());
  EXPECT_FALSE(RuleFor(rules, project.Join("share")).has_value());
}

TEST(ToolAccessTest, InstallPrefixPaths) {
  EXPECT_EQ(InstallPrefixPaths("/usr/bin/python3.11"),
            (std::vector<LandlockPathRule>{ReadExecute("/usr/lib"), ReadExecute("/usr/lib64"),
                                           ReadExecute("/usr/libexec"), ReadOnly("/usr/share"),
                                           ReadOnly("/usr/pyvenv.cfg")}));
  EXPECT_TRUE(InstallPrefixPaths("/opt/tools/todo_report").empty());
  EXPECT_EQ(InstallPrefixPaths("/bin/sh").front(), ReadExecute("/lib"));
}

TEST(ToolAccessTest, ErrorsNameThePathAndTheReason) {
  TempDir directory;
  WriteRealFile(directory.Join("missing_interpreter"), "#!/usr/bin/nope-toolvfs\n");
  Result<LandlockRules> rules = ToolAccessRules({.program = directory.Join("missing_interpreter")});
  ASSERT_FALSE(rules.ok());
  EXPECT_EQ(rules.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(rules.status().message(), HasSubstr("names '/usr/bin/nope-toolvfs', which does not exist"));
  EXPECT_THAT(rules.status().message(), HasSubstr(directory.Join("missing_interpreter")));

  WriteRealFile(directory.Join("missing_env_program"), "#!/usr/bin/env nope-toolvfs\n");
  rules = ToolAccessRules({.program = directory.Join("missing_env_program"), .path_env = "/usr/bin"});
  ASSERT_FALSE(rules.ok());
  EXPECT_THAT(rules.status().message(),
              HasSubstr("names 'nope-toolvfs', which is not on PATH '/usr/bin'"));

  rules = ToolAccessRules({.program = "nope-toolvfs"});
  ASSERT_FALSE(rules.ok());
  EXPECT_THAT(rules.status().message(), HasSubstr("Cannot sandbox 'nope-toolvfs'"));

  rules = ToolAccessRules({.kind = ToolKind::kStdio,
                           .program = "/bin/sh",
                           .project_root = directory.path(),
                           .readable_prefixes = {"src/../.."}});
  ASSERT_FALSE(rules.ok());
  EXPECT_THAT(rules.status().message(), HasSubstr("'src/../..' leaves the project"));

  // A shebang loop.
  WriteRealFile(directory.Join("loop"), "#!" + directory.Join("loop") + "\n");
  rules = ToolAccessRules({.program = directory.Join("loop")});
  ASSERT_FALSE(rules.ok());
  EXPECT_THAT(rules.status().message(), HasSubstr("interpreters in the shebang chain"));
}

TEST(ToolAccessTest, StdioToolGetsTheProjectPerItsPolicy) {
  TempDir project;
  MakeDirectory(project.Join("src"));
  MakeDirectory(project.Join("out"));
  ToolAccessRequest request{.kind = ToolKind::kStdio,
                            .program = "/bin/sh",
                            .project_root = project.path(),
                            .readable_prefixes = {"src", "./docs/"},
                            .writable_prefixes = {"out"}};
  LandlockRules rules = RulesOrDie(request);
  EXPECT_EQ(RuleFor(rules, project.Join("src")), InProject(ReadOnly(project.Join("src"))));
  EXPECT_EQ(RuleFor(rules, project.Join("docs")), InProject(ReadOnly(project.Join("docs"))));
  EXPECT_EQ(RuleFor(rules, project.Join("out")), InProject(ReadWrite(project.Join("out"))));
  EXPECT_FALSE(AnyRuleCovers(rules, project.Join("secret.txt")));
  EXPECT_TRUE(rules.deny_tcp_bind_connect);
  EXPECT_TRUE(AnyRuleCovers(rules, "/usr/bin/python3"));  // stdio tools run system programs

  request.network_allowed = true;
  request.readable_prefixes = {"."};
  rules = RulesOrDie(request);
  EXPECT_FALSE(rules.deny_tcp_bind_connect);
  EXPECT_EQ(RuleFor(rules, project.path()), InProject(ReadOnly(project.path())));

  request.kind = ToolKind::kVfs;
  rules = RulesOrDie(request);
  EXPECT_TRUE(rules.deny_tcp_bind_connect);
  EXPECT_FALSE(AnyRuleCovers(rules, project.path()));
}

TEST(ToolAccessTest, ProcessChildCanExecSystemProgramsAndProjectScripts) {
  TempDir project;
  const LandlockRules rules = RulesOrDie({.kind = ToolKind::kProcessChild,
                                          .program = "sh",
                                          .path_env = "/usr/bin:/bin",
                                          .project_root = project.path(),
                                          .readable_prefixes = {""},
                                          .writable_prefixes = {"build"}});
  EXPECT_EQ(RuleFor(rules, "/usr"), ReadExecute("/usr"));
  EXPECT_EQ(RuleFor(rules, "/bin"), ReadExecute("/bin"));
  EXPECT_EQ(RuleFor(rules, project.path()), InProject(ReadExecute(project.path())));
  const std::optional<LandlockPathRule> build = RuleFor(rules, project.Join("build"));
  ASSERT_TRUE(build.has_value());
  EXPECT_TRUE(build->write);
}

// The rules work for a real interpreter: python3 starts and runs under the
// vfs rules, and cannot read /etc/passwd or the project, nor exec a shell.
TEST(ToolAccessTest, Python3RunsUnderVfsRulesAndCannotGetOut) {
  SKIP_WITHOUT_LANDLOCK_ABI(1, "filesystem restriction");
  Result<PrivateTempDir> home = PrivateTempDir::Create();
  ASSERT_TRUE(home.ok()) << home.status().ToString();
  TempDir project;
  WriteRealFile(project.Join("secret.txt"), "a project file, readable only through the host");
  Result<LandlockRules> rules = ToolAccessRules({.kind = ToolKind::kVfs,
                                                 .program = "python3",
                                                 .args = {"-c", "print(1)"},
                                                 .working_directory = project.path(),
                                                 .private_temp_dir = home->path(),
                                                 .project_root = project.path()});
  ASSERT_TRUE(rules.ok()) << rules.status().ToString();
  Result<LandlockRuleset> ruleset = BuildLandlockRuleset(*rules);
  ASSERT_TRUE(ruleset.ok()) << ruleset.status().ToString();
  Result<std::string> python = FindProgramOnPath("python3", kFixedPath);
  ASSERT_TRUE(python.ok()) << python.status().ToString();
  const std::vector<std::string> environment = FixedEnvironment(*home);

  RestrictedRun run = RunProgramRestricted(*ruleset, {*python, "-c", "print(1)"}, environment);
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(run.output, "1\n");

  run = RunProgramRestricted(
      *ruleset,
      {*python, "-c",
       "import tempfile\n"
       "with tempfile.NamedTemporaryFile() as f: f.write(b'ok')\n"  // TMPDIR is writable
       "import os, sys\n"
       "for path in ['/etc/passwd', sys.argv[1]]:\n"
       "    try:\n"
       "        open(path)\n"
       "    except PermissionError:\n"
       "        print('denied', path)\n"
       "try:\n"
       "    os.execv('/bin/sh', ['sh', '-c', 'echo escaped'])\n"
       "except PermissionError:\n"
       "    print('exec denied')\n",
       project.Join("secret.txt")},
      environment);
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(run.output, "denied /etc/passwd\ndenied " + project.Join("secret.txt") + "\nexec denied\n");
}

// Not a pass/fail check (shared machines are noisy): prints what deriving and
// building the rules costs, which the launcher pays once per tool
// configuration, and what applying costs, which every start pays.
TEST(ToolAccessTest, PrintsDerivationAndBuildCost) {
  SKIP_WITHOUT_LANDLOCK_ABI(1, "building a ruleset");
  constexpr int kRounds = 50;
  const ToolAccessRequest request{.program = "python3", .args = {"-c", "pass"}};
  const auto start = std::chrono::steady_clock::now();
  for (int round = 0; round < kRounds; ++round) {
    Result<LandlockRules> rules = ToolAccessRules(request);
    ASSERT_TRUE(rules.ok());
  }
  const auto derived = std::chrono::steady_clock::now();
  const LandlockRules rules = RulesOrDie(request);
  for (int round = 0; round < kRounds; ++round) {
    Result<LandlockRuleset> ruleset = BuildLandlockRuleset(rules);
    ASSERT_TRUE(ruleset.ok());
  }
  const auto built = std::chrono::steady_clock::now();
  const auto microseconds = [](auto duration) {
    return std::chrono::duration<double, std::micro>(duration).count() / kRounds;
  };
  Result<LandlockRuleset> ruleset = BuildLandlockRuleset(rules);
  ASSERT_TRUE(ruleset.ok());
  const ForkedChildOutcome outcome = RunInForkedChild([&](int report_fd) {
    const auto before = std::chrono::steady_clock::now();
    const int setup = RestrictSelf(*ruleset, /*set_no_new_privileges=*/true);
    const auto after = std::chrono::steady_clock::now();
    const double applied = std::chrono::duration<double, std::micro>(after - before).count();
    (void)!write(report_fd, &applied, sizeof applied);
    return setup;
  });
  ASSERT_TRUE(outcome.exited && outcome.code == 0) << outcome.Describe();
  double applied = 0;
  if (outcome.report.size() == sizeof applied) std::memcpy(&applied, outcome.report.data(), sizeof applied);
  std::printf("[ timing   ] ToolAccessRules (python3): %.1f us; BuildLandlockRuleset (%zu rules): "
              "%.1f us (means of %d); ApplyLandlockRuleset in the child: %.1f us\n",
              microseconds(derived - start), rules.paths.size(), microseconds(built - derived),
              kRounds, applied);
}

}  // namespace
}  // namespace toolvfs
