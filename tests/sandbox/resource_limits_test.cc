#include "sandbox/resource_limits.h"

#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <gtest/gtest.h>

#include "config/config.h"
#include "sandbox/forked_child.h"
#include "sandbox/kernel_features.h"

namespace toolvfs {
namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;
// The child's exit code when ApplyResourceLimits failed.
constexpr int kApplyLimitsFailed = 250;

// Forks; the child applies `limits` and exits with attempt()'s result.
ForkedChildOutcome RunLimited(const ResourceLimits& limits, const std::function<int(int)>& attempt) {
  return RunInForkedChild([&](int report_fd) {
    if (ApplyResourceLimits(limits) != 0) return kApplyLimitsFailed;
    return attempt(report_fd);
  });
}

TEST(ResourceLimitsTest, FromLimitsConfigMapsTheConfig) {
  LimitsConfig config;
  config.memory_mb = 512;
  config.timeout_s = 30;
  config.max_processes = 16;
  const ResourceLimits limits = FromLimitsConfig(config, 4);
  EXPECT_EQ(limits.address_space_bytes, 512 * kMiB);
  EXPECT_EQ(limits.cpu_seconds, 120u);  // 30 s on each of 4 CPUs
  EXPECT_EQ(limits.file_size_bytes, kDefaultFileSizeLimitBytes);
  EXPECT_EQ(limits.open_files, kDefaultOpenFilesLimit);
  EXPECT_EQ(limits.processes, 16u);
  EXPECT_EQ(limits.core_file_bytes, 0u);
  EXPECT_GE(UsableCpuCount(), 1u);
  EXPECT_EQ(FromLimitsConfig(config).cpu_seconds, 30u * UsableCpuCount());
}

TEST(ResourceLimitsTest, SetsSoftAndHardLimitsAndLeavesInheritedOnes) {
  struct rlimit inherited_processes;
  ASSERT_EQ(getrlimit(RLIMIT_NPROC, &inherited_processes), 0);
  const ResourceLimits limits{.address_space_bytes = 1024 * kMiB,
                              .cpu_seconds = 100,
                              .file_size_bytes = 10 * kMiB,
                              .open_files = 64,
                              .processes = ResourceLimits::kInherit,
                              .core_file_bytes = 0};
  const ForkedChildOutcome outcome = RunLimited(limits, [&](int) {
    struct Expected {
      int resource;
      rlim_t soft;
      rlim_t hard;
    };
    const Expected expected[] = {
        {RLIMIT_AS, 1024 * kMiB, 1024 * kMiB},   {RLIMIT_CPU, 100, 101},
        {RLIMIT_FSIZE, 10 * kMiB, 10 * kMiB},    {RLIMIT_NOFILE, 64, 64},
        {RLIMIT_NPROC, inherited_processes.rlim_cur, inherited_processes.rlim_max},
        {RLIMIT_CORE, 0, 0},
    };
    int index = 1;
    for (const Expected& limit : expected) {
      struct rlimit actual;
      if (getrlimit(limit.resource, &actual) != 0 || actual.rlim_cur != limit.soft ||
          actual.rlim_max != limit.hard) {
        return index;
      }
      ++index;
    }
    return 0;
  });
  EXPECT_EQ(outcome.Describe(), "exited with 0") << "exit code N: the Nth limit is wrong";
}

TEST(ResourceLimitsTest, NeverRaisesAHardLimit) {
  const ForkedChildOutcome outcome = RunInForkedChild([](int) {
    const struct rlimit low{.rlim_cur = 32, .rlim_max = 32};
    if (setrlimit(RLIMIT_NOFILE, &low) != 0) return 1;
    // Even unprivileged, asking for more than the hard limit is no error.
    if (getuid() == 0 && (setgroups(0, nullptr) != 0 || setgid(65534) != 0 || setuid(65534) != 0)) {
      return 2;
    }
    if (ApplyResourceLimits(ResourceLimits{.open_files = 4096}) != 0) return kApplyLimitsFailed;
    struct rlimit actual;
    if (getrlimit(RLIMIT_NOFILE, &actual) != 0) return 3;
    return actual.rlim_cur == 32 && actual.rlim_max == 32 ? 0 : 4;
  });
  EXPECT_EQ(outcome.Describe(), "exited with 0");
}

TEST(ResourceLimitsTest, MemoryBombFailsToAllocate) {
  constexpr uint64_t kLimit = 256 * kMiB;
  const ForkedChildOutcome outcome =
      RunLimited(ResourceLimits{.address_space_bytes = kLimit}, [&](int report_fd) {
        if (malloc(512 * kMiB) != nullptr) return 1;
        // Touch 16 MiB chunks until allocation fails: well before the limit.
        uint64_t allocated = 0;
        while (void* chunk = malloc(16 * kMiB)) {
          memset(chunk, 1, 16 * kMiB);
          allocated += 16 * kMiB;
          if (allocated > kLimit) return 2;
        }
        char text[64];
        const int length = snprintf(text, sizeof text, "%llu",
                                    static_cast<unsigned long long>(allocated / kMiB));
        return write(report_fd, text, static_cast<size_t>(length)) == length ? 0 : 3;
      });
  EXPECT_EQ(outcome.Describe(), "exited with 0");
  printf("[ memory   ] allocation failed after %s MiB under a 256 MiB address-space limit\n",
         outcome.report.c_str());
}

TEST(ResourceLimitsTest, CpuSpinIsKilled) {
  const auto start = std::chrono::steady_clock::now();
  const ForkedChildOutcome outcome = RunLimited(ResourceLimits{.cpu_seconds = 1}, [](int) {
    volatile uint64_t counter = 0;
    for (;;) counter = counter + 1;
    return 0;
  });
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(outcome.Describe(), "killed by signal " + std::to_string(SIGXCPU));
  printf("[ cpu      ] spinning child killed after %.2f s wall time (1 CPU second)\n", seconds);
}

TEST(ResourceLimitsTest, CpuSpinIgnoringSigxcpuIsKilledASecondLater) {
  const ForkedChildOutcome outcome = RunLimited(ResourceLimits{.cpu_seconds = 1}, [](int) {
    signal(SIGXCPU, SIG_IGN);
    volatile uint64_t counter = 0;
    for (;;) counter = counter + 1;
    return 0;
  });
  EXPECT_EQ(outcome.Describe(), "killed by signal " + std::to_string(SIGKILL));
}

TEST(ResourceLimitsTest, FileSizeLimitGivesEfbig) {
  const ForkedChildOutcome outcome =
      RunLimited(ResourceLimits{.file_size_bytes = 4096}, [](int) {
        signal(SIGXFSZ, SIG_IGN);
        const int fd = open("/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
        if (fd < 0) return 1;
        static char buffer[8192];
        if (write(fd, buffer, sizeof buffer) != 4096) return 2;  // cut at the limit
        if (write(fd, buffer, 1) >= 0) return 3;
        return errno;
      });
  EXPECT_EQ(outcome.Describe(), "exited with " + std::to_string(EFBIG));
}

TEST(ResourceLimitsTest, OpenFilesLimitGivesEmfile) {
  const ForkedChildOutcome outcome = RunLimited(ResourceLimits{.open_files = 16}, [](int) {
    for (int opened = 0; opened < 32; ++opened) {
      const int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
      if (fd < 0) return errno;
      if (fd >= 16) return 1;
    }
    return 2;
  });
  EXPECT_EQ(outcome.Describe(), "exited with " + std::to_string(EMFILE));
}

// RLIMIT_NPROC counts every process and thread of the real uid and is not
// enforced for root, so the child becomes nobody first (when it can).
TEST(ResourceLimitsTest, ProcessLimitStopsForksAndThreadsOfAnUnprivilegedUser) {
  const ForkedChildOutcome outcome = RunInForkedChild([](int) {
    if (getuid() == 0 && (setgroups(0, nullptr) != 0 || setgid(65534) != 0 || setuid(65534) != 0)) {
      return 1;
    }
    if (ApplyResourceLimits(ResourceLimits{.processes = 1}) != 0) return kApplyLimitsFailed;
    const pid_t pid = fork();
    if (pid == 0) _exit(0);
    if (pid > 0) return 2;
    if (errno != EAGAIN) return 3;
    pthread_t thread;
    const int error_number =
        pthread_create(&thread, nullptr, [](void*) -> void* { return nullptr; }, nullptr);
    if (error_number == 0) pthread_join(thread, nullptr);
    return error_number;
  });
  EXPECT_EQ(outcome.Describe(), "exited with " + std::to_string(EAGAIN));
}

}  // namespace
}  // namespace toolvfs

