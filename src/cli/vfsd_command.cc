// `toolvfs vfsd`: serves one client the streaming file interface of
// src/vfsd over stdin/stdout or an inherited descriptor (docs/vfsd.md).
// Every answer is a frame on the channel; stderr gets only the errors that
// end the daemon (a bad option, an unusable store or audit log).
#include <fcntl.h>
#include <malloc.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/project_opening.h"
#include "cli/terminal.h"
#include "cli/tool_invocation.h"
#include "policy/audit.h"
#include "project/project_files.h"
#include "vfsd/vfsd.h"

namespace toolvfs {
namespace {

class VfsdCommand final : public Command {
 public:
  void AddOptions(CLI::App& app) override {
    app.add_option("--allow", allow_, "Allow this project path and everything below it (repeatable; none: nothing)")
        ->type_name("PATH");
    app.add_flag("--read-only", read_only_, "Refuse every write to project files (temp files and pipes still work)");
    app.add_option("--read-max", read_max_, "Bytes one read returns at most; larger max values are clamped (default: 4096)")
        ->type_name("N");
    app.add_option("--fd", fd_, "Serve over this inherited descriptor (a socketpair end) instead of stdin/stdout")
        ->type_name("N");
    app.add_option("--max-frame", max_frame_, "Largest request frame in bytes; larger ones get E_RANGE (default: 16 MiB)")
        ->type_name("N");
    app.add_option("--max-handles", max_handles_, "Open handles at once; more get E_LIMIT (default: 1024)")
        ->type_name("N");
    app.add_option("--max-staged-bytes", max_staged_bytes_,
                   "Bytes the open write and temp handles may stage in all; a write past it gets E_LIMIT "
                   "(default: 1 GiB)")
        ->type_name("N");
    app.footer(
        "Frames: a 4-byte big-endian length, then that many bytes of UTF-8 JSON. Ops: ping, init, open_read, "
        "open_write, read, write, close, stat, list, make_pipe, temp, seek (docs/vfsd.md).\n"
        "Example: toolvfs vfsd --project . --allow src (a client on stdin/stdout)\n"
        "Exit codes: 0 when the client closes the channel, 1 when the channel fails, 2 usage or setup error, "
        "69 the store's server is unavailable (try again).");
  }

  unsigned UsedCommonOptions() const override { return kOptionProject | kOptionAudit; }

  int Run(const CommonOptions& common) override {
    if (max_frame_ == 0) return ReportError("--max-frame", "must be at least 1 byte");
    if (fd_ && ::fcntl(*fd_, F_GETFD) < 0) {
      return ReportError("--fd", "descriptor " + std::to_string(*fd_) + " is not open in this process");
    }
    Result<std::unique_ptr<ProjectFiles>> store = OpenCommandProject(common.project, ProjectUse::kWrite);
    if (!store.ok()) return ReportStatus("--project", store.status());

    Result<std::unique_ptr<AuditSink>> audit = OpenAuditSink(common);
    if (!audit.ok()) return ReportError("--audit", audit.status().message());

    VfsdOptions options;
    options.allow = allow_;
    options.read_only = read_only_;
    options.read_max = read_max_;
    options.max_handles = max_handles_;
    options.max_staged_bytes = max_staged_bytes_;
    options.audit = audit->get();
    Result<std::unique_ptr<VfsdSession>> session = NewVfsdSession(**store, options);
    if (!session.ok()) return ReportError("vfsd", session.status().message());

    // Streaming answers allocate a few buffers of up to read_max (and 4/3
    // of it for base64) per read. glibc would map and unmap each one past
    // 128 KiB, and give freed heap back: a page fault per 4 KiB on every
    // read, which cost more than the copying (docs/benchmarks.md). Keep
    // them on the heap and keep the heap; its size stays bounded by the
    // frame and read limits.
    ::mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024);
    ::mallopt(M_TRIM_THRESHOLD, 256 * 1024 * 1024);
    int input = fd_.value_or(STDIN_FILENO);
    int output = fd_.value_or(STDOUT_FILENO);
    Status served = ServeVfsd(**session, input, output, max_frame_);
    if (!served.ok()) {
      ReportError("vfsd", served.message());
      return 1;
    }
    return kExitOk;
  }

 private:
  std::vector<std::string> allow_;
  bool read_only_ = false;
  uint64_t read_max_ = 4096;
  std::optional<int> fd_;
  uint64_t max_frame_ = kDefaultMaxFrameBytes;
  size_t max_handles_ = 1024;
  uint64_t max_staged_bytes_ = uint64_t{1} << 30;
};

}  // namespace

std::unique_ptr<Command> NewVfsdCommand() { return std::make_unique<VfsdCommand>(); }

}  // namespace toolvfs
