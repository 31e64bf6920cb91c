// Stdio tools run end to end through StdioRuntime under the real sandbox
// (SandboxMode::kRequire, the default).
#include "runtime/stdio_runtime.h"

#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <string_view>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "../cli/subprocess.h"
#include "project/fs_store.h"
#include "project/test_util.h"

namespace toolvfs {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;

class StdioRuntimeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Write("src/a.txt", "source text");
    Write("other/b.txt", "secret");
    fs::create_directories(root_ + "/out");
    Result<std::unique_ptr<ProjectFiles>> store = OpenFsStore(root_);
    ASSERT_TRUE(store.ok()) << store.status().message();
    store_ = std::move(store).value();
  }
  void Write(const std::string& path, const std::string& content) { WriteRealFile(dir_.Join(path), content); }

  // A tool that runs `python3 -c CODE ARGS...`.
  static ToolConfig PythonTool(const std::string& code, std::vector<std::string> args = {}) {
    ToolConfig tool;
    tool.name = "py";
    tool.runtime = RuntimeKind::kStdio;
    tool.command = CommandSpec{.program = TOOLVFS_TEST_PYTHON3, .args = {"-c", code}};
    for (std::string& arg : args) tool.command->args.push_back(std::move(arg));
    return tool;
  }

  Result<Outcome> Run(const ToolConfig& tool, const std::string& arguments = "{}",
                      const std::string& answers = "{}") {
    StdioRuntime runtime(*store_, StdioRuntimeOptions{});
    CancelToken cancel;
    return runtime.Execute(ToolCall{.name = tool.name, .arguments_json = arguments, .answers_json = answers},
                           tool, cancel);
  }

  static std::string Text(const Outcome& outcome) {
    std::string text;
    for (const ContentBlock& block : outcome.content) text += block.text;
    return text;
  }

  TempDir dir_;
  const std::string root_ = dir_.path();
  std::unique_ptr<ProjectFiles> store_;
};

TEST_F(StdioRuntimeTest, SuccessWithRenderedArgumentsInTheProjectDirectory) {
  ToolConfig tool = PythonTool(
      "import json, os, sys\n"
      "print(json.dumps({'type': 'success', 'content': json.dumps({'argv': sys.argv[1:], 'cwd': os.getcwd()})}))",
      {"{{ tool.arguments.name }}", "{{ tool.arguments | tojson }}", "{{ context.root }}"});
  tool.parameters = ConfigValue::Object{{"name", ConfigValue::Object{{"type", "string"}, {"required", true}}},
                                        {"n", ConfigValue::Object{{"type", "integer"}, {"default", 2}}}};
  Result<Outcome> outcome = Run(tool, R"({"name":"two words"})");
  ASSERT_TRUE(outcome.ok()) << outcome.status().message();
  EXPECT_FALSE(outcome->is_error) << (outcome->error ? outcome->error->message : "");
  EXPECT_EQ(Text(*outcome), "{\"argv\": [\"two words\", \"{\\\"n\\\":2,\\\"name\\\":\\\"two words\\\"}\", \"" + root_ +
                                "\"], \"cwd\": \"" + root_ + "\"}");
}

TEST_F(StdioRuntimeTest, InvalidArgumentsNeverStartTheTool) {
  ToolConfig tool = PythonTool("open('out/started', 'w')");
  tool.parameters = ConfigValue::Object{{"path", ConfigValue::Object{{"required", true}}}};
  Result<Outcome> outcome = Run(tool, "{}");
  ASSERT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.status().message(), "Tool 'py': missing required argument 'path'");
  EXPECT_FALSE(fs::exists(root_ + "/out/started"));
}

