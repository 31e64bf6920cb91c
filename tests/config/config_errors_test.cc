// toolvfs.toml strictness: every unknown key, wrong type and malformed value
// is an error with file:line:col, the key path and the reason (exact text).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "config/config.h"

namespace toolvfs {
namespace {

std::vector<std::string> Errors(std::string_view text) {
  return CheckConfigText(text, "toolvfs.toml").errors;
}

struct ErrorCase {
  const char* name;
  const char* toml;
  const char* error;  // the only error expected
};

void PrintTo(const ErrorCase& error_case, std::ostream* out) { *out << error_case.name; }

class ConfigErrorTest : public testing::TestWithParam<ErrorCase> {};

TEST_P(ConfigErrorTest, ReportsExactlyThisError) {
  const ErrorCase& error_case = GetParam();
  EXPECT_EQ(Errors(error_case.toml), std::vector<std::string>{error_case.error}) << error_case.toml;
  Result<Config> config = ParseConfig(error_case.toml, "toolvfs.toml");
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(config.status().message(), error_case.error);
}

// Every place a key can be unknown.
INSTANTIATE_TEST_SUITE_P(
    UnknownKeys, ConfigErrorTest,
    testing::Values(
        ErrorCase{"TopLevel", "toolz = 1\n",
                  "toolvfs.toml:1:1: unknown key 'toolz' (did you mean 'tools'?)"},
        ErrorCase{"TopLevelTable", "[tool.t]\ncommand = \"t\"\n",
                  "toolvfs.toml:1:2: unknown key 'tool' (did you mean 'tools'?)"},
        ErrorCase{
            "Tool", "[tools.fmt]\ncommand = \"t\"\ndescripton = \"x\"\n",
            "toolvfs.toml:3:1: unknown key 'tools.fmt.descripton' (did you mean 'description'?)"},
        ErrorCase{"CommandTable", "[tools.t]\ncommand = { program = \"t\", arg = [] }\n",
                  "toolvfs.toml:2:28: unknown key 'tools.t.command.arg' (did you mean 'args'?)"},
        ErrorCase{
            "Sandbox",
            "[tools.fmt]\ncommand = \"fmt\"\n\n[tools.fmt.sandbox]\nfilesytem.allow = [\".\"]\n",
            "toolvfs.toml:5:1: unknown key 'tools.fmt.sandbox.filesytem' (did you mean "
            "'filesystem'?)"},
        ErrorCase{"SandboxHeader", "[tools.t]\ncommand = \"t\"\n[tools.t.sandbx]\n",
                  "toolvfs.toml:3:10: unknown key 'tools.t.sandbx' (did you mean 'sandbox'?)"},
        ErrorCase{"Filesystem", "[tools.t]\ncommand = \"t\"\nsandbox.filesystem.writeable = true\n",
                  "toolvfs.toml:3:20: unknown key 'tools.t.sandbox.filesystem.writeable' (did you "
                  "mean 'writable'?)"},
        ErrorCase{
            "Network", "[tools.t]\ncommand = \"t\"\nsandbox.network.env = []\n",
            "toolvfs.toml:3:17: unknown key 'tools.t.sandbox.network.env' (did you mean 'envs'?)"},
        ErrorCase{"CommandRule",
                  "[tools.t]\ncommand = \"t\"\nsandbox.commands.git = { arg = [] }\n",
                  "toolvfs.toml:3:26: unknown key 'tools.t.sandbox.commands.git.arg' (did you mean "
                  "'args'?)"},
        ErrorCase{"Limits", "[tools.t]\ncommand = \"t\"\nsandbox.limits = { timeout = 5 }\n",
                  "toolvfs.toml:3:20: unknown key 'tools.t.sandbox.limits.timeout' (did you mean "
                  "'timeout_s'?)"},
        ErrorCase{"McpServer", "[mcp_servers.s]\ncommand = \"x\"\nenvs = []\n",
                  "toolvfs.toml:3:1: unknown key 'mcp_servers.s.envs' (did you mean 'env'?)"},
        ErrorCase{
            "Question", "[tools.t]\ncommand = \"t\"\nquestions.q = { answer = true, answr = 1 }\n",
            "toolvfs.toml:3:32: unknown key 'tools.t.questions.q.answr' (did you mean 'answer'?)"},
        ErrorCase{
            "ParameterSchema",
            "[tools.t]\ncommand = \"t\"\nparameters.p = { type = \"string\", requird = true }\n",
            "toolvfs.toml:3:35: unknown key 'tools.t.parameters.p.requird' (did you mean "
            "'required'?)"},
        ErrorCase{"NestedParameterSchema",
                  "[tools.t]\ncommand = \"t\"\nparameters.p.items = { tpye = \"string\" }\n",
                  "toolvfs.toml:3:24: unknown key 'tools.t.parameters.p.items.tpye' (did you mean "
                  "'type'?)"},
        ErrorCase{"NoSuggestion", "[tools.t]\ncommand = \"t\"\nsandbox.zzz = 1\n",
                  "toolvfs.toml:3:9: unknown key 'tools.t.sandbox.zzz'"},
        ErrorCase{"QuotedKeyShownEscaped", "\"a b\\n\" = 1\n",
                  "toolvfs.toml:1:1: unknown key '\"a b\\n\"'"}));

// Wrong types and values, one per key.
INSTANTIATE_TEST_SUITE_P(
    WrongTypes, ConfigErrorTest,
    testing::Values(
        ErrorCase{"Tools", "tools = 1\n", "toolvfs.toml:1:9: 'tools' must be a table, got 1"},
        ErrorCase{"ToolEntry", "tools.t = \"x\"\n",
                  "toolvfs.toml:1:11: 'tools.t' must be a table, got \"x\""},
        ErrorCase{"McpServers", "mcp_servers = []\n",
                  "toolvfs.toml:1:15: 'mcp_servers' must be a table, got an array"},
        ErrorCase{"SourceType", "[tools.t]\nsource = 1\n",
                  "toolvfs.toml:2:10: 'tools.t.source' must be a string, got 1"},
        ErrorCase{
            "SourceValue", "[tools.t]\nsource = \"bultin\"\n",
            "toolvfs.toml:2:10: 'tools.t.source' must be \"local\", \"builtin\", \"mcp.SERVER\" or "
            "\"mcp.SERVER.TOOL\", got \"bultin\" (did you mean 'builtin'?)"},
        ErrorCase{"SourceMcpWithoutServer", "[tools.t]\nsource = \"mcp\"\n",
                  "toolvfs.toml:2:10: 'tools.t.source' must name the server: \"mcp.SERVER\" or "
                  "\"mcp.SERVER.TOOL\""},
        ErrorCase{"SourceMcpEmptyTool",
                  "[mcp_servers.s]\ncommand = \"x\"\n[tools.t]\nsource = \"mcp.s.\"\n",
                  "toolvfs.toml:4:10: 'tools.t.source' must be \"mcp.SERVER\" or "
                  "\"mcp.SERVER.TOOL\", got \"mcp.s.\""},
        ErrorCase{"SourceUnknownServer", "[tools.t]\nsource = \"mcp.files.read\"\n",
                  "toolvfs.toml:2:10: 'tools.t.source' names the MCP server 'files', which is not "
                  "configured; "
                  "add [mcp_servers.files]"},
        ErrorCase{"CommandType", "[tools.t]\ncommand = 5\n",
                  "toolvfs.toml:2:11: 'tools.t.command' must be a string or a table { program, "
                  "args, shell }, got 5"},
        ErrorCase{
            "CommandMissing", "[tools.t]\ndescription = \"x\"\n",
            "toolvfs.toml:1:1: 'tools.t' has no 'command'; a local tool needs the program to run"},
        ErrorCase{"CommandEmpty", "[tools.t]\ncommand = \"  \"\n",
                  "toolvfs.toml:2:11: 'tools.t.command' is empty"},
        ErrorCase{"CommandUnbalancedQuote", "[tools.t]\ncommand = \"tool 'arg\"\n",
                  "toolvfs.toml:2:11: 'tools.t.command' has an unbalanced single quote"},
        ErrorCase{"CommandShellOperator", "[tools.t]\ncommand = \"tool | wc\"\n",
                  "toolvfs.toml:2:11: 'tools.t.command' has '|', which a shell would interpret, "
                  "but no shell runs "
                  "the command; quote it to pass it literally, or use the table form { program, "
                  "args, shell = true }"},
        ErrorCase{"CommandTableWithoutProgram", "[tools.t]\ncommand = { args = [\"x\"] }\n",
                  "toolvfs.toml:2:11: 'tools.t.command' has no 'program'"},
        ErrorCase{"CommandTableArgs",
                  "[tools.t]\ncommand = { program = \"t\", args = [\"a\", 2] }\n",
                  "toolvfs.toml:2:41: 'tools.t.command.args[1]' must be a string, got 2"},
        ErrorCase{"CommandTableShell",
                  "[tools.t]\ncommand = { program = \"t\", shell = \"yes\" }\n",
                  "toolvfs.toml:2:36: 'tools.t.command.shell' must be true or false, got \"yes\""},
        ErrorCase{"CommandOnBuiltin", "[tools.t]\nsource = \"builtin\"\ncommand = \"x\"\n",
                  "toolvfs.toml:3:11: 'tools.t.command' is not used by builtin tools; remove it"},
        ErrorCase{"RuntimeValue", "[tools.t]\ncommand = \"t\"\nruntime = \"vsf\"\n",
                  "toolvfs.toml:3:11: 'tools.t.runtime' must be \"stdio\", \"vfs\" or \"wasm\", "
                  "got \"vsf\" "
                  "(did you mean 'vfs'?)"},
        ErrorCase{"Description", "[tools.t]\ncommand = \"t\"\ndescription = [\"x\"]\n",
                  "toolvfs.toml:3:15: 'tools.t.description' must be a string, got an array"},
        ErrorCase{"Stateful", "[tools.t]\ncommand = \"t\"\nstateful = \"yes\"\n",
                  "toolvfs.toml:3:12: 'tools.t.stateful' must be true or false, got \"yes\""},
        ErrorCase{"Options", "[tools.t]\ncommand = \"t\"\noptions = [1]\n",
                  "toolvfs.toml:3:11: 'tools.t.options' must be a table, got an array"},
        ErrorCase{"Parameters", "[tools.t]\ncommand = \"t\"\nparameters = \"x\"\n",
                  "toolvfs.toml:3:14: 'tools.t.parameters' must be a table, got \"x\""},
        ErrorCase{
            "ParameterNotATable", "[tools.t]\ncommand = \"t\"\nparameters.p = \"string\"\n",
            "toolvfs.toml:3:16: 'tools.t.parameters.p' must be a table (a parameter schema such as "
            "{ type = \"string\" }), got \"string\""},
        ErrorCase{"ParameterTypeName",
                  "[tools.t]\ncommand = \"t\"\nparameters.p.type = \"strng\"\n",
                  "toolvfs.toml:3:21: 'tools.t.parameters.p.type' must be one of string, number, "
                  "integer, "
                  "boolean, array, object, null; got \"strng\" (did you mean 'string'?)"},
        ErrorCase{"ParameterRequiredList",
                  "[tools.t]\ncommand = \"t\"\nparameters.p.required = [\"a\"]\n",
                  "toolvfs.toml:3:25: 'tools.t.parameters.p.required' must be true or false (each "
                  "parameter "
                  "says whether it is required), got an array"},
        ErrorCase{"ParameterEnumEmpty", "[tools.t]\ncommand = \"t\"\nparameters.p.enum = []\n",
                  "toolvfs.toml:3:21: 'tools.t.parameters.p.enum' must be a non-empty array, got "
                  "an array"},
        ErrorCase{"ParameterMinimum", "[tools.t]\ncommand = \"t\"\nparameters.p.minimum = \"1\"\n",
                  "toolvfs.toml:3:24: 'tools.t.parameters.p.minimum' must be a number, got \"1\""},
        ErrorCase{"ParameterPattern", "[tools.t]\ncommand = \"t\"\nparameters.p.pattern = \"a(\"\n",
                  "toolvfs.toml:3:24: 'tools.t.parameters.p.pattern' is not a valid regular expression "
                  "(RE2 syntax): missing ): a("},
        ErrorCase{"ParameterProperty",
                  "[tools.t]\ncommand = \"t\"\nparameters.p.properties.q = 1\n",
                  "toolvfs.toml:3:29: 'tools.t.parameters.p.properties.q' must be a table (a "
                  "parameter schema), got 1"},
        ErrorCase{"QuestionWithoutAnswer", "[tools.t]\ncommand = \"t\"\nquestions.q = {}\n",
                  "toolvfs.toml:3:15: 'tools.t.questions.q' has no 'answer'"},
        ErrorCase{"QuestionAnswerType", "[tools.t]\ncommand = \"t\"\nquestions.q.answer = 3\n",
                  "toolvfs.toml:3:22: 'tools.t.questions.q.answer' must be true, false or a "
                  "string, got 3"},
        ErrorCase{"Sandbox", "[tools.t]\ncommand = \"t\"\nsandbox = true\n",
                  "toolvfs.toml:3:11: 'tools.t.sandbox' must be a table, got true"},
        ErrorCase{"AllowNotAList", "[tools.t]\ncommand = \"t\"\nsandbox.filesystem.allow = \".\"\n",
                  "toolvfs.toml:3:28: 'tools.t.sandbox.filesystem.allow' must be an array of "
                  "project paths, got \".\""},
        ErrorCase{
            "AllowElement", "[tools.t]\ncommand = \"t\"\nsandbox.filesystem.allow = [\"src\", 1]\n",
            "toolvfs.toml:3:36: 'tools.t.sandbox.filesystem.allow[1]' must be a string, got 1"},
        ErrorCase{"WritableType",
                  "[tools.t]\ncommand = \"t\"\nsandbox.filesystem.writable = \"yes\"\n",
                  "toolvfs.toml:3:31: 'tools.t.sandbox.filesystem.writable' must be true, false or "
                  "an array of "
                  "project paths, got \"yes\""},
        ErrorCase{"WritableElement",
                  "[tools.t]\ncommand = \"t\"\nsandbox.filesystem.writable = [true]\n",
                  "toolvfs.toml:3:32: 'tools.t.sandbox.filesystem.writable[0]' must be a string, "
                  "got true"},
        ErrorCase{"DenyAbsolute",
                  "[tools.t]\ncommand = \"t\"\nsandbox.filesystem.deny = [\"/etc\"]\n",
                  "toolvfs.toml:3:28: 'tools.t.sandbox.filesystem.deny[0]' must be relative to the "
                  "project root, "
                  "got \"/etc\""},
        ErrorCase{"DenyEscapes",
                  "[tools.t]\ncommand = \"t\"\nsandbox.filesystem.deny = [\"a/../../x\"]\n",
                  "toolvfs.toml:3:28: 'tools.t.sandbox.filesystem.deny[0]' must stay inside the "
                  "project root, "
                  "got \"a/../../x\""},
        ErrorCase{"DenyEmpty", "[tools.t]\ncommand = \"t\"\nsandbox.filesystem.deny = [\"\"]\n",
                  "toolvfs.toml:3:28: 'tools.t.sandbox.filesystem.deny[0]' must be a project path "
                  "(\".\" is the "
                  "whole project), got \"\""},
        ErrorCase{"DenyPattern",
                  "[tools.t]\ncommand = \"t\"\nsandbox.filesystem.deny = [\"*.key\"]\n",
                  "toolvfs.toml:3:28: 'tools.t.sandbox.filesystem.deny[0]' is a prefix, not a "
                  "pattern ('*' is not "
                  "supported here; patterns belong in sensitive_paths), got \"*.key\""},
        ErrorCase{"PathControlCharacter",
                  "[tools.t]\ncommand = \"t\"\nsandbox.filesystem.allow = [\"a\\u0000b\"]\n",
                  "toolvfs.toml:3:29: 'tools.t.sandbox.filesystem.allow[0]' must not contain "
                  "control characters, "
                  "got \"a\\x00b\""},
        ErrorCase{"SensitivePathAbsolute",
                  "[tools.t]\ncommand = \"t\"\nsandbox.sensitive_paths = [\"/x\"]\n",
                  "toolvfs.toml:3:28: 'tools.t.sandbox.sensitive_paths[0]' must be relative to the "
                  "project root, "
                  "got \"/x\""},
        ErrorCase{"SystemReadRelative",
                  "[tools.t]\ncommand = \"t\"\nsandbox.system_read = [\"opt/data\"]\n",
                  "toolvfs.toml:3:24: 'tools.t.sandbox.system_read[0]' must be an absolute path, "
                  "got \"opt/data\""},
        ErrorCase{"NetworkAllowType",
                  "[tools.t]\ncommand = \"t\"\nsandbox.network.allow = \"https://a\"\n",
                  "toolvfs.toml:3:25: 'tools.t.sandbox.network.allow' must be an array of URL "
                  "prefixes, got "
                  "\"https://a\""},
        ErrorCase{"NetworkEnvName",
                  "[tools.t]\ncommand = \"t\"\nsandbox.network.envs = [\"GITHUB-TOKEN\"]\n",
                  "toolvfs.toml:3:25: 'tools.t.sandbox.network.envs[0]' must be an environment "
                  "variable name "
                  "([A-Za-z_][A-Za-z0-9_]*), got \"GITHUB-TOKEN\""},
        ErrorCase{"NetworkEnvDigitFirst",
                  "[tools.t]\ncommand = \"t\"\nsandbox.network.envs = [\"1A\"]\n",
                  "toolvfs.toml:3:25: 'tools.t.sandbox.network.envs[0]' must be an environment "
                  "variable name "
                  "([A-Za-z_][A-Za-z0-9_]*), got \"1A\""},
        ErrorCase{"CommandRuleTrue", "[tools.t]\ncommand = \"t\"\nsandbox.commands.git = true\n",
                  "toolvfs.toml:3:24: 'tools.t.sandbox.commands.git' must be false (deny) or a "
                  "table { args, envs }; "
                  "to allow any arguments write {}"},
        ErrorCase{"CommandRuleType", "[tools.t]\ncommand = \"t\"\nsandbox.commands.git = \"yes\"\n",
                  "toolvfs.toml:3:24: 'tools.t.sandbox.commands.git' must be false or a table { "
                  "args, envs }, got \"yes\""},
        ErrorCase{"CommandRuleFlatArgs",
                  "[tools.t]\ncommand = \"t\"\nsandbox.commands.git = { args = [\"status\"] }\n",
                  "toolvfs.toml:3:34: 'tools.t.sandbox.commands.git.args[0]' must be an array of "
                  "strings (one "
                  "allowed argument list, e.g. [\"check\", \"**\"]), got \"status\""},
        ErrorCase{"CommandRuleArgsType",
                  "[tools.t]\ncommand = \"t\"\nsandbox.commands.git = { args = \"status\" }\n",
                  "toolvfs.toml:3:33: 'tools.t.sandbox.commands.git.args' must be an array of "
                  "argument lists, "
                  "e.g. [[\"check\", \"**\"]], got \"status\""},
        ErrorCase{"DoubleStarNotLast",
                  "[tools.t]\ncommand = \"t\"\nsandbox.commands.cargo = { args = [[\"**\", "
                  "\"check\"]] }\n",
                  "toolvfs.toml:3:37: 'tools.t.sandbox.commands.cargo.args[0][0]': \"**\" is only "
                  "allowed as the "
                  "last element of an argument list"},
        ErrorCase{"CommandRuleEnvName",
                  "[tools.t]\ncommand = \"t\"\nsandbox.commands.git = { envs = [\"A B\"] }\n",
                  "toolvfs.toml:3:34: 'tools.t.sandbox.commands.git.envs[0]' must be an "
                  "environment variable name "
                  "([A-Za-z_][A-Za-z0-9_]*), got \"A B\""},
        ErrorCase{"CommandRuleName",
                  "[tools.t]\ncommand = \"t\"\nsandbox.commands.\"cargo check\" = {}\n",
                  "toolvfs.toml:3:18: 'tools.t.sandbox.commands.\"cargo check\"' must be named "
                  "after a program (no "
                  "spaces; arguments go in 'args')"},
        ErrorCase{
            "LimitNegative",
            "[tools.fmt]\ncommand = \"t\"\n[tools.fmt.sandbox.limits]\n\n\n\ntimeout_s = -5\n",
            "toolvfs.toml:7:13: 'tools.fmt.sandbox.limits.timeout_s' must be a positive integer, "
            "got -5"},
        ErrorCase{"LimitZero", "[tools.t]\ncommand = \"t\"\nsandbox.limits.memory_mb = 0\n",
                  "toolvfs.toml:3:28: 'tools.t.sandbox.limits.memory_mb' must be a positive "
                  "integer, got 0"},
        ErrorCase{"LimitFloat", "[tools.t]\ncommand = \"t\"\nsandbox.limits.cancel_grace_s = 1.5\n",
                  "toolvfs.toml:3:33: 'tools.t.sandbox.limits.cancel_grace_s' must be a positive "
                  "integer, got 1.5"},
        ErrorCase{"LimitString",
                  "[tools.t]\ncommand = \"t\"\nsandbox.limits.idle_timeout_s = \"60\"\n",
                  "toolvfs.toml:3:33: 'tools.t.sandbox.limits.idle_timeout_s' must be a positive "
                  "integer, got \"60\""},
        ErrorCase{"LimitTooLarge",
                  "[tools.t]\ncommand = \"t\"\nsandbox.limits.max_message_mb = 3000000000\n",
                  "toolvfs.toml:3:33: 'tools.t.sandbox.limits.max_message_mb' must be at most "
                  "2147483647, got 3000000000"},
        ErrorCase{"LimitsType", "[tools.t]\ncommand = \"t\"\nsandbox.limits = 5\n",
                  "toolvfs.toml:3:18: 'tools.t.sandbox.limits' must be a table, got 5"},
        ErrorCase{"McpServerWithoutCommand", "[mcp_servers.s]\nargs = []\n",
                  "toolvfs.toml:1:1: 'mcp_servers.s' has no 'command'; an MCP server needs the "
                  "program to start"},
        ErrorCase{
            "McpServerArgs", "[mcp_servers.s]\ncommand = \"npx\"\nargs = \"-y x\"\n",
            "toolvfs.toml:3:8: 'mcp_servers.s.args' must be an array of strings, got \"-y x\""},
        ErrorCase{"McpServerEnvTable", "[mcp_servers.s]\ncommand = \"npx\"\nenv = { A = \"1\" }\n",
                  "toolvfs.toml:3:7: 'mcp_servers.s.env' must be an array of environment variable "
                  "names, got a table"},
        ErrorCase{"McpServerName", "[mcp_servers.\"my.server\"]\ncommand = \"npx\"\n",
                  "toolvfs.toml:1:14: MCP server name 'mcp_servers.\"my.server\"' must be 1-64 "
                  "characters of A-Z, "
                  "a-z, 0-9, '_' and '-'"},
        ErrorCase{"ToolName", "[tools.\"my tool\"]\ncommand = \"t\"\n",
                  "toolvfs.toml:1:8: tool name 'tools.\"my tool\"' must be 1-64 characters of A-Z, "
                  "a-z, 0-9, '_' "
                  "and '-'"},
        ErrorCase{"ArgumentWithNul",
                  "[tools.t]\ncommand = { program = \"t\", args = [\"a\\u0000\"] }\n",
                  "toolvfs.toml:2:36: 'tools.t.command.args[0]' must not contain a NUL byte, got "
                  "\"a\\x00\""}));

// Malformed URL prefixes: a few through the whole parser with the exact
// text; url_check_test covers the rules one by one.
INSTANTIATE_TEST_SUITE_P(
    Urls, ConfigErrorTest,
    testing::Values(
        ErrorCase{
            "NoScheme",
            "[tools.t]\ncommand = \"t\"\nsandbox.network.allow = [\"api.github.com/repos\"]\n",
            "toolvfs.toml:3:26: 'tools.t.sandbox.network.allow[0]' is not a valid URL prefix: it "
            "has no "
            "scheme; write it as https://HOST/PATH; got \"api.github.com/repos\""},
        ErrorCase{"Ftp",
                  "[tools.t]\ncommand = \"t\"\nsandbox.network.allow = [\"ftp://example.com/\"]\n",
                  "toolvfs.toml:3:26: 'tools.t.sandbox.network.allow[0]' is not a valid URL "
                  "prefix: it has the "
                  "scheme 'ftp'; only http and https are supported; got \"ftp://example.com/\""},
        ErrorCase{"Userinfo",
                  "[tools.t]\ncommand = \"t\"\nsandbox.network.deny = "
                  "[\"https://user:pw@example.com/\"]\n",
                  "toolvfs.toml:3:25: 'tools.t.sandbox.network.deny[0]' is not a valid URL prefix: "
                  "it has user "
                  "information ('user@'); credentials never belong in a URL prefix; got "
                  "\"https://user:pw@example.com/\""},
        ErrorCase{"Nul",
                  "[tools.t]\ncommand = \"t\"\nsandbox.network.allow = "
                  "[\"https://a.com\\u0000.evil.com/\"]\n",
                  "toolvfs.toml:3:26: 'tools.t.sandbox.network.allow[0]' is not a valid URL "
                  "prefix: it contains a "
                  "NUL byte; got \"https://a.com\\x00.evil.com/\""},
        ErrorCase{
            "LineBreak",
            "[tools.t]\ncommand = \"t\"\nsandbox.network.allow = [\"https://a.com/\\r\\nX: y\"]\n",
            "toolvfs.toml:3:26: 'tools.t.sandbox.network.allow[0]' is not a valid URL prefix: it "
            "contains a "
            "line break (CR or LF); got \"https://a.com/\\r\\nX: y\""},
        ErrorCase{"PercentInHost",
                  "[tools.t]\ncommand = \"t\"\nsandbox.network.allow = [\"https://a%2ecom/\"]\n",
                  "toolvfs.toml:3:26: 'tools.t.sandbox.network.allow[0]' is not a valid URL "
                  "prefix: it has a '%' "
                  "in the host; got \"https://a%2ecom/\""},
        ErrorCase{
            "BadPort",
            "[tools.t]\ncommand = \"t\"\nsandbox.network.allow = [\"https://a.com:99999/\"]\n",
            "toolvfs.toml:3:26: 'tools.t.sandbox.network.allow[0]' is not a valid URL prefix: it "
            "has a port "
            "outside 1-65535; got \"https://a.com:99999/\""}));

TEST(ConfigErrorsTest, TomlSyntaxErrorsHaveFileLineAndColumn) {
  EXPECT_EQ(Errors("[tools.t]\ncommand = \"t\"\ncommand = \"u\"\n"),
            std::vector<std::string>{"toolvfs.toml:3:11: Error while parsing key-value pair: "
                                     "cannot redefine existing string 'command'"});
  EXPECT_EQ(Errors("[tools.t\n"),
            std::vector<std::string>{
                "toolvfs.toml:1:9: Error while parsing table header: expected ']', saw '\\n'"});
  EXPECT_EQ(Errors("a = \"\xFF\"\n"),
            std::vector<std::string>{"toolvfs.toml:1:5: Encountered invalid utf-8 sequence"});
}

TEST(ConfigErrorsTest, AllErrorsInFileOrderAndTheFirstInTheStatus) {
  constexpr std::string_view kText = R"toml([tools.b]
command = "b"
sandbox.limits.timeout_s = 0
[tools.a]
command = "a"
sandbox.filesytem = {}
wat = 1
)toml";
  EXPECT_EQ(
      Errors(kText),
      (std::vector<std::string>{
          "toolvfs.toml:3:28: 'tools.b.sandbox.limits.timeout_s' must be a positive integer, got 0",
          "toolvfs.toml:6:9: unknown key 'tools.a.sandbox.filesytem' (did you mean 'filesystem'?)",
          "toolvfs.toml:7:1: unknown key 'tools.a.wat'"}));
  Result<Config> config = ParseConfig(kText, "toolvfs.toml");
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(
      config.status().message(),
      "toolvfs.toml:3:28: 'tools.b.sandbox.limits.timeout_s' must be a positive integer, got 0 "
      "(and 2 more errors)");

