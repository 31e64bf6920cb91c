// process.run (SPEC.md §3.2, §3.3, §4.3), driven like the session loop
// drives it: a request line through MessageParser, the handler from
// FindMethod, the answer parsed back. The policy comes from toolvfs.toml
// text; the host environment is a map each test controls; the programs are
// real ones from a Debian system (sh, env, cat, sleep, find, head, base64).

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "config/config.h"
#include "host/methods.h"
#include "policy/inquirer.h"
#include "project/memory_store.h"
#include "project/test_util.h"
#include "protocol/base64.h"
#include "protocol/json_writer.h"
#include "protocol/jsonrpc.h"

namespace toolvfs {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// `text` as a JSON string literal.
std::string Json(std::string_view text) {
  rapidjson::StringBuffer buffer;
  AppendJsonString(buffer, text);
  return JsonText(buffer);
}

// A JSON array of strings.
std::string JsonArray(const std::vector<std::string>& items) {
  std::string text = "[";
  for (size_t i = 0; i < items.size(); ++i) text += (i > 0 ? "," : "") + Json(items[i]);
  return text + "]";
}

// A process.run result, parsed.
struct RunOutput {
  std::string stdout_text;
  std::string stderr_text;
  int64_t exit_code = -1;
  bool truncated = false;
  std::string stdout_encoding;
  std::string stderr_encoding;
  std::string signal;
};

// The answer of one call: the result, or the error code and message.
struct Answer {
  int code = 0;  // 0: a result
  std::string message;
  std::string result_json;
  std::string audit_target;  // what the gate recorded
  std::string audit_rule;

  RunOutput Output() const {
    RunOutput output;
    // The result object is parsed as the params of a request, for the
    // typed accessors.
    MessageParser parser;
    ParsedLine line = parser.Parse(R"({"jsonrpc":"2.0","id":1,"method":"r","params":)" + result_json + "}");
    if (!line.is_message()) {
      ADD_FAILURE() << "not a result object: " << result_json;
      return output;
    }
    const Params& params = line.message().params();
    output.stdout_text = std::string(params.String("stdout").value());
    output.stderr_text = std::string(params.String("stderr").value());
    Result<uint64_t> exit_code = params.Uint("exit_code");
    if (exit_code.ok()) output.exit_code = static_cast<int64_t>(*exit_code);
    output.truncated = params.OptionalBool("truncated").value().value_or(false);
    output.stdout_encoding = std::string(params.OptionalString("stdout_encoding").value().value_or(""));
    output.stderr_encoding = std::string(params.OptionalString("stderr_encoding").value().value_or(""));
    output.signal = std::string(params.OptionalString("signal").value().value_or(""));
    return output;
  }
};

class ProcessRunTest : public ::testing::Test {
 protected:
  // The tool's policy: `sandbox_lines` under [tools.t.sandbox].
  void Configure(std::string_view sandbox_lines) {
    std::string text = "[tools.t]\ncommand = \"t\"\n[tools.t.sandbox]\n" + std::string(sandbox_lines);
    Result<Config> config = ParseConfig(text, "toolvfs.toml");
    ASSERT_TRUE(config.ok()) << config.status().ToString();
    tool_ = config->tools.at("t");
  }

  // Calls process.run with `params_json`; the inquirer answers `answers`
  // in order, or denies without asking when there are none.
  Answer Call(std::string_view params_json, std::vector<InquiryAnswer> answers = {}) {
    MessageParser parser;
    ParsedLine request = parser.Parse(R"({"jsonrpc":"2.0","id":"r1","method":"process.run","params":)" +
                                      std::string(params_json) + "}");
    EXPECT_TRUE(request.is_message()) << params_json;
    if (!request.is_message()) return {};
    ToolPolicy policy = ToolPolicy::ForTool(tool_, std::nullopt);
    std::unique_ptr<Inquirer> inquirer =
        answers.empty() ? NewDenyingInquirer() : NewScriptedInquirer(std::move(answers), &asked_);
    AccessGate gate(policy, *inquirer);
    MethodContext context{*store_, gate};
    context.host_environment = &host_environment_;
    if (!working_directory_.empty()) {
      context.process_working_directory = [this]() -> Result<std::string> { return working_directory_; };
    }
    const MethodSpec* spec = FindMethod("process.run");
    EXPECT_NE(spec, nullptr);
    if (spec == nullptr) return {};
    RequestScope scope(request.message().id(), spec->name, /*may_block=*/true);
    WireMessage wire = spec->handler(request.message(), context, scope);
    std::string_view bytes = wire.bytes();
    EXPECT_TRUE(bytes.ends_with('\n') && bytes.find('\n') == bytes.size() - 1) << "not one line: " << bytes;
    ParsedLine response = parser.Parse(bytes.substr(0, bytes.size() - 1));
    EXPECT_TRUE(response.is_message()) << bytes;
    if (!response.is_message()) return {};
    Answer answer;
    const Message& message = response.message();
    if (message.is_error()) {
      answer.code = static_cast<int>(message.error_code());
      answer.message = std::string(message.error_message());
      EXPECT_EQ(scope.error_code(), answer.code);
    } else {
      answer.result_json = message.result_json();
    }
    answer.audit_target = scope.target();
    if (scope.decided()) answer.audit_rule = scope.rule();
    return answer;
  }

