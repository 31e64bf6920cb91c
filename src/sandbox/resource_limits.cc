#include "sandbox/resource_limits.h"

#include <sched.h>
#include <sys/resource.h>

#include <algorithm>
#include <cerrno>

#include "config/config.h"

namespace toolvfs {

unsigned UsableCpuCount() {
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  if (sched_getaffinity(0, sizeof cpus, &cpus) != 0) return 1;
  return static_cast<unsigned>(std::max(CPU_COUNT(&cpus), 1));
}

ResourceLimits FromLimitsConfig(const LimitsConfig& limits, unsigned cpu_count) {
  // The config bounds every value by kMaxLimit (2^31 - 1), so none of these
  // products overflows 64 bits.
  return ResourceLimits{
      .address_space_bytes = static_cast<uint64_t>(limits.memory_mb) << 20,
      .cpu_seconds = static_cast<uint64_t>(limits.timeout_s) * std::max(cpu_count, 1U),
      .file_size_bytes = kDefaultFileSizeLimitBytes,
      .open_files = kDefaultOpenFilesLimit,
      .processes = static_cast<uint64_t>(limits.max_processes),
      .core_file_bytes = 0,
  };
}

namespace {

// Lowers `resource` to `soft`, with the hard limit `extra_hard` above it;
// both clamped to the inherited hard limit. Returns 0 or errno.
int LowerLimit(int resource, uint64_t soft, uint64_t extra_hard) noexcept {
  if (soft == ResourceLimits::kInherit) return 0;
  struct rlimit limit;
  if (getrlimit(resource, &limit) != 0) return errno;
  rlim_t hard = soft > RLIM_INFINITY - 1 - extra_hard ? RLIM_INFINITY - 1 : soft + extra_hard;
  if (limit.rlim_max != RLIM_INFINITY) hard = std::min<rlim_t>(hard, limit.rlim_max);
  limit.rlim_max = hard;
  limit.rlim_cur = std::min<rlim_t>(soft, hard);
  if (setrlimit(resource, &limit) != 0) return errno;
  return 0;
}

}  // namespace

int ApplyResourceLimits(const ResourceLimits& limits) noexcept {
  struct Step {
    int resource;
    uint64_t value;
    uint64_t extra_hard;
  };
  const Step steps[] = {
      {RLIMIT_AS, limits.address_space_bytes, 0},
      // The extra second turns SIGXCPU (catchable) into SIGKILL.
      {RLIMIT_CPU, limits.cpu_seconds, 1},
      {RLIMIT_FSIZE, limits.file_size_bytes, 0},
      {RLIMIT_NOFILE, limits.open_files, 0},
      {RLIMIT_NPROC, limits.processes, 0},
      {RLIMIT_CORE, limits.core_file_bytes, 0},
  };
  for (const Step& step : steps) {
    if (const int error_number = LowerLimit(step.resource, step.value, step.extra_hard);
        error_number != 0) {
      return error_number;
    }
  }
  return 0;
}

}  // namespace toolvfs
