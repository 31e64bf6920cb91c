// The multi-process harnesses of store_stress.h on the sqlite store (the
// postgres store runs the same ones against its server).
#include "store_stress.h"

#include <signal.h>

#include <gtest/gtest.h>

namespace toolvfs {
namespace {

StoreOptions FastOptions() {
  StoreOptions options;
  // The harness checks transactions between processes, not the disk.
  options.sync_writes = false;
  return options;
}

TEST(SqliteStoreStressTest, FourProcessesMakingAThousandMixedWritesEachLoseNothing) {
  TempDir dir;
  const std::string uri = "sqlite:" + dir.Join("store.db") + "#shared";
  {
    Result<std::unique_ptr<ProjectFiles>> created = OpenProject(uri, FastOptions());  // the file and workspace
    ASSERT_TRUE(created.ok()) << created.status().ToString();
  }
  store_stress::ExpectMixedWritersLoseNothing(uri, FastOptions(), /*processes=*/4, /*writes=*/1000, dir.path());
}

TEST(SqliteStoreStressTest, AWriterKilledAgainAndAgainLeavesWholeWritesAndItsSuccessorGoesOn) {
  TempDir dir;
  const std::string uri = "sqlite:" + dir.Join("store.db") + "#restarted";
  {
    Result<std::unique_ptr<ProjectFiles>> created = OpenProject(uri, FastOptions());
    ASSERT_TRUE(created.ok()) << created.status().ToString();
  }
  store_stress::InterruptedRun run = store_stress::RunWriterThroughInterruptions(
      uri, FastOptions(), /*interruptions=*/15,
      [](pid_t writer) {
        ::kill(writer, SIGKILL);
        return true;
      },
      dir.path());
  EXPECT_EQ(run.generations, 16);
  EXPECT_TRUE(run.failures.empty()) << (run.failure_messages.empty() ? "" : run.failure_messages.front());
  EXPECT_GE(run.confirmed_after_last_interruption, 20);
}

}  // namespace
}  // namespace toolvfs
