#include "vfsd/vfsd.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <map>
#include <optional>
#include <utility>
#include <variant>

#include "core/io.h"
#include "core/text.h"
#include "core/unique_fd.h"
#include "project/path.h"
#include "protocol/base64.h"
#include "protocol/json_writer.h"
#include "vfsd/allowlist.h"
#include "vfsd/request.h"
#include "vfsd/vfsd_error.h"

namespace toolvfs {
namespace {

// Audit targets longer than this are cut: a client cannot make one audit
// line megabytes long with a huge path or op name.
constexpr size_t kMaxAuditTargetBytes = 4096;

// The pipe buffer ServeVfsd asks for on its output (see there).
constexpr int kAnswerPipeBytes = 1024 * 1024;

enum class HandleKind {
  kRead,       // a project file opened with open_read
  kWrite,      // a project file opened with open_write: staged until close
  kTemp,       // a private temp file, read and write
  kPipeRead,   // the read end of a pipe
  kPipeWrite,  // the write end of a pipe
};

struct Handle {
  HandleKind kind = HandleKind::kTemp;
  // kRead, kWrite: the project path as the client named it (normalized)
  // and as judged (resolved); the allowlist it was judged under.
  std::string path;
  std::string resolved_path;
  std::shared_ptr<const Allowlist> allowlist;
  // kRead on a descriptor store: the file. kWrite: the staging file. kTemp:
  // the temp file. Pipes: the end. Empty for kRead through ranged reads.
  UniqueFd fd;
  uint64_t offset = 0;  // kRead through ranged reads: the next byte
  WriteMode mode = WriteMode::kOverwrite;  // kWrite
  uint64_t staged_bytes = 0;  // kWrite, kTemp: the file's size, counted against max_staged_bytes
};

std::string_view HandleKindName(HandleKind kind) {
  switch (kind) {
    case HandleKind::kRead: return "a read handle";
    case HandleKind::kWrite: return "a write handle";
    case HandleKind::kTemp: return "a temp file";
    case HandleKind::kPipeRead: return "the read end of a pipe";
    case HandleKind::kPipeWrite: return "the write end of a pipe";
  }
  return "a handle";
}

// An op's answer: the result object as JSON, or the error.
using Outcome = std::variant<std::string, VfsdError>;

VfsdError Error(VfsdErrorCode code, std::string message) { return VfsdError{code, std::move(message)}; }

// Writes the members of a result object: `fill(writer)` between braces.
template <typename Fill>
std::string ResultObject(Fill&& fill) {
  rapidjson::StringBuffer buffer;
  JsonWriter writer(buffer);
  writer.StartObject();
  fill(writer);
  writer.EndObject();
  return JsonText(buffer);
}

std::string Cut(std::string_view text) {
  if (text.size() <= kMaxAuditTargetBytes) return std::string(text);
  return std::string(text.substr(0, kMaxAuditTargetBytes)) + "… (" + std::to_string(text.size()) + " bytes)";
}

int64_t NowMilliseconds() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int64_t ToMilliseconds(const struct timespec& time) {
  return static_cast<int64_t>(time.tv_sec) * 1000 + time.tv_nsec / 1000000;
}

// A file in `directory` that no other process can open: O_TMPFILE has no
// name at all; where the file system lacks it, a named file is unlinked at
// once. Either way it disappears with its last descriptor.
Result<UniqueFd> OpenPrivateTempFile(const std::string& directory) {
  UniqueFd fd(::open(directory.c_str(), O_TMPFILE | O_RDWR | O_EXCL | O_CLOEXEC, 0600));
  if (fd) return fd;
  // Whatever errno says, for the client it is the daemon's own I/O that
  // failed (E_IO), not a path of the project (E_NOENT, E_PERM).
  if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL) {
    return IoError(ErrnoToStatus(errno, "Cannot create a temp file in " + Quote(directory)).message());
  }
  std::string name = directory + "/toolvfs-vfsd-XXXXXX";
  fd.reset(::mkostemp(name.data(), O_CLOEXEC));
  if (!fd) return IoError(ErrnoToStatus(errno, "Cannot create a temp file in " + Quote(directory)).message());
  ::unlink(name.c_str());
  return fd;
}

// write(2) that fails with EPIPE instead of raising SIGPIPE, without
// touching the process's signal dispositions (the session may be embedded):
// SIGPIPE is blocked for this thread during the call, and the one the
// failed write left pending is taken before it is unblocked. SIGPIPE from a
// write is sent to the writing thread, so no other thread sees it.
ssize_t WriteWithoutSigpipe(int fd, const char* data, size_t size) {
  sigset_t pipe_signal, previous;
  sigemptyset(&pipe_signal);
  sigaddset(&pipe_signal, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_signal, &previous);
  ssize_t written;
  do {
    written = ::write(fd, data, size);
  } while (written < 0 && errno == EINTR);
  int error = errno;
  if (written < 0 && error == EPIPE && !sigismember(&previous, SIGPIPE)) {
    struct timespec no_wait = {};
    while (sigtimedwait(&pipe_signal, nullptr, &no_wait) < 0 && errno == EINTR) {
    }
  }
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  errno = error;
  return written;
}

// Reads up to `max` bytes from `fd` at its offset into `buffer` (at least
// `max` long), retrying short reads until `max` or the end: a regular
// file's read is short only at its end. The count read.
Result<size_t> ReadUpTo(int fd, std::string& buffer, uint64_t max, std::string_view what) {
  size_t used = 0;
  while (used < max) {
    ssize_t got = ::read(fd, buffer.data() + used, static_cast<size_t>(max) - used);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return ErrnoToStatus(errno, "Cannot read " + std::string(what));
    if (got == 0) break;
    used += static_cast<size_t>(got);
  }
  return used;
}

class Session final : public VfsdSession {
 public:
  Session(ProjectFiles& store, const VfsdOptions& options, Allowlist allowlist)
      : store_(store),
        options_(options),
        allowlist_(std::make_shared<const Allowlist>(std::move(allowlist))) {
    if (options_.temp_directory.empty()) {
      const char* temp = std::getenv("TMPDIR");
      options_.temp_directory = temp != nullptr && temp[0] == '/' ? temp : "/tmp";
    }
    if (options_.call_id.empty()) {
      options_.call_id = "vfsd-" + std::to_string(::getpid()) + "-" + std::to_string(NowMilliseconds());
    }
  }

