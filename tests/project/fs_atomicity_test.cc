// Writes replace content atomically (SPEC.md §2.2): a concurrent reader sees
// the old or the new content, never a mix; permission bits survive; no
// temporary file is left behind.

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <ctime>
#include <thread>

#include <gtest/gtest.h>

#include "core/unique_fd.h"
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

// Issue 16 item 1: two toolvfs processes appending to one file lost each
// other's appends (600 acknowledged, 320 kept). Each process here opens its
// own store; some append to a file that does not exist yet, and one
// overwrites another file that the others append to.
TEST(AtomicityTest, FsAppendsFromSeveralProcessesAreAllKept) {
  TempDir root;
  constexpr int kProcesses = 4;
  constexpr int kAppends = 150;
  std::vector<pid_t> children;
  for (int process = 0; process < kProcesses; ++process) {
    pid_t child = ::fork();
    if (child == 0) {
      StoreOptions options;
      options.sync_writes = false;
      Result<std::unique_ptr<ProjectFiles>> store = OpenFsStore(root.path(), options);
      if (!store.ok()) ::_exit(2);
      std::string line = "process " + std::to_string(process) + "\n";
      for (int i = 0; i < kAppends; ++i) {
        if (!(*store)->Write("log/new.txt", line, WriteMode::kAppend).ok()) ::_exit(3);
        if (!(*store)->Write("shared.txt", line, i % 10 == 0 && process == 0 ? WriteMode::kOverwrite
                                                                               : WriteMode::kAppend).ok()) {
          ::_exit(4);
        }
      }
      ::_exit(0);
    }
    children.push_back(child);
  }
  for (pid_t child : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  }
  std::string log = ReadRealFile(root.path() + "/log/new.txt");
  EXPECT_EQ(std::count(log.begin(), log.end(), '\n'), kProcesses * kAppends);
  for (int process = 0; process < kProcesses; ++process) {
    std::string line = "process " + std::to_string(process) + "\n";
    size_t count = 0;
    for (size_t at = log.find(line); at != std::string::npos; at = log.find(line, at + 1)) ++count;
    EXPECT_EQ(count, static_cast<size_t>(kAppends)) << line;
  }
  // The last overwrite of process 0 came at i = 140; every append of the
  // other processes after it is kept, so the file ends with whole lines only.
  std::string shared = ReadRealFile(root.path() + "/shared.txt");
  EXPECT_TRUE(shared.starts_with("process 0\n")) << shared.substr(0, 40);
  EXPECT_EQ(shared.back(), '\n');
  EXPECT_EQ(ListRealDirectory(root.path()), (std::vector<std::string>{"log", "shared.txt"}));
}

