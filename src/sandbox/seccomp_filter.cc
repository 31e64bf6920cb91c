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

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <span>
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

// Socket families socket() allows when the policy allows network, sorted
// ascending. Never AF_UNIX: a new unix socket can connect() or sendto() any
// path-named socket the host's user reaches (a tmux or daemon socket that
// runs commands outside the sandbox), and Landlock up to ABI 7 does not
// govern either on socket files.
constexpr uint64_t kNetworkSocketFamilies[] = {AF_INET, AF_INET6, AF_NETLINK};

std::span<const uint64_t> AllowedSocketFamilies(const SeccompOptions& options) {
  if (options.deny_network_sockets) return {};
  return kNetworkSocketFamilies;
}

// socketpair() stays allowed for AF_UNIX (libuv, Python's multiprocessing
// and asyncio talk to their children over pairs) with the types whose
// connected ends reach nothing else: a stream or seqpacket end answers
// connect() with EISCONN and ignores or refuses sendto()'s address. A
// datagram end does not: connect() re-targets it and sendto() names any
// path-named datagram socket (/dev/log, a daemon's), so SOCK_DGRAM pairs
// are refused. The type is compared in its SOCK_TYPE_MASK bits, below
// SOCK_NONBLOCK and SOCK_CLOEXEC; sorted ascending.
constexpr uint64_t kSocketTypeMask = 0xf;
constexpr uint64_t kSocketPairTypes[] = {SOCK_STREAM, SOCK_SEQPACKET};
constexpr uint64_t kSocketPairFamilies[] = {AF_UNIX};

// memfd_create's flags that decide whether the file may ever be executed
// (Linux 6.3; older uapi headers lack them). A memfd is governed by no
// Landlock rule, so an executable one would run a program the policy never
// allowed (execveat(fd, "", AT_EMPTY_PATH), or execve of /proc/self/fd/N).
#ifndef MFD_NOEXEC_SEAL
#define MFD_NOEXEC_SEAL 0x0008U
#endif
#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U
#endif
constexpr uint64_t kMemfdExecutableFlags = MFD_EXEC | MFD_NOEXEC_SEAL;
// Refused unless exactly MFD_NOEXEC_SEAL of the two is set, with EACCES:
// the kernel's own answer when vm.memfd_noexec = 2 refuses an executable
// memfd. On kernels before 6.3, which reject MFD_NOEXEC_SEAL with EINVAL,
// every memfd_create therefore fails (EINVAL or EACCES): fails closed.
constexpr uint64_t kMemfdRefusedFlagValues[] = {0, MFD_EXEC, MFD_EXEC | MFD_NOEXEC_SEAL};

