// The parts of a materialized copy (ProjectFiles::Materialize) that every
// store without a real directory shares: a private temporary directory,
// writing entries into it, reading it back when the view is released, and
// removing it. How the changes found are applied is each store's own (one
// map swap for memory, one transaction for sqlite).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "project/content/content_hash.h"
#include "project/project_files.h"

namespace toolvfs {

// The largest file a materialized copy may hand back to its store: the
// sync holds a file's content in memory while it applies it, and a sparse
// file (truncate -s 2T) must fail the sync with TooLarge, not exhaust the
// host's memory.
inline constexpr uint64_t kMaxSyncedFileBytes = uint64_t{1} << 30;

// The most bytes of changed files one sync may hand back: files are held
// one at a time, but a SQL store writes them all in one transaction (the
// SQLite WAL grows by as much), and the memory store keeps them all.
inline constexpr uint64_t kMaxSyncedTotalBytes = uint64_t{8} << 30;

// A fresh directory, mode 0700, in $TMPDIR (or /tmp), for a copy of the
// store `display`; the error names both.
Result<std::string> MakeMaterializedDirectory(std::string_view display);

// Removes the directory tree at `path` without following symlinks, making
// directories writable first if a plain removal fails (a tool may have made
// one read-only).
Status RemoveTree(const std::string& path);

// Writes into the copy open as `root_fd` (`root` names it in messages).
// Paths are normalized project paths and the directory is private, so
// plain relative paths are safe. Parents are created before children.
Status WriteCopiedDirectory(int root_fd, const std::string& root, const std::string& path);
Status WriteCopiedFile(int root_fd, const std::string& root, const std::string& path, std::string_view content,
                       int64_t modified_ms);
// Sets a directory's modification time; call it after its children exist.
Status SetCopiedDirectoryTime(int root_fd, const std::string& root, const std::string& path, int64_t modified_ms);

// What a copy holds when it is read back: no file's content, so that
// reading back many large files holds none of them (ReadCopiedFile reads
// one when it is applied).
struct CopiedEntry {
  EntryKind kind = EntryKind::kFile;   // kFile or kDirectory
  uint64_t size = 0;                   // files: their size when the walk saw them
  std::optional<ContentHash> address;  // files, with CopiedAddresses::kCompute: the ContentAddress of their bytes
};
using CopiedTree = std::map<std::string, CopiedEntry, std::less<>>;

// Whether ReadCopy reads every file to address its content: the SQL stores
// compare addresses; the memory store has none (and does not load nettle)
// and compares bytes, one file at a time, as it reads them.
enum class CopiedAddresses { kSkip, kCompute };

// Reads the copy at `root` back: every directory and regular file below
// it by project path, with its size and, if asked, its address, streamed
// (one chunk in memory). Symlinks, special files and names that are not
// valid project paths are skipped, never followed: the store cannot hold
// them. TooLarge for a file over kMaxSyncedFileBytes.
Result<CopiedTree> ReadCopy(const std::string& root, CopiedAddresses addresses);

// The content of the file `path` of ReadCopy's tree of the copy at `root`,
// read again to be applied: opened beneath `root` without following any
// symlink, and checked against `entry`. Changed when it is no longer the
// regular file of entry.size bytes (and entry.address) that the walk saw:
// the copy changed while it was synced.
Result<std::string> ReadCopiedFile(const std::string& root, const std::string& path, const CopiedEntry& entry);

// ReadCopiedFile of an entry with an address (CopiedAddresses::kCompute),
// returned with the address it was checked against, computed from the
// bytes returned: a store writes them without hashing them again.
Result<AddressedContent> ReadAddressedCopiedFile(const std::string& root, const std::string& path,
                                                 const CopiedEntry& entry);

// OK while `changed_bytes`, the files one sync hands back to its store so
// far, are within kMaxSyncedTotalBytes; TooLarge otherwise.
Status CheckSyncedTotal(uint64_t changed_bytes);

// The release of a copy at `dir`, the same for every store: `sync_back`
// applies the copy's changes to the store (whole or not at all), then the
// directory is removed. When either step fails the copy is kept and the
// message names it and says whether anything was synced.
Status ReleaseMaterializedCopy(const std::string& dir, const std::function<Status()>& sync_back);

// A change of a copy that its view's CopyChangeFilter refused.
struct RefusedChange {
  std::string path;
  std::string reason;
};

// Whether the change at `path` may be synced back: always without a
// filter; otherwise per `filter`, appending to `refused` when not.
bool CopyChangeAllowed(const CopyChangeFilter* filter, std::string_view path, std::vector<RefusedChange>& refused);

// Says on stderr, one line each, which changes were not synced back and why.
void ReportRefusedChanges(const std::vector<RefusedChange>& refused);

// For a view released by its destructor, which cannot return an error:
// prints a failed release's message (naming the kept copy) on stderr.
void ReportFailedRelease(const Status& release);

}  // namespace toolvfs
