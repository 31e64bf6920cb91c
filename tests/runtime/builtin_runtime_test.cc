// The builtin tools run in process through BuiltinRuntime on a real fs
// store: each under a policy that allows it and one that denies it
// (sensitive paths, deny rules, uncovered requests), with the audit records
// they leave; argument validation; cancellation. The end-to-end tests at
// the bottom drive the real `toolvfs run` with a toolvfs.toml.
#include "runtime/builtin_runtime.h"

#include <simdjson.h>

#include <algorithm>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cli/subprocess.h"
#include "host/methods.h"
#include "project/fault_injecting_store.h"
#include "project/forwarding_store.h"
#include "project/fs_store.h"
#include "project/test_util.h"
#include "protocol/base64.h"

namespace toolvfs {
namespace {

namespace fs = std::filesystem;
namespace dom = simdjson::dom;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

// Collects every audit record.
struct CapturedAudit {
  std::mutex mutex;
  std::vector<AuditRecord> records;
  std::unique_ptr<AuditSink> sink = NewCallbackAuditSink([this](const AuditRecord& record) {
    std::lock_guard lock(mutex);
    records.push_back(record);
  });
};

// A binary file: a PNG signature, NUL bytes and bytes that are not UTF-8.
const std::string kBinary("\x89PNG\r\n\x1a\n\0\0\0\rIHDR\xff\xfe", 18);

class BuiltinRuntimeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Write("src/main.py", "def main():\n    print('hi')  # TODO greet by name\n");
    Write("src/util.py", "def helper():\n    return 1\n");
    Write("src/.env", "TOKEN=TODO-secret\n");
    Write(".env", "API_KEY=TODO-top-secret\n");
    Write("secrets/keys.txt", "TODO private\n");
    Write("docs/readme.md", "# Readme\nTODO write it\n");
    Write("static/logo.png", kBinary);
    Write("toolvfs.toml", "# the config\n");
    Result<std::unique_ptr<ProjectFiles>> store = OpenFsStore(dir_.path());
    ASSERT_TRUE(store.ok()) << store.status().message();
    store_ = std::move(store).value();
  }

  void Write(const std::string& path, const std::string& content) { WriteRealFile(dir_.Join(path), content); }
  std::string Read(const std::string& path) { return ReadRealFile(dir_.Join(path)); }
  bool Exists(const std::string& path) { return RealPathExists(dir_.Join(path)); }

  // The builtin `name` with a sandbox table: `allow` readable, `writable`
  // writable, `deny` denied. Paths as the config parser stores them.
  static ToolConfig Tool(const std::string& name, std::vector<std::string> allow = {""},
                         std::vector<std::string> writable = {}, std::vector<std::string> deny = {}) {
    ToolConfig tool;
    tool.name = name;
    tool.source = ToolSource::kBuiltin;
    tool.has_sandbox_table = true;
    tool.sandbox.filesystem_allow = std::move(allow);
    tool.sandbox.filesystem_writable.prefixes = std::move(writable);
    tool.sandbox.filesystem_deny = std::move(deny);
    return tool;
  }

  Result<Outcome> Run(const ToolConfig& tool, const std::string& arguments, Inquirer* inquirer = nullptr) {
    BuiltinRuntime runtime(*store_, BuiltinRuntimeOptions{.inquirer = inquirer,
                                                          .audit = audit_.sink.get(),
                                                          .config_project_path = "toolvfs.toml"});
    return runtime.Execute(ToolCall{.name = tool.name, .id = "c-test", .arguments_json = arguments}, tool,
                           cancel_);
  }

  // Runs and expects a completed outcome; returns its text.
  std::string RunOk(const ToolConfig& tool, const std::string& arguments) {
    Result<Outcome> outcome = Run(tool, arguments);
    if (!outcome.ok()) {
      ADD_FAILURE() << "did not start: " << outcome.status().message();
      return "";
    }
    EXPECT_EQ(outcome->kind, Outcome::Kind::kCompleted);
    EXPECT_FALSE(outcome->is_error) << outcome->error->message;
    std::string text;
    for (const ContentBlock& block : outcome->content) text += block.text;
    return text;
  }

  // Runs and expects an error outcome; returns its message.
  std::string RunError(const ToolConfig& tool, const std::string& arguments) {
    Result<Outcome> outcome = Run(tool, arguments);
    if (!outcome.ok()) {
      ADD_FAILURE() << "did not start: " << outcome.status().message();
      return "";
    }
    EXPECT_EQ(outcome->kind, Outcome::Kind::kCompleted);
    EXPECT_TRUE(outcome->is_error);
    EXPECT_EQ(outcome->failure, StatusCode::kOk);  // the tool's error, not a failed run
    EXPECT_TRUE(outcome->content.empty());
    return outcome->error ? outcome->error->message : "";
  }

  // The one audit record written so far.
  AuditRecord OnlyRecord() {
    std::lock_guard lock(audit_.mutex);
    EXPECT_EQ(audit_.records.size(), 1u);
    return audit_.records.empty() ? AuditRecord{} : audit_.records.back();
  }

  size_t RecordCount() {
    std::lock_guard lock(audit_.mutex);
    return audit_.records.size();
  }

  TempDir dir_;
  std::unique_ptr<ProjectFiles> store_;
  CapturedAudit audit_;
  CancelToken cancel_;
};

// --- The registry --------------------------------------------------------------

// The seven fs.* builtins and the four snapshot tools (session/snapshot_tools.h),
// which act on the store's snapshots rather than through a host method.
TEST(BuiltinToolsTest, ElevenToolsSortedWithSchemasAndAMethodEach) {
  std::vector<std::string> names;
  for (const BuiltinToolInfo& tool : BuiltinTools()) {
    names.push_back(tool.name);
    EXPECT_FALSE(tool.description.empty()) << tool.name;
    if (tool.name.starts_with("snapshot_")) {
      EXPECT_EQ(tool.method, "snapshot." + tool.name.substr(9)) << tool.name;
    } else {
      EXPECT_FALSE(tool.parameters.empty()) << tool.name;
      EXPECT_NE(FindMethod(tool.method), nullptr) << tool.name << ": " << tool.method;
    }
    for (const auto& [parameter, schema] : tool.parameters) {
      ASSERT_TRUE(schema.is_object()) << tool.name << "." << parameter;
      EXPECT_NE(schema.Find("type"), nullptr) << tool.name << "." << parameter;
    }
    EXPECT_EQ(FindBuiltinTool(tool.name), &tool);
  }
  EXPECT_THAT(names, ElementsAre("delete_file", "file_info", "grep_files", "list_directory", "move_file",
                                 "read_file", "snapshot_create", "snapshot_diff", "snapshot_list",
                                 "snapshot_restore", "write_file"));
  EXPECT_EQ(FindBuiltinTool("rm_rf"), nullptr);
  const BuiltinToolInfo* read = FindBuiltinTool("read_file");
  ASSERT_NE(read, nullptr);
  EXPECT_EQ(read->parameters.at("path").Find("required")->as_bool(), true);
}

