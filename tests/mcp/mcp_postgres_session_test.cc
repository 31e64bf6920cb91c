// `toolvfs mcp --http --session-store postgres://…`: each MCP session gets
// a workspace of its own in the test cluster (postgres_test_server.h),
// named after its session id, removed when the session ends (DELETE)
// unless --keep-sessions, and only the one it created. Driven by the
// official TypeScript SDK client (tests/mcp/sdk_client.cjs --http: two
// sessions at once writing the same path, each reading back its own), and
// by a raw HTTP client (mcp_http_client.h) where a test acts mid-session.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "../cli/subprocess.h"
#include "../mcp_servers.h"
#include "mcp_http_client.h"
#include "mcp_http_server_process.h"
#include "project/postgres_test_server.h"
#include "project/sql/postgres_store.h"

namespace toolvfs {
namespace {

namespace fs = std::filesystem;

// The session ids the client printed ("sessionId":"<32 hex digits>").
std::vector<std::string> SessionIds(const std::string& out) {
  std::vector<std::string> ids;
  constexpr std::string_view kKey = R"("sessionId":")";
  for (size_t at = out.find(kKey); at != std::string::npos; at = out.find(kKey, at + 1)) {
    ids.push_back(out.substr(at + kKey.size(), 32));
  }
  return ids;
}

// The names of the workspaces in the database of `uri`.
std::vector<std::string> WorkspaceNames(const std::string& uri) {
  std::vector<std::string> names;
  Result<std::unique_ptr<SqlStoreFile>> file = OpenPostgresStoreFile(uri);
  EXPECT_TRUE(file.ok()) << file.status().message();
  if (!file.ok()) return names;
  Result<std::vector<WorkspaceSummary>> listed = (*file)->ListWorkspaces();
  EXPECT_TRUE(listed.ok()) << listed.status().message();
  if (!listed.ok()) return names;
  for (const WorkspaceSummary& summary : *listed) names.push_back(summary.name);
  return names;
}

class McpPostgresSessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fs::exists(fs::path(McpServersDirectory()) / "node_modules/@modelcontextprotocol/sdk/package.json"))
        << "the MCP SDK is missing: run scripts/install-mcp-servers.sh (make test does)";
    std::string pattern = (fs::temp_directory_path() / "toolvfs-mcp-postgres-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
    fs::create_directories(root_ / "proj");
    std::ofstream(root_ / "proj" / "toolvfs.toml") << "";
  }
  void TearDown() override { fs::remove_all(root_); }

  // Serves with `arguments`, runs the two-session client, stops the
  // server; the client's output.
  std::string RunTwoSessions(const std::vector<std::string>& arguments) {
    ProcessResult result;
    int server_exit = -1;
    std::string log;
    {
      McpHttpServerProcess server(root_ / "proj", (root_ / "server.log").string(), arguments);
      result = RunProcess({TOOLVFS_TEST_NODE, (fs::path(SourceDir()) / "tests/mcp/sdk_client.cjs").string(),
                           McpServersDirectory(), "--http", server.url()},
                          {.deadline = std::chrono::seconds(60)});
      log = server.Log();
      server_exit = server.Stop();
    }
    EXPECT_EQ(result.exit_code, 0) << result << log;
    EXPECT_EQ(server_exit, 0) << log;
    EXPECT_NE(result.out.find(R"("read":"written by first")"), std::string::npos) << result;
    EXPECT_NE(result.out.find(R"("read":"written by second")"), std::string::npos) << result;
    return result.out;
  }

  fs::path root_;
};

TEST_F(McpPostgresSessionTest, EachSessionHasItsOwnWorkspaceRemovedAtDelete) {
  const std::string uri = TestPostgresUri();
  const std::string out = RunTwoSessions({"--session-store", uri});
  const std::vector<std::string> ids = SessionIds(out);
  ASSERT_EQ(ids.size(), 2u) << out;
  EXPECT_NE(ids[0], ids[1]);
  const std::vector<std::string> names = WorkspaceNames(uri);
  for (const std::string& id : ids) {
    EXPECT_EQ(std::count(names.begin(), names.end(), id), 0) << "the workspace goes with its session: " << id;
  }
}