// ---------------------------------------------------------------------------
// The reference: the rules compiled by libseccomp
// (BuildSeccompProgramWithLibseccomp), which the tests compare the written
// program against.

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
                           std::span<const uint64_t> allowed) {
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
  if (const std::span<const uint64_t> families = AllowedSocketFamilies(options); families.empty()) {
    rules.Deny("socket", deny_socket);
  } else {
    rules.DenyArgumentOutside("socket", deny_socket, 0, families);
  }
  rules.DenyArgumentOutside("socketpair", deny_socket, 0, kSocketPairFamilies);
  for (uint64_t type = 0; type <= kSocketTypeMask; ++type) {
    if (std::find(std::begin(kSocketPairTypes), std::end(kSocketPairTypes), type) !=
        std::end(kSocketPairTypes)) {
      continue;
    }
    rules.Deny("socketpair", deny_socket, {SCMP_A1(SCMP_CMP_MASKED_EQ, kSocketTypeMask, type)});
  }

  // The flags are an unsigned int: the kernel ignores the upper 32 bits.
  for (const uint64_t flags : kMemfdRefusedFlagValues) {
    rules.Deny("memfd_create", SCMP_ACT_ERRNO(EACCES),
               {SCMP_A1(SCMP_CMP_MASKED_EQ, kMemfdExecutableFlags, flags)});
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


// ---------------------------------------------------------------------------
// The hand-written program (what BuildSeccompProgram returns).
//
// Why not libseccomp's program: every start installs the filter, and the
// install cost grows with the program. The kernel converts the classic
// program to eBPF and JIT-compiles it (~0.25 µs per instruction here), then
// runs it for each of the ~460 syscall numbers of the architecture to fill
// its per-syscall allow cache (seccomp_cache_prepare; ~1.4 µs per
// instruction on the average path), so the path an allowed syscall takes
// counts too. libseccomp 2.5 emits one jeq per denied syscall
// and one masked comparison per clone flag: 166 instructions for the vfs row,
// 14.6 of them run per syscall number on average, ~61 µs per install against
// ~17 µs for a 1-instruction filter. The program below tests ranges of
// consecutive syscall numbers with the same verdict in a binary search
// (SearchPlan) and the clone flags with two mask tests: 73 instructions, 9.1
// run per number, ~44 µs per install (the install times are medians of
// 1,800 installs each, interleaved with libseccomp's program, taken at 65
// against 137 instructions, before the socketpair and memfd_create checks).
// BuildSeccompProgramWithLibseccomp compiles the same rules with libseccomp;
// tests/sandbox/seccomp_filter_test.cc runs both programs over every syscall
// number and a spread of arguments and requires identical answers.

// What the filter does with one syscall number.
enum class Verdict {
  kAllow,
  kDeny,             // EPERM
  kDenyWithEnosys,   // clone3: libc falls back to clone
  kDenyWithEacces,   // socket when the policy allows no network
  kKill,             // x32 numbers on x86_64
  kCheckClone,       // namespace flags (and CLONE_THREAD for vfs tools)
  kCheckSocket,      // socket family
  kCheckSocketPair,  // socketpair family and type
  kCheckMemfdCreate, // MFD_EXEC, MFD_NOEXEC_SEAL
  kCheckIoctl,       // TIOCSTI, TIOCLINUX
};
constexpr size_t kVerdictCount = static_cast<size_t>(Verdict::kCheckIoctl) + 1;

// AddRules' rules as data: the verdict of each syscall number they name.
struct SyscallVerdicts {
  std::map<uint32_t, Verdict> by_number;
  std::vector<std::string> unknown_syscalls;

  void Set(std::string_view name, Verdict verdict) {
    const std::string syscall_name(name);
    const int number = seccomp_syscall_resolve_name(syscall_name.c_str());
    if (number < 0) {  // unknown to this libseccomp, or not a syscall on this arch
      unknown_syscalls.push_back(syscall_name);
      return;
    }
    by_number.emplace(static_cast<uint32_t>(number), verdict);
  }
};

// Mirrors AddRules: keep the two in step (the differential test catches a
// difference).
SyscallVerdicts DecideSyscalls(const SeccompOptions& options) {
  SyscallVerdicts verdicts;
  for (const std::string_view name : kAlwaysDeniedSyscalls) verdicts.Set(name, Verdict::kDeny);
  verdicts.Set("clone3", Verdict::kDenyWithEnosys);
  verdicts.Set("clone", Verdict::kCheckClone);
  if (!options.allow_process_creation) {
    for (const std::string_view name : kProcessCreationSyscalls) verdicts.Set(name, Verdict::kDeny);
    for (const std::string_view name : kInterProcessSyscalls) verdicts.Set(name, Verdict::kDeny);
  }
  verdicts.Set("ioctl", Verdict::kCheckIoctl);
  verdicts.Set("socket", AllowedSocketFamilies(options).empty() ? Verdict::kDenyWithEacces
                                                                 : Verdict::kCheckSocket);
  verdicts.Set("socketpair", Verdict::kCheckSocketPair);
  verdicts.Set("memfd_create", Verdict::kCheckMemfdCreate);
  return verdicts;
}

// Syscall numbers from `first` up to the next range's first (or 2^32 - 1)
// share `verdict`.
struct NumberRange {
  uint32_t first;
  Verdict verdict;
};

// The verdicts as ranges covering every 32-bit syscall number, adjacent
// ranges with the same verdict merged.
Result<std::vector<NumberRange>> ToRanges(const std::map<uint32_t, Verdict>& by_number) {
  std::vector<NumberRange> ranges;
  const auto append = [&ranges](uint64_t first, Verdict verdict) {
    if (ranges.empty() || ranges.back().verdict != verdict) {
      ranges.push_back({static_cast<uint32_t>(first), verdict});
    }
  };
  uint64_t next_number = 0;
  for (const auto& [number, verdict] : by_number) {
    if (number > next_number) append(next_number, Verdict::kAllow);
    append(number, verdict);
    next_number = uint64_t{number} + 1;
  }
#if defined(__x86_64__)
  // x32 calls arrive with AUDIT_ARCH_X86_64 and bit 30 set in the number:
  // kill them, as libseccomp does, except -1 (the number a tracer uses to
  // skip a syscall), which libseccomp lets through to the rules.
  constexpr uint64_t kX32SyscallBit = 0x40000000;
  if (next_number > kX32SyscallBit) {
    return InternalError("seccomp: a native syscall number has the x32 bit set");
  }
  if (next_number < kX32SyscallBit) append(next_number, Verdict::kAllow);
  append(kX32SyscallBit, Verdict::kKill);
  append(0xffffffff, Verdict::kAllow);
#else
  if (next_number <= 0xffffffff) append(next_number, Verdict::kAllow);
#endif
  return ranges;
}

// A classic BPF program being written, with jumps to labels that Finish()
// turns into offsets. Classic BPF jumps only forward, conditional ones by at
// most 255 instructions; Finish() fails on anything else (a bug here).
class BpfWriter {
 public:
  using Label = size_t;

  Label NewLabel() {
    label_positions_.push_back(kUnbound);
    return label_positions_.size() - 1;
  }
  // The next instruction written is `label`'s target.
  void Bind(Label label) { label_positions_[label] = instructions_.size(); }

  void LoadWord(uint32_t offset) {
    instructions_.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offset));
  }
  void Return(uint32_t action) { instructions_.push_back(BPF_STMT(BPF_RET | BPF_K, action)); }
  void And(uint32_t mask) { instructions_.push_back(BPF_STMT(BPF_ALU | BPF_AND | BPF_K, mask)); }
  // To `if_true` when `A <condition> value` holds (condition: BPF_JEQ,
  // BPF_JGE, BPF_JGT or BPF_JSET), else to `if_false`.
  void JumpIf(uint16_t condition, uint32_t value, Label if_true, Label if_false) {
    jumps_.push_back({instructions_.size(), if_true, if_false});
    instructions_.push_back(BPF_JUMP(BPF_JMP | condition | BPF_K, value, 0, 0));
  }
  void JumpAlways(Label target) {
    jumps_.push_back({instructions_.size(), target, target});
    instructions_.push_back(BPF_STMT(BPF_JMP | BPF_JA, 0));
  }

  Result<std::vector<sock_filter>> Finish() && {
    for (const PendingJump& jump : jumps_) {
      TOOLVFS_ASSIGN_OR_RETURN(const uint32_t if_true, OffsetTo(jump.if_true, jump.at));
      TOOLVFS_ASSIGN_OR_RETURN(const uint32_t if_false, OffsetTo(jump.if_false, jump.at));
      sock_filter& instruction = instructions_[jump.at];
      if (BPF_OP(instruction.code) == BPF_JA) {
        instruction.k = if_true;
      } else if (if_true > 255 || if_false > 255) {
        return InternalError("seccomp: a conditional jump is longer than 255 instructions");
      } else {
        instruction.jt = static_cast<uint8_t>(if_true);
        instruction.jf = static_cast<uint8_t>(if_false);
      }
    }
    if (instructions_.size() > BPF_MAXINSNS) {
      return InternalError("seccomp: the program has more than BPF_MAXINSNS instructions");
    }
    return std::move(instructions_);
  }

 private:
  static constexpr size_t kUnbound = ~size_t{0};
  struct PendingJump {
    size_t at;
    Label if_true;
    Label if_false;
  };

  Result<uint32_t> OffsetTo(Label label, size_t from) const {
    const size_t target = label_positions_[label];
    if (target == kUnbound || target <= from) {
      return InternalError("seccomp: a jump to an unbound or earlier instruction");
    }
    return static_cast<uint32_t>(target - from - 1);
  }

  std::vector<sock_filter> instructions_;
  std::vector<size_t> label_positions_;
  std::vector<PendingJump> jumps_;
};

