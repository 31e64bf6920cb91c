// `toolvfs mcp` driven by the official TypeScript SDK client over stdio
// (tests/mcp/sdk_client.cjs): what a real MCP host sees.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "../cli/subprocess.h"

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

}  // namespace
}  // namespace toolvfs
