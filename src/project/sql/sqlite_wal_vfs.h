// The SQLite store's VFS: SQLite's default one, except that the frames a
// commit appends to the write-ahead log reach the kernel in one write.
//
// Why: SQLite writes each WAL frame as two write calls (its 24-byte header,
// then the page), so a commit of four pages is eight system calls; one call
// of the same bytes costs a third of the time (docs/stores.md, "One write
// call per commit"). The database file, the WAL index, locks and syncs stay
// the default VFS's: this one only decides when appended WAL bytes go out.
//
// What keeps it safe:
// - Only appends are held: bytes written past everything this connection
//   wrote since it took the WAL's write lock. A frame rewritten in place
//   or a checksum rewritten after a commit (walRewriteChecksums) goes out
//   at once, after what is held.
// - Bytes are held only while this connection holds the write lock (seen
//   on the database file's shared-memory lock calls); they go out before
//   it releases the lock, so frames of a transaction that rolled back never
//   land over another writer's.
// - The held bytes go out as soon as the frame that marks the commit (a
//   nonzero "database size" in its header) is complete, inside SQLite's
//   write of that frame, so a failure (a full disk) fails the commit. They
//   also go out before any read, sync, truncate, size query, file control
//   or close of the WAL, before a write that does not follow them, and
//   before SQLite publishes a commit in the WAL index (its memory barrier),
//   so no reader, in this process or another, can learn of a frame that is
//   not in the file.
#pragma once

namespace toolvfs {

// The name of the VFS to pass to sqlite3_open_v2, registered (not as the
// default) on the first call; nullptr, SQLite's default VFS, if SQLite has
// no default VFS to build on or the registration failed.
const char* SqliteWalVfsName();

}  // namespace toolvfs
