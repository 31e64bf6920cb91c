// The MCP client and runtime against the official reference servers from
// the npm registry (scripts/install-mcp-servers.sh), under the real sandbox
// (SandboxMode::kRequire), plus a scripted Python server for the protocol
// corners the reference servers never show (an older or unknown protocol
// version, pagination, JSON-RPC error answers, garbage on stdout), and the
// real toolvfs binary end to end.
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cli/subprocess.h"
#include "mcp_servers.h"
#include "project/fs_store.h"
#include "project/test_util.h"
#include "runtime/mcp_client.h"
#include "runtime/mcp_runtime.h"
#include "sandbox/tool_access.h"

namespace toolvfs {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;
using Clock = std::chrono::steady_clock;

// A scripted MCP server: argv[1] picks the behaviour.
constexpr std::string_view kScriptedServer = R"PY(
import json, sys
mode = sys.argv[1]
def send(message):
    sys.stdout.write(json.dumps(message) + "\n"); sys.stdout.flush()
if mode == "garbage":
    print("hello, I am a server")
for line in sys.stdin:
    message = json.loads(line)
    method, request_id = message.get("method"), message.get("id")
    if request_id is None:
        continue
    if method == "initialize":
        version = {"old-version": "2025-03-26", "bad-version": "1999-01-01"}.get(mode, message["params"]["protocolVersion"])
        send({"jsonrpc": "2.0", "id": request_id, "result": {"protocolVersion": version, "capabilities": {"tools": {}}, "serverInfo": {"name": "scripted", "version": "1"}}})
        if mode == "asks-back":
            send({"jsonrpc": "2.0", "id": "s1", "method": "ping"})
            send({"jsonrpc": "2.0", "id": "s2", "method": "roots/list"})
    elif method == "tools/list":
        cursor = (message.get("params") or {}).get("cursor")
        page = int(cursor or 0)
        result = {"tools": [{"name": "tool%d" % page, "description": "page %d" % page, "inputSchema": {"type": "object"}}]}
        if page < 2:
            result["nextCursor"] = str(page + 1)
        send({"jsonrpc": "2.0", "id": request_id, "result": result})
    elif method == "tools/call":
        name = message["params"]["name"]
        if name == "rpc-error":
            send({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32602, "message": "Unknown tool: rpc-error"}})
        elif name == "structured":
            send({"jsonrpc": "2.0", "id": request_id, "result": {"content": [], "structuredContent": {"temperature": 21}}})
        elif name == "flood":
            # Requests without end, never reading stdin again: the client
            # must still honour its timeout and bound its memory.
            while True:
                send({"jsonrpc": "2.0", "id": "p", "method": "ping"})
        elif name == "big":
            send({"jsonrpc": "2.0", "id": request_id, "result": {"content": [{"type": "text", "text": "x" * (2 << 20)}]}})
        elif name == "audio":
            send({"jsonrpc": "2.0", "id": request_id, "result": {"content": [{"type": "audio", "data": "AAAA", "mimeType": "audio/wav"}]}})
        else:
            send({"jsonrpc": "2.0", "id": request_id, "result": {"content": [{"type": "text", "text": "called " + name}]}})
)PY";

class McpTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (std::string_view package : {"server-everything", "server-filesystem"}) {
      ASSERT_TRUE(fs::exists(McpServerScript(package)))
          << "The MCP reference servers are not installed in " << McpServersDirectory()
          << ": run scripts/install-mcp-servers.sh (make test runs it; TOOLVFS_MCP_SERVERS_DIR names another "
             "directory)";
    }
    WriteRealFile(dir_.Join("src/a.txt"), "alpha\n");
    WriteRealFile(dir_.Join("secret.txt"), "top secret\n");
    WriteRealFile(outside_.Join("outside.txt"), "outside the project\n");
    WriteRealFile(scripts_.Join("scripted.py"), kScriptedServer);
    Result<std::unique_ptr<ProjectFiles>> store = OpenFsStore(dir_.path());
    ASSERT_TRUE(store.ok()) << store.status().message();
    store_ = std::move(store).value();
  }

  static McpServerConfig Everything() {
    return McpServerConfig{.name = "everything", .command = TOOLVFS_TEST_NODE,
                           .args = {McpServerScript("server-everything"), "stdio"}, .env = {}};
  }
  McpServerConfig Filesystem(std::vector<std::string> directories) const {
    McpServerConfig server{.name = "files", .command = TOOLVFS_TEST_NODE,
                           .args = {McpServerScript("server-filesystem")}, .env = {}};
    for (std::string& directory : directories) server.args.push_back(std::move(directory));
    return server;
  }
  McpServerConfig Scripted(std::string mode) const {
    return McpServerConfig{.name = "scripted", .command = TOOLVFS_TEST_PYTHON3,
                           .args = {scripts_.Join("scripted.py"), std::move(mode)}, .env = {}};
  }

  static ToolConfig Tool(const std::string& server, const std::string& tool) {
    ToolConfig config;
    config.name = tool;
    config.source = ToolSource::kMcp;
    config.mcp_server = server;
    config.mcp_tool = tool;
    return config;
  }

  std::unique_ptr<McpRuntime> Runtime(std::vector<McpServerConfig> servers, McpRuntimeOptions options = {}) {
    std::map<std::string, McpServerConfig> by_name;
    for (McpServerConfig& server : servers) by_name.emplace(server.name, std::move(server));
    return std::make_unique<McpRuntime>(*store_, std::move(by_name), std::move(options));
  }

  Result<Outcome> Call(McpRuntime& runtime, const ToolConfig& tool, const std::string& arguments = "{}") {
    CancelToken cancel;
    return runtime.Execute(ToolCall{.name = tool.name, .arguments_json = arguments}, tool, cancel);
  }

  // A client started directly, with the default policy.
  Result<std::unique_ptr<McpClient>> StartClient(McpServerConfig server) {
    McpClientOptions options;
    options.server = std::move(server);
    options.working_directory = dir_.path();
    options.policy.name = options.server.name;
    CancelToken cancel;
    return McpClient::Start(std::move(options), cancel);
  }

  static std::string Text(const Outcome& outcome) {
    std::string text;
    for (const ContentBlock& block : outcome.content) text += block.text + "\n";
    return text;
  }
  static std::string ErrorOf(const Outcome& outcome) { return outcome.error ? outcome.error->message : ""; }

  TempDir dir_;
  TempDir outside_;
  TempDir scripts_;
  std::unique_ptr<ProjectFiles> store_;
};

