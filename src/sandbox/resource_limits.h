// Resource limits (setrlimit) of a tool process: the step of the OS sandbox
// (SPEC.md §5) that bounds what one process can consume even when the host is
// slow to notice. The host's own timeouts and the PID namespace remain the
// primary controls; these are the kernel's backstop.
//
// What each limit means for a tool, and the defaults taken from `limits`
// (config.h) by FromLimitsConfig:
//   address_space_bytes  RLIMIT_AS = memory_mb MiB. Allocations beyond it
//                        fail (malloc returns NULL, mmap ENOMEM) instead of
//                        pushing the machine into the OOM killer. It counts
//                        virtual memory, so runtimes that reserve large
//                        ranges up front (the JVM, Go, some JITs) need more
//                        than they use.
//   cpu_seconds          RLIMIT_CPU = timeout_s × the CPUs this process may
//                        run on: CPU time of all threads adds up, so a tool
//                        busy on every core must not be killed before its
//                        wall-clock timeout, which the host enforces. At the
//                        soft limit the kernel sends SIGXCPU (which kills),
//                        one second later SIGKILL (if SIGXCPU was caught).
//   file_size_bytes      RLIMIT_FSIZE = 4 GiB, fixed: larger than any source
//                        file or linked binary, small enough that one runaway
//                        writer stops. Beyond it write() fails with EFBIG
//                        (after SIGXFSZ, which kills unless ignored).
//   open_files           RLIMIT_NOFILE = 4096, fixed: enough for parallel
//                        walkers and file watchers, bounded kernel memory.
//   processes            RLIMIT_NPROC = max_processes. The kernel counts
//                        every process and thread of the tool's real uid,
//                        not of this sandbox, and skips the check for uid 0
//                        and holders of CAP_SYS_RESOURCE or CAP_SYS_ADMIN (in
//                        the initial namespace). Since Linux 5.14 each user
//                        namespace keeps its own count, and the creator's
//                        count is checked against the RLIMIT_NPROC in force
//                        when the namespace was created. Hence the order:
//                        apply this AFTER unshare(CLONE_NEWUSER), and it caps
//                        the tool's own processes and threads; applied before
//                        (or without a user namespace) it caps the whole
//                        user, and a user already over the limit cannot
//                        even start a thread in the tool (pass kInherit
//                        then). As root without a user namespace it is not
//                        enforced at all. What stops a fork bomb there is the
//                        seccomp filter for vfs tools (no fork, only
//                        threads) and, for stdio tools and process.run
//                        children, the PID namespace (the whole tree dies
//                        with its init) and the host's process-group kill.
//   core_file_bytes      RLIMIT_CORE = 0, fixed: a tool's memory holds file
//                        contents the policy handed it; a core file would
//                        write them outside the protocol.
// Limits are only ever lowered: a value above the inherited hard limit is
// clamped to it (raising needs privileges and would fail unprivileged).
//
// Thread safety: FromLimitsConfig and UsableCpuCount may be called from any
// thread. ApplyResourceLimits is async-signal-safe and meant for the child
// between fork and exec; it changes the limits of the calling process.
#pragma once

#include <cstdint>

namespace toolvfs {

struct LimitsConfig;

struct ResourceLimits {
  // A field set to kInherit leaves that limit as the process inherited it.
  static constexpr uint64_t kInherit = UINT64_MAX;

  uint64_t address_space_bytes = kInherit;
  uint64_t cpu_seconds = kInherit;
  uint64_t file_size_bytes = kInherit;
  uint64_t open_files = kInherit;
  uint64_t processes = kInherit;
  uint64_t core_file_bytes = 0;

  friend bool operator==(const ResourceLimits&, const ResourceLimits&) = default;
};

inline constexpr uint64_t kDefaultFileSizeLimitBytes = uint64_t{4} << 30;
inline constexpr uint64_t kDefaultOpenFilesLimit = 4096;

// The CPUs this process may run on (sched_getaffinity), at least 1.
unsigned UsableCpuCount();

// The limits for a tool configured with `limits` (see the table above).
ResourceLimits FromLimitsConfig(const LimitsConfig& limits,
                                unsigned cpu_count = UsableCpuCount());

// Sets every limit that is not kInherit on the calling process: soft and
// hard alike (a tool cannot raise them back), except RLIMIT_CPU, whose hard
// limit is one second above the soft one so SIGXCPU comes before SIGKILL.
// Returns 0, or the errno of the first getrlimit/setrlimit that failed.
// Async-signal-safe: no allocation.
int ApplyResourceLimits(const ResourceLimits& limits) noexcept;

}  // namespace toolvfs
