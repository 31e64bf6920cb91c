// ForwardingProjectFiles and FaultInjectingProjectFiles: forwarding leaves
// every answer as the target gives it, the WithoutSymlinks() view forwards
// (and injects) too, and each fault fails, refuses or stalls exactly the
// calls it names, before they reach the target.
#include "project/fault_injecting_store.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>
#include <vector>

#include "project/fs_store.h"
#include "project/memory_store.h"
#include "project/test_util.h"

namespace toolvfs {
namespace {

using namespace std::chrono_literals;

std::string ReadOrError(ProjectFiles& store, std::string_view path) {
  Result<std::string> content = store.Read(path);
  return content.ok() ? *content : "error: " + content.status().ToString();
}

TEST(ForwardingProjectFilesTest, ForwardsEveryCallToTheTarget) {
  std::unique_ptr<ProjectFiles> memory = NewMemoryStore("forwarded");
  ForwardingProjectFiles store(*memory);
  ASSERT_TRUE(store.Write("src/a.txt", "alpha\n").ok());
  EXPECT_EQ(ReadOrError(*memory, "src/a.txt"), "alpha\n");
  EXPECT_EQ(ReadOrError(store, "src/a.txt"), "alpha\n");
  Result<FileRange> range = store.ReadRange("src/a.txt", 1, 3);
  ASSERT_TRUE(range.ok());
  EXPECT_EQ(range->content, "lph");
  Result<FileRange> authorized =
      store.ReadAuthorized("src/./a.txt", std::nullopt, [](std::string_view resolved) {
        return resolved == "src/a.txt" ? OkStatus() : PermissionDeniedError("not that one");
      });
  ASSERT_TRUE(authorized.ok());
  EXPECT_EQ(authorized->content, "alpha\n");
  EXPECT_TRUE(*store.Exists("src"));
  ASSERT_TRUE(store.ListDir("src").ok());
  EXPECT_EQ(store.ListDir("src")->size(), 1u);
  EXPECT_EQ(*store.ResolvePath("src/../src/a.txt"), "src/a.txt");
  EXPECT_EQ(store.Metadata("src/a.txt")->size, 6u);
  Result<GrepResult> grep = store.Grep("lph", {});
  ASSERT_TRUE(grep.ok());
  ASSERT_EQ(grep->matches.size(), 1u);
  EXPECT_EQ(grep->matches[0].path, "src/a.txt");
  ASSERT_TRUE(store.Rename("src/a.txt", "b.txt").ok());
  EXPECT_FALSE(*memory->Exists("src/a.txt"));
  ASSERT_TRUE(store.Delete("b.txt").ok());
  EXPECT_FALSE(*memory->Exists("b.txt"));
  EXPECT_EQ(store.DisplayRoot(), "memory:forwarded");
  // Errors come back as the target words them.
  EXPECT_EQ(store.Read("missing.txt").status(), memory->Read("missing.txt").status());
  Result<std::unique_ptr<MaterializedView>> view = store.Materialize();
  ASSERT_TRUE(view.ok()) << view.status().ToString();
  EXPECT_TRUE((*view)->Release().ok());
}

TEST(ForwardingProjectFilesTest, ForwardsTheSnapshotCallsToTheTarget) {
  std::unique_ptr<ProjectFiles> memory = NewMemoryStore("forwarded");
  ForwardingProjectFiles store(*memory);
  ASSERT_TRUE(store.Write("a.txt", "one").ok());
  Result<std::string> id = store.Snapshot("kept");
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  ASSERT_TRUE(store.Write("a.txt", "two").ok());
  EXPECT_EQ(memory->ListSnapshots()->size(), 1u);
  EXPECT_EQ(store.ListSnapshots()->front().label, "kept");
  EXPECT_EQ(store.Diff(*id)->modified, std::vector<std::string>{"a.txt"});
  ASSERT_TRUE(store.Restore(*id).ok());
  EXPECT_EQ(ReadOrError(*memory, "a.txt"), "one");
  ASSERT_TRUE(store.DeleteSnapshot(*id).ok());
  EXPECT_TRUE(memory->ListSnapshots()->empty());
}

TEST(ForwardingProjectFilesTest, ATargetWithoutSymlinksMakesTheWrapperItsOwnView) {
  std::unique_ptr<ProjectFiles> memory = NewMemoryStore();
  ForwardingProjectFiles store(*memory);
  EXPECT_EQ(&store.WithoutSymlinks(), &store);
}

// The fs store's view refuses symlinks; the wrapper's view must be a
// wrapper over it (not the target's raw view, which would bypass the
// wrapper), and must keep refusing them.
TEST(ForwardingProjectFilesTest, TheViewOfAnFsTargetForwardsToTheTargetsViewAndRefusesSymlinks) {
  TempDir dir;
  WriteRealFile(dir.Join("real/a.txt"), "through the link\n");
  MakeSymlink("real", dir.Join("link"));
  Result<std::unique_ptr<ProjectFiles>> fs = OpenFsStore(dir.path());
  ASSERT_TRUE(fs.ok());
  ForwardingProjectFiles store(**fs);
  ProjectFiles& view = store.WithoutSymlinks();
  EXPECT_NE(&view, &store);
  EXPECT_NE(&view, &(*fs)->WithoutSymlinks());
  EXPECT_EQ(&view, &store.WithoutSymlinks());  // one view, made once
  EXPECT_EQ(&view.WithoutSymlinks(), &view);   // the view's view is itself
  EXPECT_EQ(ReadOrError(store, "link/a.txt"), "through the link\n");
  EXPECT_EQ(view.Read("link/a.txt").status().code(), StatusCode::kChanged);
  EXPECT_EQ(ReadOrError(view, "real/a.txt"), "through the link\n");
  EXPECT_EQ(view.DisplayRoot(), dir.path());
}

// Streaming by descriptor (vfsd) reaches the target through both wrappers,
// and a fault injected for reads or writes applies to it as well.
TEST(ForwardingProjectFilesTest, StreamingByDescriptorIsForwardedAndFaultsApplyToIt) {
  TempDir dir;
  WriteRealFile(dir.Join("a.txt"), "streamed\n");
  Result<std::unique_ptr<ProjectFiles>> fs = OpenFsStore(dir.path());
  ASSERT_TRUE(fs.ok());
  ForwardingProjectFiles forwarding(**fs);
  Result<UniqueFd> opened = forwarding.OpenForStreaming("a.txt");
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  char buffer[16] = {};
  EXPECT_EQ(::read(opened->get(), buffer, sizeof buffer), 9);
  EXPECT_EQ(std::string(buffer, 9), "streamed\n");
  ASSERT_TRUE(forwarding.WriteFromDescriptor("b.txt", opened->get(), WriteMode::kOverwrite).ok());

  FaultInjectingProjectFiles faults(**fs);
  faults.SetReadOnly(true);
  EXPECT_EQ(faults.WriteFromDescriptor("c.txt", opened->get(), WriteMode::kOverwrite).code(),
            StatusCode::kPermissionDenied);
  EXPECT_FALSE(RealPathExists(dir.Join("c.txt")));
  faults.SetReadOnly(false);
  faults.FailNthCall(1, StatusCode::kIo, "disk gone");
  EXPECT_EQ(faults.OpenForStreaming("a.txt").status().code(), StatusCode::kIo);
}

class FaultInjectingProjectFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(memory_->Write("a.txt", "old a\n").ok());
    ASSERT_TRUE(memory_->Write("dir/b.txt", "old b\n").ok());
  }

