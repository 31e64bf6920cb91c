// Namespaces of sandboxed launches (namespaces.h), through real Launch()
// calls with a SandboxProfile: what the tool sees, that a PID namespace
// takes setsid()'d grandchildren down with the run, that signals and exit
// statuses still pass through, and that RLIMIT_NPROC counts in the user
// namespace.
#include "sandbox/read_fd.h"
#include "sandbox/namespaces.h"

#include <dirent.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "sandbox/forked_child.h"
#include "sandbox/kernel_features.h"
#include "sandbox/launcher.h"
#include "sandbox/sandbox_profile.h"

namespace toolvfs {
namespace {

// Skips, naming the probe's answer, where user namespaces are unavailable.
#define SKIP_WITHOUT_USER_NAMESPACES()                                               \
  do {                                                                               \
    const ::toolvfs::FeatureProbe user_ns_probe_ = ::toolvfs::ProbeUserNamespaces(); \
    if (!user_ns_probe_.available) {                                                 \
      GTEST_SKIP() << "needs user namespaces: " << user_ns_probe_.detail;            \
    }                                                                                \
  } while (false)

// A temporary project directory, removed afterwards; world-readable so an
// unprivileged uid can run in it.
class TempProject {
 public:
  TempProject() {
    char pattern[] = "/tmp/toolvfs-ns-test-XXXXXX";
    path_ = mkdtemp(pattern);
    chmod(path_.c_str(), 0755);
  }
  ~TempProject() { rmdir(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

struct ProfileOptions {
  ToolKind kind = ToolKind::kProcessChild;
  std::string program = "/bin/sh";
  // true: only namespaces and limits, so the tests can look at /proc.
  bool namespaces_only = false;
  bool network_allowed = false;
  uint64_t processes = ResourceLimits::kInherit;
  std::string tool_name;
};

SandboxProfile BuildProfile(const TempProject& project, const ProfileOptions& options) {
  SandboxRequest request;
  request.access.kind = options.kind;
  request.access.program = options.program;
  request.access.project_root = project.path();
  request.access.readable_prefixes = {""};
  request.access.network_allowed = options.network_allowed;
  request.seccomp.allow_process_creation = options.kind != ToolKind::kVfs;
  request.seccomp.deny_network_sockets = !options.network_allowed;
  request.limits.processes = options.processes;
  request.tool_name = options.tool_name;
  if (options.namespaces_only) request.hidden_for_testing = {"landlock", "seccomp"};
  Result<SandboxProfile> profile = SandboxProfile::Build(
      request, options.namespaces_only ? SandboxMode::kBestEffort : SandboxMode::kRequire);
  EXPECT_TRUE(profile.ok()) << profile.status().ToString();
  return std::move(profile).value();
}

LaunchSpec Shell(std::string script, const SandboxProfile& profile) {
  return LaunchSpec{.program = "/bin/sh",
                    .args = {"-c", std::move(script)},
                    .environment = {"PATH=/usr/bin:/bin"},
                    .sandbox = &profile};
}

// Runs `script` under `profile`; returns its stdout, and its exit status.
std::string RunShell(const std::string& script, const SandboxProfile& profile,
                     ExitStatus* status = nullptr) {
  Result<ChildProcess> child = Launch(Shell(script, profile));
  EXPECT_TRUE(child.ok()) << child.status().ToString();
  if (!child.ok()) return "";
  child->stdin_fd().reset();
  std::string output = ReadFd(child->stdout_fd().get());
  Result<ExitStatus> waited = child->Wait();
  EXPECT_TRUE(waited.ok());
  if (status != nullptr && waited.ok()) *status = *waited;
  return output;
}

std::string OwnNamespace(const std::string& name) {
  char target[128] = {};
  const std::string link = "/proc/self/ns/" + name;
  const ssize_t length = readlink(link.c_str(), target, sizeof target - 1);
  return length > 0 ? std::string(target, static_cast<size_t>(length)) : "";
}

// Host pids of processes whose command line contains `marker`.
std::vector<pid_t> ProcessesWithArgument(const std::string& marker) {
  std::vector<pid_t> found;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return found;
  while (dirent* entry = readdir(proc)) {
    const pid_t pid = atoi(entry->d_name);
    if (pid <= 0) continue;
    std::ifstream cmdline("/proc/" + std::string(entry->d_name) + "/cmdline");
    std::stringstream contents;
    contents << cmdline.rdbuf();
    if (contents.str().find(marker) != std::string::npos) found.push_back(pid);
  }
  closedir(proc);
  return found;
}

// Polls `condition` for up to five seconds.
template <typename Condition>
bool Eventually(Condition condition) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return condition();
}

TEST(NamespacesTest, ToolRunsInItsOwnUserNetworkIpcMountAndPidNamespaces) {
  SKIP_WITHOUT_USER_NAMESPACES();
  TempProject project;
  const SandboxProfile profile = BuildProfile(project, {.namespaces_only = true});
  ASSERT_TRUE(profile.namespaces().has_value());
  const std::vector<std::string> names = {"user", "net", "ipc", "mnt", "pid"};
  std::string script = "readlink";
  for (const std::string& name : names) script += " /proc/self/ns/" + name;
  std::istringstream lines(RunShell(script, profile));
  for (const std::string& name : names) {
    std::string inside;
    ASSERT_TRUE(std::getline(lines, inside)) << name;
    EXPECT_TRUE(inside.starts_with(name + ":[")) << inside;
    EXPECT_NE(inside, OwnNamespace(name)) << name << " is the host's";
  }
}

TEST(NamespacesTest, NetworkAllowedStaysInTheHostNetworkNamespace) {
  SKIP_WITHOUT_USER_NAMESPACES();
  TempProject project;
  const SandboxProfile profile =
      BuildProfile(project, {.namespaces_only = true, .network_allowed = true});
  EXPECT_EQ(RunShell("readlink /proc/self/ns/net", profile), OwnNamespace("net") + "\n");
  EXPECT_NE(RunShell("readlink /proc/self/ns/ipc", profile), OwnNamespace("ipc") + "\n");
}

TEST(NamespacesTest, NetworkNamespaceHasOnlyALoopbackThatIsDown) {
  SKIP_WITHOUT_USER_NAMESPACES();
  TempProject project;
  const SandboxProfile profile = BuildProfile(project, {.namespaces_only = true});
  // /proc/net/dev: two header lines, then one line per interface.
  const std::string devices =
      RunShell("tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '", profile);
  EXPECT_EQ(devices, "lo\n");
  // A loopback that is up has ::1; a new namespace's is down, without one.
  const std::string addresses = RunShell("cat /proc/net/if_inet6 2>/dev/null | wc -l", profile);
  EXPECT_EQ(addresses, "0\n") << "the loopback has an address, so it is up";
}

TEST(NamespacesTest, ToolKeepsItsUidAndGid) {
  SKIP_WITHOUT_USER_NAMESPACES();
  TempProject project;
  const SandboxProfile profile = BuildProfile(project, {});
  EXPECT_EQ(RunShell("id -u; id -g", profile),
            std::to_string(geteuid()) + "\n" + std::to_string(getegid()) + "\n");
}

TEST(NamespacesTest, StartsOfOneVfsToolShareItsUserNamespace) {
  SKIP_WITHOUT_USER_NAMESPACES();
  TempProject project;
  auto vfs_tool = [&](const std::string& name) {
    return BuildProfile(project, {.kind = ToolKind::kVfs, .namespaces_only = true, .tool_name = name});
  };
  const SandboxProfile first = vfs_tool("shared-ns-first");
  const SandboxProfile again = vfs_tool("shared-ns-first");  // a second build of the same tool
  const SandboxProfile second = vfs_tool("shared-ns-second");
  ASSERT_GE(first.shared_user_namespace_fd(), 0);
  const std::string script = "readlink /proc/self/ns/user; id -u; id -g";
  const std::string ids = std::to_string(geteuid()) + "\n" + std::to_string(getegid()) + "\n";
  const std::string first_run = RunShell(script, first);
  ASSERT_TRUE(first_run.ends_with(ids)) << first_run;  // ids map to themselves, as a created one
  const std::string first_namespace = first_run.substr(0, first_run.size() - ids.size());
  EXPECT_NE(first_namespace, OwnNamespace("user") + "\n");
  EXPECT_EQ(RunShell(script, first), first_run);  // the next start joins it
  EXPECT_EQ(RunShell(script, again), first_run);
  const std::string second_run = RunShell(script, second);
  EXPECT_TRUE(second_run.ends_with(ids)) << second_run;
  EXPECT_NE(second_run, first_run);  // another tool, another namespace
  // Tools that create processes get a user namespace of their own per start.
  const SandboxProfile process_child = BuildProfile(project, {.namespaces_only = true, .tool_name = "shared-ns-first"});
  EXPECT_EQ(process_child.shared_user_namespace_fd(), -1);
  EXPECT_NE(RunShell("readlink /proc/self/ns/user", process_child), RunShell("readlink /proc/self/ns/user", process_child));
}

// A failure to make a tool's shared namespace is kept: the next start of
// that tool does not fork the host to try again. Made to fail by a process
// limit of 0, as uid 65534 (root is exempt from it), in a forked child.
TEST(NamespacesTest, AFailureToMakeTheSharedNamespaceIsNotRetried) {
  SKIP_WITHOUT_USER_NAMESPACES();
  const ForkedChildOutcome outcome = RunInForkedChild([](int report_fd) {
    auto report = [report_fd](const std::string& text) {
      ssize_t ignored = write(report_fd, text.data(), text.size());
      (void)ignored;
    };
    if (geteuid() == 0 && (setresgid(65534, 65534, 65534) != 0 || setresuid(65534, 65534, 65534) != 0)) {
      report("cannot become uid 65534");
      return 1;
    }
    prctl(PR_SET_DUMPABLE, 1);  // cleared by the uid change; /proc/PID/ns of the child needs it
    rlimit processes{};
    getrlimit(RLIMIT_NPROC, &processes);
    const rlimit none{.rlim_cur = 0, .rlim_max = processes.rlim_max};
    if (setrlimit(RLIMIT_NPROC, &none) != 0) return 2;
    Result<int> failed = SharedUserNamespace("retry-test");
    if (failed.ok()) {
      report("made a namespace with a process limit of 0");
      return 3;
    }
    if (setrlimit(RLIMIT_NPROC, &processes) != 0) return 4;
    Result<int> again = SharedUserNamespace("retry-test");
    if (again.ok() || again.status().message() != failed.status().message()) {
      report("tried again: " + (again.ok() ? std::string("made one") : again.status().message()));
      return 5;
    }
    Result<int> other = SharedUserNamespace("retry-test-other");  // the limit is back
    if (!other.ok()) {
      report("another key failed: " + other.status().message());
      return 6;
    }
    return 0;
  });
  EXPECT_TRUE(outcome.exited && outcome.code == 0) << outcome.Describe() << ": " << outcome.report;
}

TEST(NamespacesTest, AHostWithItsStandardStreamsClosedStartsSandboxedTools) {
  // open() then hands out 0-2 for the shared user namespace and the
  // Landlock ruleset, which the launcher child's dup2 onto 0-2 would
  // replace: every start of the tool failed.
  SKIP_WITHOUT_USER_NAMESPACES();
  TempProject project;
  const ForkedChildOutcome outcome = RunInForkedChild([&](int report_fd) {
    for (int fd = 0; fd < 3; ++fd) close(fd);
    SandboxRequest request;
    request.access.kind = ToolKind::kVfs;
    request.access.program = "/bin/true";
    request.access.project_root = project.path();
    request.tool_name = "closed-streams-" + std::to_string(getpid());  // made here, not inherited
    Result<SandboxProfile> profile = SandboxProfile::Build(request, SandboxMode::kRequire);
    if (!profile.ok()) {
      (void)!write(report_fd, profile.status().message().data(), profile.status().message().size());
      return 1;
    }
    if (profile->shared_user_namespace_fd() < 3 || profile->landlock_ruleset_fd() < 3) return 2;
    for (int start = 0; start < 2; ++start) {
      Result<ChildProcess> child = Launch(LaunchSpec{.program = "/bin/true", .sandbox = &*profile});
      if (!child.ok()) {
        (void)!write(report_fd, child.status().message().data(), child.status().message().size());
        return 3;
      }
      Result<ExitStatus> status = child->Wait();
      if (!status.ok() || !status->success()) return 4;
    }
    return 0;
  });
  EXPECT_TRUE(outcome.exited && outcome.code == 0) << outcome.Describe() << ": " << outcome.report;
}

TEST(NamespacesTest, ProcessCreatingToolIsPid2UnderATinyInit) {
  SKIP_WITHOUT_USER_NAMESPACES();
  TempProject project;
  const SandboxProfile profile = BuildProfile(project, {});
  // $PPID is 0: the supervising parent is outside the namespace.
  EXPECT_EQ(RunShell("echo $$ $PPID", profile), "2 0\n");
}

TEST(NamespacesTest, VfsToolGetsNoPidNamespace) {
  SKIP_WITHOUT_USER_NAMESPACES();
  TempProject project;
  const SandboxProfile profile =
      BuildProfile(project, {.kind = ToolKind::kVfs, .namespaces_only = true});
  ASSERT_TRUE(profile.namespaces().has_value());
  EXPECT_FALSE(profile.namespaces()->own_process_tree);
  EXPECT_EQ(RunShell("readlink /proc/self/ns/pid", profile), OwnNamespace("pid") + "\n");
}

TEST(NamespacesTest, ExitStatusAndSignalsPassThroughTheSupervisor) {
  SKIP_WITHOUT_USER_NAMESPACES();
  TempProject project;
  const SandboxProfile profile = BuildProfile(project, {});
  ExitStatus status;
  RunShell("exit 3", profile, &status);
  EXPECT_EQ(status.Describe(), "exited with status 3");
  RunShell("kill -SEGV $$", profile, &status);
  EXPECT_EQ(status.Describe(), "killed by signal SIGSEGV");

  // The host signals the process group; the tool (not PID 1, which would
  // ignore SIGTERM without a handler) is in it.
  Result<ChildProcess> child = Launch(Shell("echo ready; sleep 100", profile));
  ASSERT_TRUE(child.ok()) << child.status().ToString();
  ASSERT_NE(ReadFd(child->stdout_fd().get(), "\n").find("ready"), std::string::npos);
  ASSERT_TRUE(child->Signal(SIGTERM).ok());
  Result<ExitStatus> waited = child->Wait();
  ASSERT_TRUE(waited.ok());
  EXPECT_EQ(waited->Describe(), "killed by signal SIGTERM");
}

TEST(NamespacesTest, FailingStepOfTheToolInsideThePidNamespaceIsReported) {
  // The tool (PID 2) is started by the supervisor sharing its memory until
  // execve; a step failing there still reaches the host over the error pipe.
  SKIP_WITHOUT_USER_NAMESPACES();
  TempProject project;
  const SandboxProfile profile = BuildProfile(project, {});
  LaunchSpec spec = Shell("exit 0", profile);
  spec.program = "/bin/no-such-tool";
  Result<ChildProcess> missing = Launch(spec);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(),
            "Cannot start '/bin/no-such-tool': execve failed: No such file or directory");
  spec = Shell("exit 0", profile);
  spec.working_directory = project.path() + "/missing";
  Result<ChildProcess> bad_directory = Launch(spec);
  ASSERT_FALSE(bad_directory.ok());
  EXPECT_EQ(bad_directory.status().message(), "Cannot start '/bin/sh': chdir to '" +
                                                  project.path() +
                                                  "/missing' failed: No such file or directory");
}

TEST(NamespacesTest, StdinEndsWhenTheHostClosesIt) {
  SKIP_WITHOUT_USER_NAMESPACES();
  TempProject project;
  const SandboxProfile profile = BuildProfile(project, {});
  Result<ChildProcess> child = Launch(Shell("cat; echo done", profile));
  ASSERT_TRUE(child.ok()) << child.status().ToString();
  child->stdin_fd().reset();  // the supervisor and the init hold no copy
  EXPECT_EQ(ReadFd(child->stdout_fd().get()), "done\n");
  EXPECT_TRUE(child->Wait()->success());
}

TEST(NamespacesTest, SetsidGrandchildDiesWithTheRun) {
  SKIP_WITHOUT_USER_NAMESPACES();
  TempProject project;
  const SandboxProfile profile = BuildProfile(project, {});  // the full sandbox
  // A unique sleep duration marks the escapee on the host.
  const std::string marker = "1000." + std::to_string(getpid()) + "7";
  {
    Result<ChildProcess> child = Launch(
        Shell("setsid -f sleep " + marker + " </dev/null >/dev/null 2>&1; echo started; sleep 100",
              profile));
    ASSERT_TRUE(child.ok()) << child.status().ToString();
    ASSERT_NE(ReadFd(child->stdout_fd().get(), "started").find("started"), std::string::npos);
    ASSERT_TRUE(Eventually([&] { return !ProcessesWithArgument(marker).empty(); }))
        << "the setsid grandchild did not start";
  }
  EXPECT_TRUE(Eventually([&] { return ProcessesWithArgument(marker).empty(); }))
      << "the setsid grandchild outlived the run";
}

// RLIMIT_NPROC = N as an unprivileged uid in a user namespace: the tool
// itself plus N-1 threads, counted apart from the uid's other processes.
void ExpectThreadsUpToTheProcessLimit(ToolKind kind) {
  TempProject project;
  constexpr uint64_t kLimit = 5;
  const std::string script =
      "import threading\n"
      "stop = threading.Event()\n"
      "started = 0\n"
      "try:\n"
      "    for _ in range(50):\n"
      "        threading.Thread(target=stop.wait).start()\n"
      "        started += 1\n"
      "except RuntimeError:\n"
      "    pass\n"
      "print(started)\n"
      "stop.set()\n";
  const SandboxProfile profile =
      BuildProfile(project, {.kind = kind, .program = "/usr/bin/python3", .processes = kLimit});
  ASSERT_EQ(profile.limits().processes, kLimit);
  const ForkedChildOutcome outcome = RunInForkedChild([&](int report_fd) {
    if (setresgid(65534, 65534, 65534) != 0 || setresuid(65534, 65534, 65534) != 0) return 1;
    // A uid change makes the process non-dumpable; an exec (setpriv) would
    // have reset that, and the uid map can only be written when dumpable.
    if (prctl(PR_SET_DUMPABLE, 1) != 0) return 2;
    Result<ChildProcess> child = Launch(LaunchSpec{.program = "/usr/bin/python3",
                                                   .args = {"-c", script},
                                                   .environment = {"PATH=/usr/bin:/bin"},
                                                   .sandbox = &profile});
    if (!child.ok()) {
      const std::string message = child.status().ToString();
      (void)!write(report_fd, message.data(), message.size());
      return 3;
    }
    const std::string output = ReadFd(child->stdout_fd().get()) + ReadFd(child->stderr_fd().get());
    (void)!write(report_fd, output.data(), output.size());
    return child->Wait()->success() ? 0 : 4;
  });
  ASSERT_TRUE(outcome.exited && outcome.code == 0) << outcome.Describe() << ": " << outcome.report;
  EXPECT_EQ(outcome.report, std::to_string(kLimit - 1) + "\n");
}

TEST(NamespacesTest, ProcessLimitCountsInTheUserNamespaceForAVfsTool) {
  SKIP_WITHOUT_USER_NAMESPACES();
  if (geteuid() != 0) GTEST_SKIP() << "needs root to switch to uid 65534";
  ExpectThreadsUpToTheProcessLimit(ToolKind::kVfs);
}

TEST(NamespacesTest, ProcessLimitCountsInTheUserNamespaceWithAPidNamespace) {
  SKIP_WITHOUT_USER_NAMESPACES();
  if (geteuid() != 0) GTEST_SKIP() << "needs root to switch to uid 65534";
  ExpectThreadsUpToTheProcessLimit(ToolKind::kProcessChild);
}

TEST(NamespacesTest, HiddenNamespacesAreListedUnderBestEffortOnly) {
  TempProject project;
  SandboxRequest request;
  request.access.kind = ToolKind::kVfs;
  request.access.program = "/bin/sh";
  request.access.project_root = project.path();
  request.limits.processes = 10;
  request.hidden_for_testing = {"namespaces"};
  Result<SandboxProfile> required = SandboxProfile::Build(request, SandboxMode::kRequire);
  ASSERT_TRUE(required.ok()) << required.status().ToString();  // never a refusal
  EXPECT_FALSE(required->namespaces().has_value());
  EXPECT_EQ(required->limits().processes, ResourceLimits::kInherit);
  Result<SandboxProfile> best_effort = SandboxProfile::Build(request, SandboxMode::kBestEffort);
  ASSERT_TRUE(best_effort.ok()) << best_effort.status().ToString();
  ASSERT_EQ(best_effort->unenforced().size(), 2u);
  EXPECT_TRUE(
      best_effort->unenforced()[0].starts_with("namespaces (user, PID, network, IPC, mount)"));
}

}  // namespace
}  // namespace toolvfs
