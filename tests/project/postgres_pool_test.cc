// The connection pool against a real PostgreSQL server (postgres_test_server.h).
#include <atomic>
#include <chrono>
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
  // Once the server has closed it, the idle connection is seen to be gone
  // and not lent again.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
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
  PostgresPool pool("postgresql://toolvfs@/no_such_database?host=" + TestPostgresSocketDirectory() + "&port=" + TestPostgresPort(), "missing", 1);
  for (int attempt = 0; attempt < 3; ++attempt) {  // would wait forever if the slot stayed taken
    Result<PostgresPool::Lease> lease = pool.Acquire();
    ASSERT_FALSE(lease.ok());
    EXPECT_NE(lease.status().message().find("no_such_database"), std::string::npos) << lease.status().message();
  }
  EXPECT_EQ(pool.open_count(), 0);
}

// The restart of issue 18: the server stops while the pool holds a
// connection, requests fail with Unavailable (one line each) while it is
// down, and once it is back the pool reconnects without being told.
void ExpectRestartIsSurvived(PrivatePostgresServer& server, const std::string& uri) {
  PostgresPool pool(uri, "restarted server", 2);
  {
    Result<PostgresPool::Lease> idle = pool.Acquire();  // given back: idle across the restart
    ASSERT_TRUE(idle.ok()) << idle.status().message();
    ASSERT_TRUE((*idle)->Execute("SELECT 1").ok());
  }
  {
    Result<PostgresPool::Lease> in_flight = pool.Acquire();
    ASSERT_TRUE(in_flight.ok()) << in_flight.status().message();
    ASSERT_TRUE(server.Stop());
    // The request in flight when the server went away: Unavailable, one line.
    Result<PostgresResult> failed = (*in_flight)->Execute("SELECT 1");
    ASSERT_FALSE(failed.ok());
    EXPECT_EQ(failed.status().code(), StatusCode::kUnavailable) << failed.status().message();
    EXPECT_EQ(failed.status().message().find('\n'), std::string::npos) << failed.status().message();
  }
  // The dead idle connection is not lent; a fresh connect is refused while down.
  Result<PostgresPool::Lease> refused = pool.Acquire();
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kUnavailable) << refused.status().message();
  EXPECT_NE(refused.status().message().find("restarted server"), std::string::npos) << refused.status().message();
  EXPECT_EQ(pool.open_count(), 0);

  ASSERT_TRUE(server.Start());
  Result<PostgresPool::Lease> back = pool.Acquire();
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_TRUE((*back)->Execute("SELECT 1").ok());
}

TEST(PostgresPoolTest, AServerRestartIsUnavailableWhileDownAndReconnectedAfterOverTheSocket) {
  PrivatePostgresServer server;
  ASSERT_TRUE(server.started());
  ExpectRestartIsSurvived(server, server.Uri());
}

TEST(PostgresPoolTest, AServerRestartIsUnavailableWhileDownAndReconnectedAfterOverTcp) {
  PrivatePostgresServer server;
  ASSERT_TRUE(server.started());
  ExpectRestartIsSurvived(server, server.TcpUri());
}

TEST(PostgresPoolTest, TheTestServerAnswersOverLoopbackTcp) {
  Result<std::unique_ptr<PostgresConnection>> connection = PostgresConnection::Open(TestPostgresTcpUri(), "tcp");
  ASSERT_TRUE(connection.ok()) << connection.status().message();
  Result<PostgresResult> address = (*connection)->Execute("SELECT host(inet_client_addr())");
  ASSERT_TRUE(address.ok()) << address.status().message();
  EXPECT_EQ(address->Text(0, 0), "127.0.0.1");
}

TEST(PostgresPoolTest, AWrongPasswordIsPermissionDeniedWithoutThePassword) {
  const std::string base = "127.0.0.1:" + TestPostgresPort() + "/postgres";
  const std::string wrong = "postgresql://toolvfs_password:not-the-password@" + base;
  Result<std::unique_ptr<PostgresConnection>> refused = PostgresConnection::Open(wrong, RedactPostgresUri(wrong));
  ASSERT_FALSE(refused.ok());
  const std::string& message = refused.status().message();
  EXPECT_EQ(refused.status().code(), StatusCode::kPermissionDenied) << message;
  EXPECT_NE(message.find("password authentication failed"), std::string::npos) << message;
  EXPECT_NE(message.find("toolvfs_password"), std::string::npos) << message;
  EXPECT_EQ(message.find("not-the-password"), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;

  const std::string right = "postgresql://toolvfs_password:toolvfs-test-password@" + base;
  Result<std::unique_ptr<PostgresConnection>> accepted = PostgresConnection::Open(right, RedactPostgresUri(right));
  EXPECT_TRUE(accepted.ok()) << accepted.status().message();
}

}  // namespace
}  // namespace toolvfs
