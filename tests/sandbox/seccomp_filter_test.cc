#include "sandbox/seccomp_filter.h"

#include <fcntl.h>
#include <grp.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/io_uring.h>
#include <linux/keyctl.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/ioctl.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "sandbox/forked_child.h"
#include "sandbox/kernel_features.h"
#include "sandbox/sandbox_profile.h"

extern char** environ;

namespace toolvfs {
namespace {

// The confined child's exit code when no_new_privs or the filter failed.
constexpr int kConfineFailed = 250;

const SeccompOptions kVfsTool{.allow_process_creation = false, .deny_network_sockets = true};
const SeccompOptions kStdioToolWithNetwork{.allow_process_creation = true,
                                           .deny_network_sockets = false};

// Each attempt below uses arguments that fail differently (or succeed)
// without the filter, so the errno seen proves the filter answered.
int SocketErrno(long domain, int type) {
  const long fd = syscall(SYS_socket, domain, type, 0);
  if (fd < 0) return errno;
  close(static_cast<int>(fd));
  return 0;
}

// memfd_create's exec flags (Linux 6.3), missing from older uapi headers.
constexpr unsigned kNoExecSeal = 0x0008U;  // MFD_NOEXEC_SEAL
constexpr unsigned kExec = 0x0010U;        // MFD_EXEC

int MemfdErrno(unsigned flags) {
  const long fd = syscall(SYS_memfd_create, "toolvfs-test", flags);
  if (fd < 0) return errno;
  close(static_cast<int>(fd));
  return 0;
}

int SocketPairErrno(int domain, int type) {
  int pair[2];
  if (socketpair(domain, type, 0, pair) != 0) return errno;
  close(pair[0]);
  close(pair[1]);
  return 0;
}

class SeccompFilterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const FeatureProbe probe = ProbeSeccomp();
    if (!probe.available) GTEST_SKIP() << "this kernel lacks seccomp filter mode: " << probe.detail;
  }

  static SeccompProgram Build(const SeccompOptions& options) {
    Result<SeccompProgram> program = BuildSeccompProgram(options);
    EXPECT_TRUE(program.ok()) << program.status().ToString();
    return std::move(program).value();
  }

  // Forks; the child sets no_new_privs, applies `program` and exits with
  // attempt()'s result.
  static ForkedChildOutcome RunConfined(const SeccompProgram& program,
                                        const std::function<int()>& attempt) {
    const sock_fprog filter = program.program();
    return RunInForkedChild([&](int) {
      if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return kConfineFailed;
      if (ApplySeccompProgram(filter) != 0) return kConfineFailed;
      return attempt();
    });
  }

  static void ExpectErrno(const SeccompProgram& program, int expected, const char* what,
                          const std::function<int()>& attempt) {
    const ForkedChildOutcome outcome = RunConfined(program, attempt);
    EXPECT_EQ(outcome.Describe(), "exited with " + std::to_string(expected))
        << what << " (expected " << (expected == 0 ? "success" : strerrorname_np(expected)) << ")";
  }

  // Unix stream and seqpacket pairs (their ends reach only each other) are
  // allowed; datagram pairs, whose ends connect() or sendto() any
  // path-named datagram socket, and pairs of other families are not.
  static void ExpectUnixPairs(const SeccompProgram& program) {
    ExpectErrno(program, 0, "unix stream socketpair",
                [] { return SocketPairErrno(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC); });
    ExpectErrno(program, 0, "unix seqpacket socketpair",
                [] { return SocketPairErrno(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK); });
    ExpectErrno(program, EACCES, "unix datagram socketpair",
                [] { return SocketPairErrno(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC); });
    ExpectErrno(program, EACCES, "TCP socketpair",
                [] { return SocketPairErrno(AF_INET, SOCK_STREAM); });
  }
};

TEST_F(SeccompFilterTest, BuildsAProgramForEveryOptionCombination) {
  for (const bool allow_process_creation : {false, true}) {
    for (const bool deny_network_sockets : {false, true}) {
      const SeccompProgram program = Build({allow_process_creation, deny_network_sockets});
      EXPECT_GT(program.instruction_count(), 10u);
      EXPECT_EQ(program.program().len, program.instruction_count());
      // Debian 12's libseccomp 2.5.4 knows every syscall on the list.
      EXPECT_TRUE(program.unknown_syscalls().empty())
          << "not denied: " << ::testing::PrintToString(program.unknown_syscalls());
    }
  }
}