// Offsets for BPF_LD | BPF_W | BPF_ABS into struct seccomp_data. Arguments
// are 64 bits whatever the ABI; a load reads one 32-bit half.
constexpr uint32_t kNumberOffset = offsetof(seccomp_data, nr);
constexpr uint32_t kArchitectureOffset = offsetof(seccomp_data, arch);
constexpr uint32_t ArgumentLowHalf(unsigned index) {
  return static_cast<uint32_t>(offsetof(seccomp_data, args) + index * sizeof(uint64_t) +
                               (std::endian::native == std::endian::little ? 0 : 4));
}
constexpr uint32_t ArgumentHighHalf(unsigned index) {
  return static_cast<uint32_t>(offsetof(seccomp_data, args) + index * sizeof(uint64_t) +
                               (std::endian::native == std::endian::little ? 4 : 0));
}

constexpr uint32_t CloneNamespaceMask() {
  uint64_t mask = 0;
  for (const uint64_t flag : kCloneNamespaceFlags) mask |= flag;
  return static_cast<uint32_t>(mask);
}
static_assert(CloneNamespaceMask() != 0 && (CloneNamespaceMask() & CLONE_THREAD) == 0);

// The shape of the search over the ranges. Each comparison is one jge that
// halves the ranges left; a few single numbers of another verdict inside a
// range of one verdict (ptrace between allowed numbers, say) can instead be
// tested one jeq each, "chains" of at most kMaxChain. Of the searches that
// take at most ceil(log2(ranges)) + 1 comparisons for any number (a
// balanced tree takes ceil(log2(ranges))), the plan is the one that costs
// the kernel least at install, as measured here: an instruction costs ~0.26
// µs to convert and JIT-compile, and a comparison on a number's path ~3 ns
// for each number below kSyscallTableBound (the kernel runs the filter once
// per number of its syscall table to fill the allow cache; afterwards
// allowed numbers skip the filter, so no path is hot at run time). So wide
// ranges (the 101 allowed numbers from x86_64's membarrier to
// pidfd_send_signal, most of them unused) get short paths, and isolated
// denials cost one jeq instead of two jge. vfs row: 47 comparison
// instructions where a balanced tree over the ranges takes 65; 5.1
// comparisons per number on average instead of 6.0.
//
// Dynamic programming over (first range, end of ranges, comparisons left)
// with Knuth's bound on the split: ~70 ranges, ~20,000 steps, ~0.08 ms once
// per tool configuration (libseccomp took ~0.14 ms to build its program).
class SearchPlan {
 public:
  // x86_64's and the generic (aarch64) syscall tables end below 512, where
  // x32's numbers start; numbers above do not reach the kernel's cache.
  static constexpr uint64_t kSyscallTableBound = 512;
  // More ranges than the rules can make (~80 syscalls): splits fit 16 bits.
  static constexpr size_t kMaxRanges = 4096;
  // Single numbers one chain tests at most.
  static constexpr size_t kMaxChain = 3;
  // One instruction in the cost unit, a comparison for one number: ~0.26 µs
  // against ~3 ns (installs of 83-instruction programs with 2-instruction
  // and ~9-instruction paths, 2 vCPUs of an AMD EPYC, Linux 6.18).
  static constexpr uint32_t kInstructionCost = 85;