TEST_F(McpTest, InitializesAndListsTheToolsOfTheEverythingServer) {
  Result<std::unique_ptr<McpClient>> client = StartClient(Everything());
  ASSERT_TRUE(client.ok()) << client.status().message();
  EXPECT_EQ((*client)->protocol_version(), "2025-06-18");
  CancelToken cancel;
  Result<std::vector<McpToolInfo>> tools = (*client)->ListTools(std::chrono::seconds(20), cancel);
  ASSERT_TRUE(tools.ok()) << tools.status().message();
  std::map<std::string, McpToolInfo> by_name;
  for (const McpToolInfo& tool : *tools) by_name.emplace(tool.name, tool);
  for (const char* name : {"echo", "get-sum", "get-tiny-image", "get-env", "trigger-long-running-operation"}) {
    ASSERT_TRUE(by_name.contains(name)) << name;
    EXPECT_FALSE(by_name[name].description.empty()) << name;
  }
  EXPECT_THAT(by_name["echo"].input_schema_json, HasSubstr("\"message\""));
}

TEST_F(McpTest, CallsToolsOnOneServerProcessReusedAcrossCalls) {
  std::unique_ptr<McpRuntime> runtime = Runtime({Everything()});
  const ToolConfig echo = Tool("everything", "echo");
  EXPECT_EQ(runtime->RunningServer(echo), nullptr) << "started lazily, not at construction";
  Result<Outcome> echoed = Call(*runtime, echo, R"({"message":"hello there"})");
  ASSERT_TRUE(echoed.ok()) << echoed.status().message();
  EXPECT_FALSE(echoed->is_error) << ErrorOf(*echoed);
  EXPECT_EQ(Text(*echoed), "Echo: hello there\n");
  ASSERT_NE(runtime->RunningServer(echo), nullptr);
  const pid_t pid = runtime->RunningServer(echo)->pid();

  Result<Outcome> sum = Call(*runtime, Tool("everything", "get-sum"), R"({"a":2,"b":40})");
  ASSERT_TRUE(sum.ok()) << sum.status().message();
  EXPECT_FALSE(sum->is_error) << ErrorOf(*sum);
  EXPECT_THAT(Text(*sum), HasSubstr("42"));
  EXPECT_EQ(runtime->RunningServer(echo)->pid(), pid);
}

TEST_F(McpTest, ImagesBecomeResourceBlocksWithTheirMimeType) {
  std::unique_ptr<McpRuntime> runtime = Runtime({Everything()});
  Result<Outcome> outcome = Call(*runtime, Tool("everything", "get-tiny-image"));
  ASSERT_TRUE(outcome.ok()) << outcome.status().message();
  EXPECT_FALSE(outcome->is_error) << ErrorOf(*outcome);
  const ContentBlock* image = nullptr;
  for (const ContentBlock& block : outcome->content) {
    if (block.json.find("image/png") != std::string::npos) image = &block;
  }
  ASSERT_NE(image, nullptr) << Text(*outcome);
  EXPECT_EQ(image->type, "resource");
  EXPECT_THAT(image->json, AllOf(HasSubstr(R"("type":"resource")"), HasSubstr(R"("mimeType":"image/png")"),
                                 HasSubstr(R"("blob":"iVBOR)"), HasSubstr(R"("uri":"mcp://everything/get-tiny-image/)")));
  EXPECT_THAT(image->text, AllOf(HasSubstr("image image/png"), HasSubstr("bytes")));
}

TEST_F(McpTest, EmbeddedResourcesAndResourceLinksAreKept) {
  std::unique_ptr<McpRuntime> runtime = Runtime({Everything()});
  Result<Outcome> text = Call(*runtime, Tool("everything", "get-resource-reference"),
                              R"({"resourceType":"Text","resourceId":1})");
  ASSERT_TRUE(text.ok()) << text.status().message();
  bool found = false;
  for (const ContentBlock& block : text->content) {
    if (block.type != "resource") continue;
    found = true;
    EXPECT_THAT(block.json, HasSubstr("demo://resource/"));
    EXPECT_FALSE(block.text.empty());
    EXPECT_THAT(block.text, Not(HasSubstr("[resource")));  // the resource's own text
  }
  EXPECT_TRUE(found) << Text(*text);

  Result<Outcome> blob = Call(*runtime, Tool("everything", "get-resource-reference"),
                              R"({"resourceType":"Blob","resourceId":2})");
  ASSERT_TRUE(blob.ok()) << blob.status().message();
  EXPECT_THAT(Text(*blob), HasSubstr("[resource demo://resource/dynamic/blob/2, text/plain, "));

  Result<Outcome> links = Call(*runtime, Tool("everything", "get-resource-links"), R"({"count":2})");
  ASSERT_TRUE(links.ok()) << links.status().message();
  int link_blocks = 0;
  for (const ContentBlock& block : links->content) {
    if (block.type != "resource_link") continue;
    ++link_blocks;
    EXPECT_THAT(block.text, HasSubstr("[resource link demo://resource/"));
  }
  EXPECT_EQ(link_blocks, 2) << Text(*links);
}

