// The connections one process keeps to one PostgreSQL server, shared by
// its threads: a thread leases a connection for one operation and gives it
// back at once (never while waiting for a tool), so a few connections serve
// many threads. A connection the server dropped (a restart) or that was
// left inside a transaction is not given out again: the next lease opens a
// fresh one, which is how the store reconnects by itself.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/status.h"
#include "project/sql/postgres_database.h"

namespace toolvfs {

class PostgresPool {
 public:
  // `conninfo` and `display` as for PostgresConnection::Open; at most
  // `max_connections` (at least 1) are open at once.
  PostgresPool(std::string conninfo, std::string display, int max_connections);
  PostgresPool(const PostgresPool&) = delete;
  PostgresPool& operator=(const PostgresPool&) = delete;

  // A connection of the pool, given back when the lease ends.
  class Lease {
   public:
    Lease(Lease&& other) noexcept : pool_(other.pool_), connection_(std::move(other.connection_)) {}
    Lease& operator=(Lease&&) = delete;
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease();
    PostgresConnection& operator*() const { return *connection_; }
    PostgresConnection* operator->() const { return connection_.get(); }

   private:
    friend class PostgresPool;
    Lease(PostgresPool& pool, std::unique_ptr<PostgresConnection> connection)
        : pool_(pool), connection_(std::move(connection)) {}
    PostgresPool& pool_;
    std::unique_ptr<PostgresConnection> connection_;
  };

  // An idle connection that is still connected (one the server closed
  // while idle is dropped: PostgresConnection::StillConnected), or a new
  // one while fewer than max_connections are open; otherwise waits for one
  // to be given back. Fails with the
  // connection's error when a new one cannot be opened.
  Result<Lease> Acquire();

  // Connections open now (leased and idle); for tests and diagnostics.
  int open_count() const;

 private:
  void GiveBack(std::unique_ptr<PostgresConnection> connection);

  const std::string conninfo_;
  const std::string display_;
  const int max_connections_;
  mutable std::mutex mutex_;
  std::condition_variable given_back_;
  std::vector<std::unique_ptr<PostgresConnection>> idle_;
  int open_ = 0;  // leased + idle + being opened
};

}  // namespace toolvfs