TEST_F(BuiltinRuntimeTest, AnUnknownBuiltinFailsToStartNamingTheKnownOnes) {
  Result<Outcome> outcome = Run(Tool("cat_file"), R"({"path":"src/main.py"})");
  ASSERT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(outcome.status().message(), HasSubstr("no builtin named 'cat_file'"));
  EXPECT_THAT(outcome.status().message(), HasSubstr("read_file"));
  EXPECT_EQ(RecordCount(), 0u);
}

// --- Arguments -----------------------------------------------------------------

TEST_F(BuiltinRuntimeTest, ArgumentsOutsideTheSchemaFailToStartAndTouchNothing) {
  struct Case {
    std::string tool, arguments, message;
  };
  const Case cases[] = {
      {"read_file", "{}", "Tool 'read_file': missing required argument 'path'"},
      {"read_file", R"({"path":"src/main.py","verbose":true})", "unknown argument 'verbose'"},
      {"read_file", R"({"path":3})", "argument 'path' must be string"},
      {"read_file", R"({"path":"src/main.py","offset":-1})", "'offset'"},
      {"read_file", "[1]", "the arguments must be a JSON object"},
      {"read_file", "{", "Tool 'read_file': the arguments are"},
      {"write_file", R"({"path":"out/a","content":"x","mode":"truncate"})", "'mode'"},
      {"move_file", R"({"from":"src/main.py"})", "missing required argument 'to'"},
      {"grep_files", R"({"pattern":"x","max_matches":0})", "'max_matches'"},
      {"list_directory", R"({"limit":"ten"})", "'limit'"},
  };
  for (const Case& test : cases) {
    Result<Outcome> outcome = Run(Tool(test.tool, {""}, {""}), test.arguments);
    ASSERT_FALSE(outcome.ok()) << test.tool << " " << test.arguments;
    EXPECT_EQ(outcome.status().code(), StatusCode::kInvalidArgument) << test.arguments;
    EXPECT_THAT(outcome.status().message(), HasSubstr(test.message)) << test.arguments;
  }
  EXPECT_EQ(RecordCount(), 0u);  // nothing reached the policy
  EXPECT_FALSE(Exists("out"));
}

TEST_F(BuiltinRuntimeTest, StringArgumentsHoldingJsonAreDecodedAndDefaultsFilled) {
  // A model that sends "3" for an integer, as the stdio runtime allows.
  EXPECT_EQ(RunOk(Tool("read_file"), R"({"path":"src/main.py","offset":"4","length":"4"})"), "main");
  std::string listing = RunOk(Tool("list_directory"), "{}");  // path "." by default
  EXPECT_THAT(listing, HasSubstr(R"({"path":"src","kind":"dir"})"));
}

// --- read_file -----------------------------------------------------------------

