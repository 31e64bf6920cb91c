// The vfs runtime (SPEC.md §4, §6.1): runs a tool as a subprocess that does
// all its file work by asking this host over the VFS tool protocol.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include <map>
#include <optional>

#include "host/methods.h"
#include "host/tool_reports.h"
#include "policy/audit.h"
#include "policy/inquirer.h"
#include "policy/tool_policy.h"
#include "project/project_files.h"
#include "runtime/tool_runtime.h"
#include "sandbox/launcher.h"
#include "runtime/confined_launch.h"
#include "sandbox/sandbox_profile.h"

namespace toolvfs {

// How a tool process is started. The one function the sandbox wraps: the
// default is Launch() (unsandboxed); the sandbox issue passes a launcher
// that applies the tool's policy between fork and exec.
using ToolLauncher = std::function<Result<ChildProcess>(const LaunchSpec&, const ToolConfig&)>;

// The capacity of a vfs tool's stdin pipe, which carries the host's
// answers. With the default 64 KiB a 1 MiB fs.read answer takes sixteen
// non-blocking writes, each followed by an epoll wait for the tool to
// drain the pipe; with 256 KiB, four — the size of the SDK's reads, and
// enough: a larger pipe measured the same (docs/benchmarks.md, "Protocol
// round trip"). Pipe pages are allocated as data arrives, so an idle tool
// costs no memory; but the kernel counts each pipe's capacity against an
// unprivileged user's fs.pipe-user-pages-soft (16384 pages): a tool's four
// pipes then count 64 + 3 × 16 = 112 pages instead of 64, and past that
// limit (about 146 tools at once for one user) the kernel gives every new
// pipe of that user, this one included, 2 pages. Root is exempt.
inline constexpr int kToolStdinPipeBytes = 256 * 1024;

struct VfsRuntimeOptions {
  // The working directory of tool processes, against which a relative
  // program or script on the command line is found: the directory of
  // toolvfs.toml for configured tools, the caller's for `toolvfs exec`.
  std::string working_directory;
  unsigned worker_threads = 4;
  // Replaces the built-in launch for tests and embedders with their own
  // confinement; empty: Launch() with the sandbox below.
  ToolLauncher launcher;
  // The OS sandbox of the tool and its process.run children (SPEC.md §5).
  // Its config_project_path is the policy's too: the toolvfs.toml in use,
  // when it lies inside the project, is a sensitive path for every request.
  ConfinementOptions confinement;

  // Asked about requests the policy does not cover; null: every such
  // request is denied at once (non-interactive). Not owned.
  Inquirer* inquirer = nullptr;
  // Receives the audit records of every run; null: no audit. Not owned.
  AuditSink* audit = nullptr;
  // Receives the tools' own progress and log lines (host/tool_reports.h),
  // on each run's loop thread; null: they are dropped. Not owned.
  ToolReportSink* reports = nullptr;
  // The host's environment for ${VAR} in http.* headers and process.run's
  // forwarded variables; null: none. Not owned.
  const std::map<std::string, std::string>* host_environment = nullptr;
  HttpSettings http;
  // The most bytes the answers being built at one moment may hold, over
  // all runs of this runtime and all their requests (MethodContext::
  // answer_memory): fs.grep's lines and JSON. A grep that finds no room
  // fails with ResourceExhausted naming it. Large enough for one grep
  // answer at the default answer limit (70 MiB of JSON, about twice that
  // while it is built).
  uint64_t answer_memory_bytes = uint64_t{256} << 20;
  // The policy of a tool built once by the caller, with
  // confinement.config_project_path (PrebuiltToolPolicy); otherwise each
  // run builds it.
  PrebuiltToolPolicy prebuilt_policy;
};

class VfsRuntime : public ToolRuntime {
 public:
  VfsRuntime(ProjectFiles& project, VfsRuntimeOptions options);
  ~VfsRuntime() override;

  // `tool.command` is the program and its arguments; `tool.sandbox.limits`
  // gives the timeouts and the message limit; `tool.options` goes into
  // init; the tool's policy (ToolPolicy::ForTool) decides every request. The tool gets a fixed environment (PATH, LANG, HOME and TMPDIR
  // in a private temporary directory removed after the run).
  //
  // A `stateful = true` tool runs through Start: its questions (`state
  // waiting`) are answered from call.answers_json, each at most once; the
  // first one without an answer there aborts the tool and is returned as
  // needs_input (with the state's content), so a caller that makes single
  // calls re-runs it with the answer added.
  Result<Outcome> Execute(const ToolCall& call, const ToolConfig& tool,
                          CancelToken& cancel) override;

  // The live run of a stateful tool (stateful_tool.h): the session runs on
  // the handle's thread with `state` tracked and `apply`/abort reaching the
  // tool. `cancel` must outlive the handle. The runtime and its store too.
  Result<std::unique_ptr<StatefulRun>> Start(const ToolCall& call, const ToolConfig& tool,
                                             CancelToken& cancel) override;

 private:
  struct PreparedRun;
  // Launches the tool and sets up what its session needs.
  Result<std::unique_ptr<PreparedRun>> Prepare(const ToolCall& call, const ToolConfig& tool);
  Result<Outcome> ExecuteStateful(const ToolCall& call, const ToolConfig& tool, CancelToken& cancel);

  // Starts `spec` as `kind` (the tool, or one of its process.run children)
  // under the sandbox the options ask for.
  Result<ChildProcess> LaunchConfined(const LaunchSpec& spec, const ToolConfig& tool, ToolKind kind,
                                      const std::string& project_directory);

  ProjectFiles& project_;
  VfsRuntimeOptions options_;
  MemoryBudget answer_memory_;  // options_.answer_memory_bytes, for every run
};

}  // namespace toolvfs