  // Runs `program args...` and expects a result.
  RunOutput Run(std::string_view program, const std::vector<std::string>& args,
                std::string_view extra_params = "") {
    Answer answer = Call(R"({"program":)" + Json(program) + R"(,"args":)" + JsonArray(args) +
                         std::string(extra_params) + "}");
    EXPECT_EQ(answer.code, 0) << answer.message;
    return answer.code == 0 ? answer.Output() : RunOutput{};
  }

  // A script run by sh -c (the rule for sh must allow it).
  RunOutput Shell(std::string_view script, std::string_view extra_params = "") {
    return Run("sh", {"-c", std::string(script)}, extra_params);
  }

  TempDir project_;
  std::unique_ptr<ProjectFiles> store_ = NewMemoryStore();
  std::string working_directory_ = project_.path();
  std::map<std::string, std::string> host_environment_{{"PATH", "/usr/local/bin:/usr/bin:/bin"}};
  ToolConfig tool_;
  std::vector<Inquiry> asked_;
};

// ----- Policy ---------------------------------------------------------------------

TEST_F(ProcessRunTest, IsListedAsABlockingMethod) {
  const MethodSpec* spec = FindMethod("process.run");
  ASSERT_NE(spec, nullptr);
  EXPECT_TRUE(spec->may_block);
  EXPECT_EQ(ProcessMethods().size(), 1u);
}

TEST_F(ProcessRunTest, AnAllowedProgramRunsInTheProjectDirectory) {
  Configure(R"(commands.pwd = {})");
  std::filesystem::create_directory(project_.Join("sub"));
  RunOutput output = Run("pwd", {});
  EXPECT_EQ(output.stdout_text, project_.path() + "\n");
  EXPECT_EQ(output.stderr_text, "");
  EXPECT_EQ(output.exit_code, 0);
  EXPECT_FALSE(output.truncated);
  Answer answer = Call(R"({"program":"pwd"})");  // args may be left out
  EXPECT_EQ(answer.result_json, "{\"stdout\":" + Json(project_.path() + "\n") +
                                    R"(,"stderr":"","exit_code":0,"truncated":false})");
  EXPECT_EQ(answer.audit_target, "/usr/bin/pwd");
  EXPECT_EQ(answer.audit_rule, "commands.pwd");
}

TEST_F(ProcessRunTest, ReportsTheExitCodeAndStderr) {
  Configure(R"(commands.sh = {})");
  RunOutput output = Shell("echo out; echo err >&2; exit 3");
  EXPECT_EQ(output.stdout_text, "out\n");
  EXPECT_EQ(output.stderr_text, "err\n");
  EXPECT_EQ(output.exit_code, 3);
  EXPECT_EQ(output.signal, "");
}

TEST_F(ProcessRunTest, AChildKilledByASignalReportsIt) {
  Configure(R"(commands.sh = {})");
  RunOutput output = Shell("kill -SEGV $$");
  EXPECT_EQ(output.exit_code, 128 + 11);
  EXPECT_EQ(output.signal, "SIGSEGV");
}

TEST_F(ProcessRunTest, DeniedArgumentsNeverRun) {
  Configure(R"(
commands.find = { args = [[".", "-name", "**"]] }
commands.sh = { args = [["-c", "echo safe"]] }
)");
  // find -exec would run anything; the marker file shows nothing ran.
  Answer find = Call(R"({"program":"find","args":[".","-exec","touch","pwned",";"]})");
  EXPECT_EQ(find.code, kJsonRpcAccessDenied) << find.message;
  EXPECT_THAT(find.message, HasSubstr("was not covered by the policy of tool 't'"));
  EXPECT_EQ(find.audit_target, "/usr/bin/find . -exec touch pwned ';'");
  EXPECT_FALSE(std::filesystem::exists(project_.Join("pwned")));

  Answer shell = Call(R"({"program":"sh","args":["-c","echo safe; touch pwned"]})");
  EXPECT_EQ(shell.code, kJsonRpcAccessDenied) << shell.message;
  EXPECT_EQ(shell.audit_target, "/usr/bin/sh -c 'echo safe; touch pwned'");
  EXPECT_FALSE(std::filesystem::exists(project_.Join("pwned")));

  EXPECT_EQ(Run("sh", {"-c", "echo safe"}).stdout_text, "safe\n");
  EXPECT_EQ(Run("find", {".", "-name", "nothing-matches"}).exit_code, 0);
}

TEST_F(ProcessRunTest, FalseDeniesWithTheRuleInTheMessage) {
  Configure(R"(commands.rm = false)");
  std::filesystem::create_directory(project_.Join("keep"));
  Answer answer = Call(R"({"program":"rm","args":["-rf","keep"]})");
  EXPECT_EQ(answer.code, kJsonRpcAccessDenied);
  EXPECT_EQ(answer.message, "process.run of '/usr/bin/rm -rf keep' denied by commands.rm = false");
  EXPECT_EQ(answer.audit_rule, "commands.rm = false");
  EXPECT_TRUE(std::filesystem::exists(project_.Join("keep")));
  // The same program by its absolute path is the same rule.
  Answer absolute = Call(R"({"program":"/bin/rm","args":["-rf","keep"]})");
  EXPECT_EQ(absolute.code, kJsonRpcAccessDenied);
  EXPECT_THAT(absolute.message, HasSubstr("denied by commands.rm = false"));
  EXPECT_TRUE(std::filesystem::exists(project_.Join("keep")));
}

TEST_F(ProcessRunTest, AnUncoveredProgramIsDeniedWithoutInteraction) {
  Configure(R"(commands.ls = {})");
  Answer answer = Call(R"({"program":"touch","args":["made"]})");
  EXPECT_EQ(answer.code, kJsonRpcAccessDenied);
  EXPECT_THAT(answer.message,
              HasSubstr("process.run of '/usr/bin/touch made' was not covered by the policy of tool 't'"));
  EXPECT_FALSE(std::filesystem::exists(project_.Join("made")));
}

TEST_F(ProcessRunTest, TheUserIsShownTheExactCommandLineAndMayAllowIt) {
  Configure("");
  Answer answer = Call(R"({"program":"touch","args":["made it","x'y"]})", {InquiryAnswer::kAllowOnce});
  EXPECT_EQ(answer.code, 0) << answer.message;
  ASSERT_EQ(asked_.size(), 1u);
  EXPECT_EQ(asked_[0].operation, "run");
  EXPECT_EQ(asked_[0].target, R"(/usr/bin/touch 'made it' 'x'\''y')");
  EXPECT_EQ(asked_[0].hint, R"(add a commands.touch rule)");
  EXPECT_TRUE(std::filesystem::exists(project_.Join("made it")));
  EXPECT_TRUE(std::filesystem::exists(project_.Join("x'y")));

  Answer denied = Call(R"({"program":"touch","args":["other"]})", {InquiryAnswer::kDenyOnce});
  EXPECT_EQ(denied.code, kJsonRpcAccessDenied);
  EXPECT_FALSE(std::filesystem::exists(project_.Join("other")));
}

// ----- The program ------------------------------------------------------------------

TEST_F(ProcessRunTest, ABareNameIsResolvedOnTheHostsPath) {
  Configure(R"(commands.echo = {})");
  Answer answer = Call(R"({"program":"echo","args":["hi"]})");
  EXPECT_EQ(answer.audit_target, "/usr/bin/echo hi");

  TempDir bin;
  std::filesystem::copy_file("/usr/bin/echo", bin.Join("echo"));
  host_environment_["PATH"] = "relative/dir::" + bin.path() + ":/usr/bin";
  EXPECT_EQ(Call(R"({"program":"echo","args":["hi"]})").audit_target, bin.Join("echo") + " hi");

  host_environment_["PATH"] = "/nonexistent";
  Answer missing = Call(R"({"program":"echo","args":["hi"]})");
  EXPECT_EQ(missing.code, kJsonRpcNotFound);
  EXPECT_EQ(missing.message, "Program 'echo' was not found on the host's PATH '/nonexistent'");

  host_environment_.erase("PATH");  // the fixed PATH then
  EXPECT_EQ(Call(R"({"program":"echo","args":["hi"]})").audit_target, "/usr/bin/echo hi");
}

TEST_F(ProcessRunTest, AnAbsolutePathIsItsBaseNameOnlyIfPathFindsTheSameFile) {
  Configure(R"(commands.echo = {})");
  Answer same = Call(R"({"program":"/bin/echo","args":["hi"]})");  // /bin -> /usr/bin on Debian 12
  EXPECT_EQ(same.code, 0) << same.message;
  EXPECT_EQ(same.Output().stdout_text, "hi\n");
  EXPECT_EQ(same.audit_rule, "commands.echo");

  TempDir bin;
  std::filesystem::copy_file("/usr/bin/echo", bin.Join("echo"));
  Answer copy = Call(R"({"program":)" + Json(bin.Join("echo")) + R"(,"args":["hi"]})");
  EXPECT_EQ(copy.code, kJsonRpcAccessDenied);
  EXPECT_THAT(copy.message, HasSubstr("was not covered"));

  Answer relative = Call(R"({"program":"./echo"})");
  EXPECT_EQ(relative.code, kJsonRpcInvalidParams);
  EXPECT_EQ(
      relative.message,
      "Invalid params: 'program' must be a bare name (looked up on PATH) or an absolute path, got './echo'");

  Answer missing = Call(R"({"program":"/usr/bin/no-such-program"})");
  EXPECT_EQ(missing.code, kJsonRpcNotFound);
  EXPECT_EQ(missing.message, "Program '/usr/bin/no-such-program' is not an executable file");
  Answer directory = Call(R"({"program":"/usr/bin"})");
  EXPECT_EQ(directory.code, kJsonRpcNotFound);
}

TEST_F(ProcessRunTest, ParamsAreChecked) {
  Configure(R"(commands.echo = {})");
  EXPECT_EQ(Call(R"({"program":"echo","cwd":"/"})").code, kJsonRpcInvalidParams);
  EXPECT_EQ(Call(R"({"args":["x"]})").code, kJsonRpcInvalidParams);
  EXPECT_EQ(Call(R"({"program":""})").message, "Invalid params: 'program' is empty");
  EXPECT_EQ(Call(R"({"program":"echo","args":["a\u0000b"]})").message,
            "Invalid params: 'args[0]' contains a NUL character, which no program can receive");
  EXPECT_EQ(Call(R"({"program":"echo","timeout_s":0})").message,
            "Invalid params: 'timeout_s' must be from 1 to 86400, got 0");
  EXPECT_EQ(Call(R"({"program":"echo","args":"x"})").code, kJsonRpcInvalidParams);
}

TEST_F(ProcessRunTest, WithoutAProjectDirectoryNothingRuns) {
  Configure(R"(commands.echo = {})");
  working_directory_.clear();
  Answer answer = Call(R"({"program":"echo"})");
  EXPECT_EQ(answer.code, kJsonRpcNotFound);  // NoProject
  EXPECT_EQ(answer.message, "process.run needs a project directory to run in, and this host has none");
}

// ----- The environment ---------------------------------------------------------------

TEST_F(ProcessRunTest, OnlyVariablesInBothTheRequestAndTheRuleAreForwarded) {
  Configure(R"(commands.env = { envs = ["FOO_TOKEN", "LANG_EXTRA", "UNSET_ONE", "LD_PRELOAD"] })");
  host_environment_["FOO_TOKEN"] = "foo-token-value";
  host_environment_["LANG_EXTRA"] = "xx";  // shorter than 4: forwarded, not redacted
  host_environment_["OTHER_SECRET"] = "other-secret-value";
  host_environment_["LD_PRELOAD"] = "/tmp/evil.so";
  RunOutput output =
      Run("env", {}, R"(,"envs":["FOO_TOKEN","LANG_EXTRA","UNSET_ONE","LD_PRELOAD","LD_LIBRARY_PATH"])");
  std::vector<std::string> lines;
  std::string home;
  std::string tmpdir;
  for (size_t start = 0; start < output.stdout_text.size();) {
    size_t end = output.stdout_text.find('\n', start);
    std::string line = output.stdout_text.substr(start, end - start);
    start = end + 1;
    if (line.starts_with("HOME=")) home = line.substr(5);
    if (line.starts_with("TMPDIR=")) tmpdir = line.substr(7);
    if (!line.starts_with("HOME=") && !line.starts_with("TMPDIR=")) lines.push_back(line);
  }
  std::sort(lines.begin(), lines.end());
  // The forwarded value is a secret: redacted in the output too.
  EXPECT_EQ(lines, (std::vector<std::string>{"FOO_TOKEN=[REDACTED]", "LANG=C.UTF-8", "LANG_EXTRA=xx",
                                             "PATH=/usr/local/bin:/usr/bin:/bin"}));
  // HOME and TMPDIR: one private directory, removed after the run.
  EXPECT_EQ(home, tmpdir);
  EXPECT_THAT(home, HasSubstr("toolvfs-tool-"));
  EXPECT_FALSE(home.empty() || std::filesystem::exists(home)) << home;
}

TEST_F(ProcessRunTest, AVariableTheRuleDoesNotListIsDeniedNamingIt) {
  Configure(R"(commands.env = { envs = ["FOO_TOKEN"] })");
  host_environment_["OTHER_SECRET"] = "other-secret-value";
  Answer answer = Call(R"({"program":"env","envs":["FOO_TOKEN","OTHER_SECRET"]})");
  EXPECT_EQ(answer.code, kJsonRpcAccessDenied);
  EXPECT_EQ(
      answer.message,
      R"(process.run of '/usr/bin/env' denied by commands.env.envs; "OTHER_SECRET" is not listed; add it to commands.env.envs to forward it)");
  EXPECT_EQ(answer.audit_rule, "commands.env.envs");

  // Never asked: the user cannot hand a secret over at a prompt.
  Configure("");
  Answer uncovered = Call(R"({"program":"env","envs":["OTHER_SECRET"]})", {InquiryAnswer::kAllowOnce});
  EXPECT_EQ(uncovered.code, kJsonRpcAccessDenied);
  EXPECT_TRUE(asked_.empty());
}

TEST_F(ProcessRunTest, ARuleListingHomeForwardsTheHostsHome) {
  Configure(R"(commands.sh = { envs = ["HOME"] })");
  host_environment_["HOME"] = "/home/someone";
  RunOutput output = Shell("echo \"$HOME\" \"$TMPDIR\"", R"(,"envs":["HOME"])");
  EXPECT_THAT(output.stdout_text, HasSubstr("[REDACTED] /"));
  EXPECT_THAT(output.stdout_text, HasSubstr("toolvfs-tool-"));
}

// ----- Secrets in the output ------------------------------------------------------------

TEST_F(ProcessRunTest, ForwardedValuesAreRedactedPlainBase64AndPercentEncoded) {
  Configure(R"(commands.sh = { envs = ["API_TOKEN"] })");
  host_environment_["API_TOKEN"] = "s3cr3t-t0ken-value";
  RunOutput output = Shell(R"(
printf 'plain %s\n' "$API_TOKEN"
printf 'user:%s' "$API_TOKEN" | base64
printf 'xuser:%s' "$API_TOKEN" | base64
printf 'xyuser:%s' "$API_TOKEN" | base64
printf '%s' "$API_TOKEN" | base64 | tr '+/' '-_'
printf '%s' "$API_TOKEN" | od -An -tx1 | tr -d ' \n' | sed 's/../%&/g'; echo
printf '%s' "$API_TOKEN" | od -An -tx1 | tr -d ' \n' | sed 's/../%&/g' | tr a-f A-F; echo
printf 'err %s\n' "$API_TOKEN" >&2
)",
                           R"(,"envs":["API_TOKEN"])");
  EXPECT_EQ(output.stdout_text,
            "plain [REDACTED]\n"
            "dXNlcjp[REDACTED]U=\n"
            "eHVzZXI6[REDACTED]\n"
            "eHl1c2VyOn[REDACTED]Q==\n"
            "[REDACTED]\n"
            "[REDACTED]\n"
            "[REDACTED]\n");
  EXPECT_EQ(output.stderr_text, "err [REDACTED]\n");
}

TEST_F(ProcessRunTest, ValuesNotForwardedAreNotRedacted) {
  Configure(R"(commands.sh = {})");
  host_environment_["API_TOKEN"] = "s3cr3t-t0ken-value";
  EXPECT_EQ(Shell("echo s3cr3t-t0ken-value").stdout_text, "s3cr3t-t0ken-value\n");
}

// ----- Running ------------------------------------------------------------------------------

TEST_F(ProcessRunTest, StdinIsWrittenAndClosed) {
  Configure(R"(commands.cat = {}
commands.wc = {}
commands.true = {})");
  EXPECT_EQ(Run("cat", {}, R"(,"stdin":"hello\nworld\n")").stdout_text, "hello\nworld\n");
  EXPECT_EQ(Run("cat", {}).stdout_text, "");  // no stdin: end of file at once
  std::string big(3 << 20, 'x');              // more than any pipe buffer
  EXPECT_EQ(Run("wc", {"-c"}, R"(,"stdin":")" + big + "\"").stdout_text, std::to_string(big.size()) + "\n");
  // A child that does not read its stdin: EPIPE, not a dead host.
  EXPECT_EQ(Run("true", {}, R"(,"stdin":")" + big + "\"").exit_code, 0);
}

