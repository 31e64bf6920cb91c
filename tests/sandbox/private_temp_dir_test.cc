// PrivateTempDir: removed after the run, locked while in use, and what a
// dead host left behind is removed by the next toolvfs process (issue 16
// item 2: about 900 toolvfs-tool-* directories after a crash loop).

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ctime>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "core/unique_fd.h"
#include "project/test_util.h"
#include "sandbox/private_temp_dir.h"

namespace toolvfs {
namespace {

void MakeOld(const std::string& path) {
  struct timespec times[2] = {{0, UTIME_OMIT}, {::time(nullptr) - 3600, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0) << path;
}

TEST(PrivateTempDirTest, IsRemovedWithItsContentAfterTheRun) {
  std::string path;
  {
    Result<PrivateTempDir> directory = PrivateTempDir::Create();
    ASSERT_TRUE(directory.ok()) << directory.status().ToString();
    path = directory->path();
    WriteRealFile(path + "/scratch", "x");
    // Locked while in use: nobody else may take it for abandoned.
    UniqueFd probe(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    ASSERT_TRUE(probe);
    EXPECT_NE(::flock(probe.get(), LOCK_EX | LOCK_NB), 0);
  }
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(PrivateTempDirTest, OnlyWhatDeadHostsLeftIsRemoved) {
  TempDir base;
  for (const char* name : {"toolvfs-tool-dead", "toolvfs-tool-held", "toolvfs-tool-fresh", "other-old"}) {
    ASSERT_EQ(::mkdir(base.Join(name).c_str(), 0700), 0);
    WriteRealFile(base.Join(name) + "/file", "left behind");
  }
  MakeOld(base.Join("toolvfs-tool-dead"));
  MakeOld(base.Join("toolvfs-tool-held"));
  MakeOld(base.Join("other-old"));
  // A live host's directory: it holds the lock.
  UniqueFd held(::open(base.Join("toolvfs-tool-held").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  ASSERT_TRUE(held);
  ASSERT_EQ(::flock(held.get(), LOCK_EX), 0);
  RemoveAbandonedPrivateTempDirs(base.path());
  EXPECT_EQ(ListRealDirectory(base.path()),
            (std::vector<std::string>{"other-old", "toolvfs-tool-fresh", "toolvfs-tool-held"}));
}

}  // namespace
}  // namespace toolvfs