  // `ranges`: at least one, at most kMaxRanges; must outlive the plan.
  explicit SearchPlan(const std::vector<NumberRange>& ranges)
      : ranges_(ranges), count_(ranges.size()),
        depth_(static_cast<int>(std::bit_width(count_ - 1)) + 1) {
    std::vector<uint32_t> weight_before(count_ + 1, 0);  // numbers of ranges [0, i)
    std::vector<bool> single(count_, false);             // range i is one number
    for (size_t index = 0; index < count_; ++index) {
      const uint64_t end = index + 1 < count_ ? ranges[index + 1].first : uint64_t{1} << 32;
      single[index] = end - ranges[index].first == 1;
      weight_before[index + 1] =
          weight_before[index] +
          static_cast<uint32_t>(std::min(end, kSyscallTableBound) -
                                std::min<uint64_t>(ranges[index].first, kSyscallTableBound));
    }
    const auto weight = [&](size_t index) {
      return weight_before[index + 1] - weight_before[index];
    };
    // The costs within depth - 1 and depth comparisons; plans for every depth.
    // Small tables: a few tens of kilobytes, no fresh pages to fault in.
    std::vector<uint32_t> shallower((count_ + 1) * (count_ + 1), kUnreachable);
    std::vector<uint32_t> cost(shallower.size(), kUnreachable);
    split_.assign(static_cast<size_t>(depth_ + 1) * shallower.size(), kNoSplit);
    for (int depth = 0; depth <= depth_; ++depth) {
      std::swap(shallower, cost);
      // Longer stretches fit neither a split nor a chain within depth
      // comparisons: those entries stay unreachable, as they were at every
      // shallower depth.
      const size_t chain_limit = std::min<size_t>(static_cast<size_t>(depth), kMaxChain);
      const size_t longest =
          std::min(count_, std::max(size_t{1} << depth, 2 * chain_limit + 1));
      for (size_t length = 1; length <= longest; ++length) {
        for (size_t begin = 0; begin + length <= count_; ++begin) {
          const size_t end = begin + length;
          uint32_t& best_cost = cost[Pair(begin, end)];
          uint16_t& best_split = split_[Index(depth, begin, end)];
          best_cost = length == 1 ? 0 : kUnreachable;
          best_split = kNoSplit;
          if (length == 1) continue;
          // A chain: ranges begin, begin + 2, ... share a verdict, the ones
          // between are single numbers, tested in order.
          const size_t chain = length / 2;
          if (length % 2 == 1 && chain <= chain_limit) {
            bool fits = true;
            uint32_t background = 0;
            uint32_t comparisons = 0;
            for (size_t step = 0; step < chain && fits; ++step) {
              const size_t exception = begin + 2 * step + 1;
              fits = single[exception] &&
                     ranges[exception + 1].verdict == ranges[begin].verdict;
              background += weight(exception - 1);
              comparisons += weight(exception) * static_cast<uint32_t>(step + 1);
            }
            background += weight(end - 1);
            if (fits) {
              best_cost = kInstructionCost * static_cast<uint32_t>(chain) +
                          background * static_cast<uint32_t>(chain) + comparisons;
              best_split = kChain;
            }
          }
          if (depth == 0) continue;
          // A split: either part must fit in depth - 1 comparisons.
          const size_t half = size_t{1} << (depth - 1);
          const size_t first_fitting = std::max(begin + 1, end > half ? end - half : 0);
          const size_t last_fitting = std::min(end - 1, begin + half);
          // Knuth's bound: the best split moves right as either end does,
          // so only splits between those of [begin, end - 1) and
          // [begin + 1, end) need trying (n² instead of n³ steps: 19,000
          // instead of 150,000 for the vfs row; with chains the bound is a
          // heuristic, within 1% of trying every split here). Every fitting
          // split is tried should the window hold none.
          size_t first = first_fitting;
          size_t last = last_fitting;
          if (length > 2) {
            const uint16_t left_split = split_[Index(depth, begin, end - 1)];
            const uint16_t right_split = split_[Index(depth, begin + 1, end)];
            if (left_split < kChain) first = std::max<size_t>(first, left_split);
            if (right_split < kChain) last = std::min<size_t>(last, right_split);
          }
          const uint32_t numbers = weight_before[end] - weight_before[begin];
          // The best split in [from, to] (the last of equals, even over a
          // chain); false if none fits.
          const auto try_splits = [&](size_t from, size_t to) {
            bool found = false;
            for (size_t split = from; split <= to; ++split) {
              const uint32_t below = shallower[Pair(begin, split)];
              const uint32_t above = shallower[Pair(split, end)];
              if (below == kUnreachable || above == kUnreachable) continue;
              found = true;
              const uint32_t total = below + above + numbers + kInstructionCost;
              if (total <= best_cost) {
                best_cost = total;
                best_split = static_cast<uint16_t>(split);
              }
            }
            return found;
          };
          if (!try_splits(first, last)) try_splits(first_fitting, last_fitting);
        }
      }
    }
  }

