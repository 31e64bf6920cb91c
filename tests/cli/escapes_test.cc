// End-to-end tests of the escapes of the "Close the escapes" issue that the
// policy closes (items 5, 6 and 7): the real toolvfs binary runs small
// python3 tools that speak raw NDJSON, in a temporary project, and the
// tests look at what the tool got and at what changed on disk.
//   - The project's own toolvfs.toml, and the config in use where it lies in
//     the project, are sensitive under every command; `.toolvfs` linking out
//     of the project is refused rather than written through.
//   - Nothing in or named `.git` is writable, by any method, through the
//     OS sandbox's grants too.
//   - process.run never runs a program from a PATH entry inside the project.
#include <rapidjson/document.h>
#include <sys/stat.h>

#include <filesystem>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "project/test_util.h"
#include "subprocess.h"

namespace toolvfs {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

namespace fs = std::filesystem;

// Sends each request of its arguments ([method, params], ...) and reports,
// for each, [code, text]: the error code and message, or 0 and the result
// as JSON.
constexpr const char* kProbe = R"(import json, sys
def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()
init = json.loads(sys.stdin.readline())
answers = []
for index, (method, params) in enumerate(init["params"]["tool"]["arguments"]["requests"]):
    send({"jsonrpc": "2.0", "id": index, "method": method, "params": params})
    answer = json.loads(sys.stdin.readline())
    if "error" in answer:
        answers.append([answer["error"]["code"], answer["error"]["message"]])
    else:
        answers.append([0, json.dumps(answer["result"], sort_keys=True)])
send({"jsonrpc": "2.0", "method": "result", "params": {"content": json.dumps(answers)}})
)";

constexpr const char* kConfig = "# the project's config\n[tools.probe]\ncommand = \"python3 probe.py\"\nruntime = \"vfs\"\n";
constexpr const char* kNoRequests = R"({"requests": []})";

struct Answer {
  int code = -1;
  std::string text;
};

class EscapesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(ToolvfsBinary().empty()) << "TOOLVFS_BINARY is not set";
    Write("probe.py", kProbe);
    Write("toolvfs.toml", kConfig);
  }

  void Write(const std::string& path, const std::string& content) { WriteRealFile(dir_.Join(path), content); }
  std::string Read(const std::string& path) { return ReadRealFile(dir_.Join(path)); }
  bool Exists(const std::string& path) { return RealPathExists(dir_.Join(path)); }

  void WriteExecutable(const std::string& path, const std::string& content) {
    Write(path, content);
    ASSERT_EQ(::chmod(dir_.Join(path).c_str(), 0755), 0) << path;
  }

  // toolvfs ARGS... in the project directory.
  ProcessResult Toolvfs(std::vector<std::string> arguments, std::vector<std::string> set_env = {}) {
    arguments.insert(arguments.begin(), ToolvfsBinary());
    ProcessOptions options;
    options.cwd = root_;
    options.set_env = std::move(set_env);
    options.deadline = std::chrono::seconds(60);
    return RunProcess(arguments, options);
  }

  // What the probe reported for each request of `run`.
  static std::vector<Answer> Answers(const ProcessResult& run) {
    std::vector<Answer> answers;
    EXPECT_EQ(run.exit_code, 0) << run;
    rapidjson::Document document;
    document.Parse(run.out.c_str());
    if (document.HasParseError() || !document.IsArray()) {
      ADD_FAILURE() << "the probe printed no answers:\n" << run;
      return answers;
    }
    for (const auto& answer : document.GetArray()) {
      answers.push_back({answer[0].GetInt(), answer[1].GetString()});
    }
    return answers;
  }

  // `toolvfs exec ... python3 probe.py` sending `requests` (a JSON array).
  std::vector<Answer> Probe(std::vector<std::string> options, const std::string& requests,
                            std::vector<std::string> set_env = {}) {
    std::vector<std::string> arguments = {"exec", "--no-interaction"};
    arguments.insert(arguments.end(), options.begin(), options.end());
    const std::string call = R"({"requests": )" + requests + "}";
    arguments.insert(arguments.end(), {"--args", call, "--", "python3", "probe.py"});
    return Answers(Toolvfs(arguments, std::move(set_env)));
  }

  TempDir dir_;
  const std::string root_ = dir_.path();
};

// --- item 5: the project's config --------------------------------------------------

