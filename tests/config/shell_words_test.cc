#include "config/shell_words.h"

#include <gtest/gtest.h>

namespace toolvfs {
namespace {

using Words = std::vector<std::string>;

Words Split(std::string_view command) {
  Result<Words> words = SplitShellWords(command);
  EXPECT_TRUE(words.ok()) << command << ": " << words.status().ToString();
  return words.ok() ? *words : Words{};
}

std::string SplitError(std::string_view command) {
  Result<Words> words = SplitShellWords(command);
  EXPECT_FALSE(words.ok()) << command;
  return words.ok() ? "" : words.status().message();
}

TEST(ShellWordsTest, SplitsOnBlanks) {
  EXPECT_EQ(Split("a"), Words{"a"});
  EXPECT_EQ(Split("  tools/x   --fast\t-v\nend  "), (Words{"tools/x", "--fast", "-v", "end"}));
}

TEST(ShellWordsTest, Quotes) {
  EXPECT_EQ(Split("a 'b c' \"d e\""), (Words{"a", "b c", "d e"}));
  EXPECT_EQ(Split("a'b'\"c\"d"), Words{"abcd"});                  // adjacent parts join
  EXPECT_EQ(Split("a '' \"\""), (Words{"a", "", ""}));            // empty words survive
  EXPECT_EQ(Split("'a \"b\" \\n $x'"), Words{"a \"b\" \\n $x"});  // single quotes keep all
  EXPECT_EQ(Split("\"it's\""), Words{"it's"});
}

TEST(ShellWordsTest, Backslashes) {
  EXPECT_EQ(Split("a\\ b"), Words{"a b"});
  EXPECT_EQ(Split("\\'x\\\" \\\\"), (Words{"'x\"", "\\"}));
  EXPECT_EQ(Split("a\\\nb"), Words{"ab"});  // line continuation
  // In double quotes only $ ` " \ and newline are escapable.
  EXPECT_EQ(Split("\"a\\\"b\\\\c\\$d\\n\""), Words{"a\"b\\c$d\\n"});
  EXPECT_EQ(Split("\\|"), Words{"|"});
  EXPECT_EQ(Split("a\\#b \\#c"), (Words{"a#b", "#c"}));
}

TEST(ShellWordsTest, TemplatesStayOneWord) {
  EXPECT_EQ(Split("tool {{ tool.arguments | tojson }} --root={{context.root}}"),
            (Words{"tool", "{{ tool.arguments | tojson }}", "--root={{context.root}}"}));
  EXPECT_EQ(Split("t \"x {{ a b }} y\" '{{ c'"), (Words{"t", "x {{ a b }} y", "{{ c"}));
  EXPECT_EQ(SplitError("t {{ tool"), "has an unterminated template '{{' (no matching '}}')");
}

TEST(ShellWordsTest, Errors) {
  EXPECT_EQ(SplitError("a 'b"), "has an unbalanced single quote");
  EXPECT_EQ(SplitError("a \"b"), "has an unbalanced double quote");
  EXPECT_EQ(SplitError("a \"b\\\""), "has an unbalanced double quote");
  EXPECT_EQ(SplitError("a \\"), "ends with an unescaped backslash");
  EXPECT_EQ(SplitError(""), "is empty");
  EXPECT_EQ(SplitError(" \t\n"), "is empty");
  for (std::string_view command : {"a | b", "a;b", "a && b", "a > f", "a < f", "(a)", "echo $HOME",
                                   "echo `id`", "echo \"$HOME\"", "a #comment"}) {
    std::string error = SplitError(command);
    EXPECT_NE(error.find("which a shell would interpret"), std::string::npos)
        << command << ": " << error;
  }
  EXPECT_EQ(Split("a#b 'x|y' \"a;b\""), (Words{"a#b", "x|y", "a;b"}));
}

}  // namespace
}  // namespace toolvfs