  config = ParseConfig("a = 1\nb = 2\n", "x.toml");
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().message(), "x.toml:1:1: unknown key 'a' (and 1 more error)");
}

TEST(ConfigErrorsTest, OtherToolsStillParseWhenOneIsBroken) {
  ConfigCheck check =
      CheckConfigText("[tools.good]\ncommand = \"g\"\n[tools.bad]\ncommand = 1\n", "t.toml");
  EXPECT_EQ(check.errors.size(), 1u);
  EXPECT_TRUE(check.config.tools.contains("good"));
}

TEST(ConfigErrorsTest, RuntimeOnBuiltinOrMcpIsAWarningNotAnError) {
  Result<Config> config = ParseConfig(R"toml([mcp_servers.s]
command = "srv"
[tools.b]
source = "builtin"
runtime = "vfs"
[tools.m]
source = "mcp.s.x"
runtime = "stdio"
)toml",
                                      "toolvfs.toml");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->warnings,
            (std::vector<std::string>{"toolvfs.toml:5:11: 'tools.b.runtime' is ignored: builtin "
                                      "tools always run in the builtin runtime",
                                      "toolvfs.toml:8:11: 'tools.m.runtime' is ignored: mcp tools "
                                      "always run in the mcp runtime"}));
}

TEST(ConfigErrorsTest, SourceNameIsEscapedInMessages) {
  std::vector<std::string> errors = CheckConfigText("x = 1\n", "dir\n/toolvfs.toml").errors;
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0], "dir\\n/toolvfs.toml:1:1: unknown key 'x'");
}

TEST(ConfigErrorsTest, MessagesAreAlwaysOneLine) {
  for (const char* text :
       {"a = \"\\u001b[31m\"\n", "\"\\u001b\\n\" = 1\n", "[tools.t]\ncommand = \"\\u0007'\"\n",
        "[tools.t]\nsource = \"x\\ny\"\ncommand = 1\n", "x = 1\n\x01"}) {
    for (const std::string& error : Errors(text)) {
      EXPECT_EQ(error.find_first_of("\n\r\x1b\x07"), std::string::npos) << error;
    }
  }
}

}  // namespace
}  // namespace toolvfs
