// End-to-end tests of `toolvfs workspace` and of the other commands on a
// sqlite project (`--project sqlite:FILE#WORKSPACE`): the built binary runs
// as a subprocess against store files in a temporary directory.
#include <rapidjson/document.h>
#include <sys/stat.h>

#include <filesystem>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "project/test_util.h"
#include "subprocess.h"

namespace toolvfs {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::StartsWith;

namespace fs = std::filesystem;

ProcessResult Toolvfs(std::vector<std::string> arguments, const ProcessOptions& options = {}) {
  arguments.insert(arguments.begin(), ToolvfsBinary());
  return RunProcess(arguments, options);
}

rapidjson::Document ParseJson(const std::string& text) {
  rapidjson::Document document;
  document.Parse(text.c_str(), text.size());
  EXPECT_FALSE(document.HasParseError()) << text;
  return document;
}

// The strings of the array `key` of the object `json` (a failure, and
// none, when it has no such array).
std::vector<std::string> StringsOf(const rapidjson::Value& json, const char* key) {
  std::vector<std::string> strings;
  const bool present = json.IsObject() && json.HasMember(key) && json[key].IsArray();
  EXPECT_TRUE(present) << "no array " << key;
  if (!present) return strings;
  for (const auto& value : json[key].GetArray()) strings.emplace_back(value.GetString());
  return strings;
}

constexpr const char* kTimestampPattern = "20[0-9][0-9]-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-5][0-9]\\.[0-9][0-9][0-9]Z";

// A source directory to import:
//   src/a.py, src/sub/b.txt, docs/empty/ (an empty directory), .gitignore
//   app.log and build/out.o: ignored by .gitignore
//   .git/HEAD: git's state, left out unless --include-tool-state
//   link.py: a symbolic link, which a workspace cannot hold
class WorkspaceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(ToolvfsBinary().empty()) << "TOOLVFS_BINARY is not set";
    WriteSource("src/a.py", "print('alpha')\n");
    WriteSource("src/sub/b.txt", "bee\n");
    WriteSource(".gitignore", "*.log\nbuild/\n");
    WriteSource("app.log", "log line\n");
    WriteSource("build/out.o", "object\n");
    WriteSource(".git/HEAD", "ref: refs/heads/main\n");
    MakeDirectory(source_ + "/docs/empty");
    fs::create_symlink("src/a.py", source_ + "/link.py");
  }

  void WriteSource(const std::string& path, const std::string& content) { WriteRealFile(source_ + "/" + path, content); }

  // toolvfs workspace ARGS... --project PROJECT
  ProcessResult Workspace(std::vector<std::string> arguments, const std::string& project = "") {
    arguments.insert(arguments.begin(), "workspace");
    arguments.push_back("--project");
    arguments.push_back(project.empty() ? project_ : project);
    return Toolvfs(arguments);
  }

  void Init() {
    ProcessResult init = Workspace({"init", "--from", source_});
    ASSERT_EQ(init.exit_code, 0) << init;
  }

  // The paths `ls -r --json` lists.
  std::vector<std::string> ListedPaths() { return ListedPathsOf(project_); }

  std::vector<std::string> ListedPathsOf(const std::string& project) {
    ProcessResult listed = Workspace({"ls", "-r", "--json"}, project);
    EXPECT_EQ(listed.exit_code, 0) << listed;
    rapidjson::Document json = ParseJson(listed.out);
    std::vector<std::string> paths;
    if (!json.IsArray()) return paths;
    for (const auto& entry : json.GetArray()) paths.emplace_back(entry["path"].GetString());
    return paths;
  }

  TempDir dir_;
  const std::string source_ = dir_.Join("source");
  const std::string store_ = dir_.Join("store.db");
  const std::string project_ = "sqlite:" + store_ + "#main";
};

TEST_F(WorkspaceTest, InitFromImportsTheDirectoryLikeGrepWalksIt) {
  ProcessResult init = Workspace({"init", "--from", source_, "--json"});
  ASSERT_EQ(init.exit_code, 0) << init;
  EXPECT_THAT(init.err, StartsWith("toolvfs: workspace init: left out 1 entry of git's and toolvfs's own state"));
  rapidjson::Document json = ParseJson(init.out);
  EXPECT_EQ(std::string(json["workspace"].GetString()), "main");
  EXPECT_EQ(std::string(json["file"].GetString()), store_);
  EXPECT_EQ(json["files"].GetUint64(), 3u);        // .gitignore, src/a.py, src/sub/b.txt
  EXPECT_EQ(json["directories"].GetUint64(), 4u);  // docs, docs/empty, src, src/sub
  EXPECT_EQ(json["bytes"].GetUint64(), 15u + 4u + 13u);
  EXPECT_EQ(json["ignored"].GetUint64(), 2u);  // app.log, build/
  EXPECT_EQ(json["skipped"].GetUint64(), 1u);  // link.py
  EXPECT_THAT(StringsOf(json, "tool_state"), ElementsAre(".git"));

  EXPECT_THAT(ListedPaths(),
              ElementsAre(".gitignore", "docs", "docs/empty", "src", "src/a.py", "src/sub", "src/sub/b.txt"));
}

TEST_F(WorkspaceTest, InitSaysWhatItImportedInText) {
  ProcessResult init = Workspace({"init", "--from", source_});
  ASSERT_EQ(init.exit_code, 0) << init;
  EXPECT_EQ(init.out, "Created workspace 'main' in '" + store_ + "'; imported 3 files (32 bytes) and 4 directories from '" +
                          source_ +
                          "'; left out: 2 ignored, 1 skipped (symbolic links or names a workspace cannot hold)\n");
}

TEST_F(WorkspaceTest, InitIncludeIgnoredTakesIgnoredFilesButNeverGitState) {
  ProcessResult init = Workspace({"init", "--from", source_, "--include-ignored"});
  ASSERT_EQ(init.exit_code, 0) << init;
  EXPECT_THAT(ListedPaths(), ElementsAre(".gitignore", "app.log", "build", "build/out.o", "docs", "docs/empty", "src",
                                         "src/a.py", "src/sub", "src/sub/b.txt"));
}

TEST_F(WorkspaceTest, InitWithoutFromCreatesAnEmptyWorkspaceAndRefusesASecondInit) {
  ProcessResult init = Workspace({"init"});
  ASSERT_EQ(init.exit_code, 0) << init;
  EXPECT_EQ(init.out, "Created workspace 'main' in '" + store_ + "'\n");
  EXPECT_EQ(Workspace({"ls", "--json"}).out, "[]\n");

  ProcessResult again = Workspace({"init", "--from", source_});
  EXPECT_EQ(again.exit_code, 2);
  ExpectOneLineError(again);
  EXPECT_THAT(again.err, AllOf(StartsWith("toolvfs: workspace init: workspace 'main' already exists in '" + store_ + "'"),
                               HasSubstr("toolvfs workspace import")));
  EXPECT_EQ(Workspace({"ls", "--json"}).out, "[]\n");  // nothing was imported
}

TEST_F(WorkspaceTest, InitFromAMissingDirectoryCreatesNothing) {
  ProcessResult init = Workspace({"init", "--from", dir_.Join("nope")});
  EXPECT_EQ(init.exit_code, 2);
  ExpectOneLineError(init);
  EXPECT_THAT(init.err, HasSubstr("nope"));
  EXPECT_FALSE(fs::exists(store_));
}

