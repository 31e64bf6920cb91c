// FaultInjectingProjectFiles: a store that fails, refuses writes or stalls
// on demand, over any other store, to test that front ends (the host's
// fs.* handlers, the builtin tools, `toolvfs grep`, embedders' own) answer
// a failing store with a clear error, change nothing half-way and keep
// serving.
//
// It is production code (in toolvfs_project, not under tests/) so that
// embedders can test their own front ends with it; nothing in toolvfs
// itself creates one.
//
// Faults are set and cleared at run time from any thread, while calls are
// running. Every call is counted, then may stall, then may fail; a call
// that fails never reaches the target, so the target is left exactly as it
// was. A failing call answers a one-line message in the store's wording,
// naming the path and the cause ("Cannot write 'a.txt': disk on fire").
//
// The WithoutSymlinks() view (ForwardingProjectFiles) shares the faults and
// the counters: what a front end does through the view is failed and
// counted like what it does through the store. DisplayRoot() is never
// failed or counted.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "project/forwarding_store.h"

namespace toolvfs {

// The ProjectFiles calls, as faults and counters tell them apart.
enum class StoreOperation {
  kRead,
  kReadRange,
  kReadAuthorized,
  kWrite,
  kExists,
  kListDir,
  kResolvePath,
  kMetadata,
  kDelete,
  kRename,
  kGrep,
  kMaterialize,
  kSnapshot,
  kRestore,
  kListSnapshots,
  kDiff,
  kDeleteSnapshot,
};
inline constexpr int kStoreOperationCount = 17;

// "read", "read_range", ..., "materialize", "snapshot", ...,
// "delete_snapshot": for messages and test names.
std::string_view StoreOperationName(StoreOperation operation);

// Whether `operation` changes the store: Write, Delete, Rename; Snapshot,
// Restore and DeleteSnapshot (each a write of the workspace's state, a
// transaction in a database); and Materialize, since what is done in a
// materialized directory reaches the store without passing through the
// wrapper (for the fs store the directory is the root itself).
bool IsWriteOperation(StoreOperation operation);

class FaultInjectingProjectFiles final : public ForwardingProjectFiles {
 public:
  // `target` must outlive this store. No fault is set.
  explicit FaultInjectingProjectFiles(ProjectFiles& target);
  ~FaultInjectingProjectFiles() override;

  // Fails the `n`th call from now on (1: the next one) with `code` and the
  // message "<what the call did>: <cause>"; of `operation` only if given
  // (then other calls do not count towards n). Several may be set at once;
  // each fails one call. `n` 0 is taken as 1.
  void FailNthCall(uint64_t n, StatusCode code, std::string cause,
                   std::optional<StoreOperation> operation = std::nullopt);

  // Fails every write (IsWriteOperation) with `code` and `cause` until
  // ClearFaults(); reads still work, as on a disk that is full.
  void FailWrites(StatusCode code, std::string cause);

  // While read-only, every write fails with PermissionDenied
  // "Cannot write 'a.txt': the store is read-only" (EROFS's code in
  // ErrnoToStatus, so a tool sees what a read-only mount gives it).
  void SetReadOnly(bool read_only);

  // Every call (of `operation` if given) blocks from now on: for
  // `duration` each if given, and in any case until ReleaseStalls() or
  // ClearFaults(). A stalled call then goes on as usual (it may still
  // fail). The destructor releases stalled calls too, but they must return
  // before the store is gone.
  void StallCalls(std::optional<StoreOperation> operation = std::nullopt,
                  std::optional<std::chrono::milliseconds> duration = std::nullopt);
  // Lets every stalled call go on and stops stalling new ones.
  void ReleaseStalls();
  // Waits until at least `count` calls are stalled at once, or `timeout`
  // passes; whether they were. For tests: the stall has taken hold.
  bool WaitForStalledCalls(uint64_t count, std::chrono::milliseconds timeout);

  // Removes every fault (failures, read-only, stalls) and releases stalled
  // calls. Counters are kept.
  void ClearFaults();

  // Calls since construction, through the store and its view, failed ones
  // included; of one operation; the ones that failed by a fault here; the
  // ones stalled right now.
  uint64_t calls() const;
  uint64_t calls(StoreOperation operation) const;
  uint64_t failed_calls() const;
  uint64_t stalled_calls() const;

  Result<std::string> Read(std::string_view path) override;
  Result<FileRange> ReadRange(std::string_view path, uint64_t offset,
                              std::optional<uint64_t> length) override;
  Result<FileRange> ReadAuthorized(std::string_view path, std::optional<ByteRange> range,
                                   const ReadAuthorizer& authorize) override;
  Status Write(std::string_view path, std::string_view content, WriteMode mode = WriteMode::kOverwrite) override;
  // Streaming counts as what it is: a read (kRead) and a write (kWrite).
  Result<UniqueFd> OpenForStreaming(std::string_view path) override;
  Status WriteFromDescriptor(std::string_view path, int source, WriteMode mode) override;
  Result<bool> Exists(std::string_view path) override;
  Result<std::vector<DirEntry>> ListDir(std::string_view path) override;
  Result<std::string> ResolvePath(std::string_view path) override;
  Result<FileMetadata> Metadata(std::string_view path) override;
  Status Delete(std::string_view path, bool recursive = false) override;
  Status Rename(std::string_view from, std::string_view to, bool overwrite = false) override;
  Result<GrepResult> Grep(std::string_view pattern, const GrepOptions& options) override;
  Result<std::unique_ptr<MaterializedView>> Materialize() override;
  Result<std::string> Snapshot(std::optional<std::string_view> label = std::nullopt) override;
  Status Restore(std::string_view id) override;
  Result<std::vector<SnapshotInfo>> ListSnapshots() override;
  Result<TreeDiff> Diff(std::string_view from, std::optional<std::string_view> to = std::nullopt) override;
  Status DeleteSnapshot(std::string_view id) override;

 protected:
  std::unique_ptr<ProjectFiles> NewWithoutSymlinksView(ProjectFiles& target_view) override;

 private:
  struct State;  // the faults and counters, shared with the view

  // The view over `target` (the target's WithoutSymlinks()), sharing `state`.
  FaultInjectingProjectFiles(ProjectFiles& target, std::shared_ptr<State> state);

  // Counts the call, stalls it if asked, and returns the fault it meets
  // (OK: none). `path` and `to` name what the call acts on, for the message
  // (for Diff: the two snapshot ids, `to` absent for the live state).
  Status Admit(StoreOperation operation, std::string_view path,
               std::optional<std::string_view> to = std::nullopt);

  std::shared_ptr<State> state_;
};

}  // namespace toolvfs