TEST_F(BuiltinRuntimeTest, ReadFileReturnsTheTextAndLeavesOneAuditRecord) {
  EXPECT_EQ(RunOk(Tool("read_file"), R"({"path":"./src//main.py"})"), Read("src/main.py"));
  AuditRecord record = OnlyRecord();
  EXPECT_EQ(record.tool, "read_file");
  EXPECT_EQ(record.call_id, "c-test");
  EXPECT_EQ(record.method, "fs.read");
  EXPECT_EQ(record.target, "src/main.py");
  EXPECT_EQ(record.decision, AuditDecision::kAllow);
  EXPECT_EQ(record.rule, "filesystem.allow \".\"");
  EXPECT_EQ(record.code, 0);
  // The request line a tool would send, newline included, as a vfs tool's
  // requests are counted.
  EXPECT_EQ(record.bytes_in,
            std::string_view(R"({"jsonrpc":"2.0","id":1,"method":"fs.read","params":{"path":"./src//main.py"}})" "\n")
                .size());
  EXPECT_GT(record.bytes_out, Read("src/main.py").size());
  EXPECT_GT(record.timestamp_ms, 0);
}

TEST_F(BuiltinRuntimeTest, ReadFileOfASensitivePathIsADeniedErrorOutcome) {
  std::string message = RunError(Tool("read_file"), R"({"path":".env"})");
  EXPECT_THAT(message, HasSubstr("'.env'"));
  EXPECT_THAT(message, HasSubstr("sensitive path"));
  EXPECT_THAT(message, Not(HasSubstr("top-secret")));
  AuditRecord record = OnlyRecord();
  EXPECT_EQ(record.target, ".env");
  EXPECT_EQ(record.decision, AuditDecision::kDeny);
  EXPECT_EQ(record.code, -32001);
  // The config in use is sensitive too: a tool must not read or rewrite its policy.
  EXPECT_THAT(RunError(Tool("read_file"), R"({"path":"toolvfs.toml"})"), HasSubstr("sensitive path"));
}

// A policy the caller built once (the MCP server builds one per tool when
// it loads the config) is what the call is judged by, with the decisions
// of one built per call; one built for another tool is not used.
TEST_F(BuiltinRuntimeTest, APolicyBuiltOnceByTheCallerJudgesTheCall) {
  // `policy`, said to be built from `policy_tool`, given to a call of `tool`.
  auto run = [&](const ToolConfig& tool, const ToolPolicy* policy, const ToolConfig* policy_tool,
                 const std::string& arguments) {
    BuiltinRuntime runtime(*store_, BuiltinRuntimeOptions{.audit = audit_.sink.get(),
                                                          .config_project_path = "toolvfs.toml",
                                                          .prebuilt_policy = {policy, policy_tool}});
    Result<Outcome> outcome =
        runtime.Execute(ToolCall{.name = tool.name, .id = "c-test", .arguments_json = arguments}, tool, cancel_);
    EXPECT_TRUE(outcome.ok()) << outcome.status().message();
    return outcome.ok() && !outcome->is_error ? outcome->content.front().text
                                               : "error: " + (outcome.ok() ? outcome->error->message : "");
  };
  const ToolConfig src_only = Tool("read_file", {"src"});
  const ToolPolicy built = ToolPolicy::ForTool(src_only, std::string("toolvfs.toml"));
  for (const char* path : {"src/main.rs", "docs/readme.md", ".env", "toolvfs.toml"}) {
    const std::string arguments = std::string(R"({"path":")") + path + "\"}";
    EXPECT_EQ(run(src_only, &built, &src_only, arguments), run(src_only, nullptr, nullptr, arguments)) << path;
  }
  EXPECT_THAT(run(src_only, &built, &src_only, R"({"path":"docs/readme.md"})"), HasSubstr("not covered"));
  // Judged by the policy given, not one built again from the config: the
  // whole project readable by the config, src only by the policy (said
  // here to be that config's, to tell the two apart).
  const ToolConfig everything = Tool("read_file", {""});
  EXPECT_THAT(run(everything, &built, &everything, R"({"path":"docs/readme.md"})"), HasSubstr("not covered"));
  // A policy built from another config is not used, not even one of a
  // tool of the same name.
  EXPECT_THAT(run(everything, &built, &src_only, R"({"path":"docs/readme.md"})"), HasSubstr("TODO write it"));
  const ToolConfig grep = Tool("grep_files", {"src"});
  const ToolPolicy other = ToolPolicy::ForTool(grep, std::string("toolvfs.toml"));
  EXPECT_THAT(run(everything, &other, &grep, R"({"path":"docs/readme.md"})"), HasSubstr("TODO write it"));
  // The session and snapshot tools take it too (ExecuteJudged).
  const ToolConfig snapshot_list = Tool("snapshot_list", {"src"});
  EXPECT_THAT(run(snapshot_list, &built, &snapshot_list, "{}"), HasSubstr("not covered"));
}

TEST_F(BuiltinRuntimeTest, ReadFileUnderADenyRuleIsDenied) {
  std::string message = RunError(Tool("read_file", {""}, {}, {"secrets"}), R"({"path":"secrets/keys.txt"})");
  EXPECT_THAT(message, HasSubstr("filesystem.deny"));
  EXPECT_EQ(OnlyRecord().decision, AuditDecision::kDeny);
}

TEST_F(BuiltinRuntimeTest, AnUncoveredReadIsDeniedWithoutAnInquirerAndAskedWithOne) {
  ToolConfig tool = Tool("read_file", {"src"});
  std::string message = RunError(tool, R"({"path":"docs/readme.md"})");
  EXPECT_THAT(message, HasSubstr("not covered by the policy of tool 'read_file'"));
  EXPECT_THAT(message, HasSubstr("tools.read_file.sandbox.filesystem.allow"));

  std::vector<Inquiry> asked;
  std::unique_ptr<Inquirer> yes = NewScriptedInquirer({InquiryAnswer::kAllowOnce}, &asked);
  Result<Outcome> outcome = Run(tool, R"({"path":"docs/readme.md"})", yes.get());
  ASSERT_TRUE(outcome.ok()) << outcome.status().message();
  ASSERT_FALSE(outcome->is_error) << outcome->error->message;
  EXPECT_EQ(outcome->content.at(0).text, Read("docs/readme.md"));
  ASSERT_EQ(asked.size(), 1u);
  EXPECT_EQ(asked[0].tool, "read_file");
  EXPECT_EQ(asked[0].operation, "read");
  EXPECT_EQ(asked[0].target, "docs/readme.md");
  std::lock_guard lock(audit_.mutex);
  ASSERT_EQ(audit_.records.size(), 2u);
  EXPECT_EQ(audit_.records[1].decision, AuditDecision::kAskedAllow);
  EXPECT_EQ(audit_.records[1].rule, "user");
}

TEST_F(BuiltinRuntimeTest, ReadFileOfABinaryFileIsAResourceBlockWithTheBytesAsBase64) {
  Result<Outcome> outcome = Run(Tool("read_file"), R"({"path":"static/logo.png"})");
  ASSERT_TRUE(outcome.ok()) << outcome.status().message();
  ASSERT_FALSE(outcome->is_error) << outcome->error->message;
  ASSERT_EQ(outcome->content.size(), 1u);
  const ContentBlock& block = outcome->content[0];
  EXPECT_EQ(block.type, "resource");
  EXPECT_THAT(block.text, HasSubstr("'static/logo.png'"));
  EXPECT_THAT(block.text, HasSubstr("18 bytes"));
  dom::parser parser;
  dom::element json;
  ASSERT_EQ(parser.parse(block.json).get(json), simdjson::SUCCESS) << block.json;
  EXPECT_EQ(std::string_view(json["type"]), "resource");
  EXPECT_EQ(std::string_view(json["resource"]["uri"]), "project:static/logo.png");
  EXPECT_EQ(std::string_view(json["resource"]["mimeType"]), "application/octet-stream");
  Result<std::string> bytes = Base64Decode(std::string_view(json["resource"]["blob"]));
  ASSERT_TRUE(bytes.ok()) << bytes.status().message();
  EXPECT_EQ(*bytes, kBinary);
}

TEST_F(BuiltinRuntimeTest, ReadFileOfAMissingFileOrADirectoryIsAnError) {
  EXPECT_THAT(RunError(Tool("read_file"), R"({"path":"src/nope.py"})"), HasSubstr("src/nope.py"));
  EXPECT_EQ(OnlyRecord().code, -32002);
  EXPECT_THAT(RunError(Tool("read_file"), R"({"path":"src"})"), HasSubstr("src"));
  EXPECT_THAT(RunError(Tool("read_file"), R"({"path":"../outside"})"), HasSubstr("../outside"));
}

// --- write_file ----------------------------------------------------------------

TEST_F(BuiltinRuntimeTest, WriteFileInAWritablePrefixInEveryMode) {
  ToolConfig tool = Tool("write_file", {""}, {"out"});
  EXPECT_EQ(RunOk(tool, R"({"path":"out/notes/a.txt","content":"hello"})"), "Wrote 5 bytes to 'out/notes/a.txt'");
  EXPECT_EQ(Read("out/notes/a.txt"), "hello");
  EXPECT_EQ(RunOk(tool, R"({"path":"out/notes/a.txt","content":" world","mode":"append"})"),
            "Appended 6 bytes to 'out/notes/a.txt'");
  EXPECT_EQ(Read("out/notes/a.txt"), "hello world");
  EXPECT_THAT(RunError(tool, R"({"path":"out/notes/a.txt","content":"x","mode":"create"})"),
              HasSubstr("out/notes/a.txt"));
  EXPECT_EQ(Read("out/notes/a.txt"), "hello world");
  std::string base64 = Base64Encode(kBinary);
  EXPECT_EQ(RunOk(tool, R"({"path":"out/logo.png","content":")" + base64 + R"(","encoding":"base64","mode":"create"})"),
            "Created 'out/logo.png' (18 bytes)");
  EXPECT_EQ(Read("out/logo.png"), kBinary);
  std::lock_guard lock(audit_.mutex);
  ASSERT_EQ(audit_.records.size(), 4u);
  for (const AuditRecord& record : audit_.records) {
    EXPECT_EQ(record.method, "fs.write");
    EXPECT_EQ(record.decision, AuditDecision::kAllow);
  }
  EXPECT_EQ(audit_.records[2].code, -32003);  // AlreadyExists
}

TEST_F(BuiltinRuntimeTest, WriteFileOutsideTheWritablePrefixesOrToASensitivePathIsDenied) {
  ToolConfig tool = Tool("write_file", {""}, {"out"});
  EXPECT_THAT(RunError(tool, R"({"path":"src/main.py","content":"x"})"), HasSubstr("not covered"));
  ToolConfig everything = Tool("write_file", {""});
  everything.sandbox.filesystem_writable.all = true;
  EXPECT_THAT(RunError(everything, R"({"path":"toolvfs.toml","content":"[tools.x]"})"),
              HasSubstr("sensitive path"));
  EXPECT_THAT(RunError(everything, R"({"path":"src/.env","content":"x"})"), HasSubstr("sensitive path"));
  EXPECT_THAT(RunError(Tool("write_file", {""}, {""}, {"secrets"}), R"({"path":"secrets/new","content":"x"})"),
              HasSubstr("filesystem.deny"));
  EXPECT_EQ(Read("src/main.py"), "def main():\n    print('hi')  # TODO greet by name\n");
  EXPECT_EQ(Read("toolvfs.toml"), "# the config\n");
  EXPECT_EQ(Read("src/.env"), "TOKEN=TODO-secret\n");
  EXPECT_FALSE(Exists("secrets/new"));
  std::lock_guard lock(audit_.mutex);
  ASSERT_EQ(audit_.records.size(), 4u);
  for (const AuditRecord& record : audit_.records) EXPECT_EQ(record.decision, AuditDecision::kDeny);
}

// --- list_directory ------------------------------------------------------------

// The entries of a list_directory answer, and its total.
std::pair<std::vector<std::string>, uint64_t> Entries(const std::string& json) {
  dom::parser parser;
  dom::element result;
  std::vector<std::string> names;
  if (parser.parse(json).get(result) != simdjson::SUCCESS) {
    ADD_FAILURE() << "not JSON: " << json;
    return {names, 0};
  }
  for (dom::element entry : result["entries"].get_array()) {
    names.push_back(std::string(std::string_view(entry["path"])) + ":" +
                    std::string(std::string_view(entry["kind"])));
  }
  return {names, uint64_t(result["total"])};
}

TEST_F(BuiltinRuntimeTest, ListDirectoryHidesWhatTheToolMayNotRead) {
  auto [root, total] = Entries(RunOk(Tool("list_directory", {""}, {}, {"secrets"}), R"({"path":"."})"));
  // .env (sensitive), secrets (denied) and toolvfs.toml (the config) are left out.
  EXPECT_THAT(root, ElementsAre("docs:dir", "src:dir", "static:dir"));
  EXPECT_EQ(total, 3u);
  AuditRecord record = OnlyRecord();
  EXPECT_EQ(record.method, "fs.list_dir");
  EXPECT_EQ(record.target, ".");
  auto [src, src_total] = Entries(RunOk(Tool("list_directory"), R"({"path":"src"})"));
  EXPECT_THAT(src, ElementsAre("main.py:file", "util.py:file"));
}

TEST_F(BuiltinRuntimeTest, ListDirectoryPagesWithOffsetAndLimit) {
  for (int i = 0; i < 7; ++i) Write("many/f" + std::to_string(i), "x");
  auto [first, total] = Entries(RunOk(Tool("list_directory"), R"({"path":"many","limit":3})"));
  EXPECT_THAT(first, ElementsAre("f0:file", "f1:file", "f2:file"));
  EXPECT_EQ(total, 7u);
  auto [last, last_total] = Entries(RunOk(Tool("list_directory"), R"({"path":"many","offset":6,"limit":3})"));
  EXPECT_THAT(last, ElementsAre("f6:file"));
  EXPECT_EQ(last_total, 7u);
  auto [none, none_total] = Entries(RunOk(Tool("list_directory"), R"({"path":"many","offset":9})"));
  EXPECT_TRUE(none.empty());
}

TEST_F(BuiltinRuntimeTest, ListDirectoryOfADeniedDirectoryOrAFileIsAnError) {
  EXPECT_THAT(RunError(Tool("list_directory", {""}, {}, {"secrets"}), R"({"path":"secrets"})"),
              HasSubstr("filesystem.deny"));
  EXPECT_EQ(OnlyRecord().decision, AuditDecision::kDeny);
  EXPECT_THAT(RunError(Tool("list_directory"), R"({"path":"src/main.py"})"), HasSubstr("src/main.py"));
}

// --- delete_file ---------------------------------------------------------------

TEST_F(BuiltinRuntimeTest, DeleteFileDeletesWritableFilesAndDirectories) {
  Write("out/a.txt", "a");
  Write("out/deep/b.txt", "b");
  ToolConfig tool = Tool("delete_file", {""}, {"out"});
  EXPECT_EQ(RunOk(tool, R"({"path":"out/a.txt"})"), "Deleted 'out/a.txt'");
  EXPECT_FALSE(Exists("out/a.txt"));
  EXPECT_THAT(RunError(tool, R"({"path":"out"})"), HasSubstr("out"));  // not empty, not recursive
  EXPECT_TRUE(Exists("out/deep/b.txt"));
  EXPECT_EQ(RunOk(tool, R"({"path":"out","recursive":true})"), "Deleted 'out'");
  EXPECT_FALSE(Exists("out"));
  std::lock_guard lock(audit_.mutex);
  ASSERT_EQ(audit_.records.size(), 3u);
  EXPECT_EQ(audit_.records[0].method, "fs.delete");
  EXPECT_EQ(audit_.records[0].target, "out/a.txt");
}

TEST_F(BuiltinRuntimeTest, DeleteFileNeverTakesASensitiveOrUnwritableFileWithIt) {
  ToolConfig tool = Tool("delete_file", {""}, {"src", "docs"});
  // src is writable, but src/.env inside it is sensitive: the whole delete is refused.
  EXPECT_THAT(RunError(tool, R"({"path":"src","recursive":true})"), HasSubstr("src/.env"));
  EXPECT_TRUE(Exists("src/main.py"));
  EXPECT_TRUE(Exists("src/.env"));
  EXPECT_THAT(RunError(tool, R"({"path":"static/logo.png"})"), HasSubstr("not covered"));
  EXPECT_THAT(RunError(tool, R"({"path":".env"})"), HasSubstr("sensitive path"));
  EXPECT_TRUE(Exists("static/logo.png"));
  EXPECT_TRUE(Exists(".env"));
  std::lock_guard lock(audit_.mutex);
  ASSERT_EQ(audit_.records.size(), 3u);
  for (const AuditRecord& record : audit_.records) EXPECT_EQ(record.decision, AuditDecision::kDeny);
}

// --- move_file -----------------------------------------------------------------

TEST_F(BuiltinRuntimeTest, MoveFileWithinWritablePrefixes) {
  ToolConfig tool = Tool("move_file", {""}, {"src", "lib"});
  EXPECT_EQ(RunOk(tool, R"({"from":"src/util.py","to":"lib/util.py"})"), "Moved 'src/util.py' to 'lib/util.py'");
  EXPECT_EQ(Read("lib/util.py"), "def helper():\n    return 1\n");
  EXPECT_FALSE(Exists("src/util.py"));
  EXPECT_THAT(RunError(tool, R"({"from":"src/main.py","to":"lib/util.py"})"), HasSubstr("lib/util.py"));
  EXPECT_EQ(RunOk(tool, R"({"from":"src/main.py","to":"lib/util.py","overwrite":true})"),
            "Moved 'src/main.py' to 'lib/util.py'");
  std::lock_guard lock(audit_.mutex);
  ASSERT_EQ(audit_.records.size(), 3u);
  EXPECT_EQ(audit_.records[0].method, "fs.rename");
  EXPECT_EQ(audit_.records[0].target, "src/util.py -> lib/util.py");
}

TEST_F(BuiltinRuntimeTest, MoveFileOutOfOrIntoForbiddenPlacesIsDenied) {
  ToolConfig tool = Tool("move_file", {""}, {"src", "lib"});
  EXPECT_THAT(RunError(tool, R"({"from":"src/main.py","to":"docs/main.py"})"), HasSubstr("docs/main.py"));
  EXPECT_THAT(RunError(tool, R"({"from":"src","to":"lib/src"})"), HasSubstr("src/.env"));  // carries .env
  EXPECT_THAT(RunError(tool, R"({"from":"src/main.py","to":"lib/.env"})"), HasSubstr("sensitive path"));
  EXPECT_TRUE(Exists("src/main.py"));
  EXPECT_TRUE(Exists("src/.env"));
  EXPECT_FALSE(Exists("lib"));
  std::lock_guard lock(audit_.mutex);
  ASSERT_EQ(audit_.records.size(), 3u);
  for (const AuditRecord& record : audit_.records) EXPECT_EQ(record.decision, AuditDecision::kDeny);
}

// --- git internals ---------------------------------------------------------------

TEST_F(BuiltinRuntimeTest, NoBuiltinWritesMovesOrDeletesGitInternals) {
  Write(".git/HEAD", "ref: refs/heads/main\n");
  Write("vendor/.git/HEAD", "ref: x\n");
  // Writable everywhere, and .git named explicitly: still never.
  ToolConfig write = Tool("write_file", {""}, {"", ".git", "sub/.git"});
  for (const char* path : {".git/commondir", ".git/info/exclude", ".git/modules/m/config", "sub/.git"}) {
    EXPECT_THAT(RunError(write, std::string(R"({"path":")") + path + R"(","content":"gitdir: /tmp/evil"})"),
                HasSubstr("git internals"))
        << path;
  }
  ToolConfig move = Tool("move_file", {""}, {"", ".git"});
  EXPECT_THAT(RunError(move, R"({"from":"src/util.py","to":".git/commondir"})"), HasSubstr("git internals"));
  EXPECT_THAT(RunError(move, R"({"from":".git/HEAD","to":"HEAD"})"), HasSubstr("git internals"));
  EXPECT_THAT(RunError(move, R"({"from":"docs","to":"sub/.git"})"), HasSubstr("git internals"));
  ToolConfig remove = Tool("delete_file", {""}, {"", ".git"});
  EXPECT_THAT(RunError(remove, R"({"path":".git/HEAD"})"), HasSubstr("git internals"));
  EXPECT_THAT(RunError(remove, R"({"path":"vendor","recursive":true})"), HasSubstr("git internals"));
  EXPECT_EQ(Read(".git/HEAD"), "ref: refs/heads/main\n");
  EXPECT_EQ(Read("vendor/.git/HEAD"), "ref: x\n");
  EXPECT_TRUE(Exists("src/util.py"));
  EXPECT_TRUE(Exists("docs/readme.md"));
  EXPECT_FALSE(Exists(".git/commondir"));
  EXPECT_FALSE(Exists("sub"));
  std::lock_guard lock(audit_.mutex);
  ASSERT_EQ(audit_.records.size(), 9u);
  for (const AuditRecord& record : audit_.records) EXPECT_EQ(record.decision, AuditDecision::kDeny);
}

// --- file_info -----------------------------------------------------------------

TEST_F(BuiltinRuntimeTest, FileInfoGivesKindSizeAndModificationTime) {
  std::string json = RunOk(Tool("file_info"), R"({"path":"static/logo.png"})");
  dom::parser parser;
  dom::element info;
  ASSERT_EQ(parser.parse(json).get(info), simdjson::SUCCESS) << json;
  EXPECT_EQ(std::string_view(info["kind"]), "file");
  EXPECT_EQ(uint64_t(info["size"]), kBinary.size());
  EXPECT_THAT(std::string(std::string_view(info["modified"])),
              ::testing::MatchesRegex(R"([0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z)"));
  EXPECT_EQ(OnlyRecord().method, "fs.metadata");
  EXPECT_THAT(RunOk(Tool("file_info"), R"({"path":"src"})"), HasSubstr(R"("kind":"dir")"));
}

TEST_F(BuiltinRuntimeTest, FileInfoOfDeniedOrMissingPathsIsAnError) {
  EXPECT_THAT(RunError(Tool("file_info"), R"({"path":"src/.env"})"), HasSubstr("sensitive path"));
  EXPECT_THAT(RunError(Tool("file_info", {""}, {}, {"secrets"}), R"({"path":"secrets/keys.txt"})"),
              HasSubstr("filesystem.deny"));
  EXPECT_THAT(RunError(Tool("file_info"), R"({"path":"nothing/here"})"), HasSubstr("nothing/here"));
}

// --- grep_files ----------------------------------------------------------------

// "path:line" of every matching line of a grep_files answer.
std::vector<std::string> Matches(const std::string& json) {
  std::vector<std::string> found;
  dom::parser parser;
  dom::element result;
  if (parser.parse(json).get(result) != simdjson::SUCCESS) {
    ADD_FAILURE() << "not JSON: " << json;
    return found;
  }
  for (dom::element file : result["matches"].get_array()) {
    for (dom::element line : file["lines"].get_array()) {
      if (bool(line["is_match"])) {
        found.push_back(std::string(std::string_view(file["path"])) + ":" +
                        std::to_string(uint64_t(line["line_number"])));
      }
    }
  }
  return found;
}

TEST_F(BuiltinRuntimeTest, GrepFilesSearchesOnlyWhatTheToolMayRead) {
  std::string json = RunOk(Tool("grep_files", {""}, {}, {"secrets"}), R"({"pattern":"TODO"})");
  // Not .env, src/.env (sensitive), secrets/ (denied) or the binary logo.
  EXPECT_THAT(Matches(json), ElementsAre("docs/readme.md:2", "src/main.py:2"));
  EXPECT_THAT(json, HasSubstr(R"("truncated":false)"));
  AuditRecord record = OnlyRecord();
  EXPECT_EQ(record.method, "fs.grep");
  EXPECT_EQ(record.target, ".");
  EXPECT_EQ(record.decision, AuditDecision::kAllow);

  EXPECT_THAT(Matches(RunOk(Tool("grep_files"), R"({"pattern":"todo","case_insensitive":true,"paths":["src"]})")),
              ElementsAre("src/main.py:2"));
  EXPECT_THAT(Matches(RunOk(Tool("grep_files"), R"({"pattern":"def","extensions":["md"]})")), ElementsAre());
  std::string limited = RunOk(Tool("grep_files"), R"({"pattern":"TODO","max_matches":1})");
  EXPECT_EQ(Matches(limited).size(), 1u);
  EXPECT_THAT(limited, HasSubstr(R"("truncated":true)"));
}

TEST_F(BuiltinRuntimeTest, GrepFilesInADeniedPathOrWithABadPatternIsAnError) {
  EXPECT_THAT(RunError(Tool("grep_files", {""}, {}, {"secrets"}), R"({"pattern":"TODO","paths":["secrets"]})"),
              HasSubstr("filesystem.deny"));
  EXPECT_EQ(OnlyRecord().decision, AuditDecision::kDeny);
  EXPECT_THAT(RunError(Tool("grep_files"), R"({"pattern":"(unclosed"})"), HasSubstr("(unclosed"));
}

// --- Cancellation ----------------------------------------------------------------

TEST_F(BuiltinRuntimeTest, ACancelledTokenRunsNothing) {
  cancel_.Cancel();
  Result<Outcome> outcome = Run(Tool("write_file", {""}, {""}), R"({"path":"a.txt","content":"x"})");
  ASSERT_TRUE(outcome.ok()) << outcome.status().message();
  EXPECT_EQ(outcome->kind, Outcome::Kind::kCancelled);
  EXPECT_EQ(outcome->failure, StatusCode::kCancelled);
  EXPECT_FALSE(Exists("a.txt"));
  EXPECT_EQ(RecordCount(), 0u);
}

// A store that forwards to another and cancels `token` when a grep starts:
// the search then runs with the token already fired, as if Ctrl+C came
// right after its start.
class CancelOnGrepStore final : public ForwardingProjectFiles {
 public:
  CancelOnGrepStore(ProjectFiles& inner, CancelToken& token) : ForwardingProjectFiles(inner), token_(token) {}
  Result<GrepResult> Grep(std::string_view pattern, const GrepOptions& options) override {
    token_.Cancel();
    return ForwardingProjectFiles::Grep(pattern, options);
  }

 protected:
  std::unique_ptr<ProjectFiles> NewWithoutSymlinksView(ProjectFiles& target_view) override {
    return std::make_unique<CancelOnGrepStore>(target_view, token_);
  }

 private:
  CancelToken& token_;
};

TEST_F(BuiltinRuntimeTest, CancellingDuringAGrepStopsItBeforeTheNextFile) {
  CancelOnGrepStore store(*store_, cancel_);
  BuiltinRuntime runtime(store, BuiltinRuntimeOptions{.audit = audit_.sink.get()});
  ToolConfig tool = Tool("grep_files");
  Result<Outcome> outcome = runtime.Execute(ToolCall{.name = tool.name, .arguments_json = R"({"pattern":"TODO"})"},
                                            tool, cancel_);
  ASSERT_TRUE(outcome.ok()) << outcome.status().message();
  EXPECT_EQ(outcome->kind, Outcome::Kind::kCancelled);
  EXPECT_TRUE(outcome->content.empty());  // no partial matches
  AuditRecord record = OnlyRecord();
  EXPECT_EQ(record.code, -32005);
  EXPECT_FALSE(record.call_id.empty());  // made up when the call has none
}

// Blocks in Ask until Cancel(), like a user who does not answer.
class SilentUser final : public Inquirer {
 public:
  Result<InquiryAnswer> Ask(const Inquiry&) override {
    std::unique_lock lock(mutex_);
    asking_ = true;
    changed_.notify_all();
    changed_.wait(lock, [&] { return cancelled_; });
    return Status(StatusCode::kCancelled, "Cancelled while asking the user");
  }
  bool asks_user() const override { return true; }
  void Cancel() override {
    std::lock_guard lock(mutex_);
    cancelled_ = true;
    changed_.notify_all();
  }
  void WaitUntilAsking() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return asking_; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  bool asking_ = false;
  bool cancelled_ = false;
};

TEST_F(BuiltinRuntimeTest, CancellingEndsAQuestionTheUserDoesNotAnswer) {
  SilentUser user;
  std::thread interrupt([&] {
    user.WaitUntilAsking();
    cancel_.Cancel();
  });
  Result<Outcome> outcome = Run(Tool("read_file", {"src"}), R"({"path":"docs/readme.md"})", &user);
  interrupt.join();
  ASSERT_TRUE(outcome.ok()) << outcome.status().message();
  EXPECT_EQ(outcome->kind, Outcome::Kind::kCancelled);
  EXPECT_EQ(OnlyRecord().decision, AuditDecision::kAskedDeny);
}

// --- A failing store -------------------------------------------------------------
// The builtins serve through the host's handlers, so a failing store gives
// the same one-line errors: an error outcome (the tool's error, not a failed
// run) naming the path and the cause, nothing changed, and the next call
// served. FaultInjectingProjectFiles wraps the fs store of the fixture.

class BuiltinRuntimeFailingStoreTest : public BuiltinRuntimeTest {
 protected:
  void SetUp() override {
    BuiltinRuntimeTest::SetUp();
    fs_ = std::move(store_);
    auto faults = std::make_unique<FaultInjectingProjectFiles>(*fs_);
    faults_ = faults.get();
    store_ = std::move(faults);
  }
  void TearDown() override { store_.reset(); }  // the wrapper before the store it wraps

  std::unique_ptr<ProjectFiles> fs_;
  FaultInjectingProjectFiles* faults_ = nullptr;
};

TEST_F(BuiltinRuntimeFailingStoreTest, AFailingReadIsAnErrorOutcomeAndTheNextReadWorks) {
  faults_->FailNthCall(1, StatusCode::kIo, "Input/output error");
  EXPECT_EQ(RunError(Tool("read_file"), R"({"path":"src/main.py"})"),
            "Cannot read 'src/main.py': Input/output error");
  EXPECT_EQ(RunOk(Tool("read_file"), R"({"path":"src/main.py"})"), Read("src/main.py"));
  std::lock_guard lock(audit_.mutex);
  ASSERT_EQ(audit_.records.size(), 2u);
  EXPECT_EQ(audit_.records[0].code, -32603);  // the failure is recorded with its wire code
  EXPECT_EQ(audit_.records[1].code, 0);
}

TEST_F(BuiltinRuntimeFailingStoreTest, AReadOnlyStoreRefusesEveryChangingBuiltinAndChangesNothing) {
  faults_->SetReadOnly(true);
  ToolConfig writable = Tool("write_file", {""}, {"src", "lib"});
  EXPECT_EQ(RunError(writable, R"({"path":"src/main.py","content":"x"})"),
            "Cannot write 'src/main.py': the store is read-only");
  writable.name = "delete_file";
  EXPECT_EQ(RunError(writable, R"({"path":"src/util.py"})"), "Cannot delete 'src/util.py': the store is read-only");
  writable.name = "move_file";
  EXPECT_EQ(RunError(writable, R"({"from":"src/util.py","to":"lib/util.py"})"),
            "Cannot rename 'src/util.py' to 'lib/util.py': the store is read-only");
  EXPECT_EQ(Read("src/main.py"), "def main():\n    print('hi')  # TODO greet by name\n");
  EXPECT_EQ(Read("src/util.py"), "def helper():\n    return 1\n");
  EXPECT_FALSE(Exists("lib"));
  EXPECT_THAT(RunOk(Tool("grep_files"), R"({"pattern":"helper"})"), HasSubstr("src/util.py"));
}

// Whichever of the store calls a move makes fails, both paths stay as they were.
TEST_F(BuiltinRuntimeFailingStoreTest, AMoveChangesNothingWhicheverStoreCallFails) {
  ToolConfig tool = Tool("move_file", {""}, {"docs", "lib"});
  const std::string readme = Read("docs/readme.md");
  uint64_t failed = 0;
  for (uint64_t n = 1;; ++n) {
    faults_->ClearFaults();
    faults_->FailNthCall(n, StatusCode::kIo, "injected");
    Result<Outcome> outcome = Run(tool, R"({"from":"docs","to":"lib/docs"})");
    ASSERT_TRUE(outcome.ok());
    if (!outcome->is_error) break;  // n is past the last call: the move went through
    ++failed;
    EXPECT_THAT(outcome->error->message, HasSubstr(": injected")) << "call " << n;
    EXPECT_EQ(Read("docs/readme.md"), readme) << "call " << n;
    EXPECT_FALSE(Exists("lib")) << "call " << n;
  }
  EXPECT_GE(failed, 4u);
  EXPECT_EQ(Read("lib/docs/readme.md"), readme);
  EXPECT_FALSE(Exists("docs"));
}

// The builtins run on the caller's thread: a stalled store holds that
// caller until the store returns (the cancel token cannot interrupt a store
// call, only stop a grep between files); other callers are not held up.
TEST_F(BuiltinRuntimeFailingStoreTest, AStalledStoreHoldsOnlyTheCallerOfThatBuiltin) {
  faults_->StallCalls(StoreOperation::kGrep);
  std::thread grep([this] { EXPECT_THAT(RunOk(Tool("grep_files"), R"({"pattern":"helper"})"), HasSubstr("util")); });
  ASSERT_TRUE(faults_->WaitForStalledCalls(1, std::chrono::seconds(10)));
  EXPECT_EQ(RunOk(Tool("read_file"), R"({"path":"src/util.py"})"), "def helper():\n    return 1\n");
  faults_->ReleaseStalls();
  grep.join();
}

// --- End to end: toolvfs run ------------------------------------------------------

class BuiltinRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    WriteRealFile(dir_.Join("src/app.py"), "import os\nprint('app')  # TODO log\n");
    WriteRealFile(dir_.Join(".env"), "API_KEY=never-shown\n");
    WriteRealFile(dir_.Join("toolvfs.toml"),
                  "[tools.read_file]\n"
                  "source = \"builtin\"\n"
                  "[tools.read_file.sandbox]\n"
                  "filesystem.allow = [\".\"]\n"
                  "\n"
                  "[tools.write_file]\n"
                  "source = \"builtin\"\n"
                  "[tools.write_file.sandbox]\n"
                  "filesystem.allow = [\".\"]\n"
                  "filesystem.writable = [\"out\"]\n");
  }

  ProcessResult Toolvfs(std::vector<std::string> args) {
    args.insert(args.begin(), ToolvfsBinary());
    args.insert(args.end(), {"--project", dir_.path(), "--no-interaction"});
    return RunProcess(args, ProcessOptions{.deadline = std::chrono::seconds(30)});
  }

  // The request records of the project's audit log; each run's start and
  // end records (kRunStartMethod, kRunEndMethod) are counted in `runs`.
  std::vector<AuditRecord> AuditLog(size_t* runs = nullptr) {
    std::vector<AuditRecord> records;
    if (runs != nullptr) *runs = 0;
    std::string log = ReadRealFile(dir_.Join(".toolvfs/audit.jsonl"));
    size_t start = 0;
    for (size_t end; (end = log.find('\n', start)) != std::string::npos; start = end + 1) {
      Result<AuditRecord> record = ParseAuditRecord(std::string_view(log).substr(start, end - start));
      if (!record.ok()) {
        ADD_FAILURE() << record.status().message() << " in " << log;
        continue;
      }
      if (record->method == kRunStartMethod || record->method == kRunEndMethod) {
        if (runs != nullptr && record->method == kRunEndMethod) ++*runs;
        continue;
      }
      records.push_back(*record);
    }
    return records;
  }

  TempDir dir_;
};

TEST_F(BuiltinRunTest, RunReadFilePrintsTheFileAsJsonAndAppendsToTheAuditLog) {
  ProcessResult run = Toolvfs({"run", "read_file", "--args", R"({"path":"src/app.py"})", "--json"});
  ASSERT_EQ(run.exit_code, 0) << run;
  EXPECT_EQ(run.out,
            "{\"status\":\"completed\",\"content\":[{\"type\":\"text\",\"text\":\"import os\\nprint('app')  "
            "# TODO log\\n\"}]}\n");
  size_t runs = 0;
  std::vector<AuditRecord> records = AuditLog(&runs);
  EXPECT_EQ(runs, 1u);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].tool, "read_file");
  EXPECT_EQ(records[0].method, "fs.read");
  EXPECT_EQ(records[0].target, "src/app.py");
  EXPECT_EQ(records[0].decision, AuditDecision::kAllow);
  EXPECT_THAT(records[0].call_id, ::testing::StartsWith("c-"));
}

TEST_F(BuiltinRunTest, ADeniedReadIsTheToolsErrorWithExitCodeOne) {
  ProcessResult run = Toolvfs({"run", "read_file", "--args", R"({"path":".env"})", "--json"});
  EXPECT_EQ(run.exit_code, 1) << run;
  EXPECT_THAT(run.out, HasSubstr(R"("status":"error")"));
  EXPECT_THAT(run.out, HasSubstr("sensitive path"));
  EXPECT_THAT(run.out + run.err, Not(HasSubstr("never-shown")));
  std::vector<AuditRecord> records = AuditLog();
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].decision, AuditDecision::kDeny);
  EXPECT_EQ(records[0].target, ".env");

  // Text output: the message on stderr, one line.
  ProcessResult text = Toolvfs({"run", "read_file", "--args", R"({"path":".env"})"});
  EXPECT_EQ(text.exit_code, 1) << text;
  EXPECT_TRUE(text.out.empty()) << text;
  ExpectOneLineError(text);
  EXPECT_EQ(AuditLog().size(), 2u);  // appended, never truncated
}

