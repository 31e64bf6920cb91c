// The vfs runtime (SPEC.md §4, §6.1): runs a tool as a subprocess that does
// all its file work by asking this host over the VFS tool protocol.
#pragma once

#include <functional>
#include <string>

#include "project/project_files.h"
#include "runtime/tool_runtime.h"
#include "sandbox/launcher.h"

namespace toolvfs {

// How a tool process is started. The one function the sandbox wraps: the
// default is Launch() (unsandboxed); the sandbox issue passes a launcher
// that applies the tool's policy between fork and exec.
using ToolLauncher = std::function<Result<ChildProcess>(const LaunchSpec&, const ToolConfig&)>;

struct VfsRuntimeOptions {
  // The working directory of tool processes, against which a relative
  // program or script on the command line is found: the directory of
  // toolvfs.toml for configured tools, the caller's for `toolvfs exec`.
  std::string working_directory;
  unsigned worker_threads = 4;
  ToolLauncher launcher;  // empty: Launch()
};

class VfsRuntime : public ToolRuntime {
 public:
  VfsRuntime(ProjectFiles& project, VfsRuntimeOptions options);

  // `tool.command` is the program and its arguments; `tool.sandbox.limits`
  // gives the timeouts and the message limit; `tool.options` goes into
  // init. The tool gets a fixed environment (PATH, LANG, HOME and TMPDIR
  // in a private temporary directory removed after the run).
  Result<Outcome> Execute(const ToolCall& call, const ToolConfig& tool,
                          CancelToken& cancel) override;

 private:
  ProjectFiles& project_;
  VfsRuntimeOptions options_;
};

}  // namespace toolvfs
