// Advisory locks that mark a file or directory as in use by a live toolvfs
// process, so that a later process can tell what a dead one left behind (a
// host killed in the middle of a write, a crash loop) from work in
// progress, and remove only the former. The kernel drops a flock(2) lock
// when the last descriptor of its open file goes, however the process
// ended, so "nobody holds the lock" means "nobody is using it".
#pragma once

#include <chrono>
#include <string_view>

#include "core/status.h"

namespace toolvfs {

// How long an unlocked entry must have been left unmodified before it counts
// as abandoned: it covers the moment between creating an entry and locking
// it, in which it is unlocked but in use.
inline constexpr std::chrono::seconds kAbandonedAfter{60};

// How long LockInUse waits for another holder. toolvfs holds these locks
// for one write at a time; a holder that keeps one longer is another
// program using flock on a project file, and waiting for it without end
// would hang the request (and a session loop that serves it inline).
inline constexpr std::chrono::seconds kInUseLockWait{10};

// Takes flock(LOCK_EX) on `fd`, waiting up to kInUseLockWait for other
// holders. ResourceExhausted naming `what` and the wait if it stays held.
Status LockInUse(int fd, std::string_view what);

// Whether the entry `name` of the directory `directory` was left behind by a
// process that is gone: a regular file or directory (never a symlink), owned
// by this process's effective uid, modified more than kAbandonedAfter ago,
// and locked by nobody. An entry that cannot be examined is not abandoned.
bool IsAbandoned(int directory, const char* name);

}  // namespace toolvfs