  std::unique_ptr<ProjectFiles> memory_ = NewMemoryStore("faults");
  FaultInjectingProjectFiles store_{*memory_};
};

TEST_F(FaultInjectingProjectFilesTest, WithoutFaultsEveryCallPassesAndIsCounted) {
  EXPECT_EQ(ReadOrError(store_, "a.txt"), "old a\n");
  EXPECT_TRUE(store_.Write("c.txt", "new").ok());
  EXPECT_TRUE(*store_.Exists("c.txt"));
  EXPECT_EQ(store_.calls(), 3u);
  EXPECT_EQ(store_.calls(StoreOperation::kRead), 1u);
  EXPECT_EQ(store_.calls(StoreOperation::kWrite), 1u);
  EXPECT_EQ(store_.calls(StoreOperation::kRename), 0u);
  EXPECT_EQ(store_.failed_calls(), 0u);
  EXPECT_EQ(store_.DisplayRoot(), "memory:faults");
  EXPECT_EQ(store_.calls(), 3u);  // DisplayRoot is not a call to count
}

TEST_F(FaultInjectingProjectFilesTest, TheNthCallFailsOnceWithTheCodeAndAMessageNamingThePathAndTheCause) {
  store_.FailNthCall(3, StatusCode::kIo, "disk on fire");
  EXPECT_TRUE(store_.Exists("a.txt").ok());
  EXPECT_TRUE(store_.Read("a.txt").ok());
  Status failed = store_.Write("a.txt", "new a\n");
  EXPECT_EQ(failed, IoError("Cannot write 'a.txt': disk on fire"));
  EXPECT_EQ(ReadOrError(*memory_, "a.txt"), "old a\n");  // never reached the target
  EXPECT_TRUE(store_.Write("a.txt", "new a\n").ok());    // used up
  EXPECT_EQ(store_.failed_calls(), 1u);
  EXPECT_EQ(store_.calls(StoreOperation::kWrite), 2u);
}

