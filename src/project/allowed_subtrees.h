// The largest subtrees of a real project directory in which every entry
// passes a policy check: how a policy with exceptions ("the project, but
// not config/ and no .env anywhere") becomes OS sandbox rules, which can
// only allow (Landlock grants a directory with everything below it).
//
// The sandbox then grants exactly these paths. What it cannot express is
// left out, so the result errs on the side of less: an entry that fails the
// check, a symlink in a directory that is not granted whole (granting it
// would grant its target), and anything below either of them that no other
// prefix covers. Entries created after the walk inside a granted directory
// are covered by that grant, so a tool may create a new file at a path the
// policy denies in a directory it may write; it can never read or change an
// existing one.
//
// Thread safety: a plain function; safe from any thread.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace toolvfs {

struct AllowedSubtreesOptions {
  // Stops the walk: a tree this large fails rather than delaying every
  // launch unboundedly.
  size_t max_entries = 1'000'000;
  // Directories (project paths, "" = the root) never granted whole even
  // when all they hold is allowed, but entry by entry: a grant of the
  // directory itself would let a tool create any name in it, the names
  // the policy refuses included (a writable root: `toolvfs.toml`, `.git`).
  std::vector<std::string> split_directories;
};

// For each of `prefixes` (project paths, "" = the root) that exists under
// the real directory `root`: the prefix itself when `allowed` holds for it
// and for every entry below it; otherwise, recursively, the parts of it that
// do. `allowed(path, is_directory)` gets normalized project paths
// ("src/a.txt") and is asked about every entry at most once per prefix.
// Symlinks are never followed. A directory below a prefix that this process
// cannot open or list (lost+found, another user's volume, one replaced
// mid-walk) is treated like a denied entry: nothing below it is granted.
// Returns project paths, sorted, without duplicates and without a path
// below another returned one. Fails naming the path when `root` or a
// prefix cannot be read, or when more than options.max_entries entries
// would be walked.
Result<std::vector<std::string>> AllowedSubtrees(
    const std::string& root, const std::vector<std::string>& prefixes,
    const std::function<bool(std::string_view path, bool is_directory)>& allowed,
    const AllowedSubtreesOptions& options = {});

// An entry a policy excepts from an allowed prefix: what a sandbox with mount
// masks (sandbox/mount_masks.h) covers instead of granting around it.
struct PolicyException {
  std::string path;  // project path ("" = the root)
  bool is_directory = false;
  dev_t device = 0;
  ino_t inode = 0;
};

// The entries below `prefixes` (project paths, "" = the root; each prefix
// itself too) of the real directory `root` for which `allowed` fails,
// without descending into them: the complement of AllowedSubtrees, for a
// sandbox that grants the prefixes whole and covers these. Also listed,
// because covering a path does not cover its inode: a directory that this
// process cannot open or list, and every other hard link, below the
// prefixes, of a regular file listed (`notes.txt` linked to `.env`).
// Symlinks are never listed nor followed: a grant covers what a symlink
// leads to only if it covers the target too. Sorted by path. Fails as
// AllowedSubtrees does.
Result<std::vector<PolicyException>> PolicyExceptions(
    const std::string& root, const std::vector<std::string>& prefixes,
    const std::function<bool(std::string_view path, bool is_directory)>& allowed,
    const AllowedSubtreesOptions& options = {});

// Whether the project path `path` names an entry (of any kind, symlinks not
// followed) under the real directory `root`; fails naming the path when
// that cannot be told (EACCES, EIO).
Result<bool> ProjectEntryExists(const std::string& root, std::string_view path);

}  // namespace toolvfs