TEST_F(SeccompFilterTest, MeasuresBuildAndApplyTime) {
  constexpr int kRounds = 50;
  const auto start = std::chrono::steady_clock::now();
  for (int round = 0; round < kRounds; ++round) (void)Build(kVfsTool);
  const double build_microseconds =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() /
      kRounds;
  const SeccompProgram program = Build(kVfsTool);

  // The second apply stacks the same program again: the difference to the
  // first shows one-time costs (lazy symbol binding, first filter on the task).
  const sock_fprog filter = program.program();
  const ForkedChildOutcome outcome = RunInForkedChild([&](int report_fd) {
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return kConfineFailed;
    long nanoseconds[2];
    for (long& elapsed : nanoseconds) {
      timespec before, after;
      clock_gettime(CLOCK_MONOTONIC, &before);
      const int error_number = ApplySeccompProgram(filter);
      clock_gettime(CLOCK_MONOTONIC, &after);
      if (error_number != 0) return kConfineFailed;
      elapsed = (after.tv_sec - before.tv_sec) * 1000000000L + (after.tv_nsec - before.tv_nsec);
    }
    char text[64];
    const int length = snprintf(text, sizeof text, "%ld %ld", nanoseconds[0], nanoseconds[1]);
    return write(report_fd, text, static_cast<size_t>(length)) == length ? 0 : 1;
  });
  ASSERT_EQ(outcome.Describe(), "exited with 0");
  double first_apply_microseconds = 0, second_apply_microseconds = 0;
  ASSERT_EQ(sscanf(outcome.report.c_str(), "%lf %lf", &first_apply_microseconds,
                   &second_apply_microseconds), 2);
  first_apply_microseconds /= 1000.0;
  second_apply_microseconds /= 1000.0;
  printf("[ timing   ] BuildSeccompProgram: %.1f us (mean of %d); ApplySeccompProgram in the "
         "child: %.1f us, stacked again: %.1f us; %zu BPF instructions\n",
         build_microseconds, kRounds, first_apply_microseconds, second_apply_microseconds,
         program.instruction_count());
  RecordProperty("build_microseconds", std::to_string(build_microseconds));
  RecordProperty("apply_microseconds", std::to_string(first_apply_microseconds));
}

TEST_F(SeccompFilterTest, ApplyNeedsNoNewPrivsWithoutCapSysAdmin) {
  const SeccompProgram program = Build(kVfsTool);
  const sock_fprog filter = program.program();
  const ForkedChildOutcome outcome = RunInForkedChild([&](int) {
    // Drop every capability: as root, CAP_SYS_ADMIN would allow the filter.
    if (getuid() == 0 && (setgroups(0, nullptr) != 0 || setgid(65534) != 0 || setuid(65534) != 0)) {
      return kConfineFailed;
    }
    return ApplySeccompProgram(filter);
  });
  EXPECT_EQ(outcome.Describe(), "exited with " + std::to_string(EACCES));
}

TEST_F(SeccompFilterTest, NetworkAndUnixSocketsAreDeniedStreamPairsAllowed) {
  const SeccompProgram program = Build(kVfsTool);
  ExpectErrno(program, EACCES, "TCP socket", [] { return SocketErrno(AF_INET, SOCK_STREAM); });
  ExpectErrno(program, EACCES, "UDP socket", [] { return SocketErrno(AF_INET, SOCK_DGRAM); });
  ExpectErrno(program, EACCES, "IPv6 socket", [] { return SocketErrno(AF_INET6, SOCK_STREAM); });
  ExpectErrno(program, EACCES, "packet socket", [] { return SocketErrno(AF_PACKET, SOCK_RAW); });
  ExpectErrno(program, EACCES, "netlink socket", [] { return SocketErrno(AF_NETLINK, SOCK_RAW); });
  ExpectErrno(program, EACCES, "AF_UNSPEC", [] { return SocketErrno(AF_UNSPEC, SOCK_STREAM); });
  // The kernel reads the family as an int; garbage above it must not let
  // AF_INET through.
  ExpectErrno(program, EACCES, "AF_INET with upper bits set",
              [] { return SocketErrno((1L << 32) | AF_INET, SOCK_STREAM); });
  // A new unix socket could connect() to any path-named socket.
  ExpectErrno(program, EACCES, "unix stream socket", [] { return SocketErrno(AF_UNIX, SOCK_STREAM); });
  ExpectErrno(program, EACCES, "unix datagram socket", [] { return SocketErrno(AF_UNIX, SOCK_DGRAM); });
  ExpectUnixPairs(program);
}

