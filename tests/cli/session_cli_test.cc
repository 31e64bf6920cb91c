// End to end: session workspaces through the built toolvfs. The four tools
// through `toolvfs run` on sqlite and memory projects, the session check,
// `workspace ls -r --json`, reset, prompt and materialize.
#include <rapidjson/document.h>

#include <filesystem>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "project/test_util.h"
#include "subprocess.h"

namespace toolvfs {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;

constexpr const char* kConfig =
    "[tools.read_file]\nsource = \"builtin\"\n"
    "[tools.list_directory]\nsource = \"builtin\"\n"
    "[tools.write_file]\nsource = \"builtin\"\nsandbox.filesystem.writable = [\".\"]\n"
    "[tools.delete_file]\nsource = \"builtin\"\nsandbox.filesystem.writable = [\".\"]\n"
    "[tools.snapshot_create]\nsource = \"builtin\"\n"
    "[tools.snapshot_list]\nsource = \"builtin\"\n"
    "[tools.snapshot_diff]\nsource = \"builtin\"\n"
    "[tools.snapshot_restore]\nsource = \"builtin\"\n"
    "sandbox.filesystem.allow = [\".\"]\nsandbox.filesystem.writable = [\".\"]\n"
    "[session]\nmax_content_chars = 10\n";

class SessionCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(ToolvfsBinary().empty()) << "TOOLVFS_BINARY is not set";
    WriteRealFile(config_, kConfig);
  }

  ProcessResult Toolvfs(std::vector<std::string> arguments) {
    arguments.insert(arguments.begin(), ToolvfsBinary());
    return RunProcess(arguments, ProcessOptions{.cwd = dir_.path()});
  }

  ProcessResult Run(const std::string& tool, const std::string& arguments, const std::string& project,
                    std::vector<std::string> extra = {}) {
    std::vector<std::string> argv{"run", tool, "--project", project, "--no-interaction", "--no-audit",
                                  "--args", arguments};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return Toolvfs(argv);
  }

  ProcessResult Workspace(std::vector<std::string> arguments) {
    arguments.insert(arguments.begin(), "workspace");
    arguments.push_back("--project");
    arguments.push_back(project_);
    return Toolvfs(arguments);
  }

  void InitSession() {
    ProcessResult init = Workspace({"init", "--session"});
    ASSERT_EQ(init.exit_code, 0) << init;
    EXPECT_THAT(init.out, HasSubstr("Created session workspace 'agent'"));
  }

  TempDir dir_;
  const std::string config_ = dir_.Join("toolvfs.toml");
  const std::string project_ = "sqlite:" + dir_.Join("sessions.db") + "#agent";
};

TEST_F(SessionCliTest, TheFourToolsRunOnASqliteSession) {
  InitSession();
  ProcessResult created = Run("write_file", R"({"path":"a/b.txt","content":"one\n"})", project_);
  ASSERT_EQ(created.exit_code, 0) << created;
  EXPECT_THAT(created.out, HasSubstr(R"("action":"created","path":"a/b.txt","version":1)"));
  ProcessResult again = Run("write_file", R"({"path":"a/b.txt","content":"two\n"})", project_);
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_THAT(again.err, HasSubstr("use mode \"overwrite\" or \"append\""));
  ProcessResult stale = Run("write_file", R"({"path":"a/b.txt","content":"x","mode":"overwrite","expected_version":7})", project_);
  EXPECT_EQ(stale.exit_code, 1);
  EXPECT_THAT(stale.err, HasSubstr("expected version 7 but the file is at version 1"));
  // The [session] table's limit was recorded at init.
  ProcessResult too_long = Run("write_file", R"({"path":"c.txt","content":"12345678901"})", project_);
  EXPECT_THAT(too_long.err, HasSubstr("11 characters; at most 10"));

  ProcessResult read = Run("read_file", R"({"path":"a/b.txt"})", project_, {"--session", "agent"});
  ASSERT_EQ(read.exit_code, 0) << read;
  EXPECT_THAT(read.out, HasSubstr(R"("content":"one\n")"));
  ProcessResult listed = Run("list_directory", R"({"path":"a"})", project_);
  EXPECT_EQ(listed.out, R"({"path":"a","entries":[{"name":"b.txt","type":"file"}]})" "\n");
  ProcessResult deleted = Run("delete_file", R"({"path":"a"})", project_);
  ASSERT_EQ(deleted.exit_code, 0) << deleted;
  EXPECT_EQ(Run("read_file", R"({"path":"a/b.txt"})", project_).exit_code, 1);
}