TEST_F(FaultInjectingProjectFilesTest, AnNthCallFaultOfOneOperationCountsOnlyThatOperation) {
  store_.FailNthCall(2, StatusCode::kResourceExhausted, "no space left", StoreOperation::kRename);
  EXPECT_TRUE(store_.Read("a.txt").ok());
  EXPECT_TRUE(store_.Rename("a.txt", "a2.txt").ok());
  EXPECT_TRUE(store_.Read("a2.txt").ok());
  EXPECT_EQ(store_.Rename("dir/b.txt", "dir/c.txt"),
            ResourceExhaustedError("Cannot rename 'dir/b.txt' to 'dir/c.txt': no space left"));
  EXPECT_EQ(ReadOrError(*memory_, "dir/b.txt"), "old b\n");
  EXPECT_FALSE(*memory_->Exists("dir/c.txt"));
}

TEST_F(FaultInjectingProjectFilesTest, SeveralNthCallFaultsEachFailOneCall) {
  store_.FailNthCall(1, StatusCode::kIo, "first");
  store_.FailNthCall(2, StatusCode::kTimeout, "second");
  EXPECT_EQ(store_.Read("a.txt").status(), IoError("Cannot read 'a.txt': first"));
  EXPECT_EQ(store_.ListDir("dir").status(), TimeoutError("Cannot list 'dir': second"));
  EXPECT_TRUE(store_.Read("a.txt").ok());
}