TEST_F(SeccompFilterTest, NetworkSocketsAllowedWhenThePolicyAllowsNetwork) {
  const SeccompProgram program = Build(kStdioToolWithNetwork);
  ExpectErrno(program, 0, "TCP socket", [] { return SocketErrno(AF_INET, SOCK_STREAM); });
  ExpectErrno(program, 0, "UDP socket", [] { return SocketErrno(AF_INET6, SOCK_DGRAM); });
  ExpectErrno(program, 0, "netlink socket", [] { return SocketErrno(AF_NETLINK, SOCK_RAW); });
  ExpectErrno(program, EACCES, "packet socket", [] { return SocketErrno(AF_PACKET, SOCK_RAW); });
  ExpectErrno(program, EACCES, "unix stream socket", [] { return SocketErrno(AF_UNIX, SOCK_STREAM); });
  ExpectUnixPairs(program);
}

// memfd_create only for memfds that can never be executed: a memfd is no
// file any Landlock rule governs, so execveat(fd, "", AT_EMPTY_PATH) would
// run a program the policy never allowed.
TEST_F(SeccompFilterTest, OnlyNonExecutableMemfdsMayBeCreated) {
  if (MemfdErrno(MFD_CLOEXEC | kNoExecSeal) == EINVAL) {
    GTEST_SKIP() << "this kernel predates MFD_NOEXEC_SEAL (Linux 6.3): memfd_create always fails";
  }
  for (const SeccompOptions& options : {kVfsTool, kStdioToolWithNetwork}) {
    const SeccompProgram program = Build(options);
    ExpectErrno(program, 0, "MFD_CLOEXEC | MFD_NOEXEC_SEAL",
                [] { return MemfdErrno(MFD_CLOEXEC | kNoExecSeal); });
    ExpectErrno(program, 0, "MFD_NOEXEC_SEAL | MFD_ALLOW_SEALING",
                [] { return MemfdErrno(kNoExecSeal | MFD_ALLOW_SEALING); });
    ExpectErrno(program, EACCES, "MFD_CLOEXEC (executable unless vm.memfd_noexec says otherwise)",
                [] { return MemfdErrno(MFD_CLOEXEC); });
    ExpectErrno(program, EACCES, "MFD_EXEC", [] { return MemfdErrno(MFD_CLOEXEC | kExec); });
    // The flags are an unsigned int: upper bits must not matter either way.
    ExpectErrno(program, EACCES, "MFD_CLOEXEC with upper bits set",
                [] { return ErrnoOf(syscall(SYS_memfd_create, "t", (1UL << 32) | MFD_CLOEXEC)); });
  }
}

TEST_F(SeccompFilterTest, DeniesKernelAttackSurfaceAndEscapes) {
  // A process to ptrace: as root, attaching to it would succeed unfiltered.
  const pid_t target = fork();
  ASSERT_GE(target, 0);
  if (target == 0) {
    pause();
    _exit(0);
  }
  for (const SeccompOptions& options : {kVfsTool, kStdioToolWithNetwork}) {
    const SeccompProgram program = Build(options);
    ExpectErrno(program, EPERM, "ptrace attach",
                [&] { return ErrnoOf(ptrace(PTRACE_ATTACH, target, nullptr, nullptr)); });
    ExpectErrno(program, EPERM, "process_vm_readv", [] {
      return ErrnoOf(process_vm_readv(getppid(), nullptr, 0, nullptr, 0, 0));
    });
    ExpectErrno(program, EPERM, "io_uring_setup", [] {
      io_uring_params params{};
      return ErrnoOf(syscall(SYS_io_uring_setup, 1, &params));
    });
    ExpectErrno(program, EPERM, "bpf", [] { return ErrnoOf(syscall(SYS_bpf, -1, nullptr, 0)); });
    ExpectErrno(program, EPERM, "mount", [] {
      return ErrnoOf(mount("none", "/nonexistent-toolvfs", "tmpfs", 0, nullptr));
    });
    ExpectErrno(program, EPERM, "umount2",
                [] { return ErrnoOf(umount2("/nonexistent-toolvfs", 0)); });
    ExpectErrno(program, EPERM, "fsopen",
                [] { return ErrnoOf(syscall(SYS_fsopen, "tmpfs", 0)); });
    ExpectErrno(program, EPERM, "unshare", [] { return ErrnoOf(unshare(0)); });
    ExpectErrno(program, EPERM, "setns", [] { return ErrnoOf(setns(-1, 0)); });
    ExpectErrno(program, EPERM, "keyctl", [] {
      return ErrnoOf(syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0));
    });
    ExpectErrno(program, EPERM, "perf_event_open", [] {
      return ErrnoOf(syscall(SYS_perf_event_open, nullptr, 0, -1, -1, 0));
    });
    ExpectErrno(program, EPERM, "userfaultfd",
                [] { return ErrnoOf(syscall(SYS_userfaultfd, ~0)); });
    ExpectErrno(program, EPERM, "ioctl(TIOCSTI)", [] {
      const char byte = 'x';
      return ErrnoOf(ioctl(STDIN_FILENO, TIOCSTI, &byte));
    });
    ExpectErrno(program, EPERM, "clone with CLONE_NEWUSER", [] {
      const long result = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0);
      if (result == 0) _exit(0);
      if (result > 0) waitpid(static_cast<pid_t>(result), nullptr, 0);
      return ErrnoOf(result);
    });
  }
  kill(target, SIGKILL);
  waitpid(target, nullptr, 0);
}