TEST_F(McpTest, IsErrorResultsAreErrors) {
  std::unique_ptr<McpRuntime> runtime = Runtime({Everything()});
  // The SDK answers an unknown tool and invalid arguments with isError.
  Result<Outcome> unknown = Call(*runtime, Tool("everything", "no-such-tool"));
  ASSERT_TRUE(unknown.ok()) << unknown.status().message();
  EXPECT_TRUE(unknown->is_error);
  EXPECT_EQ(unknown->failure, StatusCode::kOk);
  EXPECT_THAT(ErrorOf(*unknown), HasSubstr("no-such-tool"));

  Result<Outcome> invalid = Call(*runtime, Tool("everything", "get-sum"), R"({"a":"x"})");
  ASSERT_TRUE(invalid.ok()) << invalid.status().message();
  EXPECT_TRUE(invalid->is_error);
  EXPECT_THAT(ErrorOf(*invalid), HasSubstr("expected number"));
}

TEST_F(McpTest, ConfiguredParametersAreCheckedBeforeTheServerStarts) {
  std::unique_ptr<McpRuntime> runtime = Runtime({Everything()});
  ToolConfig echo = Tool("everything", "echo");
  echo.parameters = ConfigValue::Object{{"message", ConfigValue::Object{{"type", "string"}, {"required", true}}}};
  Result<Outcome> outcome = Call(*runtime, echo, R"({"text":"x"})");
  ASSERT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(runtime->RunningServer(echo), nullptr);
}

TEST_F(McpTest, JsonRpcErrorAnswersAreClearErrors) {
  std::unique_ptr<McpRuntime> runtime = Runtime({Scripted("plain")});
  Result<Outcome> outcome = Call(*runtime, Tool("scripted", "rpc-error"));
  ASSERT_TRUE(outcome.ok()) << outcome.status().message();
  EXPECT_TRUE(outcome->is_error);
  EXPECT_EQ(ErrorOf(*outcome),
            "MCP server 'scripted' refused tools/call of 'rpc-error': error -32602: Unknown tool: rpc-error");
  // The server stays usable.
  Result<Outcome> next = Call(*runtime, Tool("scripted", "other"));
  ASSERT_TRUE(next.ok()) << next.status().message();
  EXPECT_EQ(Text(*next), "called other\n");
}

TEST_F(McpTest, StructuredContentAndAudio) {
  std::unique_ptr<McpRuntime> runtime = Runtime({Scripted("plain")});
  Result<Outcome> structured = Call(*runtime, Tool("scripted", "structured"));
  ASSERT_TRUE(structured.ok()) << structured.status().message();
  EXPECT_EQ(Text(*structured), "{\"temperature\":21}\n");
  Result<Outcome> audio = Call(*runtime, Tool("scripted", "audio"));
  ASSERT_TRUE(audio.ok()) << audio.status().message();
  ASSERT_EQ(audio->content.size(), 1u);
  EXPECT_EQ(audio->content[0].type, "resource");
  EXPECT_THAT(audio->content[0].json, HasSubstr(R"("mimeType":"audio/wav","blob":"AAAA")"));
  EXPECT_EQ(audio->content[0].text, "[audio audio/wav, 3 bytes: mcp://scripted/audio/content/0]");
}

TEST_F(McpTest, NegotiatesAnOlderProtocolVersionAndRefusesAnUnknownOne) {
  Result<std::unique_ptr<McpClient>> old = StartClient(Scripted("old-version"));
  ASSERT_TRUE(old.ok()) << old.status().message();
  EXPECT_EQ((*old)->protocol_version(), "2025-03-26");

  Result<std::unique_ptr<McpClient>> bad = StartClient(Scripted("bad-version"));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kUnsupported);
  EXPECT_EQ(bad.status().message(),
            "MCP server 'scripted' speaks MCP protocol version '1999-01-01', which toolvfs does not support "
            "(it supports 2025-06-18, 2025-03-26, 2024-11-05)");
}

TEST_F(McpTest, FollowsTheToolsListCursor) {
  Result<std::unique_ptr<McpClient>> client = StartClient(Scripted("plain"));
  ASSERT_TRUE(client.ok()) << client.status().message();
  CancelToken cancel;
  Result<std::vector<McpToolInfo>> tools = (*client)->ListTools(std::chrono::seconds(10), cancel);
  ASSERT_TRUE(tools.ok()) << tools.status().message();
  ASSERT_EQ(tools->size(), 3u);
  EXPECT_EQ((*tools)[0].name, "tool0");
  EXPECT_EQ((*tools)[2].name, "tool2");
  EXPECT_EQ((*tools)[2].description, "page 2");
}

TEST_F(McpTest, AnswersTheServersOwnRequests) {
  std::unique_ptr<McpRuntime> runtime = Runtime({Scripted("asks-back")});
  Result<Outcome> outcome = Call(*runtime, Tool("scripted", "after-questions"));
  ASSERT_TRUE(outcome.ok()) << outcome.status().message();
  EXPECT_EQ(Text(*outcome), "called after-questions\n");
}

