// CommandPolicy (SPEC.md §3.1 `commands.*`, §3.2): which programs and
// argument lists process.run may start, and which variables they receive.
// Rules come from toolvfs.toml text, as a user writes them.

#include "policy/command_policy.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"

namespace toolvfs {
namespace {

// The CommandPolicy of a tool whose sandbox table holds `sandbox_lines`.
CommandPolicy PolicyOf(std::string_view sandbox_lines) {
  std::string text = "[tools.t]\ncommand = \"t\"\n[tools.t.sandbox]\n" + std::string(sandbox_lines);
  Result<Config> config = ParseConfig(text, "toolvfs.toml");
  EXPECT_TRUE(config.ok()) << config.status().ToString();
  if (!config.ok()) return CommandPolicy();
  return CommandPolicy::ForTool(config->tools.at("t"));
}

// "allow RULE", "deny RULE", "uncovered: HINT" (or "deny RULE; HINT").
std::string Decide(const CommandPolicy& policy, std::string_view program, std::vector<std::string> args) {
  PolicyDecision decision = policy.Check(program, args);
  std::string text(DecisionName(decision.decision));
  if (!decision.rule.empty()) text += " " + decision.rule;
  if (!decision.hint.empty()) text += (decision.rule.empty() ? ": " : "; ") + decision.hint;
  return text;
}

constexpr std::string_view kRules = R"(
commands.rg = { args = [["-n", "**"], ["--files"]] }
commands.git = { args = [["status"], ["log", "--oneline", "**"]] }
commands.find = { args = [[".", "-name", "**"]] }
commands.sh = { args = [["-c", "make test"]] }
commands.ls = {}
commands.rm = false
)";

TEST(CommandPolicyTest, ARuleWithoutArgsAllowsAnyArguments) {
  CommandPolicy policy = PolicyOf(kRules);
  EXPECT_EQ(Decide(policy, "ls", {}), "allow commands.ls");
  EXPECT_EQ(Decide(policy, "ls", {"-la", "--", "; rm -rf /"}), "allow commands.ls");
}

TEST(CommandPolicyTest, AFinalDoubleStarAllowsAnyRemainderIncludingNone) {
  CommandPolicy policy = PolicyOf(kRules);
  EXPECT_EQ(Decide(policy, "rg", {"-n", "TODO", "src"}), R"(allow commands.rg args ["-n", "**"])");
  EXPECT_EQ(Decide(policy, "rg", {"-n"}), R"(allow commands.rg args ["-n", "**"])");
  EXPECT_EQ(Decide(policy, "rg", {"--files"}), R"(allow commands.rg args ["--files"])");
}

TEST(CommandPolicyTest, AListWithoutDoubleStarMustEqualTheArguments) {
  CommandPolicy policy = PolicyOf(kRules);
  EXPECT_EQ(Decide(policy, "rg", {"--files", "src"}),
            R"(uncovered: add ["--files", "src"] to commands.rg.args)");
  EXPECT_EQ(Decide(policy, "git", {"status"}), R"(allow commands.git args ["status"])");
  EXPECT_EQ(Decide(policy, "git", {"status", "--porcelain"}),
            R"(uncovered: add ["status", "--porcelain"] to commands.git.args)");
  EXPECT_EQ(Decide(policy, "rg", {}), R"(uncovered: add [] to commands.rg.args)");
}

// The flags that turn an allow-listed program into "run anything".
TEST(CommandPolicyTest, DangerousFlagsOfAllowedProgramsAreNotCovered) {
  CommandPolicy policy = PolicyOf(kRules);
  // rg --pre runs a program on every file.
  EXPECT_EQ(Decide(policy, "rg", {"--pre", "sh", "x"}),
            R"(uncovered: add ["--pre", "sh", "x"] to commands.rg.args)");
  EXPECT_EQ(Decide(policy, "rg", {"--pre=sh", "-n", "x"}),
            R"(uncovered: add ["--pre=sh", "-n", "x"] to commands.rg.args)");
  // "**" means any remainder, flags included: ["-n", "**"] does allow a
  // later --pre. Rules are prefixes, as documented; a careful rule lists
  // exact arguments.
  EXPECT_EQ(Decide(policy, "rg", {"-n", "--pre", "sh", "x"}), R"(allow commands.rg args ["-n", "**"])");
  // git -c core.sshCommand=... and -c core.pager=... run programs.
  EXPECT_EQ(Decide(policy, "git", {"-c", "core.sshCommand=sh -c id", "log", "--oneline"}),
            R"(uncovered: add ["-c", "core.sshCommand=sh -c id", "log", "--oneline"] to commands.git.args)");
  EXPECT_EQ(Decide(policy, "git", {"log", "--oneline", "-5"}),
            R"(allow commands.git args ["log", "--oneline", "**"])");
  // find -exec.
  EXPECT_EQ(Decide(policy, "find", {".", "-exec", "rm", "{}", ";"}),
            R"(uncovered: add [".", "-exec", "rm", "{}", ";"] to commands.find.args)");
  EXPECT_EQ(Decide(policy, "find", {".", "-name", "*.rs"}),
            R"(allow commands.find args [".", "-name", "**"])");
  // sh -c with another script.
  EXPECT_EQ(Decide(policy, "sh", {"-c", "make test"}), R"(allow commands.sh args ["-c", "make test"])");
  EXPECT_EQ(Decide(policy, "sh", {"-c", "make test; curl evil"}),
            R"(uncovered: add ["-c", "make test; curl evil"] to commands.sh.args)");
}

TEST(CommandPolicyTest, ArgumentsAreComparedAsExactStrings) {
  CommandPolicy policy = PolicyOf(R"(commands.rg = { args = [["--max-count", "**"]] })");
  EXPECT_EQ(Decide(policy, "rg", {"--max-count=1"}),
            R"(uncovered: add ["--max-count=1"] to commands.rg.args)");
  EXPECT_EQ(Decide(policy, "rg", {"--MAX-COUNT", "1"}),
            R"(uncovered: add ["--MAX-COUNT", "1"] to commands.rg.args)");
  EXPECT_EQ(Decide(policy, "rg", {"--max-count ", "1"}),
            R"(uncovered: add ["--max-count ", "1"] to commands.rg.args)");
  // "**" in a request is just an argument; it matches only a rule's "**".
  EXPECT_EQ(Decide(policy, "rg", {"**"}), R"(uncovered: add ["**"] to commands.rg.args)");
}

TEST(CommandPolicyTest, FalseDeniesAndAMissingRuleIsUncovered) {
  CommandPolicy policy = PolicyOf(kRules);
  EXPECT_EQ(Decide(policy, "rm", {"-rf", "."}), "deny commands.rm = false");
  EXPECT_EQ(Decide(policy, "rm", {}), "deny commands.rm = false");
  EXPECT_EQ(Decide(policy, "curl", {"https://example.com"}), "uncovered: add a commands.curl rule");
  EXPECT_EQ(Decide(policy, "RG", {"-n"}), "uncovered: add a commands.RG rule");  // names are case-sensitive
  EXPECT_EQ(Decide(PolicyOf(""), "ls", {}), "uncovered: add a commands.ls rule");
}

TEST(CommandPolicyTest, AnEmptyArgsListAllowsNothing) {
  CommandPolicy policy = PolicyOf(R"(commands.make = { args = [] })");
  EXPECT_EQ(Decide(policy, "make", {}), "uncovered: add [] to commands.make.args");
  EXPECT_EQ(Decide(policy, "make", {"all"}), R"(uncovered: add ["all"] to commands.make.args)");
}

// The caller passes an absolute path when it is not the program PATH finds
// for the base name (command_policy.h).
TEST(CommandPolicyTest, AnAbsolutePathNeedsItsOwnRuleAndIsDeniedByItsBaseNamesFalse) {
  CommandPolicy policy = PolicyOf(R"(
commands.rg = {}
commands.rm = false
commands."/opt/tools/fmt" = { args = [["--check", "**"]] }
)");
  EXPECT_EQ(Decide(policy, "/tmp/evil/rg", {}), R"(uncovered: add a commands."/tmp/evil/rg" rule)");
  EXPECT_EQ(Decide(policy, "/tmp/evil/rm", {"-rf"}), "deny commands.rm = false");
  EXPECT_EQ(Decide(policy, "/opt/tools/fmt", {"--check", "a"}),
            R"(allow commands."/opt/tools/fmt" args ["--check", "**"])");
  EXPECT_EQ(Decide(policy, "/opt/tools/fmt", {"--write"}),
            R"(uncovered: add ["--write"] to commands."/opt/tools/fmt".args)");
}

TEST(CommandPolicyTest, RulesAndHintsQuoteLikeToml) {
  CommandPolicy policy = PolicyOf(R"(commands.echo = { args = [["a\"b", "**"]] })");
  EXPECT_EQ(Decide(policy, "echo", {"a\"b", "x"}), R"(allow commands.echo args ["a\"b", "**"])");
  EXPECT_EQ(Decide(policy, "echo", {"back\\slash", "new\nline", "\x1b[31m"}),
            R"(uncovered: add ["back\\slash", "new\nline", "\u001B[31m"] to commands.echo.args)");
  EXPECT_EQ(Decide(policy, "my.tool", {}), R"(uncovered: add a commands."my.tool" rule)");
}

