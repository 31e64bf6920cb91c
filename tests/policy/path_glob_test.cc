// Sensitive-path patterns: what they match, and what they may match below
// a directory (policy/path_glob.h).

#include "policy/path_glob.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace toolvfs {
namespace {

struct MatchCase {
  std::string pattern;
  std::vector<std::string> matching;
  std::vector<std::string> not_matching;
};

TEST(PathGlobTest, Matches) {
  const std::vector<MatchCase> cases = {
      {"**/.env", {".env", "a/.env", "a/b/c/.env"}, {".envrc", "a.env", ".env/x", "env", ""}},
      {"**/.env.*", {".env.local", "x/.env.prod"}, {".env", ".envrc"}},
      {"**/*.pem", {"a.pem", "certs/x/server.pem", ".pem"}, {"a.pem.txt", "pem"}},
      {"**/id_rsa*", {"id_rsa", "home/.ssh/id_rsa.pub"}, {"my_id_rsa", "id_rs"}},
      {".toolvfs/**", {".toolvfs", ".toolvfs/audit.jsonl", ".toolvfs/a/b"}, {"x/.toolvfs", ".toolvfsx"}},
      {"**/.git/hooks/**", {".git/hooks", "a/.git/hooks/pre-commit"}, {".git", "a/.git/config"}},
      {"src/**/gen/*.h", {"src/gen/a.h", "src/a/b/gen/x.h"}, {"gen/a.h", "src/gen/a.cc", "src/gen/x/a.h"}},
      {"a?c", {"abc", "a\xC3\xA9" "c"}, {"ac", "abbc"}},  // `?` is one character, 'é' is two bytes
      {"*a*b*c", {"abc", "xaxbxc", "aabbcc", "abcabc"}, {"acb", "ab"}},
      {"a**b", {"ab", "axxb"}, {"a/b", "a/x/b"}},  // `**` inside a segment is two `*`
      {"config/prod.key", {"config/prod.key"}, {"config", "config/prod.key.bak"}},
      {"private", {"private", "private/a/b"}, {"private_gen", "x/private"}},  // a plain path covers below
  };
  for (const MatchCase& c : cases) {
    PathGlob glob = PathGlob::Pattern(c.pattern);
    EXPECT_EQ(glob.text(), c.pattern);
    for (const std::string& path : c.matching) EXPECT_TRUE(glob.Matches(path)) << c.pattern << " " << path;
    for (const std::string& path : c.not_matching) EXPECT_FALSE(glob.Matches(path)) << c.pattern << " " << path;
  }
}

TEST(PathGlobTest, LiteralTakesWildcardsAsCharacters) {
  PathGlob glob = PathGlob::Literal("conf/*.toml");
  EXPECT_TRUE(glob.Matches("conf/*.toml"));
  EXPECT_FALSE(glob.Matches("conf/a.toml"));
}

TEST(PathGlobTest, MayMatchBelow) {
  struct Case {
    std::string pattern;
    std::string directory;
    bool expected;
  };
  const std::vector<Case> cases = {
      {".toolvfs/**", "", true},
      {".toolvfs/**", ".toolvfs", true},
      {".toolvfs/**", "src", false},
      {"config/prod.key", "", true},
      {"config/prod.key", "config", true},
      {"config/prod.key", "config/prod.key", true},  // a plain path covers what lies below it
      {"config/prod.key", "conf", false},
      {"config/prod.key", "config/other", false},
      {"secrets/*.key", "secrets", true},
      {"secrets/*.key", "secrets/a.key", false},
      {"*/secret", "src", true},
      {"*/secret", "src/lib", false},
      // Patterns that match at any depth count once the directory takes part.
      {"**/.env", "", false},
      {"**/.env", "src", false},
      {"**/.git/config", "x/.git", true},
      {"**/.git/config", ".git", true},
      {"**/.git/config", "x", false},
      {"**/.git/hooks/**", "a/.git", true},
      {"**/.ssh/**", "home/.ssh", true},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(PathGlob::Pattern(c.pattern).MayMatchBelow(c.directory), c.expected)
        << c.pattern << " below '" << c.directory << "'";
  }
}

}  // namespace
}  // namespace toolvfs