namespace toolvfs {
namespace {

// Since Linux 5.14 a user namespace has its own process count, checked
// against RLIMIT_NPROC, while its creator's count is checked against the
// RLIMIT_NPROC in force when the namespace was created. So the launcher must
// set the process limit after creating the user namespace: then it caps the
// tool's processes alone, not the whole user's (this test: nobody runs more
// processes than the limit, yet the tool may fork).
TEST(ResourceLimitsTest, ProcessLimitSetInsideAUserNamespaceCountsOnlyThatNamespace) {
  const FeatureProbe user_namespaces = ProbeUserNamespaces();
  if (!user_namespaces.available) {
    GTEST_SKIP() << "needs unprivileged user namespaces: " << user_namespaces.detail;
  }
  constexpr int kLimit = 3;
  const ForkedChildOutcome outcome = RunInForkedChild([](int) {
    if (getuid() == 0 && (setgroups(0, nullptr) != 0 || setgid(65534) != 0 || setuid(65534) != 0)) {
      return 1;
    }
    // More processes of this uid than the limit allows.
    pid_t helpers[kLimit];
    for (pid_t& helper : helpers) {
      helper = fork();
      if (helper < 0) return 2;
      if (helper == 0) {
        pause();
        _exit(0);
      }
    }
    int result = 3;
    if (unshare(CLONE_NEWUSER) == 0) {
      result = kApplyLimitsFailed;
      if (ApplyResourceLimits(ResourceLimits{.processes = kLimit}) == 0) {
        const pid_t pid = fork();
        if (pid == 0) _exit(0);
        result = pid < 0 ? errno : 0;
        if (pid > 0) waitpid(pid, nullptr, 0);
      }
    }
    for (const pid_t helper : helpers) {
      kill(helper, SIGKILL);
      waitpid(helper, nullptr, 0);
    }
    return result;
  });
  EXPECT_EQ(outcome.Describe(), "exited with 0");
}

}  // namespace
}  // namespace toolvfs
