#include "core/open_without_symlinks.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include <gtest/gtest.h>

#include "project/test_util.h"

namespace toolvfs {
namespace {

// Both ways must give the same answers: openat2 where the kernel has it,
// and the component walk that stands in where it is missing or refused.
class OpenWithoutSymlinksTest : public ::testing::TestWithParam<SymlinkFreeMethod> {
 protected:
  void SetUp() override {
    WriteRealFile(dir_.Join("a/b/file.txt"), "content");
    WriteRealFile(outside_.Join("secret.txt"), "outside");
    ASSERT_EQ(symlink(outside_.path().c_str(), dir_.Join("a/link").c_str()), 0);
    ASSERT_EQ(symlink("b/file.txt", dir_.Join("a/file_link").c_str()), 0);
    root_.reset(open(dir_.path().c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    ASSERT_TRUE(root_.valid());
  }

  // 0 and the file type when the open succeeds; else the errno.
  struct Opened {
    int error = 0;
    mode_t type = 0;
    bool operator==(const Opened&) const = default;
  };
  Opened Open(int directory_fd, const std::string& path, int flags, bool beneath) {
    errno = 0;
    UniqueFd fd = OpenWithoutSymlinks(directory_fd, path, flags, beneath, GetParam());
    if (!fd) return {errno, 0};
    struct stat status;
    EXPECT_EQ(fstat(fd.get(), &status), 0);
    EXPECT_EQ(fcntl(fd.get(), F_GETFD), FD_CLOEXEC) << path;
    return {0, status.st_mode & S_IFMT};
  }
  Opened InRoot(const std::string& path, int flags = O_PATH | O_NOFOLLOW) {
    return Open(root_.get(), path, flags, /*beneath=*/true);
  }

  TempDir dir_;
  TempDir outside_;
  UniqueFd root_;
};

TEST_P(OpenWithoutSymlinksTest, OpensPathsWithoutSymlinks) {
  EXPECT_EQ(InRoot("a/b/file.txt"), (Opened{0, S_IFREG}));
  EXPECT_EQ(InRoot("a/b/file.txt", O_RDONLY | O_NOFOLLOW), (Opened{0, S_IFREG}));
  EXPECT_EQ(InRoot("a//b/./file.txt"), (Opened{0, S_IFREG}));
  EXPECT_EQ(InRoot("a/b"), (Opened{0, S_IFDIR}));
  EXPECT_EQ(InRoot(""), (Opened{0, S_IFDIR}));
  EXPECT_EQ(InRoot("."), (Opened{0, S_IFDIR}));
  EXPECT_EQ(Open(AT_FDCWD, dir_.Join("a/b/file.txt"), O_PATH | O_NOFOLLOW, false), (Opened{0, S_IFREG}));
  EXPECT_EQ(Open(root_.get(), "a/b/../b/file.txt", O_PATH | O_NOFOLLOW, false), (Opened{0, S_IFREG}));
}

TEST_P(OpenWithoutSymlinksTest, RefusesASymlinkOnTheWay) {
  EXPECT_EQ(InRoot("a/link/secret.txt"), (Opened{ELOOP, 0}));
  EXPECT_EQ(Open(AT_FDCWD, dir_.Join("a/link/secret.txt"), O_PATH | O_NOFOLLOW, false), (Opened{ELOOP, 0}));
  // The last component: the link itself with O_PATH, refused otherwise.
  EXPECT_EQ(InRoot("a/link"), (Opened{0, S_IFLNK}));
  EXPECT_EQ(InRoot("a/file_link"), (Opened{0, S_IFLNK}));
  EXPECT_EQ(InRoot("a/file_link", O_RDONLY | O_NOFOLLOW), (Opened{ELOOP, 0}));
}

TEST_P(OpenWithoutSymlinksTest, ReportsMissingEntriesAndFilesOnTheWay) {
  EXPECT_EQ(InRoot("a/missing"), (Opened{ENOENT, 0}));
  EXPECT_EQ(InRoot("missing/file.txt"), (Opened{ENOENT, 0}));
  EXPECT_EQ(InRoot("a/b/file.txt/more"), (Opened{ENOTDIR, 0}));
}

// A trailing "/" or "/." asks for a directory, as open(2) reads it.
TEST_P(OpenWithoutSymlinksTest, ATrailingSlashAsksForADirectory) {
  EXPECT_EQ(InRoot("a/b/"), (Opened{0, S_IFDIR}));
  EXPECT_EQ(InRoot("a/b/."), (Opened{0, S_IFDIR}));
  EXPECT_EQ(InRoot("a/b/file.txt/"), (Opened{ENOTDIR, 0}));
  EXPECT_EQ(InRoot("a/b/file.txt/."), (Opened{ENOTDIR, 0}));
  EXPECT_EQ(InRoot("a/link/"), (Opened{ELOOP, 0}));
  EXPECT_EQ(InRoot("a/link/."), (Opened{ELOOP, 0}));
  EXPECT_EQ(InRoot("a/missing/"), (Opened{ENOENT, 0}));
}

TEST_P(OpenWithoutSymlinksTest, BeneathRefusesParentsAndAbsolutePaths) {
  EXPECT_EQ(InRoot(".."), (Opened{EXDEV, 0}));
  EXPECT_EQ(InRoot("a/../a/b"), (Opened{EXDEV, 0}));
  EXPECT_EQ(InRoot(dir_.Join("a/b/file.txt")), (Opened{EXDEV, 0}));
  // Names that merely contain two dots are names.
  WriteRealFile(dir_.Join("a/..hidden/x..y"), "");
  EXPECT_EQ(InRoot("a/..hidden/x..y"), (Opened{0, S_IFREG}));
}

INSTANTIATE_TEST_SUITE_P(BothMethods, OpenWithoutSymlinksTest,
                         ::testing::Values(SymlinkFreeMethod::kAuto, SymlinkFreeMethod::kWalk),
                         [](const ::testing::TestParamInfo<SymlinkFreeMethod>& method) {
                           return method.param == SymlinkFreeMethod::kAuto ? "Openat2" : "Walk";
                         });

}  // namespace
}  // namespace toolvfs