TEST_F(WorkspaceTest, LsShowsKindVersionSizeAndTimes) {
  Init();
  ProcessResult listed = Workspace({"ls", "--json"});
  ASSERT_EQ(listed.exit_code, 0) << listed;
  rapidjson::Document json = ParseJson(listed.out);
  ASSERT_TRUE(json.IsArray());
  ASSERT_EQ(json.Size(), 3u);  // not recursive: .gitignore, docs, src
  const auto& file = json[0];
  EXPECT_EQ(std::string(file["path"].GetString()), ".gitignore");
  EXPECT_EQ(std::string(file["kind"].GetString()), "file");
  EXPECT_EQ(file["version"].GetUint64(), 1u);
  EXPECT_EQ(file["size_bytes"].GetUint64(), 13u);
  EXPECT_THAT(file["created_at"].GetString(), MatchesRegex(kTimestampPattern));
  EXPECT_THAT(file["updated_at"].GetString(), MatchesRegex(kTimestampPattern));
  const auto& directory = json[1];
  EXPECT_EQ(std::string(directory["kind"].GetString()), "dir");
  EXPECT_TRUE(directory["version"].IsNull());

  ProcessResult text = Workspace({"ls", "src/a.py"});
  ASSERT_EQ(text.exit_code, 0) << text;
  std::string row = "file  1        15    [^ ]+  [^ ]+  src/a\\.py";
  EXPECT_THAT(text.out, MatchesRegex("KIND  VERSION  SIZE  CREATED  +UPDATED  +PATH\n" + row + "\n"));

  ProcessResult missing = Workspace({"ls", "nope"});
  EXPECT_EQ(missing.exit_code, 2);
  ExpectOneLineError(missing);
  EXPECT_THAT(missing.err, AllOf(StartsWith("toolvfs: workspace ls: "), HasSubstr("'nope'")));
}

TEST_F(WorkspaceTest, CatPrintsTheContentRawOrAsJson) {
  WriteSource("bin.dat", std::string("\x00\xff\x01", 3));
  Init();
  ProcessResult cat = Workspace({"cat", "src/a.py"});
  EXPECT_EQ(cat.exit_code, 0) << cat;
  EXPECT_EQ(cat.out, "print('alpha')\n");

  ProcessResult binary = Workspace({"cat", "bin.dat"});
  EXPECT_EQ(binary.out, std::string("\x00\xff\x01", 3));
  EXPECT_EQ(Workspace({"cat", "bin.dat", "--json"}).out,
            R"({"path":"bin.dat","version":1,"size_bytes":3,"encoding":"base64","content":"AP8B"})" "\n");
  EXPECT_EQ(Workspace({"cat", "src/sub/b.txt", "--json"}).out,
            R"({"path":"src/sub/b.txt","version":1,"size_bytes":4,"encoding":"utf-8","content":"bee\n"})" "\n");

  ProcessResult directory = Workspace({"cat", "src"});
  EXPECT_EQ(directory.exit_code, 2);
  ExpectOneLineError(directory);
  EXPECT_THAT(directory.err, StartsWith("toolvfs: workspace cat: "));
}

TEST_F(WorkspaceTest, SnapshotRestoreAndDiffRoundTrip) {
  Init();
  ProcessResult first = Workspace({"snapshot", "--label", "before"});
  ASSERT_EQ(first.exit_code, 0) << first;
  ASSERT_THAT(first.out, MatchesRegex("[0-9]+\n"));
  std::string first_id = first.out.substr(0, first.out.size() - 1);

  // An import overwrites a.py (its version rises) and adds new.txt.
  std::string changes = dir_.Join("changes");
  WriteRealFile(changes + "/src/a.py", "print('changed')\n");
  WriteRealFile(changes + "/new.txt", "new\n");
  ProcessResult imported = Workspace({"import", changes});
  ASSERT_EQ(imported.exit_code, 0) << imported;
  EXPECT_EQ(Workspace({"cat", "src/a.py", "--json"}).out,
            R"({"path":"src/a.py","version":2,"size_bytes":17,"encoding":"utf-8","content":"print('changed')\n"})" "\n");

  EXPECT_EQ(Workspace({"diff", first_id}).out, "A  new.txt\nM  src/a.py\n");
  EXPECT_EQ(Workspace({"diff", "before", "--json"}).out,
            R"({"added":["new.txt"],"modified":["src/a.py"],"deleted":[]})" "\n");

  ProcessResult second = Workspace({"snapshot", "--json"});
  ASSERT_EQ(second.exit_code, 0) << second;
  rapidjson::Document second_json = ParseJson(second.out);
  std::string second_id = second_json["id"].GetString();
  EXPECT_TRUE(second_json["label"].IsNull());
  EXPECT_NE(second_id, first_id);

  ProcessResult restored = Workspace({"restore", first_id});
  ASSERT_EQ(restored.exit_code, 0) << restored;
  EXPECT_EQ(restored.out, "Restored " + project_ + " to snapshot '" + first_id + "'\n");
  EXPECT_EQ(Workspace({"cat", "src/a.py"}).out, "print('alpha')\n");
  EXPECT_EQ(Workspace({"ls", "new.txt"}).exit_code, 2);
  // The later snapshot still holds what the restore undid.
  EXPECT_EQ(Workspace({"diff", second_id}).out, "D  new.txt\nM  src/a.py\n");
  EXPECT_EQ(Workspace({"diff", first_id, second_id}).out, "A  new.txt\nM  src/a.py\n");
  EXPECT_EQ(Workspace({"diff", first_id}).out, "");

  // A snapshot opens read-only as a project of its own.
  EXPECT_EQ(Workspace({"cat", "new.txt"}, project_ + "@" + second_id).out, "new\n");
  for (const std::vector<std::string>& change : {std::vector<std::string>{"import", changes},
                                                 std::vector<std::string>{"snapshot"},
                                                 std::vector<std::string>{"restore", first_id}}) {
    ProcessResult refused = Workspace(change, project_ + "@" + second_id);
    EXPECT_EQ(refused.exit_code, 2) << change[0];
    ExpectOneLineError(refused);
    EXPECT_THAT(refused.err, HasSubstr("read-only")) << change[0];
  }
  EXPECT_EQ(Workspace({"cat", "src/a.py"}).out, "print('alpha')\n");
}

// The snapshots of `project` as "label" (or "-") per line, and each
// snapshot's tree as `ls -r` paths with `cat` contents of its files.
std::string HistoryOf(const std::function<ProcessResult(std::vector<std::string>, const std::string&)>& workspace,
                      const std::string& project) {
  ProcessResult listed = workspace({"snapshots", "--json"}, project);
  EXPECT_EQ(listed.exit_code, 0) << listed;
  rapidjson::Document snapshots = ParseJson(listed.out);
  std::string history;
  auto describe_state = [&](const std::string& state) {
    ProcessResult tree = workspace({"ls", "-r", "--json"}, state);
    EXPECT_EQ(tree.exit_code, 0) << tree;
    rapidjson::Document entries = ParseJson(tree.out);
    if (!entries.IsArray()) return;
    for (const auto& entry : entries.GetArray()) {
      const std::string path = entry["path"].GetString();
      const std::string kind = entry["kind"].GetString();
      history += "  " + kind + " " + path;
      if (kind == "file") history += " = " + workspace({"cat", path}, state).out;
      history += "\n";
    }
  };
  if (!snapshots.IsArray()) return history;
  for (const auto& snapshot : snapshots.GetArray()) {
    history += std::string("snapshot ") + (snapshot["label"].IsNull() ? "-" : snapshot["label"].GetString()) + "\n";
    describe_state(project + "@" + snapshot["id"].GetString());
  }
  history += "live\n";
  describe_state(project);
  return history;
}