// Host mounts from the command line: loaded at init under the allowed root,
// globs applied, re-applied after a reset; a path outside every root is
// refused and leaves no session.
TEST_F(SessionCliTest, MountsLoadAtInitAndAgainAfterAReset) {
  const std::string root = dir_.Join("host");
  WriteRealFile(root + "/app/main.py", "print('hi')\n");
  WriteRealFile(root + "/app/notes.txt", "not mounted\n");
  WriteRealFile(dir_.Join("secret.txt"), "outside the root\n");
  ProcessResult outside = Workspace({"init", "--session", "--allow-root", root, "--mount", dir_.Join("secret.txt")});
  EXPECT_EQ(outside.exit_code, 2) << outside;
  EXPECT_THAT(outside.err, HasSubstr("secret.txt"));
  ProcessResult init = Workspace({"init", "--session", "--allow-root", root, "--mount", root + "/app:src",
                                  "--include", "**/*.py"});
  ASSERT_EQ(init.exit_code, 0) << init;
  ProcessResult read = Run("read_file", R"({"path":"src/main.py"})", project_);
  ASSERT_EQ(read.exit_code, 0) << read;
  EXPECT_THAT(read.out, HasSubstr(R"("version":1)"));
  EXPECT_EQ(Run("read_file", R"({"path":"src/notes.txt"})", project_).exit_code, 1);
  ASSERT_EQ(Run("delete_file", R"({"path":"src"})", project_).exit_code, 0);
  ASSERT_EQ(Workspace({"reset"}).exit_code, 0);
  ProcessResult again = Run("read_file", R"({"path":"src/main.py"})", project_);
  EXPECT_EQ(again.exit_code, 0) << again;
}

TEST_F(SessionCliTest, ACallForAnotherSessionIsRefusedNamingBoth) {
  InitSession();
  ProcessResult refused = Run("write_file", R"({"path":"x.txt","content":"x"})", project_, {"--session", "other"});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_THAT(refused.err, HasSubstr("'other'"));
  EXPECT_THAT(refused.err, HasSubstr("'agent'"));
  EXPECT_EQ(Workspace({"ls", "-r", "--json"}).out, "[]\n");
}

TEST_F(SessionCliTest, TheFourToolsRunOnAThrowAwayMemorySession) {
  // One process per run: each memory: session starts empty.
  ProcessResult created = Run("write_file", R"({"path":"m.txt","content":"hi"})", "memory:", {"--session", "m"});
  ASSERT_EQ(created.exit_code, 0) << created;
  EXPECT_THAT(created.out, HasSubstr(R"("version":1)"));
  EXPECT_EQ(Run("list_directory", "{}", "memory:", {"--session", "m"}).out, R"({"path":"","entries":[]})" "\n");
  EXPECT_EQ(Run("read_file", R"({"path":"m.txt"})", "memory:", {"--session", "m"}).exit_code, 1);
  EXPECT_EQ(Run("delete_file", R"({"path":"m.txt"})", "memory:", {"--session", "m"}).exit_code, 1);
  // Without --session a memory: project keeps the generic builtins.
  EXPECT_EQ(Run("write_file", R"({"path":"m.txt","content":"hi"})", "memory:").out, "Wrote 2 bytes to 'm.txt'\n");
}

