// What a `toolvfs mcp` process loads (docs/install.md, "Libraries loaded on
// first use"): over stdio, serving files, none of the libraries of the
// http.* methods, URLs, the SQL stores or the HTTP transport, which
// together cost most of its resident memory before they were left out
// (docs/benchmarks.md, "mcp_bench"). And the one-line error when the HTTP
// helper program is missing.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "../cli/subprocess.h"

extern char** environ;

namespace toolvfs {
namespace {

namespace fs = std::filesystem;

class McpFootprintTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(ToolvfsBinary().empty()) << "TOOLVFS_BINARY is not set";
    std::string pattern = (fs::temp_directory_path() / "toolvfs-footprint-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
    fs::create_directories(root_ / "project");
    std::ofstream(root_ / "project" / "a.txt") << "hello\n";
    std::ofstream(root_ / "project" / "toolvfs.toml") << "";
  }
  void TearDown() override { fs::remove_all(root_); }

  fs::path root_;
};

// A `toolvfs mcp` over stdio that the test writes requests to and reads
// answers from while it runs.
class StdioServer {
 public:
  explicit StdioServer(const std::string& project) {
    int to_child[2], from_child[2];
    if (pipe2(to_child, O_CLOEXEC) != 0 || pipe2(from_child, O_CLOEXEC) != 0) {
      ADD_FAILURE() << "pipe2 failed";
      return;
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, to_child[0], 0);
    posix_spawn_file_actions_adddup2(&actions, from_child[1], 1);
    std::vector<std::string> argv = {ToolvfsBinary(), "mcp", "--no-audit", "--project", project};
    std::vector<char*> pointers = PointerArray(argv);
    if (posix_spawn(&pid_, argv[0].c_str(), &actions, nullptr, pointers.data(), environ) != 0) {
      ADD_FAILURE() << "cannot start " << argv[0];
      pid_ = -1;
    }
    posix_spawn_file_actions_destroy(&actions);
    close(to_child[0]);
    close(from_child[1]);
    input_ = to_child[1];
    output_ = fdopen(from_child[0], "r");
  }
  ~StdioServer() {
    if (input_ >= 0) close(input_);
    if (output_ != nullptr) fclose(output_);
    if (pid_ > 0) {
      int status;
      waitpid(pid_, &status, 0);
    }
  }

  // Writes `request` and returns the next line the server prints.
  std::string Exchange(const std::string& request) {
    std::string line = request + "\n";
    if (write(input_, line.data(), line.size()) != static_cast<ssize_t>(line.size())) return "";
    char* answer = nullptr;
    size_t capacity = 0;
    ssize_t length = getline(&answer, &capacity, output_);
    std::string result = length > 0 ? std::string(answer, static_cast<size_t>(length)) : "";
    free(answer);
    return result;
  }

  // The files mapped into the server, one per line of /proc/PID/maps.
  std::string Mappings() const {
    std::ifstream maps("/proc/" + std::to_string(pid_) + "/maps");
    std::stringstream text;
    text << maps.rdbuf();
    return text.str();
  }

 private:
  pid_t pid_ = -1;
  int input_ = -1;
  FILE* output_ = nullptr;
};

TEST_F(McpFootprintTest, StdioServerLoadsNoNetworkDatabaseOrTlsLibrary) {
  StdioServer server((root_ / "project").string());
  ASSERT_NE(server.Exchange(R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":)"
                            R"("2025-11-25","capabilities":{},"clientInfo":{"name":"test","version":"1"}}})")
                .find("\"result\""),
            std::string::npos);
  for (int id = 1; id <= 20; ++id) {
    std::string answer = server.Exchange(R"({"jsonrpc":"2.0","id":)" + std::to_string(id) +
                                         R"(,"method":"tools/call","params":{"name":"read_file",)"
                                         R"("arguments":{"path":"a.txt"}}})");
    ASSERT_NE(answer.find("hello"), std::string::npos) << answer;
  }
  const std::string mappings = server.Mappings();
  ASSERT_NE(mappings.find("libc.so"), std::string::npos) << mappings;
  for (const char* library : {"libcurl", "libpq", "libssl", "libcrypto", "libgnutls", "libcpp-httplib", "libkrb5",
                              "libldap", "libsqlite3", "libnettle", "libidn2", "libunistring"}) {
    EXPECT_EQ(mappings.find(library), std::string::npos) << library << " is loaded:\n" << mappings;
  }
}

TEST_F(McpFootprintTest, MissingHttpHelperIsOneLineErrorNamingItAndWhy) {
  // A toolvfs copied alone, without PREFIX/libexec/toolvfs/toolvfs-mcp-http.
  fs::create_directories(root_ / "bin");
  const fs::path copy = root_ / "bin" / "toolvfs";
  fs::copy_file(ToolvfsBinary(), copy);
  ProcessResult result =
      RunProcess({copy.string(), "mcp", "--no-audit", "--http", "127.0.0.1:0", "--project", "memory:"},
                 {.cwd = (root_ / "project").string(), .deadline = std::chrono::seconds(30)});
  EXPECT_EQ(result.exit_code, 2) << result;
  ExpectOneLineError(result);
  EXPECT_NE(result.err.find("cannot run " + (root_ / "libexec" / "toolvfs" / "toolvfs-mcp-http").string() +
                            ", the program that serves MCP over HTTP: No such file or directory"),
            std::string::npos)
      << result;
}

}  // namespace
}  // namespace toolvfs