TEST_F(BuiltinRunTest, WriteFileWritesWhereThePolicySaysAndBadArgumentsAreAUsageError) {
  ProcessResult run = Toolvfs({"run", "write_file", "--args", R"({"path":"out/a.txt","content":"hi"})"});
  ASSERT_EQ(run.exit_code, 0) << run;
  EXPECT_EQ(run.out, "Wrote 2 bytes to 'out/a.txt'\n");
  EXPECT_EQ(ReadRealFile(dir_.Join("out/a.txt")), "hi");
  ProcessResult denied = Toolvfs({"run", "write_file", "--args", R"({"path":"src/app.py","content":"x"})"});
  EXPECT_EQ(denied.exit_code, 1) << denied;
  EXPECT_THAT(denied.err, HasSubstr("tools.write_file.sandbox.filesystem.writable"));
  ProcessResult invalid = Toolvfs({"run", "write_file", "--args", R"({"path":"out/b.txt"})"});
  EXPECT_EQ(invalid.exit_code, 2) << invalid;
  EXPECT_THAT(invalid.err, HasSubstr("missing required argument 'content'"));
  EXPECT_EQ(AuditLog().size(), 2u);
}

// The builtins of examples/project/toolvfs.toml, on a copy of the project.
TEST_F(BuiltinRunTest, ToolsListsABuiltinWithItsOwnDescriptionAndSchema) {
  // The config gives neither: the builtin's declaration is the listing.
  ProcessResult listed = Toolvfs({"tools", "--json"});
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  dom::parser parser;
  dom::array tools;
  ASSERT_EQ(parser.parse(listed.out).get(tools), simdjson::SUCCESS) << listed.out;
  const BuiltinToolInfo* read_file = FindBuiltinTool("read_file");
  ASSERT_NE(read_file, nullptr);
  bool found = false;
  for (dom::object tool : tools) {
    if (std::string_view(tool["name"]) != "read_file") continue;
    found = true;
    EXPECT_EQ(std::string_view(tool["runtime"]), "builtin");
    EXPECT_EQ(std::string_view(tool["description"]), read_file->description);
    dom::object parameters;
    ASSERT_EQ(tool["parameters"].get(parameters), simdjson::SUCCESS) << listed.out;
    EXPECT_EQ(parameters["path"].error(), simdjson::SUCCESS) << listed.out;
  }
  EXPECT_TRUE(found) << listed.out;
}

