#include "project/fault_injecting_store.h"

#include <array>
#include <condition_variable>
#include <mutex>
#include <utility>
#include <vector>

#include "core/text.h"
#include "project/store_errors.h"

namespace toolvfs {

std::string_view StoreOperationName(StoreOperation operation) {
  switch (operation) {
    case StoreOperation::kRead: return "read";
    case StoreOperation::kReadRange: return "read_range";
    case StoreOperation::kReadAuthorized: return "read_authorized";
    case StoreOperation::kWrite: return "write";
    case StoreOperation::kExists: return "exists";
    case StoreOperation::kListDir: return "list_dir";
    case StoreOperation::kResolvePath: return "resolve_path";
    case StoreOperation::kMetadata: return "metadata";
    case StoreOperation::kDelete: return "delete";
    case StoreOperation::kRename: return "rename";
    case StoreOperation::kGrep: return "grep";
    case StoreOperation::kMaterialize: return "materialize";
    case StoreOperation::kSnapshot: return "snapshot";
    case StoreOperation::kRestore: return "restore";
    case StoreOperation::kListSnapshots: return "list_snapshots";
    case StoreOperation::kDiff: return "diff";
    case StoreOperation::kDeleteSnapshot: return "delete_snapshot";
  }
  return "unknown";
}

bool IsWriteOperation(StoreOperation operation) {
  switch (operation) {
    case StoreOperation::kWrite:
    case StoreOperation::kDelete:
    case StoreOperation::kRename:
    case StoreOperation::kMaterialize:
    case StoreOperation::kSnapshot:
    case StoreOperation::kRestore:
    case StoreOperation::kDeleteSnapshot: return true;
    // Listed one by one, so a new operation makes the compiler ask which it is.
    case StoreOperation::kRead:
    case StoreOperation::kReadRange:
    case StoreOperation::kReadAuthorized:
    case StoreOperation::kExists:
    case StoreOperation::kListDir:
    case StoreOperation::kResolvePath:
    case StoreOperation::kMetadata:
    case StoreOperation::kGrep:
    case StoreOperation::kListSnapshots:
    case StoreOperation::kDiff: return false;
  }
  return false;
}

namespace {

// "Cannot write 'a.txt'": what the call was doing, in the stores' wording.
std::string WhatFailed(StoreOperation operation, std::string_view path, std::optional<std::string_view> to) {
  switch (operation) {
    case StoreOperation::kRead:
    case StoreOperation::kReadRange:
    case StoreOperation::kReadAuthorized: return CannotDo("read", path);
    case StoreOperation::kWrite: return CannotDo("write", path);
    case StoreOperation::kExists: return CannotDo("check", path);
    case StoreOperation::kListDir: return CannotDo("list", path);
    case StoreOperation::kResolvePath: return CannotDo("resolve", path);
    case StoreOperation::kMetadata: return CannotDo("get metadata of", path);
    case StoreOperation::kDelete: return CannotDo("delete", path);
    case StoreOperation::kRename: return CannotRename(path, to.value_or(""));
    case StoreOperation::kGrep: return "Cannot search the project for " + Quote(path);
    case StoreOperation::kMaterialize: return "Cannot materialize the project";
    case StoreOperation::kSnapshot: return "Cannot take a snapshot of the project";
    case StoreOperation::kRestore: return "Cannot restore snapshot " + Quote(path);
    case StoreOperation::kListSnapshots: return "Cannot list the snapshots of the project";
    case StoreOperation::kDiff:
      return "Cannot compare snapshot " + Quote(path) + " with " +
             (to ? "snapshot " + Quote(*to) : std::string("the live workspace"));
    case StoreOperation::kDeleteSnapshot: return "Cannot delete snapshot " + Quote(path);
  }
  return "Cannot use the project";
}

}  // namespace

struct FaultInjectingProjectFiles::State {
  struct NthCallFault {
    uint64_t remaining;  // matching calls until it fires, this one included
    std::optional<StoreOperation> operation;
    StatusCode code;
    std::string cause;
  };

  mutable std::mutex mutex;
  std::condition_variable stall_changed;
  std::vector<NthCallFault> nth_call_faults;
  std::optional<std::pair<StatusCode, std::string>> write_fault;
  bool read_only = false;
  bool stalling = false;
  std::optional<StoreOperation> stall_operation;
  std::optional<std::chrono::milliseconds> stall_duration;
  // Bumped by every release, so a call stalled before it goes on even if
  // a new stall is set before it wakes up.
  uint64_t release_generation = 0;
  std::array<uint64_t, kStoreOperationCount> calls{};
  uint64_t failed = 0;
  uint64_t stalled = 0;

