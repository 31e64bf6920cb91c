// `toolvfs mcp` over stdio, end to end: a session of requests written to
// its stdin, the answers read from its stdout, one per line.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "../cli/subprocess.h"

namespace toolvfs {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kInitialize =
    R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"test","version":"1"}}})";

class McpStdioTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(ToolvfsBinary().empty()) << "TOOLVFS_BINARY is not set";
    std::string pattern = (fs::temp_directory_path() / "toolvfs-mcp-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
    project_ = root_ / "proj";
    fs::create_directories(project_ / "docs");
    // A sibling whose name starts with the project's: prefix confusion.
    fs::create_directories(root_ / "proj-secret");
    Write(project_ / "docs" / "a.txt", "hello from a\n");
    Write(root_ / "proj-secret" / "key.txt", "SECRET\n");
    fs::create_symlink(root_ / "proj-secret" / "key.txt", project_ / "link.txt");
    Write(project_ / "toolvfs.toml", "");
  }
  void TearDown() override { fs::remove_all(root_); }

  static void Write(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }

  // Runs one session: initialize, the given lines, end of input. Returns
  // the answer lines.
  std::vector<std::string> Session(const std::vector<std::string>& lines) {
    std::string input = std::string(kInitialize) + "\n" +
                        R"({"jsonrpc":"2.0","method":"notifications/initialized"})" + "\n";
    for (const std::string& line : lines) input += line + "\n";
    Write(root_ / "input.jsonl", input);
    ProcessResult result = RunProcess(
        {"/bin/sh", "-c", "exec \"$0\" mcp --no-audit --project \"$1\" < \"$2\"", ToolvfsBinary(),
         project_.string(), (root_ / "input.jsonl").string()},
        {.cwd = project_.string(), .deadline = std::chrono::seconds(30)});
    EXPECT_EQ(result.exit_code, 0) << result;
    std::vector<std::string> answers;
    size_t start = 0;
    for (size_t end; (end = result.out.find('\n', start)) != std::string::npos; start = end + 1) {
      answers.push_back(result.out.substr(start, end - start));
    }
    EXPECT_EQ(start, result.out.size()) << "stdout must end with a newline: " << result.out;
    return answers;
  }

  // The answer with id `id` (calls run concurrently, so answers may come
  // in any order); empty if none.
  static std::string ById(const std::vector<std::string>& answers, std::string_view id) {
    const std::string marker = R"("id":)" + std::string(id) + ",";
    for (const std::string& answer : answers) {
      if (answer.find(marker) != std::string::npos) return answer;
    }
    return {};
  }

  static std::string Call(int id, std::string_view tool, std::string_view arguments) {
    return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"method":"tools/call","params":{"name":")" +
           std::string(tool) + R"(","arguments":)" + std::string(arguments) + "}}";
  }

  fs::path root_;
  fs::path project_;
};

TEST_F(McpStdioTest, ListsTheBuiltinToolsWithSchemas) {
  std::vector<std::string> answers = Session({R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})"});
  ASSERT_EQ(answers.size(), 2u);
  EXPECT_NE(answers[0].find(R"("protocolVersion":"2025-11-25")"), std::string::npos) << answers[0];
  EXPECT_NE(answers[1].find(R"("name":"read_file")"), std::string::npos) << answers[1];
  EXPECT_NE(answers[1].find(R"("inputSchema":{)"), std::string::npos) << answers[1];
}

TEST_F(McpStdioTest, ReadsAProjectFile) {
  std::vector<std::string> answers = Session({Call(1, "read_file", R"({"path":"docs/a.txt"})")});
  ASSERT_EQ(answers.size(), 2u);
  EXPECT_NE(ById(answers, "1").find(R"("text":"hello from a\n"}],"isError":false)"), std::string::npos)
      << answers[1];
}

TEST_F(McpStdioTest, PathEscapesAreIsErrorResultsAndTheServerGoesOn) {
  const std::string sibling = (root_ / "proj-secret" / "key.txt").string();
  std::vector<std::string> answers = Session({
      Call(1, "read_file", R"({"path":"../proj-secret/key.txt"})"),
      Call(2, "read_file", R"({"path":"link.txt"})"),
      Call(3, "read_file", R"({"path":")" + sibling + R"("})"),
      Call(4, "read_file", R"({"path":"docs/../../proj-secret/key.txt"})"),
      R"({"jsonrpc":"2.0","id":5,"method":"ping"})",
  });
  ASSERT_EQ(answers.size(), 6u);
  for (int id = 1; id <= 4; ++id) {
    const std::string answer = ById(answers, std::to_string(id));
    EXPECT_NE(answer.find(R"("isError":true)"), std::string::npos) << id << ": " << answer;
    EXPECT_EQ(answer.find("SECRET"), std::string::npos) << answer;
  }
  EXPECT_EQ(ById(answers, "5"), R"({"jsonrpc":"2.0","id":5,"result":{}})");
}

TEST_F(McpStdioTest, BadLinesGetErrorsAndTheServerGoesOn) {
  std::vector<std::string> answers = Session({
      "{not json",
      Call(1, "no_such_tool", "{}"),
      R"({"jsonrpc":"2.0","id":2,"method":"ping"})",
  });
  ASSERT_EQ(answers.size(), 4u);
  EXPECT_NE(answers[1].find("-32700"), std::string::npos) << answers[1];
  EXPECT_NE(ById(answers, "1").find("-32602"), std::string::npos) << ById(answers, "1");
  EXPECT_EQ(ById(answers, "2"), R"({"jsonrpc":"2.0","id":2,"result":{}})");
}

}  // namespace
}  // namespace toolvfs
