// `toolvfs mcp` driven by the official TypeScript SDK client over stdio
// (tests/mcp/sdk_client.cjs): what a real MCP host sees.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "../cli/subprocess.h"
#include "../mcp_servers.h"
#include "mcp_http_server_process.h"

namespace toolvfs {
namespace {

namespace fs = std::filesystem;

TEST(McpSdkTest, TheTypeScriptClientListsAndCallsTools) {
  const fs::path sdk = fs::path(McpServersDirectory()) / "node_modules/@modelcontextprotocol/sdk/package.json";
  ASSERT_TRUE(fs::exists(sdk)) << sdk << " is missing: run scripts/install-mcp-servers.sh (make test does)";
  std::string pattern = (fs::temp_directory_path() / "toolvfs-mcp-sdk-XXXXXX").string();
  ASSERT_NE(mkdtemp(pattern.data()), nullptr);
  const fs::path root = pattern;
  fs::create_directories(root / "proj");
  std::ofstream(root / "proj" / "a.txt") << "via sdk\n";
  std::ofstream(root / "outside.txt") << "SECRET\n";
  std::ofstream(root / "proj" / "toolvfs.toml") << "[tools.nap]\ncommand = \"sleep 314.159\"\nruntime = \"stdio\"\n"
                                                   "[tools.nap.sandbox.limits]\ncancel_grace_s = 1\n"
                                                   "[tools.slow]\ncommand = \"sleep 2.5\"\nruntime = \"stdio\"\n"
                                                   "[tools.scribe]\ncommand = \"python3 scribe.py\"\nruntime = \"vfs\"\n"
                                                   "[tools.scribe.sandbox]\nfilesystem.allow = [\".\"]\n";
  // Writes scribe.txt and reports whether `pending` came before the answer.
  std::ofstream(root / "proj" / "scribe.py") << R"(import json, sys
def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()
init = json.loads(sys.stdin.readline())
send({"jsonrpc": "2.0", "id": 1, "method": "fs.write", "params": {"path": "scribe.txt", "content": "by scribe"}})
pending = False
while True:
    message = json.loads(sys.stdin.readline())
    if message.get("method") == "pending":
        pending = True
    elif message.get("id") == 1:
        break
send({"jsonrpc": "2.0", "method": "result",
      "params": {"content": "pending=%s written=%s" % (pending, "error" not in message)}})
)";

