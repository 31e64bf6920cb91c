// The process limit (max_processes) where RLIMIT_NPROC does not hold: a
// cgroup of its own per start, with the pids controller's pids.max.
//
// Why: the kernel never applies RLIMIT_NPROC to uid 0 (INIT_USER) nor to
// holders of CAP_SYS_RESOURCE or CAP_SYS_ADMIN, so a host running as root
// gave a stdio tool, an MCP server or a process.run child no process limit
// at all (300 forks under max_processes = 20). The pids controller counts
// every task (process or thread) of a cgroup and its descendants, whoever
// owns it: fork and clone fail with EAGAIN at pids.max, as at RLIMIT_NPROC.
//
// Where: a child cgroup of the host's own cgroup in the hierarchy that has
// the pids controller — cgroup v1 (a `cgroup` mount with the `pids`
// option) or cgroup v2 where the host's cgroup already delegates `pids` to
// its children (its cgroup.subtree_control lists it). Creating one needs
// write access to the host's cgroup directory: root on a machine that
// mounts the hierarchy writable, or a delegated subtree. A container
// whose /sys/fs/cgroup is read-only offers none; then the process limit is
// RLIMIT_NPROC alone (held in a user namespace for every uid but root).
//
// The launcher child joins the cgroup first, before it creates its
// namespaces, by writing "0" to cgroup.procs through a descriptor the host
// opened (so joining needs no path lookup in the child), and everything it
// starts (a PID namespace's init, the tool and the tool's children)
// inherits it. The host removes the cgroup when the run is over.
//
// Thread safety: ProbeProcessCgroups may be called from any thread;
// ProcessCgroup is a move-only owner, used by one thread at a time.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "core/status.h"
#include "core/unique_fd.h"
#include "sandbox/kernel_features.h"

namespace toolvfs {

// Whether this process can create pids cgroups under its own cgroup: finds
// the directory (/proc/self/cgroup, /proc/self/mountinfo) and creates,
// limits and removes one to be sure. `detail` names the directory and the
// cgroup version ("cgroup v1 pids controller at /sys/fs/cgroup/pids"), or
// why not. Also removes leftovers, older than a minute, of toolvfs hosts
// that died before removing theirs. Probed once per process (cached).
FeatureProbe ProbeProcessCgroups();

// The directory ProbeProcessCgroups found, or empty when it found none.
const std::string& ProcessCgroupParent();

// One start's cgroup. Its destructor kills whatever is still in it (the
// tool's PID namespace is normally gone by then) and removes the directory,
// waiting up to about two seconds for the kernel to let the last tasks go.
class ProcessCgroup {
 public:
  // Creates `parent`/toolvfs-<host pid>-<counter> with pids.max =
  // `max_tasks` and opens its cgroup.procs for writing (close-on-exec).
  static Result<ProcessCgroup> Create(const std::string& parent, uint64_t max_tasks);

  ProcessCgroup(ProcessCgroup&& other) noexcept;
  ProcessCgroup& operator=(ProcessCgroup&& other) noexcept;
  ProcessCgroup(const ProcessCgroup&) = delete;
  ProcessCgroup& operator=(const ProcessCgroup&) = delete;
  ~ProcessCgroup();

  const std::string& path() const { return path_; }
  // For the launcher child: write "0" here to join. Closed after the start.
  int procs_fd() const { return procs_.get(); }
  void CloseProcsFd() { procs_.reset(); }

 private:
  ProcessCgroup(std::string path, UniqueFd procs) : path_(std::move(path)), procs_(std::move(procs)) {}
  void Remove() noexcept;

  std::string path_;  // empty once moved from or removed
  UniqueFd procs_;
};

}  // namespace toolvfs
