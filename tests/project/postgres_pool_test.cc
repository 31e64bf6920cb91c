// The connection pool against a real PostgreSQL server (postgres_test_server.h).
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "core/status.h"
#include "postgres_test_server.h"
#include "project/sql/postgres_pool.h"

namespace toolvfs {
namespace {

TEST(PostgresPoolTest, ManyThreadsShareAtMostTheBoundOfConnections) {
  PostgresPool pool(TestPostgresUri(), "test server", 2);
  std::atomic<int> failures{0};
  std::atomic<int> most_open{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 20; ++i) {
        Result<PostgresPool::Lease> lease = pool.Acquire();
        if (!lease.ok()) {
          ++failures;
          continue;
        }
        int open = pool.open_count();
        int seen = most_open.load();
        while (open > seen && !most_open.compare_exchange_weak(seen, open)) {
        }
        if (!(*lease)->Execute("SELECT pg_backend_pid()").ok()) ++failures;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_LE(most_open.load(), 2);
  EXPECT_GE(pool.open_count(), 1);
}

TEST(PostgresPoolTest, AConnectionTheServerDroppedIsReplacedByAFreshOne) {
  PostgresPool pool(TestPostgresUri(), "test server", 1);
  std::string first_pid;
  {
    Result<PostgresPool::Lease> lease = pool.Acquire();
    ASSERT_TRUE(lease.ok()) << lease.status().message();
    Result<PostgresResult> pid = (*lease)->Execute("SELECT pg_backend_pid()::text");
    ASSERT_TRUE(pid.ok());
    first_pid = std::string(pid->Text(0, 0));
  }
  // What a server restart does to every connection, done to this one only.
  Result<std::unique_ptr<PostgresConnection>> admin = PostgresConnection::Open(TestPostgresUri(), "test server");
  ASSERT_TRUE(admin.ok());
  ASSERT_TRUE((*admin)->Execute("SELECT pg_terminate_backend($1::int)", {PostgresParameter::Text(first_pid)}).ok());
  {
    Result<PostgresPool::Lease> lease = pool.Acquire();
    ASSERT_TRUE(lease.ok());
    Result<PostgresResult> failed = (*lease)->Execute("SELECT 1");
    ASSERT_FALSE(failed.ok());  // the request in flight fails, with one line
    EXPECT_EQ(failed.status().message().find('\n'), std::string::npos) << failed.status().message();
  }
  Result<PostgresPool::Lease> lease = pool.Acquire();
  ASSERT_TRUE(lease.ok()) << lease.status().message();
  Result<PostgresResult> pid = (*lease)->Execute("SELECT pg_backend_pid()::text");
  ASSERT_TRUE(pid.ok()) << pid.status().message();
  EXPECT_NE(std::string(pid->Text(0, 0)), first_pid);
}

TEST(PostgresPoolTest, AConnectionLeftInsideATransactionIsNotReused) {
  PostgresPool pool(TestPostgresUri(), "test server", 1);
  std::string first_pid;
  {
    Result<PostgresPool::Lease> lease = pool.Acquire();
    ASSERT_TRUE(lease.ok());
    ASSERT_TRUE((*lease)->Execute("BEGIN").ok());
    Result<PostgresResult> pid = (*lease)->Execute("SELECT pg_backend_pid()::text");
    ASSERT_TRUE(pid.ok());
    first_pid = std::string(pid->Text(0, 0));
  }
  Result<PostgresPool::Lease> lease = pool.Acquire();
  ASSERT_TRUE(lease.ok());
  Result<PostgresResult> pid = (*lease)->Execute("SELECT pg_backend_pid()::text");
  ASSERT_TRUE(pid.ok());
  EXPECT_NE(std::string(pid->Text(0, 0)), first_pid);
  EXPECT_EQ(pool.open_count(), 1);
}

TEST(PostgresPoolTest, AFailedConnectFreesItsSlot) {
  PostgresPool pool("postgresql://toolvfs@/no_such_database?host=" + TestPostgresSocketDirectory(), "missing", 1);
  for (int attempt = 0; attempt < 3; ++attempt) {  // would wait forever if the slot stayed taken
    Result<PostgresPool::Lease> lease = pool.Acquire();
    ASSERT_FALSE(lease.ok());
    EXPECT_NE(lease.status().message().find("no_such_database"), std::string::npos) << lease.status().message();
  }
  EXPECT_EQ(pool.open_count(), 0);
}

}  // namespace
}  // namespace toolvfs
