// What the vfs runtime gives a tool process besides the protocol: a stdin
// pipe large enough for a 1 MiB answer in four writes
// (kToolStdinPipeBytes), under the sandbox one user namespace shared by
// the starts of one tool (namespaces.h, SharedUserNamespace), and the
// policy a caller built once (VfsRuntimeOptions::prebuilt_policy). A real
// Python tool under the real sandbox reports what it sees.
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>

#include "project/fs_store.h"
#include "project/test_util.h"
#include "policy/tool_policy.h"
#include "runtime/vfs_runtime.h"
#include "sandbox/kernel_features.h"

namespace toolvfs {
namespace {

// A vfs tool named `name` in Python: it reads init, runs `code` (which may
// send requests itself and must set `report`), and ends with the result
// `report`.
ToolConfig PythonVfsTool(const std::string& name, const std::string& code) {
  ToolConfig tool;
  tool.name = name;
  tool.runtime = RuntimeKind::kVfs;
  const std::string program = "import fcntl, json, os, sys\nsys.stdin.readline()\n" + code +
                              "sys.stdout.write(json.dumps({'jsonrpc': '2.0', 'method': 'result',\n"
                              "                             'params': {'content': report}}) + '\\n')\n";
  tool.command = CommandSpec{.program = TOOLVFS_TEST_PYTHON3, .args = {"-c", program}};
  return tool;
}

// A vfs tool named `name` that answers init with the capacity of its stdin
// pipe and the user namespace it runs in: "262144 user:[4026532000]".
ToolConfig PipeReporter(const std::string& name = "pipe_reporter") {
  return PythonVfsTool(name,
                       "report = '%d %s' % (fcntl.fcntl(0, fcntl.F_GETPIPE_SZ), os.readlink('/proc/self/ns/user'))\n");
}

class VfsTransportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<std::unique_ptr<ProjectFiles>> store = OpenFsStore(dir_.path());
    ASSERT_TRUE(store.ok()) << store.status().message();
    store_ = std::move(store).value();
  }

  // What the tool reported: its pipe capacity, and its user namespace.
  std::pair<std::string, std::string> Report(VfsRuntime& runtime, const ToolConfig& tool) {
    CancelToken cancel;
    Result<Outcome> outcome = runtime.Execute(ToolCall{.name = tool.name}, tool, cancel);
    EXPECT_TRUE(outcome.ok()) << outcome.status().message();
    if (!outcome.ok()) return {};
    EXPECT_FALSE(outcome->is_error) << (outcome->error ? outcome->error->message : "") << outcome->stderr_tail;
    if (outcome->content.size() != 1) return {};
    const std::string& text = outcome->content.front().text;
    const size_t space = text.find(' ');
    return {text.substr(0, space), space == std::string::npos ? "" : text.substr(space + 1)};
  }

  TempDir dir_;
  std::unique_ptr<ProjectFiles> store_;
};

TEST_F(VfsTransportTest, TheToolsStdinPipeHoldsAQuarterMebibyte) {
  VfsRuntime runtime(*store_, VfsRuntimeOptions{.working_directory = dir_.path(), .confinement = {.sandbox = {}}});
  EXPECT_EQ(Report(runtime, PipeReporter()).first, std::to_string(kToolStdinPipeBytes));
}

// Under the sandbox the starts of one tool join one user namespace, made
// for that tool's name; another tool gets another.
TEST_F(VfsTransportTest, StartsOfOneToolShareItsUserNamespace) {
  const FeatureProbe user_namespaces = ProbeUserNamespaces();
  if (!user_namespaces.available) GTEST_SKIP() << "needs user namespaces: " << user_namespaces.detail;
  VfsRuntime runtime(*store_, VfsRuntimeOptions{.working_directory = dir_.path()});
  const auto [pipe_bytes, first] = Report(runtime, PipeReporter("transport_first"));
  EXPECT_EQ(pipe_bytes, std::to_string(kToolStdinPipeBytes));  // under the sandbox too
  ASSERT_THAT(first, ::testing::StartsWith("user:["));
  EXPECT_EQ(Report(runtime, PipeReporter("transport_first")).second, first);
  const std::string other = Report(runtime, PipeReporter("transport_second")).second;
  ASSERT_THAT(other, ::testing::StartsWith("user:["));
  EXPECT_NE(other, first);
  char own[64] = {};
  ASSERT_GT(readlink("/proc/self/ns/user", own, sizeof own - 1), 0);
  EXPECT_NE(first, own);
}

// A vfs tool that reads docs/a.txt through the host and reports whether
// the read was allowed: "allowed" or "refused".
ToolConfig DocsReader() {
  return PythonVfsTool("docs_reader",
                       "sys.stdout.write(json.dumps({'jsonrpc': '2.0', 'id': 1, 'method': 'fs.read',\n"
                       "                             'params': {'path': 'docs/a.txt'}}) + '\\n')\n"
                       "sys.stdout.flush()\n"
                       "answer = json.loads(sys.stdin.readline())\n"
                       "report = 'allowed' if 'result' in answer else 'refused'\n");
}

// A policy the caller built once (the MCP server builds one per tool when
// it loads the config) judges the runs of that very ToolConfig object
// instead of one built per run; one said to be another object's is not
// used.
TEST_F(VfsTransportTest, APolicyBuiltOnceByTheCallerJudgesTheRun) {
  ASSERT_TRUE(store_->Write("docs/a.txt", "hello\n").ok());
  const ToolConfig reader = DocsReader();  // no sandbox table: the project is readable
  ToolConfig src_only = DocsReader();
  src_only.has_sandbox_table = true;
  src_only.sandbox.filesystem_allow = {"src"};
  // Built from another config than `reader`'s, to tell which one judged.
  const ToolPolicy given = ToolPolicy::ForTool(src_only, std::nullopt);
  auto report = [&](const ToolPolicy* policy, const ToolConfig* policy_tool) {
    VfsRuntime runtime(*store_, VfsRuntimeOptions{.working_directory = dir_.path(),
                                                  .confinement = {.sandbox = {}},
                                                  .prebuilt_policy = {policy, policy_tool}});
    return Report(runtime, reader).first;
  };
  EXPECT_EQ(report(nullptr, nullptr), "allowed");
  EXPECT_EQ(report(&given, &reader), "refused") << "the policy given judged the run";
  EXPECT_EQ(report(&given, &src_only), "allowed") << "a policy of another ToolConfig is not used";
}

}  // namespace
}  // namespace toolvfs