TEST_F(WorkspaceTest, CopyMovesTheHistoryToAnotherStoreFileAndBack) {
  Init();
  ASSERT_EQ(Workspace({"snapshot", "--label", "imported"}).exit_code, 0);
  const std::string changes = dir_.Join("changes");
  WriteRealFile(changes + "/src/a.py", "print('changed')\n");
  WriteRealFile(changes + "/new/deep.txt", "deep\n");
  ASSERT_EQ(Workspace({"import", changes}).exit_code, 0);
  ASSERT_EQ(Workspace({"snapshot"}).exit_code, 0);  // no label
  ASSERT_EQ(Workspace({"snapshot", "--label", "third"}).exit_code, 0);
  const std::string changes_again = dir_.Join("changes-again");
  WriteRealFile(changes_again + "/src/a.py", "print('live')\n");
  ASSERT_EQ(Workspace({"import", changes_again}).exit_code, 0);
  auto workspace = [&](std::vector<std::string> arguments, const std::string& project) {
    return Workspace(std::move(arguments), project);
  };
  const std::string original = HistoryOf(workspace, project_);
  ASSERT_THAT(original, HasSubstr("dir docs/empty"));

  const std::string moved = "sqlite:" + dir_.Join("moved.db") + "#elsewhere";
  ProcessResult copied = Toolvfs({"workspace", "copy", project_, moved});
  ASSERT_EQ(copied.exit_code, 0) << copied;
  EXPECT_THAT(copied.out, StartsWith("Copied '" + project_ + "' to '" + moved + "': 3 snapshots, "));
  EXPECT_THAT(copied.out, HasSubstr("\n  snapshot 1 -> 1  imported\n  snapshot 2 -> 2\n  snapshot 3 -> 3  third\n"));
  EXPECT_EQ(HistoryOf(workspace, moved), original);
  EXPECT_EQ(HistoryOf(workspace, project_), original) << "the source is unchanged";
  ProcessResult source_snapshots = Workspace({"snapshots", "--json"});
  EXPECT_EQ(ParseJson(source_snapshots.out).Size(), 3u) << "the temporary snapshot is gone";

  const std::string back = "sqlite:" + dir_.Join("back.db") + "#main";
  ProcessResult returned = Toolvfs({"workspace", "copy", moved, back, "--json"});
  ASSERT_EQ(returned.exit_code, 0) << returned;
  rapidjson::Document json = ParseJson(returned.out);
  ASSERT_TRUE(json.IsObject());
  EXPECT_EQ(json["snapshots"].Size(), 3u);
  EXPECT_STREQ(json["snapshots"][0]["label"].GetString(), "imported");
  EXPECT_TRUE(json["snapshots"][1]["label"].IsNull());
  EXPECT_EQ(HistoryOf(workspace, back), original);

  // Into a workspace that holds something: refused, and left as it was.
  ProcessResult refused = Toolvfs({"workspace", "copy", project_, back});
  EXPECT_EQ(refused.exit_code, 2);
  ExpectOneLineError(refused);
  EXPECT_EQ(refused.err, "toolvfs: workspace copy: Cannot copy into '" + back + "': Workspace 'main' already exists "
                        "in the store '" + dir_.Join("back.db") + "'; copy into a new workspace\n");
  EXPECT_EQ(HistoryOf(workspace, back), original);

  // A missing source creates nothing.
  const std::string nowhere = "sqlite:" + dir_.Join("nowhere.db") + "#w";
  ProcessResult missing = Toolvfs({"workspace", "copy", nowhere, "sqlite:" + dir_.Join("new.db") + "#w"});
  EXPECT_EQ(missing.exit_code, 2);
  ExpectOneLineError(missing);
  EXPECT_THAT(missing.err, HasSubstr("does not exist"));
  EXPECT_FALSE(RealPathExists(dir_.Join("new.db")));

  // Snapshots cannot go into a directory; the live tree of one snapshot can.
  MakeDirectory(dir_.Join("plain"));
  ProcessResult into_directory = Toolvfs({"workspace", "copy", project_, dir_.Join("plain")});
  EXPECT_EQ(into_directory.exit_code, 2);
  EXPECT_THAT(into_directory.err, HasSubstr("keeps no snapshots"));
  ProcessResult one_state = Toolvfs({"workspace", "copy", project_ + "@third", dir_.Join("plain")});
  ASSERT_EQ(one_state.exit_code, 0) << one_state;
  EXPECT_EQ(ReadRealFile(dir_.Join("plain/new/deep.txt")), "deep\n");
  EXPECT_EQ(ReadRealFile(dir_.Join("plain/src/a.py")), "print('changed')\n");
}

// Runs `first` and `second` at once (each a toolvfs command), as two users
// would; their results in that order.
std::pair<ProcessResult, ProcessResult> RunTogether(const std::vector<std::string>& first,
                                                    const std::vector<std::string>& second) {
  ProcessResult other;
  std::thread thread([&] { other = Toolvfs(second); });
  ProcessResult mine = Toolvfs(first);
  thread.join();
  return {std::move(mine), std::move(other)};
}

// A copy used to check that the target did not exist, let the open create
// it, and delete it by name when the copy failed: a copy that lost the race
// found the winner's workspace "not empty" and deleted it, or both copied
// into it. Now the open creates it exclusively: one copy wins and the other
// is refused, touching nothing. A race is won by chance, so many rounds.
TEST_F(WorkspaceTest, TwoCopiesIntoOneNewWorkspaceAtOnceLeaveOneWinnerAndItsWholeCopy) {
  constexpr int kFiles = 300;
  constexpr int kRounds = 12;
  const std::string many = dir_.Join("many");
  for (int i = 0; i < kFiles; ++i) WriteRealFile(many + "/f" + std::to_string(i) + ".txt", std::to_string(i) + "\n");
  ASSERT_EQ(Workspace({"init", "--from", many}).exit_code, 0);
  for (int round = 0; round < kRounds; ++round) {
    const std::string target = "sqlite:" + store_ + "#t" + std::to_string(round);
    const std::vector<std::string> copy = {"workspace", "copy", project_, target};
    auto [first, second] = RunTogether(copy, copy);
    ASSERT_EQ((first.exit_code == 0) + (second.exit_code == 0), 1) << "round " << round << "\n" << first << second;
    const ProcessResult& lost = first.exit_code == 0 ? second : first;
    EXPECT_EQ(lost.exit_code, 2) << lost;
    ExpectOneLineError(lost);
    EXPECT_THAT(lost.err, AllOf(StartsWith("toolvfs: workspace copy: Cannot copy into '" + target + "': Workspace 't" +
                                           std::to_string(round) + "' already exists"),
                                HasSubstr("copy into a new workspace")));
    ProcessResult listed = Workspace({"ls", "--json"}, target);
    ASSERT_EQ(listed.exit_code, 0) << "round " << round << ": the winner's copy is gone\n" << listed;
    EXPECT_EQ(ParseJson(listed.out).Size(), static_cast<size_t>(kFiles)) << "round " << round;
  }
}

// The same for init: of two inits of one new workspace, one creates (and
// imports into) it and the other is refused; before, both "created" it.
TEST_F(WorkspaceTest, TwoInitsOfOneWorkspaceAtOnceLeaveOneWinner) {
  constexpr int kRounds = 12;
  for (int round = 0; round < kRounds; ++round) {
    const std::string project = "sqlite:" + store_ + "#w" + std::to_string(round);
    const std::vector<std::string> init = {"workspace", "init", "--from", source_, "--project", project};
    auto [first, second] = RunTogether(init, init);
    ASSERT_EQ((first.exit_code == 0) + (second.exit_code == 0), 1) << "round " << round << "\n" << first << second;
    const ProcessResult& lost = first.exit_code == 0 ? second : first;
    EXPECT_EQ(lost.exit_code, 2) << lost;
    ExpectOneLineError(lost);
    EXPECT_THAT(lost.err, HasSubstr("'w" + std::to_string(round) + "' already exists")) << lost;
    ProcessResult read = Workspace({"cat", "src/a.py"}, project);
    EXPECT_EQ(read.out, "print('alpha')\n") << "round " << round << "\n" << read;
  }
}

// A copy or init that failed after its open had created the sqlite file
// used to leave that file behind, empty. Now the command deletes the file
// it created, with its companions; a file that was there before stays, with
// its other workspaces. The source fails midway: past a file it copies, one
// larger than the 1 GiB a copy reads (sparse, so it costs no disk).
TEST_F(WorkspaceTest, AFailedCopyOrInitDeletesTheStoreFileItCreatedAndNoOther) {
  const std::string failing = dir_.Join("failing");
  WriteRealFile(failing + "/a.txt", "copied first\n");
  WriteRealFile(failing + "/z.big", "");
  fs::resize_file(failing + "/z.big", (uintmax_t{1} << 30) + 1);
  auto expect_failed = [](const ProcessResult& result) {
    EXPECT_EQ(result.exit_code, 2) << result;
    ExpectOneLineError(result);
    EXPECT_THAT(result.err, HasSubstr("z.big")) << result;
  };
  auto expect_no_store_file = [](const std::string& file) {
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
      EXPECT_FALSE(RealPathExists(file + suffix)) << file + suffix << " was left behind";
    }
  };

  const std::string fresh = dir_.Join("fresh.db");
  expect_failed(Toolvfs({"workspace", "copy", failing, "sqlite:" + fresh + "#w"}));
  expect_no_store_file(fresh);
  expect_failed(Workspace({"init", "--from", failing}, "sqlite:" + fresh + "#w"));
  expect_no_store_file(fresh);

  // Into a store that was there: the failed workspace goes, the file and
  // the workspace it held stay.
  Init();
  const std::vector<std::string> before = ListedPaths();
  expect_failed(Toolvfs({"workspace", "copy", failing, "sqlite:" + store_ + "#w"}));
  expect_failed(Workspace({"init", "--from", failing}, "sqlite:" + store_ + "#w"));
  ASSERT_TRUE(RealPathExists(store_));
  EXPECT_EQ(ListedPaths(), before);
  ProcessResult gone = Workspace({"ls"}, "sqlite:" + store_ + "#w");
  EXPECT_EQ(gone.exit_code, 2) << gone;
  EXPECT_THAT(gone.err, HasSubstr("workspace 'w' does not exist")) << gone;
}

