// toolvfs.toml parsing: what valid files turn into.
#include "config/config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <string>

namespace toolvfs {
namespace {

// The example of SPEC.md §3.1, verbatim.
constexpr std::string_view kSpecExample = R"toml(
[tools.smart_editor]
source = "local"                 # local | builtin | mcp.SERVER.TOOL
command = "tools/smart_editor --fast"   # string, or { program, args = [], shell = false }
runtime = "vfs"                  # stdio | vfs | wasm; see §6.2 for inference
description = "Edits files with patterns"
parameters = { path = { type = "string", required = true } }
options = { confirmation_mode = true }

[tools.smart_editor.sandbox]
filesystem.allow = ["."]                 # readable prefixes; "." = whole project
filesystem.writable = true               # true, false, or a list of writable prefixes
filesystem.deny = ["secrets/"]           # never readable or writable
network.allow = ["https://api.github.com/repos/"]   # URL prefixes
network.deny = []
network.envs = ["GITHUB_TOKEN"]          # may appear as ${VAR} in header values
commands.cargo = { args = [["check", "**"]], envs = ["CARGO_TERM_COLOR"] }
commands.rm = false                      # explicit deny
sensitive_paths = ["config/prod.key"]    # added to the built-in list
system_read = ["/opt/data"]              # extra read-only paths the OS sandbox lets the process see
limits = { timeout_s = 600, idle_timeout_s = 60, cancel_grace_s = 5, memory_mb = 1024, max_message_mb = 10, max_processes = 64 }

[mcp_servers.files]
command = "npx"
args = ["-y", "@modelcontextprotocol/server-filesystem", "."]
)toml";

Config MustParse(std::string_view text) {
  Result<Config> config = ParseConfig(text, "toolvfs.toml");
  EXPECT_TRUE(config.ok()) << config.status().ToString();
  return config.ok() ? std::move(config).value() : Config();
}

TEST(ConfigTest, SpecExampleParsesToTheExpectedStructs) {
  Config config = MustParse(kSpecExample);
  EXPECT_EQ(config.path, "toolvfs.toml");
  EXPECT_TRUE(config.warnings.empty());
  ASSERT_EQ(config.tools.size(), 1u);
  const ToolConfig& tool = config.tools.at("smart_editor");
  EXPECT_EQ(tool.name, "smart_editor");
  EXPECT_EQ(tool.source, ToolSource::kLocal);
  ASSERT_TRUE(tool.command.has_value());
  EXPECT_EQ(*tool.command, (CommandSpec{"tools/smart_editor", {"--fast"}, false, true}));
  EXPECT_EQ(tool.runtime, RuntimeKind::kVfs);
  EXPECT_EQ(tool.description, "Edits files with patterns");
  EXPECT_EQ(ConfigValue(tool.parameters).ToJson(), R"({"path":{"required":true,"type":"string"}})");
  EXPECT_EQ(ConfigValue(tool.options).ToJson(), R"({"confirmation_mode":true})");
  EXPECT_FALSE(tool.stateful);
  EXPECT_TRUE(tool.has_sandbox_table);

  SandboxConfig expected;
  expected.filesystem_allow = {""};  // "." normalized: the root
  expected.filesystem_writable = {true, {}};
  expected.filesystem_deny = {"secrets"};
  expected.network_allow = {"https://api.github.com/repos/"};
  expected.network_envs = {"GITHUB_TOKEN"};
  expected.commands["cargo"] = CommandRule{false, {{{"check", "**"}}}, {"CARGO_TERM_COLOR"}};
  expected.commands["rm"] = CommandRule{true, std::nullopt, {}};
  expected.sensitive_paths = {"config/prod.key"};
  expected.system_read = {"/opt/data"};
  expected.limits = LimitsConfig{600, 60, 5, 1024, 10, 64};
  EXPECT_EQ(tool.sandbox, expected);

  ASSERT_EQ(config.mcp_servers.size(), 1u);
  EXPECT_EQ(config.mcp_servers.at("files"),
            (McpServerConfig{
                "files", "npx", {"-y", "@modelcontextprotocol/server-filesystem", "."}, {}}));

  Result<RuntimeKind> runtime = ResolveRuntime(tool);
  ASSERT_TRUE(runtime.ok());
  EXPECT_EQ(*runtime, RuntimeKind::kVfs);
}

TEST(ConfigTest, ValuesSerializeAsJson) {
  ConfigValue::Array list = {ConfigValue(), true, 7, 2.5, 1.0, std::nan(""), HUGE_VAL,
                             "quote \" backslash \\ newline \n bell \x07 caf\xC3\xA9"};
  ConfigValue::Object object;
  object.emplace("list", ConfigValue(std::move(list)));
  EXPECT_EQ(ConfigValue(std::move(object)).ToJson(),
            R"({"list":[null,true,7,2.5,1.0,null,null,"quote \" backslash \\ newline \n bell \u0007 café"]})");
}

