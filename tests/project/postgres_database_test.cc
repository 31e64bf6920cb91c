// The libpq layer against a real PostgreSQL server (postgres_test_server.h).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

#include "core/status.h"
#include "postgres_test_server.h"
#include "project/sql/postgres_database.h"

namespace toolvfs {
namespace {

std::unique_ptr<PostgresConnection> Connect() {
  Result<std::unique_ptr<PostgresConnection>> connection =
      PostgresConnection::Open(TestPostgresUri(), "test server");
  EXPECT_TRUE(connection.ok()) << connection.status().ToString();
  return connection.ok() ? std::move(connection).value() : nullptr;
}

TEST(PostgresDatabaseTest, ParametersAndBytesRoundTrip) {
  auto db = Connect();
  ASSERT_TRUE(db);
  ASSERT_TRUE(db->Execute("CREATE TEMP TABLE t(name TEXT, n BIGINT, data BYTEA)").ok());
  const std::string bytes("a\0b\xff\x00z", 6);
  const std::string name = "it's 'quoted'; DROP TABLE t; --";
  ASSERT_TRUE(db->Execute("INSERT INTO t VALUES($1, $2, $3)",
                          {PostgresParameter::Text(std::string_view(name).substr(0, 40)),
                           PostgresParameter::Integer(-42), PostgresParameter::Bytes(bytes)})
                  .ok());
  ASSERT_TRUE(db->Execute("INSERT INTO t VALUES($1, $2, $3)",
                          {PostgresParameter::Null(), PostgresParameter::Null(), PostgresParameter::Null()})
                  .ok());
  Result<PostgresResult> rows = db->Execute("SELECT name, n, data FROM t ORDER BY name NULLS LAST");
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->rows(), 2);
  EXPECT_EQ(rows->Text(0, 0), name);
  EXPECT_EQ(rows->Int(0, 1), -42);
  EXPECT_EQ(rows->Bytes(0, 2), bytes);
  EXPECT_TRUE(rows->IsNull(1, 0));
  EXPECT_EQ(rows->OptionalInt(1, 1), std::nullopt);
}

TEST(PostgresDatabaseTest, ErrorsAreOneLineWithTheirCode) {
  auto db = Connect();
  ASSERT_TRUE(db);
  ASSERT_TRUE(db->Execute("CREATE TEMP TABLE u(k TEXT PRIMARY KEY)").ok());
  ASSERT_TRUE(db->Execute("INSERT INTO u VALUES('a')").ok());
  Result<PostgresResult> duplicate = db->Execute("INSERT INTO u VALUES('a')");
  ASSERT_FALSE(duplicate.ok());
  EXPECT_EQ(duplicate.status().code(), StatusCode::kInternal);
  EXPECT_NE(duplicate.status().message().find("SQLSTATE 23505"), std::string::npos);
  EXPECT_EQ(duplicate.status().message().find('\n'), std::string::npos) << duplicate.status().message();
  EXPECT_EQ(PostgresStatus("40001", "x", "m").code(), StatusCode::kChanged);
  EXPECT_EQ(PostgresStatus("40P01", "x", "m").code(), StatusCode::kChanged);
  EXPECT_EQ(PostgresStatus("53100", "x", "m").code(), StatusCode::kResourceExhausted);
}

TEST(PostgresDatabaseTest, AFailedConnectionNamesTheServerButNeverThePassword) {
  const std::string uri = "postgresql://toolvfs:s3cret-pass@/no_such_database?host=" + TestPostgresSocketDirectory();
  Result<std::unique_ptr<PostgresConnection>> connection =
      PostgresConnection::Open(uri, RedactPostgresUri(uri));
  ASSERT_FALSE(connection.ok());
  const std::string& message = connection.status().message();
  EXPECT_NE(message.find("no_such_database"), std::string::npos) << message;
  EXPECT_EQ(message.find("s3cret-pass"), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

// A TCP socket on a free loopback port; listening, it accepts connections
// in the kernel but never answers, like a host that has hung.
class LoopbackSocket {
 public:
  explicit LoopbackSocket(bool listening) : fd_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&address), length) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length) != 0 ||
        (listening && ::listen(fd_, 8) != 0)) {
      ADD_FAILURE() << "cannot make a loopback socket";
    }
    port_ = ntohs(address.sin_port);
  }
  LoopbackSocket(const LoopbackSocket&) = delete;
  LoopbackSocket& operator=(const LoopbackSocket&) = delete;
  ~LoopbackSocket() {
    if (fd_ >= 0) ::close(fd_);
  }
  int port() const { return port_; }

 private:
  int fd_;
  int port_ = 0;
};

TEST(PostgresDatabaseTest, AClosedPortFailsAtOnceWithOneLineNamingTheServer) {
  // Bound but not listening: connecting is refused, as by a host with no server.
  LoopbackSocket closed(/*listening=*/false);
  const std::string uri = "postgresql://toolvfs@127.0.0.1:" + std::to_string(closed.port()) + "/postgres";
  Result<std::unique_ptr<PostgresConnection>> connection = PostgresConnection::Open(uri, uri);
  ASSERT_FALSE(connection.ok());
  const std::string& message = connection.status().message();
  EXPECT_EQ(connection.status().code(), StatusCode::kIo);
  EXPECT_NE(message.find(std::to_string(closed.port())), std::string::npos) << message;
  EXPECT_NE(message.find("refused"), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

TEST(PostgresDatabaseTest, ASilentServerIsGivenUpAfterTheConnectTimeout) {
  LoopbackSocket silent(/*listening=*/true);
  const std::string uri = "postgresql://toolvfs@127.0.0.1:" + std::to_string(silent.port()) + "/postgres";
  // The URI's own bound wins over the default.
  Result<std::unique_ptr<PostgresConnection>> bounded =
      PostgresConnection::Open(uri + "?connect_timeout=2", uri);
  ASSERT_FALSE(bounded.ok());
  EXPECT_NE(bounded.status().message().find("timeout"), std::string::npos) << bounded.status().message();
  EXPECT_EQ(bounded.status().message().find('\n'), std::string::npos) << bounded.status().message();

  // Without one, the default (5 s) ends the wait instead of TCP's minutes.
  const char* saved = std::getenv("PGCONNECT_TIMEOUT");
  const std::string saved_value = saved != nullptr ? saved : "";
  ::unsetenv("PGCONNECT_TIMEOUT");
  Result<std::unique_ptr<PostgresConnection>> defaulted = PostgresConnection::Open(uri, uri);
  if (saved != nullptr) ::setenv("PGCONNECT_TIMEOUT", saved_value.c_str(), 1);
  ASSERT_FALSE(defaulted.ok());
  EXPECT_NE(defaulted.status().message().find("timeout"), std::string::npos) << defaulted.status().message();
}

TEST(PostgresDatabaseTest, RedactsPasswordsInEveryForm) {
  EXPECT_EQ(RedactPostgresUri("postgres://me:pw@db.example:5432/app#ws"), "postgres://me:***@db.example:5432/app#ws");
  EXPECT_EQ(RedactPostgresUri("postgresql://me@/app?host=/run&password=pw&sslmode=require"),
            "postgresql://me@/app?host=/run&password=***&sslmode=require");
  EXPECT_EQ(RedactPostgresUri("postgres://me@host/app"), "postgres://me@host/app");
  EXPECT_EQ(RedactPostgresUri("host=/run dbname=app password=pw user=me"),
            "host=/run dbname=app password=*** user=me");
}

}  // namespace
}  // namespace toolvfs