TEST_F(EscapesTest, ExecToolCanNeitherReadNorWriteTheProjectConfig) {
  std::vector<Answer> answers = Probe({"--allow-write", "."}, R"([
      ["fs.read", {"path": "toolvfs.toml"}],
      ["fs.write", {"path": "toolvfs.toml", "content": "[tools.probe.sandbox]\n"}],
      ["fs.write", {"path": "toolvfs.toml", "content": "x", "mode": "append"}],
      ["fs.delete", {"path": "toolvfs.toml"}],
      ["fs.rename", {"from": "probe.py", "to": "toolvfs.toml", "overwrite": true}],
      ["fs.write", {"path": "other.txt", "content": "fine"}]])");
  ASSERT_EQ(answers.size(), 6u);
  for (size_t index = 0; index < 5; ++index) {
    EXPECT_EQ(answers[index].code, -32001) << index << ": " << answers[index].text;
    EXPECT_THAT(answers[index].text, HasSubstr("sensitive path \"toolvfs.toml\"")) << index;
  }
  EXPECT_EQ(answers[5].code, 0) << answers[5].text;
  EXPECT_EQ(Read("toolvfs.toml"), kConfig);
}

TEST_F(EscapesTest, RunWithAConfigElsewhereStillProtectsTheProjectConfig) {
  // A config outside the project: the project's own stays sensitive.
  TempDir elsewhere;
  WriteRealFile(elsewhere.Join("probe.py"), kProbe);
  WriteRealFile(elsewhere.Join("tools.toml"), R"([tools.probe]
command = "python3 probe.py"
runtime = "vfs"
[tools.probe.sandbox]
filesystem.allow = ["."]
filesystem.writable = true
)");
  const std::string requests = R"({"requests": [
      ["fs.write", {"path": "toolvfs.toml", "content": "[tools.probe.sandbox]\n"}],
      ["fs.read", {"path": "toolvfs.toml"}],
      ["fs.write", {"path": "conf/tools.toml", "content": "[tools.x]\n"}],
      ["fs.write", {"path": "other.txt", "content": "fine"}]]})";
  std::vector<Answer> answers = Answers(Toolvfs({"run", "--no-interaction", "--project", root_, "--config",
                                                 elsewhere.Join("tools.toml"), "probe", "--args", requests}));
  ASSERT_EQ(answers.size(), 4u);
  EXPECT_EQ(answers[0].code, -32001) << answers[0].text;
  EXPECT_EQ(answers[1].code, -32001) << answers[1].text;
  EXPECT_EQ(answers[2].code, 0) << answers[2].text;
  EXPECT_EQ(answers[3].code, 0) << answers[3].text;
  EXPECT_EQ(Read("toolvfs.toml"), kConfig);

  // A config elsewhere in the project: both it and toolvfs.toml.
  WriteRealFile(dir_.Join("conf/tools.toml"), ReadRealFile(elsewhere.Join("tools.toml")));
  Write("conf/probe.py", kProbe);
  answers = Answers(Toolvfs({"run", "--no-interaction", "--config", "conf/tools.toml", "probe", "--args",
                             R"({"requests": [
      ["fs.write", {"path": "toolvfs.toml", "content": "[tools.probe.sandbox]\n"}],
      ["fs.write", {"path": "conf/tools.toml", "content": "[tools.x]\n"}]]})"}));
  ASSERT_EQ(answers.size(), 2u);
  EXPECT_EQ(answers[0].code, -32001) << answers[0].text;
  EXPECT_EQ(answers[1].code, -32001) << answers[1].text;
  EXPECT_EQ(Read("toolvfs.toml"), kConfig);
}

TEST_F(EscapesTest, AProjectConfigThatIsALinkIsProtectedWhereItLeads) {
  // toolvfs.toml -> conf/real.toml: a write of the target changes the config.
  fs::remove(dir_.Join("toolvfs.toml"));
  Write("conf/real.toml", kConfig);
  fs::create_symlink("conf/real.toml", dir_.Join("toolvfs.toml"));
  std::vector<Answer> answers = Probe({"--allow-write", "."}, R"([
      ["fs.write", {"path": "conf/real.toml", "content": "[tools.probe.sandbox]\n"}],
      ["fs.write", {"path": "toolvfs.toml", "content": "[tools.probe.sandbox]\n"}]])");
  ASSERT_EQ(answers.size(), 2u);
  EXPECT_EQ(answers[0].code, -32001) << answers[0].text;
  EXPECT_EQ(answers[1].code, -32001) << answers[1].text;
  EXPECT_EQ(Read("conf/real.toml"), kConfig);
}

