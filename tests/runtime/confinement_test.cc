// What a tool's own process may read directly is decided by the user's
// config, never by the model or the tool: a file named by a rendered
// argument (stdio) or by a process.run child's arguments is not granted to
// the sandbox just because it is named (src/runtime/confined_launch.cc).
// Real tools under the real sandbox (SandboxMode::kRequire).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "project/fs_store.h"
#include "project/test_util.h"
#include "runtime/confined_launch.h"
#include "runtime/stdio_runtime.h"
#include "runtime/vfs_runtime.h"
#include "sandbox/read_fd.h"

namespace toolvfs {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Reads the file named by its first argument and prints a stdio outcome:
// success with the content, or an error with the OS's reason.
constexpr const char* kReadFirstArgument =
    "import json, sys\n"
    "try:\n"
    "    print(json.dumps({'type': 'success', 'content': open(sys.argv[1]).read()}))\n"
    "except OSError as error:\n"
    "    print(json.dumps({'type': 'error', 'message': error.strerror}))\n";

class ConfinementTest : public ::testing::Test {
 protected:
  void SetUp() override {
    WriteRealFile(dir_.Join("src/a.txt"), "source text");
    WriteRealFile(dir_.Join("other/b.txt"), "not for this tool");
    Result<std::unique_ptr<ProjectFiles>> store = OpenFsStore(dir_.path());
    ASSERT_TRUE(store.ok()) << store.status().message();
    store_ = std::move(store).value();
  }

  // A stdio tool that may read src/ only, running `python3 -c CODE ARGS`.
  static ToolConfig StdioReader(std::vector<std::string> args) {
    ToolConfig tool;
    tool.name = "reader";
    tool.runtime = RuntimeKind::kStdio;
    tool.command = CommandSpec{.program = TOOLVFS_TEST_PYTHON3, .args = {"-c", kReadFirstArgument}};
    for (std::string& arg : args) tool.command->args.push_back(std::move(arg));
    tool.has_sandbox_table = true;
    tool.sandbox.filesystem_allow = {"src"};
    return tool;
  }

  Outcome RunStdio(const ToolConfig& tool, const std::string& arguments) {
    StdioRuntime runtime(*store_, StdioRuntimeOptions{});
    CancelToken cancel;
    Result<Outcome> outcome =
        runtime.Execute(ToolCall{.name = tool.name, .arguments_json = arguments}, tool, cancel);
    EXPECT_TRUE(outcome.ok()) << outcome.status().message();
    return outcome.ok() ? *outcome : Outcome{};
  }

  static std::string Text(const Outcome& outcome) {
    std::string text;
    for (const ContentBlock& block : outcome.content) text += block.text;
    return text;
  }