TEST(BuiltinExampleProjectTest, TheExampleBuiltinsRunUnderTheirPolicies) {
  TempDir dir;
  fs::copy(SourceDir() + "/examples/project", dir.path(), fs::copy_options::recursive);
  fs::remove_all(dir.Join(".toolvfs"));
  auto run = [&](const std::string& tool, const std::string& arguments) {
    return RunProcess({ToolvfsBinary(), "run", tool, "--project", dir.path(), "--no-interaction", "--args", arguments},
                      ProcessOptions{.deadline = std::chrono::seconds(30)});
  };
  ProcessResult read = run("read_file", R"({"path":"shortlink/slugs.py"})");
  EXPECT_EQ(read.exit_code, 0) << read;
  EXPECT_EQ(read.out, ReadRealFile(dir.Join("shortlink/slugs.py")));
  ProcessResult config = run("read_file", R"({"path":"config/settings.toml"})");
  EXPECT_EQ(config.exit_code, 1) << config;
  ProcessResult listing = run("list_directory", R"({"path":"shortlink"})");
  EXPECT_EQ(listing.exit_code, 0) << listing;
  EXPECT_THAT(listing.out, HasSubstr(R"({"path":"slugs.py","kind":"file"})"));
  ProcessResult grep = run("grep_files", R"({"pattern":"def "})");
  EXPECT_EQ(grep.exit_code, 0) << grep;
  EXPECT_THAT(grep.out, HasSubstr("shortlink/slugs.py"));
  EXPECT_THAT(grep.out, Not(HasSubstr("config/")));
  EXPECT_EQ(ReadRealFile(dir.Join(".toolvfs/audit.jsonl")).empty(), false);
}

}  // namespace
}  // namespace toolvfs
