// Where the SDKs are found at run time (runtime/sdk_location.h): in
// share/toolvfs/sdk of an ancestor of the code's directory, which holds for
// the build tree (the test binary itself) and for an installed prefix.
#include "runtime/sdk_location.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "project/test_util.h"

namespace toolvfs {
namespace {

namespace fs = std::filesystem;

TEST(SdkLocationTest, FoundInTheBuildTreeFromATestBinary) {
  // This binary is build/tests/runtime/runtime_test; the build stages the
  // SDK in build/share/toolvfs/sdk.
  const std::string& directory = SdkDirectory();
  ASSERT_FALSE(directory.empty());
  EXPECT_TRUE(fs::is_regular_file(fs::path(directory) / "toolvfs_tool.py")) << directory;
  EXPECT_TRUE(fs::is_regular_file(fs::path(directory) / "toolvfs" / "tool.h")) << directory;
}

TEST(SdkLocationTest, SearchesTheAncestorsOfAPrefixUpToFourLevels) {
  TempDir prefix;
  fs::create_directories(fs::path(prefix.path()) / "share/toolvfs/sdk");
  fs::create_directories(fs::path(prefix.path()) / "lib/x86_64-linux-gnu/a/b/c");
  const std::string sdk = (fs::path(prefix.path()) / "share/toolvfs/sdk").string();
  EXPECT_EQ(FindSdkDirectoryFrom(prefix.path() + "/bin"), sdk);  // bin/ need not exist
  EXPECT_EQ(FindSdkDirectoryFrom(prefix.path() + "/lib/x86_64-linux-gnu"), sdk);
  EXPECT_EQ(FindSdkDirectoryFrom(prefix.path() + "/lib/x86_64-linux-gnu/a/b"), sdk);
  EXPECT_EQ(FindSdkDirectoryFrom(prefix.path() + "/lib/x86_64-linux-gnu/a/b/c"), "");  // five levels
  EXPECT_EQ(FindSdkDirectoryFrom(""), "");
}

TEST(SdkLocationTest, AFileNamedLikeTheSdkIsNotIt) {
  TempDir prefix;
  fs::create_directories(fs::path(prefix.path()) / "share/toolvfs");
  WriteRealFile(prefix.path() + "/share/toolvfs/sdk", "not a directory");
  EXPECT_EQ(FindSdkDirectoryFrom(prefix.path() + "/bin"), "");
}

}  // namespace
}  // namespace toolvfs

namespace toolvfs {
namespace {

TEST(InstallationVariablesTest, ThePrefixAndTheSdkOfThisBuild) {
  // This binary is build/tests/runtime/runtime_test: the prefix is build/.
  ConfigVariables variables = InstallationVariables();
  ASSERT_EQ(variables.count("prefix"), 1u);
  ASSERT_EQ(variables.count("sdk"), 1u);
  EXPECT_EQ(variables.at("prefix"), InstallPrefix());
  EXPECT_TRUE(std::filesystem::is_directory(variables.at("prefix") + "/share/toolvfs/sdk")) << variables.at("prefix");
  EXPECT_EQ(variables.at("sdk"), SdkDirectory());
  EXPECT_EQ(FindPrefixFrom(variables.at("prefix") + "/tests/runtime"), variables.at("prefix"));
}

}  // namespace
}  // namespace toolvfs
