#include "project/allowed_subtrees.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "project/test_util.h"

namespace toolvfs {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

class AllowedSubtreesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* path : {"README.md", ".env", "src/a.c", "src/lib/b.c", "src/lib/.env", "config/db.toml",
                             "docs/x.md", ".toolvfs/audit.jsonl"}) {
      WriteRealFile(dir_.Join(path), "x");
    }
  }

  // Everything but the paths in `denied` (and what lies below them).
  std::vector<std::string> Run(std::vector<std::string> prefixes, std::set<std::string> denied) {
    asked_.clear();
    auto allowed = [&](std::string_view path, bool) {
      asked_.push_back(std::string(path));
      for (const std::string& entry : denied) {
        if (path == entry) return false;
      }
      return true;
    };
    Result<std::vector<std::string>> granted = AllowedSubtrees(dir_.path(), prefixes, allowed);
    EXPECT_TRUE(granted.ok()) << granted.status().message();
    return granted.ok() ? *granted : std::vector<std::string>{"<error>"};
  }

  TempDir dir_;
  std::vector<std::string> asked_;
};

TEST_F(AllowedSubtreesTest, AWholeTreeIsOneGrant) {
  EXPECT_THAT(Run({""}, {}), ElementsAre(""));
  EXPECT_THAT(Run({"src"}, {}), ElementsAre("src"));
}

TEST_F(AllowedSubtreesTest, ADeniedEntrySplitsEveryDirectoryAboveIt) {
  EXPECT_THAT(Run({""}, {"src/lib/.env"}),
              ElementsAre(".env", ".toolvfs", "README.md", "config", "docs", "src/a.c", "src/lib/b.c"));
}

TEST_F(AllowedSubtreesTest, ADeniedDirectoryIsNotWalked) {
  EXPECT_THAT(Run({""}, {"config", ".env", ".toolvfs", "src/lib/.env"}),
              ElementsAre("README.md", "docs", "src/a.c", "src/lib/b.c"));
  for (const std::string& path : asked_) EXPECT_FALSE(path.starts_with("config/")) << path;
}

TEST_F(AllowedSubtreesTest, ADeniedPrefixGrantsNothingAndMissingOnesAreSkipped) {
  EXPECT_THAT(Run({"config", "nope", "docs/x.md"}, {"config"}), ElementsAre("docs/x.md"));
  EXPECT_THAT(Run({"nope"}, {}), IsEmpty());
}

TEST_F(AllowedSubtreesTest, ASplitDirectoryIsGrantedEntryByEntryEvenWhenAllOfItIsAllowed) {
  AllowedSubtreesOptions options;
  options.split_directories = {"", "src/lib"};
  Result<std::vector<std::string>> granted =
      AllowedSubtrees(dir_.path(), {""}, [](std::string_view, bool) { return true; }, options);
  ASSERT_TRUE(granted.ok()) << granted.status().message();
  EXPECT_THAT(*granted, ElementsAre(".env", ".toolvfs", "README.md", "config", "docs", "src/a.c", "src/lib/.env",
                                    "src/lib/b.c"));
}

TEST_F(AllowedSubtreesTest, NestedPrefixesAreMerged) {
  EXPECT_THAT(Run({"src", "src/lib", ""}, {}), ElementsAre(""));
}

TEST_F(AllowedSubtreesTest, SymlinksAreNeverGrantedOneByOne) {
  TempDir outside;
  WriteRealFile(outside.Join("secret"), "s");
  ASSERT_EQ(symlink(outside.Join("secret").c_str(), dir_.Join("docs/link").c_str()), 0);
  ASSERT_EQ(symlink(outside.path().c_str(), dir_.Join("linkdir").c_str()), 0);
  // docs is whole: the link inside is granted with it (Landlock then
  // judges the target, outside every grant). In a split directory the
  // link is left out rather than granting what it points to.
  EXPECT_THAT(Run({""}, {".env"}),
              ElementsAre(".toolvfs", "README.md", "config", "docs", "src"));
  // A prefix that is itself a symlink grants nothing.
  EXPECT_THAT(Run({"linkdir"}, {}), IsEmpty());
}