TEST_F(SessionCliTest, LsRecursiveJsonListsEveryFileWithItsMetadata) {
  InitSession();
  ASSERT_EQ(Run("write_file", R"({"path":"z.txt","content":"zz"})", project_).exit_code, 0);
  ASSERT_EQ(Run("write_file", R"({"path":"d/a.bin","content":"AAE=","encoding":"binary"})", project_).exit_code, 0);
  ProcessResult listed = Workspace({"ls", "--recursive", "--json"});
  ASSERT_EQ(listed.exit_code, 0) << listed;
  rapidjson::Document json;
  json.Parse(listed.out.c_str());
  ASSERT_TRUE(json.IsArray()) << listed.out;
  ASSERT_EQ(json.Size(), 2u);
  EXPECT_STREQ(json[0]["path"].GetString(), "d/a.bin");
  EXPECT_STREQ(json[0]["encoding"].GetString(), "binary");
  EXPECT_EQ(json[0]["size_bytes"].GetUint64(), 2u);
  EXPECT_STREQ(json[1]["path"].GetString(), "z.txt");
  EXPECT_EQ(json[1]["version"].GetUint64(), 1u);
  EXPECT_THAT(json[1]["created_at"].GetString(), MatchesRegex("20[0-9][0-9]-.*Z"));
  EXPECT_TRUE(json[1].HasMember("updated_at"));
  EXPECT_FALSE(json[1].HasMember("content"));
}

TEST_F(SessionCliTest, ResetEmptiesAndPromptGuides) {
  InitSession();
  ASSERT_EQ(Run("write_file", R"({"path":"a.txt","content":"a"})", project_).exit_code, 0);
  ProcessResult reset = Workspace({"reset"});
  ASSERT_EQ(reset.exit_code, 0) << reset;
  EXPECT_EQ(Workspace({"ls", "-r", "--json"}).out, "[]\n");
  ProcessResult prompt = Workspace({"prompt"});
  ASSERT_EQ(prompt.exit_code, 0) << prompt;
  EXPECT_THAT(prompt.out, HasSubstr("7. "));
  EXPECT_THAT(prompt.out, HasSubstr("at most 10 characters"));
}

TEST_F(SessionCliTest, MaterializeRunsACommandInTheFilesAndSyncsBack) {
  InitSession();
  ASSERT_EQ(Run("write_file", R"({"path":"in.txt","content":"hello"})", project_).exit_code, 0);
  // The command sees the files in its working directory, the same path in
  // TOOLVFS_WORKSPACE_DIR, and the session record holding that path.
  const std::string script =
      "test \"$PWD\" = \"$TOOLVFS_WORKSPACE_DIR\" || exit 9; "
      "'" + ToolvfsBinary() + "' workspace cat .toolvfs/session.json --project '" + project_ +
      "' | grep -qF \"\\\"materialized_path\\\":\\\"$TOOLVFS_WORKSPACE_DIR\\\"\" || exit 8; "
      "tr a-z A-Z < in.txt > out.txt; rm in.txt; exit 3";
  ProcessResult materialized = Toolvfs({"workspace", "materialize", "--project", project_, "--", "sh", "-c", script});
  EXPECT_EQ(materialized.exit_code, 3) << materialized;
  EXPECT_EQ(Workspace({"cat", "out.txt"}).out, "HELLO");
  EXPECT_EQ(Run("read_file", R"({"path":"in.txt"})", project_).exit_code, 1);
  // Released: the record no longer names a directory.
  EXPECT_THAT(Workspace({"cat", ".toolvfs/session.json"}).out, ::testing::Not(HasSubstr("materialized_path")));
}

