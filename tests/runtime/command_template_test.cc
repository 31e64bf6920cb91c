#include "runtime/command_template.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "runtime/argument_validation.h"

namespace toolvfs {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

ConfigValue Context() {
  Result<ConfigValue> arguments = ParseJsonValue(
      R"({"s":"two words","n":3,"f":1.5,"b":true,"z":null,"o":{"k":[1,"x"]},"a":[1,2],"q":"it's"})");
  EXPECT_TRUE(arguments.ok());
  return TemplateContext(TemplateInputs{.tool_name = "fmt",
                                        .arguments = *arguments,
                                        .answers = ConfigValue::Object{{"go", true}},
                                        .options = ConfigValue::Object{{"mode", "fast"}},
                                        .root = "/p",
                                        .access = {.readable_prefixes = {"", "src"},
                                                   .writable_prefixes = {"out"}}});
}

struct RenderCase {
  const char* element;
  const char* expected;
};

class RenderTable : public ::testing::TestWithParam<RenderCase> {};

TEST_P(RenderTable, RendersEachForm) {
  Result<std::string> rendered = RenderTemplate(GetParam().element, Context());
  ASSERT_TRUE(rendered.ok()) << rendered.status().message();
  EXPECT_EQ(*rendered, GetParam().expected);
}

INSTANTIATE_TEST_SUITE_P(
    Table, RenderTable,
    ::testing::Values(
        RenderCase{"plain", "plain"},
        RenderCase{"{{tool.arguments.s}}", "two words"},          // no spaces needed
        RenderCase{"{{ tool.arguments.s }}", "two words"},        // strings raw
        RenderCase{"{{ tool.arguments.s | tojson }}", "\"two words\""},  // tojson quotes a scalar
        RenderCase{"{{ tool.arguments.n }}", "3"},
        RenderCase{"{{ tool.arguments.f }}", "1.5"},
        RenderCase{"{{ tool.arguments.b }}", "true"},
        RenderCase{"{{ tool.arguments.z }}", "null"},             // null scalar
        RenderCase{"{{ tool.arguments.z | tojson }}", "null"},
        RenderCase{"{{ tool.arguments.o }}", R"({"k":[1,"x"]})"},  // objects compact
        RenderCase{"{{ tool.arguments.a | tojson }}", "[1,2]"},
        RenderCase{"{{ tool.arguments.o.k }}", R"([1,"x"])"},      // dotted paths
        RenderCase{"--name={{ tool.name }}!", "--name=fmt!"},
        RenderCase{"{{ tool.answers.go }}", "true"},
        RenderCase{"{{ tool.options.mode }}", "fast"},
        RenderCase{"{{ context.root }}", "/p"},
        RenderCase{"{{ context.action }}", "run"},
        RenderCase{"{{ context.access.writable }}", R"(["out"])"},
        RenderCase{"{{ context.access.network }}", "false"},
        RenderCase{"{{ context }}",
                   R"({"access":{"network":false,"readable":[".","src"],"writable":["out"]},"action":"run","root":"/p"})"},
        RenderCase{"{{ tool.arguments.missing }}", ""},            // optional, not given
        RenderCase{"{{ tool.arguments.missing | tojson }}", "null"},
        RenderCase{"{{tool.name}}-{{ tool.arguments.n }}", "fmt-3"}));

TEST(RenderTemplate, WholeToolAndArgumentsAsJson) {
  Result<std::string> arguments = RenderTemplate("{{ tool.arguments | tojson }}", Context());
  ASSERT_TRUE(arguments.ok());
  EXPECT_EQ(*arguments, R"({"a":[1,2],"b":true,"f":1.5,"n":3,"o":{"k":[1,"x"]},"q":"it's","s":"two words","z":null})");
  Result<std::string> tool = RenderTemplate("{{ tool }}", Context());
  ASSERT_TRUE(tool.ok());
  EXPECT_THAT(*tool, HasSubstr(R"("name":"fmt")"));
  EXPECT_THAT(*tool, HasSubstr(R"("answers":{"go":true})"));
}

TEST(RenderTemplate, NullArgumentsRenderAsValidJson) {
  ConfigValue context = TemplateContext(TemplateInputs{.tool_name = "t", .arguments = ConfigValue::Object{}});
  Result<std::string> rendered = RenderTemplate("{{ tool.arguments | tojson }}", context);
  ASSERT_TRUE(rendered.ok());
  EXPECT_EQ(*rendered, "{}");
}

TEST(RenderTemplate, UnknownPathsAndFiltersAreClearErrors) {
  struct Bad {
    const char* element;
    const char* message;
  };
  for (const Bad& bad : {Bad{"{{ tool.argumnts.x }}", "template '{{ tool.argumnts.x }}' names 'tool.argumnts', which does not exist"},
                         Bad{"{{ nope }}", "names 'nope', which does not exist"},
                         Bad{"{{ context.nope }}", "names 'context.nope'"},
                         Bad{"{{ tool.name | upper }}", "unknown filter 'upper'"},
                         Bad{"x {{ tool.name", "unterminated '{{'"},
                         Bad{"{{ }}", "names nothing"},
                         Bad{"{{ tool..name }}", "empty name"}}) {
    Result<std::string> rendered = RenderTemplate(bad.element, Context());
    ASSERT_FALSE(rendered.ok()) << bad.element;
    EXPECT_EQ(rendered.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(rendered.status().message(), HasSubstr(bad.message)) << bad.element;
  }
}

TEST(RenderCommand, OnePlaceholderIsOneArgvElement) {
  CommandSpec command{.program = "tool", .args = {"{{ tool.arguments.s }}", "--o={{ tool.arguments.o }}", "x"}};
  Result<std::vector<std::string>> argv = RenderCommand(command, Context());
  ASSERT_TRUE(argv.ok()) << argv.status().message();
  EXPECT_THAT(*argv, ElementsAre("tool", "two words", R"(--o={"k":[1,"x"]})", "x"));
}

TEST(RenderCommand, ShellModeQuotesEveryPlaceholder) {
  CommandSpec command{.program = "echo {{ tool.arguments.q }}", .args = {"{{ tool.arguments.s }}", "| wc -c"},
                      .shell = true};
  Result<std::vector<std::string>> argv = RenderCommand(command, Context());
  ASSERT_TRUE(argv.ok()) << argv.status().message();
  EXPECT_THAT(*argv, ElementsAre("/bin/sh", "-c", R"(echo 'it'\''s' 'two words' | wc -c)"));
}

TEST(RenderCommand, ErrorsNameTheElement) {
  CommandSpec command{.program = "tool", .args = {"ok", "{{ bad }}"}};
  Result<std::vector<std::string>> argv = RenderCommand(command, Context());
  ASSERT_FALSE(argv.ok());
  EXPECT_THAT(argv.status().message(), HasSubstr("command argument 2: template '{{ bad }}'"));
}

}  // namespace
}  // namespace toolvfs