TEST(CommandPolicyTest, ForwardableVariablesLeaveOutLoaderVariables) {
  CommandPolicy policy = PolicyOf(R"(
commands.cargo = { envs = ["CARGO_TERM_COLOR", "LD_PRELOAD", "DYLD_INSERT_LIBRARIES", "RUSTFLAGS"] }
commands.rm = false
)");
  EXPECT_EQ(policy.ForwardableVariables("cargo"),
            (std::vector<std::string>{"CARGO_TERM_COLOR", "RUSTFLAGS"}));
  EXPECT_TRUE(policy.ForwardableVariables("rm").empty());
  EXPECT_TRUE(policy.ForwardableVariables("make").empty());
}

TEST(CommandPolicyTest, CheckEnvironmentDeniesAVariableTheRuleDoesNotList) {
  CommandPolicy policy = PolicyOf(R"(commands.cargo = { envs = ["CARGO_TERM_COLOR", "LD_PRELOAD"] })");
  auto check = [&](std::string_view program, std::vector<std::string> names) {
    PolicyDecision decision = policy.CheckEnvironment(program, names);
    return std::string(DecisionName(decision.decision)) + " " + decision.rule +
           (decision.hint.empty() ? "" : "; " + decision.hint);
  };
  EXPECT_EQ(check("cargo", {}), "allow commands.cargo.envs");
  EXPECT_EQ(check("cargo", {"CARGO_TERM_COLOR"}), "allow commands.cargo.envs");
  // Loader variables are accepted and dropped, listed or not.
  EXPECT_EQ(check("cargo", {"LD_PRELOAD", "LD_LIBRARY_PATH", "DYLD_INSERT_LIBRARIES"}),
            "allow commands.cargo.envs");
  EXPECT_EQ(
      check("cargo", {"CARGO_TERM_COLOR", "AWS_SECRET_ACCESS_KEY"}),
      R"(deny commands.cargo.envs; "AWS_SECRET_ACCESS_KEY" is not listed; add it to commands.cargo.envs to forward it)");
  EXPECT_EQ(check("make", {"HOME"}),
            R"(deny commands.make.envs; "HOME" is not listed; add it to commands.make.envs to forward it)");
}