TEST_F(SeccompFilterTest, VfsToolsCannotCreateProcessesButCanCreateThreads) {
  const SeccompProgram program = Build(kVfsTool);
  ExpectErrno(program, EPERM, "fork", [] {
    const pid_t pid = fork();
    if (pid == 0) _exit(0);
    if (pid > 0) waitpid(pid, nullptr, 0);
    return ErrnoOf(pid);
  });
  ExpectErrno(program, EPERM, "vfork", [] {
    const pid_t pid = vfork();
    if (pid == 0) _exit(0);
    if (pid > 0) waitpid(pid, nullptr, 0);
    return ErrnoOf(pid);
  });
  // A zero size would be EINVAL without the filter; no process can result.
  ExpectErrno(program, ENOSYS, "clone3",
              [] { return ErrnoOf(syscall(SYS_clone3, nullptr, 0)); });
  ExpectErrno(program, EPERM, "posix_spawn", [] {
    pid_t pid;
    char program_name[] = "/bin/true";
    char* argv[] = {program_name, nullptr};
    const int error_number = posix_spawn(&pid, program_name, nullptr, nullptr, argv, environ);
    if (error_number == 0) waitpid(pid, nullptr, 0);
    return error_number;
  });
  ExpectErrno(program, 0, "std::thread", [] {
    int value = 0;
    std::thread thread([&value] { value = 42; });
    thread.join();
    return value == 42 ? 0 : 1;
  });
}

// vfs tools have no IPC namespace: the filter denies System V IPC and POSIX
// message queues instead (other processes of the same user own those).
TEST_F(SeccompFilterTest, VfsToolsCannotUseSystemVIpcOrMessageQueues) {
  const SeccompProgram vfs = Build(kVfsTool);
  ExpectErrno(vfs, EPERM, "shmget", [] { return ErrnoOf(syscall(SYS_shmget, IPC_PRIVATE, 4096, 0600)); });
  ExpectErrno(vfs, EPERM, "semget", [] { return ErrnoOf(syscall(SYS_semget, IPC_PRIVATE, 1, 0600)); });
  ExpectErrno(vfs, EPERM, "msgget", [] { return ErrnoOf(syscall(SYS_msgget, IPC_PRIVATE, 0600)); });
  ExpectErrno(vfs, EPERM, "mq_open",
              [] { return ErrnoOf(syscall(SYS_mq_open, "toolvfs-test", O_RDONLY, 0, nullptr)); });
  // Programs that create processes keep them, inside their IPC namespace.
  const SeccompProgram stdio = Build(kStdioToolWithNetwork);
  ExpectErrno(stdio, 0, "shmget", [] {
    const long id = syscall(SYS_shmget, IPC_PRIVATE, 4096, 0600);
    if (id < 0) return errno;
    syscall(SYS_shmctl, id, IPC_RMID, nullptr);
    return 0;
  });
}

