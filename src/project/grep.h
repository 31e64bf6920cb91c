// The grep engine shared by every backend (SPEC.md §2.3).
//
// A backend describes its tree through GrepTree; RunGrep walks it in
// parallel, applies the ignore rules, searches each file with RE2 behind a
// literal prefilter and returns the deterministic GrepResult of
// ProjectFiles::Grep. Backends with an index may answer differently, but
// must return exactly what RunGrep returns.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "project/project_files.h"

namespace toolvfs {

// A NUL byte in this many leading bytes makes a file binary (SPEC.md §2.3).
inline constexpr size_t kBinaryProbeBytes = 8 * 1024;

// Whether `content` (a file's content, or a prefix of it at least
// kBinaryProbeBytes long) is that of a binary file.
bool LooksBinary(std::string_view content);

// A file of a GrepTree open for reading, start to end. Used by one thread
// at a time; destroying it closes the file, at any point of the reading.
class GrepFileReader {
 public:
  virtual ~GrepFileReader() = default;

  // Reads the next bytes of the file into `data`, at most `size` (> 0).
  // Returns how many it read, which may be fewer than `size` before the
  // end, and 0 at the end. An error (EIO...) ends the reading.
  virtual Result<size_t> Read(char* data, size_t size) = 0;
};

// A read-only view of a project tree. Called from several threads at once.
class GrepTree {
 public:
  // A directory entry; its kind is the entry's own: a symlink is kSymlink,
  // never followed (unlike ProjectFiles::ListDir).
  using Entry = DirEntry;

  // An open file: a reader of its bytes or, for a tree that holds the
  // content in memory, the content itself (searched without a copy).
  struct File {
    std::unique_ptr<GrepFileReader> reader;  // null when `content` is the file
    std::string_view content;                // valid for the whole search
  };

  virtual ~GrepTree() = default;

  // Entries of the directory at normalized `path` (any order), without
  // following symlinks among them: a symlink entry is kSymlink. Symlinks
  // in `path` itself are followed if they stay inside the root (a directory
  // named in GrepOptions::paths may be one). NotFound / NotDirectory /
  // PermissionDenied.
  virtual Result<std::vector<Entry>> List(std::string_view path) = 0;

  // Kind of normalized `path`, following symlinks that stay inside the
  // root (escaping ones fail with PermissionDenied). Used for the entries
  // of GrepOptions::paths only.
  virtual Result<EntryKind> Resolve(std::string_view path) = 0;

  // Opens the file at normalized `path` for reading. `follow_symlinks` is
  // about the file itself (directories above it are followed as in List):
  // true only for files named in GrepOptions::paths; a walked file that
  // became a symlink fails. The engine reads a file in chunks of 64 KiB,
  // searching each as it arrives, and may stop early: after a NUL byte in
  // the first kBinaryProbeBytes (a binary file, skipped), or once
  // max_matches leaves nothing to look for in the rest.
  virtual Result<File> OpenFile(std::string_view path, bool follow_symlinks) = 0;
};

// The bytes `line` adds to the JSON of a grep result (protocol/grep_json.h)
// as fs.grep and `toolvfs grep --json` write it, its separating comma
// included: what GrepOptions::max_result_bytes counts.
uint64_t GrepLineJsonBytes(const GrepLine& line);

// The same for a file with its lines: the result's "matches" array holds
// at most the sum of these over its files (and the two brackets).
uint64_t GrepFileJsonBytes(const GrepFileMatches& file);

// ResourceExhausted for a search that found no room in `budget`
// (GrepOptions::memory_budget), naming its limit.
Status GrepOutOfMemoryError(const MemoryBudget& budget);

// Runs a search over `tree`. InvalidArgument for a bad pattern or a bad
// entry in options.paths / options.extensions; the error of an entry of
// options.paths that cannot be resolved (NotFound, PermissionDenied...).
// Entries met while walking that cannot be listed or read (vanished,
// unreadable, turned into a symlink) are skipped, like ripgrep does, and
// so are names that are not valid project paths (control characters,
// invalid UTF-8). Entries of options.paths are normalized here; a file
// reached through two of them is reported once.
//
// Details of the options:
//  - extensions: a walked file matches "rs" or ".rs" if its name ends in
//    ".rs" (exact case), so "tar.gz" works too; an empty entry is invalid.
//  - max_matches: the first max_matches matching lines in (path, line)
//    order are kept with their context; lines after the last kept match
//    within its context are shown as context even if they match (like GNU
//    grep -m), so exactly max_matches lines have is_match set.
//  - ignore files: .gitignore and .ignore (ignore.h) in every walked
//    directory and, for a directory named in options.paths, in the
//    directories above it; honored even when there is no .git directory.
//
//  - max_result_bytes: files and lines are added in (path, line) order
//    while they fit (GrepFileJsonBytes); a file is collected only up to
//    that size, and the search stops at the first line that does not fit.
//  - file_sink: files go to it in path order as they become final (no
//    file before them can still be found), not into the result. A worker
//    does not start new work while more than 16 MiB of found files wait
//    for an earlier one, except the work they wait for, so the memory a
//    search holds is about that plus the largest file's lines.
//  - memory_budget: every collected line is reserved from it (its content
//    and bookkeeping) until the file is handed over; a search that finds
//    no room fails with ResourceExhausted naming the budget.
//
// Runs on max(2, hardware threads) threads; the result does not depend on
// their timing.
Result<GrepResult> RunGrep(GrepTree& tree, std::string_view pattern,
                           const GrepOptions& options);

}  // namespace toolvfs