TEST_F(McpTest, GarbageOnStdoutIsAProtocolError) {
  Result<std::unique_ptr<McpClient>> client = StartClient(Scripted("garbage"));
  ASSERT_FALSE(client.ok());
  EXPECT_EQ(client.status().message(),
            "MCP server 'scripted' wrote a line that is not a JSON-RPC message on stdout: hello, I am a server "
            "during initialize");
}

TEST_F(McpTest, AServerKilledMidCallIsAClearErrorWithinSeconds) {
  std::unique_ptr<McpRuntime> runtime = Runtime({Everything()});
  const ToolConfig echo = Tool("everything", "echo");
  ASSERT_TRUE(Call(*runtime, echo, R"({"message":"warm up"})").ok());
  ASSERT_NE(runtime->RunningServer(echo), nullptr);
  const pid_t pid = runtime->RunningServer(echo)->pid();

  std::thread killer([pid] {
    std::this_thread::sleep_for(std::chrono::milliseconds(700));
    ::kill(-pid, SIGKILL);  // the server's whole process group
  });
  const Clock::time_point start = Clock::now();
  Result<Outcome> outcome =
      Call(*runtime, Tool("everything", "trigger-long-running-operation"), R"({"duration":30,"steps":30})");
  killer.join();
  const auto elapsed = Clock::now() - start;
  ASSERT_TRUE(outcome.ok()) << outcome.status().message();
  EXPECT_TRUE(outcome->is_error);
  EXPECT_EQ(outcome->failure, StatusCode::kInternal);
  EXPECT_THAT(ErrorOf(*outcome), HasSubstr("MCP server 'everything' killed by signal SIGKILL during tools/call"));
  EXPECT_LT(elapsed, std::chrono::seconds(5));
  EXPECT_EQ(runtime->RunningServer(echo), nullptr);

  // The next call starts the server again.
  Result<Outcome> again = Call(*runtime, echo, R"({"message":"back"})");
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(Text(*again), "Echo: back\n");
}

TEST_F(McpTest, AServerThatExitsDuringStartupNamesItsStatusAndStderr) {
  McpServerConfig server{.name = "crashy", .command = TOOLVFS_TEST_PYTHON3,
                         .args = {"-c", "import sys; sys.stderr.write('boom: no config\\n'); sys.exit(3)"}, .env = {}};
  std::unique_ptr<McpRuntime> runtime = Runtime({server});
  Result<Outcome> outcome = Call(*runtime, Tool("crashy", "x"));
  ASSERT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.status().message(),
            "MCP server 'crashy' exited with status 3 during initialize; stderr: boom: no config");
}

TEST_F(McpTest, ACommandThatCannotStartIsOneLine) {
  McpServerConfig server{.name = "missing", .command = "/nonexistent/mcp-server", .args = {}, .env = {}};
  std::unique_ptr<McpRuntime> runtime = Runtime({server});
  Result<Outcome> outcome = Call(*runtime, Tool("missing", "x"));
  ASSERT_FALSE(outcome.ok());
  EXPECT_THAT(outcome.status().message(), HasSubstr("MCP server 'missing' cannot start: "));
  EXPECT_THAT(outcome.status().message(), HasSubstr("/nonexistent/mcp-server"));
  EXPECT_EQ(outcome.status().message().find('\n'), std::string::npos);

  McpServerConfig not_on_path{.name = "nope", .command = "no-such-mcp-server-program", .args = {}, .env = {}};
  runtime = Runtime({not_on_path});
  outcome = Call(*runtime, Tool("nope", "x"));
  ASSERT_FALSE(outcome.ok());
  EXPECT_THAT(outcome.status().message(), HasSubstr("MCP server 'nope' cannot start: "));
  EXPECT_THAT(outcome.status().message(), HasSubstr("program 'no-such-mcp-server-program' was not found on the PATH"));
}

