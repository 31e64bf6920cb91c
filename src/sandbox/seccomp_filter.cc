#include "sandbox/seccomp_filter.h"

#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <string_view>

#include "core/io.h"
#include "core/unique_fd.h"

// The clone rules read the flags as the first argument, which holds on every
// architecture but s390 (where the stack comes first).
#if defined(__s390__) || defined(__s390x__)
#error "seccomp_filter.cc: clone's flags are not its first argument on s390"
#endif

namespace toolvfs {
namespace {

struct SeccompContextDeleter {
  void operator()(void* context) const { seccomp_release(context); }
};
using SeccompContext = std::unique_ptr<void, SeccompContextDeleter>;

// Denied with EPERM for every tool. Grouped by why.
constexpr std::string_view kAlwaysDeniedSyscalls[] = {
    // Other processes' memory: the host's included, when it runs as the same uid.
    "ptrace", "process_vm_readv", "process_vm_writev",
    // Large kernel attack surface no tool needs; io_uring also performs file
    // and network operations without passing through the syscalls below.
    "io_uring_setup", "io_uring_enter", "io_uring_register", "bpf", "perf_event_open",
    "userfaultfd", "keyctl", "add_key", "request_key",
    // Rearranging mounts or namespaces would undo the launcher's; a tool in a
    // user namespace holds CAP_SYS_ADMIN there. The new mount API (fsopen and
    // friends) is listed with mount so it is no way around it.
    "mount", "umount2", "pivot_root", "chroot", "fsopen", "fsconfig", "fsmount", "fspick",
    "move_mount", "open_tree", "mount_setattr", "unshare", "setns",
    // Only meaningful with host capabilities (a tool started as root without a
    // user namespace): file handles bypass path checks, the rest changes the
    // machine.
    "open_by_handle_at", "kexec_load", "kexec_file_load", "init_module", "finit_module",
    "delete_module", "reboot", "swapon", "swapoff", "acct", "quotactl", "syslog", "iopl",
    "ioperm", "uselib", "vhangup", "settimeofday", "clock_settime"};

// Denied with EPERM for tools that may not create processes (threads are
// created with clone(CLONE_THREAD | ...), handled apart).
constexpr std::string_view kProcessCreationSyscalls[] = {"fork", "vfork"};

// Denied with EPERM for tools that may not create processes: System V IPC
// and POSIX message queues, which reach objects of other processes of the
// same user. Programs that create processes get an IPC namespace instead
// (make, compilers and test runners may use them among themselves).
constexpr std::string_view kInterProcessSyscalls[] = {
    "shmget", "shmat", "shmdt", "shmctl", "semget", "semop", "semtimedop", "semctl", "msgget",
    "msgsnd", "msgrcv", "msgctl", "mq_open", "mq_unlink", "mq_timedsend", "mq_timedreceive",
    "mq_notify", "mq_getsetattr"};

// Namespace flags that turn clone() into unshare(). CLONE_NEWTIME is absent:
// for clone() that bit is part of the exit signal (clone3 and unshare only).
constexpr uint64_t kCloneNamespaceFlags[] = {CLONE_NEWNS,  CLONE_NEWUTS, CLONE_NEWIPC,
                                             CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET,
                                             CLONE_NEWCGROUP};

// Terminal injection into the controlling terminal, should a tool reach one.
constexpr uint64_t kDeniedIoctls[] = {TIOCSTI, TIOCLINUX};

// The rules being added, with the first failure kept so each call site stays
// one line.
class RuleWriter {
 public:
  explicit RuleWriter(void* context) : context_(context) {}

  // Denies `name` with `action` when every comparison holds (none: always).
  void Deny(std::string_view name, uint32_t action,
            std::initializer_list<scmp_arg_cmp> comparisons = {}) {
    if (!status_.ok()) return;
    const std::string syscall_name(name);
    const int number = seccomp_syscall_resolve_name(syscall_name.c_str());
    if (number < 0) {  // unknown to this libseccomp, or not a syscall on this arch
      unknown_syscalls_.push_back(syscall_name);
      return;
    }
    const int result =
        seccomp_rule_add_array(context_, action, number, static_cast<unsigned>(comparisons.size()),
                               comparisons.begin());
    if (result != 0) {
      status_ = InternalError("libseccomp rejected the rule for '" + syscall_name +
                              "': " + std::strerror(-result));
    }
  }

  // Denies `name` with `action` unless its argument `argument` is one of
  // `allowed` (sorted ascending). libseccomp takes one comparison per
  // argument per rule, so "not in the set" is written as the values below,
  // between and above the allowed ones. A value with garbage in its upper 32
  // bits is above the largest allowed one, so it is denied (fails closed).
  void DenyArgumentOutside(std::string_view name, uint32_t action, unsigned argument,
                           std::initializer_list<uint64_t> allowed) {
    uint64_t next_unlisted = 0;
    for (const uint64_t value : allowed) {
      for (uint64_t gap = next_unlisted; gap < value; ++gap) {
        Deny(name, action, {SCMP_CMP(argument, SCMP_CMP_EQ, gap)});
      }
      next_unlisted = value + 1;
    }
    Deny(name, action, {SCMP_CMP(argument, SCMP_CMP_GE, next_unlisted)});
  }

