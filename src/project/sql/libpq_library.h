// libpq, opened on first use (core/lazy_library.h; docs/install.md,
// "Libraries loaded on first use").
//
// toolvfs is not linked to libpq: libpq_library.cc defines the PQ*
// functions the PostgreSQL engine calls, each forwarding to the library
// opened with dlopen the first time one is called. A process that never
// opens a postgres:// store never loads libpq nor its OpenSSL, GSSAPI and
// LDAP stacks. A PQ* function added to the engine must be added there
// (the link fails until it is).
#pragma once

#include "core/status.h"

namespace toolvfs {

// Opens libpq, and nettle for the store's content hashes
// (nettle_library.h), if not done yet: OK, or the one-line reason one
// cannot be (NotFound naming the file, e.g. when the libpq5 package is
// missing).
// Called where a postgres:// URI is opened, so that this reason, not a
// failed connection, is what the user sees; the forwarding functions would
// otherwise fail as libpq does without a connection (PQconnectdbParams
// returns nullptr, PQerrorMessage this reason).
Status LoadLibpq();

}  // namespace toolvfs