TEST_F(WorkspaceTest, SnapshotsListAndSnapshotRmDeletes) {
  Init();
  EXPECT_EQ(Workspace({"snapshots"}).out, "No snapshots of " + project_ + ".\n");
  EXPECT_EQ(Workspace({"snapshots", "--json"}).out, "[]\n");
  ASSERT_EQ(Workspace({"snapshot", "--label", "one"}).exit_code, 0);
  ASSERT_EQ(Workspace({"snapshot"}).exit_code, 0);

  ProcessResult listed = Workspace({"snapshots", "--json"});
  ASSERT_EQ(listed.exit_code, 0) << listed;
  rapidjson::Document json = ParseJson(listed.out);
  ASSERT_TRUE(json.IsArray());
  ASSERT_EQ(json.Size(), 2u);
  EXPECT_EQ(std::string(json[0]["label"].GetString()), "one");
  EXPECT_TRUE(json[1]["label"].IsNull());
  EXPECT_THAT(json[0]["created_at"].GetString(), MatchesRegex(kTimestampPattern));
  std::string first_id = json[0]["id"].GetString();
  std::string second_id = json[1]["id"].GetString();

  ProcessResult text = Workspace({"snapshots"});
  EXPECT_THAT(text.out, MatchesRegex("ID +CREATED +LABEL\n" + first_id + " +[^ ]+  one\n" + second_id + " +[^ ]+  \n"));

  ProcessResult removed = Workspace({"snapshot-rm", first_id, "--json"});
  ASSERT_EQ(removed.exit_code, 0) << removed;
  EXPECT_EQ(removed.out, R"({"deleted":")" + first_id + "\"}\n");
  rapidjson::Document after = ParseJson(Workspace({"snapshots", "--json"}).out);
  ASSERT_EQ(after.Size(), 1u);
  EXPECT_EQ(std::string(after[0]["id"].GetString()), second_id);

  ProcessResult unknown = Workspace({"restore", first_id});
  EXPECT_EQ(unknown.exit_code, 2);
  ExpectOneLineError(unknown);
  EXPECT_THAT(unknown.err, AllOf(StartsWith("toolvfs: workspace restore: "), HasSubstr("'" + first_id + "'")));
  // The message names the workspace it looked in.
  EXPECT_EQ(unknown.err, "toolvfs: workspace restore: Snapshot '" + first_id + "' does not exist in '" + project_ +
                             "'\n");
}

TEST_F(WorkspaceTest, ExportWritesTheTreeAndRefusesANonEmptyDirectoryWithoutForce) {
  Init();
  std::string target = dir_.Join("exported");
  ProcessResult exported = Workspace({"export", target});
  ASSERT_EQ(exported.exit_code, 0) << exported;
  EXPECT_EQ(exported.out, "Exported 3 files (32 bytes) and 4 directories to '" + target + "'\n");
  EXPECT_EQ(ReadRealFile(target + "/src/a.py"), "print('alpha')\n");
  EXPECT_EQ(ReadRealFile(target + "/src/sub/b.txt"), "bee\n");
  EXPECT_EQ(ReadRealFile(target + "/.gitignore"), "*.log\nbuild/\n");
  EXPECT_TRUE(fs::is_directory(target + "/docs/empty"));
  EXPECT_FALSE(fs::exists(target + "/app.log"));

  WriteRealFile(target + "/src/a.py", "edited on disk\n");
  WriteRealFile(target + "/mine.txt", "keep me\n");
  ProcessResult refused = Workspace({"export", target});
  EXPECT_EQ(refused.exit_code, 2);
  ExpectOneLineError(refused);
  EXPECT_THAT(refused.err, AllOf(StartsWith("toolvfs: workspace export: '" + target + "' is not empty"),
                                 HasSubstr("--force")));
  EXPECT_EQ(ReadRealFile(target + "/src/a.py"), "edited on disk\n");

  ProcessResult forced = Workspace({"export", target, "--force", "--json"});
  ASSERT_EQ(forced.exit_code, 0) << forced;
  EXPECT_EQ(forced.out, R"({"directory":")" + target +
                            R"(","files":3,"directories":4,"bytes":32,"ignored":0,"skipped":0,"tool_state":[]})" "\n");
  EXPECT_EQ(ReadRealFile(target + "/src/a.py"), "print('alpha')\n");
  EXPECT_EQ(ReadRealFile(target + "/mine.txt"), "keep me\n");
}

TEST_F(WorkspaceTest, ExportWithAConflictWritesNothing) {
  Init();
  std::string target = dir_.Join("conflict");
  WriteRealFile(target + "/docs", "a file where a directory goes\n");
  WriteRealFile(target + "/.gitignore", "mine\n");
  ProcessResult exported = Workspace({"export", target, "--force"});
  EXPECT_EQ(exported.exit_code, 2);
  ExpectOneLineError(exported);
  EXPECT_THAT(exported.err, AllOf(HasSubstr("'" + target + "/docs'"), HasSubstr("nothing was written")));
  EXPECT_EQ(ReadRealFile(target + "/.gitignore"), "mine\n");  // written before docs/ if anything were
  EXPECT_FALSE(fs::exists(target + "/src"));
}

// The store file, its companions (by their place, whether they exist or
// not) and a hard link to it elsewhere (by the file it is) are never
// written: an agent's file named like the store would replace every
// workspace in it, a planted -journal or -wal would be replayed into it.
TEST_F(WorkspaceTest, ExportNeverWritesTheStoreFileItsCompanionsOrALinkToIt) {
  Init();
  const std::string link_directory = dir_.Join("linked");
  MakeDirectory(link_directory);
  fs::create_hard_link(store_, link_directory + "/copy.db");
  struct stat before;
  ASSERT_EQ(::stat(store_.c_str(), &before), 0);
  int agent = 0;
  for (const auto& [name, target] : {std::pair{std::string("store.db"), dir_.path()},
                                     std::pair{std::string("store.db-journal"), dir_.path()},
                                     std::pair{std::string("copy.db"), link_directory}}) {
    SCOPED_TRACE(name);
    const std::string crafted = dir_.Join("crafted-" + name);
    WriteRealFile(crafted + "/" + name, "crafted by an agent\n");
    const std::string project = "sqlite:" + store_ + "#agent" + std::to_string(++agent);
    ASSERT_EQ(Workspace({"init", "--from", crafted}, project).exit_code, 0);
    ProcessResult exported = Workspace({"export", target, "--force"}, project);
    EXPECT_EQ(exported.exit_code, 2);
    ExpectOneLineError(exported);
    EXPECT_THAT(exported.err, AllOf(HasSubstr("'" + target + "/" + name + "'"), HasSubstr("the store '" + store_ + "'"),
                                    HasSubstr("nothing was written")));
  }
  EXPECT_FALSE(fs::exists(dir_.Join("store.db-journal")));
  struct stat after;
  ASSERT_EQ(::stat(store_.c_str(), &after), 0);
  EXPECT_EQ(after.st_ino, before.st_ino);                             // not replaced
  EXPECT_EQ(Workspace({"cat", "src/a.py"}).out, "print('alpha')\n");  // nor written over
}