// Another program's flock on a project file: the write waits while it is
// held briefly, and fails with one clear line, not a hang, when it stays.
TEST(AtomicityTest, FsWriteWaitsForAForeignLockAWhileAndThenSaysWhy) {
  TempDir root;
  WriteRealFile(root.path() + "/locked.txt", "old");
  Result<std::unique_ptr<ProjectFiles>> store = OpenFsStore(root.path());
  ASSERT_TRUE(store.ok());
  UniqueFd holder(::open((root.path() + "/locked.txt").c_str(), O_RDONLY | O_CLOEXEC));
  ASSERT_TRUE(holder);
  ASSERT_EQ(::flock(holder.get(), LOCK_EX), 0);
  std::thread release([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    ::flock(holder.get(), LOCK_UN);
  });
  Status waited = (*store)->Write("locked.txt", "new", WriteMode::kAppend);
  release.join();
  ASSERT_TRUE(waited.ok()) << waited.ToString();
  EXPECT_EQ(ReadRealFile(root.path() + "/locked.txt"), "oldnew");

  UniqueFd keeper(::open((root.path() + "/locked.txt").c_str(), O_RDONLY | O_CLOEXEC));
  ASSERT_EQ(::flock(keeper.get(), LOCK_EX), 0);
  Status refused = (*store)->Write("locked.txt", "more", WriteMode::kAppend);
  EXPECT_EQ(refused.code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(refused.message(), "Cannot lock 'locked.txt': another process has held a lock on it for 10 s");
  EXPECT_EQ(ReadRealFile(root.path() + "/locked.txt"), "oldnew");
}

// Issue 16 item 2: a host killed during a write left .toolvfs-tmp-* files
// holding partial content, which listings and grep then showed. A loop of
// writers killed at random moments: the file is always the old or a new
// content, and nothing else is ever visible through the store.
TEST(AtomicityTest, FsWritersKilledMidWriteLeaveNothingVisible) {
  TempDir root;
  std::string big(256 * 1024, 'x');
  WriteRealFile(root.path() + "/data.txt", big);
  Result<std::unique_ptr<ProjectFiles>> store = OpenFsStore(root.path());
  ASSERT_TRUE(store.ok());
  for (int round = 0; round < 40; ++round) {
    pid_t child = ::fork();
    if (child == 0) {
      Result<std::unique_ptr<ProjectFiles>> own = OpenFsStore(root.path());
      if (!own.ok()) ::_exit(2);
      for (int i = 0;; ++i) {
        (void)(*own)->Write("data.txt", std::string(big.size(), static_cast<char>('a' + i % 26)));
      }
    }
    std::this_thread::sleep_for(std::chrono::microseconds(500 + 997 * round % 20000));
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
    std::string content = ReadRealFile(root.path() + "/data.txt");
    ASSERT_EQ(content.size(), big.size());
    ASSERT_EQ(content.find_first_not_of(content[0]), std::string::npos) << "torn at round " << round;
    Result<std::vector<DirEntry>> listed = (*store)->ListDir("");
    ASSERT_TRUE(listed.ok());
    ASSERT_EQ(listed->size(), 1u) << "round " << round << ": " << (*listed)[0].name;
  }
  GrepOptions options;
  Result<GrepResult> found = (*store)->Grep("x|a", options);
  ASSERT_TRUE(found.ok());
  for (const GrepFileMatches& file : found->matches) EXPECT_EQ(file.path, "data.txt");
}

// What a dead writer left is removed by a later listing once nobody holds
// it and it is a minute old; a fresh one, or one a live writer holds, stays.
TEST(AtomicityTest, FsListingsRemoveOnlyAbandonedTemporaryFiles) {
  TempDir root;
  WriteRealFile(root.path() + "/a.txt", "a");
  WriteRealFile(root.path() + "/.toolvfs-tmp-dead", "partial");
  WriteRealFile(root.path() + "/.toolvfs-tmp-fresh", "partial");
  WriteRealFile(root.path() + "/.toolvfs-tmp-held", "partial");
  struct timespec old_times[2] = {{0, UTIME_OMIT}, {::time(nullptr) - 3600, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, (root.path() + "/.toolvfs-tmp-dead").c_str(), old_times, 0), 0);
  ASSERT_EQ(::utimensat(AT_FDCWD, (root.path() + "/.toolvfs-tmp-held").c_str(), old_times, 0), 0);
  UniqueFd held(::open((root.path() + "/.toolvfs-tmp-held").c_str(), O_RDONLY | O_CLOEXEC));
  ASSERT_TRUE(held);
  ASSERT_EQ(::flock(held.get(), LOCK_EX), 0);
  Result<std::unique_ptr<ProjectFiles>> store = OpenFsStore(root.path());
  ASSERT_TRUE(store.ok());
  Result<std::vector<DirEntry>> listed = (*store)->ListDir("");
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(*listed, (std::vector<DirEntry>{DirEntry{"a.txt", EntryKind::kFile, {}}}));
  EXPECT_EQ(ListRealDirectory(root.path()),
            (std::vector<std::string>{".toolvfs-tmp-fresh", ".toolvfs-tmp-held", "a.txt"}));
}

}  // namespace
}  // namespace toolvfs
