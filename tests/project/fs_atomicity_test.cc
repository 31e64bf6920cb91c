// Writes replace content atomically (SPEC.md §2.2): a concurrent reader sees
// the old or the new content, never a mix; permission bits survive; no
// temporary file is left behind.

#include <sys/stat.h>

#include <unistd.h>

#include <atomic>
#include <thread>

#include <gtest/gtest.h>

#include "project/fs_store.h"
#include "project/memory_store.h"
#include "project/test_util.h"

namespace toolvfs {
namespace {

// Whether `content` is `size` copies of one byte, and which.
bool IsUniform(const std::string& content, size_t size, char* byte) {
  if (content.size() != size) return false;
  *byte = content[0];
  return content.find_first_not_of(content[0]) == std::string::npos;
}

void ExpectReadersNeverSeeAMix(ProjectFiles& store) {
  constexpr size_t kSize = 4 * 1024 * 1024;
  const std::string old_content(kSize, 'a'), new_content(kSize, 'b');
  ASSERT_TRUE(store.Write("big.bin", old_content).ok());
  std::atomic<bool> stop{false};
  std::atomic<int> reads{0}, mixed{0};
  std::thread reader([&] {
    while (!stop.load()) {
      Result<std::string> content = store.Read("big.bin");
      ASSERT_TRUE(content.ok()) << content.status().ToString();
      char byte;
      if (!IsUniform(*content, kSize, &byte)) mixed.fetch_add(1);
      reads.fetch_add(1);
    }
  });
  for (int i = 0; i < 40; ++i) {
    ASSERT_TRUE(store.Write("big.bin", i % 2 == 0 ? new_content : old_content).ok());
  }
  // Appends: a reader sees the file before or after each append, whole.
  ASSERT_TRUE(store.Write("log.txt", "").ok());
  for (int i = 0; i < 200; ++i) {
    ASSERT_TRUE(store.Write("log.txt", "0123456789\n", WriteMode::kAppend).ok());
    Result<std::string> log = store.Read("log.txt");
    ASSERT_TRUE(log.ok());
    ASSERT_EQ(log->size(), static_cast<size_t>(11 * (i + 1)));
  }
  stop = true;
  reader.join();
  EXPECT_GT(reads.load(), 0);
  EXPECT_EQ(mixed.load(), 0);
}

TEST(AtomicityTest, FsReadersNeverSeeAMix) {
  TempDir root;
  StoreOptions options;
  options.sync_writes = false;  // the rename gives atomicity; the flush only durability
  Result<std::unique_ptr<ProjectFiles>> store = OpenFsStore(root.path(), options);
  ASSERT_TRUE(store.ok());
  ExpectReadersNeverSeeAMix(**store);
  // Nothing but the two files remains: no temporary files left behind.
  EXPECT_EQ(ListRealDirectory(root.path()), (std::vector<std::string>{"big.bin", "log.txt"}));
}

TEST(AtomicityTest, MemoryReadersNeverSeeAMix) {
  std::unique_ptr<ProjectFiles> store = NewMemoryStore("atomic");
  ExpectReadersNeverSeeAMix(*store);
}

TEST(AtomicityTest, FsWriteKeepsPermissionBits) {
  TempDir root;
  WriteRealFile(root.path() + "/run.sh", "#!/bin/sh\necho old\n");
  ASSERT_EQ(::chmod((root.path() + "/run.sh").c_str(), 0750), 0);
  WriteRealFile(root.path() + "/secret.txt", "x");
  ASSERT_EQ(::chmod((root.path() + "/secret.txt").c_str(), 0600), 0);
  Result<std::unique_ptr<ProjectFiles>> store = OpenFsStore(root.path());
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE((*store)->Write("run.sh", "#!/bin/sh\necho new\n").ok());
  ASSERT_TRUE((*store)->Write("secret.txt", "more", WriteMode::kAppend).ok());
  struct stat status;
  ASSERT_EQ(::stat((root.path() + "/run.sh").c_str(), &status), 0);
  EXPECT_EQ(status.st_mode & 07777, 0750u);
  ASSERT_EQ(::stat((root.path() + "/secret.txt").c_str(), &status), 0);
  EXPECT_EQ(status.st_mode & 07777, 0600u);
  EXPECT_EQ(ReadRealFile(root.path() + "/secret.txt"), "xmore");
}

TEST(AtomicityTest, FsAppendsThroughASymlinkAndDirectlyAreAllKept) {
  TempDir root;
  WriteRealFile(root.path() + "/log.txt", "");
  MakeSymlink("log.txt", root.path() + "/log_link");
  StoreOptions options;
  options.sync_writes = false;
  Result<std::unique_ptr<ProjectFiles>> store = OpenFsStore(root.path(), options);
  ASSERT_TRUE(store.ok());
  auto append = [&](const char* path) {
    for (int i = 0; i < 200; ++i) ASSERT_TRUE((*store)->Write(path, "x", WriteMode::kAppend).ok());
  };
  std::thread direct(append, "log.txt");
  std::thread linked(append, "log_link");
  direct.join();
  linked.join();
  EXPECT_EQ(ReadRealFile(root.path() + "/log.txt").size(), 400u);
}

TEST(AtomicityTest, FsWriteKeepsSetuidAndOwnerWhenRunAsRoot) {
  TempDir root;
  std::string path = root.path() + "/tool";
  WriteRealFile(path, "old");
  bool as_root = ::geteuid() == 0;
  if (as_root) {
    ASSERT_EQ(::chown(path.c_str(), 1234, 1234), 0);
  }
  ASSERT_EQ(::chmod(path.c_str(), as_root ? 04755 : 0750), 0);
  Result<std::unique_ptr<ProjectFiles>> store = OpenFsStore(root.path());
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE((*store)->Write("tool", "new").ok());
  struct stat status;
  ASSERT_EQ(::stat(path.c_str(), &status), 0);
  EXPECT_EQ(status.st_mode & 07777, as_root ? 04755u : 0750u);
  if (as_root) {
    EXPECT_EQ(status.st_uid, 1234u);
  }
}

TEST(AtomicityTest, FsFailedCreateLeavesNothingBehind) {
  TempDir root;
  WriteRealFile(root.path() + "/a.txt", "original");
  Result<std::unique_ptr<ProjectFiles>> store = OpenFsStore(root.path());
  ASSERT_TRUE(store.ok());
  EXPECT_EQ((*store)->Write("a.txt", "new", WriteMode::kCreate).code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(ReadRealFile(root.path() + "/a.txt"), "original");
  EXPECT_EQ(ListRealDirectory(root.path()), std::vector<std::string>{"a.txt"});
}

}  // namespace
}  // namespace toolvfs