// init --from (and import) of the directory holding the store: its file,
// -wal and -shm (every workspace's data) stay out of the new workspace.
TEST_F(WorkspaceTest, ImportOfTheStoresDirectoryLeavesTheStoreFilesOut) {
  const std::string project_directory = dir_.Join("proj");
  const std::string store = project_directory + "/agents.db";
  MakeDirectory(project_directory);
  WriteRealFile(project_directory + "/notes.txt", "mine\n");
  const std::string secret = dir_.Join("secret");
  WriteRealFile(secret + "/alice-secret.txt", "alice's secret\n");
  ASSERT_EQ(Workspace({"init", "--from", secret}, "sqlite:" + store + "#alice").exit_code, 0);

  ProcessResult init = Workspace({"init", "--from", project_directory, "--json"}, "sqlite:" + store + "#bob");
  ASSERT_EQ(init.exit_code, 0) << init;
  EXPECT_THAT(StringsOf(ParseJson(init.out), "store_files"), ::testing::Contains("agents.db")) << init.out;
  EXPECT_THAT(init.err, AllOf(StartsWith("toolvfs: workspace init: left out "), HasSubstr("'agents.db'")));
  EXPECT_THAT(ListedPathsOf("sqlite:" + store + "#bob"), ElementsAre("notes.txt"));
}

// .git/, .toolvfs/ and toolvfs.toml, at any depth, are written only on
// request: in the directory exported, git would run the hooks and
// fsmonitor of whatever .git/config the workspace holds, and toolvfs would
// take its toolvfs.toml as the policy.
TEST_F(WorkspaceTest, ExportLeavesOutGitAndToolvfsStateUnlessAsked) {
  WriteSource("toolvfs.toml", "[tools]\n");
  WriteSource("src/.toolvfs/state", "x\n");
  const std::string target = dir_.Join("exported");
  ProcessResult exported = Workspace({"export", target, "--json"}, source_);
  ASSERT_EQ(exported.exit_code, 0) << exported;
  EXPECT_THAT(StringsOf(ParseJson(exported.out), "tool_state"), ElementsAre(".git", "src/.toolvfs", "toolvfs.toml"));
  EXPECT_THAT(exported.err,
              AllOf(StartsWith("toolvfs: workspace export: left out 3 entries of git's and toolvfs's"),
                    HasSubstr("--include-tool-state"), HasSubstr("'.git', 'src/.toolvfs', 'toolvfs.toml'")));
  EXPECT_FALSE(fs::exists(target + "/.git"));
  EXPECT_FALSE(fs::exists(target + "/toolvfs.toml"));
  EXPECT_FALSE(fs::exists(target + "/src/.toolvfs"));
  EXPECT_EQ(ReadRealFile(target + "/src/a.py"), "print('alpha')\n");

  const std::string everything = dir_.Join("everything");
  ProcessResult included = Workspace({"export", everything, "--include-tool-state", "--json"}, source_);
  ASSERT_EQ(included.exit_code, 0) << included;
  EXPECT_EQ(included.err, "");
  EXPECT_EQ(ReadRealFile(everything + "/.git/HEAD"), "ref: refs/heads/main\n");
  EXPECT_EQ(ReadRealFile(everything + "/toolvfs.toml"), "[tools]\n");
}

// Import takes the rule of export, both ways: .git, .toolvfs and
// toolvfs.toml, at any depth and in any case, only with
// --include-tool-state. Before, a nested toolvfs.toml (and a .GIT) went
// into the workspace, where an export --include-tool-state or a
// materialized copy would hand it back to toolvfs as policy.
TEST_F(WorkspaceTest, ImportLeavesOutGitAndToolvfsStateAtAnyDepthUnlessAsked) {
  Init();
  const std::string agent = dir_.Join("agent");
  WriteRealFile(agent + "/lib/toolvfs.toml", "[tools]\n");
  WriteRealFile(agent + "/lib/code.py", "pass\n");
  WriteRealFile(agent + "/vendor/.GIT/config", "[core]\n");
  WriteRealFile(agent + "/.toolvfs/state", "x\n");
  ProcessResult imported = Workspace({"import", agent, "--json"});
  ASSERT_EQ(imported.exit_code, 0) << imported;
  rapidjson::Document json = ParseJson(imported.out);
  EXPECT_THAT(StringsOf(json, "tool_state"), ElementsAre(".toolvfs", "lib/toolvfs.toml", "vendor/.GIT"));
  EXPECT_EQ(json["ignored"].GetUint64(), 0u);
  EXPECT_THAT(imported.err, AllOf(StartsWith("toolvfs: workspace import: left out 3 entries of git's and toolvfs's"),
                                  HasSubstr("--include-tool-state imports them"),
                                  HasSubstr("'.toolvfs', 'lib/toolvfs.toml', 'vendor/.GIT'")));
  EXPECT_NE(Workspace({"cat", "lib/toolvfs.toml"}).exit_code, 0);
  EXPECT_NE(Workspace({"cat", "vendor/.GIT/config"}).exit_code, 0);
  EXPECT_EQ(Workspace({"cat", "lib/code.py"}).out, "pass\n");

  ProcessResult included = Workspace({"import", agent, "--include-tool-state", "--json"});
  ASSERT_EQ(included.exit_code, 0) << included;
  EXPECT_EQ(included.err, "");
  EXPECT_EQ(Workspace({"cat", "lib/toolvfs.toml"}).out, "[tools]\n");
  EXPECT_EQ(Workspace({"cat", "vendor/.GIT/config"}).out, "[core]\n");
  EXPECT_EQ(Workspace({"cat", ".toolvfs/state"}).out, "x\n");
}

// An export refused after it created its missing DIR (here: the project
// is a directory and DIR lies inside it; or a conflict) removes that DIR
// again, so a refused export leaves nothing behind. A DIR that was there
// stays.
TEST_F(WorkspaceTest, ARefusedExportRemovesTheDirectoryItCreated) {
  const std::string inside = source_ + "/out";
  ProcessResult refused = Workspace({"export", inside}, source_);
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_THAT(refused.err, HasSubstr("inside the project"));
  EXPECT_FALSE(fs::exists(inside));

  const std::string existing = source_ + "/docs/empty";
  ProcessResult kept = Workspace({"export", existing}, source_);
  EXPECT_EQ(kept.exit_code, 2);
  EXPECT_TRUE(fs::is_directory(existing)) << "a DIR that was there stays";
}

// `workspace copy` into a directory goes export's way (before, it wrote
// through the fs store): git's and toolvfs's own state is left out and
// named, a missing DIR is created, a directory project is never copied
// into itself, and a refused copy removes the DIR it created.
TEST_F(WorkspaceTest, CopyIntoADirectoryWritesAsExportDoes) {
  WriteSource("toolvfs.toml", "[tools]\n");
  const std::string into_itself = source_ + "/copy";
  ProcessResult refused = Toolvfs({"workspace", "copy", source_, into_itself});
  EXPECT_EQ(refused.exit_code, 2) << refused;
  EXPECT_THAT(refused.err, HasSubstr("inside the project"));
  EXPECT_FALSE(fs::exists(into_itself)) << "the refused copy removes the directory it created";

  const std::string target = dir_.Join("copied");
  ProcessResult copied = Toolvfs({"workspace", "copy", source_, target, "--json"});
  ASSERT_EQ(copied.exit_code, 0) << copied;
  EXPECT_THAT(copied.err, AllOf(StartsWith("toolvfs: workspace copy: left out 2 entries of git's and toolvfs's"),
                                HasSubstr("'.git', 'toolvfs.toml'")));
  EXPECT_FALSE(fs::exists(target + "/toolvfs.toml"));
  EXPECT_FALSE(fs::exists(target + "/.git"));
  EXPECT_EQ(ReadRealFile(target + "/src/a.py"), "print('alpha')\n");
  EXPECT_TRUE(fs::is_directory(target + "/docs/empty"));
  rapidjson::Document json = ParseJson(copied.out);
  EXPECT_EQ(json["files_written"].GetUint64(), 5u);  // .gitignore, app.log, build/out.o, src/a.py, src/sub/b.txt
  EXPECT_EQ(json["symlinks_skipped"].GetUint64(), 1u);  // link.py

  // A target that is not empty is refused, and left as it was.
  ProcessResult again = Toolvfs({"workspace", "copy", source_, target});
  EXPECT_EQ(again.exit_code, 2);
  EXPECT_THAT(again.err, HasSubstr("is not empty; copy writes into a new or empty directory"));
}