  // Comparisons the whole search may take: ceil(log2(ranges)) + 1.
  int depth() const { return depth_; }
  // How the search over ranges [begin, end) (two or more) within `depth`
  // comparisons goes on: the first range of the upper part of a split, or
  // nothing for a chain (the ranges at begin + 1, begin + 3, ... are the
  // single numbers to test).
  std::optional<size_t> Split(size_t begin, size_t end, int depth) const {
    const uint16_t split = split_[Index(depth, begin, end)];
    if (split == kChain) return std::nullopt;
    return split;
  }

  const std::vector<NumberRange>& ranges() const { return ranges_; }

 private:
  static constexpr uint32_t kUnreachable = ~uint32_t{0};
  static constexpr uint16_t kChain = 0xfffe;
  static constexpr uint16_t kNoSplit = 0xffff;
  static_assert(kMaxRanges < kChain);

  size_t Pair(size_t begin, size_t end) const { return begin * (count_ + 1) + end; }
  size_t Index(int depth, size_t begin, size_t end) const {
    return static_cast<size_t>(depth) * (count_ + 1) * (count_ + 1) + Pair(begin, end);
  }

  const std::vector<NumberRange>& ranges_;
  size_t count_;
  int depth_;
  std::vector<uint16_t> split_;
};

// Writes the program for `options`. Every path starts with the architecture
// check and the syscall number; only clone, socket, socketpair, memfd_create
// and ioctl load an argument, so every other number's verdict is constant and lands in the
// kernel's allow cache.
class ProgramWriter {
 public:
  explicit ProgramWriter(const SeccompOptions& options) : options_(options) {}