TEST_F(EscapesTest, AStdioToolCannotWriteTheProjectConfigOrGitThroughTheSandbox) {
  Write(".git/HEAD", "ref: refs/heads/main\n");
  Write(".git/commondir", "..\n");
  Write(".git/info/exclude", "# excluded\n");
  Write("sub/.git", "gitdir: ../.git\n");
  Write("src/a.txt", "a\n");
  // Each write is tried on its own; the shell reports which succeeded.
  const std::string script =
      "for f in toolvfs.toml .git/commondir .git/info/exclude .git/HEAD sub/.git src/a.txt; do "
      "(echo pwned >> \"$f\") 2>/dev/null && echo \"wrote $f\"; done; "
      "(mkdir .git/worktrees) 2>/dev/null && echo 'made .git/worktrees'; true";
  ProcessResult run = Toolvfs({"exec", "--no-interaction", "--runtime", "stdio", "--allow-write", ".", "--", "sh",
                               "-c", script});
  ASSERT_EQ(run.exit_code, 0) << run;
  EXPECT_EQ(run.out, "wrote src/a.txt\n") << run;
  EXPECT_EQ(Read("toolvfs.toml"), kConfig);
  EXPECT_EQ(Read(".git/commondir"), "..\n");
  EXPECT_EQ(Read(".git/info/exclude"), "# excluded\n");
  EXPECT_EQ(Read("sub/.git"), "gitdir: ../.git\n");
  EXPECT_FALSE(Exists(".git/worktrees"));
  EXPECT_EQ(Read("src/a.txt"), "a\npwned\n");
}

TEST_F(EscapesTest, AProcessRunChildCannotWriteTheProjectConfigOrGitThroughTheSandbox) {
  Write(".git/commondir", "..\n");
  Write("vendor/lib/.git/config", "[core]\n");
  Write("vendor/lib/.git/HEAD", "ref: x\n");
  Write("src/a.txt", "a\n");
  // No double quotes: the script goes into the JSON of the request as it is.
  const std::string script =
      "for f in toolvfs.toml .git/commondir vendor/lib/.git/HEAD src/a.txt; do "
      "(echo pwned >> $f) 2>/dev/null && echo wrote $f; done; true";
  std::vector<Answer> answers =
      Probe({"--allow-write", ".", "--allow-cmd", "sh"},
            R"([["process.run", {"program": "sh", "args": ["-c", ")" + script + R"("]}]])");
  ASSERT_EQ(answers.size(), 1u);
  ASSERT_EQ(answers[0].code, 0) << answers[0].text;
  EXPECT_THAT(answers[0].text, AllOf(HasSubstr(R"("stdout": "wrote src/a.txt\n")"), Not(HasSubstr("wrote ."))));
  EXPECT_EQ(Read("toolvfs.toml"), kConfig);
  EXPECT_EQ(Read(".git/commondir"), "..\n");
  EXPECT_EQ(Read("vendor/lib/.git/HEAD"), "ref: x\n");
  EXPECT_EQ(Read("src/a.txt"), "a\npwned\n");
}

