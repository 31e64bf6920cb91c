// libnettle, opened on first use (core/lazy_library.h; docs/install.md,
// "Libraries loaded on first use"): only the SQL stores hash content
// (content_hash.cc), and a process that never opens one (a `toolvfs mcp`
// serving a directory) saves the 240 KB resident the library costs loaded.
// nettle_library.cc defines the three nettle_sha256_* functions
// content_hash.cc calls, each forwarding to the library.
//
// Hashing cannot fail, so the library is loaded with the SQL engines'
// own: the forwarding sqlite3_open_v2 (sqlite_library.cc) and LoadLibpq
// (libpq_library.cc) load it too and fail, naming it, when it cannot be,
// so no store exists to hash content without it. Reached without it
// anyway (a bug), the forwarding functions end the process with that
// error on stderr rather than compute a wrong address.
#pragma once

#include "core/status.h"

namespace toolvfs {

// Opens libnettle if not done yet: OK, or NotFound naming the file and why.
Status LoadNettle();

}  // namespace toolvfs