  std::string Answer(std::string_view payload) override {
    auto started = std::chrono::steady_clock::now();
    std::variant<Request, RequestError> parsed = ParseRequest(payload);
    std::optional<std::string> id;
    Outcome outcome;
    std::string op;
    Audit audit;
    if (auto* error = std::get_if<RequestError>(&parsed)) {
      id = error->id;
      outcome = VfsdError::FromStatus(error->status);
    } else {
      Request& request = std::get<Request>(parsed);
      id = request.id;
      op = request.op;
      outcome = Dispatch(request, audit);
    }
    std::string answer = AnswerJson(id, outcome);
    Record(op, audit, outcome, payload.size() + kFrameHeaderBytes, answer.size() + kFrameHeaderBytes, started);
    return answer;
  }

  std::string AnswerOversizedFrame(uint64_t length, uint64_t limit) override {
    auto started = std::chrono::steady_clock::now();
    Outcome outcome = Error(VfsdErrorCode::kRange, "Frame of " + std::to_string(length) +
                                                       " bytes exceeds the frame limit of " + FormatBytes(limit) +
                                                       " (--max-frame); it was skipped");
    std::string answer = AnswerJson(std::nullopt, outcome);
    Audit audit;
    Record("", audit, outcome, length + kFrameHeaderBytes, answer.size() + kFrameHeaderBytes, started);
    return answer;
  }

  size_t OpenHandles() const override { return handles_.size(); }

 private:
  // What an op tells the audit log beyond its outcome.
  struct Audit {
    std::string target;  // the path, or the handle
    std::string rule;    // the rule that decided: the allowlist's for a path
    bool allowed = false;  // the rule allowed the op (it may fail later)
  };

  Outcome Dispatch(const Request& request, Audit& audit) {
    const RequestParams& params = request.params;
    const std::string& op = request.op;
    if (op == "ping") return Ping(params, audit);
    if (op == "init") return Init(params, audit);
    if (op == "open_read") return OpenRead(params, audit);
    if (op == "open_write") return OpenWrite(params, audit);
    if (op == "read") return Read(params, audit);
    if (op == "write") return Write(params, audit);
    if (op == "close") return Close(params, audit);
    if (op == "stat") return Stat(params, audit);
    if (op == "list") return List(params, audit);
    if (op == "make_pipe") return MakePipe(params, audit);
    if (op == "temp") return Temp(params, audit);
    if (op == "seek") return Seek(params, audit);
    return Error(VfsdErrorCode::kUnsupported,
                 "Unknown op " + Quote(Cut(op)) +
                     "; expected ping, init, open_read, open_write, read, write, close, stat, list, "
                     "make_pipe, temp or seek");
  }

  // --- ops -----------------------------------------------------------------

  Outcome Ping(const RequestParams& params, Audit& audit) {
    audit.rule = "no project path";
    if (Status status = params.ExpectOnly({}); !status.ok()) return VfsdError::FromStatus(status);
    return ResultObject([](JsonWriter& writer) {
      WriteJsonKey(writer, "pong");
      writer.Bool(true);
    });
  }

  Outcome Init(const RequestParams& params, Audit& audit) {
    if (Status status = params.ExpectOnly({"allow", "read_only"}); !status.ok()) return VfsdError::FromStatus(status);
    Result<std::optional<std::vector<std::string>>> allow = params.OptionalStringArray("allow");
    if (!allow.ok()) return VfsdError::FromStatus(allow.status());
    Result<std::optional<bool>> read_only = params.OptionalBool("read_only");
    if (!read_only.ok()) return VfsdError::FromStatus(read_only.status());
    const std::vector<std::string>& prefixes = allow->has_value() ? **allow : allowlist_->prefixes();
    for (const std::string& prefix : prefixes) audit.target += (audit.target.empty() ? "" : " ") + Cut(prefix);
    Result<Allowlist> narrowed = allowlist_->Narrow(prefixes, read_only->value_or(false));
    if (!narrowed.ok()) return VfsdError::FromStatus(narrowed.status());
    audit.rule = "narrows the allowlist";
    allowlist_ = std::make_shared<const Allowlist>(std::move(*narrowed));
    return ResultObject([](JsonWriter& writer) {
      WriteJsonKey(writer, "status");
      writer.String("ready");
    });
  }