  Result<std::vector<sock_filter>> Write(const std::vector<NumberRange>& ranges) && {
    bpf_.LoadWord(kArchitectureOffset);
    const BpfWriter::Label native = bpf_.NewLabel();
    bpf_.JumpIf(BPF_JEQ, seccomp_arch_native(), native, ReturnLabel(SECCOMP_RET_KILL_PROCESS));
    bpf_.Bind(native);
    bpf_.LoadWord(kNumberOffset);
    const SearchPlan plan(ranges);
    WriteSearch(plan, 0, ranges.size(), plan.depth());
    WriteArgumentChecks();
    for (const auto& [action, label] : return_labels_) {
      bpf_.Bind(label);
      bpf_.Return(action);
    }
    return std::move(bpf_).Finish();
  }

 private:
  // The search over ranges [begin, end) of the plan (at least one) with the
  // number in A, within `depth` comparisons. Leaves are no instruction: the
  // last comparison jumps straight to the verdict's code.
  void WriteSearch(const SearchPlan& plan, size_t begin, size_t end, int depth) {
    const std::vector<NumberRange>& ranges = plan.ranges();
    if (end - begin == 1) {
      bpf_.JumpAlways(VerdictLabel(ranges[begin].verdict));
      return;
    }
    const std::optional<size_t> split = plan.Split(begin, end, depth);
    if (!split) {
      // A chain: one jeq per single number, then the common verdict.
      for (size_t exception = begin + 1; exception < end; exception += 2) {
        const bool last = exception + 2 >= end;
        const BpfWriter::Label next =
            last ? VerdictLabel(ranges[begin].verdict) : bpf_.NewLabel();
        bpf_.JumpIf(BPF_JEQ, ranges[exception].first, VerdictLabel(ranges[exception].verdict),
                    next);
        if (!last) bpf_.Bind(next);
      }
      return;
    }
    // The part written right after the jge is its fall-through target: the
    // kernel's eBPF has no two-target jump, so a jge whose targets are both
    // elsewhere costs an extra jump.
    const auto label_of = [&](size_t from, size_t to) {
      return to - from == 1 ? VerdictLabel(ranges[from].verdict) : bpf_.NewLabel();
    };
    const BpfWriter::Label below = label_of(begin, *split);
    const BpfWriter::Label above = label_of(*split, end);
    bpf_.JumpIf(BPF_JGE, ranges[*split].first, above, below);
    if (*split - begin > 1) {
      bpf_.Bind(below);
      WriteSearch(plan, begin, *split, depth - 1);
    }
    if (end - *split > 1) {
      bpf_.Bind(above);
      WriteSearch(plan, *split, end, depth - 1);
    }
  }