TEST(ConfigTest, EmptyFileIsAValidConfigWithoutTools) {
  Config config = MustParse("");
  EXPECT_TRUE(config.tools.empty());
  EXPECT_TRUE(config.mcp_servers.empty());
}

TEST(ConfigTest, DefaultsWithoutSandboxTable) {
  Config config = MustParse("[tools.t]\ncommand = \"t\"\n");
  const ToolConfig& tool = config.tools.at("t");
  EXPECT_EQ(tool.source, ToolSource::kLocal);
  EXPECT_FALSE(tool.runtime.has_value());
  EXPECT_FALSE(tool.has_sandbox_table);
  EXPECT_EQ(tool.sandbox, SandboxConfig());
  EXPECT_EQ(tool.sandbox.limits, (LimitsConfig{600, 60, 5, 1024, 10, 64}));
}

TEST(ConfigTest, EmptySandboxTableIsRecorded) {
  Config config = MustParse("[tools.t]\ncommand = \"t\"\n[tools.t.sandbox]\n");
  const ToolConfig& tool = config.tools.at("t");
  EXPECT_TRUE(tool.has_sandbox_table);
  EXPECT_TRUE(tool.sandbox.filesystem_allow.empty());
}

TEST(ConfigTest, PartialLimitsKeepTheOtherDefaults) {
  Config config = MustParse(
      "[tools.t]\ncommand = \"t\"\nsandbox.limits = { timeout_s = 30, max_processes = 1 }\n");
  EXPECT_EQ(config.tools.at("t").sandbox.limits, (LimitsConfig{30, 60, 5, 1024, 10, 1}));
}

TEST(ConfigTest, WritableAsBoolAndAsList) {
  Config config = MustParse(R"toml(
[tools.yes]
command = "t"
sandbox.filesystem.writable = true
[tools.no]
command = "t"
sandbox.filesystem.writable = false
[tools.some]
command = "t"
sandbox.filesystem = { allow = ["src", "./docs//"], writable = ["src/gen/", "out"] }
)toml");
  EXPECT_EQ(config.tools.at("yes").sandbox.filesystem_writable, (WritableConfig{true, {}}));
  EXPECT_EQ(config.tools.at("no").sandbox.filesystem_writable, (WritableConfig{false, {}}));
  const SandboxConfig& some = config.tools.at("some").sandbox;
  EXPECT_EQ(some.filesystem_writable, (WritableConfig{false, {"src/gen", "out"}}));
  EXPECT_EQ(some.filesystem_allow, (std::vector<std::string>{"src", "docs"}));
}

TEST(ConfigTest, CommandRulesKeepAbsentAndEmptyArgsApart) {
  Config config = MustParse(R"toml(
[tools.t]
command = "t"
[tools.t.sandbox.commands]
git = {}
ls = { args = [] }
rg = { args = [["--json", "**"], []], envs = ["RIPGREP_CONFIG_PATH"] }
"/usr/bin/env" = false
)toml");
  const auto& commands = config.tools.at("t").sandbox.commands;
  EXPECT_EQ(commands.at("git"), (CommandRule{false, std::nullopt, {}}));
  EXPECT_EQ(commands.at("ls"), (CommandRule{false, std::vector<std::vector<std::string>>{}, {}}));
  EXPECT_EQ(commands.at("rg"),
            (CommandRule{false, {{{"--json", "**"}, {}}}, {"RIPGREP_CONFIG_PATH"}}));
  EXPECT_TRUE(commands.at("/usr/bin/env").denied);
}

