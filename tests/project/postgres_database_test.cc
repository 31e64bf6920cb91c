// The libpq layer against a real PostgreSQL server (postgres_test_server.h).
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