TEST_F(SeccompFilterTest, StdioToolsMayCreateProcesses) {
  const SeccompProgram program = Build(kStdioToolWithNetwork);
  ExpectErrno(program, 0, "fork", [] {
    const pid_t pid = fork();
    if (pid == 0) _exit(7);
    if (pid < 0) return errno;
    int wait_status = 0;
    waitpid(pid, &wait_status, 0);
    return WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 7 ? 0 : 1;
  });
  ExpectErrno(program, ENOSYS, "clone3",
              [] { return ErrnoOf(syscall(SYS_clone3, nullptr, 0)); });
  ExpectErrno(program, 0, "std::thread", [] {
    std::thread thread([] {});
    thread.join();
    return 0;
  });
}

// execve stays allowed (the tool's own exec comes after the filter), and a
// real interpreter starts and runs threads under the vfs filter.
TEST_F(SeccompFilterTest, ProgramsStillStartUnderTheVfsFilter) {
  const SeccompProgram program = Build(kVfsTool);
  ExpectErrno(program, 0, "execve /bin/true", [] {
    char program_name[] = "/bin/true";
    char* argv[] = {program_name, nullptr};
    execve(program_name, argv, environ);
    return errno;
  });
  ExpectErrno(program, 0, "python3 with a thread, fork denied", [] {
    char program_name[] = "/usr/bin/python3";
    char flag[] = "-c";
    char script[] =
        "import os, socket, threading\n"
        "t = threading.Thread(target=lambda: None); t.start(); t.join()\n"
        "try:\n    os.fork(); raise SystemExit(3)\nexcept PermissionError: pass\n"
        "try:\n    socket.socket(); raise SystemExit(4)\nexcept PermissionError: pass\n";
    char* argv[] = {program_name, flag, script, nullptr};
    execve(program_name, argv, environ);
    return errno;
  });
}

#if defined(__x86_64__)
TEST_F(SeccompFilterTest, ForeignArchitecturesAreKilled) {
  const SeccompProgram program = Build(kStdioToolWithNetwork);
  // x32 ABI: the syscall number with bit 30 set.
  ForkedChildOutcome outcome =
      RunConfined(program, [] { return ErrnoOf(syscall(0x40000000 | SYS_getpid)); });
  EXPECT_EQ(outcome.Describe(), "killed by signal " + std::to_string(SIGSYS)) << "x32 getpid";
  // i386 ABI through int 0x80 (getpid is 20 there).
  auto i386_getpid = [] {
    long result;
    asm volatile("int $0x80" : "=a"(result) : "a"(20L) : "memory");
    return result > 0 ? 0 : 1;
  };
  // Without IA-32 syscall emulation (CONFIG_IA32_EMULATION off, or
  // ia32_emulation=0) the kernel answers int 0x80 with SIGSEGV before any
  // filter runs: there is no foreign ABI to refuse.
  ForkedChildOutcome unconfined = RunInForkedChild([&](int) { return i386_getpid(); });
  if (unconfined.signal == SIGSEGV) {
    GTEST_SKIP() << "this kernel has no IA-32 syscall emulation: int 0x80 faults without any filter";
  }
  outcome = RunConfined(program, i386_getpid);
  EXPECT_EQ(outcome.Describe(), "killed by signal " + std::to_string(SIGSYS)) << "int 0x80 getpid";
}
#endif

// ---------------------------------------------------------------------------
// The written program against libseccomp's, decision by decision: a classic
// BPF interpreter (the opcodes either program uses) runs both over every
// syscall number 0..600, x32 and foreign-architecture values, and a spread of
// arguments for every number. No deliberate difference: clone's flags and
// ioctl's request are compared in their lower 32 bits by both, the socket
// family in all 64 (garbage in the upper half is denied by both).

#if defined(__x86_64__)
constexpr uint32_t kNativeArchitecture = AUDIT_ARCH_X86_64;
constexpr uint32_t kForeignArchitectures[] = {AUDIT_ARCH_I386, AUDIT_ARCH_AARCH64, 0, 0xffffffff};
#elif defined(__aarch64__)
constexpr uint32_t kNativeArchitecture = AUDIT_ARCH_AARCH64;
constexpr uint32_t kForeignArchitectures[] = {AUDIT_ARCH_ARM, AUDIT_ARCH_X86_64, 0, 0xffffffff};
#endif

struct BpfRun {
  uint32_t action = 0;
  int instructions_run = 0;     // on the path taken, the return included
  bool read_arguments = false;  // loaded anything but nr and arch
  std::string error;            // non-empty: the program is malformed here
};