// DIR is opened once, never through a symbolic link, and nothing below it
// is reached through one: a link named as DIR, or standing where a
// directory of the tree goes, leads nowhere.
TEST_F(WorkspaceTest, ExportNeverWritesThroughASymbolicLink) {
  Init();
  const std::string outside = dir_.Join("outside");
  MakeDirectory(outside);
  fs::create_directory_symlink(outside, dir_.Join("link"));
  ProcessResult exported = Workspace({"export", dir_.Join("link"), "--force"});
  EXPECT_EQ(exported.exit_code, 2);
  ExpectOneLineError(exported);
  EXPECT_THAT(exported.err, HasSubstr("symbolic link"));

  const std::string target = dir_.Join("target");
  MakeDirectory(target);
  fs::create_directory_symlink(outside, target + "/src");
  ProcessResult through = Workspace({"export", target, "--force"});
  EXPECT_EQ(through.exit_code, 2);
  EXPECT_THAT(through.err, HasSubstr("symbolic link"));
  EXPECT_TRUE(fs::is_empty(outside));
}

// --force replaces a file by a new one renamed over it: a hard link in DIR
// to a file elsewhere leaves that file alone, and the permission bits of
// the file replaced are kept.
TEST_F(WorkspaceTest, ExportForceReplacesFilesInsteadOfWritingThroughHardLinks) {
  Init();
  const std::string target = dir_.Join("target");
  WriteRealFile(dir_.Join("victim.txt"), "the victim's own content\n");
  fs::permissions(dir_.Join("victim.txt"), fs::perms::owner_read | fs::perms::owner_write | fs::perms::owner_exec);
  MakeDirectory(target + "/src");
  fs::create_hard_link(dir_.Join("victim.txt"), target + "/src/a.py");
  ProcessResult exported = Workspace({"export", target, "--force"});
  ASSERT_EQ(exported.exit_code, 0) << exported;
  EXPECT_EQ(ReadRealFile(target + "/src/a.py"), "print('alpha')\n");
  EXPECT_EQ(ReadRealFile(dir_.Join("victim.txt")), "the victim's own content\n");
  EXPECT_EQ(fs::status(target + "/src/a.py").permissions(),
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::owner_exec);
  for (const auto& entry : fs::directory_iterator(target + "/src")) {
    EXPECT_FALSE(entry.path().filename().string().starts_with(".toolvfs-tmp-")) << entry.path();
  }
}

// A directory project exported into itself or one of its directories
// would copy itself into itself, once more with each --force.
TEST_F(WorkspaceTest, ExportOfADirectoryProjectIntoItselfIsRefused) {
  for (const std::string& target : {source_ + "/out", source_}) {
    SCOPED_TRACE(target);
    ProcessResult exported = Workspace({"export", target, "--force"}, source_);
    EXPECT_EQ(exported.exit_code, 2);
    ExpectOneLineError(exported);
    EXPECT_THAT(exported.err, HasSubstr("inside the project"));
  }
  EXPECT_FALSE(fs::exists(source_ + "/out/src"));
}

TEST_F(WorkspaceTest, ImportAddsAndOverwritesAndRefusesAConflictWholly) {
  Init();
  std::string more = dir_.Join("more");
  WriteRealFile(more + "/src/sub/b.txt", "bee two\n");
  WriteRealFile(more + "/extra/c.txt", "sea\n");
  MakeDirectory(more + "/extra/empty");
  ProcessResult imported = Workspace({"import", more, "--json"});
  ASSERT_EQ(imported.exit_code, 0) << imported;
  EXPECT_EQ(imported.out,
            R"({"files":2,"directories":4,"bytes":12,"ignored":0,"skipped":0,"store_files":[],"tool_state":[]})" "\n");
  EXPECT_EQ(Workspace({"cat", "src/sub/b.txt"}).out, "bee two\n");
  EXPECT_EQ(Workspace({"cat", "src/a.py"}).out, "print('alpha')\n");  // untouched
  EXPECT_THAT(ListedPaths(), ElementsAre(".gitignore", "docs", "docs/empty", "extra", "extra/c.txt", "extra/empty",
                                         "src", "src/a.py", "src/sub", "src/sub/b.txt"));

  // A file where the workspace has a directory: refused before anything is written.
  std::string conflicting = dir_.Join("conflicting");
  WriteRealFile(conflicting + "/a_first.txt", "would come first\n");
  WriteRealFile(conflicting + "/src", "a file named like a directory\n");
  ProcessResult refused = Workspace({"import", conflicting});
  EXPECT_EQ(refused.exit_code, 2);
  ExpectOneLineError(refused);
  EXPECT_THAT(refused.err, AllOf(StartsWith("toolvfs: workspace import: "), HasSubstr("src'"),
                                 HasSubstr("a directory is in the way")));
  EXPECT_EQ(Workspace({"ls", "a_first.txt"}).exit_code, 2);
}

TEST_F(WorkspaceTest, RmDeletesTheWorkspaceAndGcGivesTheSpaceBack) {
  Init();
  // 2 MiB that do not compress, so the file visibly shrinks.
  std::string big(2 << 20, '\0');
  std::mt19937 random(17);
  for (char& byte : big) byte = static_cast<char>(random());
  std::string bulk = dir_.Join("bulk");
  WriteRealFile(bulk + "/big.bin", big);
  ASSERT_EQ(Workspace({"import", bulk}).exit_code, 0);
  ASSERT_EQ(Workspace({"init"}, "sqlite:" + store_ + "#other").exit_code, 0);

  ProcessResult removed = Workspace({"rm"});
  ASSERT_EQ(removed.exit_code, 0) << removed;
  EXPECT_EQ(removed.out, "Deleted workspace 'main' from '" + store_ + "'\n");

  ProcessResult listed = Workspace({"ls"});
  EXPECT_EQ(listed.exit_code, 2);
  ExpectOneLineError(listed);
  EXPECT_EQ(listed.err, "toolvfs: workspace ls: workspace 'main' does not exist in '" + store_ +
                            "'; create it with toolvfs workspace init\n");
  // The other workspace of the file is untouched.
  EXPECT_EQ(Workspace({"ls", "--json"}, "sqlite:" + store_ + "#other").out, "[]\n");

  ProcessResult collected = Workspace({"gc", "--json"});
  ASSERT_EQ(collected.exit_code, 0) << collected;
  rapidjson::Document json = ParseJson(collected.out);
  for (const char* key : {"entries", "contents", "bytes", "file_bytes_before", "file_bytes_after"}) {
    EXPECT_TRUE(json.HasMember(key) && json[key].IsUint64()) << key;
  }
  EXPECT_GT(json["file_bytes_before"].GetUint64(), uint64_t{2} << 20);
  EXPECT_LT(json["file_bytes_after"].GetUint64(), uint64_t{1} << 20);

  ProcessResult text = Workspace({"gc"});
  ASSERT_EQ(text.exit_code, 0) << text;
  EXPECT_THAT(text.out, MatchesRegex("Freed [0-9]+ old entry versions? and [0-9]+ contents? \\([^)]*\\) in '.*'; "
                                     "the file went from .* to .*\n"));

  ProcessResult again = Workspace({"rm"});
  EXPECT_EQ(again.exit_code, 2);
  ExpectOneLineError(again);
  EXPECT_THAT(again.err, AllOf(StartsWith("toolvfs: workspace rm: "), HasSubstr("'main'")));
}

