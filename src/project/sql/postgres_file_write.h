// The common write of the postgres store in one round trip (docs/stores.md,
// "Round trips"): a whole small file overwritten, or created in a
// directory that exists, as one transaction sent in one pipeline.
#pragma once

#include <atomic>
#include <cstdint>

#include "core/status.h"
#include "project/sql/postgres_database.h"
#include "project/sql/sql_connection.h"

namespace toolvfs {

// What WritePostgresFile did.
enum class PostgresFileWrite {
  kWritten,      // written, with the rows, version and reference counts the shared WriteFile leaves
  kLeft,         // not this write's case, or a lost race: nothing changed; the shared path takes it
  kUnsupported,  // the engine refuses the statement (SQLSTATE class 0A: CockroachDB allows one
                 // modification of a table per statement): nothing changed; the shared path takes
                 // this write and every later one on this database
};

// Which statement a write tries first: the one for both cases, or the one
// that only creates, which costs the server about half as much but leaves
// an existing file to a second try. A write expects to create when the
// last one of its database did (writes come in runs: a tree created, then
// files edited); a wrong guess costs one more round trip, never a wrong
// result. Shared by the threads of one database; a hint, so relaxed.
class PostgresWriteGuess {
 public:
  bool ExpectCreate() const;
  void Saw(bool created);

 private:
  std::atomic<bool> expect_create_{false};
};

// Writes `write` (SqlDatabase::WriteFileDirectly) on `connection` when the
// common case applies: content of at most kChunkBytes, and the path a file
// (not for create_only) whose old content is stored whole or has other
// references, or missing with its parent a directory (or the root). A lost
// race (a serialization failure, a deadlock, a duplicate key) is kLeft:
// the shared path retries races with backoff. Other failures (the server
// unavailable, ...) are returned. `guess` picks the first statement and
// learns from what the write did.
Result<PostgresFileWrite> WritePostgresFile(PostgresConnection& connection, const SqlFileWrite& write,
                                            PostgresWriteGuess& guess);

// How many writes WritePostgresFile made in this process since it started
// (every database), and how many of them by the statement that only
// creates: how tests see which way a write took.
uint64_t PostgresWritesInOneRoundTrip();
uint64_t PostgresCreatesInOneRoundTrip();

}  // namespace toolvfs