BpfRun RunBpf(const sock_fprog& program, const seccomp_data& input) {
  BpfRun run;
  uint32_t accumulator = 0;
  for (size_t position = 0; position < program.len; ++position) {
    const sock_filter& instruction = program.filter[position];
    ++run.instructions_run;
    const auto jump = [&](bool condition) {
      position += condition ? instruction.jt : instruction.jf;
    };
    switch (instruction.code) {
      case BPF_LD | BPF_W | BPF_ABS:
        if (instruction.k % 4 != 0 || instruction.k + 4 > sizeof input) {
          run.error = "load out of seccomp_data at " + std::to_string(position);
          return run;
        }
        std::memcpy(&accumulator, reinterpret_cast<const char*>(&input) + instruction.k, 4);
        if (instruction.k != offsetof(seccomp_data, nr) &&
            instruction.k != offsetof(seccomp_data, arch)) {
          run.read_arguments = true;
        }
        break;
      case BPF_ALU | BPF_AND | BPF_K: accumulator &= instruction.k; break;
      case BPF_JMP | BPF_JA: position += instruction.k; break;
      case BPF_JMP | BPF_JEQ | BPF_K: jump(accumulator == instruction.k); break;
      case BPF_JMP | BPF_JGT | BPF_K: jump(accumulator > instruction.k); break;
      case BPF_JMP | BPF_JGE | BPF_K: jump(accumulator >= instruction.k); break;
      case BPF_JMP | BPF_JSET | BPF_K: jump((accumulator & instruction.k) != 0); break;
      case BPF_RET | BPF_K: run.action = instruction.k; return run;
      default:
        run.error = "unexpected opcode " + std::to_string(instruction.code) + " at " +
                    std::to_string(position);
        return run;
    }
  }
  run.error = "ran past the end";
  return run;
}

// Argument values that tell the clone, socket and ioctl rules apart.
std::vector<uint64_t> ArgumentSpread() {
  std::vector<uint64_t> values = {0, ~uint64_t{0}, 0xffffffff, 0xffffffff00000000};
  for (int bit = 0; bit < 64; ++bit) values.push_back(uint64_t{1} << bit);
  // clone: what glibc passes for threads, fork and posix_spawn, with each
  // namespace flag added, and upper-half garbage.
  const uint64_t thread_flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD |
                                CLONE_SYSVSEM | CLONE_SETTLS | CLONE_PARENT_SETTID |
                                CLONE_CHILD_CLEARTID;
  const uint64_t process_flags[] = {thread_flags, SIGCHLD, CLONE_VM | CLONE_VFORK | SIGCHLD,
                                    CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID | SIGCHLD};
  const uint64_t namespace_flags[] = {CLONE_NEWNS,  CLONE_NEWUTS, CLONE_NEWIPC,   CLONE_NEWUSER,
                                      CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWCGROUP, CLONE_NEWTIME};
  for (const uint64_t flags : process_flags) {
    values.push_back(flags);
    values.push_back(flags | (uint64_t{1} << 32));
    values.push_back(flags | 0xffffffff00000000);
    for (const uint64_t namespace_flag : namespace_flags) values.push_back(flags | namespace_flag);
  }
  values.push_back(thread_flags | CLONE_NEWUSER | CLONE_NEWNET);
  // socket: every family, and a few with garbage in the upper half.
  for (uint64_t family = 0; family <= 50; ++family) values.push_back(family);
  for (const uint64_t family : {AF_UNIX, AF_INET, AF_INET6, AF_NETLINK, AF_PACKET}) {
    values.push_back(family | (uint64_t{1} << 32));
    values.push_back(family | 0xffffffff00000000);
  }
  // socketpair: every type, with SOCK_NONBLOCK and SOCK_CLOEXEC, and
  // upper-half garbage.
  for (uint64_t type = 0; type <= 16; ++type) {
    values.push_back(type | SOCK_CLOEXEC);
    values.push_back(type | SOCK_NONBLOCK | (uint64_t{1} << 32));
  }
  // memfd_create: the exec flags in every combination with the others.
  for (uint64_t flags = 0; flags < 32; ++flags) {
    values.push_back(flags);
    values.push_back(flags | 0xffffffff00000000);
  }
  // ioctl: the denied requests, with the upper half set, and neighbours.
  const uint64_t requests[] = {TIOCSTI, TIOCLINUX, TIOCSTI + 1, TIOCLINUX - 1, TCGETS, FIONREAD};
  for (const uint64_t request : requests) {
    values.push_back(request);
    values.push_back(request | (uint64_t{1} << 32));
    values.push_back(request | 0xffffffff00000000);
  }
  return values;
}