TEST_F(WorkspaceTest, BadStoresAndProjectsAreOneLineErrors) {
  std::string not_sqlite = dir_.Join("notes.txt");
  WriteRealFile(not_sqlite, "this is not a database, just text that is long enough to have a header\n");
  for (const char* subcommand : {"ls", "init"}) {
    ProcessResult result = Workspace({subcommand}, "sqlite:" + not_sqlite + "#w");
    EXPECT_EQ(result.exit_code, 2) << subcommand;
    ExpectOneLineError(result);
    EXPECT_THAT(result.err, AllOf(HasSubstr(not_sqlite), HasSubstr("not a SQLite database"))) << subcommand;
  }
  EXPECT_EQ(ReadRealFile(not_sqlite), "this is not a database, just text that is long enough to have a header\n");

  ProcessResult missing_file = Workspace({"cat", "a"}, "sqlite:" + dir_.Join("absent.db") + "#w");
  EXPECT_EQ(missing_file.exit_code, 2);
  ExpectOneLineError(missing_file);
  EXPECT_THAT(missing_file.err, AllOf(HasSubstr("absent.db' does not exist"), HasSubstr("toolvfs workspace init")));
  EXPECT_FALSE(fs::exists(dir_.Join("absent.db")));  // a read never creates the store

  ASSERT_EQ(Workspace({"init"}).exit_code, 0);
  ProcessResult missing_workspace = Workspace({"snapshot"}, "sqlite:" + store_ + "#typo");
  EXPECT_EQ(missing_workspace.exit_code, 2);
  EXPECT_EQ(missing_workspace.err, "toolvfs: workspace snapshot: workspace 'typo' does not exist in '" + store_ +
                                       "'; create it with toolvfs workspace init\n");

  ProcessResult snapshot_uri = Workspace({"init"}, project_ + "@1");
  EXPECT_EQ(snapshot_uri.exit_code, 2);
  ExpectOneLineError(snapshot_uri);
  EXPECT_THAT(snapshot_uri.err, HasSubstr("names a snapshot"));

  // A directory project has no snapshots; rm and gc need a store file.
  ProcessResult unsupported = Workspace({"snapshot"}, source_);
  EXPECT_EQ(unsupported.exit_code, 2);
  ExpectOneLineError(unsupported);
  EXPECT_THAT(unsupported.err, AllOf(StartsWith("toolvfs: workspace snapshot: "), HasSubstr("does not keep snapshots")));
  for (const char* subcommand : {"rm", "gc", "init"}) {
    ProcessResult result = Workspace({subcommand}, source_);
    EXPECT_EQ(result.exit_code, 2) << subcommand;
    EXPECT_EQ(result.err, "toolvfs: workspace " + std::string(subcommand) +
                              ": needs a sqlite: or postgres:// project (--project sqlite:FILE#WORKSPACE or "
                              "postgres://...#WORKSPACE), got '" + source_ + "'\n");
  }
  EXPECT_TRUE(fs::exists(source_ + "/src/a.py"));
}

TEST_F(WorkspaceTest, LsCatAndExportWorkOnADirectoryProjectToo) {
  ProcessResult listed = Workspace({"ls", "src", "--json"}, source_);
  ASSERT_EQ(listed.exit_code, 0) << listed;
  rapidjson::Document json = ParseJson(listed.out);
  ASSERT_EQ(json.Size(), 2u);
  EXPECT_TRUE(json[0]["version"].IsNull());  // the fs store keeps no versions
  EXPECT_EQ(Workspace({"cat", "src/a.py"}, source_).out, "print('alpha')\n");

  // A link leaving the project is listed, without metadata, not an error.
  fs::create_symlink("/etc/hostname", source_ + "/outside");
  ProcessResult root = Workspace({"ls", "--json"}, source_);
  ASSERT_EQ(root.exit_code, 0) << root;
  rapidjson::Document listing = ParseJson(root.out);
  bool found = false;
  for (const auto& entry : listing.GetArray()) {
    if (std::string(entry["path"].GetString()) != "outside") continue;
    found = true;
    EXPECT_EQ(std::string(entry["kind"].GetString()), "symlink");
    EXPECT_TRUE(entry["updated_at"].IsNull());
  }
  EXPECT_TRUE(found) << root.out;
}

TEST(WorkspaceUsageTest, EverySubcommandHasHelpWithTheCommonOptions) {
  for (const char* subcommand : {"init", "ls", "cat", "snapshot", "snapshots", "restore", "snapshot-rm", "diff",
                                 "export", "import", "rm", "gc", "copy"}) {
    ProcessResult help = Toolvfs({"workspace", subcommand, "--help"});
    EXPECT_EQ(help.exit_code, 0) << subcommand;
    EXPECT_EQ(help.err, "") << subcommand;
    EXPECT_THAT(help.out, HasSubstr("Usage: toolvfs workspace " + std::string(subcommand))) << subcommand;
    EXPECT_THAT(help.out, AllOf(HasSubstr("--project"), HasSubstr("--json"))) << subcommand;
  }
}

TEST(WorkspaceUsageTest, MissingUnknownAndMalformedSubcommandsAreUsageErrors) {
  ProcessResult none = Toolvfs({"workspace"});
  EXPECT_EQ(none.exit_code, 2);
  ExpectOneLineError(none);
  EXPECT_THAT(none.err, AllOf(StartsWith("toolvfs: workspace: no subcommand given; expected one of: init, ls,"),
                              HasSubstr("(see toolvfs workspace --help)")));

  ProcessResult unknown = Toolvfs({"workspace", "--project", "sqlite:x.db#w", "frob"});
  EXPECT_EQ(unknown.exit_code, 2);
  ExpectOneLineError(unknown);
  EXPECT_THAT(unknown.err, StartsWith("toolvfs: workspace frob: unknown subcommand; expected one of: init, ls,"));

  ProcessResult bad_option = Toolvfs({"workspace", "ls", "--bogus"});
  EXPECT_EQ(bad_option.exit_code, 2);
  ExpectOneLineError(bad_option);
  EXPECT_THAT(bad_option.err, AllOf(StartsWith("toolvfs: workspace ls: "), HasSubstr("--bogus"),
                                    HasSubstr("(see toolvfs workspace ls --help)")));

  ProcessResult missing_argument = Toolvfs({"workspace", "restore"});
  EXPECT_EQ(missing_argument.exit_code, 2);
  EXPECT_THAT(missing_argument.err, StartsWith("toolvfs: workspace restore: ID is required"));
}

// ----- The other commands on a sqlite project -------------------------------------------

// A vfs tool (raw NDJSON, no SDK): reads input.txt through the host and
// writes its upper-cased content to out/vfs.txt.
constexpr const char* kVfsTool = R"(import json, sys
sys.stdin.readline()
def call(id, method, params):
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": id, "method": method, "params": params}) + "\n")
    sys.stdout.flush()
    return json.loads(sys.stdin.readline())
read = call(1, "fs.read", {"path": "input.txt"})
if "result" not in read:
    sys.exit("fs.read failed: " + json.dumps(read))
text = read["result"]["content"]
call(2, "fs.write", {"path": "out/vfs.txt", "content": text.upper()})
sys.stdout.write(json.dumps({"jsonrpc": "2.0", "method": "result", "params": {"content": "vfs read " + text.strip()}}) + "\n")
)";

// A stdio tool: works in its current directory (the materialized copy of
// the workspace) with plain file I/O.
constexpr const char* kStdioTool = R"(import os
with open("input.txt") as source:
    text = source.read()
with open(os.path.join("out", "stdio.txt"), "w") as target:
    target.write(text[::-1])
print("stdio read " + text.strip())
)";

class WorkspaceToolsTest : public WorkspaceTest {
 protected:
  void SetUp() override {
    WorkspaceTest::SetUp();
    std::string seed = dir_.Join("seed");
    WriteRealFile(seed + "/input.txt", "hello\n");
    MakeDirectory(seed + "/out");
    ASSERT_EQ(Workspace({"init", "--from", seed}).exit_code, 0);
    WriteRealFile(tools_ + "/vfs_tool.py", kVfsTool);
    WriteRealFile(tools_ + "/stdio_tool.py", kStdioTool);
    // Absolute commands: a stdio tool starts in the materialized copy.
    WriteRealFile(config_, "[tools.upper]\ncommand = \"python3 " + tools_ + "/vfs_tool.py\"\nruntime = \"vfs\"\n"
                           "[tools.upper.sandbox]\nfilesystem.allow = [\".\"]\nfilesystem.writable = [\"out\"]\n\n"
                           "[tools.reverse]\ncommand = \"python3 " + tools_ + "/stdio_tool.py\"\nruntime = \"stdio\"\n"
                           "[tools.reverse.sandbox]\nfilesystem.allow = [\".\"]\nfilesystem.writable = [\"out\"]\n");
  }