TEST(ConfigTest, LoaderVariablesInCommandEnvsAreAcceptedWithAWarning) {
  Config config = MustParse(R"toml([tools.t]
command = "t"
sandbox.commands.cc = { envs = ["LD_PRELOAD", "PATHX"] }
)toml");
  EXPECT_EQ(config.tools.at("t").sandbox.commands.at("cc").envs,
            (std::vector<std::string>{"LD_PRELOAD", "PATHX"}));
  EXPECT_EQ(config.warnings,
            (std::vector<std::string>{
                "toolvfs.toml:3:33: 'tools.t.sandbox.commands.cc.envs[0]': loader variables "
                "(LD_*, DYLD_*) are never forwarded; 'LD_PRELOAD' has no effect"}));
}

TEST(ConfigTest, SensitivePathsMayBePatterns) {
  Config config = MustParse(
      "[tools.t]\ncommand = \"t\"\nsandbox.sensitive_paths = [\"**/*.secret\", "
      "\"config/prod.key\"]\n");
  EXPECT_EQ(config.tools.at("t").sandbox.sensitive_paths,
            (std::vector<std::string>{"**/*.secret", "config/prod.key"}));
}

TEST(ConfigTest, NetworkPrefixesAreKeptAsWritten) {
  Config config = MustParse(R"toml([tools.t]
command = "t"
sandbox.network = { allow = ["HTTPS://API.example.com:8443/v1/", "http://[::1]:8080", "https://bücher.example/%7Euser"], deny = ["https://api.example.com/v1/admin"], envs = ["TOKEN", "_x9"] }
)toml");
  const SandboxConfig& sandbox = config.tools.at("t").sandbox;
  EXPECT_EQ(sandbox.network_allow,
            (std::vector<std::string>{"HTTPS://API.example.com:8443/v1/", "http://[::1]:8080",
                                      "https://bücher.example/%7Euser"}));
  EXPECT_EQ(sandbox.network_deny, (std::vector<std::string>{"https://api.example.com/v1/admin"}));
  EXPECT_EQ(sandbox.network_envs, (std::vector<std::string>{"TOKEN", "_x9"}));
}

TEST(ConfigTest, CommandStringIsSplitLikeAShell) {
  Config config = MustParse(R"toml(
[tools.a]
command = "python3 'my tool.py' --name \"a b\" plain\\ space {{ tool.arguments | tojson }}"
[tools.b]
command = ".config/jp/tools/target/release/jp-tools fs modify_file"
)toml");
  EXPECT_EQ(
      *config.tools.at("a").command,
      (CommandSpec{"python3",
                   {"my tool.py", "--name", "a b", "plain space", "{{ tool.arguments | tojson }}"},
                   false,
                   true}));
  EXPECT_EQ(*config.tools.at("b").command,
            (CommandSpec{
                ".config/jp/tools/target/release/jp-tools", {"fs", "modify_file"}, false, true}));
}

TEST(ConfigTest, CommandTableIsTakenAsWritten) {
  Config config = MustParse(R"toml(
[tools.a]
command = { program = "my tool", args = ["a b", "{{ context.root }}", ""], shell = false }
[tools.b]
command = { program = "echo hi | wc -c", shell = true }
[tools.c.command]
program = "c"
)toml");
  EXPECT_EQ(*config.tools.at("a").command,
            (CommandSpec{"my tool", {"a b", "{{ context.root }}", ""}, false, false}));
  EXPECT_EQ(*config.tools.at("b").command, (CommandSpec{"echo hi | wc -c", {}, true, false}));
  EXPECT_EQ(*config.tools.at("c").command, (CommandSpec{"c", {}, false, false}));
}

TEST(ConfigTest, SourcesBuiltinAndMcp) {
  Config config = MustParse(R"toml(
[mcp_servers.files]
command = "npx"
args = ["-y", "@modelcontextprotocol/server-filesystem", "."]
env = ["NODE_OPTIONS"]

[tools.read_file]
source = "builtin"
[tools.fs_all]
source = "mcp.files"
[tools.fs_read]
source = "mcp.files.read_text_file"
description = "Reads a file through the MCP server"
[tools.dotted]
source = "mcp.files.ns.tool"
)toml");
  EXPECT_EQ(config.tools.at("read_file").source, ToolSource::kBuiltin);
  EXPECT_FALSE(config.tools.at("read_file").command.has_value());
  const ToolConfig& all = config.tools.at("fs_all");
  EXPECT_EQ(all.source, ToolSource::kMcp);
  EXPECT_EQ(all.mcp_server, "files");
  EXPECT_EQ(all.mcp_tool, "");
  EXPECT_EQ(config.tools.at("fs_read").mcp_tool, "read_text_file");
  EXPECT_EQ(config.tools.at("dotted").mcp_server, "files");
  EXPECT_EQ(config.tools.at("dotted").mcp_tool, "ns.tool");
  EXPECT_EQ(config.mcp_servers.at("files").env, (std::vector<std::string>{"NODE_OPTIONS"}));
}