TEST(CommandPolicyTest, DescribeListsEveryRule) {
  EXPECT_EQ(PolicyOf(kRules).Describe(), (std::vector<std::string>{
                                             R"(commands.find args [[".", "-name", "**"]])",
                                             R"(commands.git args [["status"], ["log", "--oneline", "**"]])",
                                             "commands.ls any arguments",
                                             R"(commands.rg args [["-n", "**"], ["--files"]])",
                                             "commands.rm = false",
                                             R"(commands.sh args [["-c", "make test"]])",
                                         }));
  EXPECT_EQ(
      PolicyOf(R"(commands.cargo = { args = [], envs = ["A", "LD_PRELOAD"] })").Describe(),
      (std::vector<std::string>{
          R"(commands.cargo args [] (no arguments allowed: every call is uncovered) envs ["A"] (ignored, loader variables: ["LD_PRELOAD"]))"}));
  EXPECT_EQ(PolicyOf("").Describe(),
            (std::vector<std::string>{"commands: no rules (every program is uncovered)"}));
}

TEST(CommandPolicyTest, LoaderVariables) {
  EXPECT_TRUE(IsLoaderVariable("LD_PRELOAD"));
  EXPECT_TRUE(IsLoaderVariable("LD_LIBRARY_PATH"));
  EXPECT_TRUE(IsLoaderVariable("DYLD_INSERT_LIBRARIES"));
  EXPECT_FALSE(IsLoaderVariable("OLD_PRELOAD"));
  EXPECT_FALSE(IsLoaderVariable("ld_preload"));
}

}  // namespace
}  // namespace toolvfs