TEST_F(EscapesTest, AToolvfsDirectoryLinkingOutOfTheProjectIsNeverWrittenThrough) {
  TempDir outside;
  fs::create_symlink(outside.path(), dir_.Join(".toolvfs"));
  ProcessResult run = Toolvfs({"exec", "--args", kNoRequests, "--", "python3", "probe.py"});
  EXPECT_EQ(run.exit_code, 2) << run;
  ExpectOneLineError(run);
  EXPECT_THAT(run.err, AllOf(StartsWith("toolvfs: exec: Cannot open log file './.toolvfs/audit.jsonl': "),
                             HasSubstr("'./.toolvfs' is a symbolic link"), HasSubstr("--no-audit")));
  // The project named as an absolute directory is named so in the message.
  ProcessResult named = Toolvfs({"exec", "--project", root_, "--args", kNoRequests, "--", "python3", "probe.py"});
  EXPECT_EQ(named.exit_code, 2) << named;
  EXPECT_THAT(named.err, HasSubstr("'" + root_ + "/.toolvfs' is a symbolic link"));
  EXPECT_TRUE(fs::is_empty(outside.path()));

  // The same for run, and for a link one level further down.
  fs::remove(dir_.Join(".toolvfs"));
  fs::create_directory(dir_.Join(".toolvfs"));
  fs::create_symlink(outside.Join("audit.jsonl"), dir_.Join(".toolvfs/audit.jsonl"));
  ProcessResult linked_file = Toolvfs({"run", "probe", "--args", kNoRequests});
  EXPECT_EQ(linked_file.exit_code, 2) << linked_file;
  ExpectOneLineError(linked_file);
  EXPECT_THAT(linked_file.err, HasSubstr("symbolic link"));
  EXPECT_TRUE(fs::is_empty(outside.path()));

  // --audit PATH elsewhere and --no-audit still run.
  EXPECT_EQ(Toolvfs({"exec", "--no-audit", "--args", kNoRequests, "--", "python3", "probe.py"}).exit_code, 0);
  EXPECT_EQ(Toolvfs({"exec", "--audit", outside.Join("log.jsonl"), "--args", kNoRequests, "--", "python3",
                     "probe.py"})
                .exit_code,
            0);
  EXPECT_TRUE(fs::exists(outside.Join("log.jsonl")));
}

// --- item 6: git internals ---------------------------------------------------------

TEST_F(EscapesTest, NoMethodWritesGitInternalsEvenWhenARuleNamesThem) {
  Write(".git/HEAD", "ref: refs/heads/main\n");
  Write(".git/commondir", "..\n");
  Write("vendor/.git/HEAD", "ref: x\n");
  Write("a.txt", "a\n");
  Write("evil/config", "[core]\n\tfsmonitor = touch /tmp/pwned\n");
  const std::string requests = R"([
      ["fs.write", {"path": ".git/commondir", "content": "/tmp/evil"}],
      ["fs.write", {"path": ".git/commondir", "content": "x", "mode": "append"}],
      ["fs.write", {"path": ".git/info/exclude", "content": "x", "mode": "create"}],
      ["fs.write", {"path": ".git/worktrees/w/commondir", "content": "x"}],
      ["fs.write", {"path": ".git/modules/m/config", "content": "x"}],
      ["fs.write", {"path": "sub/.git", "content": "gitdir: /tmp/evil"}],
      ["fs.write", {"path": ".GIT/config", "content": "x"}],
      ["fs.delete", {"path": ".git/HEAD"}],
      ["fs.delete", {"path": "vendor", "recursive": true}],
      ["fs.rename", {"from": ".git/HEAD", "to": "HEAD"}],
      ["fs.rename", {"from": "a.txt", "to": ".git/commondir", "overwrite": true}],
      ["fs.rename", {"from": "evil", "to": "sub/.git"}],
      ["fs.write", {"path": "b.txt", "content": "fine"}],
      ["fs.read", {"path": ".git/HEAD"}]])";
  for (std::vector<std::string> options : {std::vector<std::string>{"--allow-write", "."},
                                           std::vector<std::string>{"--allow-write", ".", "--allow-write", ".git",
                                                                    "--allow-write", "sub/.git"}}) {
    std::vector<Answer> answers = Probe(options, requests);
    ASSERT_EQ(answers.size(), 14u);
    for (size_t index = 0; index < 12; ++index) {
      EXPECT_EQ(answers[index].code, -32001) << index << ": " << answers[index].text;
      EXPECT_THAT(answers[index].text, HasSubstr("git internals")) << index;
    }
    EXPECT_EQ(answers[12].code, 0) << answers[12].text;
    EXPECT_EQ(answers[13].code, 0) << answers[13].text;
  }
  EXPECT_EQ(Read(".git/commondir"), "..\n");
  EXPECT_EQ(Read(".git/HEAD"), "ref: refs/heads/main\n");
  EXPECT_EQ(Read("vendor/.git/HEAD"), "ref: x\n");
  EXPECT_EQ(Read("a.txt"), "a\n");
  EXPECT_FALSE(Exists(".git/info"));
  EXPECT_FALSE(Exists(".git/worktrees"));
  EXPECT_FALSE(Exists(".git/modules"));
  EXPECT_FALSE(Exists("sub"));
  EXPECT_TRUE(Exists("evil/config"));
}

// --- item 7: process.run and PATH --------------------------------------------------

