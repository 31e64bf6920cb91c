// The SQLite store's VFS: SQLite's default one, except that the frames a
// commit appends to the write-ahead log reach the kernel in one write.
//
// Why: SQLite writes each WAL frame as two write calls (its 24-byte header,
// then the page), so a commit of four pages is eight system calls; one call
// of the same bytes costs a third of the time (store_bench, docs/stores.md
// "Speed: what to expect"). Nothing else changes: the database file, the
// WAL index and every read, sync, truncate and lock go to the default VFS
// as they would without this one.
//
// The contract that keeps it safe: frames are only held back while they
// cannot be seen. Readers in this and other processes learn of frames from
// the WAL index, which SQLite updates after the commit's last frame is
// written, and this VFS hands the frames to the kernel as soon as the frame
// that marks the commit (a nonzero "database size" in its header) is
// complete. Before any read, sync, truncate, size query, file control or
// close of the WAL, and before a write that does not follow the held bytes,
// the held bytes are written first, so SQLite never sees the file other
// than it would without this VFS. A failed write reports its error at the
// commit, where SQLite would have met it on the frame that failed.
#pragma once

namespace toolvfs {

// The name of the VFS to pass to sqlite3_open_v2, registered (not as the
// default) on the first call; nullptr, SQLite's default VFS, if SQLite has
// no default VFS to build on or the registration failed.
const char* SqliteWalVfsName();

}  // namespace toolvfs