  Outcome OpenRead(const RequestParams& params, Audit& audit) {
    if (Status status = params.ExpectOnly({"path"}); !status.ok()) return VfsdError::FromStatus(status);
    Result<std::string> path = NormalizedPathParam(params, audit);
    if (!path.ok()) return VfsdError::FromStatus(path.status());
    if (std::optional<VfsdError> full = CheckHandleRoom(1)) return *full;
    Handle handle;
    handle.kind = HandleKind::kRead;
    handle.path = *path;
    handle.allowlist = allowlist_;
    Status opened = RetryWhileChanged([&]() -> Status {
      TOOLVFS_ASSIGN_OR_RETURN(handle.resolved_path, Judge(*path, FileAccess::kRead, audit));
      ProjectFiles& judged = store_.WithoutSymlinks();
      Result<UniqueFd> fd = judged.OpenForStreaming(handle.resolved_path);
      if (fd.ok()) {
        handle.fd = std::move(*fd);
        return OkStatus();
      }
      if (fd.status().code() != StatusCode::kUnsupported) return std::move(fd).status();
      // A store without descriptors: read in ranges, from a file that is
      // there now.
      TOOLVFS_ASSIGN_OR_RETURN(FileMetadata metadata, judged.Metadata(handle.resolved_path));
      if (metadata.kind == EntryKind::kDirectory) {
        return IsDirectoryError("Cannot read " + DisplayPath(*path) + ": it is a directory");
      }
      return OkStatus();
    });
    if (!opened.ok()) return VfsdError::FromStatus(opened);
    return HandleResult(AddHandle(std::move(handle)));
  }

  Outcome OpenWrite(const RequestParams& params, Audit& audit) {
    if (Status status = params.ExpectOnly({"path", "append"}); !status.ok()) return VfsdError::FromStatus(status);
    Result<std::string> path = NormalizedPathParam(params, audit);
    if (!path.ok()) return VfsdError::FromStatus(path.status());
    Result<std::optional<bool>> append = params.OptionalBool("append");
    if (!append.ok()) return VfsdError::FromStatus(append.status());
    if (path->empty()) return Error(VfsdErrorCode::kArgument, "Cannot write '.': it is the project root");
    if (std::optional<VfsdError> full = CheckHandleRoom(1)) return *full;
    Handle handle;
    handle.kind = HandleKind::kWrite;
    handle.path = *path;
    handle.allowlist = allowlist_;
    handle.mode = append->value_or(false) ? WriteMode::kAppend : WriteMode::kOverwrite;
    // Fail at open what would fail at close anyway: a directory at the path,
    // a parent that is a file, an escape.
    Status checked = RetryWhileChanged([&]() -> Status {
      TOOLVFS_ASSIGN_OR_RETURN(handle.resolved_path, Judge(*path, FileAccess::kWrite, audit));
      Result<FileMetadata> metadata = store_.WithoutSymlinks().Metadata(handle.resolved_path);
      if (metadata.ok() && metadata->kind == EntryKind::kDirectory) {
        return IsDirectoryError("Cannot write " + DisplayPath(*path) + ": it is a directory");
      }
      if (!metadata.ok() && metadata.status().code() != StatusCode::kNotFound) return std::move(metadata).status();
      return OkStatus();
    });
    if (!checked.ok()) return VfsdError::FromStatus(checked);
    Result<UniqueFd> staging = OpenPrivateTempFile(options_.temp_directory);
    if (!staging.ok()) return VfsdError::FromStatus(staging.status());
    handle.fd = std::move(*staging);
    return HandleResult(AddHandle(std::move(handle)));
  }