  TempDir dir_;
  std::unique_ptr<ProjectFiles> store_;
};

TEST_F(ConfinementTest, AStdioToolReadsWhatItsPolicyAllows) {
  Outcome outcome = RunStdio(StdioReader({"{{ tool.arguments.path }}"}), R"({"path":"src/a.txt"})");
  EXPECT_FALSE(outcome.is_error) << (outcome.error ? outcome.error->message : "");
  EXPECT_EQ(Text(outcome), "source text");
}

TEST_F(ConfinementTest, ARenderedArgumentGrantsNothing) {
  Outcome outcome = RunStdio(StdioReader({"{{ tool.arguments.path }}"}), R"({"path":"other/b.txt"})");
  ASSERT_TRUE(outcome.is_error) << "the model's argument opened a file outside the policy: " << Text(outcome);
  ASSERT_TRUE(outcome.error);
  EXPECT_EQ(outcome.error->message, "Permission denied");
}

TEST_F(ConfinementTest, ARenderedArgumentOutsideTheProjectGrantsNothing) {
  TempDir elsewhere;
  WriteRealFile(elsewhere.Join("secret.txt"), "host file");
  Outcome outcome =
      RunStdio(StdioReader({"{{ tool.arguments.path }}"}), R"({"path":")" + elsewhere.Join("secret.txt") + R"("})");
  ASSERT_TRUE(outcome.is_error) << "the model's argument opened a host file: " << Text(outcome);
  EXPECT_EQ(outcome.error->message, "Permission denied");
}

TEST_F(ConfinementTest, AWordTheUserWroteInTheCommandStaysReadable) {
  // The configured command line is the user's: `python3 tool.py data.txt`
  // names files the tool needs, so they are readable as before.
  Outcome outcome = RunStdio(StdioReader({"other/b.txt"}), "{}");
  EXPECT_FALSE(outcome.is_error) << (outcome.error ? outcome.error->message : "");
  EXPECT_EQ(Text(outcome), "not for this tool");
}

// A stdio tool that tries to read each path of its arguments and to
// overwrite each `write` path, and reports per path "read" / "wrote" or the
// OS's reason.
ToolConfig ProbeTool() {
  ToolConfig tool;
  tool.name = "probe";
  tool.runtime = RuntimeKind::kStdio;
  const std::string code =
      "import json, sys\n"
      "arguments = json.loads(sys.argv[1])\n"
      "report = {}\n"
      "for path in arguments.get('read', []):\n"
      "    try: open(path).read(); report[path] = 'read'\n"
      "    except OSError as error: report[path] = error.strerror\n"
      "for path in arguments.get('write', []):\n"
      "    try: open(path, 'w').write('changed'); report['w:' + path] = 'wrote'\n"
      "    except OSError as error: report['w:' + path] = error.strerror\n"
      "print(json.dumps({'type': 'success', 'content': json.dumps(report, sort_keys=True)}))\n";
  tool.command = CommandSpec{.program = TOOLVFS_TEST_PYTHON3, .args = {"-c", code, "{{ tool.arguments | tojson }}"}};
  return tool;
}

TEST_F(ConfinementTest, SensitivePathsAreOutOfReachWithTheDefaultPolicy) {
  WriteRealFile(dir_.Join(".env"), "TOKEN=1");
  WriteRealFile(dir_.Join("src/deep/.env"), "TOKEN=2");
  WriteRealFile(dir_.Join(".toolvfs/audit.jsonl"), "{}");
  WriteRealFile(dir_.Join("toolvfs.toml"), "");
  ToolConfig tool = ProbeTool();  // no sandbox table: the project readable
  StdioRuntimeOptions options;
  options.confinement.config_project_path = "toolvfs.toml";
  StdioRuntime runtime(*store_, std::move(options));
  CancelToken cancel;
  Result<Outcome> outcome = runtime.Execute(
      ToolCall{.name = tool.name,
               .arguments_json = R"({"read":["src/a.txt","other/b.txt",".env","src/deep/.env",)"
                                 R"(".toolvfs/audit.jsonl","toolvfs.toml"]})"},
      tool, cancel);
  ASSERT_TRUE(outcome.ok()) << outcome.status().message();
  EXPECT_EQ(Text(*outcome),
            R"({".env": "Permission denied", ".toolvfs/audit.jsonl": "Permission denied", )"
            R"("other/b.txt": "read", "src/a.txt": "read", "src/deep/.env": "Permission denied", )"
            R"("toolvfs.toml": "Permission denied"})");
}

TEST_F(ConfinementTest, ADenyRuleInsideAWritablePrefixHoldsForTheProcess) {
  WriteRealFile(dir_.Join("src/secret/key.txt"), "k");
  WriteRealFile(dir_.Join("src/.env"), "TOKEN=1");
  ToolConfig tool = ProbeTool();
  tool.has_sandbox_table = true;
  tool.sandbox.filesystem_allow = {""};  // "." as the parser stores it
  tool.sandbox.filesystem_writable.all = true;
  tool.sandbox.filesystem_deny = {"src/secret"};
  Outcome outcome = RunStdio(tool, R"({"read":["src/secret/key.txt","src/a.txt"],)"
                                   R"("write":["src/secret/key.txt","src/.env","src/a.txt"]})");
  EXPECT_EQ(Text(outcome),
            R"({"src/a.txt": "read", "src/secret/key.txt": "Permission denied", )"
            // The existing .env is covered by a read-only, mode-000 entry in
            // the tool's mount namespace: truncating it answers EROFS.
            R"("w:src/.env": "Read-only file system", "w:src/a.txt": "wrote", )"
            R"("w:src/secret/key.txt": "Permission denied"})");
  EXPECT_EQ(ReadRealFile(dir_.Join("src/secret/key.txt")), "k");
}

TEST_F(ConfinementTest, AProcessRunChildGetsNothingForTheFilesItsArgumentsName) {
  // A vfs tool whose policy reads src/ and may run `cat` with any
  // arguments: the host allows the run, the sandbox still confines the
  // child to src/, whatever file its arguments name.
  ToolConfig tool;
  tool.name = "runner";
  tool.runtime = RuntimeKind::kVfs;
  const std::string code =
      "import json, sys\n"
      "sys.stdin.readline()\n"
      "def run(path, number):\n"
      "    request = {'jsonrpc': '2.0', 'id': number, 'method': 'process.run',\n"
      "               'params': {'program': 'cat', 'args': [path]}}\n"
      "    sys.stdout.write(json.dumps(request) + '\\n'); sys.stdout.flush()\n"
      "    answer = json.loads(sys.stdin.readline())\n"
      "    return answer.get('result') or answer.get('error')\n"
      "report = {'allowed': run('src/a.txt', 1), 'other': run('other/b.txt', 2)}\n"
      "sys.stdout.write(json.dumps({'jsonrpc': '2.0', 'method': 'result',\n"
      "                             'params': {'content': json.dumps(report)}}) + '\\n')\n";
  tool.command = CommandSpec{.program = TOOLVFS_TEST_PYTHON3, .args = {"-c", code}};
  tool.has_sandbox_table = true;
  tool.sandbox.filesystem_allow = {"src"};
  tool.sandbox.commands["cat"] = CommandRule{};

  VfsRuntime runtime(*store_, VfsRuntimeOptions{.working_directory = dir_.path()});
  CancelToken cancel;
  Result<Outcome> outcome = runtime.Execute(ToolCall{.name = tool.name}, tool, cancel);
  ASSERT_TRUE(outcome.ok()) << outcome.status().message();
  ASSERT_FALSE(outcome->is_error) << (outcome->error ? outcome->error->message : "") << outcome->stderr_tail;
  const std::string report = Text(*outcome);
  EXPECT_THAT(report, HasSubstr(R"("allowed": {"stdout": "source text")")) << report;
  EXPECT_THAT(report, HasSubstr("other/b.txt: Permission denied")) << report;
  EXPECT_THAT(report, Not(HasSubstr("not for this tool"))) << report;
}

// A bare program name is looked up once, on the PATH the launch uses: a
// spec without PATH of its own finds it on the launcher's PATH, as the
// launch itself would, and one found nowhere is said as such, the same
// with the sandbox and without.
TEST_F(ConfinementTest, AProgramIsFoundOnThePathTheLaunchUses) {
  const std::string bin = dir_.Join("launch-bin");
  WriteRealFile(bin + "/toolvfs-launch-path-probe", "#!/bin/sh\nexit 7\n");
  std::filesystem::permissions(bin + "/toolvfs-launch-path-probe", std::filesystem::perms::owner_all);
  const char* own = std::getenv("PATH");
  const std::string saved = own != nullptr ? own : "";
  ASSERT_EQ(::setenv("PATH", (bin + ":" + saved).c_str(), 1), 0);
  ToolConfig tool = StdioReader({});
  Result<ChildProcess> child = LaunchConfined(LaunchSpec{.program = "toolvfs-launch-path-probe"}, tool,
                                              ToolKind::kStdio, dir_.path(), ConfinementOptions{.sandbox = std::nullopt});
  Result<ChildProcess> missing = LaunchConfined(LaunchSpec{.program = "toolvfs-no-such-probe"}, tool, ToolKind::kStdio,
                                                dir_.path(), ConfinementOptions{.sandbox = std::nullopt});
  Result<ChildProcess> missing_sandboxed =
      LaunchConfined(LaunchSpec{.program = "toolvfs-no-such-probe"}, tool, ToolKind::kStdio, dir_.path(),
                     ConfinementOptions{.sandbox = SandboxMode::kRequire});
  // The sandbox's rules (a shebang's `env NAME`) search the child's PATH:
  // without one, the fixed tools PATH (empty here), never toolvfs's own.
  const std::string rules_path =
      ConfinementRequest(LaunchSpec{.program = "toolvfs-launch-path-probe"}, tool, ToolKind::kStdio, dir_.path())
          .access.path_env;
  ASSERT_EQ(::setenv("PATH", saved.c_str(), 1), 0);
  ASSERT_TRUE(child.ok()) << child.status().ToString();
  Result<ExitStatus> status = child->Wait();
  ASSERT_TRUE(status.ok());
  EXPECT_EQ(status->code, 7);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(),
              HasSubstr("program 'toolvfs-no-such-probe' was not found on toolvfs's own PATH (" + bin + ":"));
  ASSERT_FALSE(missing_sandboxed.ok());
  EXPECT_EQ(missing_sandboxed.status().message(), missing.status().message());
  EXPECT_EQ(rules_path, "");
  EXPECT_EQ(ConfinementRequest(LaunchSpec{.program = "x", .environment = {"PATH=/opt/x:/usr/bin"}}, tool,
                               ToolKind::kStdio, dir_.path())
                .access.path_env,
            "/opt/x:/usr/bin");
}

