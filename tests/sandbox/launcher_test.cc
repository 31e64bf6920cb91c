#include "sandbox/read_fd.h"
#include "sandbox/launcher.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace toolvfs {
namespace {

LaunchSpec Shell(std::string script, std::vector<std::string> environment = {}) {
  return LaunchSpec{.program = "/bin/sh",
                    .args = {"-c", std::move(script)},
                    .environment = std::move(environment),
                    .working_directory = ""};
}

TEST(LauncherTest, CapturesStdoutStderrAndExitCode) {
  Result<ChildProcess> child = Launch(Shell("echo out; echo err >&2; exit 3"));
  ASSERT_TRUE(child.ok()) << child.status().ToString();
  EXPECT_EQ(ReadFd(child->stdout_fd().get()), "out\n");
  EXPECT_EQ(ReadFd(child->stderr_fd().get()), "err\n");
  Result<ExitStatus> status = child->Wait();
  ASSERT_TRUE(status.ok()) << status.status().ToString();
  EXPECT_TRUE(status->exited());
  EXPECT_EQ(status->code, 3);
  EXPECT_EQ(status->Describe(), "exited with status 3");
}

TEST(LauncherTest, StdinIsAPipeAndClosingItEndsInput) {
  Result<ChildProcess> child = Launch(LaunchSpec{.program = "/bin/cat"});
  ASSERT_TRUE(child.ok()) << child.status().ToString();
  ASSERT_EQ(write(child->stdin_fd().get(), "hello", 5), 5);
  child->stdin_fd().reset();
  EXPECT_EQ(ReadFd(child->stdout_fd().get()), "hello");
  Result<ExitStatus> status = child->Wait();
  ASSERT_TRUE(status.ok());
  EXPECT_TRUE(status->success());
}

TEST(LauncherTest, StdinPipeHasTheAskedCapacity) {
  int fresh[2];
  ASSERT_EQ(pipe(fresh), 0);
  const int kernel_default = fcntl(fresh[1], F_GETPIPE_SZ);  // 64 KiB with 4 KiB pages
  close(fresh[0]);
  close(fresh[1]);
  Result<ChildProcess> plain = Launch(LaunchSpec{.program = "/bin/cat"});
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_EQ(fcntl(plain->stdin_fd().get(), F_GETPIPE_SZ), kernel_default);
  // 256 KiB is under the default fs.pipe-max-size (1 MiB), so any user gets
  // it; a pipe that already holds more is never shrunk.
  Result<ChildProcess> larger = Launch(LaunchSpec{.program = "/bin/cat", .stdin_pipe_bytes = 256 * 1024});
  ASSERT_TRUE(larger.ok()) << larger.status().ToString();
  EXPECT_EQ(fcntl(larger->stdin_fd().get(), F_GETPIPE_SZ), std::max(256 * 1024, kernel_default));
  Result<ChildProcess> smaller = Launch(LaunchSpec{.program = "/bin/cat", .stdin_pipe_bytes = 4096});
  ASSERT_TRUE(smaller.ok()) << smaller.status().ToString();
  EXPECT_EQ(fcntl(smaller->stdin_fd().get(), F_GETPIPE_SZ), kernel_default);
  const std::string block(256 * 1024, 'x');  // fits without the child reading
  EXPECT_EQ(write(larger->stdin_fd().get(), block.data(), block.size()), static_cast<ssize_t>(block.size()));
  // More than the kernel allows an unprivileged user is not an error.
  Result<ChildProcess> refused = Launch(LaunchSpec{.program = "/bin/cat", .stdin_pipe_bytes = 1 << 30});
  ASSERT_TRUE(refused.ok()) << refused.status().ToString();
  EXPECT_GE(fcntl(refused->stdin_fd().get(), F_GETPIPE_SZ), 64 * 1024);
}

TEST(LauncherTest, ParentEndsAreNonBlocking) {
  Result<ChildProcess> child = Launch(LaunchSpec{.program = "/bin/cat"});
  ASSERT_TRUE(child.ok()) << child.status().ToString();
  for (int fd : {child->stdin_fd().get(), child->stdout_fd().get(), child->stderr_fd().get()}) {
    EXPECT_NE(fcntl(fd, F_GETFL) & O_NONBLOCK, 0) << fd;
    EXPECT_NE(fcntl(fd, F_GETFD) & FD_CLOEXEC, 0) << fd;
  }
}

TEST(LauncherTest, EnvironmentIsExactlyTheGivenOne) {
  Result<ChildProcess> child =
      Launch(LaunchSpec{.program = "/usr/bin/env", .environment = {"A=1", "B=two words"}});
  ASSERT_TRUE(child.ok()) << child.status().ToString();
  EXPECT_EQ(ReadFd(child->stdout_fd().get()), "A=1\nB=two words\n");
  EXPECT_TRUE(child->Wait()->success());
}

TEST(LauncherTest, ReportsTheKillingSignal) {
  Result<ChildProcess> child = Launch(Shell("kill -SEGV $$"));
  ASSERT_TRUE(child.ok()) << child.status().ToString();
  Result<ExitStatus> status = child->Wait();
  ASSERT_TRUE(status.ok());
  EXPECT_TRUE(status->signaled());
  EXPECT_EQ(status->signal, SIGSEGV);
  EXPECT_EQ(status->Describe(), "killed by signal SIGSEGV");
}

TEST(LauncherTest, SignalDefaultsAreRestoredInTheChild) {
  // An ignored SIGTERM in the parent must not stay ignored in the child.
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  struct sigaction previous {};
  ASSERT_EQ(sigaction(SIGTERM, &ignore, &previous), 0);
  Result<ChildProcess> child = Launch(Shell("kill -TERM $$; exit 0"));
  ASSERT_EQ(sigaction(SIGTERM, &previous, nullptr), 0);
  ASSERT_TRUE(child.ok()) << child.status().ToString();
  Result<ExitStatus> status = child->Wait();
  ASSERT_TRUE(status.ok());
  EXPECT_EQ(status->Describe(), "killed by signal SIGTERM");
}

TEST(LauncherTest, MissingProgramNamesExecve) {
  Result<ChildProcess> child = Launch(LaunchSpec{.program = "/usr/bin/nope"});
  ASSERT_FALSE(child.ok());
  EXPECT_EQ(child.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(child.status().message(),
            "Cannot start '/usr/bin/nope': execve failed: No such file or directory");
}

TEST(LauncherTest, NameIsResolvedOnPath) {
  Result<ChildProcess> child =
      Launch(LaunchSpec{.program = "true", .environment = {"PATH=/nonexistent:/usr/bin:/bin"}});
  ASSERT_TRUE(child.ok()) << child.status().ToString();
  EXPECT_TRUE(child->Wait()->success());
}

TEST(LauncherTest, NameNotOnPathIsNotFound) {
  Result<ChildProcess> child =
      Launch(LaunchSpec{.program = "toolvfs-no-such-program", .environment = {"PATH=/bin"}});
  ASSERT_FALSE(child.ok());
  EXPECT_EQ(child.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(child.status().message(),
            "program 'toolvfs-no-such-program' was not found on the PATH tools get (/bin): install it there, or "
            "give its full path in the tool's command");
}

// The PATH searched is shown escaped, so the message stays one line; a
// spec without PATH is searched on the launcher's own, and says so.
TEST(LauncherTest, NotFoundIsOneLineNamingThePathSearched) {
  Result<ChildProcess> child =
      Launch(LaunchSpec{.program = "toolvfs-no-such-program", .environment = {"PATH=/nowhere\n/bin"}});
  ASSERT_FALSE(child.ok());
  EXPECT_EQ(child.status().message(),
            "program 'toolvfs-no-such-program' was not found on the PATH tools get (/nowhere\\n/bin): install it "
            "there, or give its full path in the tool's command");
  // The first PATH entry is the one searched, as the child's getenv sees it.
  EXPECT_EQ(SearchPathOf(LaunchSpec{.environment = {"A=1", "PATH=/first", "PATH=/second"}}).directories, "/first");

  const char* own = std::getenv("PATH");
  ASSERT_NE(own, nullptr);
  const LaunchSearchPath inherited = SearchPathOf(LaunchSpec{.environment = {"A=1"}});
  EXPECT_EQ(inherited.directories, own);
  EXPECT_FALSE(inherited.from_environment);
  Result<ChildProcess> without_path = Launch(LaunchSpec{.program = "toolvfs-no-such-program"});
  ASSERT_FALSE(without_path.ok());
  EXPECT_EQ(without_path.status().message(), "program 'toolvfs-no-such-program' was not found on toolvfs's own PATH (" +
                                                 std::string(own) +
                                                 "), as the launch sets none: install it there, or give its full "
                                                 "path in the tool's command");
}

// argv[0] is `argv0` when given (the name a resolved program was called
// by), else the program as given.
TEST(LauncherTest, Argv0ReachesTheChild) {
  // The shell prints its own command line; the `exit` keeps it from
  // exec'ing tr in its place.
  const std::string own_command_line = "tr '\\0' '\\n' < /proc/$$/cmdline; exit 0";
  LaunchSpec named = Shell(own_command_line);
  named.argv0 = "custom-name";
  Result<ChildProcess> child = Launch(named);
  ASSERT_TRUE(child.ok()) << child.status().ToString();
  EXPECT_EQ(ReadFd(child->stdout_fd().get()), "custom-name\n-c\n" + own_command_line + "\n");
  EXPECT_TRUE(child->Wait()->success());

  Result<ChildProcess> unnamed = Launch(Shell(own_command_line));
  ASSERT_TRUE(unnamed.ok()) << unnamed.status().ToString();
  EXPECT_EQ(ReadFd(unnamed->stdout_fd().get()), "/bin/sh\n-c\n" + own_command_line + "\n");
  EXPECT_TRUE(unnamed->Wait()->success());
}

TEST(LauncherTest, BadWorkingDirectoryNamesChdir) {
  Result<ChildProcess> child =
      Launch(LaunchSpec{.program = "/bin/true", .working_directory = "/nonexistent-dir"});
  ASSERT_FALSE(child.ok());
  EXPECT_EQ(child.status().message(),
            "Cannot start '/bin/true': chdir to '/nonexistent-dir' failed: "
            "No such file or directory");
}

TEST(LauncherTest, WorkingDirectoryIsApplied) {
  LaunchSpec spec = Shell("pwd");
  spec.working_directory = "/tmp";
  Result<ChildProcess> child = Launch(spec);
  ASSERT_TRUE(child.ok()) << child.status().ToString();
  EXPECT_EQ(ReadFd(child->stdout_fd().get()), "/tmp\n");
}

TEST(LauncherTest, ParentFdsAreNotInherited) {
  const int leaked_fd = open("/dev/null", O_RDONLY);  // no O_CLOEXEC on purpose
  ASSERT_GE(leaked_fd, 0);
  Result<ChildProcess> child = Launch(Shell("ls /proc/$$/fd"));
  close(leaked_fd);
  ASSERT_TRUE(child.ok()) << child.status().ToString();
  EXPECT_EQ(ReadFd(child->stdout_fd().get()), "0\n1\n2\n");
  EXPECT_TRUE(child->Wait()->success());
}

TEST(LauncherTest, ChildLeadsANewSessionAndProcessGroup) {
  Result<ChildProcess> child = Launch(LaunchSpec{.program = "/bin/cat"});
  ASSERT_TRUE(child.ok()) << child.status().ToString();
  EXPECT_EQ(getpgid(child->pid()), child->pid());
  EXPECT_EQ(getsid(child->pid()), child->pid());
  EXPECT_NE(getsid(child->pid()), getsid(0));
}

TEST(LauncherTest, TryWaitReportsRunningThenExited) {
  Result<ChildProcess> child = Launch(LaunchSpec{.program = "/bin/cat"});
  ASSERT_TRUE(child.ok()) << child.status().ToString();
  Result<std::optional<ExitStatus>> running = child->TryWait();
  ASSERT_TRUE(running.ok());
  EXPECT_FALSE(running->has_value());
  child->stdin_fd().reset();
  std::optional<ExitStatus> ended;
  for (int attempt = 0; attempt < 500 && !ended.has_value(); ++attempt) {
    Result<std::optional<ExitStatus>> polled = child->TryWait();
    ASSERT_TRUE(polled.ok());
    ended = *polled;
    if (!ended.has_value()) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ASSERT_TRUE(ended.has_value());
  EXPECT_TRUE(ended->success());
  EXPECT_EQ(*child->Wait(), *ended);  // the same status again
}

TEST(LauncherTest, SignalReachesTheWholeGroup) {
  Result<ChildProcess> child = Launch(Shell("sleep 100; exit 0"));
  ASSERT_TRUE(child.ok()) << child.status().ToString();
  ASSERT_TRUE(child->Signal(SIGTERM).ok());
  Result<ExitStatus> status = child->Wait();
  ASSERT_TRUE(status.ok());
  EXPECT_EQ(status->Describe(), "killed by signal SIGTERM");
}

TEST(LauncherTest, DestructorKillsChildAndGrandchild) {
  // Become the subreaper so the orphaned grandchild is reparented to us and
  // can be reaped here instead of lingering as a zombie under init.
  ASSERT_EQ(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  pid_t child_pid = -1;
  pid_t grandchild_pid = -1;
  {
    Result<ChildProcess> child = Launch(Shell("sleep 100 & echo $!; sleep 100"));
    ASSERT_TRUE(child.ok()) << child.status().ToString();
    child_pid = child->pid();
    const std::string line = ReadFd(child->stdout_fd().get(), "\n");
    grandchild_pid = std::stoi(line);
    ASSERT_GT(grandchild_pid, 0);
    ASSERT_EQ(kill(grandchild_pid, 0), 0);
  }
  int wait_status = 0;
  EXPECT_EQ(waitpid(grandchild_pid, &wait_status, 0), grandchild_pid);
  EXPECT_TRUE(WIFSIGNALED(wait_status) && WTERMSIG(wait_status) == SIGKILL);
  ASSERT_EQ(prctl(PR_SET_CHILD_SUBREAPER, 0), 0);
  errno = 0;
  EXPECT_EQ(kill(child_pid, 0), -1);
  EXPECT_EQ(errno, ESRCH);
  errno = 0;
  EXPECT_EQ(kill(grandchild_pid, 0), -1);
  EXPECT_EQ(errno, ESRCH);
}

TEST(LauncherTest, ThreadsLaunchAtTheSameTime) {
  // Each thread starts its children on a stack of its own (vfork_clone.h).
  constexpr int kThreads = 4;
  constexpr int kStartsPerThread = 10;
  std::vector<std::string> failures[kThreads];
  std::vector<std::thread> threads;
  for (int thread = 0; thread < kThreads; ++thread) {
    threads.emplace_back([thread, &failures] {
      for (int start = 0; start < kStartsPerThread; ++start) {
        const std::string expected = std::to_string(thread) + "-" + std::to_string(start);
        Result<ChildProcess> child = Launch(Shell("echo " + expected));
        if (!child.ok()) {
          failures[thread].push_back(child.status().ToString());
          continue;
        }
        const std::string output = ReadFd(child->stdout_fd().get());
        if (output != expected + "\n") failures[thread].push_back("got '" + output + "'");
        if (!child->Wait()->success()) failures[thread].push_back(expected + " failed");
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int thread = 0; thread < kThreads; ++thread) {
    EXPECT_TRUE(failures[thread].empty()) << "thread " << thread << ": " << failures[thread][0];
  }
}

// The number of mappings of this process.
int MappingCount() {
  std::ifstream maps("/proc/self/maps");
  int lines = 0;
  for (std::string line; std::getline(maps, line);) ++lines;
  return lines;
}

TEST(LauncherTest, ExitingThreadsUnmapTheirChildStacks) {
  // Warm up: glibc caches the stacks of joined threads.
  std::thread([] { (void)Launch(LaunchSpec{.program = "/bin/true"}); }).join();
  const int before = MappingCount();
  for (int thread = 0; thread < 20; ++thread) {
    std::thread([] {
      Result<ChildProcess> child = Launch(LaunchSpec{.program = "/bin/true"});
      ASSERT_TRUE(child.ok()) << child.status().ToString();
      EXPECT_TRUE(child->Wait()->success());
    }).join();
  }
  // A stack left behind would be two mappings (guard page and stack) each.
  EXPECT_LT(MappingCount(), before + 10);
}

TEST(LauncherTest, MovedFromChildIsInert) {
  Result<ChildProcess> child = Launch(LaunchSpec{.program = "/bin/cat"});
  ASSERT_TRUE(child.ok()) << child.status().ToString();
  ChildProcess owner = std::move(*child);
  EXPECT_FALSE(child->TryWait().ok());
  EXPECT_GT(owner.pid(), 0);
  owner.stdin_fd().reset();
  EXPECT_TRUE(owner.Wait()->success());
}

}  // namespace
}  // namespace toolvfs