TEST(ConfigTest, ParametersOptionsQuestionsAndStateful) {
  Config config = MustParse(R"toml(
[tools.t]
command = "t"
stateful = true
questions.overwrite.answer = true
questions.name = { answer = "main" }
[tools.t.parameters.pattern]
type = "string"
description = "Regex"
required = true
[tools.t.parameters.limit]
type = ["integer", "null"]
default = 10
minimum = 1
[tools.t.parameters.mode]
type = "string"
enum = ["fast", "slow"]
[tools.t.parameters.files]
type = "array"
items = { type = "string", minLength = 1 }
[tools.t.parameters.opts]
type = "object"
properties = { depth = { type = "number", maximum = 2.5 } }
[tools.t.options]
nested = { list = [1, 2.0, "x", 1979-05-27T07:32:00Z] }
)toml");
  const ToolConfig& tool = config.tools.at("t");
  EXPECT_TRUE(tool.stateful);
  EXPECT_EQ(tool.question_answers.at("overwrite"), ConfigValue(true));
  EXPECT_EQ(tool.question_answers.at("name"), ConfigValue("main"));
  EXPECT_EQ(ConfigValue(tool.parameters).ToJson(),
            R"({"files":{"items":{"minLength":1,"type":"string"},"type":"array"},)"
            R"("limit":{"default":10,"minimum":1,"type":["integer","null"]},)"
            R"("mode":{"enum":["fast","slow"],"type":"string"},)"
            R"("opts":{"properties":{"depth":{"maximum":2.5,"type":"number"}},"type":"object"},)"
            R"("pattern":{"description":"Regex","required":true,"type":"string"}})");
  EXPECT_EQ(ConfigValue(tool.options).ToJson(),
            R"({"nested":{"list":[1,2.0,"x","1979-05-27T07:32:00Z"]}})");
  ConfigValue parameters(tool.parameters);
  const ConfigValue* pattern = parameters.Find("pattern");
  ASSERT_NE(pattern, nullptr);
  EXPECT_TRUE(pattern->Find("required")->as_bool());
}

TEST(ConfigTest, ConfigValueJsonEscapesControlCharacters) {
  ConfigValue value(ConfigValue::Object{{"k\"", ConfigValue(std::string("a\n\x01\\", 4))}});
  EXPECT_EQ(value.ToJson(), R"({"k\"":"a\n\u0001\\"})");
  EXPECT_EQ(ConfigValue().ToJson(), "null");
  EXPECT_EQ(ConfigValue(0.1).ToJson(), "0.1");
  EXPECT_EQ(ConfigValue(int64_t{-3}).ToJson(), "-3");
}

TEST(ConfigTest, LoadConfigReadsTheFileAndNamesItInErrors) {
  char directory_template[] = "/tmp/toolvfs-config-test-XXXXXX";
  ASSERT_NE(mkdtemp(directory_template), nullptr);
  std::string directory = directory_template;
  std::string path = directory + "/toolvfs.toml";
  {
    std::ofstream file(path);
    file << "[tools.t]\ncommand = \"t\"\n";
  }
  Result<Config> config = LoadConfig(path);
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->path, path);
  EXPECT_EQ(config->tools.size(), 1u);

  {
    std::ofstream file(path);
    file << "[tools.t]\ncommand = \"t\"\nbogus = 1\n";
  }
  config = LoadConfig(path);
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().message(), path + ":3:1: unknown key 'tools.t.bogus'");

  std::string missing = directory + "/missing.toml";
  config = LoadConfig(missing);
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().code(), StatusCode::kNotFound);
  EXPECT_NE(config.status().message().find("'" + missing + "'"), std::string::npos)
      << config.status().message();

  unlink(path.c_str());
  rmdir(directory.c_str());
}

}  // namespace
}  // namespace toolvfs