// A program given by bare name runs from the path it was found at, but
// sees the name it was given as its argv[0], as from a shell; with the
// sandbox and without.
TEST_F(ConfinementTest, AProgramGivenByNameSeesThatNameAsArgv0) {
  const std::string python_directory = std::filesystem::path(TOOLVFS_TEST_PYTHON3).parent_path().string();
  const std::string name = std::filesystem::path(TOOLVFS_TEST_PYTHON3).filename().string();
  for (std::optional<SandboxMode> sandbox : {std::optional<SandboxMode>(), std::optional(SandboxMode::kRequire)}) {
    SCOPED_TRACE(sandbox ? "sandboxed" : "unsandboxed");
    LaunchSpec spec{.program = name,
                    .args = {"-c", "import sys; print(sys.orig_argv[0])"},
                    .environment = {"PATH=" + python_directory}};
    Result<ChildProcess> child =
        LaunchConfined(spec, StdioReader({}), ToolKind::kStdio, dir_.path(), ConfinementOptions{.sandbox = sandbox});
    ASSERT_TRUE(child.ok()) << child.status().ToString();
    EXPECT_EQ(ReadFd(child->stdout_fd().get()), name + "\n");
    Result<ExitStatus> status = child->Wait();
    ASSERT_TRUE(status.ok());
    EXPECT_TRUE(status->success()) << ReadFd(child->stderr_fd().get());
  }
}

}  // namespace
}  // namespace toolvfs
