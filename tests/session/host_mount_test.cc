// Host mounts (issue 19 item 5): real host trees under a temporary allowed
// root, loaded into a memory store and read back.
#include "session/host_mount.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "project/memory_store.h"
#include "project/test_util.h"

namespace toolvfs {
namespace {

class HostMountTest : public ::testing::Test {
 protected:
  HostMountTest() : workspace_(NewMemoryStore()) {
    root_ = host_.Join("root");
    MakeDirectory(root_);
    WriteRealFile(host_.Join("outside.txt"), "secret");
    MakeDirectory(host_.Join("outside_dir"));
    WriteRealFile(host_.Join("outside_dir/secret.txt"), "secret");
  }

  Status Load(const std::vector<HostMount>& mounts) {
    return LoadHostMounts(mounts, {root_}, SessionPathLimits{}, *workspace_);
  }

  HostMount Mount(const std::string& relative, const std::string& mount_path = "") {
    HostMount mount;
    mount.host_path = root_ + "/" + relative;
    mount.mount_path = mount_path;
    return mount;
  }

  std::string ReadBack(const std::string& path) {
    Result<std::string> content = workspace_->Read(path);
    EXPECT_TRUE(content.ok()) << path << ": " << content.status().message();
    return content.ok() ? *content : "<missing>";
  }

  bool Has(const std::string& path) {
    Result<bool> exists = workspace_->Exists(path);
    EXPECT_TRUE(exists.ok()) << exists.status().message();
    return exists.ok() && *exists;
  }

  TempDir host_;
  std::string root_;
  std::unique_ptr<ProjectFiles> workspace_;
};

TEST_F(HostMountTest, DirectoryIsCopiedAtVersionOne) {
  WriteRealFile(root_ + "/src/a.txt", "alpha");
  WriteRealFile(root_ + "/src/deep/b.txt", "beta");
  ASSERT_TRUE(Load({Mount("src", "code")}).ok());
  EXPECT_EQ(ReadBack("code/a.txt"), "alpha");
  EXPECT_EQ(ReadBack("code/deep/b.txt"), "beta");
  Result<FileMetadata> metadata = workspace_->Metadata("code/a.txt");
  ASSERT_TRUE(metadata.ok());
  ASSERT_TRUE(metadata->version.has_value());
  EXPECT_EQ(*metadata->version, 1u);
}

TEST_F(HostMountTest, WholeRootAtTheWorkspaceRoot) {
  WriteRealFile(root_ + "/x.txt", "x");
  HostMount mount;
  mount.host_path = root_ + "/";
  ASSERT_TRUE(Load({mount}).ok());
  EXPECT_EQ(ReadBack("x.txt"), "x");
}

TEST_F(HostMountTest, FileMountsAtItsNameOrAtMountPath) {
  WriteRealFile(root_ + "/notes.md", "n");
  ASSERT_TRUE(Load({Mount("notes.md"), Mount("notes.md", "docs/readme.md")}).ok());
  EXPECT_EQ(ReadBack("notes.md"), "n");
  EXPECT_EQ(ReadBack("docs/readme.md"), "n");
}

TEST_F(HostMountTest, GlobsIncludeAndExcludeRelativeToTheMount) {
  WriteRealFile(root_ + "/p/main.cc", "m");
  WriteRealFile(root_ + "/p/lib/util.cc", "u");
  WriteRealFile(root_ + "/p/lib/util.h", "h");
  WriteRealFile(root_ + "/p/build/gen.cc", "g");
  HostMount mount = Mount("p");
  mount.include_glob = {"**/*.cc", "  "};
  mount.exclude_glob = {"build", ""};
  ASSERT_TRUE(Load({mount}).ok());
  EXPECT_EQ(ReadBack("main.cc"), "m");  // `**` matched zero directories
  EXPECT_EQ(ReadBack("lib/util.cc"), "u");
  EXPECT_FALSE(Has("lib/util.h"));
  EXPECT_FALSE(Has("build"));
}

TEST_F(HostMountTest, BlankGlobsAloneIncludeEverything) {
  WriteRealFile(root_ + "/p/a.txt", "a");
  HostMount mount = Mount("p");
  mount.include_glob = {""};
  ASSERT_TRUE(Load({mount}).ok());
  EXPECT_EQ(ReadBack("a.txt"), "a");
}

TEST_F(HostMountTest, BudgetExactlyReachedLoads) {
  WriteRealFile(root_ + "/p/a.txt", "12345");
  WriteRealFile(root_ + "/p/b.txt", "12345");
  HostMount mount = Mount("p");
  mount.max_bytes = 10;
  ASSERT_TRUE(Load({mount}).ok());
  EXPECT_EQ(ReadBack("b.txt"), "12345");
}

TEST_F(HostMountTest, BudgetExceededLoadsNothingOfThatMount) {
  WriteRealFile(root_ + "/first/kept.txt", "k");
  WriteRealFile(root_ + "/p/a.txt", "12345");
  WriteRealFile(root_ + "/p/b.txt", "123456");
  HostMount over = Mount("p", "over");
  over.max_bytes = 10;
  Status status = Load({Mount("first"), over});
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.code(), StatusCode::kTooLarge);
  EXPECT_NE(status.message().find("Host mount '" + root_ + "/p' at 'over'"), std::string::npos)
      << status.message();
  EXPECT_NE(status.message().find("max_bytes = 10"), std::string::npos) << status.message();
  EXPECT_EQ(ReadBack("kept.txt"), "k");  // the earlier mount stays
  EXPECT_FALSE(Has("over"));
}

// The session's quota counts all the mounts of one load together: the
// mount that would cross it fails before writing, the ones before stay.
TEST_F(HostMountTest, TheSessionsQuotaCountsEveryMountOfTheLoad) {
  WriteRealFile(root_ + "/first/kept.txt", "12345");
  WriteRealFile(root_ + "/p/a.txt", "12345");
  WriteRealFile(root_ + "/p/b.txt", "1");
  Status bytes = LoadHostMounts({Mount("first"), Mount("p", "over")}, {root_}, SessionPathLimits{}, *workspace_,
                                HostMountQuota{.max_total_bytes = 10});
  ASSERT_FALSE(bytes.ok());
  EXPECT_EQ(bytes.code(), StatusCode::kTooLarge);
  EXPECT_NE(bytes.message().find("Host mount '" + root_ + "/p' at 'over': more than the session's "
                                 "max_total_bytes = 10 bytes (10 bytes) with the mounts before it"),
            std::string::npos)
      << bytes.message();
  EXPECT_EQ(ReadBack("kept.txt"), "12345");
  EXPECT_FALSE(Has("over"));

  Status files = LoadHostMounts({Mount("p", "files")}, {root_}, SessionPathLimits{}, *workspace_,
                                HostMountQuota{.max_files = 1});
  ASSERT_FALSE(files.ok());
  EXPECT_NE(files.message().find("more than the session's max_files = 1 (reached at"), std::string::npos)
      << files.message();
  EXPECT_FALSE(Has("files"));
}

TEST_F(HostMountTest, LaterMountsOverwriteAndDirectoriesMerge) {
  WriteRealFile(root_ + "/one/shared.txt", "one");
  WriteRealFile(root_ + "/one/d/only_one.txt", "1");
  WriteRealFile(root_ + "/two/shared.txt", "two");
  WriteRealFile(root_ + "/two/d/only_two.txt", "2");
  ASSERT_TRUE(Load({Mount("one"), Mount("two")}).ok());
  EXPECT_EQ(ReadBack("shared.txt"), "two");
  EXPECT_EQ(ReadBack("d/only_one.txt"), "1");
  EXPECT_EQ(ReadBack("d/only_two.txt"), "2");
}

TEST_F(HostMountTest, NoAllowedRootsIsAnError) {
  WriteRealFile(root_ + "/a.txt", "a");
  Status status = LoadHostMounts({Mount("a.txt")}, {}, SessionPathLimits{}, *workspace_);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("no allowed host roots"), std::string::npos);
  EXPECT_TRUE(LoadHostMounts({}, {}, SessionPathLimits{}, *workspace_).ok());
}

