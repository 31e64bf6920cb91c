// `toolvfs mcp` driven by the MCP Inspector's CLI mode
// (@modelcontextprotocol/inspector --cli, pinned and installed by
// scripts/install-mcp-servers.sh, run with the node 22 installed beside
// it), over stdio and over Streamable HTTP: the tool list and calls as the
// Inspector shows them.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "../cli/subprocess.h"
#include "mcp_servers.h"
#include "mcp_http_server_process.h"

namespace toolvfs {
namespace {

namespace fs = std::filesystem;

class McpInspectorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    node_ = fs::path(McpServersDirectory()) / "node_modules/node/bin/node";
    inspector_ = fs::path(McpServersDirectory()) / "node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js";
    for (const fs::path& needed : {node_, inspector_}) {
      ASSERT_TRUE(fs::exists(needed)) << needed << " is missing: run scripts/install-mcp-servers.sh (make test does)";
    }
    std::string pattern = (fs::temp_directory_path() / "toolvfs-mcp-inspector-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
    fs::create_directories(root_ / "proj" / "docs");
    std::ofstream(root_ / "proj" / "docs" / "a.txt") << "seen by the inspector\n";
    std::ofstream(root_ / "outside.txt") << "SECRET\n";
    std::ofstream(root_ / "proj" / "toolvfs.toml") << "";
  }
  void TearDown() override { fs::remove_all(root_); }

  // The Inspector's CLI against `toolvfs mcp` of the test project over
  // stdio, with the Inspector's own arguments after the server command.
  ProcessResult Inspect(const std::vector<std::string>& arguments) const {
    return InspectTarget({ToolvfsBinary(), "mcp", "--no-audit", "--project", (root_ / "proj").string()}, arguments);
  }

  // The Inspector's CLI against `target` (a command, or a URL). Its
  // catalog and settings go to the test's directory, not the user's home.
  ProcessResult InspectTarget(const std::vector<std::string>& target, const std::vector<std::string>& arguments) const {
    std::vector<std::string> argv = {node_.string(), inspector_.string(), "--cli"};
    argv.insert(argv.end(), target.begin(), target.end());
    argv.insert(argv.end(), arguments.begin(), arguments.end());
    return RunProcess(argv, {.cwd = root_.string(),
                             .set_env = {"HOME=" + (root_ / "home").string()},
                             .deadline = std::chrono::seconds(60)});
  }

  fs::path node_;
  fs::path inspector_;
  fs::path root_;
};

TEST_F(McpInspectorTest, ListsTheTools) {
  ProcessResult listed = Inspect({"--method", "tools/list"});
  ASSERT_EQ(listed.exit_code, 0) << listed;
  for (const char* tool : {"\"read_file\"", "\"write_file\"", "\"list_directory\"", "\"grep_files\""}) {
    EXPECT_NE(listed.out.find(std::string("\"name\": ") + tool), std::string::npos) << tool << "\n" << listed;
  }
  EXPECT_NE(listed.out.find("\"inputSchema\""), std::string::npos) << listed;
}

TEST_F(McpInspectorTest, CallsAToolAndSeesRefusalsAsToolErrors) {
  ProcessResult read = Inspect({"--method", "tools/call", "--tool-name", "read_file", "--tool-arg", "path=docs/a.txt"});
  ASSERT_EQ(read.exit_code, 0) << read;
  EXPECT_NE(read.out.find("seen by the inspector"), std::string::npos) << read;
  EXPECT_NE(read.out.find("\"isError\": false"), std::string::npos) << read;

  ProcessResult escaped =
      Inspect({"--method", "tools/call", "--tool-name", "read_file", "--tool-arg", "path=../outside.txt"});
  // The Inspector shows the result and says on stderr (and in its exit
  // status) that the tool returned an error: a result, not a crash.
  EXPECT_NE(escaped.exit_code, 0) << escaped;
  EXPECT_NE(escaped.err.find("tool_is_error"), std::string::npos) << escaped;
  EXPECT_NE(escaped.out.find("\"isError\": true"), std::string::npos) << escaped;
  EXPECT_NE(escaped.out.find("leaves the project root"), std::string::npos) << escaped;
  EXPECT_EQ(escaped.out.find("SECRET"), std::string::npos) << escaped;

  ProcessResult listing =
      Inspect({"--method", "tools/call", "--tool-name", "list_directory", "--tool-arg", "path=docs"});
  ASSERT_EQ(listing.exit_code, 0) << listing;
  EXPECT_NE(listing.out.find("a.txt"), std::string::npos) << listing;
}

TEST_F(McpInspectorTest, UsesAnHttpSession) {
  McpHttpServerProcess server(root_ / "proj", (root_ / "server.log").string(), {});
  ProcessResult listed = InspectTarget({server.url()}, {"--method", "tools/list"});
  ASSERT_EQ(listed.exit_code, 0) << listed << server.Log();
  EXPECT_NE(listed.out.find("\"name\": \"write_file\""), std::string::npos) << listed;
  // Each Inspector run is a session of its own, with a workspace of its own.
  ProcessResult written = InspectTarget(
      {server.url()}, {"--method", "tools/call", "--tool-name", "write_file", "--tool-arg", "path=n.txt", "content=hi"});
  ASSERT_EQ(written.exit_code, 0) << written;
  EXPECT_NE(written.out.find("\"isError\": false"), std::string::npos) << written;
  EXPECT_NE(written.out.find("created"), std::string::npos) << written;
  EXPECT_EQ(server.Stop(), 0) << server.Log();
}

}  // namespace
}  // namespace toolvfs