  Outcome Read(const RequestParams& params, Audit& audit) {
    if (Status status = params.ExpectOnly({"h", "max"}); !status.ok()) return VfsdError::FromStatus(status);
    Result<Handle*> found = FindHandle(params, audit);
    if (!found.ok()) return HandleError(found.status());
    Handle& handle = **found;
    Result<std::optional<int64_t>> max_param = params.OptionalInteger("max");
    if (!max_param.ok()) return VfsdError::FromStatus(max_param.status());
    int64_t asked = max_param->value_or(static_cast<int64_t>(options_.read_max));
    if (asked < 1) return Error(VfsdErrorCode::kArgument, "Invalid params: 'max' must be at least 1, not " + std::to_string(asked));
    // Clamped without an error, as the source document decides.
    uint64_t max = std::min<uint64_t>(static_cast<uint64_t>(asked), options_.read_max);
    if (handle.kind == HandleKind::kWrite || handle.kind == HandleKind::kPipeWrite) {
      return Error(VfsdErrorCode::kPermission, "Cannot read from handle " + HandleNumberText(params) + ": it is " +
                                                   std::string(HandleKindName(handle.kind)));
    }
    // One buffer for every read of the session, grown to the largest read
    // once: a stream of 1 MiB reads allocates (and page-faults) nothing.
    if (read_buffer_.size() < max) read_buffer_.resize(static_cast<size_t>(max));
    std::string_view data;
    std::string ranged;
    bool eof = false;
    if (handle.kind == HandleKind::kPipeRead) {
      ssize_t got;
      do {
        got = ::read(handle.fd.get(), read_buffer_.data(), static_cast<size_t>(max));
      } while (got < 0 && errno == EINTR);
      if (got < 0 && errno != EAGAIN) return VfsdError::FromStatus(ErrnoToStatus(errno, "Cannot read from the pipe"));
      // Empty now but a writer is left: nothing yet, never a wait.
      data = std::string_view(read_buffer_.data(), got > 0 ? static_cast<size_t>(got) : 0);
      eof = got == 0;
    } else if (handle.fd) {
      Result<size_t> read = ReadUpTo(handle.fd.get(), read_buffer_, max, HandleDescription(handle));
      if (!read.ok()) return VfsdError::FromStatus(read.status());
      data = std::string_view(read_buffer_.data(), *read);
      eof = *read < max;
    } else {
      Result<FileRange> range = store_.WithoutSymlinks().ReadRange(handle.resolved_path, handle.offset, max);
      if (!range.ok()) return VfsdError::FromStatus(range.status());
      ranged = std::move(range->content);
      data = ranged;
      handle.offset += data.size();
      eof = data.size() < max;
    }
    audit.target += " (" + std::to_string(data.size()) + " bytes)";
    // Built by hand: base64 needs no escaping, and a 1 MiB read's answer
    // is then copied once less.
    std::string result = eof ? R"({"eof":true,"data":")" : R"({"eof":false,"data":")";
    result += Base64Encode(data);
    result += "\"}";
    return result;
  }

  Outcome Write(const RequestParams& params, Audit& audit) {
    if (Status status = params.ExpectOnly({"h", "data"}); !status.ok()) return VfsdError::FromStatus(status);
    Result<Handle*> found = FindHandle(params, audit);
    if (!found.ok()) return HandleError(found.status());
    Handle& handle = **found;
    Result<std::string> encoded = params.String("data");
    if (!encoded.ok()) return VfsdError::FromStatus(encoded.status());
    Result<std::string> data = Base64Decode(*encoded);
    if (!data.ok()) return Error(VfsdErrorCode::kArgument, "Invalid params: 'data': " + data.status().message());
    if (handle.kind == HandleKind::kRead || handle.kind == HandleKind::kPipeRead) {
      return Error(VfsdErrorCode::kPermission, "Cannot write to handle " + HandleNumberText(params) + ": it is " +
                                                   std::string(HandleKindName(handle.kind)));
    }
    uint64_t written = 0;
    if (handle.kind == HandleKind::kPipeWrite) {
      ssize_t count = data->empty() ? 0 : WriteWithoutSigpipe(handle.fd.get(), data->data(), data->size());
      if (count < 0 && errno == EPIPE) {
        return Error(VfsdErrorCode::kIo, "Cannot write to handle " + HandleNumberText(params) +
                                             ": the read end of the pipe is closed");
      }
      // Full: nothing fits now, and that is an answer, not a wait.
      if (count < 0 && errno != EAGAIN) {
        return VfsdError::FromStatus(ErrnoToStatus(errno, "Cannot write to the pipe"));
      }
      written = count > 0 ? static_cast<uint64_t>(count) : 0;
    } else {
      // The file ends at the furthest byte written (a seek past the end
      // makes a hole the size counts too): that is what the budget counts.
      const off_t position = ::lseek(handle.fd.get(), 0, SEEK_CUR);
      if (position < 0) return VfsdError::FromStatus(ErrnoToStatus(errno, HandleDescription(handle)));
      const uint64_t end = std::max(handle.staged_bytes, static_cast<uint64_t>(position) + data->size());
      const uint64_t growth = end - handle.staged_bytes;
      if (staged_bytes_ + growth > options_.max_staged_bytes) {
        return Error(VfsdErrorCode::kLimit,
                     "Cannot write to handle " + HandleNumberText(params) + ": the staged files of the open "
                     "handles would hold " + std::to_string(staged_bytes_ + growth) + " bytes, over the limit of " +
                     std::to_string(options_.max_staged_bytes) + " (--max-staged-bytes); close some first");
      }
      Status status = WriteFull(handle.fd.get(), *data, HandleDescription(handle));
      if (!status.ok()) return VfsdError::FromStatus(status);
      written = data->size();
      staged_bytes_ += growth;
      handle.staged_bytes = end;
    }
    audit.target += " (" + std::to_string(written) + " bytes)";
    return ResultObject([&](JsonWriter& writer) {
      WriteJsonKey(writer, "written");
      writer.Uint64(written);
    });
  }

  Outcome Close(const RequestParams& params, Audit& audit) {
    if (Status status = params.ExpectOnly({"h"}); !status.ok()) return VfsdError::FromStatus(status);
    Result<Handle*> found = FindHandle(params, audit);
    if (!found.ok()) return HandleError(found.status());
    // The handle is gone whatever the commit says: a client retrying a
    // failed close must not commit twice.
    auto entry = handles_.find(static_cast<uint32_t>(*params.Integer("h")));
    Handle handle = std::move(entry->second);
    handles_.erase(entry);
    staged_bytes_ -= handle.staged_bytes;
    if (handle.kind == HandleKind::kWrite) {
      Status committed = Commit(handle, audit);
      if (!committed.ok()) return VfsdError::FromStatus(committed);
    }
    return ResultObject([](JsonWriter& writer) {
      WriteJsonKey(writer, "closed");
      writer.Bool(true);
    });
  }

  Outcome Stat(const RequestParams& params, Audit& audit) {
    if (Status status = params.ExpectOnly({"path", "h"}); !status.ok()) return VfsdError::FromStatus(status);
    bool by_path = params.Has("path");
    if (by_path == params.Has("h")) {
      return Error(VfsdErrorCode::kArgument, "Invalid params: stat takes exactly one of 'path' and 'h'");
    }
    if (!by_path) return StatHandle(params, audit);
    Result<std::string> path = NormalizedPathParam(params, audit);
    if (!path.ok()) return VfsdError::FromStatus(path.status());
    FileMetadata metadata;
    metadata.kind = EntryKind::kFile;  // set by the lookup below; GCC cannot tell
    std::string mode = "r";
    Status status = RetryWhileChanged([&]() -> Status {
      TOOLVFS_ASSIGN_OR_RETURN(std::string resolved, Resolve(*path));
      // A directory on the way to an allowed prefix may be looked at.
      TOOLVFS_RETURN_IF_ERROR(CheckLookAt(resolved, audit));
      TOOLVFS_ASSIGN_OR_RETURN(metadata, store_.WithoutSymlinks().Metadata(resolved));
      std::string ignored;
      mode = allowlist_->Check(FileAccess::kWrite, resolved, ignored).ok() ? "rw" : "r";
      return OkStatus();
    });
    if (!status.ok()) return VfsdError::FromStatus(status);
    return StatResult(metadata.kind == EntryKind::kDirectory ? "dir" : "file", metadata.size, mode,
                      metadata.modified_ms, nullptr);
  }

  Outcome StatHandle(const RequestParams& params, Audit& audit) {
    Result<Handle*> found = FindHandle(params, audit);
    if (!found.ok()) return HandleError(found.status());
    Handle& handle = **found;
    if (handle.kind == HandleKind::kRead && !handle.fd) {
      Result<FileMetadata> metadata = store_.WithoutSymlinks().Metadata(handle.resolved_path);
      if (!metadata.ok()) return VfsdError::FromStatus(metadata.status());
      return StatResult("file", metadata->size, "r", metadata->modified_ms, &handle.path);
    }
    struct stat status;
    if (::fstat(handle.fd.get(), &status) != 0) {
      return VfsdError::FromStatus(ErrnoToStatus(errno, "Cannot stat " + HandleDescription(handle)));
    }
    uint64_t size = static_cast<uint64_t>(status.st_size);
    int64_t modified = ToMilliseconds(status.st_mtim);
    switch (handle.kind) {
      case HandleKind::kRead: return StatResult("file", size, "r", modified, &handle.path);
      case HandleKind::kWrite: return StatResult("file", size, "w", modified, &handle.path);  // the staged bytes
      case HandleKind::kTemp: return StatResult("temp", size, "rw", modified, nullptr);
      case HandleKind::kPipeRead:
      case HandleKind::kPipeWrite: {
        int waiting = 0;  // bytes in the pipe, whichever end asks
        if (::ioctl(handle.fd.get(), FIONREAD, &waiting) != 0) waiting = 0;
        return StatResult("pipe", static_cast<uint64_t>(waiting), handle.kind == HandleKind::kPipeRead ? "r" : "w",
                          modified, nullptr);
      }
    }
    return StatResult("file", size, "r", modified, nullptr);
  }

  Outcome List(const RequestParams& params, Audit& audit) {
    if (Status status = params.ExpectOnly({"path"}); !status.ok()) return VfsdError::FromStatus(status);
    Result<std::string> path = NormalizedPathParam(params, audit);
    if (!path.ok()) return VfsdError::FromStatus(path.status());
    std::vector<DirEntry> entries;
    std::string resolved;
    bool filtered = false;
    Status status = RetryWhileChanged([&]() -> Status {
      TOOLVFS_ASSIGN_OR_RETURN(resolved, Resolve(*path));
      filtered = allowlist_->IsAncestorOfAllowed(resolved);
      TOOLVFS_RETURN_IF_ERROR(CheckLookAt(resolved, audit));
      TOOLVFS_ASSIGN_OR_RETURN(entries, store_.WithoutSymlinks().ListDir(resolved));
      return OkStatus();
    });
    if (!status.ok()) return VfsdError::FromStatus(status);
    // Entries the client could not use are not shown: above the allowed
    // prefixes only what leads to them; inside, not what is denied (.env).
    std::erase_if(entries, [&](const DirEntry& entry) {
      std::string entry_path = entry.link_target.value_or(JoinPath(resolved, entry.name));
      if (filtered && !allowlist_->TouchesAllowed(JoinPath(resolved, entry.name))) return true;
      if (allowlist_->IsAncestorOfAllowed(entry_path)) return false;
      std::string ignored;
      return !allowlist_->Check(FileAccess::kRead, entry_path, ignored).ok();
    });
    return ResultObject([&](JsonWriter& writer) {
      WriteJsonKey(writer, "entries");
      writer.StartArray();
      for (const DirEntry& entry : entries) {
        writer.StartObject();
        WriteJsonKey(writer, "name");
        writer.String(entry.name);
        WriteJsonKey(writer, "kind");
        writer.String(EntryKindName(entry.kind));
        writer.EndObject();
      }
      writer.EndArray();
    });
  }

  Outcome MakePipe(const RequestParams& params, Audit& audit) {
    if (Status status = params.ExpectOnly({}); !status.ok()) return VfsdError::FromStatus(status);
    audit.rule = "no project path";
    if (std::optional<VfsdError> full = CheckHandleRoom(2)) return *full;
    int ends[2];
    if (::pipe2(ends, O_NONBLOCK | O_CLOEXEC) != 0) {
      return VfsdError::FromStatus(ErrnoToStatus(errno, "Cannot create a pipe"));
    }
    Handle read_end;
    read_end.kind = HandleKind::kPipeRead;
    read_end.fd.reset(ends[0]);
    Handle write_end;
    write_end.kind = HandleKind::kPipeWrite;
    write_end.fd.reset(ends[1]);
    uint32_t r = AddHandle(std::move(read_end));
    uint32_t w = AddHandle(std::move(write_end));
    audit.target = "handles " + std::to_string(r) + ", " + std::to_string(w);
    return ResultObject([&](JsonWriter& writer) {
      WriteJsonKey(writer, "r");
      writer.Uint(r);
      WriteJsonKey(writer, "w");
      writer.Uint(w);
    });
  }

  Outcome Temp(const RequestParams& params, Audit& audit) {
    if (Status status = params.ExpectOnly({}); !status.ok()) return VfsdError::FromStatus(status);
    audit.rule = "no project path";
    if (std::optional<VfsdError> full = CheckHandleRoom(1)) return *full;
    Result<UniqueFd> fd = OpenPrivateTempFile(options_.temp_directory);
    if (!fd.ok()) return VfsdError::FromStatus(fd.status());
    Handle handle;
    handle.kind = HandleKind::kTemp;
    handle.fd = std::move(*fd);
    uint32_t number = AddHandle(std::move(handle));
    audit.target = "handle " + std::to_string(number);
    return HandleResult(number);
  }

  Outcome Seek(const RequestParams& params, Audit& audit) {
    if (Status status = params.ExpectOnly({"h", "offset", "whence"}); !status.ok()) {
      return VfsdError::FromStatus(status);
    }
    Result<Handle*> found = FindHandle(params, audit);
    if (!found.ok()) return HandleError(found.status());
    Handle& handle = **found;
    Result<int64_t> offset = params.Integer("offset");
    if (!offset.ok()) return VfsdError::FromStatus(offset.status());
    std::string whence_name = "set";
    if (params.Has("whence")) {
      Result<std::string> whence = params.String("whence");
      if (!whence.ok()) return VfsdError::FromStatus(whence.status());
      whence_name = *whence;
    }
    int whence = whence_name == "set" ? SEEK_SET : whence_name == "cur" ? SEEK_CUR : whence_name == "end" ? SEEK_END : -1;
    if (whence < 0) {
      return Error(VfsdErrorCode::kArgument,
                   "Invalid params: 'whence' " + Quote(Cut(whence_name)) + " must be \"set\", \"cur\" or \"end\"");
    }
    if (handle.kind == HandleKind::kPipeRead || handle.kind == HandleKind::kPipeWrite) {
      return Error(VfsdErrorCode::kArgument, "Cannot seek handle " + HandleNumberText(params) + ": it is " +
                                                 std::string(HandleKindName(handle.kind)) + ", which has no position");
    }
    uint64_t position = 0;
    if (handle.fd) {
      off_t result = ::lseek(handle.fd.get(), static_cast<off_t>(*offset), whence);
      if (result < 0 && errno == EINVAL) {
        return Error(VfsdErrorCode::kArgument, "Cannot seek handle " + HandleNumberText(params) + " to offset " +
                                                   std::to_string(*offset) + " from " + whence_name +
                                                   ": the position would be negative");
      }
      if (result < 0) return VfsdError::FromStatus(ErrnoToStatus(errno, "Cannot seek " + HandleDescription(handle)));
      position = static_cast<uint64_t>(result);
    } else {
      int64_t base = 0;
      if (whence == SEEK_CUR) base = static_cast<int64_t>(handle.offset);
      if (whence == SEEK_END) {
        Result<FileMetadata> metadata = store_.WithoutSymlinks().Metadata(handle.resolved_path);
        if (!metadata.ok()) return VfsdError::FromStatus(metadata.status());
        base = static_cast<int64_t>(metadata->size);
      }
      if ((*offset < 0 && base + *offset < 0) || (*offset > 0 && base > INT64_MAX - *offset)) {
        return Error(VfsdErrorCode::kArgument, "Cannot seek handle " + HandleNumberText(params) + " to offset " +
                                                   std::to_string(*offset) + " from " + whence_name +
                                                   ": the position would be out of range");
      }
      handle.offset = static_cast<uint64_t>(base + *offset);
      position = handle.offset;
    }
    return ResultObject([&](JsonWriter& writer) {
      WriteJsonKey(writer, "offset");
      writer.Uint64(position);
    });
  }

  // --- helpers ---------------------------------------------------------------

  // The `path` param, normalized; recorded as the audit target as sent.
  Result<std::string> NormalizedPathParam(const RequestParams& params, Audit& audit) {
    TOOLVFS_ASSIGN_OR_RETURN(std::string raw, params.String("path"));
    audit.target = Cut(raw);
    return NormalizePath(raw);
  }

  Result<std::string> Resolve(const std::string& path) { return store_.ResolvePath(path); }

  // Resolves `path` and judges `access` to where it leads: the path to act
  // on through WithoutSymlinks(), or PermissionDenied.
  Result<std::string> Judge(const std::string& path, FileAccess access, Audit& audit) {
    TOOLVFS_ASSIGN_OR_RETURN(std::string resolved, Resolve(path));
    audit.allowed = false;
    TOOLVFS_RETURN_IF_ERROR(allowlist_->Check(access, resolved, audit.rule));
    audit.allowed = true;
    return resolved;
  }

  // stat and list: a path that may be read, or a directory on the way to
  // an allowed prefix (which shows only what leads there).
  Status CheckLookAt(const std::string& resolved, Audit& audit) {
    audit.allowed = false;
    if (allowlist_->IsAncestorOfAllowed(resolved)) {
      audit.rule = "on the way to an allowed prefix";
    } else {
      TOOLVFS_RETURN_IF_ERROR(allowlist_->Check(FileAccess::kRead, resolved, audit.rule));
    }
    audit.allowed = true;
    return OkStatus();
  }

  std::optional<VfsdError> CheckHandleRoom(size_t needed) const {
    if (handles_.size() + needed <= options_.max_handles) return std::nullopt;
    return Error(VfsdErrorCode::kLimit, "Too many open handles: the limit is " + std::to_string(options_.max_handles) +
                                            " (--max-handles); close some first");
  }

  uint32_t AddHandle(Handle handle) {
    uint32_t number = next_handle_++;
    handles_.emplace(number, std::move(handle));
    return number;
  }

  static Outcome HandleResult(uint32_t number) {
    return ResultObject([&](JsonWriter& writer) {
      WriteJsonKey(writer, "handle");
      writer.Uint(number);
    });
  }

  static std::string HandleNumberText(const RequestParams& params) {
    Result<int64_t> number = params.Integer("h");
    return number.ok() ? std::to_string(*number) : "?";
  }

  // The handle `h` names. InvalidArgument for a missing or mistyped `h`;
  // NotFound (answered as E_CLOSED) for one that is not open.
  Result<Handle*> FindHandle(const RequestParams& params, Audit& audit) {
    TOOLVFS_ASSIGN_OR_RETURN(int64_t number, params.Integer("h"));
    audit.target = "handle " + std::to_string(number);
    auto found = number > 0 && number <= INT64_C(0xffffffff) ? handles_.find(static_cast<uint32_t>(number)) : handles_.end();
    if (found == handles_.end()) {
      std::string why = number > 0 && static_cast<uint64_t>(number) < next_handle_ ? "it is closed" : "no such handle was opened";
      return NotFoundError("Handle " + std::to_string(number) + " is not open: " + why);
    }
    if (!found->second.path.empty()) audit.target += " " + Cut(found->second.path);
    audit.rule = "open handle";
    audit.allowed = true;
    return &found->second;
  }

  static VfsdError HandleError(const Status& status) {
    if (status.code() == StatusCode::kNotFound) return Error(VfsdErrorCode::kClosed, status.message());
    return VfsdError::FromStatus(status);
  }

  static std::string HandleDescription(const Handle& handle) {
    if (!handle.path.empty()) return DisplayPath(handle.path);
    return std::string(HandleKindName(handle.kind));
  }

  // Puts a write handle's staged bytes in place: one atomic store write,
  // judged again (under the allowlist it was opened with) in case the tree
  // changed since the open.
  Status Commit(Handle& handle, Audit& audit) {
    return RetryWhileChanged([&]() -> Status {
      TOOLVFS_ASSIGN_OR_RETURN(std::string resolved, Resolve(handle.path));
      audit.allowed = false;
      TOOLVFS_RETURN_IF_ERROR(handle.allowlist->Check(FileAccess::kWrite, resolved, audit.rule));
      audit.allowed = true;
      ProjectFiles& judged = store_.WithoutSymlinks();
      if (::lseek(handle.fd.get(), 0, SEEK_SET) < 0) return ErrnoToStatus(errno, "Cannot rewind the staged write");
      Status written = judged.WriteFromDescriptor(resolved, handle.fd.get(), handle.mode);
      if (written.code() != StatusCode::kUnsupported) return written;
      struct stat status;
      if (::fstat(handle.fd.get(), &status) != 0) return ErrnoToStatus(errno, "Cannot stat the staged write");
      TOOLVFS_ASSIGN_OR_RETURN(std::string content,
                               ReadToEnd(handle.fd.get(), static_cast<uint64_t>(status.st_size),
                                         "the staged write of " + DisplayPath(handle.path),
                                         static_cast<uint64_t>(status.st_size)));
      return judged.Write(resolved, content, handle.mode);
    });
  }

  static Outcome StatResult(std::string_view kind, uint64_t size, std::string_view mode, int64_t modified_ms,
                            const std::string* path) {
    return ResultObject([&](JsonWriter& writer) {
      WriteJsonKey(writer, "kind");
      writer.String(kind);
      WriteJsonKey(writer, "size");
      writer.Uint64(size);
      WriteJsonKey(writer, "mode");
      writer.String(mode);
      WriteJsonKey(writer, "modified");
      writer.String(FormatTimestamp(modified_ms));
      if (path != nullptr) {
        WriteJsonKey(writer, "path");
        writer.String(*path);
      }
    });
  }

  static std::string AnswerJson(const std::optional<std::string>& id, const Outcome& outcome) {
    rapidjson::StringBuffer buffer;
    if (const std::string* result = std::get_if<std::string>(&outcome)) {
      // The result object is already JSON: appended as it is (RapidJSON's
      // RawValue copies byte by byte, the largest cost of a 1 MiB read).
      if (id) AppendJsonString(buffer, *id);
      std::string answer;
      answer.reserve(buffer.GetSize() + result->size() + 32);
      answer += R"({"id":)";
      answer += id ? JsonView(buffer) : std::string_view("null");
      answer += R"(,"ok":true,"result":)";
      answer += *result;
      answer += '}';
      return answer;
    }
    JsonWriter writer(buffer);
    writer.StartObject();
    WriteJsonKey(writer, "id");
    if (id) {
      writer.String(*id);
    } else {
      writer.Null();
    }
    const VfsdError& error = std::get<VfsdError>(outcome);
    WriteJsonKey(writer, "ok");
    writer.Bool(false);
    WriteJsonKey(writer, "error");
    writer.StartObject();
    WriteJsonKey(writer, "code");
    writer.String(VfsdErrorCodeName(error.code));
    WriteJsonKey(writer, "message");
    writer.String(error.message);
    writer.EndObject();
    writer.EndObject();
    return JsonText(buffer);
  }

  void Record(const std::string& op, const Audit& audit, const Outcome& outcome, uint64_t bytes_in, uint64_t bytes_out,
              std::chrono::steady_clock::time_point started) {
    if (options_.audit == nullptr) return;
    AuditRecord record;
    record.timestamp_ms = NowMilliseconds();
    record.tool = "vfsd";
    record.call_id = options_.call_id;
    record.method = op.empty() ? "vfsd" : "vfsd." + Cut(op);
    record.target = audit.target;
    if (const VfsdError* error = std::get_if<VfsdError>(&outcome)) {
      // As the protocol host records them (host/request_audit.h): an op
      // the allowlist allowed that failed later keeps its allowing rule;
      // one refused before or by a decision is a denial saying why.
      bool allowed_then_failed = audit.allowed && error->code != VfsdErrorCode::kPermission;
      record.decision = allowed_then_failed ? AuditDecision::kAllow : AuditDecision::kDeny;
      record.rule = allowed_then_failed || (error->code == VfsdErrorCode::kPermission && !audit.rule.empty())
                        ? audit.rule
                        : "refused: " + std::string(VfsdErrorCodeName(error->code));
      record.code = AuditCodeOf(error->code);
    } else {
      record.decision = AuditDecision::kAllow;
      record.rule = audit.rule;
    }
    record.bytes_in = bytes_in;
    record.bytes_out = bytes_out;
    record.duration_us = static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - started).count());
    options_.audit->Record(record);
  }