  const Status& status() const { return status_; }
  std::vector<std::string> TakeUnknownSyscalls() { return std::move(unknown_syscalls_); }

 private:
  void* context_;
  Status status_;
  std::vector<std::string> unknown_syscalls_;
};

void AddRules(const SeccompOptions& options, RuleWriter& rules) {
  const uint32_t deny = SCMP_ACT_ERRNO(EPERM);
  for (const std::string_view name : kAlwaysDeniedSyscalls) rules.Deny(name, deny);

  // clone3 passes its flags in a struct seccomp cannot read. ENOSYS makes
  // glibc (2.34+) fall back to clone, whose flags the rules below check.
  rules.Deny("clone3", SCMP_ACT_ERRNO(ENOSYS));
  for (const uint64_t flag : kCloneNamespaceFlags) {
    rules.Deny("clone", deny, {SCMP_A0(SCMP_CMP_MASKED_EQ, flag, flag)});
  }
  if (!options.allow_process_creation) {
    for (const std::string_view name : kProcessCreationSyscalls) rules.Deny(name, deny);
    for (const std::string_view name : kInterProcessSyscalls) rules.Deny(name, deny);
    // The kernel makes CLONE_THREAD imply CLONE_SIGHAND and CLONE_VM, so
    // checking that one flag admits exactly the threads of this process.
    rules.Deny("clone", deny, {SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0)});
  }

  for (const uint64_t request : kDeniedIoctls) {
    // The request is an unsigned int: the kernel ignores the upper 32 bits.
    rules.Deny("ioctl", deny, {SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffU, request)});
  }

  // EACCES, as a network policy refusal reads ("Permission denied").
  const uint32_t deny_socket = SCMP_ACT_ERRNO(EACCES);
  for (const std::string_view name : {"socket", "socketpair"}) {
    if (options.deny_network_sockets) {
      rules.DenyArgumentOutside(name, deny_socket, 0, {AF_UNIX});
    } else {
      rules.DenyArgumentOutside(name, deny_socket, 0, {AF_UNIX, AF_INET, AF_INET6, AF_NETLINK});
    }
  }
}

// Writes the compiled program to a memfd and reads it back: libseccomp 2.5
// only exports to a file descriptor.
Result<std::vector<sock_filter>> ExportProgram(void* context) {
  constexpr std::string_view kWhat = "Cannot export the seccomp program";
  UniqueFd memory_file(memfd_create("toolvfs-seccomp", MFD_CLOEXEC));
  if (!memory_file) return ErrnoToStatus(errno, kWhat);
  if (const int result = seccomp_export_bpf(context, memory_file.get()); result != 0) {
    return ErrnoToStatus(-result, kWhat);
  }
  if (lseek(memory_file.get(), 0, SEEK_SET) != 0) return ErrnoToStatus(errno, kWhat);
  TOOLVFS_ASSIGN_OR_RETURN(std::string bytes,
                           ReadToEnd(memory_file.get(), BPF_MAXINSNS * sizeof(sock_filter), kWhat));
  if (bytes.empty() || bytes.size() % sizeof(sock_filter) != 0) {
    return InternalError(std::string(kWhat) + ": libseccomp wrote " +
                         std::to_string(bytes.size()) + " bytes, not whole instructions");
  }
  std::vector<sock_filter> instructions(bytes.size() / sizeof(sock_filter));
  std::memcpy(instructions.data(), bytes.data(), bytes.size());
  return instructions;
}

}  // namespace

Result<SeccompProgram> BuildSeccompProgram(const SeccompOptions& options) {
  SeccompContext context(seccomp_init(SCMP_ACT_ALLOW));
  if (context == nullptr) return InternalError("seccomp_init failed");
  // Any other ABI (i386 through int 0x80, x32) kills: rules for native
  // syscall numbers say nothing about it.
  if (const int result =
          seccomp_attr_set(context.get(), SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
      result != 0) {
    return InternalError(std::string("libseccomp cannot kill on a foreign architecture: ") +
                         std::strerror(-result));
  }
  // A binary search over syscall numbers instead of a linear scan; an older
  // libseccomp without it builds a correct, slightly slower program.
  (void)seccomp_attr_set(context.get(), SCMP_FLTATR_CTL_OPTIMIZE, 2);

  RuleWriter rules(context.get());
  AddRules(options, rules);
  TOOLVFS_RETURN_IF_ERROR(rules.status());
  TOOLVFS_ASSIGN_OR_RETURN(std::vector<sock_filter> instructions, ExportProgram(context.get()));
  return SeccompProgram(std::move(instructions), rules.TakeUnknownSyscalls());
}

int ApplySeccompProgram(const sock_fprog& program) noexcept {
  if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &program) == 0) return 0;
  if (errno != ENOSYS) return errno;
  // Kernels before 3.17 have the filter mode only through prctl.
  if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program, 0, 0) == 0) return 0;
  return errno;
}

}  // namespace toolvfs
