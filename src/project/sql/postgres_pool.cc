#include "project/sql/postgres_pool.h"

#include <algorithm>
#include <utility>

namespace toolvfs {

PostgresPool::PostgresPool(std::string conninfo, std::string display, int max_connections)
    : conninfo_(std::move(conninfo)), display_(std::move(display)), max_connections_(std::max(1, max_connections)) {}

PostgresPool::Lease::~Lease() {
  if (connection_ != nullptr) pool_.GiveBack(std::move(connection_));
}

Result<PostgresPool::Lease> PostgresPool::Acquire() {
  {
    std::unique_lock<std::mutex> lock(mutex_);
    given_back_.wait(lock, [&] { return !idle_.empty() || open_ < max_connections_; });
    while (!idle_.empty()) {
      std::unique_ptr<PostgresConnection> connection = std::move(idle_.back());
      idle_.pop_back();
      if (connection->StillConnected()) return Lease(*this, std::move(connection));
      // The server closed it while idle (a restart): a fresh one instead,
      // so a request after the server is back does not fail on it.
      --open_;
    }
    ++open_;  // reserves the slot while connecting outside the lock
  }
  // Connecting takes a round trip or more (up to the connect timeout);
  // other threads keep using the idle connections meanwhile.
  Result<std::unique_ptr<PostgresConnection>> opened = PostgresConnection::Open(conninfo_, display_);
  if (!opened.ok()) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      --open_;
    }
    given_back_.notify_one();
    return opened.status();
  }
  return Lease(*this, std::move(*opened));
}

void PostgresPool::GiveBack(std::unique_ptr<PostgresConnection> connection) {
  const bool reusable = connection->reusable();
  if (!reusable) connection.reset();  // closes it outside the lock
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (reusable) {
      idle_.push_back(std::move(connection));
    } else {
      --open_;
    }
  }
  given_back_.notify_one();
}

int PostgresPool::open_count() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return open_;
}

}  // namespace toolvfs