TEST_F(SessionCliTest, InitSessionRefusesMountOptionsWithoutSessionAndBadConfig) {
  ProcessResult stray = Workspace({"init", "--include", "*.py"});
  EXPECT_EQ(stray.exit_code, 2);
  WriteRealFile(config_, "[session]\nmax_depth = 4\nunknown_key = 1\n");
  ProcessResult bad = Workspace({"init", "--session"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.err, HasSubstr("unknown key"));
  // A failed init leaves no workspace behind.
  WriteRealFile(config_, kConfig);
  InitSession();
}

TEST_F(SessionCliTest, SnapshotDiffRestoreAndLsShowOnlyTheSessionsFiles) {
  InitSession();
  ASSERT_EQ(Run("write_file", R"({"path":"a.txt","content":"one"})", project_).exit_code, 0);
  ASSERT_EQ(Workspace({"snapshot", "--label", "s1"}).exit_code, 0);
  ASSERT_EQ(Run("write_file", R"({"path":"a.txt","content":"two","mode":"overwrite"})", project_).exit_code, 0);
  ASSERT_EQ(Run("write_file", R"({"path":"b.txt","content":"b"})", project_).exit_code, 0);
  EXPECT_EQ(Workspace({"diff", "s1"}).out, "M  a.txt\nA  b.txt\n");
  EXPECT_EQ(Workspace({"ls"}).out.find(".toolvfs"), std::string::npos);
  ProcessResult restored = Workspace({"restore", "s1"});
  ASSERT_EQ(restored.exit_code, 0) << restored;
  ProcessResult read = Run("read_file", R"({"path":"a.txt"})", project_);
  EXPECT_THAT(read.out, HasSubstr(R"("version":1)"));
  EXPECT_THAT(read.out, HasSubstr(R"("content":"one")"));
  EXPECT_EQ(Run("read_file", R"({"path":"b.txt"})", project_).exit_code, 1);
}

// The snapshot tools end to end on a durable session: create, list, diff,
// restore, as a model calls them; an unknown id names the ones there are.
TEST_F(SessionCliTest, SnapshotToolsRunOnASqliteSession) {
  InitSession();
  ASSERT_EQ(Run("write_file", R"({"path":"a.txt","content":"one"})", project_).exit_code, 0);
  ProcessResult created = Run("snapshot_create", R"({"label":"first"})", project_, {"--session", "agent"});
  ASSERT_EQ(created.exit_code, 0) << created;
  EXPECT_THAT(created.out, HasSubstr(R"({"id":")"));
  EXPECT_THAT(created.out, HasSubstr(R"("label":"first")"));
  rapidjson::Document json;
  json.Parse(created.out.c_str());
  ASSERT_TRUE(json.IsObject()) << created.out;
  const std::string id = json["id"].GetString();
  ASSERT_EQ(Run("write_file", R"({"path":"a.txt","content":"two","mode":"overwrite"})", project_).exit_code, 0);
  ASSERT_EQ(Run("write_file", R"({"path":"b.txt","content":"b"})", project_).exit_code, 0);
  EXPECT_THAT(Run("snapshot_list", "{}", project_).out, HasSubstr(R"("label":"first")"));
  ProcessResult diff = Run("snapshot_diff", "{}", project_);
  ASSERT_EQ(diff.exit_code, 0) << diff;
  EXPECT_THAT(diff.out, HasSubstr(R"("to":"current","added":["b.txt"],"added_count":1,"modified":["a.txt"])"));
  ProcessResult unknown = Run("snapshot_restore", R"({"id":"999"})", project_);
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_THAT(unknown.err, HasSubstr("There is no snapshot '999'; the snapshots are " + id));
  ProcessResult restored = Run("snapshot_restore", R"({"id":")" + id + R"("})", project_);
  ASSERT_EQ(restored.exit_code, 0) << restored;
  EXPECT_THAT(restored.out, HasSubstr(R"("removed":1,"restored":0,"reverted":1)"));
  EXPECT_THAT(Run("read_file", R"({"path":"a.txt"})", project_).out, HasSubstr(R"("content":"one")"));
  EXPECT_EQ(Run("read_file", R"({"path":"b.txt"})", project_).exit_code, 1);
  // Another session's id changes nothing here either.
  ProcessResult other = Run("snapshot_create", "{}", project_, {"--session", "other"});
  EXPECT_EQ(other.exit_code, 1);
  EXPECT_THAT(other.err, HasSubstr("'other'"));
}

// On memory: each run is its own store: the tools answer, and a project
// without snapshots (a directory) gets the reason, naming it.
TEST_F(SessionCliTest, SnapshotToolsRunOnMemoryAndExplainADirectory) {
  EXPECT_EQ(Run("snapshot_list", "{}", "memory:", {"--session", "m"}).out, R"({"snapshots":[]})" "\n");
  ProcessResult created = Run("snapshot_create", R"({"label":"x"})", "memory:", {"--session", "m"});
  ASSERT_EQ(created.exit_code, 0) << created;
  EXPECT_THAT(created.out, HasSubstr(R"("label":"x")"));
  ProcessResult none = Run("snapshot_diff", "{}", "memory:");
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_THAT(none.err, HasSubstr("there are none yet"));
  ProcessResult directory = Run("snapshot_create", "{}", dir_.path());
  EXPECT_EQ(directory.exit_code, 1);
  EXPECT_THAT(directory.err, HasSubstr("does not keep snapshots"));
}

// `toolvfs tools --json` on a session workspace gives the session tools'
// schemas (what a call there is checked against), elsewhere the generic.
TEST_F(SessionCliTest, ToolsShowsTheSessionSchemasOnASessionWorkspace) {
  InitSession();
  ProcessResult session = Toolvfs({"tools", "--json", "--project", project_});
  ASSERT_EQ(session.exit_code, 0) << session;
  EXPECT_THAT(session.out, HasSubstr("expected_version"));
  EXPECT_THAT(session.out, HasSubstr("snapshot_restore"));
  ProcessResult table = Toolvfs({"tools", "--project", project_});
  EXPECT_THAT(table.out, HasSubstr("session workspace"));
  ProcessResult plain = Toolvfs({"tools", "--json", "--project", "memory:"});
  ASSERT_EQ(plain.exit_code, 0) << plain;
  EXPECT_THAT(plain.out, ::testing::Not(HasSubstr("expected_version")));
}

// `workspace init NAME --session --project STORE` (the issue's syntax);
// `#NAME` alone still works; both naming different workspaces is an error.
TEST_F(SessionCliTest, InitTakesTheNameAsAPositional) {
  const std::string file = "sqlite:" + dir_.Join("named.db");
  ProcessResult init = Toolvfs({"workspace", "init", "agent2", "--session", "--project", file});
  ASSERT_EQ(init.exit_code, 0) << init;
  EXPECT_THAT(init.out, HasSubstr("Created session workspace 'agent2'"));
  ProcessResult written = Run("write_file", R"({"path":"n.txt","content":"n"})", file + "#agent2", {"--session", "agent2"});
  EXPECT_EQ(written.exit_code, 0) << written;
  ProcessResult same = Toolvfs({"workspace", "init", "agent3", "--project", file + "#agent3"});
  EXPECT_EQ(same.exit_code, 0) << same;
  ProcessResult clash = Toolvfs({"workspace", "init", "agent4", "--session", "--project", file + "#other"});
  EXPECT_EQ(clash.exit_code, 2);
  EXPECT_THAT(clash.err, HasSubstr("NAME 'agent4' and --project"));
  EXPECT_THAT(clash.err, HasSubstr("give the name once"));
  EXPECT_EQ(Toolvfs({"workspace", "ls", "--project", file + "#agent4"}).exit_code, 2);
  ProcessResult nowhere = Toolvfs({"workspace", "init", "agent5", "--session"});
  EXPECT_EQ(nowhere.exit_code, 2);
  EXPECT_THAT(nowhere.err, HasSubstr("needs the store"));
  // A memory: session lives for the command: init checks it and its mounts.
  WriteRealFile(dir_.Join("host/app/x.py"), "x\n");
  ProcessResult memory = Toolvfs({"workspace", "init", "m1", "--session", "--project", "memory:", "--allow-root",
                                  dir_.Join("host"), "--mount", dir_.Join("host/app") + ":src"});
  ASSERT_EQ(memory.exit_code, 0) << memory;
  EXPECT_THAT(memory.out, HasSubstr("with 1 mounted file"));
}

TEST_F(SessionCliTest, RunSessionWithoutProjectUsesTheSessionStoreOfTheConfig) {
  WriteRealFile(config_, std::string(kConfig) + "store = \"sqlite:" + dir_.Join("sessions.db") + "\"\n");
  InitSession();
  ProcessResult written = Toolvfs({"run", "write_file", "--session", "agent", "--no-interaction", "--no-audit",
                                   "--args", R"({"path":"s.txt","content":"via config"})"});
  ASSERT_EQ(written.exit_code, 0) << written;
  EXPECT_EQ(Workspace({"cat", "s.txt"}).out, "via config");
}

}  // namespace
}  // namespace toolvfs