TEST_F(ProcessRunTest, ATimeoutKillsTheProcessGroup) {
  Configure(R"(commands.sh = {})");
  auto start = std::chrono::steady_clock::now();
  Answer answer = Call(R"({"program":"sh","args":["-c","sleep 30 & sleep 30"],"timeout_s":1})");
  auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(answer.code, kJsonRpcTimeout);
  EXPECT_EQ(answer.message,
            "process.run of '/usr/bin/sh -c 'sleep 30 & sleep 30'' timed out after 1 s and was killed");
  EXPECT_LT(elapsed, std::chrono::seconds(5));
}

TEST_F(ProcessRunTest, BackgroundProcessesDoNotHoldTheAnswer) {
  Configure(R"(commands.sh = {})");
  auto start = std::chrono::steady_clock::now();
  RunOutput output = Shell("sleep 30 & echo $! > background.pid; echo started");
  EXPECT_EQ(output.stdout_text, "started\n");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  // And they are gone (once whoever inherited them has reaped them).
  std::ifstream pid_file(project_.Join("background.pid"));
  pid_t background = 0;
  ASSERT_TRUE(pid_file >> background);
  bool gone = false;
  for (int attempt = 0; attempt < 200 && !gone; ++attempt) {
    gone = ::kill(background, 0) != 0 && errno == ESRCH;
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(gone) << "process " << background << " outlived the request";
}

TEST_F(ProcessRunTest, OutputIsCutAtOneMebibytePerStream) {
  Configure(R"(commands.sh = {})");
  // Both streams at once, far past the pipe buffers: neither may stall.
  RunOutput output =
      Shell("head -c 3000000 /dev/zero | tr '\\0' a & head -c 2000000 /dev/zero | tr '\\0' b >&2; wait");
  EXPECT_TRUE(output.truncated);
  EXPECT_EQ(output.stdout_text, std::string(1 << 20, 'a'));
  EXPECT_EQ(output.stderr_text, std::string(1 << 20, 'b'));
  EXPECT_EQ(output.exit_code, 0);

  RunOutput exact = Shell("head -c 1048576 /dev/zero | tr '\\0' a");
  EXPECT_FALSE(exact.truncated);
  EXPECT_EQ(exact.stdout_text.size(), 1u << 20);
}

TEST_F(ProcessRunTest, ACutThroughACharacterStaysText) {
  Configure(R"(commands.sh = {})");
  // 'a' then 3-byte characters: the cut at 1 MiB falls inside one.
  RunOutput output = Shell("printf a; yes '€' | tr -d '\\n' | head -c 2000000");
  EXPECT_TRUE(output.truncated);
  EXPECT_EQ(output.stdout_encoding, "");
  EXPECT_EQ(output.stdout_text.size(), 1 + ((1u << 20) - 1) / 3 * 3);
}

TEST_F(ProcessRunTest, ASecretCutByTheLimitShowsNoPrefix) {
  Configure(R"(commands.sh = { envs = ["API_TOKEN"] })");
  host_environment_["API_TOKEN"] = "s3cr3t-t0ken-value";
  RunOutput output =
      Shell("head -c 1048570 /dev/zero | tr '\\0' a; printf '%s' \"$API_TOKEN\"; head -c 100 /dev/zero",
            R"(,"envs":["API_TOKEN"])");
  EXPECT_TRUE(output.truncated);
  EXPECT_EQ(output.stdout_text, std::string(1048570, 'a') + "[REDACTED]");
}

TEST_F(ProcessRunTest, BinaryOutputComesAsBase64) {
  Configure(R"(commands.printf = {})");
  RunOutput output = Run("printf", {"\\377\\376"});
  EXPECT_EQ(output.stdout_encoding, "base64");
  EXPECT_EQ(output.stdout_text, Base64Encode("\xFF\xFE"));
  EXPECT_EQ(output.stderr_encoding, "");
}

}  // namespace
}  // namespace toolvfs