  ProjectFiles& store_;
  VfsdOptions options_;
  std::shared_ptr<const Allowlist> allowlist_;
  std::map<uint32_t, Handle> handles_;
  uint64_t staged_bytes_ = 0;  // the sum of the open handles' staged_bytes
  uint64_t next_handle_ = 1;  // handles are never reused within a session
  std::string read_buffer_;   // see Read
};

}  // namespace

Result<std::unique_ptr<VfsdSession>> NewVfsdSession(ProjectFiles& store, const VfsdOptions& options) {
  if (options.read_max == 0 || options.read_max > kMaxReadMax) {
    return InvalidArgumentError("Invalid read limit " + std::to_string(options.read_max) +
                                ": it must be between 1 and " + std::to_string(kMaxReadMax) + " bytes");
  }
  if (options.max_handles == 0) return InvalidArgumentError("Invalid handle limit 0: it must be at least 1");
  TOOLVFS_ASSIGN_OR_RETURN(Allowlist allowlist, Allowlist::Create(options.allow, options.read_only));
  return std::unique_ptr<VfsdSession>(new Session(store, options, std::move(allowlist)));
}

Status ServeVfsd(VfsdSession& session, int input, int output, uint64_t max_frame_bytes) {
  // A pipe holds 64 KiB by default: a 1 MiB read's answer would cross it in
  // 22 hand-overs between the daemon and its client. Larger where the
  // system allows (pipe-max-size, 1 MiB by default); not an error where
  // not, nor on a socket, which fails F_SETPIPE_SZ.
  ::fcntl(output, F_SETPIPE_SZ, kAnswerPipeBytes);
  FrameReader reader(input, max_frame_bytes);
  while (true) {
    TOOLVFS_ASSIGN_OR_RETURN(Frame frame, reader.Next());
    std::string answer;
    if (frame.kind == Frame::Kind::kEnd) return OkStatus();
    if (frame.kind == Frame::Kind::kTooLarge) {
      answer = session.AnswerOversizedFrame(frame.length, max_frame_bytes);
    } else {
      answer = session.Answer(frame.payload);
    }
    std::string encoded = EncodeFrame(answer);
    size_t done = 0;
    while (done < encoded.size()) {
      ssize_t written = WriteWithoutSigpipe(output, encoded.data() + done, encoded.size() - done);
      if (written < 0 && errno == EPIPE) return OkStatus();  // the client is gone
      if (written < 0) return ErrnoToStatus(errno, "Cannot write an answer to the vfsd client");
      done += static_cast<size_t>(written);
    }
  }
}

}  // namespace toolvfs