  // The code of the verdicts that read arguments, for those the search uses.
  void WriteArgumentChecks() {
    const BpfWriter::Label allow = ReturnLabel(SECCOMP_RET_ALLOW);
    const BpfWriter::Label deny = ReturnLabel(SECCOMP_RET_ERRNO | EPERM);
    if (const std::optional<BpfWriter::Label> clone = UsedLabel(Verdict::kCheckClone)) {
      bpf_.Bind(*clone);
      // Only the lower half of the flags, as in libseccomp's program (its
      // masked comparisons mask the upper half to zero): clone() itself
      // keeps only the lower 32 bits of its flags (lower_32_bits in
      // kernel/fork.c).
      bpf_.LoadWord(ArgumentLowHalf(0));
      if (options_.allow_process_creation) {
        bpf_.JumpIf(BPF_JSET, CloneNamespaceMask(), deny, allow);
      } else {
        const BpfWriter::Label no_namespace = bpf_.NewLabel();
        bpf_.JumpIf(BPF_JSET, CloneNamespaceMask(), deny, no_namespace);
        bpf_.Bind(no_namespace);
        // The kernel makes CLONE_THREAD imply CLONE_SIGHAND and CLONE_VM,
        // so this one flag admits exactly the threads of this process.
        bpf_.JumpIf(BPF_JSET, CLONE_THREAD, allow, deny);
      }
    }
    if (const std::optional<BpfWriter::Label> socket = UsedLabel(Verdict::kCheckSocket)) {
      bpf_.Bind(*socket);
      WriteFamilyCheck(AllowedSocketFamilies(options_), allow,
                       ReturnLabel(SECCOMP_RET_ERRNO | EACCES));
    }
    if (const std::optional<BpfWriter::Label> pair = UsedLabel(Verdict::kCheckSocketPair)) {
      bpf_.Bind(*pair);
      const BpfWriter::Label deny_with_eacces = ReturnLabel(SECCOMP_RET_ERRNO | EACCES);
      const BpfWriter::Label check_type = bpf_.NewLabel();
      WriteFamilyCheck(kSocketPairFamilies, check_type, deny_with_eacces);
      bpf_.Bind(check_type);
      // The type is an int; SOCK_NONBLOCK and SOCK_CLOEXEC sit above the mask.
      bpf_.LoadWord(ArgumentLowHalf(1));
      bpf_.And(static_cast<uint32_t>(kSocketTypeMask));
      WriteMatchAny(kSocketPairTypes, allow, deny_with_eacces);
    }
    if (const std::optional<BpfWriter::Label> memfd = UsedLabel(Verdict::kCheckMemfdCreate)) {
      bpf_.Bind(*memfd);
      const BpfWriter::Label deny_with_eacces = ReturnLabel(SECCOMP_RET_ERRNO | EACCES);
      // The flags are an unsigned int: the kernel ignores the upper half.
      bpf_.LoadWord(ArgumentLowHalf(1));
      bpf_.And(static_cast<uint32_t>(kMemfdExecutableFlags));
      bpf_.JumpIf(BPF_JEQ, MFD_NOEXEC_SEAL, allow, deny_with_eacces);
    }
    if (const std::optional<BpfWriter::Label> ioctl = UsedLabel(Verdict::kCheckIoctl)) {
      bpf_.Bind(*ioctl);
      // The request is an unsigned int: the kernel ignores the upper half.
      bpf_.LoadWord(ArgumentLowHalf(1));
      WriteMatchAny(kDeniedIoctls, deny, allow);
    }
  }

