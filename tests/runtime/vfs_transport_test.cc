// What the vfs runtime gives a tool process besides the protocol: a stdin
// pipe large enough for a 1 MiB answer in four writes
// (kToolStdinPipeBytes), and, under the sandbox, one user namespace shared
// by the starts of one tool (namespaces.h, SharedUserNamespace). A real
// Python tool under the real sandbox reports what it sees.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "project/fs_store.h"
#include "project/test_util.h"
#include "runtime/vfs_runtime.h"

namespace toolvfs {
namespace {

// A vfs tool that answers init with the capacity of its stdin pipe.
ToolConfig PipeReporter() {
  ToolConfig tool;
  tool.name = "pipe_reporter";
  tool.runtime = RuntimeKind::kVfs;
  const std::string code =
      "import fcntl, json, sys\n"
      "sys.stdin.readline()\n"
      "size = fcntl.fcntl(0, fcntl.F_GETPIPE_SZ)\n"
      "sys.stdout.write(json.dumps({'jsonrpc': '2.0', 'method': 'result',\n"
      "                             'params': {'content': str(size)}}) + '\\n')\n";
  tool.command = CommandSpec{.program = TOOLVFS_TEST_PYTHON3, .args = {"-c", code}};
  return tool;
}

TEST(VfsTransportTest, TheToolsStdinPipeHoldsAQuarterMebibyte) {
  TempDir dir;
  Result<std::unique_ptr<ProjectFiles>> store = OpenFsStore(dir.path());
  ASSERT_TRUE(store.ok()) << store.status().message();
  VfsRuntime runtime(**store, VfsRuntimeOptions{.working_directory = dir.path()});
  const ToolConfig tool = PipeReporter();
  CancelToken cancel;
  for (int run = 0; run < 2; ++run) {  // the second start joins the first's user namespace
    Result<Outcome> outcome = runtime.Execute(ToolCall{.name = tool.name}, tool, cancel);
    ASSERT_TRUE(outcome.ok()) << outcome.status().message();
    ASSERT_FALSE(outcome->is_error) << (outcome->error ? outcome->error->message : "") << outcome->stderr_tail;
    ASSERT_EQ(outcome->content.size(), 1u);
    EXPECT_EQ(outcome->content.front().text, std::to_string(kToolStdinPipeBytes));
  }
}

}  // namespace
}  // namespace toolvfs