TEST_F(McpTest, OnlyListedHostVariablesReachTheServer) {
  McpServerConfig server = Everything();
  server.env = {"MCP_TEST_VISIBLE", "MCP_TEST_UNSET"};
  McpRuntimeOptions options;
  options.host_environment = {{"MCP_TEST_VISIBLE", "shown"}, {"MCP_TEST_HIDDEN", "kept back"}, {"PATH", "/evil"}};
  ::setenv("MCP_TEST_HIDDEN", "kept back", 1);  // not inherited either
  std::unique_ptr<McpRuntime> runtime = Runtime({server}, options);
  Result<Outcome> outcome = Call(*runtime, Tool("everything", "get-env"));
  ::unsetenv("MCP_TEST_HIDDEN");
  ASSERT_TRUE(outcome.ok()) << outcome.status().message();
  const std::string text = Text(*outcome);
  EXPECT_THAT(text, HasSubstr(R"("MCP_TEST_VISIBLE": "shown")"));
  EXPECT_THAT(text, Not(HasSubstr("MCP_TEST_HIDDEN")));
  EXPECT_THAT(text, Not(HasSubstr("MCP_TEST_UNSET")));
  EXPECT_THAT(text, Not(HasSubstr("/evil")));
  EXPECT_THAT(text, HasSubstr(R"("HOME": ")"));
}

TEST_F(McpTest, FilesystemServerReadsAndListsTheProject) {
  std::unique_ptr<McpRuntime> runtime = Runtime({Filesystem({dir_.path()})});
  Result<Outcome> listed = Call(*runtime, Tool("files", "list_directory"), R"({"path":")" + dir_.Join("src") + R"("})");
  ASSERT_TRUE(listed.ok()) << listed.status().message();
  EXPECT_FALSE(listed->is_error) << ErrorOf(*listed);
  EXPECT_THAT(Text(*listed), HasSubstr("[FILE] a.txt"));

  Result<Outcome> read = Call(*runtime, Tool("files", "read_text_file"), R"({"path":")" + dir_.Join("src/a.txt") + R"("})");
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_FALSE(read->is_error) << ErrorOf(*read);
  EXPECT_EQ(Text(*read), "alpha\n\n");

  Result<Outcome> missing = Call(*runtime, Tool("files", "read_text_file"), R"({"path":")" + dir_.Join("none.txt") + R"("})");
  ASSERT_TRUE(missing.ok()) << missing.status().message();
  EXPECT_TRUE(missing->is_error);
  EXPECT_THAT(ErrorOf(*missing), HasSubstr("none.txt"));
}

// The server itself allows both directories; the sandbox does not.
TEST_F(McpTest, TheSandboxKeepsTheServerToItsPolicy) {
  std::unique_ptr<McpRuntime> runtime = Runtime({Filesystem({dir_.path(), outside_.path()})});
  ToolConfig read = Tool("files", "read_text_file");
  Result<Outcome> outside = Call(*runtime, read, R"({"path":")" + outside_.Join("outside.txt") + R"("})");
  ASSERT_TRUE(outside.ok()) << outside.status().message();
  EXPECT_TRUE(outside->is_error) << Text(*outside);
  EXPECT_THAT(ErrorOf(*outside), AllOf(HasSubstr("EACCES"), Not(HasSubstr("outside the project"))));

  // A policy that allows only src/: the project root's own files are out of reach.
  read.has_sandbox_table = true;
  read.sandbox.filesystem_allow = {"src"};
  Result<Outcome> secret = Call(*runtime, read, R"({"path":")" + dir_.Join("secret.txt") + R"("})");
  ASSERT_TRUE(secret.ok()) << secret.status().message();
  EXPECT_TRUE(secret->is_error) << Text(*secret);
  EXPECT_THAT(Text(*secret), Not(HasSubstr("top secret")));
  Result<Outcome> allowed = Call(*runtime, read, R"({"path":")" + dir_.Join("src/a.txt") + R"("})");
  ASSERT_TRUE(allowed.ok()) << allowed.status().message();
  EXPECT_EQ(Text(*allowed), "alpha\n\n");

  // The default policy (project readable) still reads secret.txt: each
  // policy has its own server process.
  Result<Outcome> default_policy = Call(*runtime, Tool("files", "read_text_file"),
                                        R"({"path":")" + dir_.Join("secret.txt") + R"("})");
  ASSERT_TRUE(default_policy.ok()) << default_policy.status().message();
  EXPECT_EQ(Text(*default_policy), "top secret\n\n");
  EXPECT_NE(runtime->RunningServer(read)->pid(), runtime->RunningServer(Tool("files", "x"))->pid());
}

TEST_F(McpTest, TheConfigFileIsOutOfTheServersReach) {
  // Even with the whole project writable, toolvfs.toml (sensitive) can be
  // neither read nor rewritten by the server: it would rewrite its policy.
  WriteRealFile(dir_.Join("toolvfs.toml"), "# the policy\n");
  McpRuntimeOptions options;
  options.confinement.config_project_path = "toolvfs.toml";
  std::unique_ptr<McpRuntime> runtime = Runtime({Filesystem({dir_.path()})}, std::move(options));
  ToolConfig read = Tool("files", "read_text_file");
  read.has_sandbox_table = true;
  read.sandbox.filesystem_allow = {""};
  read.sandbox.filesystem_writable.all = true;
  Result<Outcome> config = Call(*runtime, read, R"({"path":")" + dir_.Join("toolvfs.toml") + R"("})");
  ASSERT_TRUE(config.ok()) << config.status().message();
  EXPECT_TRUE(config->is_error) << Text(*config);
  EXPECT_THAT(Text(*config), Not(HasSubstr("the policy")));
  ToolConfig write = read;
  write.name = write.mcp_tool = "write_file";
  Result<Outcome> rewrite =
      Call(*runtime, write, R"({"path":")" + dir_.Join("toolvfs.toml") + R"(","content":"# tampered"})");
  ASSERT_TRUE(rewrite.ok()) << rewrite.status().message();
  EXPECT_TRUE(rewrite->is_error) << Text(*rewrite);
  EXPECT_EQ(ReadRealFile(dir_.Join("toolvfs.toml")), "# the policy\n");
  Result<Outcome> allowed = Call(*runtime, read, R"({"path":")" + dir_.Join("src/a.txt") + R"("})");
  ASSERT_TRUE(allowed.ok()) << allowed.status().message();
  EXPECT_EQ(Text(*allowed), "alpha\n\n");
}

TEST_F(McpTest, AServerFloodingRequestsStillTimesOut) {
  std::unique_ptr<McpRuntime> runtime = Runtime({Scripted("normal")});
  ToolConfig flood = Tool("scripted", "flood");
  flood.sandbox.limits.timeout_s = 2;
  const Clock::time_point start = Clock::now();
  Result<Outcome> outcome = Call(*runtime, flood);
  ASSERT_TRUE(outcome.ok() || outcome.status().code() == StatusCode::kResourceExhausted)
      << outcome.status().message();
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(10));
  if (outcome.ok()) {
    EXPECT_TRUE(outcome->is_error) << Text(*outcome);
  }
}

// A server that sends requests but never reads its stdin again: the
// answers queued for it stop at 4 MiB, and the call fails saying so long
// before its (here generous) timeout.
TEST_F(McpTest, AnswersQueuedForAServerThatDoesNotReadStopAtFourMiB) {
  std::unique_ptr<McpRuntime> runtime = Runtime({Scripted("normal")});
  ToolConfig flood = Tool("scripted", "flood");
  flood.sandbox.limits.timeout_s = 60;
  const Clock::time_point start = Clock::now();
  Result<Outcome> outcome = Call(*runtime, flood);
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(30));
  ASSERT_TRUE(outcome.ok()) << outcome.status().message();
  EXPECT_TRUE(outcome->is_error);
  EXPECT_EQ(ErrorOf(*outcome),
            "MCP server 'scripted' does not read its stdin (over 4 MiB queued for it) during tools/call");
}