TEST_F(StdioRuntimeTest, AnswersThatAreNotOneObjectNeverStartTheTool) {
  ToolConfig tool = PythonTool("open('out/started', 'w')");
  for (const char* malformed : {"[1]", "{\"go\":", "null", "\"yes\""}) {
    Result<Outcome> outcome = Run(tool, "{}", malformed);
    ASSERT_FALSE(outcome.ok()) << malformed;
    EXPECT_EQ(outcome.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(outcome.status().message(), ::testing::StartsWith("Tool 'py': the answers are ")) << malformed;
  }
  EXPECT_FALSE(fs::exists(root_ + "/out/started"));
}

TEST_F(StdioRuntimeTest, ErrorNeedsInputEnvelopeAndRaw) {
  Result<Outcome> error = Run(PythonTool(
      R"(print('{"type":"error","message":"bad","transient":true}'); raise SystemExit(1))"));
  ASSERT_TRUE(error.ok()) << error.status().message();
  EXPECT_TRUE(error->is_error);
  EXPECT_EQ(error->error->message, "bad");
  EXPECT_TRUE(error->error->transient);

  const std::string ask =
      "import json, sys\n"
      "answers = json.loads(sys.argv[1])\n"
      "if 'ok' in answers: print(json.dumps({'type': 'success', 'content': 'answered ' + str(answers['ok'])}))\n"
      "else: print(json.dumps({'type': 'needs_input', 'question': "
      "{'id': 'ok', 'text': 'Proceed?', 'answer_type': 'Boolean'}}))";
  Result<Outcome> asks = Run(PythonTool(ask, {"{{ tool.answers | tojson }}"}));
  ASSERT_TRUE(asks.ok()) << asks.status().message();
  EXPECT_EQ(asks->kind, Outcome::Kind::kNeedsInput);
  ASSERT_TRUE(asks->question);
  EXPECT_EQ(asks->question->id, "ok");
  Result<Outcome> answered = Run(PythonTool(ask, {"{{ tool.answers | tojson }}"}), "{}", R"({"ok":true})");
  ASSERT_TRUE(answered.ok());
  EXPECT_EQ(answered->kind, Outcome::Kind::kCompleted);
  EXPECT_EQ(Text(*answered), "answered True");

  Result<Outcome> envelope = Run(PythonTool(R"(print('{"content":[{"type":"text","text":"x"}],"isError":true}'))"));
  ASSERT_TRUE(envelope.ok());
  EXPECT_TRUE(envelope->is_error);
  EXPECT_EQ(Text(*envelope), "x");

  Result<Outcome> raw = Run(PythonTool("print('just text')"));
  ASSERT_TRUE(raw.ok());
  EXPECT_FALSE(raw->is_error);
  EXPECT_EQ(Text(*raw), "just text\n");

  Result<Outcome> raw_failure =
      Run(PythonTool("import sys; print('half'); sys.stderr.write('it broke\\n'); raise SystemExit(5)"));
  ASSERT_TRUE(raw_failure.ok());
  EXPECT_TRUE(raw_failure->is_error);
  EXPECT_EQ(Text(*raw_failure), "half\n");
  EXPECT_EQ(raw_failure->error->message, "exited with status 5: it broke");
}

// Issue 5's positive case: a stdio tool reads and writes exactly what its
// policy allows, with plain open().
TEST_F(StdioRuntimeTest, TouchesExactlyWhatItsPolicyAllows) {
  const std::string probe =
      "import json\n"
      "result = {}\n"
      "def attempt(name, action):\n"
      "    try:\n"
      "        result[name] = action()\n"
      "    except PermissionError:\n"
      "        result[name] = 'denied'\n"
      "attempt('read_src', lambda: open('src/a.txt').read())\n"
      "attempt('write_out', lambda: open('out/new.txt', 'w').write('made'))\n"
      "attempt('read_other', lambda: open('other/b.txt').read())\n"
      "attempt('write_src', lambda: open('src/new.txt', 'w').write('x'))\n"
      "print(json.dumps({'type': 'success', 'content': json.dumps(result, sort_keys=True)}))";
  ToolConfig tool = PythonTool(probe);
  tool.has_sandbox_table = true;
  tool.sandbox.filesystem_allow = {"src"};
  tool.sandbox.filesystem_writable.prefixes = {"out"};
  Result<Outcome> outcome = Run(tool);
  ASSERT_TRUE(outcome.ok()) << outcome.status().message();
  ASSERT_FALSE(outcome->is_error) << outcome->error->message << "\n" << outcome->stderr_tail;
  EXPECT_EQ(Text(*outcome),
            R"({"read_other": "denied", "read_src": "source text", "write_out": 4, "write_src": "denied"})");
  EXPECT_EQ(ReadRealFile(root_ + "/out/new.txt"), "made");
  EXPECT_FALSE(fs::exists(root_ + "/src/new.txt"));
}

TEST_F(StdioRuntimeTest, TimeoutEndsTheRun) {
  ToolConfig tool = PythonTool("import time; time.sleep(60)");
  tool.sandbox.limits.timeout_s = 1;
  const Clock::time_point start = Clock::now();
  Result<Outcome> outcome = Run(tool);
  ASSERT_TRUE(outcome.ok()) << outcome.status().message();
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(10));
  EXPECT_TRUE(outcome->is_error);
  EXPECT_EQ(outcome->failure, StatusCode::kTimeout);
  EXPECT_EQ(outcome->error->message, "Tool 'py' timed out after 1 s");
}

// Cancelled once the tool and a child of its own run (waited for, not
// guessed with a nap): both are gone when the run ends.
TEST_F(StdioRuntimeTest, CancelKillsTheProcessGroup) {
  constexpr std::string_view kChild = "sleep 271.93";
  ToolConfig tool = PythonTool("import subprocess, time; subprocess.Popen(['sleep', '271.93']); time.sleep(60)");
  StdioRuntime runtime(*store_, StdioRuntimeOptions{});
  CancelToken cancel;
  bool child_ran = false;
  std::thread canceller([&] {
    child_ran = WaitForDescendants(getpid(), kChild, 1);
    cancel.Cancel();
  });
  const Clock::time_point start = Clock::now();
  Result<Outcome> outcome = runtime.Execute(ToolCall{.name = "py"}, tool, cancel);
  canceller.join();
  ASSERT_TRUE(outcome.ok()) << outcome.status().message();
  EXPECT_TRUE(child_ran) << "the tool's child never ran";
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(40));
  EXPECT_EQ(outcome->kind, Outcome::Kind::kCancelled);
  EXPECT_EQ(outcome->failure, StatusCode::kCancelled);
  // Counted under init, not this process: a child that outlived its
  // parent is no longer this process's descendant (it is re-parented).
  EXPECT_EQ(DescendantsRunning(1, kChild), 0u) << "the tool's child outlived the run";
}

TEST_F(StdioRuntimeTest, StdoutPastTheCapFailsTheRun) {
  StdioRuntime runtime(*store_, StdioRuntimeOptions{.max_stdout_bytes = 1000});
  CancelToken cancel;
  Result<Outcome> outcome =
      runtime.Execute(ToolCall{.name = "py"}, PythonTool("import sys\nwhile True: sys.stdout.write('x' * 4096)"), cancel);
  ASSERT_TRUE(outcome.ok()) << outcome.status().message();
  EXPECT_TRUE(outcome->is_error);
  EXPECT_EQ(outcome->error->message, "Tool 'py' printed more than 1000 bytes on stdout");
}

}  // namespace
}  // namespace toolvfs