TEST_F(AllowedSubtreesTest, AnUnreadableDirectoryIsLeftOutNotAnError) {
  // As root every directory opens; drop the search bit for all and check
  // as an unprivileged user only where the test runs as one.
  WriteRealFile(dir_.Join("private/data"), "x");
  ASSERT_EQ(chmod(dir_.Join("private").c_str(), 0), 0);
  if (geteuid() == 0) {
    EXPECT_THAT(Run({""}, {}), ElementsAre(""));  // root reads it: whole
  } else {
    EXPECT_THAT(Run({""}, {}),
                ElementsAre(".env", ".toolvfs", "README.md", "config", "docs", "src"));
  }
  chmod(dir_.Join("private").c_str(), 0755);
}

TEST_F(AllowedSubtreesTest, AncestorsCoverWhatLiesBelowThemWhateverTheSortOrder) {
  // "src-gen" sorts between "src" and "src/lib": it must neither hide nor
  // be hidden by them.
  WriteRealFile(dir_.Join("src-gen/x.c"), "x");
  EXPECT_THAT(Run({"src/lib", "src-gen", "src"}, {}), ElementsAre("src", "src-gen"));
}

TEST_F(AllowedSubtreesTest, TooManyEntriesFailWithTheLimit) {
  Result<std::vector<std::string>> granted =
      AllowedSubtrees(dir_.path(), {""}, [](std::string_view, bool) { return true; }, {.max_entries = 3});
  ASSERT_FALSE(granted.ok());
  EXPECT_EQ(granted.status().code(), StatusCode::kResourceExhausted);
  EXPECT_THAT(granted.status().message(), ::testing::HasSubstr("more than 3 entries"));
}

// The paths PolicyExceptions lists for `denied` (as Run's callback).
std::vector<std::string> Exceptions(const std::string& root, std::vector<std::string> prefixes,
                                    std::set<std::string> denied) {
  auto allowed = [&](std::string_view path, bool) { return !denied.contains(std::string(path)); };
  Result<std::vector<PolicyException>> exceptions = PolicyExceptions(root, prefixes, allowed);
  EXPECT_TRUE(exceptions.ok()) << exceptions.status().message();
  std::vector<std::string> paths;
  if (exceptions.ok()) {
    for (const PolicyException& exception : *exceptions) paths.push_back(exception.path);
  }
  return paths;
}

TEST_F(AllowedSubtreesTest, PolicyExceptionsListTheDeniedEntriesWithoutWalkingThem) {
  EXPECT_THAT(Exceptions(dir_.path(), {""}, {}), IsEmpty());
  EXPECT_THAT(Exceptions(dir_.path(), {""}, {".env", "src/lib/.env", ".toolvfs", ".toolvfs/audit.jsonl"}),
              ElementsAre(".env", ".toolvfs", "src/lib/.env"));
  EXPECT_THAT(Exceptions(dir_.path(), {"src", "docs"}, {".env", "src/lib/.env"}), ElementsAre("src/lib/.env"));
  // A denied prefix is its own exception.
  EXPECT_THAT(Exceptions(dir_.path(), {"config"}, {"config"}), ElementsAre("config"));
}

TEST_F(AllowedSubtreesTest, PolicyExceptionsNameTheJudgedInode) {
  Result<std::vector<PolicyException>> exceptions =
      PolicyExceptions(dir_.path(), {""}, [](std::string_view path, bool) { return path != "config"; });
  ASSERT_TRUE(exceptions.ok()) << exceptions.status().message();
  ASSERT_EQ(exceptions->size(), 1u);
  struct stat status;
  ASSERT_EQ(stat(dir_.Join("config").c_str(), &status), 0);
  EXPECT_TRUE(exceptions->front().is_directory);
  EXPECT_EQ(exceptions->front().device, status.st_dev);
  EXPECT_EQ(exceptions->front().inode, status.st_ino);
}

TEST_F(AllowedSubtreesTest, PolicyExceptionsCoverEveryOtherNameOfADeniedFile) {
  ASSERT_EQ(link(dir_.Join(".env").c_str(), dir_.Join("docs/notes.txt").c_str()), 0);
  ASSERT_EQ(symlink(".env", dir_.Join("link").c_str()), 0);
  // The symlink is never listed: a grant reaches its target only where the
  // target itself is granted, and the target is covered.
  EXPECT_THAT(Exceptions(dir_.path(), {""}, {".env"}), ElementsAre(".env", "docs/notes.txt"));
  // A link outside the prefixes is not in reach anyway.
  EXPECT_THAT(Exceptions(dir_.path(), {"src"}, {".env"}), IsEmpty());
}

}  // namespace
}  // namespace toolvfs