// `max_message_mb` bounds one line from the server: a larger answer fails
// the call, naming the limit, instead of growing the buffer without end.
TEST_F(McpTest, AnAnswerOverTheMessageLimitFailsTheCall) {
  std::unique_ptr<McpRuntime> runtime = Runtime({Scripted("normal")});
  ToolConfig big = Tool("scripted", "big");
  big.sandbox.limits.max_message_mb = 1;
  Result<Outcome> outcome = Call(*runtime, big);
  std::string failure = outcome.ok() ? ErrorOf(*outcome) : outcome.status().message();
  EXPECT_THAT(failure, HasSubstr("MCP server 'scripted' sent a message longer than 1048576 bytes during tools/call"));
  // Within the default limit (10 MiB) the same answer arrives whole.
  std::unique_ptr<McpRuntime> roomy = Runtime({Scripted("normal")});
  Result<Outcome> whole = Call(*roomy, Tool("scripted", "big"));
  ASSERT_TRUE(whole.ok()) << whole.status().message();
  EXPECT_EQ(Text(*whole), std::string(size_t{2} << 20, 'x') + "\n");
}

TEST_F(McpTest, TimeoutCancelsTheRequestAndKeepsTheServer) {
  std::unique_ptr<McpRuntime> runtime = Runtime({Everything()});
  ToolConfig slow = Tool("everything", "trigger-long-running-operation");
  slow.sandbox.limits.timeout_s = 1;
  const Clock::time_point start = Clock::now();
  Result<Outcome> outcome = Call(*runtime, slow, R"({"duration":20,"steps":20})");
  ASSERT_TRUE(outcome.ok()) << outcome.status().message();
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(4));
  EXPECT_TRUE(outcome->is_error);
  EXPECT_EQ(outcome->failure, StatusCode::kTimeout);
  EXPECT_EQ(ErrorOf(*outcome),
            "Tool 'trigger-long-running-operation' timed out after 1 s: MCP server 'everything' did not answer "
            "tools/call within 1 s");
  Result<Outcome> echoed = Call(*runtime, Tool("everything", "echo"), R"({"message":"still here"})");
  ASSERT_TRUE(echoed.ok()) << echoed.status().message();
  EXPECT_EQ(Text(*echoed), "Echo: still here\n");
}

TEST_F(McpTest, CancellingStopsTheServer) {
  std::unique_ptr<McpRuntime> runtime = Runtime({Everything()});
  const ToolConfig slow = Tool("everything", "trigger-long-running-operation");
  ASSERT_TRUE(Call(*runtime, Tool("everything", "echo"), R"({"message":"warm up"})").ok());
  const pid_t pid = runtime->RunningServer(slow)->pid();
  CancelToken cancel;
  std::thread canceller([&cancel] {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    cancel.Cancel();
  });
  const Clock::time_point start = Clock::now();
  Result<Outcome> outcome =
      runtime->Execute(ToolCall{.name = slow.name, .arguments_json = R"({"duration":30,"steps":30})"}, slow, cancel);
  canceller.join();
  ASSERT_TRUE(outcome.ok()) << outcome.status().message();
  EXPECT_EQ(outcome->kind, Outcome::Kind::kCancelled);
  EXPECT_EQ(ErrorOf(*outcome), "MCP server 'everything': tools/call was cancelled");
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(5));
  EXPECT_EQ(runtime->RunningServer(slow), nullptr);
  EXPECT_NE(::kill(pid, 0), 0) << "the server process is gone";
}

TEST_F(McpTest, DestroyingTheRuntimeShutsTheServerDownPromptly) {
  std::unique_ptr<McpRuntime> runtime = Runtime({Everything()});
  const ToolConfig echo = Tool("everything", "echo");
  ASSERT_TRUE(Call(*runtime, echo, R"({"message":"x"})").ok());
  const pid_t pid = runtime->RunningServer(echo)->pid();
  const Clock::time_point start = Clock::now();
  runtime.reset();
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(3));
  EXPECT_NE(::kill(pid, 0), 0) << "the server process is gone";
}

// ---- the sandbox rules of the MCP server kind ----

const LandlockPathRule* FindRule(const LandlockRules& rules, const std::string& path) {
  for (const LandlockPathRule& rule : rules.paths) {
    if (rule.path == path) return &rule;
  }
  return nullptr;
}