TEST_F(FaultInjectingProjectFilesTest, FailingWritesFailsWriteDeleteRenameAndMaterializeButNotReads) {
  store_.FailWrites(StatusCode::kResourceExhausted, "No space left on device");
  EXPECT_EQ(store_.Write("a.txt", "new"), ResourceExhaustedError("Cannot write 'a.txt': No space left on device"));
  EXPECT_EQ(store_.Delete("dir", true), ResourceExhaustedError("Cannot delete 'dir': No space left on device"));
  EXPECT_EQ(store_.Rename("a.txt", "z.txt").code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(store_.Materialize().status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(ReadOrError(store_, "a.txt"), "old a\n");
  EXPECT_EQ(ReadOrError(store_, "dir/b.txt"), "old b\n");
  EXPECT_FALSE(*store_.Exists("z.txt"));
  EXPECT_EQ(store_.failed_calls(), 4u);
  store_.ClearFaults();
  EXPECT_TRUE(store_.Write("a.txt", "new").ok());
}

TEST_F(FaultInjectingProjectFilesTest, AReadOnlyStoreRefusesWritesWithPermissionDenied) {
  store_.SetReadOnly(true);
  EXPECT_EQ(store_.Write("a.txt", "new", WriteMode::kAppend),
            PermissionDeniedError("Cannot write 'a.txt': the store is read-only"));
  EXPECT_EQ(store_.Rename("a.txt", "dir/a.txt"),
            PermissionDeniedError("Cannot rename 'a.txt' to 'dir/a.txt': the store is read-only"));
  EXPECT_EQ(store_.Delete("a.txt"), PermissionDeniedError("Cannot delete 'a.txt': the store is read-only"));
  EXPECT_EQ(ReadOrError(store_, "a.txt"), "old a\n");
  store_.SetReadOnly(false);
  EXPECT_TRUE(store_.Delete("a.txt").ok());
}

// Snapshot, Restore and DeleteSnapshot change the workspace's state and
// are writes; ListSnapshots and Diff are reads. A refused call never
// reaches the target: no snapshot is taken, restored or deleted.
TEST_F(FaultInjectingProjectFilesTest, SnapshotRestoreAndDeleteSnapshotAreWritesListAndDiffAreReads) {
  Result<std::string> first = store_.Snapshot("before");
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_TRUE(memory_->Write("a.txt", "new a\n").ok());

  store_.FailWrites(StatusCode::kResourceExhausted, "No space left on device");
  EXPECT_EQ(store_.Snapshot("refused").status(),
            ResourceExhaustedError("Cannot take a snapshot of the project: No space left on device"));
  EXPECT_EQ(store_.Restore(*first),
            ResourceExhaustedError("Cannot restore snapshot '" + *first + "': No space left on device"));
  EXPECT_EQ(store_.DeleteSnapshot(*first),
            ResourceExhaustedError("Cannot delete snapshot '" + *first + "': No space left on device"));
  EXPECT_EQ(store_.failed_calls(), 3u);
  Result<std::vector<SnapshotInfo>> listed = store_.ListSnapshots();
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  ASSERT_EQ(listed->size(), 1u);  // the refused snapshot was never taken, the first never deleted
  EXPECT_EQ(listed->front().label, "before");
  Result<TreeDiff> diff = store_.Diff(*first);
  ASSERT_TRUE(diff.ok()) << diff.status().ToString();
  EXPECT_EQ(diff->modified, std::vector<std::string>{"a.txt"});
  EXPECT_EQ(ReadOrError(*memory_, "a.txt"), "new a\n");  // the restore never ran

  store_.ClearFaults();
  store_.SetReadOnly(true);
  EXPECT_EQ(store_.Restore(*first),
            PermissionDeniedError("Cannot restore snapshot '" + *first + "': the store is read-only"));
  store_.SetReadOnly(false);
  EXPECT_TRUE(store_.Restore(*first).ok());
  EXPECT_EQ(ReadOrError(*memory_, "a.txt"), "old a\n");
  EXPECT_EQ(store_.calls(StoreOperation::kSnapshot), 2u);
  EXPECT_EQ(store_.calls(StoreOperation::kRestore), 3u);
  EXPECT_EQ(store_.calls(StoreOperation::kDeleteSnapshot), 1u);
  EXPECT_EQ(store_.calls(StoreOperation::kListSnapshots), 1u);
  EXPECT_EQ(store_.calls(StoreOperation::kDiff), 1u);
}

TEST_F(FaultInjectingProjectFilesTest, AnNthCallFaultOfDiffOrListSnapshotsNamesWhatWasCompared) {
  Result<std::string> first = store_.Snapshot();
  Result<std::string> second = store_.Snapshot();
  ASSERT_TRUE(first.ok() && second.ok());
  store_.FailNthCall(1, StatusCode::kIo, "bad sector", StoreOperation::kDiff);
  store_.FailNthCall(2, StatusCode::kIo, "bad sector", StoreOperation::kDiff);
  store_.FailNthCall(1, StatusCode::kTimeout, "no answer", StoreOperation::kListSnapshots);
  EXPECT_EQ(store_.Diff(*first).status(),
            IoError("Cannot compare snapshot '" + *first + "' with the live workspace: bad sector"));
  EXPECT_EQ(store_.Diff(*first, *second).status(),
            IoError("Cannot compare snapshot '" + *first + "' with snapshot '" + *second + "': bad sector"));
  EXPECT_EQ(store_.ListSnapshots().status(),
            TimeoutError("Cannot list the snapshots of the project: no answer"));
  EXPECT_TRUE(store_.Diff(*first, *second).ok());
  EXPECT_TRUE(store_.ListSnapshots().ok());
}

TEST(StoreOperationTest, EveryOperationHasANameAndOnlyTheChangingOnesAreWrites) {
  std::vector<std::string> writes;
  for (int index = 0; index < kStoreOperationCount; ++index) {
    auto operation = static_cast<StoreOperation>(index);
    EXPECT_NE(StoreOperationName(operation), "unknown") << index;
    if (IsWriteOperation(operation)) writes.emplace_back(StoreOperationName(operation));
  }
  EXPECT_EQ(writes, (std::vector<std::string>{"write", "delete", "rename", "materialize", "snapshot",
                                              "restore", "delete_snapshot"}));
}

// Front ends act through WithoutSymlinks(): faults and counters must
// reach what they do there, over a store whose view is another object.
TEST(FaultInjectingViewTest, TheViewOfAnFsStoreSharesFaultsAndCounters) {
  TempDir dir;
  WriteRealFile(dir.Join("a.txt"), "old\n");
  MakeSymlink(".", dir.Join("self"));
  Result<std::unique_ptr<ProjectFiles>> fs = OpenFsStore(dir.path());
  ASSERT_TRUE(fs.ok());
  FaultInjectingProjectFiles store(**fs);
  ProjectFiles& view = store.WithoutSymlinks();
  ASSERT_NE(&view, &store);
  EXPECT_EQ(view.Read("self/a.txt").status().code(), StatusCode::kChanged);  // still the view

  store.SetReadOnly(true);
  EXPECT_EQ(view.Write("a.txt", "new"), PermissionDeniedError("Cannot write 'a.txt': the store is read-only"));
  EXPECT_EQ(ReadRealFile(dir.Join("a.txt")), "old\n");
  store.ClearFaults();
  store.FailNthCall(1, StatusCode::kIo, "bad sector", StoreOperation::kRead);
  EXPECT_EQ(view.Read("a.txt").status(), IoError("Cannot read 'a.txt': bad sector"));
  EXPECT_EQ(store.calls(StoreOperation::kRead), 2u);
  EXPECT_EQ(store.calls(StoreOperation::kWrite), 1u);
  EXPECT_EQ(store.failed_calls(), 2u);
}

TEST_F(FaultInjectingProjectFilesTest, AStalledCallWaitsForTheReleaseWhileOtherOperationsGoOn) {
  store_.StallCalls(StoreOperation::kRead);
  std::future<std::string> read = std::async(std::launch::async, [this] { return ReadOrError(store_, "a.txt"); });
  ASSERT_TRUE(store_.WaitForStalledCalls(1, 5s));
  EXPECT_EQ(store_.stalled_calls(), 1u);
  EXPECT_EQ(read.wait_for(50ms), std::future_status::timeout);
  EXPECT_TRUE(store_.Write("a.txt", "new a\n").ok());  // another operation is not stalled
  store_.ReleaseStalls();
  EXPECT_EQ(read.get(), "new a\n");  // it went on after the release and read what is there now
  EXPECT_EQ(store_.stalled_calls(), 0u);
  EXPECT_EQ(ReadOrError(store_, "a.txt"), "new a\n");  // no longer stalling
}

TEST_F(FaultInjectingProjectFilesTest, AStallWithADurationEndsByItself) {
  store_.StallCalls(std::nullopt, 150ms);
  auto started = std::chrono::steady_clock::now();
  EXPECT_TRUE(store_.Exists("a.txt").ok());
  EXPECT_GE(std::chrono::steady_clock::now() - started, 150ms);
  store_.ClearFaults();
  started = std::chrono::steady_clock::now();
  EXPECT_TRUE(store_.Exists("a.txt").ok());
  EXPECT_LT(std::chrono::steady_clock::now() - started, 150ms);
}

TEST_F(FaultInjectingProjectFilesTest, AStalledCallCanStillFail) {
  store_.StallCalls(StoreOperation::kWrite);
  store_.FailNthCall(1, StatusCode::kIo, "gave up", StoreOperation::kWrite);
  std::future<Status> write = std::async(std::launch::async, [this] { return store_.Write("a.txt", "new"); });
  ASSERT_TRUE(store_.WaitForStalledCalls(1, 5s));
  store_.ReleaseStalls();
  EXPECT_EQ(write.get(), IoError("Cannot write 'a.txt': gave up"));
  EXPECT_EQ(ReadOrError(store_, "a.txt"), "old a\n");
}

TEST_F(FaultInjectingProjectFilesTest, FaultsAreSafeToSetAndHitFromManyThreads) {
  store_.FailNthCall(500, StatusCode::kIo, "the one");
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 100; ++i) {
        if (!store_.Read("a.txt").ok()) failures.fetch_add(1);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 1);
  EXPECT_EQ(store_.calls(StoreOperation::kRead), 800u);
  EXPECT_EQ(store_.failed_calls(), 1u);
}

TEST_F(FaultInjectingProjectFilesTest, FaultsCanChangeWhileCallsRun) {
  std::atomic<bool> stop{false};
  std::thread toggler([&] {
    for (int i = 0; !stop.load(); ++i) {
      if (i % 2 == 0) {
        store_.SetReadOnly(true);
      } else {
        store_.ClearFaults();
      }
    }
  });
  std::vector<std::thread> writers;
  std::atomic<int> unexpected{0};
  for (int t = 0; t < 4; ++t) {
    writers.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        std::string path = "w" + std::to_string(t) + ".txt";
        Status written = store_.Write(path, std::to_string(i));
        if (!written.ok() && written != PermissionDeniedError("Cannot write '" + path + "': the store is read-only")) {
          unexpected.fetch_add(1);
        }
      }
    });
  }
  for (std::thread& writer : writers) writer.join();
  stop = true;
  toggler.join();
  EXPECT_EQ(unexpected.load(), 0);
  EXPECT_EQ(store_.calls(StoreOperation::kWrite), 800u);
}

}  // namespace
}  // namespace toolvfs