// ${toolvfs.prefix} and ${toolvfs.sdk} in commands (docs/config.md, "Where
// toolvfs is"): replaced word by word from the values the caller passes.
namespace toolvfs {
namespace {

const ConfigVariables kInstallation = {{"prefix", "/opt/tool vfs"}, {"sdk", "/opt/tool vfs/share/toolvfs/sdk"}};

TEST(ConfigVariablesTest, ReplacedInEveryKindOfCommandAndKeptOneWord) {
  Result<Config> config = ParseConfig(R"(
[tools.report]
command = "${toolvfs.prefix}/libexec/toolvfs/examples/todo_report --sdk=\"${toolvfs.sdk}\""
runtime = "vfs"

[tools.table]
command = { program = "${toolvfs.prefix}/bin/x", args = ["${toolvfs.sdk}/toolvfs_tool.py", "$HOME"] }

[mcp_servers.code]
command = "${toolvfs.prefix}/bin/server"
args = ["--sdk", "${toolvfs.sdk}"]
)",
                                      "toolvfs.toml", kInstallation);
  ASSERT_TRUE(config.ok()) << config.status().message();
  EXPECT_EQ(*config->tools.at("report").command,
            (CommandSpec{"/opt/tool vfs/libexec/toolvfs/examples/todo_report",
                         {"--sdk=/opt/tool vfs/share/toolvfs/sdk"}, false, true}));
  EXPECT_EQ(*config->tools.at("table").command,
            (CommandSpec{"/opt/tool vfs/bin/x", {"/opt/tool vfs/share/toolvfs/sdk/toolvfs_tool.py", "$HOME"}, false, false}));
  EXPECT_EQ(config->mcp_servers.at("code").command, "/opt/tool vfs/bin/server");
  EXPECT_EQ(config->mcp_servers.at("code").args,
            (std::vector<std::string>{"--sdk", "/opt/tool vfs/share/toolvfs/sdk"}));
}

TEST(ConfigVariablesTest, UnknownUnavailableAndUnterminatedAreErrorsNamingTheVariable) {
  Result<Config> typo = ParseConfig("[tools.a]\ncommand = \"${toolvfs.prefx}/bin/a\"\n", "toolvfs.toml", kInstallation);
  ASSERT_FALSE(typo.ok());
  EXPECT_EQ(typo.status().message(),
            "toolvfs.toml:2:11: 'tools.a.command' uses unknown variable ${toolvfs.prefx} (did you mean 'prefix'?); "
            "known: ${toolvfs.prefix}, ${toolvfs.sdk}");

  // Without values (toolvfs found no installation), a use says so.
  Result<Config> unavailable = ParseConfig("[tools.a]\ncommand = \"${toolvfs.sdk}/a\"\n", "toolvfs.toml");
  ASSERT_FALSE(unavailable.ok());
  EXPECT_THAT(unavailable.status().message(),
              ::testing::HasSubstr("'tools.a.command' uses ${toolvfs.sdk}, which has no value here"));

  Result<Config> unterminated = ParseConfig("[tools.a]\ncommand = \"${toolvfs.sdk/a\"\n", "toolvfs.toml", kInstallation);
  ASSERT_FALSE(unterminated.ok());
  EXPECT_THAT(unterminated.status().message(), ::testing::HasSubstr("unterminated variable '${toolvfs.'"));

  Result<Config> in_args = ParseConfig("[mcp_servers.s]\ncommand = \"x\"\nargs = [\"${toolvfs.bin}\"]\n", "toolvfs.toml",
                                       kInstallation);
  ASSERT_FALSE(in_args.ok());
  EXPECT_THAT(in_args.status().message(), ::testing::HasSubstr("'mcp_servers.s.args' uses unknown variable ${toolvfs.bin}"));

  // Other $ text is still the shell rule's error, not a variable.
  Result<Config> shell = ParseConfig("[tools.a]\ncommand = \"a $HOME\"\n", "toolvfs.toml", kInstallation);
  ASSERT_FALSE(shell.ok());
  EXPECT_THAT(shell.status().message(), ::testing::HasSubstr("has '$', which a shell would interpret"));
}

}  // namespace
}  // namespace toolvfs