TEST(McpServerAccessTest, ReadsThePackageTreeOfItsScriptAndNothingMoreThanStdio) {
  TempDir packages;
  TempDir project;
  WriteRealFile(packages.Join("node_modules/@scope/server/dist/index.js"), "// the server\n");
  WriteRealFile(packages.Join("node_modules/dependency/index.js"), "// a dependency\n");
  WriteRealFile(packages.Join("checkout/package.json"), "{}\n");
  WriteRealFile(packages.Join("checkout/build/main.js"), "// a server from a checkout\n");
  ToolAccessRequest request;
  request.kind = ToolKind::kMcpServer;
  request.program = TOOLVFS_TEST_NODE;
  request.args = {packages.Join("node_modules/@scope/server/dist/index.js"), "stdio"};
  request.project_root = project.path();
  request.readable_prefixes = {""};

  Result<LandlockRules> rules = ToolAccessRules(request);
  ASSERT_TRUE(rules.ok()) << rules.status().message();
  const LandlockPathRule* tree = FindRule(*rules, packages.Join("node_modules"));
  ASSERT_NE(tree, nullptr);
  EXPECT_TRUE(tree->read);
  EXPECT_FALSE(tree->write);
  EXPECT_FALSE(tree->execute);
  EXPECT_NE(FindRule(*rules, "/etc/ssl/openssl.cnf"), nullptr);
  EXPECT_TRUE(rules->deny_tcp_bind_connect);

  // Outside node_modules: the directory with the package.json.
  request.args = {packages.Join("checkout/build/main.js")};
  rules = ToolAccessRules(request);
  ASSERT_TRUE(rules.ok()) << rules.status().message();
  EXPECT_NE(FindRule(*rules, packages.Join("checkout")), nullptr);

  // A package.json in a home directory says nothing about a package (npm
  // run at home leaves one): a script below it gets no tree, never ~/.
  WriteRealFile(packages.Join("home/package.json"), "{}\n");
  WriteRealFile(packages.Join("home/bin/server.js"), "// a loose script\n");
  const char* saved_home = getenv("HOME");
  const std::string previous_home = saved_home == nullptr ? "" : saved_home;
  setenv("HOME", packages.Join("home").c_str(), 1);
  request.args = {packages.Join("home/bin/server.js")};
  rules = ToolAccessRules(request);
  if (saved_home == nullptr) {
    unsetenv("HOME");
  } else {
    setenv("HOME", previous_home.c_str(), 1);
  }
  ASSERT_TRUE(rules.ok()) << rules.status().message();
  EXPECT_EQ(FindRule(*rules, packages.Join("home")), nullptr);
  EXPECT_NE(FindRule(*rules, packages.Join("home/bin/server.js")), nullptr);  // the script itself

  // A script inside the project widens nothing: the policy decides there.
  WriteRealFile(project.Join("node_modules/local/index.js"), "//\n");
  request.args = {project.Join("node_modules/local/index.js")};
  rules = ToolAccessRules(request);
  ASSERT_TRUE(rules.ok()) << rules.status().message();
  EXPECT_EQ(FindRule(*rules, project.Join("node_modules")), nullptr);

  // A stdio tool with the same command line gets neither.
  request.kind = ToolKind::kStdio;
  request.args = {packages.Join("node_modules/@scope/server/dist/index.js")};
  rules = ToolAccessRules(request);
  ASSERT_TRUE(rules.ok()) << rules.status().message();
  EXPECT_EQ(FindRule(*rules, packages.Join("node_modules")), nullptr);
  EXPECT_EQ(FindRule(*rules, "/etc/ssl/openssl.cnf"), nullptr);
}

// ---- the toolvfs binary ----

class McpCliTest : public McpTest {
 protected:
  void SetUp() override {
    McpTest::SetUp();
    WriteRealFile(dir_.Join("toolvfs.toml"),
                  "[mcp_servers.everything]\n"
                  "command = \"" TOOLVFS_TEST_NODE "\"\n"
                  "args = [\"" + McpServerScript("server-everything") + "\", \"stdio\"]\n"
                  "env = [\"MCP_CLI_VISIBLE\"]\n"
                  "\n"
                  "[tools.echo]\n"
                  "source = \"mcp.everything.echo\"\n"
                  "description = \"Says it back\"\n"
                  "\n"
                  "[tools.sum]\n"
                  "source = \"mcp.everything.get-sum\"\n"
                  "\n"
                  "[tools.everything]\n"
                  "source = \"mcp.everything\"\n");
  }

  ProcessResult Toolvfs(std::vector<std::string> args) {
    std::vector<std::string> argv = {ToolvfsBinary()};
    for (std::string& arg : args) argv.push_back(std::move(arg));
    argv.push_back("--project");
    argv.push_back(dir_.path());
    argv.push_back("--no-interaction");
    return RunProcess(argv, ProcessOptions{.cwd = dir_.path(),
                                           .set_env = {"MCP_CLI_VISIBLE=from the host", "MCP_CLI_HIDDEN=secret"},
                                           .deadline = std::chrono::seconds(60)});
  }
};

TEST_F(McpCliTest, RunsAConfiguredMcpTool) {
  ProcessResult result = Toolvfs({"run", "echo", "--args", R"({"message":"through the CLI"})"});
  EXPECT_EQ(result.exit_code, 0) << result;
  EXPECT_EQ(result.out, "Echo: through the CLI\n");

  result = Toolvfs({"run", "sum", "--args", R"({"a":1,"b":2})", "--json"});
  EXPECT_EQ(result.exit_code, 0) << result;
  EXPECT_THAT(result.out, AllOf(HasSubstr(R"("status":"completed")"), HasSubstr("The sum of 1 and 2 is 3")));
}

