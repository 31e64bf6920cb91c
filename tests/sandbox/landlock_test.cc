#include "sandbox/landlock.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/unique_fd.h"
#include "project/test_util.h"
#include "sandbox/restricted_child.h"

namespace toolvfs {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// 0 if open() succeeds, else its errno.
int OpenError(const std::string& path, int flags) {
  UniqueFd fd(open(path.c_str(), flags | O_CLOEXEC, 0644));
  return fd ? 0 : errno;
}

LandlockRuleset Build(const LandlockRules& rules) {
  Result<LandlockRuleset> ruleset = BuildLandlockRuleset(rules);
  EXPECT_TRUE(ruleset.ok()) << ruleset.status().ToString();
  return std::move(ruleset).value();
}

LandlockRules OnlyPaths(std::vector<LandlockPathRule> paths) {
  return LandlockRules{.paths = std::move(paths),
                       .deny_tcp_bind_connect = true,
                       .scope_signals_and_abstract_unix_sockets = true};
}

// A TCP listener on 127.0.0.1 with a kernel-chosen port.
struct TcpListener {
  UniqueFd fd;
  sockaddr_in address{};
};

TcpListener ListenOnLoopback() {
  TcpListener listener;
  listener.fd.reset(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  EXPECT_TRUE(listener.fd.valid()) << std::strerror(errno);
  listener.address.sin_family = AF_INET;
  listener.address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof listener.address;
  EXPECT_EQ(bind(listener.fd.get(), reinterpret_cast<sockaddr*>(&listener.address), length), 0);
  EXPECT_EQ(listen(listener.fd.get(), 4), 0);
  EXPECT_EQ(getsockname(listener.fd.get(), reinterpret_cast<sockaddr*>(&listener.address), &length),
            0);
  return listener;
}

int ConnectError(const TcpListener& listener) {
  UniqueFd client(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!client) return errno;
  if (connect(client.get(), reinterpret_cast<const sockaddr*>(&listener.address),
              sizeof listener.address) != 0) {
    return errno;
  }
  return 0;
}

TEST(LandlockTest, ReadsAllowedFileButNotEtcPasswd) {
  SKIP_WITHOUT_LANDLOCK_ABI(1, "filesystem restriction");
  TempDir directory;
  WriteRealFile(directory.Join("allowed.txt"), "yes");
  const LandlockRuleset ruleset = Build(OnlyPaths({{.path = directory.path(), .read = true}}));
  EXPECT_EQ(RunRestricted(ruleset, [&] { return OpenError(directory.Join("allowed.txt"), O_RDONLY); }),
            0);
  EXPECT_EQ(RunRestricted(ruleset, [] { return OpenError("/etc/passwd", O_RDONLY); }), EACCES);
  // The test process itself is not restricted.
  EXPECT_EQ(OpenError("/etc/passwd", O_RDONLY), 0);
}

TEST(LandlockTest, ARuleThatMayNotFollowSymlinksGrantsNothingThroughOne) {
  SKIP_WITHOUT_LANDLOCK_ABI(1, "filesystem restriction");
  TempDir project;
  TempDir elsewhere;
  WriteRealFile(elsewhere.Join("secret.txt"), "outside");
  WriteRealFile(project.Join("real/own.txt"), "inside");
  // An entry that was a directory when the policy was checked, now a
  // symlink to somewhere else; and one below a symlinked directory.
  ASSERT_EQ(symlink(elsewhere.path().c_str(), project.Join("swapped").c_str()), 0);
  const std::string through_link = project.Join("swapped");
  const std::string below_link = project.Join("swapped/secret.txt");
  for (const std::string& path : {through_link, below_link}) {
    const LandlockRuleset strict = Build(OnlyPaths(
        {{.path = path, .read = true, .follow_symlinks = false},
         {.path = project.Join("real"), .read = true, .follow_symlinks = false}}));
    EXPECT_EQ(RunRestricted(strict, [&] { return OpenError(elsewhere.Join("secret.txt"), O_RDONLY); }), EACCES)
        << path;
    EXPECT_EQ(RunRestricted(strict, [&] { return OpenError(project.Join("real/own.txt"), O_RDONLY); }), 0)
        << path;
  }
  // The same rule following symlinks lands on the target.
  const LandlockRuleset following = Build(OnlyPaths({{.path = through_link, .read = true}}));
  EXPECT_EQ(RunRestricted(following, [&] { return OpenError(elsewhere.Join("secret.txt"), O_RDONLY); }), 0);
}

TEST(LandlockTest, WritesOnlyWhereWritable) {
  SKIP_WITHOUT_LANDLOCK_ABI(1, "filesystem restriction");
  TempDir writable, readable;
  WriteRealFile(readable.Join("existing.txt"), "old");
  const LandlockRuleset ruleset = Build(OnlyPaths({
      {.path = writable.path(), .read = true, .write = true},
      {.path = readable.path(), .read = true},
  }));
  EXPECT_EQ(RunRestricted(ruleset,
                          [&] { return OpenError(writable.Join("new.txt"), O_WRONLY | O_CREAT); }),
            0);
  EXPECT_EQ(RunRestricted(ruleset,
                          [&] { return OpenError(readable.Join("new.txt"), O_WRONLY | O_CREAT); }),
            EACCES);
  EXPECT_EQ(RunRestricted(ruleset,
                          [&] { return OpenError(readable.Join("existing.txt"), O_WRONLY); }),
            EACCES);
  EXPECT_EQ(ReadRealFile(readable.Join("existing.txt")), "old");
  const std::string in_tmp = "/tmp/toolvfs-landlock-test-" + std::to_string(getpid());
  EXPECT_EQ(RunRestricted(ruleset, [&] { return OpenError(in_tmp, O_WRONLY | O_CREAT); }), EACCES);
  EXPECT_FALSE(RealPathExists(in_tmp));
}

TEST(LandlockTest, RuleOnAFileGetsFileRightsOnly) {
  SKIP_WITHOUT_LANDLOCK_ABI(1, "filesystem restriction");
  TempDir directory;
  WriteRealFile(directory.Join("file.txt"), "content");
  // Directory rights on a file would make the kernel fail with EINVAL.
  const LandlockRuleset ruleset = Build(OnlyPaths(
      {{.path = directory.Join("file.txt"), .read = true, .write = true, .execute = true}}));
  EXPECT_EQ(RunRestricted(ruleset, [&] { return OpenError(directory.Join("file.txt"), O_RDWR); }),
            0);
  EXPECT_EQ(RunRestricted(ruleset,
                          [&] { return OpenError(directory.Join("other.txt"), O_WRONLY | O_CREAT); }),
            EACCES);
}

TEST(LandlockTest, MissingPathsAreSkippedAndRelativePathsRejected) {
  SKIP_WITHOUT_LANDLOCK_ABI(1, "filesystem restriction");
  Result<LandlockRuleset> skipped =
      BuildLandlockRuleset(OnlyPaths({{.path = "/nonexistent/toolvfs/path", .read = true}}));
  EXPECT_TRUE(skipped.ok()) << skipped.status().ToString();
  Result<LandlockRuleset> relative = BuildLandlockRuleset(OnlyPaths({{.path = "etc", .read = true}}));
  ASSERT_FALSE(relative.ok());
  EXPECT_EQ(relative.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(relative.status().message(), HasSubstr("'etc'"));
}

TEST(LandlockTest, ExecveNeedsExecuteRight) {
  SKIP_WITHOUT_LANDLOCK_ABI(1, "filesystem restriction");
  const auto run_shell = [] {
    char* const argv[] = {const_cast<char*>("/bin/sh"), const_cast<char*>("-c"),
                          const_cast<char*>("exit 7"), nullptr};
    char* const envp[] = {nullptr};
    execve("/bin/sh", argv, envp);
    return errno;
  };
  // Libraries executable, /bin and /usr/bin not.
  const LandlockRuleset libraries_only = Build(OnlyPaths({
      {.path = "/lib", .read = true, .execute = true},
      {.path = "/lib64", .read = true, .execute = true},
      {.path = "/usr/lib", .read = true, .execute = true},
  }));
  EXPECT_EQ(RunRestricted(libraries_only, run_shell), EACCES);
  const LandlockRuleset with_usr = Build(OnlyPaths({{.path = "/usr", .read = true, .execute = true}}));
  EXPECT_EQ(RunRestricted(with_usr, run_shell), 7);
}

TEST(LandlockTest, TcpConnectDeniedOrAllowed) {
  SKIP_WITHOUT_LANDLOCK_ABI(4, "TCP bind/connect denial");
  TcpListener listener = ListenOnLoopback();
  LandlockRules rules = OnlyPaths({});
  const LandlockRuleset denied = Build(rules);
  EXPECT_TRUE(denied.coverage().tcp);
  EXPECT_EQ(RunRestricted(denied, [&] { return ConnectError(listener); }), EACCES);
  rules.deny_tcp_bind_connect = false;
  const LandlockRuleset allowed = Build(rules);
  EXPECT_FALSE(allowed.coverage().tcp);
  EXPECT_EQ(RunRestricted(allowed, [&] { return ConnectError(listener); }), 0);
}

TEST(LandlockTest, SignalScopingProtectsTheParent) {
  SKIP_WITHOUT_LANDLOCK_ABI(6, "signal scoping");
  LandlockRules rules = OnlyPaths({});
  const LandlockRuleset scoped = Build(rules);
  EXPECT_TRUE(scoped.coverage().scoping);
  // Signal 0 goes through the same permission check as a real signal.
  EXPECT_EQ(RunRestricted(scoped, [] { return kill(getppid(), 0) == 0 ? 0 : errno; }), EPERM);
  EXPECT_EQ(RunRestricted(scoped, [] { return kill(getpid(), 0) == 0 ? 0 : errno; }), 0);
  rules.scope_signals_and_abstract_unix_sockets = false;
  const LandlockRuleset unscoped = Build(rules);
  EXPECT_EQ(RunRestricted(unscoped, [] { return kill(getppid(), 0) == 0 ? 0 : errno; }), 0);
}

TEST(LandlockTest, AbstractUnixSocketScoping) {
  SKIP_WITHOUT_LANDLOCK_ABI(6, "abstract unix socket scoping");
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  const std::string name = "toolvfs-landlock-test-" + std::to_string(getpid());
  std::memcpy(address.sun_path + 1, name.data(), name.size());  // sun_path[0] == 0: abstract
  const socklen_t length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  UniqueFd listener(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  ASSERT_TRUE(listener.valid());
  ASSERT_EQ(bind(listener.get(), reinterpret_cast<sockaddr*>(&address), length), 0)
      << std::strerror(errno);
  ASSERT_EQ(listen(listener.get(), 4), 0);
  const auto connect_error = [&] {
    UniqueFd client(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!client) return errno;
    return connect(client.get(), reinterpret_cast<sockaddr*>(&address), length) == 0 ? 0 : errno;
  };
  LandlockRules rules = OnlyPaths({});
  EXPECT_EQ(RunRestricted(Build(rules), connect_error), EPERM);
  rules.scope_signals_and_abstract_unix_sockets = false;
  EXPECT_EQ(RunRestricted(Build(rules), connect_error), 0);
}

TEST(LandlockTest, ApplyRequiresNoNewPrivileges) {
  SKIP_WITHOUT_LANDLOCK_ABI(1, "filesystem restriction");
  const LandlockRuleset ruleset = Build(OnlyPaths({}));
  EXPECT_EQ(RunRestricted(ruleset, [] { return 0; }, /*set_no_new_privileges=*/false),
            kApplyFailed);
  // The check comes before the syscall, so even a bad fd reports EPERM.
  if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 0) {
    EXPECT_EQ(ApplyLandlockRuleset(-1), EPERM);
  }
}

TEST(LandlockTest, EveryAbiUpToTheKernelsBuildsAndRestricts) {
  SKIP_WITHOUT_LANDLOCK_ABI(1, "filesystem restriction");
  TempDir directory;
  WriteRealFile(directory.Join("allowed.txt"), "yes");
  const LandlockRules rules = OnlyPaths({
      {.path = directory.path(), .read = true, .write = true, .execute = true},
      {.path = directory.Join("allowed.txt"), .read = true, .write = true, .execute = true},
  });
  for (int abi = 1; abi <= KernelLandlockAbi(); ++abi) {
    SCOPED_TRACE("ABI " + std::to_string(abi));
    Result<LandlockRuleset> ruleset = BuildLandlockRulesetForAbi(rules, abi);
    ASSERT_TRUE(ruleset.ok()) << ruleset.status().ToString();
    EXPECT_EQ(ruleset->coverage(), LandlockCoverageForAbi(abi));
    EXPECT_EQ(RunRestricted(*ruleset, [] { return OpenError("/etc/passwd", O_RDONLY); }), EACCES);
    EXPECT_EQ(RunRestricted(*ruleset,
                            [&] { return OpenError(directory.Join("new.txt"), O_WRONLY | O_CREAT); }),
              0);
  }
}

TEST(LandlockTest, ReportsWhatAnOlderAbiCannotEnforce) {
  SKIP_WITHOUT_LANDLOCK_ABI(3, "building an ABI 3 ruleset");
  Result<LandlockRuleset> abi_three = BuildLandlockRulesetForAbi(OnlyPaths({}), 3);
  ASSERT_TRUE(abi_three.ok()) << abi_three.status().ToString();
  EXPECT_FALSE(abi_three->coverage().tcp);
  EXPECT_FALSE(abi_three->coverage().scoping);
  EXPECT_THAT(abi_three->unenforced(),
              ElementsAre("TCP bind/connect denial (needs Landlock ABI 4; this kernel has ABI 3)",
                          "signal and abstract unix socket scoping (needs Landlock ABI 6; this "
                          "kernel has ABI 3)"));
  LandlockRules nothing_asked = OnlyPaths({});
  nothing_asked.deny_tcp_bind_connect = false;
  nothing_asked.scope_signals_and_abstract_unix_sockets = false;
  Result<LandlockRuleset> quiet = BuildLandlockRulesetForAbi(nothing_asked, 1);
  ASSERT_TRUE(quiet.ok()) << quiet.status().ToString();
  EXPECT_THAT(quiet->unenforced(), IsEmpty());
  EXPECT_FALSE(quiet->coverage().truncate);
  if (KernelLandlockAbi() >= 6) {
    Result<LandlockRuleset> full = BuildLandlockRuleset(OnlyPaths({}));
    ASSERT_TRUE(full.ok());
    EXPECT_THAT(full->unenforced(), IsEmpty());
  }
}

TEST(LandlockTest, CoverageForAbi) {
  EXPECT_EQ(LandlockCoverageForAbi(0), LandlockCoverage{});
  const LandlockCoverage four = LandlockCoverageForAbi(4);
  EXPECT_TRUE(four.filesystem && four.truncate && four.tcp);
  EXPECT_FALSE(four.device_ioctl || four.scoping);
  EXPECT_TRUE(LandlockCoverageForAbi(7).scoping);
}

}  // namespace
}  // namespace toolvfs