  ProcessResult result =
      RunProcess({TOOLVFS_TEST_NODE, (fs::path(SourceDir()) / "tests/mcp/sdk_client.cjs").string(), McpServersDirectory(),
                  ToolvfsBinary(), (root / "proj").string()},
                 {.deadline = std::chrono::seconds(60)});
  const bool allowed_written = fs::exists(root / "proj" / "allowed.txt");
  const bool declined_written = fs::exists(root / "proj" / "declined.txt");
  const bool scribe_written = fs::exists(root / "proj" / "scribe.txt");
  fs::remove_all(root);
  ASSERT_EQ(result.exit_code, 0) << result;
  EXPECT_NE(result.out.find(R"("server":{"name":"toolvfs")"), std::string::npos) << result;
  EXPECT_NE(result.out.find(R"("read_file")"), std::string::npos) << result;
  EXPECT_NE(result.out.find(R"("read":{"content":[{"type":"text","text":"via sdk\n"}],"isError":false})"),
            std::string::npos)
      << result;
  EXPECT_NE(result.out.find(R"("escaped":{"content":[{"type":"text","text":"Access denied)"), std::string::npos)
      << result;
  EXPECT_EQ(result.out.find("SECRET"), std::string::npos) << result;
  EXPECT_NE(result.out.find(R"("unknownError":"MCP error -32602)"), std::string::npos) << result;
  // Capabilities and annotations as the SDK parsed them.
  EXPECT_NE(result.out.find(R"("capabilities":{"logging":{},"tools":{"listChanged":true}})"), std::string::npos)
      << result;
  EXPECT_NE(result.out.find(R"("read_file":{"readOnlyHint":true,"destructiveHint":false,"idempotentHint":true,)"
                            R"("openWorldHint":false})"),
            std::string::npos)
      << result;
  EXPECT_NE(result.out.find(R"("nap":{"readOnlyHint":true,"openWorldHint":false})"), std::string::npos) << result;
  // Structured results (the SDK validated them against the output schemas).
  EXPECT_NE(result.out.find(R"("structuredContent":{"kind":"file","size":8,)"), std::string::npos) << result;
  EXPECT_NE(result.out.find(R"("structuredContent":{"matches":[{"path":"a.txt","lines":[{"line_number":1,)"),
            std::string::npos)
      << result;
  // Approvals through elicitation: asked twice, allowed once, declined once.
  EXPECT_NE(result.out.find(R"("elicitations":[{"mode":"form","message":"Tool 'write_file' asks to write )"
                            R"('allowed.txt', which its policy does not cover. Allow it? (To allow it for good: )"
                            R"(add \"allowed.txt\" to tools.write_file.sandbox.filesystem.writable.)"),
            std::string::npos)
      << result;
  EXPECT_NE(result.out.find(R"("allowed":{"content":[{"type":"text","text":"Wrote 3 bytes to 'allowed.txt'"}],)"
                            R"("isError":false})"),
            std::string::npos)
      << result;
  EXPECT_NE(result.out.find(R"("declined":{"content":[{"type":"text","text":"fs.write of 'declined.txt' denied by the user"}],)"
                            R"("isError":true})"), std::string::npos)
      << result;
  EXPECT_NE(result.out.find(R"("session":[{"content":[{"type":"text","text":"Wrote 3 bytes to 'session.txt'"}],)"
                            R"("isError":false},{"content":[{"type":"text","text":"Wrote 3 bytes to 'session.txt'"}],)"
                            R"("isError":false}],)"),
            std::string::npos)
      << result;
  EXPECT_NE(result.out.find(R"("asked":4,"scribe":{"content":[{"type":"text","text":"pending=True written=True"}],)"),
            std::string::npos)
      << result;
  EXPECT_TRUE(scribe_written);
  EXPECT_TRUE(allowed_written);
  EXPECT_FALSE(declined_written);
  // Progress while `slow` ran, then its answer.
  EXPECT_NE(result.out.find(R"("progress":[{"progress":1,"message":"running for 1 s; 0 requests)"), std::string::npos)
      << result;
  EXPECT_NE(result.out.find(R"("slow":{"content":[],"isError":false})"), std::string::npos) << result;
  // A cancelled call: the tool was running, is gone, and the server goes on.
  EXPECT_NE(result.out.find(R"("napStarted":true)"), std::string::npos) << result;
  EXPECT_NE(result.out.find(R"("cancelError":"MCP error -32001: the user pressed stop")"), std::string::npos) << result;
  EXPECT_NE(result.out.find(R"("napGone":true)"), std::string::npos) << result;
  EXPECT_NE(result.out.find(R"("afterCancel":{"content":[{"type":"text","text":"via sdk\n"}],"isError":false})"),
            std::string::npos)
      << result;
}

// Over Streamable HTTP (`toolvfs mcp --http`): two SDK clients at once,
// each in its own session with its own workspace, each ending its session
// with DELETE; the server then exits cleanly on SIGTERM.
TEST(McpSdkTest, TheTypeScriptClientUsesTwoSessionsAtOnceOverHttp) {
  const fs::path sdk = fs::path(McpServersDirectory()) / "node_modules/@modelcontextprotocol/sdk/package.json";
  ASSERT_TRUE(fs::exists(sdk)) << sdk << " is missing: run scripts/install-mcp-servers.sh (make test does)";
  std::string pattern = (fs::temp_directory_path() / "toolvfs-mcp-sdk-http-XXXXXX").string();
  ASSERT_NE(mkdtemp(pattern.data()), nullptr);
  const fs::path root = pattern;
  fs::create_directories(root / "proj");
  std::ofstream(root / "outside.txt") << "SECRET\n";
  std::ofstream(root / "proj" / "toolvfs.toml") << "";
  ProcessResult result;
  int server_exit = -1;
  std::string log;
  {
    McpHttpServerProcess server(root / "proj", (root / "server.log").string(), {});
    result = RunProcess({TOOLVFS_TEST_NODE, (fs::path(SourceDir()) / "tests/mcp/sdk_client.cjs").string(), McpServersDirectory(),
                         "--http", server.url()},
                        {.deadline = std::chrono::seconds(60)});
    log = server.Log();
    server_exit = server.Stop();
  }
  fs::remove_all(root);
  ASSERT_EQ(result.exit_code, 0) << result << log;
  EXPECT_EQ(server_exit, 0) << log;
  EXPECT_NE(result.out.find(R"("read":"written by first")"), std::string::npos) << result;
  EXPECT_NE(result.out.find(R"("read":"written by second")"), std::string::npos) << result;
  EXPECT_EQ(result.out.find(R"("written":true)"), std::string::npos) << result;
  EXPECT_NE(result.out.find(R"("protocolVersion":"2025-11-25")"), std::string::npos) << result;
  EXPECT_EQ(result.out.find("SECRET"), std::string::npos) << result;
  const size_t first_id = result.out.find(R"("sessionId":")");
  const size_t second_id = result.out.find(R"("sessionId":")", first_id + 1);
  ASSERT_NE(second_id, std::string::npos) << result;
  EXPECT_NE(result.out.substr(first_id, 46), result.out.substr(second_id, 46)) << result;
}

// Over Streamable HTTP, one SDK client does what it does over stdio: the
// snapshot tools with structured results (validated by the SDK against
// their outputSchema), an approval by elicitation, a tool's own progress
// and log lines, and a cancellation that leaves no tool process.
TEST(McpSdkTest, OverHttpTheClientAnswersElicitationGetsProgressAndCancels) {
  const fs::path sdk = fs::path(McpServersDirectory()) / "node_modules/@modelcontextprotocol/sdk/package.json";
  ASSERT_TRUE(fs::exists(sdk)) << sdk << " is missing: run scripts/install-mcp-servers.sh (make test does)";
  std::string pattern = (fs::temp_directory_path() / "toolvfs-mcp-sdk-http-features-XXXXXX").string();
  ASSERT_NE(mkdtemp(pattern.data()), nullptr);
  const fs::path root = pattern;
  fs::create_directories(root / "proj");
  std::ofstream(root / "proj" / "toolvfs.toml") << "[tools.nap]\ncommand = \"sleep 161.803\"\nruntime = \"stdio\"\n"
                                                   "[tools.nap.sandbox.limits]\ncancel_grace_s = 1\n"
                                                   "[tools.scribe]\ncommand = \"python3 scribe.py\"\nruntime = \"vfs\"\n"
                                                   "[tools.scribe.sandbox]\nfilesystem.allow = [\".\"]\n"
                                                   "[tools.reporter]\ncommand = \"python3 reporter.py\"\nruntime = \"vfs\"\n";
  std::ofstream(root / "proj" / "scribe.py") << "import sys, toolvfs_tool\n"
                                                "def main(tool):\n"
                                                "    tool.write('scribe.txt', 'by scribe')\n"
                                                "    return 'written: ' + tool.read('scribe.txt')\n"
                                                "sys.exit(toolvfs_tool.tool_main(main))\n";
  std::ofstream(root / "proj" / "reporter.py") << "import sys, toolvfs_tool\n"
                                                  "def main(tool):\n"
                                                  "    tool.log('info', 'starting')\n"
                                                  "    for done in (1, 2, 3):\n"
                                                  "        tool.progress(done, 3, 'step %d' % done)\n"
                                                  "    tool.log('debug', 'below the level')\n"
                                                  "    return 'reported'\n"
                                                  "sys.exit(toolvfs_tool.tool_main(main))\n";
  ProcessResult result;
  int server_exit = -1;
  std::string log;
  {
    McpHttpServerProcess server(root / "proj", (root / "server.log").string(), {});
    result = RunProcess({TOOLVFS_TEST_NODE, (fs::path(SourceDir()) / "tests/mcp/sdk_client.cjs").string(), McpServersDirectory(),
                         "--http-features", server.url()},
                        {.deadline = std::chrono::seconds(90)});
    log = server.Log();
    server_exit = server.Stop();
  }
  fs::remove_all(root);
  ASSERT_EQ(result.exit_code, 0) << result << log;
  EXPECT_EQ(server_exit, 0) << log;
  // Snapshot tools: structured, and the SDK accepted them.
  EXPECT_NE(result.out.find(R"("created":{"content":[{"type":"text","text":"{\"id\":)"), std::string::npos) << result;
  EXPECT_NE(result.out.find(R"("structuredContent":{"id":)"), std::string::npos) << result;
  EXPECT_NE(result.out.find(R"("label":"before","created_at":)"), std::string::npos) << result;
  EXPECT_NE(result.out.find(R"("label":null,"created_at":)"), std::string::npos) << result;
  EXPECT_NE(result.out.find(R"("structuredContent":{"snapshots":[{"id":)"), std::string::npos) << result;
  EXPECT_NE(result.out.find(R"("added":["notes","notes/a.txt"],"added_count":2,"modified":[],"modified_count":0,)"),
            std::string::npos)
      << result;
  EXPECT_NE(result.out.find(R"("removed":2,"restored":0,"reverted":0})"), std::string::npos) << result;
  // The approval was asked of this client and allowed once.
  EXPECT_NE(result.out.find(R"("elicitations":[{"mode":"form","message":"Tool 'scribe' asks to write 'scribe.txt')"),
            std::string::npos)
      << result;
  EXPECT_NE(result.out.find(R"("scribe":{"content":[{"type":"text","text":"written: by scribe"}],"isError":false})"),
            std::string::npos)
      << result;
  // The tool's own progress and log lines.
  EXPECT_NE(result.out.find(R"("progress":[{"progress":1,"total":3,"message":"step 1"},)"
                            R"({"progress":2,"total":3,"message":"step 2"},{"progress":3,"total":3,"message":"step 3"}])"),
            std::string::npos)
      << result;
  EXPECT_NE(result.out.find(R"({"level":"info","logger":"reporter","data":"starting"})"), std::string::npos) << result;
  EXPECT_EQ(result.out.find("below the level"), std::string::npos) << result;
  // The cancelled call: its tool ran, is gone, and the session went on.
  EXPECT_NE(result.out.find(R"("napStarted":true)"), std::string::npos) << result;
  EXPECT_NE(result.out.find(R"("cancelError":"MCP error -32001: the user pressed stop")"), std::string::npos) << result;
  EXPECT_NE(result.out.find(R"("napGone":true)"), std::string::npos) << result;
}

}  // namespace
}  // namespace toolvfs
