// The pids cgroup per start (process_cgroup.h): what holds max_processes
// where RLIMIT_NPROC does not (root). Skipped where this process cannot
// make one (not root, or no writable pids hierarchy).
#include "sandbox/process_cgroup.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sandbox/forked_child.h"
#include "sandbox/sandbox_profile.h"

namespace toolvfs {
namespace {

namespace fs = std::filesystem;

class ProcessCgroupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const FeatureProbe probe = ProbeProcessCgroups();
    if (!probe.available) GTEST_SKIP() << "no pids cgroup can be made here: " << probe.detail;
    ASSERT_FALSE(ProcessCgroupParent().empty());
  }
};

TEST_F(ProcessCgroupTest, CapsTheTasksOfWhatJoinsEvenAsRootAndIsRemoved) {
  std::string path;
  {
    Result<ProcessCgroup> cgroup = ProcessCgroup::Create(ProcessCgroupParent(), 5);
    ASSERT_TRUE(cgroup.ok()) << cgroup.status().ToString();
    path = cgroup->path();
    EXPECT_TRUE(fs::is_directory(path));
    std::ifstream limit(path + "/pids.max");
    std::string text;
    limit >> text;
    EXPECT_EQ(text, "5");
    const int procs = cgroup->procs_fd();
    // The child joins as the launcher child does, then forks until refused:
    // itself and 4 more, whatever its uid (root is exempt from RLIMIT_NPROC).
    const ForkedChildOutcome outcome = RunInForkedChild([procs](int report_fd) {
      if (write(procs, "0", 1) != 1) return 100;
      int forked = 0;
      while (forked < 50) {
        const pid_t child = fork();
        if (child == 0) {
          close(report_fd);  // the test reads the pipe to its end
          pause();
          _exit(0);
        }
        if (child < 0) break;
        ++forked;
      }
      const int error_number = errno;
      return forked * 2 + (error_number == EAGAIN ? 1 : 0);
    });
    // The children left pausing are in the cgroup: its removal kills them.
    ASSERT_TRUE(outcome.exited) << outcome.Describe();
    EXPECT_EQ(outcome.code / 2, 4) << "forks allowed";
    EXPECT_EQ(outcome.code % 2, 1) << "the refused fork's errno was not EAGAIN";
  }
  EXPECT_FALSE(fs::exists(path)) << "the cgroup was not removed";
}

TEST_F(ProcessCgroupTest, EachStartGetsItsOwnDirectory) {
  Result<ProcessCgroup> first = ProcessCgroup::Create(ProcessCgroupParent(), 10);
  Result<ProcessCgroup> second = ProcessCgroup::Create(ProcessCgroupParent(), 10);
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_NE(first->path(), second->path());
  EXPECT_TRUE(fs::path(first->path()).filename().string().starts_with("toolvfs-" + std::to_string(getpid()) + "-"));
}

SandboxRequest ProcessChildRequest(std::vector<std::string> hidden) {
  SandboxRequest request;
  request.access.kind = ToolKind::kProcessChild;
  request.access.program = "/bin/true";
  request.seccomp.allow_process_creation = true;
  request.limits.processes = 20;
  request.hidden_for_testing = std::move(hidden);
  return request;
}

// A profile of a process that may create processes gets the cgroup, with
// room for the PID namespace's supervisor and init; a vfs tool none.
TEST_F(ProcessCgroupTest, ProfilesOfProcessCreatingToolsUseIt) {
  Result<SandboxProfile> profile =
      SandboxProfile::Build(ProcessChildRequest({"landlock"}), SandboxMode::kBestEffort);
  ASSERT_TRUE(profile.ok()) << profile.status().ToString();
  EXPECT_EQ(profile->process_cgroup_parent(), ProcessCgroupParent());
  const bool pid_namespace = profile->namespaces() && profile->namespaces()->own_process_tree;
  EXPECT_EQ(profile->process_cgroup_max_tasks(), pid_namespace ? 22u : 20u);

  SandboxRequest vfs = ProcessChildRequest({"landlock"});
  vfs.access.kind = ToolKind::kVfs;
  vfs.seccomp.allow_process_creation = false;
  Result<SandboxProfile> vfs_profile = SandboxProfile::Build(vfs, SandboxMode::kBestEffort);
  ASSERT_TRUE(vfs_profile.ok()) << vfs_profile.status().ToString();
  EXPECT_EQ(vfs_profile->process_cgroup_parent(), "");
}

// As root without a pids cgroup nothing holds max_processes: not a refusal
// under --sandbox=require (docs/sandbox.md, Resource limits), a warning
// under best-effort.
TEST(ProcessCgroupProfileTest, RootWithoutACgroupIsNotEnforcedAndSaidSoUnderBestEffort) {
  if (geteuid() != 0) GTEST_SKIP() << "RLIMIT_NPROC binds every other user";
  Result<SandboxProfile> required =
      SandboxProfile::Build(ProcessChildRequest({"cgroups"}), SandboxMode::kRequire);
  ASSERT_TRUE(required.ok()) << required.status().ToString();
  EXPECT_EQ(required->process_cgroup_parent(), "");
  Result<SandboxProfile> best_effort =
      SandboxProfile::Build(ProcessChildRequest({"cgroups"}), SandboxMode::kBestEffort);
  ASSERT_TRUE(best_effort.ok()) << best_effort.status().ToString();
  bool said = false;
  for (const std::string& missing : best_effort->unenforced()) {
    said = said || missing.starts_with("the process limit (max_processes): the kernel exempts root");
  }
  EXPECT_TRUE(said) << ::testing::PrintToString(best_effort->unenforced());
}

}  // namespace
}  // namespace toolvfs