TEST_F(McpCliTest, RunsImportedToolsByNameOrQualifiedName) {
  ProcessResult result = Toolvfs({"run", "get-sum", "--args", R"({"a":20,"b":22})"});
  EXPECT_EQ(result.exit_code, 0) << result;
  EXPECT_THAT(result.out, HasSubstr("42"));

  // "echo" is a configured tool, so the import's echo is everything.echo.
  result = Toolvfs({"run", "everything.echo", "--args", R"({"message":"qualified"})"});
  EXPECT_EQ(result.exit_code, 0) << result;
  EXPECT_EQ(result.out, "Echo: qualified\n");

  result = Toolvfs({"run", "get-env"});
  EXPECT_EQ(result.exit_code, 0) << result;
  EXPECT_THAT(result.out, AllOf(HasSubstr("from the host"), Not(HasSubstr("MCP_CLI_HIDDEN"))));

  result = Toolvfs({"run", "no-such-tool"});
  EXPECT_EQ(result.exit_code, 2) << result;
  ExpectOneLineError(result);
  EXPECT_THAT(result.err, AllOf(HasSubstr("Unknown tool 'no-such-tool'"), HasSubstr("its MCP imports offer: "),
                                HasSubstr("get-sum")));

  result = Toolvfs({"run", "everything"});
  EXPECT_EQ(result.exit_code, 2) << result;
  EXPECT_THAT(result.err, HasSubstr("run one of them as everything.TOOL"));
}

// The call's own input is checked before a server is started to look an
// imported tool up: the error names the flag, not the server.
TEST_F(McpCliTest, BadArgumentsOrAnswersFailBeforeAnyServerStarts) {
  WriteRealFile(dir_.Join("toolvfs.toml"),
                "[mcp_servers.broken]\n"
                "command = \"/nonexistent/server\"\n"
                "\n"
                "[tools.imports]\n"
                "source = \"mcp.broken\"\n");
  ProcessResult result = Toolvfs({"run", "some-tool", "--args", "[1]"});
  EXPECT_EQ(result.exit_code, 2) << result;
  ExpectOneLineError(result);
  EXPECT_THAT(result.err, AllOf(HasSubstr("--args"), Not(HasSubstr("cannot start"))));
  result = Toolvfs({"run", "some-tool", "--answer", "no-equals-sign"});
  EXPECT_EQ(result.exit_code, 2) << result;
  ExpectOneLineError(result);
  EXPECT_THAT(result.err, AllOf(HasSubstr("--answer"), Not(HasSubstr("cannot start"))));
}

// How often `needle` occurs in `text`.
long CountOccurrences(const std::string& text, const std::string& needle) {
  long count = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++count;
  return count;
}

// An MCP server reads files itself, confined by the sandbox: its calls have
// no requests to audit; each run leaves its start and end records only.
TEST_F(McpCliTest, McpRunsLeaveOnlyTheirStartAndEndRecords) {
  ASSERT_EQ(Toolvfs({"run", "echo", "--args", R"({"message":"a"})"}).exit_code, 0);
  ASSERT_EQ(Toolvfs({"run", "get-sum", "--args", R"({"a":1,"b":2})"}).exit_code, 0);
  std::string log = ReadRealFile(dir_.Join(".toolvfs/audit.jsonl"));
  EXPECT_EQ(std::count(log.begin(), log.end(), '\n'), 4) << log;
  EXPECT_EQ(std::count(log.begin(), log.end(), '\n'),
            CountOccurrences(log, R"("method":"run.start")") + CountOccurrences(log, R"("method":"run.end")"))
      << log;
  EXPECT_THAT(log, AllOf(HasSubstr(R"("target":"mcp")"), HasSubstr(R"("target":"completed")")));
}

TEST_F(McpCliTest, ToolErrorsAndKilledServersExitWithOne) {
  ProcessResult result = Toolvfs({"run", "sum", "--args", R"({"a":"x","b":1})"});
  EXPECT_EQ(result.exit_code, 1) << result;
  EXPECT_THAT(result.err, HasSubstr("expected number"));
}

TEST_F(McpCliTest, ListsMcpToolsWithTheirDescriptions) {
  ProcessResult result = Toolvfs({"tools"});
  EXPECT_EQ(result.exit_code, 0) << result;
  EXPECT_THAT(result.out, HasSubstr("Says it back"));                   // the configured description
  EXPECT_THAT(result.out, HasSubstr("Returns the sum of two numbers"));  // the server's, for sum
  EXPECT_THAT(result.out, HasSubstr("mcp.everything.get-tiny-image"));   // an imported tool
  EXPECT_THAT(result.out, HasSubstr("everything.echo "));                // qualified: echo is configured

  result = Toolvfs({"tools", "--json"});
  EXPECT_EQ(result.exit_code, 0) << result;
  EXPECT_THAT(result.out, AllOf(HasSubstr(R"("name":"get-sum","runtime":"mcp","source":"mcp.everything.get-sum")"),
                                HasSubstr(R"("imported_by":"everything")"), HasSubstr(R"("input_schema":{)")));
}

TEST_F(McpCliTest, ABrokenServerFailsOnlyItsTools) {
  WriteRealFile(dir_.Join("toolvfs.toml"),
                "[mcp_servers.broken]\n"
                "command = \"/nonexistent/server\"\n"
                "\n"
                "[tools.broken_tool]\n"
                "source = \"mcp.broken.x\"\n"
                "\n"
                "[tools.fine]\n"
                "command = \"" TOOLVFS_TEST_PYTHON3 " -c 'print(1)'\"\n"
                "runtime = \"stdio\"\n");
  ProcessResult result = Toolvfs({"run", "broken_tool"});
  EXPECT_EQ(result.exit_code, 2) << result;
  ExpectOneLineError(result);
  EXPECT_THAT(result.err, HasSubstr("MCP server 'broken' cannot start: "));
  result = Toolvfs({"run", "fine"});
  EXPECT_EQ(result.exit_code, 0) << result;
  result = Toolvfs({"tools"});
  EXPECT_EQ(result.exit_code, 0) << result;
  EXPECT_THAT(result.out, HasSubstr("MCP server 'broken' cannot start"));
}

}  // namespace
}  // namespace toolvfs