  // To `if_allowed` when the first argument, all 64 bits, is one of
  // `families` (at least one), else to `if_denied`. The kernel reads the
  // family as an int, so a family with garbage in the upper half is not one
  // of the allowed values and is denied (fails closed), as in libseccomp's
  // program.
  void WriteFamilyCheck(std::span<const uint64_t> families, BpfWriter::Label if_allowed,
                        BpfWriter::Label if_denied) {
    const BpfWriter::Label lower_half = bpf_.NewLabel();
    bpf_.LoadWord(ArgumentHighHalf(0));
    bpf_.JumpIf(BPF_JEQ, 0, lower_half, if_denied);
    bpf_.Bind(lower_half);
    bpf_.LoadWord(ArgumentLowHalf(0));
    WriteMatchAny(families, if_allowed, if_denied);
  }

  // To `if_any` when A equals one of `values` (each below 2^32, at least
  // one), else to `if_none`.
  void WriteMatchAny(std::span<const uint64_t> values, BpfWriter::Label if_any,
                     BpfWriter::Label if_none) {
    for (size_t index = 0; index < values.size(); ++index) {
      const bool last = index + 1 == values.size();
      const BpfWriter::Label next = last ? if_none : bpf_.NewLabel();
      bpf_.JumpIf(BPF_JEQ, static_cast<uint32_t>(values[index]), if_any, next);
      if (!last) bpf_.Bind(next);
    }
  }

  BpfWriter::Label ReturnLabel(uint32_t action) {
    const auto [entry, inserted] = return_labels_.try_emplace(action, 0);
    if (inserted) entry->second = bpf_.NewLabel();
    return entry->second;
  }

  BpfWriter::Label VerdictLabel(Verdict verdict) {
    std::optional<BpfWriter::Label>& label = verdict_labels_[static_cast<size_t>(verdict)];
    if (label) return *label;
    switch (verdict) {
      case Verdict::kAllow: label = ReturnLabel(SECCOMP_RET_ALLOW); break;
      case Verdict::kDeny: label = ReturnLabel(SECCOMP_RET_ERRNO | EPERM); break;
      case Verdict::kDenyWithEnosys: label = ReturnLabel(SECCOMP_RET_ERRNO | ENOSYS); break;
      case Verdict::kDenyWithEacces: label = ReturnLabel(SECCOMP_RET_ERRNO | EACCES); break;
      case Verdict::kKill: label = ReturnLabel(SECCOMP_RET_KILL_PROCESS); break;
      case Verdict::kCheckClone:
      case Verdict::kCheckSocket:
      case Verdict::kCheckSocketPair:
      case Verdict::kCheckMemfdCreate:
      case Verdict::kCheckIoctl: label = bpf_.NewLabel(); break;
    }
    return *label;
  }

  std::optional<BpfWriter::Label> UsedLabel(Verdict verdict) const {
    return verdict_labels_[static_cast<size_t>(verdict)];
  }

  const SeccompOptions& options_;
  BpfWriter bpf_;
  std::map<uint32_t, BpfWriter::Label> return_labels_;
  std::array<std::optional<BpfWriter::Label>, kVerdictCount> verdict_labels_;
};

}  // namespace

Result<SeccompProgram> BuildSeccompProgramWithLibseccomp(const SeccompOptions& options) {
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

Result<SeccompProgram> BuildSeccompProgram(const SeccompOptions& options) {
  SyscallVerdicts verdicts = DecideSyscalls(options);
  TOOLVFS_ASSIGN_OR_RETURN(const std::vector<NumberRange> ranges, ToRanges(verdicts.by_number));
  if (ranges.size() > SearchPlan::kMaxRanges) {
    return InternalError("seccomp: more syscall number ranges than SearchPlan plans for");
  }
  TOOLVFS_ASSIGN_OR_RETURN(std::vector<sock_filter> instructions,
                           ProgramWriter(options).Write(ranges));
  return SeccompProgram(std::move(instructions), std::move(verdicts.unknown_syscalls));
}

int ApplySeccompProgram(const sock_fprog& program) noexcept {
  if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &program) == 0) return 0;
  if (errno != ENOSYS) return errno;
  // Kernels before 3.17 have the filter mode only through prctl.
  if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program, 0, 0) == 0) return 0;
  return errno;
}

}  // namespace toolvfs