TEST_F(EscapesTest, ProcessRunNeverRunsAProgramFromAPathEntryInsideTheProject) {
  // A project script the tool may overwrite (fs.write keeps its mode bits).
  WriteExecutable("bin/hello", "#!/bin/sh\necho original\n");
  WriteExecutable("hello", "#!/bin/sh\necho original\n");
  // A directory outside the project that links into it.
  TempDir outside;
  const std::string link = outside.Join("bin");
  fs::create_symlink(dir_.Join("bin"), link);
  const std::string requests = R"([
      ["fs.write", {"path": "bin/hello", "content": "#!/bin/sh\necho pwned\n"}],
      ["process.run", {"program": "hello"}]])";
  struct Case {
    std::string path;
    std::string entry;  // named in the refusal
  };
  for (const Case& c : std::vector<Case>{{root_ + "/bin:/usr/bin:/bin", root_ + "/bin"},
                                         {link + ":/usr/bin:/bin", link},
                                         {root_ + "/./bin/:/usr/bin:/bin", root_ + "/./bin/"},
                                         {".:/usr/bin:/bin", "."},
                                         {"/usr/bin::/bin", ""}}) {
    std::vector<Answer> answers =
        Probe({"--allow-write", "bin", "--allow-cmd", "hello"}, requests, {"PATH=" + c.path});
    ASSERT_EQ(answers.size(), 2u) << c.path;
    EXPECT_EQ(answers[0].code, 0) << answers[0].text;
    EXPECT_NE(answers[1].code, 0) << c.path << ": " << answers[1].text;
    EXPECT_THAT(answers[1].text, AllOf(HasSubstr("'hello'"), HasSubstr("PATH entry '" + c.entry + "'"),
                                       Not(HasSubstr("pwned")), Not(HasSubstr("\n"))))
        << c.path;
  }
  // A program in a directory outside the project that links into it.
  TempDir linked;
  fs::create_symlink(dir_.Join("bin/hello"), linked.Join("hello"));
  std::vector<Answer> through_link =
      Probe({"--allow-cmd", "hello"}, R"([["process.run", {"program": "hello"}]])",
            {"PATH=" + linked.path() + ":/usr/bin:/bin"});
  ASSERT_EQ(through_link.size(), 1u);
  EXPECT_NE(through_link[0].code, 0) << through_link[0].text;
  EXPECT_THAT(through_link[0].text, AllOf(HasSubstr("a link to '" + root_ + "/bin/hello'"), Not(HasSubstr("pwned"))));

  // By absolute path it is not the PATH program `hello`: --allow-cmd hello
  // does not cover it, and without interaction it is denied.
  std::vector<Answer> by_path = Probe({"--allow-cmd", "hello"},
                                      R"([["process.run", {"program": ")" + root_ + R"(/bin/hello"}]])",
                                      {"PATH=" + root_ + "/bin:/usr/bin:/bin"});
  ASSERT_EQ(by_path.size(), 1u);
  EXPECT_EQ(by_path[0].code, -32001) << by_path[0].text;
  EXPECT_THAT(by_path[0].text, AllOf(HasSubstr("not covered"), Not(HasSubstr("pwned"))));
}

TEST_F(EscapesTest, AChildsForwardedPathLeavesOutTheProject) {
  WriteExecutable("bin/hello", "#!/bin/sh\necho pwned\n");
  Write("toolvfs.toml", R"([tools.probe]
command = "python3 probe.py"
runtime = "vfs"
[tools.probe.sandbox]
filesystem.allow = ["."]
commands.sh = { envs = ["PATH"] }
)");
  const std::string requests = R"({"requests": [["process.run", {"program": "sh", "envs": ["PATH"],
      "args": ["-c", "echo \"$PATH\"; hello || echo missing"]}]]})";
  std::vector<Answer> answers = Answers(Toolvfs({"run", "--no-interaction", "probe", "--args", requests},
                                                {"PATH=/usr/bin:" + root_ + "/bin:.:/bin:"}));
  ASSERT_EQ(answers.size(), 1u);
  ASSERT_EQ(answers[0].code, 0) << answers[0].text;
  EXPECT_THAT(answers[0].text, AllOf(HasSubstr(R"("stdout": "/usr/bin:/bin\nmissing\n")"), Not(HasSubstr("pwned"))));
}

}  // namespace
}  // namespace toolvfs