std::vector<uint32_t> SyscallNumbers() {
  std::vector<uint32_t> numbers;
  for (uint32_t number = 0; number <= 600; ++number) numbers.push_back(number);
  for (const uint32_t number : {1000u, 0x10000u, 0x3fffffffu, 0x7fffffffu, 0x80000000u,
                                0xfffffffeu, 0xffffffffu}) {
    numbers.push_back(number);
  }
  // x32 numbers on x86_64 (bit 30), the x32-only ones 512..547 included.
  for (const uint32_t number : {0u, 16u, 39u, 41u, 53u, 56u, 57u, 101u, 435u, 512u, 520u, 547u}) {
    numbers.push_back(0x40000000u | number);
  }
  return numbers;
}

std::string Describe(const seccomp_data& input) {
  char text[160];
  snprintf(text, sizeof text, "arch %#x nr %u (%#x) args[0] %#llx args[1] %#llx", input.arch,
           input.nr, input.nr, static_cast<unsigned long long>(input.args[0]),
           static_cast<unsigned long long>(input.args[1]));
  return text;
}

TEST(SeccompProgramTest, DecidesLikeLibseccompForEveryOptionCombination) {
#if !defined(__x86_64__) && !defined(__aarch64__)
  GTEST_SKIP() << "no architecture constants for this machine in the test";
#else
  const std::vector<uint64_t> spread = ArgumentSpread();
  std::vector<uint32_t> architectures = {kNativeArchitecture};
  architectures.insert(architectures.end(), std::begin(kForeignArchitectures),
                       std::end(kForeignArchitectures));
  for (const bool allow_process_creation : {false, true}) {
    for (const bool deny_network_sockets : {false, true}) {
      const SeccompOptions options{allow_process_creation, deny_network_sockets};
      SCOPED_TRACE(::testing::Message() << "allow_process_creation " << allow_process_creation
                                        << ", deny_network_sockets " << deny_network_sockets);
      Result<SeccompProgram> written = BuildSeccompProgram(options);
      Result<SeccompProgram> reference = BuildSeccompProgramWithLibseccomp(options);
      ASSERT_TRUE(written.ok()) << written.status().ToString();
      ASSERT_TRUE(reference.ok()) << reference.status().ToString();
      // The reference lists a name once per rule; the same names either way.
      const auto names = [](const std::vector<std::string>& list) {
        return std::set<std::string>(list.begin(), list.end());
      };
      EXPECT_EQ(names(written->unknown_syscalls()), names(reference->unknown_syscalls()));
      const sock_fprog written_program = written->program();
      const sock_fprog reference_program = reference->program();
      printf("[ program  ] allow_process_creation %d, deny_network_sockets %d: %zu instructions "
             "(libseccomp: %zu)\n",
             allow_process_creation, deny_network_sockets, written->instruction_count(),
             reference->instruction_count());
      EXPECT_LT(written->instruction_count(), reference->instruction_count());

      int mismatches = 0;
      size_t comparisons = 0;
      for (const uint32_t architecture : architectures) {
        for (const uint32_t number : SyscallNumbers()) {
          for (const uint64_t value : spread) {
            // The value in every argument, then in the first or second
            // alone, then in the second after AF_UNIX (socketpair's type).
            for (int placement = 0; placement < 4; ++placement) {
              seccomp_data input{};
              input.nr = static_cast<int>(number);
              input.arch = architecture;
              input.instruction_pointer = 0x400000;
              for (auto& argument : input.args) argument = placement == 0 ? value : 0;
              if (placement == 1) input.args[0] = value;
              if (placement == 2) input.args[1] = value;
              if (placement == 3) {
                input.args[0] = AF_UNIX;
                input.args[1] = value;
              }
              const BpfRun expected = RunBpf(reference_program, input);
              const BpfRun actual = RunBpf(written_program, input);
              ASSERT_EQ(expected.error, "") << "libseccomp's program, " << Describe(input);
              ASSERT_EQ(actual.error, "") << Describe(input);
              ++comparisons;
              if (actual.action != expected.action) {
                ADD_FAILURE() << Describe(input) << ": " << std::hex << actual.action
                              << ", libseccomp's program " << expected.action;
                ASSERT_LT(++mismatches, 20) << "stopping after 20 differences";
              }
            }
          }
        }
      }
      printf("[ program  ] %zu inputs, same decisions: %s\n", comparisons,
             mismatches == 0 ? "yes" : "NO");
    }
  }
#endif
}