  ProcessResult Run(const std::string& tool) {
    return Toolvfs({"run", tool, "--project", project_, "--config", config_, "--no-interaction"},
                   ProcessOptions{.cwd = dir_.path()});
  }

  const std::string tools_ = dir_.Join("tools");
  const std::string config_ = dir_.Join("tools/toolvfs.toml");
};

TEST_F(WorkspaceToolsTest, RunServesAVfsToolFromTheWorkspace) {
  ProcessResult run = Run("upper");
  ASSERT_EQ(run.exit_code, 0) << run;
  EXPECT_EQ(run.out, "vfs read hello\n");
  EXPECT_EQ(Workspace({"cat", "out/vfs.txt"}).out, "HELLO\n");
  // A sqlite project has no directory: no audit log appears next to the store.
  EXPECT_FALSE(fs::exists(dir_.Join(".toolvfs")));
}

TEST_F(WorkspaceToolsTest, RunGivesAStdioToolAMaterializedCopyAndSyncsItBack) {
  ProcessResult run = Run("reverse");
  ASSERT_EQ(run.exit_code, 0) << run;
  EXPECT_EQ(run.out, "stdio read hello\n");
  EXPECT_EQ(Workspace({"cat", "out/stdio.txt"}).out, "\nolleh");
  EXPECT_EQ(Workspace({"cat", "out/stdio.txt", "--json"}).out,
            R"({"path":"out/stdio.txt","version":1,"size_bytes":6,"encoding":"utf-8","content":"\nolleh"})" "\n");
}

TEST_F(WorkspaceToolsTest, ToolsRunAgainstASnapshotAndTheLiveStateMovesOn) {
  ProcessResult snapshot = Workspace({"snapshot", "--label", "clean"});
  ASSERT_EQ(snapshot.exit_code, 0) << snapshot;
  ASSERT_EQ(Run("upper").exit_code, 0);
  EXPECT_EQ(Workspace({"diff", "clean"}).out, "A  out/vfs.txt\n");
  ASSERT_EQ(Workspace({"restore", "clean"}).exit_code, 0);
  EXPECT_EQ(Workspace({"diff", "clean"}).out, "");
}

TEST_F(WorkspaceToolsTest, ExecToolsAndCheckTakeASqliteProject) {
  // exec's stdio program works in the materialized copy, which is synced back.
  ProcessResult exec = Toolvfs({"exec", "--project", project_, "--no-interaction", "--allow-write", "out", "--runtime",
                                "stdio", "--", "sh", "-c", "cat input.txt > out/copied.txt; echo done"},
                               ProcessOptions{.cwd = dir_.path()});
  ASSERT_EQ(exec.exit_code, 0) << exec;
  EXPECT_EQ(Workspace({"cat", "out/copied.txt"}).out, "hello\n");

  // The config comes from --config: a store file has no directory to hold one.
  ProcessResult tools = Toolvfs({"tools", "--json", "--project", project_, "--config", config_});
  ASSERT_EQ(tools.exit_code, 0) << tools;
  rapidjson::Document json = ParseJson(tools.out);
  ASSERT_TRUE(json.IsArray());
  EXPECT_EQ(json.Size(), 2u);
  ProcessResult check = Toolvfs({"check", "--project", project_, "--config", config_});
  EXPECT_EQ(check.exit_code, 0) << check;
  ProcessResult no_config = Toolvfs({"tools", "--project", project_}, ProcessOptions{.cwd = dir_.path()});
  EXPECT_EQ(no_config.exit_code, 2);
  EXPECT_THAT(no_config.err, HasSubstr("'toolvfs.toml'"));  // looked up in the current directory
}

// A mistyped store file or workspace (docs/stores.md, "URIs"): a command
// that only reads refuses it and creates nothing.
TEST_F(WorkspaceToolsTest, ReadingCommandsNeverCreateAStoreFileOrAWorkspace) {
  const std::string typo_file = dir_.Join("wrok.db");
  for (std::vector<std::string> command : std::vector<std::vector<std::string>>{
           {"grep", "TODO"}, {"tools", "--config", config_}}) {
    command.insert(command.end(), {"--project", "sqlite:" + typo_file + "#agnet-7"});
    ProcessResult result = Toolvfs(command);
    EXPECT_EQ(result.exit_code, 2) << command[0];
    EXPECT_EQ(result.err, "toolvfs: --project: The store file '" + typo_file +
                              "' does not exist; create it with toolvfs workspace init --project sqlite:" + typo_file +
                              "#agnet-7\n");
    EXPECT_FALSE(fs::exists(typo_file)) << command[0];

    command.back() = "sqlite:" + store_ + "#agnet-7";
    result = Toolvfs(command);
    EXPECT_EQ(result.exit_code, 2) << command[0];
    EXPECT_EQ(result.err, "toolvfs: --project: Workspace 'agnet-7' does not exist in the store '" + store_ +
                              "'; create it with toolvfs workspace init --project sqlite:" + store_ + "#agnet-7\n");
  }
  ProcessResult typo_workspace = Workspace({"ls"}, "sqlite:" + store_ + "#agnet-7");
  EXPECT_THAT(typo_workspace.err, HasSubstr("workspace 'agnet-7' does not exist"));  // still not there
}

// A command that may write creates what is missing, and says so once.
TEST_F(WorkspaceToolsTest, WritingCommandsCreateOnFirstUseAndSaySo) {
  const std::string new_file = dir_.Join("work.db");
  auto exec = [&](const std::string& project) {
    return Toolvfs({"exec", "--project", project, "--no-interaction", "--runtime", "stdio", "--", "sh", "-c",
                    "echo done"},
                   ProcessOptions{.cwd = dir_.path()});
  };
  ProcessResult first = exec("sqlite:" + new_file + "#agent-7");
  EXPECT_EQ(first.exit_code, 0) << first;
  EXPECT_EQ(first.out, "done\n");
  EXPECT_EQ(first.err, "toolvfs: --project: created workspace 'agent-7' in the new store file '" + new_file + "'\n");

  ProcessResult second = exec("sqlite:" + new_file + "#agent-8");
  EXPECT_EQ(second.exit_code, 0) << second;
  EXPECT_EQ(second.err, "toolvfs: --project: created workspace 'agent-8' in '" + new_file + "'\n");

  ProcessResult again = exec("sqlite:" + new_file + "#agent-7");
  EXPECT_EQ(again.exit_code, 0) << again;
  EXPECT_EQ(again.err, "");

  // run too: the vfs tool then finds no input.txt, but the note came first.
  ProcessResult run = Toolvfs({"run", "upper", "--project", "sqlite:" + new_file + "#agent-9", "--config", config_,
                               "--no-interaction"},
                              ProcessOptions{.cwd = dir_.path()});
  EXPECT_THAT(run.err, StartsWith("toolvfs: --project: created workspace 'agent-9' in '" + new_file + "'\n"));
}

TEST_F(WorkspaceToolsTest, GrepSearchesASqliteProject) {
  ProcessResult grep = Toolvfs({"grep", "hel+o", "--project", project_});
  EXPECT_EQ(grep.exit_code, 0) << grep;
  EXPECT_EQ(grep.out, "input.txt:1:hello\n");
  ProcessResult none = Toolvfs({"grep", "absent text", "--project", project_});
  EXPECT_EQ(none.exit_code, 1);
  ProcessResult json = Toolvfs({"grep", "hello", "--json", "--project", project_});
  EXPECT_EQ(json.out,
            R"({"path":"input.txt","lines":[{"line_number":1,"content":"hello","is_match":true,)"
            R"("matches":[{"start":0,"end":5}]}]})" "\n" R"({"truncated":false})" "\n");
}

}  // namespace
}  // namespace toolvfs