TEST_F(HostMountTest, MissingRootIsAnError) {
  Status status = LoadHostMounts({Mount("a")}, {host_.Join("absent")}, SessionPathLimits{},
                                 *workspace_);
  EXPECT_EQ(status.code(), StatusCode::kNotFound);
  EXPECT_NE(status.message().find("Allowed host root '" + host_.Join("absent") + "'"),
            std::string::npos)
      << status.message();
}

TEST_F(HostMountTest, PathOutsideEveryRootIsAnError) {
  HostMount mount;
  mount.host_path = host_.Join("outside.txt");
  Status status = Load({mount});
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("outside every allowed root"), std::string::npos);
  // A sibling sharing the root's name as a prefix is outside too.
  MakeDirectory(host_.Join("rootx"));
  mount.host_path = host_.Join("rootx");
  EXPECT_EQ(Load({mount}).code(), StatusCode::kInvalidArgument);
}

TEST_F(HostMountTest, DotDotIsRejectedBeforeTouchingTheHost) {
  Status status = Load({Mount("../outside.txt")});
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("'..' segments are not allowed"), std::string::npos);
  EXPECT_FALSE(Has("outside.txt"));
}

TEST_F(HostMountTest, RelativeHostPathIsRejected) {
  HostMount mount;
  mount.host_path = "root/a";
  EXPECT_EQ(Load({mount}).code(), StatusCode::kInvalidArgument);
}

