// AddSandboxRule edits toolvfs.toml as a person would: every byte but the
// new rule stays as it was (comments, order, spacing), checked on whole
// texts before and after.
#include "config/config_edit.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "config/config.h"

namespace toolvfs {
namespace {

using ::testing::HasSubstr;

std::string Added(std::string_view text, std::string_view key, std::string_view value) {
  Result<std::string> edited = AddSandboxRule(text, "gen", key, value);
  EXPECT_TRUE(edited.ok()) << edited.status().message();
  if (!edited.ok()) return {};
  EXPECT_TRUE(CheckConfigText(*edited, "toolvfs.toml").errors.empty()) << *edited;
  return *edited;
}

TEST(ConfigEditTest, AddsToAOneLineArrayKeepingCommentsAndSpacing) {
  const std::string before = "# tools\n[tools.gen]\ncommand = \"python3 gen.py\"  # the generator\n\n"
                             "[tools.gen.sandbox]\nfilesystem.allow = [ \".\" ]   # all of it\n"
                             "filesystem.writable = [\"src/gen\"]  # only here\n\n[tools.other]\ncommand = \"x\"\n";
  EXPECT_EQ(Added(before, "filesystem.writable", "out/a.txt"),
            "# tools\n[tools.gen]\ncommand = \"python3 gen.py\"  # the generator\n\n"
            "[tools.gen.sandbox]\nfilesystem.allow = [ \".\" ]   # all of it\n"
            "filesystem.writable = [\"src/gen\", \"out/a.txt\"]  # only here\n\n[tools.other]\ncommand = \"x\"\n");
  EXPECT_EQ(Added("[tools.gen]\ncommand = \"x\"\n[tools.gen.sandbox]\nfilesystem.allow = []\n",
                  "filesystem.allow", "a b"),
            "[tools.gen]\ncommand = \"x\"\n[tools.gen.sandbox]\nfilesystem.allow = [\"a b\"]\n");
}

TEST(ConfigEditTest, AddsToAMultiLineArrayInItsStyle) {
  const std::string before = "[tools.gen]\ncommand = \"x\"\n[tools.gen.sandbox.filesystem]\nallow = [\n"
                             "    \"src\",  # sources\n    \"docs\",\n]\n";
  EXPECT_EQ(Added(before, "filesystem.allow", "tests"),
            "[tools.gen]\ncommand = \"x\"\n[tools.gen.sandbox.filesystem]\nallow = [\n"
            "    \"src\",  # sources\n    \"docs\",\n    \"tests\",\n]\n");
  const std::string without_comma = "[tools.gen]\ncommand = \"x\"\n[tools.gen.sandbox]\nfilesystem.allow = [\n"
                                    "  \"src\"\n]\n";
  EXPECT_EQ(Added(without_comma, "filesystem.allow", "docs"),
            "[tools.gen]\ncommand = \"x\"\n[tools.gen.sandbox]\nfilesystem.allow = [\n  \"src\",\n  \"docs\"\n]\n");
}

TEST(ConfigEditTest, AddsANewKeyAfterTheTablesLastKey) {
  const std::string before = "[tools.gen]\ncommand = \"x\"\n\n[tools.gen.sandbox]\n# reads\nfilesystem.allow = [\n"
                             "  \".\",\n]\n\n# next\n[tools.gen.sandbox.limits]\ntimeout_s = 5\n";
  EXPECT_EQ(Added(before, "filesystem.writable", "out"),
            "[tools.gen]\ncommand = \"x\"\n\n[tools.gen.sandbox]\n# reads\nfilesystem.allow = [\n"
            "  \".\",\n]\nfilesystem.writable = [\"out\"]\n\n# next\n[tools.gen.sandbox.limits]\ntimeout_s = 5\n");
  EXPECT_EQ(Added("[tools.gen]\ncommand = \"x\"\n[tools.gen.sandbox.filesystem]\nallow = [\".\"]\n",
                  "filesystem.writable", "out"),
            "[tools.gen]\ncommand = \"x\"\n[tools.gen.sandbox.filesystem]\nallow = [\".\"]\nwritable = [\"out\"]\n");
}

TEST(ConfigEditTest, AddsASandboxTableAfterTheToolsLastTable) {
  const std::string before = "[tools.gen]\r\ncommand = \"x\"\r\n[tools.gen.sandbox.limits]\r\ntimeout_s = 5\r\n\r\n"
                             "[tools.other]\r\ncommand = \"y\"";
  EXPECT_EQ(Added(before, "network.allow", "https://api.example.com/v1/"),
            "[tools.gen]\r\ncommand = \"x\"\r\n[tools.gen.sandbox.limits]\r\ntimeout_s = 5\r\n\r\n"
            "[tools.gen.sandbox]\r\nnetwork.allow = [\"https://api.example.com/v1/\"]\r\n\r\n"
            "[tools.other]\r\ncommand = \"y\"");
  // A quoted tool name is written quoted.
  Result<std::string> quoted = AddSandboxRule("[tools.\"my tool\"]\ncommand = \"x\"\n", "my tool",
                                              "filesystem.allow", "src");
  ASSERT_TRUE(quoted.ok()) << quoted.status().message();
  EXPECT_EQ(*quoted, "[tools.\"my tool\"]\ncommand = \"x\"\n\n[tools.\"my tool\".sandbox]\nfilesystem.allow = [\"src\"]\n");
}

TEST(ConfigEditTest, RefusesLayoutsItDoesNotEditAndDuplicates) {
  Result<std::string> inline_table =
      AddSandboxRule("[tools.gen]\ncommand = \"x\"\nsandbox = { filesystem = { allow = [\".\"] } }\n", "gen",
                     "filesystem.writable", "out");
  EXPECT_EQ(inline_table.status().code(), StatusCode::kUnsupported);
  EXPECT_THAT(inline_table.status().message(),
              HasSubstr("add \"out\" to filesystem.writable in [tools.gen.sandbox] by hand"));
  Result<std::string> boolean = AddSandboxRule("[tools.gen]\ncommand = \"x\"\n[tools.gen.sandbox]\n"
                                               "filesystem.writable = false\n",
                                               "gen", "filesystem.writable", "out");
  EXPECT_EQ(boolean.status().code(), StatusCode::kUnsupported);
  Result<std::string> twice = AddSandboxRule("[tools.gen]\ncommand = \"x\"\n[tools.gen.sandbox]\n"
                                             "filesystem.allow = [\"out\"]\n",
                                             "gen", "filesystem.allow", "out");
  EXPECT_EQ(twice.status().code(), StatusCode::kAlreadyExists);
  Result<std::string> no_tool = AddSandboxRule("[tools.other]\ncommand = \"x\"\n", "gen", "filesystem.allow", "a");
  EXPECT_EQ(no_tool.status().code(), StatusCode::kUnsupported);
}

TEST(ConfigEditTest, UnifiedDiffShowsTheChangeWithContext) {
  EXPECT_EQ(UnifiedDiff("a\nb\nc\nd\ne\nf\n", "a\nb\nc\nd\nX\ne\nf\n", "toolvfs.toml"),
            "--- toolvfs.toml\n+++ toolvfs.toml\n@@ -2,5 +2,6 @@\n b\n c\n d\n+X\n e\n f\n");
  EXPECT_EQ(UnifiedDiff("a = [1]\n", "a = [1, 2]\n", "t"), "--- t\n+++ t\n@@ -1,1 +1,1 @@\n-a = [1]\n+a = [1, 2]\n");
  EXPECT_EQ(UnifiedDiff("same\n", "same\n", "t"), "");
}

}  // namespace
}  // namespace toolvfs
