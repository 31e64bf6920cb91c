// The CLI on a postgres project (`--project postgres://...#WS`): the
// workspace commands, run, exec and grep drive the built binary against
// the test server, and `workspace copy` moves a workspace sqlite ->
// postgres -> sqlite.
#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "cli/subprocess.h"
#include "postgres_test_server.h"
#include "project/test_util.h"

namespace toolvfs {
namespace {

ProcessResult Toolvfs(std::vector<std::string> arguments) {
  arguments.insert(arguments.begin(), ToolvfsBinary());
  return RunProcess(arguments);
}

class PostgresCliTest : public ::testing::Test {
 protected:
  // toolvfs ARGS... --project PROJECT
  ProcessResult OnProject(std::vector<std::string> arguments, const std::string& project) {
    arguments.push_back("--project");
    arguments.push_back(project);
    return Toolvfs(arguments);
  }

  TempDir dir_;
  const std::string project_ = TestPostgresUri() + "#" + NewTestPostgresWorkspace();
};

TEST_F(PostgresCliTest, WorkspaceCommandsWorkOnAPostgresProject) {
  WriteRealFile(dir_.Join("source/src/a.py"), "print('alpha')\n");
  WriteRealFile(dir_.Join("source/notes.txt"), "needle here\n");
  ProcessResult init = OnProject({"workspace", "init", "--from", dir_.Join("source")}, project_);
  ASSERT_EQ(init.exit_code, 0) << init;
  ProcessResult again = OnProject({"workspace", "init"}, project_);
  EXPECT_EQ(again.exit_code, 2);
  ExpectOneLineError(again);
  EXPECT_NE(again.err.find("already exists"), std::string::npos) << again;

  ProcessResult listed = OnProject({"workspace", "ls", "-r"}, project_);
  ASSERT_EQ(listed.exit_code, 0) << listed;
  EXPECT_NE(listed.out.find("src/a.py"), std::string::npos) << listed;
  EXPECT_EQ(OnProject({"workspace", "cat", "notes.txt"}, project_).out, "needle here\n");
  ProcessResult snapshot = OnProject({"workspace", "snapshot", "--label", "before"}, project_);
  ASSERT_EQ(snapshot.exit_code, 0) << snapshot;
  WriteRealFile(dir_.Join("more/new.txt"), "new\n");
  ASSERT_EQ(OnProject({"workspace", "import", dir_.Join("more")}, project_).exit_code, 0);
  EXPECT_EQ(OnProject({"workspace", "diff", "before"}, project_).out, "A  new.txt\n");
  EXPECT_EQ(OnProject({"workspace", "restore", "before"}, project_).exit_code, 0);
  EXPECT_EQ(OnProject({"workspace", "diff", "before"}, project_).out, "");
  EXPECT_EQ(OnProject({"workspace", "snapshots"}, project_).exit_code, 0);
  ProcessResult exported = OnProject({"workspace", "export", dir_.Join("out")}, project_);
  ASSERT_EQ(exported.exit_code, 0) << exported;
  EXPECT_EQ(ReadRealFile(dir_.Join("out/src/a.py")), "print('alpha')\n");

  // grep and exec on the same project.
  ProcessResult found = OnProject({"grep", "needle"}, project_);
  EXPECT_EQ(found.exit_code, 0) << found;
  EXPECT_NE(found.out.find("notes.txt"), std::string::npos) << found;
  // A stdio tool reads the workspace through its materialized copy. (A
  // postgres project has no directory: without --no-audit the audit log
  // would go to the current directory, the test's.)
  ProcessResult exec = Toolvfs({"exec", "--project", project_, "--no-audit", "--runtime", "stdio", "--", "/bin/cat", "notes.txt"});
  EXPECT_EQ(exec.exit_code, 0) << exec;

  ProcessResult collected = OnProject({"workspace", "gc"}, project_);
  EXPECT_EQ(collected.exit_code, 0) << collected;
  // No "the file went from 0 bytes to 0 bytes": a server has no file of the store's.
  EXPECT_NE(collected.out.find("; the server reuses the space (autovacuum)"), std::string::npos) << collected;
  ProcessResult removed = OnProject({"workspace", "rm"}, project_);
  EXPECT_EQ(removed.exit_code, 0) << removed;
  ProcessResult gone = OnProject({"workspace", "ls"}, project_);
  EXPECT_EQ(gone.exit_code, 2);
  EXPECT_NE(gone.err.find("does not exist"), std::string::npos) << gone;
}

// docs/stores.md, "URIs": a reading command never creates a workspace; a
// writing one does, and says so.
TEST_F(PostgresCliTest, OnlyAWritingCommandCreatesAMissingWorkspaceAndSaysSo) {
  ProcessResult grep = OnProject({"grep", "x"}, project_);
  EXPECT_EQ(grep.exit_code, 2) << grep;
  ExpectOneLineError(grep);
  EXPECT_NE(grep.err.find("does not exist in the store"), std::string::npos) << grep.err;
  EXPECT_NE(grep.err.find("; create it with toolvfs workspace init --project "), std::string::npos) << grep.err;
  EXPECT_EQ(OnProject({"workspace", "ls"}, project_).exit_code, 2) << "grep created nothing";

  // --project before PROGRAM: after it, it would be the program's.
  ProcessResult exec = Toolvfs({"exec", "--project", project_, "--no-audit", "--runtime", "stdio", "--", "/bin/true"});
  EXPECT_EQ(exec.exit_code, 0) << exec;
  EXPECT_EQ(exec.err.rfind("toolvfs: --project: created workspace '", 0), 0u) << exec.err;
  EXPECT_EQ(OnProject({"workspace", "ls"}, project_).exit_code, 0);
}

TEST_F(PostgresCliTest, AnUnreachableServerExitsWith69AndOneLine) {
  PrivatePostgresServer server;
  ASSERT_TRUE(server.started());
  const std::string project = server.TcpUri() + "#w";
  ASSERT_EQ(OnProject({"workspace", "init"}, project).exit_code, 0);
  ASSERT_TRUE(server.Stop());
  for (const std::vector<std::string>& command :
       {std::vector<std::string>{"workspace", "ls"}, std::vector<std::string>{"grep", "x"}}) {
    ProcessResult down = OnProject(command, project);
    EXPECT_EQ(down.exit_code, 69) << down;
    ExpectOneLineError(down);
  }
  ASSERT_TRUE(server.Start());
  EXPECT_EQ(OnProject({"workspace", "ls"}, project).exit_code, 0);
}

TEST_F(PostgresCliTest, CopySqliteToPostgresAndBack) {
  WriteRealFile(dir_.Join("source/a.txt"), "one\n");
  const std::string original = "sqlite:" + dir_.Join("original.db") + "#main";
  ASSERT_EQ(OnProject({"workspace", "init", "--from", dir_.Join("source")}, original).exit_code, 0);
  ASSERT_EQ(OnProject({"workspace", "snapshot", "--label", "first"}, original).exit_code, 0);
  WriteRealFile(dir_.Join("more/b.txt"), "two\n");
  ASSERT_EQ(OnProject({"workspace", "import", dir_.Join("more")}, original).exit_code, 0);

  ProcessResult up = Toolvfs({"workspace", "copy", original, project_});
  ASSERT_EQ(up.exit_code, 0) << up;
  const std::string back = "sqlite:" + dir_.Join("back.db") + "#main";
  ProcessResult down = Toolvfs({"workspace", "copy", project_, back});
  ASSERT_EQ(down.exit_code, 0) << down;
  for (const std::string& project : {project_, back}) {
    EXPECT_EQ(OnProject({"workspace", "cat", "b.txt"}, project).out, "two\n") << project;
    EXPECT_EQ(OnProject({"workspace", "diff", "first"}, project).out, "A  b.txt\n") << project;
    ProcessResult snapshots = OnProject({"workspace", "snapshots"}, project);
    EXPECT_NE(snapshots.out.find("first"), std::string::npos) << snapshots;
  }
}

// Two copies into one new postgres workspace at once: the open creates it
// exclusively, so one copy wins and the other is refused without deleting
// the winner's workspace (as it could when it checked, then created, then
// deleted by name on failure).
TEST_F(PostgresCliTest, TwoCopiesIntoOneNewWorkspaceAtOnceLeaveOneWinner) {
  constexpr int kFiles = 100;
  constexpr int kRounds = 6;
  for (int i = 0; i < kFiles; ++i) WriteRealFile(dir_.Join("many/f" + std::to_string(i)), std::to_string(i));
  const std::string original = "sqlite:" + dir_.Join("original.db") + "#main";
  ASSERT_EQ(OnProject({"workspace", "init", "--from", dir_.Join("many")}, original).exit_code, 0);
  for (int round = 0; round < kRounds; ++round) {
    const std::string target = TestPostgresUri() + "#" + NewTestPostgresWorkspace();
    ProcessResult other;
    std::thread thread([&] { other = Toolvfs({"workspace", "copy", original, target}); });
    ProcessResult mine = Toolvfs({"workspace", "copy", original, target});
    thread.join();
    ASSERT_EQ((mine.exit_code == 0) + (other.exit_code == 0), 1) << "round " << round << "\n" << mine << other;
    const ProcessResult& lost = mine.exit_code == 0 ? other : mine;
    ExpectOneLineError(lost);
    EXPECT_NE(lost.err.find("already exists"), std::string::npos) << lost;
    ProcessResult listed = OnProject({"workspace", "ls"}, target);
    ASSERT_EQ(listed.exit_code, 0) << "round " << round << ": the winner's copy is gone\n" << listed;
    EXPECT_EQ(std::count(listed.out.begin(), listed.out.end(), '\n'), kFiles + 1) << listed;  // a header, a row each
  }
}

}  // namespace
}  // namespace toolvfs