TEST_F(HostMountTest, MissingHostPathIsAnError) {
  Status status = Load({Mount("absent")});
  EXPECT_EQ(status.code(), StatusCode::kNotFound);
  EXPECT_NE(status.message().find("Host mount '" + root_ + "/absent'"), std::string::npos);
}

TEST_F(HostMountTest, BadMountPathIsAnError) {
  WriteRealFile(root_ + "/a.txt", "a");
  Status status = Load({Mount("a.txt", "../x")});
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("mount_path"), std::string::npos);
}

TEST_F(HostMountTest, HostNameBreakingTheRulesFailsTheMountNamingIt) {
  WriteRealFile(root_ + "/p/good.txt", "g");
  WriteRealFile(root_ + "/p/caf\xc3\xa9.txt", "bad");
  Status status = Load({Mount("p")});
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("caf\\xc3\\xa9.txt"), std::string::npos) << status.message();
  EXPECT_FALSE(Has("good.txt"));  // all-or-nothing
}

class HostMountSymlinkTest : public HostMountTest {
 protected:
  HostMountSymlinkTest() {
    WriteRealFile(root_ + "/p/plain.txt", "plain");
    WriteRealFile(root_ + "/target.txt", "inside");
    WriteRealFile(root_ + "/target_dir/t.txt", "t");
    MakeSymlink("../target.txt", root_ + "/p/inside_link");
    MakeSymlink("../target_dir", root_ + "/p/dir_link");
    MakeSymlink(host_.Join("outside.txt"), root_ + "/p/outside_link");
    MakeSymlink("../../outside.txt", root_ + "/p/relative_outside_link");
    MakeSymlink(host_.Join("outside_dir"), root_ + "/p/outside_dir_link");
    MakeSymlink("nowhere", root_ + "/p/dangling");
  }
};

TEST_F(HostMountSymlinkTest, NotFollowedByDefault) {
  ASSERT_TRUE(Load({Mount("p")}).ok());
  EXPECT_EQ(ReadBack("plain.txt"), "plain");
  for (const char* link : {"inside_link", "dir_link", "outside_link", "relative_outside_link",
                           "outside_dir_link", "dangling"}) {
    EXPECT_FALSE(Has(link)) << link;
  }
}

TEST_F(HostMountSymlinkTest, FollowedOnlyInsideTheRoot) {
  HostMount mount = Mount("p");
  mount.follow_symlinks = true;
  ASSERT_TRUE(Load({mount}).ok());
  EXPECT_EQ(ReadBack("plain.txt"), "plain");
  EXPECT_EQ(ReadBack("inside_link"), "inside");
  EXPECT_EQ(ReadBack("dir_link/t.txt"), "t");
  for (const char* link : {"outside_link", "relative_outside_link", "outside_dir_link",
                           "dangling"}) {
    EXPECT_FALSE(Has(link)) << link;
  }
}

TEST_F(HostMountTest, LinkCycleFailsTheMountAtTheDepthLimit) {
  WriteRealFile(root_ + "/p/a.txt", "a");
  MakeSymlink(".", root_ + "/p/loop");
  HostMount mount = Mount("p");
  mount.follow_symlinks = true;
  Status status = Load({mount});
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("more than 16 segments"), std::string::npos) << status.message();
  EXPECT_FALSE(Has("a.txt"));
  mount.follow_symlinks = false;  // the default skips the link: no cycle
  ASSERT_TRUE(Load({mount}).ok());
  EXPECT_EQ(ReadBack("a.txt"), "a");
}

TEST_F(HostMountTest, OverwrittenFileCountsBothWrites) {
  WriteRealFile(root_ + "/one/f.txt", "1");
  WriteRealFile(root_ + "/two/f.txt", "2");
  ASSERT_TRUE(Load({Mount("one"), Mount("two")}).ok());
  Result<FileMetadata> metadata = workspace_->Metadata("f.txt");
  ASSERT_TRUE(metadata.ok());
  EXPECT_EQ(metadata->version, std::optional<uint64_t>(2));
}

TEST_F(HostMountTest, FileWhereAnEarlierMountPutADirectoryIsAnError) {
  WriteRealFile(root_ + "/one/d/x.txt", "x");
  WriteRealFile(root_ + "/d", "file");
  Status status = Load({Mount("one"), Mount("d")});
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("Host mount '" + root_ + "/d'"), std::string::npos)
      << status.message();
  EXPECT_EQ(ReadBack("d/x.txt"), "x");
}

TEST_F(HostMountSymlinkTest, HostPathThroughASymlinkLeavingTheRootIsRefused) {
  MakeSymlink(host_.Join("outside_dir"), root_ + "/escape");
  HostMount mount = Mount("escape");
  EXPECT_FALSE(Load({mount}).ok());
  mount.follow_symlinks = true;
  EXPECT_FALSE(Load({mount}).ok());
  EXPECT_FALSE(Has("secret.txt"));
}

}  // namespace
}  // namespace toolvfs
