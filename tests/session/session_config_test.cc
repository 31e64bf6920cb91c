// The [session] table of toolvfs.toml and the settings a session gets
// from it.
#include "session/session_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "config/config.h"

namespace toolvfs {
namespace {

using ::testing::HasSubstr;

TEST(SessionConfigTest, TheTableAndItsMountsBecomeTheSessionSettings) {
  Result<Config> config = ParseConfig(R"toml(
[session]
store = "sqlite:sessions.db"
max_content_chars = 1000
max_depth = 8
max_segment_chars = 40
allowed_roots = ["/srv/repos"]

[[session.mounts]]
host_path = "/srv/repos/app"
mount_path = "app"
include_glob = ["**/*.py"]
exclude_glob = ["**/test_*"]
max_bytes = 5000
follow_symlinks = true

[[session.mounts]]
host_path = "/srv/repos/docs"
)toml", "toolvfs.toml");
  ASSERT_TRUE(config.ok()) << config.status().message();
  ASSERT_TRUE(config->session.has_value());
  EXPECT_EQ(config->session->store, "sqlite:sessions.db");
  SessionSettings settings = SessionSettingsFrom(config->session, "agent");
  EXPECT_EQ(settings.id, "agent");
  EXPECT_EQ(settings.limits.max_content_chars, 1000u);
  EXPECT_EQ(settings.limits.max_depth, 8u);
  EXPECT_EQ(settings.limits.max_segment_chars, 40u);
  EXPECT_EQ(settings.allowed_roots, std::vector<std::string>{"/srv/repos"});
  ASSERT_EQ(settings.mounts.size(), 2u);
  EXPECT_EQ(settings.mounts[0].mount_path, "app");
  EXPECT_EQ(settings.mounts[0].include_glob, std::vector<std::string>{"**/*.py"});
  EXPECT_EQ(settings.mounts[0].max_bytes, 5000u);
  EXPECT_TRUE(settings.mounts[0].follow_symlinks);
  EXPECT_EQ(settings.mounts[1].mount_path, "");
  EXPECT_FALSE(settings.mounts[1].follow_symlinks);
}

TEST(SessionConfigTest, NoTableMeansTheDefaults) {
  SessionSettings settings = SessionSettingsFrom(std::nullopt, "s");
  EXPECT_EQ(settings.limits.max_content_chars, 48000u);
  EXPECT_EQ(settings.limits.max_depth, 16u);
  EXPECT_EQ(settings.limits.max_segment_chars, 80u);
  EXPECT_TRUE(settings.mounts.empty());
}

TEST(SessionConfigTest, UnknownKeysAndBadValuesAreErrors) {
  EXPECT_THAT(ParseConfig("[session]\nmax_chars = 3\n", "t.toml").status().message(), HasSubstr("unknown key"));
  EXPECT_THAT(ParseConfig("[[session.mounts]]\nhost_path = \"/a\"\nglob = []\n", "t.toml").status().message(),
              HasSubstr("unknown key"));
  EXPECT_THAT(ParseConfig("[[session.mounts]]\nmount_path = \"a\"\n", "t.toml").status().message(),
              HasSubstr("has no 'host_path'"));
  EXPECT_THAT(ParseConfig("[session]\nmax_depth = 0\n", "t.toml").status().message(),
              HasSubstr("a positive integer"));
  EXPECT_THAT(ParseConfig("[session]\nallowed_roots = \"/srv\"\n", "t.toml").status().message(),
              HasSubstr("session.allowed_roots"));
}

}  // namespace
}  // namespace toolvfs
