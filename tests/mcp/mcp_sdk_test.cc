// `toolvfs mcp` driven by the official TypeScript SDK client over stdio
// (tests/mcp/sdk_client.cjs): what a real MCP host sees.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "../cli/subprocess.h"
#include "mcp_http_server_process.h"

namespace toolvfs {
namespace {

namespace fs = std::filesystem;

std::string NpmDir() {
  const char* dir = std::getenv("TOOLVFS_MCP_SERVERS_DIR");
  return dir != nullptr && dir[0] != '\0' ? dir : TOOLVFS_MCP_SERVERS_DEFAULT_DIR;
}

TEST(McpSdkTest, TheTypeScriptClientListsAndCallsTools) {
  const fs::path sdk = fs::path(NpmDir()) / "node_modules/@modelcontextprotocol/sdk/package.json";
  ASSERT_TRUE(fs::exists(sdk)) << sdk << " is missing: run scripts/install-mcp-servers.sh (make test does)";
  std::string pattern = (fs::temp_directory_path() / "toolvfs-mcp-sdk-XXXXXX").string();
  ASSERT_NE(mkdtemp(pattern.data()), nullptr);
  const fs::path root = pattern;
  fs::create_directories(root / "proj");
  std::ofstream(root / "proj" / "a.txt") << "via sdk\n";
  std::ofstream(root / "outside.txt") << "SECRET\n";
  std::ofstream(root / "proj" / "toolvfs.toml") << "";

  ProcessResult result =
      RunProcess({TOOLVFS_TEST_NODE, (fs::path(SourceDir()) / "tests/mcp/sdk_client.cjs").string(), NpmDir(),
                  ToolvfsBinary(), (root / "proj").string()},
                 {.deadline = std::chrono::seconds(60)});
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
}

// Over Streamable HTTP (`toolvfs mcp --http`): two SDK clients at once,
// each in its own session with its own workspace, each ending its session
// with DELETE; the server then exits cleanly on SIGTERM.
TEST(McpSdkTest, TheTypeScriptClientUsesTwoSessionsAtOnceOverHttp) {
  const fs::path sdk = fs::path(NpmDir()) / "node_modules/@modelcontextprotocol/sdk/package.json";
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
    result = RunProcess({TOOLVFS_TEST_NODE, (fs::path(SourceDir()) / "tests/mcp/sdk_client.cjs").string(), NpmDir(),
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

}  // namespace
}  // namespace toolvfs