// What keeps the install cheap: every syscall but the argument-checked ones
// gets a constant answer (the kernel caches allowed ones per number only if
// the path reads no argument), along a path of a few comparisons.
TEST(SeccompProgramTest, OnlyArgumentCheckedSyscallsReadArgumentsAndPathsAreShort) {
#if !defined(__x86_64__) && !defined(__aarch64__)
  GTEST_SKIP() << "no architecture constants for this machine in the test";
#else
  for (const bool allow_process_creation : {false, true}) {
    for (const bool deny_network_sockets : {false, true}) {
      // socket() without network: EACCES for every family, no argument read.
      std::set<uint32_t> argument_checked = {SYS_clone, SYS_socketpair, SYS_memfd_create,
                                             SYS_ioctl};
      if (!deny_network_sockets) argument_checked.insert(SYS_socket);
      Result<SeccompProgram> written =
          BuildSeccompProgram({allow_process_creation, deny_network_sockets});
      Result<SeccompProgram> reference =
          BuildSeccompProgramWithLibseccomp({allow_process_creation, deny_network_sockets});
      ASSERT_TRUE(written.ok()) << written.status().ToString();
      ASSERT_TRUE(reference.ok()) << reference.status().ToString();
      const sock_fprog program = written->program();
      int reference_summed_paths = 0;
      int longest_path = 0;
      int summed_paths = 0;
      constexpr uint32_t kNumbers = 512;  // beyond every syscall table but x32's
      for (uint32_t number = 0; number < kNumbers; ++number) {
        seccomp_data input{};
        input.nr = static_cast<int>(number);
        input.arch = kNativeArchitecture;
        const BpfRun run = RunBpf(program, input);
        ASSERT_EQ(run.error, "") << Describe(input);
        EXPECT_EQ(run.read_arguments, argument_checked.contains(number)) << Describe(input);
        if (!run.read_arguments) longest_path = std::max(longest_path, run.instructions_run);
        summed_paths += run.instructions_run;
        reference_summed_paths += RunBpf(reference->program(), input).instructions_run;
      }
      // Architecture load and check, number load, at most 8 comparisons
      // (ceil(log2) of ~70 ranges, plus one), return.
      EXPECT_LE(longest_path, 12);
      printf("[ program  ] allow_process_creation %d, deny_network_sockets %d: paths without "
             "arguments at most %d instructions; %.2f on average over numbers 0..%u "
             "(libseccomp's program: %.2f)\n",
             allow_process_creation, deny_network_sockets, longest_path,
             static_cast<double>(summed_paths) / kNumbers, kNumbers - 1,
             static_cast<double>(reference_summed_paths) / kNumbers);
      EXPECT_LT(summed_paths, reference_summed_paths);
    }
  }
#endif
}

// The program depends on SeccompOptions alone: profiles built for the same
// options share one, built once per process (issue 5: "once per tool
// configuration"), and other options get their own.
TEST(SeccompProgramTest, ProfilesShareOneProgramPerOptions) {
  auto build = [](bool allow_process_creation) {
    SandboxRequest request;
    request.access.kind = allow_process_creation ? ToolKind::kProcessChild : ToolKind::kVfs;
    request.access.program = "/bin/true";
    request.seccomp.allow_process_creation = allow_process_creation;
    request.hidden_for_testing = {"landlock", "namespaces"};
    Result<SandboxProfile> profile = SandboxProfile::Build(request, SandboxMode::kBestEffort);
    EXPECT_TRUE(profile.ok()) << profile.status().ToString();
    return std::move(profile).value();
  };
  const SandboxProfile first = build(false);
  const SandboxProfile second = build(false);
  const SandboxProfile other = build(true);
  ASSERT_TRUE(first.seccomp_program() && second.seccomp_program() && other.seccomp_program());
  EXPECT_EQ(first.seccomp_program()->filter, second.seccomp_program()->filter);
  EXPECT_NE(first.seccomp_program()->filter, other.seccomp_program()->filter);
}

}  // namespace
}  // namespace toolvfs