TEST_F(McpPostgresSessionTest, KeepSessionsKeepsEachWorkspaceWithItsFiles) {
  const std::string uri = TestPostgresUri();
  const std::string out = RunTwoSessions({"--session-store", uri, "--keep-sessions"});
  const std::vector<std::string> ids = SessionIds(out);
  ASSERT_EQ(ids.size(), 2u) << out;
  const std::vector<std::string> names = WorkspaceNames(uri);
  for (const std::string& id : ids) {
    EXPECT_EQ(std::count(names.begin(), names.end(), id), 1) << id;
    // Each kept workspace holds what its own session wrote.
    Result<std::unique_ptr<ProjectFiles>> workspace = OpenPostgresStore(uri + "#" + id, StoreOptions{});
    ASSERT_TRUE(workspace.ok()) << workspace.status().message();
    Result<std::string> text = (*workspace)->Read("shared/name.txt");
    ASSERT_TRUE(text.ok()) << text.status().message();
    EXPECT_TRUE(*text == "written by first" || *text == "written by second") << *text;
    workspace->reset();
    Result<std::unique_ptr<SqlStoreFile>> file = OpenPostgresStoreFile(uri);
    ASSERT_TRUE(file.ok());
    EXPECT_TRUE((*file)->DeleteWorkspace(id).ok());
  }
}

// A session deletes its workspace by the row its open created, never by
// name: a workspace made under the session's name after its own was
// deleted (another server, or toolvfs workspace rm and init) survives the
// session's end. Before, the session deleted whatever bore its id.
TEST_F(McpPostgresSessionTest, ASessionEndingDeletesOnlyTheWorkspaceItCreated) {
  const std::string uri = TestPostgresUri();
  HttpServer server(root_, {"--session-store", uri});
  const std::string session = server.Initialize();
  Result<std::unique_ptr<SqlStoreFile>> file = OpenPostgresStoreFile(uri);
  ASSERT_TRUE(file.ok()) << file.status().message();
  ASSERT_TRUE((*file)->DeleteWorkspace(session).ok());
  {
    Result<std::unique_ptr<ProjectFiles>> namesake = OpenPostgresStore(uri + "#" + session, StoreOptions{});
    ASSERT_TRUE(namesake.ok()) << namesake.status().message();
    ASSERT_TRUE((*namesake)->Write("theirs.txt", "not the session's").ok());
  }

  EXPECT_EQ(server.client().Send("DELETE", {"Mcp-Session-Id: " + session}, "").status, 200);
  const std::vector<std::string> names = WorkspaceNames(uri);
  EXPECT_EQ(std::count(names.begin(), names.end(), session), 1) << server.Log();
  Result<std::unique_ptr<ProjectFiles>> kept = OpenPostgresStore(uri + "#" + session, StoreOptions{});
  ASSERT_TRUE(kept.ok()) << kept.status().message();
  Result<std::string> text = (*kept)->Read("theirs.txt");
  EXPECT_TRUE(text.ok() && *text == "not the session's") << text.status().message();
  kept->reset();
  EXPECT_TRUE((*file)->DeleteWorkspace(session).ok());
}

TEST_F(McpPostgresSessionTest, AnUnreachableOrMalformedStoreIsRefusedAtStartWithoutThePassword) {
  ProcessResult down = RunProcess(
      {ToolvfsBinary(), "mcp", "--no-audit", "--project", (root_ / "proj").string(), "--http", "127.0.0.1:0",
       "--session-store", "postgresql://toolvfs:hunter2@127.0.0.1:1/postgres"},
      {.deadline = std::chrono::seconds(30)});
  EXPECT_NE(down.exit_code, 0) << down;
  EXPECT_NE(down.err.find("--session-store"), std::string::npos) << down;
  EXPECT_EQ(down.err.find("hunter2"), std::string::npos) << down;
  ProcessResult fragment = RunProcess(
      {ToolvfsBinary(), "mcp", "--no-audit", "--project", (root_ / "proj").string(), "--http", "127.0.0.1:0",
       "--session-store", TestPostgresUri() + "#mine"},
      {.deadline = std::chrono::seconds(30)});
  EXPECT_NE(fragment.exit_code, 0) << fragment;
  EXPECT_NE(fragment.err.find("name the database only (no #WORKSPACE)"), std::string::npos) << fragment;
}

}  // namespace
}  // namespace toolvfs
