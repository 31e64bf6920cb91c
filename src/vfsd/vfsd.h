// vfsd: a streaming file daemon for one client (SPEC.md §8, docs/vfsd.md).
//
// A VfsdSession answers requests (request.h) one at a time, in order: file
// handles on the project store, pipes and private temp files, all in one
// handle table, behind the allowlist (allowlist.h). ServeVfsd runs a
// session over a channel of frames (frame.h).
//
// Where bytes live:
//  - read handles on stores that hand out descriptors (fs) are the open
//    file itself: streaming a file of any size takes constant memory.
//    On other stores each read is a ranged read (ProjectFiles::ReadRange).
//  - write handles stage what is written in a private temp file; `close`
//    commits it in one atomic store write (WriteFromDescriptor where the
//    store takes descriptors, else Write), so readers see the old content
//    until then and an unclosed handle changes nothing.
//  - temp files and pipes are OS objects owned by the session: a temp file
//    is unlinked from its creation, so it is gone at close, at the end of
//    the session, and even if the daemon is killed.
//
// Nothing a client sends crashes the session or blocks it: pipe ends are
// non-blocking, a write to a pipe whose reader is gone fails with EPIPE
// rather than raising SIGPIPE (without changing the process's signal
// dispositions), every fd is owned by a UniqueFd.
//
// Thread safety: a session is used by one thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "policy/audit.h"
#include "project/project_files.h"
#include "vfsd/frame.h"

namespace toolvfs {

struct VfsdOptions {
  std::vector<std::string> allow;  // allowed prefixes (project paths); none allows nothing
  bool read_only = false;
  // `read` returns at most this many bytes, whatever `max` asks.
  uint64_t read_max = 4096;
  size_t max_handles = 1024;  // open handles at once (a pipe is two)
  // The bytes the open write and temp handles may stage in temp_directory
  // in all (a write past it is E_LIMIT): a client must not fill the disk.
  uint64_t max_staged_bytes = uint64_t{1} << 30;
  // Where write handles stage and temp files live; empty: $TMPDIR or /tmp.
  std::string temp_directory;
  AuditSink* audit = nullptr;  // not owned; null: no audit log
  std::string call_id;         // the audit records' call_id; empty: one is made up
};

// The largest read_max accepted: the answer to a read of that size, base64
// and all, stays far below the frame limit of any client.
inline constexpr uint64_t kMaxReadMax = 64 * 1024 * 1024;

class VfsdSession {
 public:
  VfsdSession() = default;
  VfsdSession(const VfsdSession&) = delete;
  VfsdSession& operator=(const VfsdSession&) = delete;
  // Closes every handle still open: staged writes are discarded (never
  // committed), temp files and pipes are gone.
  virtual ~VfsdSession() = default;

  // The answer (a JSON payload, without length prefix) to one frame's
  // payload. Never fails: every problem is an error answer.
  virtual std::string Answer(std::string_view payload) = 0;

  // The answer to a frame longer than the frame limit, which was skipped:
  // E_RANGE with a null id, naming `length` and `limit`.
  virtual std::string AnswerOversizedFrame(uint64_t length, uint64_t limit) = 0;

  // Handles open now.
  virtual size_t OpenHandles() const = 0;
};

// A session serving `store` (must outlive it). InvalidArgument naming the
// value for an invalid allowed prefix, a read_max of 0 or above
// kMaxReadMax, or max_handles of 0.
Result<std::unique_ptr<VfsdSession>> NewVfsdSession(ProjectFiles& store, const VfsdOptions& options);

// Reads frames from `input` and writes each answer as a frame to `output`
// (the same descriptor for a socketpair) until the input ends; a frame
// longer than `max_frame_bytes` is skipped and answered with E_RANGE.
// OK when the input ends (a truncated last frame included) or the client
// stops reading answers (no SIGPIPE is raised); Io when the channel fails
// otherwise.
Status ServeVfsd(VfsdSession& session, int input, int output, uint64_t max_frame_bytes = kDefaultMaxFrameBytes);

}  // namespace toolvfs