  void ReleaseLocked() {
    stalling = false;
    ++release_generation;
    stall_changed.notify_all();
  }
};

FaultInjectingProjectFiles::FaultInjectingProjectFiles(ProjectFiles& target)
    : FaultInjectingProjectFiles(target, std::make_shared<State>()) {}

FaultInjectingProjectFiles::FaultInjectingProjectFiles(ProjectFiles& target, std::shared_ptr<State> state)
    : ForwardingProjectFiles(target), state_(std::move(state)) {}

FaultInjectingProjectFiles::~FaultInjectingProjectFiles() { ReleaseStalls(); }

std::unique_ptr<ProjectFiles> FaultInjectingProjectFiles::NewWithoutSymlinksView(ProjectFiles& target_view) {
  return std::unique_ptr<ProjectFiles>(new FaultInjectingProjectFiles(target_view, state_));
}

void FaultInjectingProjectFiles::FailNthCall(uint64_t n, StatusCode code, std::string cause,
                                             std::optional<StoreOperation> operation) {
  std::lock_guard lock(state_->mutex);
  state_->nth_call_faults.push_back({std::max<uint64_t>(n, 1), operation, code, std::move(cause)});
}

void FaultInjectingProjectFiles::FailWrites(StatusCode code, std::string cause) {
  std::lock_guard lock(state_->mutex);
  state_->write_fault.emplace(code, std::move(cause));
}

void FaultInjectingProjectFiles::SetReadOnly(bool read_only) {
  std::lock_guard lock(state_->mutex);
  state_->read_only = read_only;
}

void FaultInjectingProjectFiles::StallCalls(std::optional<StoreOperation> operation,
                                            std::optional<std::chrono::milliseconds> duration) {
  std::lock_guard lock(state_->mutex);
  state_->stalling = true;
  state_->stall_operation = operation;
  state_->stall_duration = duration;
}

void FaultInjectingProjectFiles::ReleaseStalls() {
  std::lock_guard lock(state_->mutex);
  state_->ReleaseLocked();
}

bool FaultInjectingProjectFiles::WaitForStalledCalls(uint64_t count, std::chrono::milliseconds timeout) {
  std::unique_lock lock(state_->mutex);
  return state_->stall_changed.wait_for(lock, timeout, [&] { return state_->stalled >= count; });
}

void FaultInjectingProjectFiles::ClearFaults() {
  std::lock_guard lock(state_->mutex);
  state_->nth_call_faults.clear();
  state_->write_fault.reset();
  state_->read_only = false;
  state_->ReleaseLocked();
}

uint64_t FaultInjectingProjectFiles::calls() const {
  std::lock_guard lock(state_->mutex);
  uint64_t total = 0;
  for (uint64_t count : state_->calls) total += count;
  return total;
}

uint64_t FaultInjectingProjectFiles::calls(StoreOperation operation) const {
  std::lock_guard lock(state_->mutex);
  return state_->calls[static_cast<size_t>(operation)];
}

uint64_t FaultInjectingProjectFiles::failed_calls() const {
  std::lock_guard lock(state_->mutex);
  return state_->failed;
}

uint64_t FaultInjectingProjectFiles::stalled_calls() const {
  std::lock_guard lock(state_->mutex);
  return state_->stalled;
}

Status FaultInjectingProjectFiles::Admit(StoreOperation operation, std::string_view path,
                                         std::optional<std::string_view> to) {
  State& state = *state_;
  std::unique_lock lock(state.mutex);
  ++state.calls[static_cast<size_t>(operation)];

  if (state.stalling && (!state.stall_operation || *state.stall_operation == operation)) {
    const uint64_t generation = state.release_generation;
    ++state.stalled;
    state.stall_changed.notify_all();  // WaitForStalledCalls
    auto released = [&] { return state.release_generation != generation; };
    if (state.stall_duration) {
      state.stall_changed.wait_for(lock, *state.stall_duration, released);
    } else {
      state.stall_changed.wait(lock, released);
    }
    --state.stalled;
  }

  // Every armed nth-call fault this call matches counts it; the first to
  // reach its call fails it, and is used up.
  std::optional<Status> fault;
  for (auto it = state.nth_call_faults.begin(); it != state.nth_call_faults.end();) {
    if (it->operation && *it->operation != operation) {
      ++it;
      continue;
    }
    if (--it->remaining > 0) {
      ++it;
      continue;
    }
    if (!fault) fault = Status(it->code, WhatFailed(operation, path, to) + ": " + it->cause);
    it = state.nth_call_faults.erase(it);
  }
  if (!fault && IsWriteOperation(operation)) {
    if (state.read_only) {
      fault = PermissionDeniedError(WhatFailed(operation, path, to) + ": the store is read-only");
    } else if (state.write_fault) {
      fault = Status(state.write_fault->first, WhatFailed(operation, path, to) + ": " + state.write_fault->second);
    }
  }
  if (!fault) return OkStatus();
  ++state.failed;
  return *std::move(fault);
}

Result<std::string> FaultInjectingProjectFiles::Read(std::string_view path) {
  TOOLVFS_RETURN_IF_ERROR(Admit(StoreOperation::kRead, path));
  return ForwardingProjectFiles::Read(path);
}

Result<FileRange> FaultInjectingProjectFiles::ReadRange(std::string_view path, uint64_t offset,
                                                        std::optional<uint64_t> length) {
  TOOLVFS_RETURN_IF_ERROR(Admit(StoreOperation::kReadRange, path));
  return ForwardingProjectFiles::ReadRange(path, offset, length);
}

Result<FileRange> FaultInjectingProjectFiles::ReadAuthorized(std::string_view path, std::optional<ByteRange> range,
                                                             const ReadAuthorizer& authorize) {
  TOOLVFS_RETURN_IF_ERROR(Admit(StoreOperation::kReadAuthorized, path));
  return ForwardingProjectFiles::ReadAuthorized(path, range, authorize);
}

Status FaultInjectingProjectFiles::Write(std::string_view path, std::string_view content, WriteMode mode) {
  TOOLVFS_RETURN_IF_ERROR(Admit(StoreOperation::kWrite, path));
  return ForwardingProjectFiles::Write(path, content, mode);
}

Result<UniqueFd> FaultInjectingProjectFiles::OpenForStreaming(std::string_view path) {
  TOOLVFS_RETURN_IF_ERROR(Admit(StoreOperation::kRead, path));
  return ForwardingProjectFiles::OpenForStreaming(path);
}

Status FaultInjectingProjectFiles::WriteFromDescriptor(std::string_view path, int source, WriteMode mode) {
  TOOLVFS_RETURN_IF_ERROR(Admit(StoreOperation::kWrite, path));
  return ForwardingProjectFiles::WriteFromDescriptor(path, source, mode);
}

Result<bool> FaultInjectingProjectFiles::Exists(std::string_view path) {
  TOOLVFS_RETURN_IF_ERROR(Admit(StoreOperation::kExists, path));
  return ForwardingProjectFiles::Exists(path);
}

Result<std::vector<DirEntry>> FaultInjectingProjectFiles::ListDir(std::string_view path) {
  TOOLVFS_RETURN_IF_ERROR(Admit(StoreOperation::kListDir, path));
  return ForwardingProjectFiles::ListDir(path);
}

Result<std::string> FaultInjectingProjectFiles::ResolvePath(std::string_view path) {
  TOOLVFS_RETURN_IF_ERROR(Admit(StoreOperation::kResolvePath, path));
  return ForwardingProjectFiles::ResolvePath(path);
}

Result<FileMetadata> FaultInjectingProjectFiles::Metadata(std::string_view path) {
  TOOLVFS_RETURN_IF_ERROR(Admit(StoreOperation::kMetadata, path));
  return ForwardingProjectFiles::Metadata(path);
}

Status FaultInjectingProjectFiles::Delete(std::string_view path, bool recursive) {
  TOOLVFS_RETURN_IF_ERROR(Admit(StoreOperation::kDelete, path));
  return ForwardingProjectFiles::Delete(path, recursive);
}

Status FaultInjectingProjectFiles::Rename(std::string_view from, std::string_view to, bool overwrite) {
  TOOLVFS_RETURN_IF_ERROR(Admit(StoreOperation::kRename, from, to));
  return ForwardingProjectFiles::Rename(from, to, overwrite);
}

Result<GrepResult> FaultInjectingProjectFiles::Grep(std::string_view pattern, const GrepOptions& options) {
  TOOLVFS_RETURN_IF_ERROR(Admit(StoreOperation::kGrep, pattern));
  return ForwardingProjectFiles::Grep(pattern, options);
}

Result<std::unique_ptr<MaterializedView>> FaultInjectingProjectFiles::Materialize() {
  TOOLVFS_RETURN_IF_ERROR(Admit(StoreOperation::kMaterialize, {}));
  return ForwardingProjectFiles::Materialize();
}

Result<std::string> FaultInjectingProjectFiles::Snapshot(std::optional<std::string_view> label) {
  TOOLVFS_RETURN_IF_ERROR(Admit(StoreOperation::kSnapshot, {}));
  return ForwardingProjectFiles::Snapshot(label);
}

Status FaultInjectingProjectFiles::Restore(std::string_view id) {
  TOOLVFS_RETURN_IF_ERROR(Admit(StoreOperation::kRestore, id));
  return ForwardingProjectFiles::Restore(id);
}

Result<std::vector<SnapshotInfo>> FaultInjectingProjectFiles::ListSnapshots() {
  TOOLVFS_RETURN_IF_ERROR(Admit(StoreOperation::kListSnapshots, {}));
  return ForwardingProjectFiles::ListSnapshots();
}

Result<TreeDiff> FaultInjectingProjectFiles::Diff(std::string_view from, std::optional<std::string_view> to) {
  TOOLVFS_RETURN_IF_ERROR(Admit(StoreOperation::kDiff, from, to));
  return ForwardingProjectFiles::Diff(from, to);
}

Status FaultInjectingProjectFiles::DeleteSnapshot(std::string_view id) {
  TOOLVFS_RETURN_IF_ERROR(Admit(StoreOperation::kDeleteSnapshot, id));
  return ForwardingProjectFiles::DeleteSnapshot(id);
}

}  // namespace toolvfs
