// The postgres store against the real test server (postgres_test_server.h):
// URIs, faults, several processes on one workspace, a server restart in
// the middle of a run, workspace copy sqlite -> postgres -> sqlite. The
// conformance and snapshot suites run on it from project_test.
#include "project/sql/postgres_store.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>

#include <atomic>
#include <barrier>
#include <chrono>
#include <fstream>
#include <functional>
#include <future>
#include <map>
#include <random>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "core/status.h"
#include "core/unique_fd.h"
#include "postgres_test_server.h"
#include "project/project_files.h"
#include "project/sql/postgres_database.h"
#include "project/sql/postgres_file_write.h"
#include "project/test_util.h"
#include "project/workspace_copy.h"
#include "read_tree.h"
#include "store_stress.h"

namespace toolvfs {
namespace {

// A new database on the test server, for a test that needs one of its own.
std::string NewDatabase() {
  static int count = 0;
  const std::string name = "toolvfs_test_" + std::to_string(::getpid()) + "_" + std::to_string(++count);
  Result<std::unique_ptr<PostgresConnection>> admin = PostgresConnection::Open(TestPostgresUri(), "test server");
  EXPECT_TRUE(admin.ok()) << admin.status().ToString();
  if (admin.ok()) {
    Result<PostgresResult> created = (*admin)->Execute(("CREATE DATABASE " + name).c_str());
    EXPECT_TRUE(created.ok()) << created.status().ToString();
  }
  return name;
}

void ExecuteOn(const std::string& database, const std::string& sql) {
  Result<std::unique_ptr<PostgresConnection>> connection =
      PostgresConnection::Open(TestPostgresUri(database), "test server");
  ASSERT_TRUE(connection.ok()) << connection.status().ToString();
  ASSERT_TRUE((*connection)->ExecuteScript(sql).ok()) << sql;
}

// The first column of the first row of `sql` on `database` (-1 when none).
int64_t CountOn(const std::string& database, const char* sql);
void ExpectExactContentCounts(const std::string& database);

TEST(PostgresStoreTest, EveryUriFormLibpqTakesOpensTheSameWorkspace) {
  const std::string workspace = NewTestPostgresWorkspace();
  Result<std::unique_ptr<ProjectFiles>> by_socket = OpenProject(TestPostgresUri() + "#" + workspace);
  ASSERT_TRUE(by_socket.ok()) << by_socket.status().ToString();
  ASSERT_TRUE((*by_socket)->Write("a.txt", "alpha").ok());

  const std::string socket_directory = TestPostgresSocketDirectory();
  const std::string port = TestPostgresPort();
  for (const std::string& uri : {
           TestPostgresTcpUri() + "#" + workspace,
           "postgres://toolvfs@127.0.0.1:" + port + "/postgres#" + workspace,
           "postgresql:///postgres?host=" + socket_directory + "&port=" + port + "&user=toolvfs#" + workspace,
           "postgresql://toolvfs@localhost:" + port + "/postgres?connect_timeout=3&application_name=t#" + workspace,
       }) {
    Result<std::unique_ptr<ProjectFiles>> store = OpenProject(uri);
    ASSERT_TRUE(store.ok()) << uri << ": " << store.status().ToString();
    EXPECT_EQ(*(*store)->Read("a.txt"), "alpha") << uri;
    EXPECT_EQ((*store)->DisplayRoot(), uri);
  }
  // No fragment: the workspace "default".
  Result<std::unique_ptr<ProjectFiles>> unnamed = OpenProject(TestPostgresTcpUri());
  ASSERT_TRUE(unnamed.ok()) << unnamed.status().ToString();
  EXPECT_EQ((*unnamed)->DisplayRoot(), TestPostgresTcpUri() + "#default");
}

TEST(PostgresStoreTest, ThePasswordIsNeverShown) {
  const std::string secret = "toolvfs-test-password";
  const std::string uri =
      "postgresql://toolvfs_password:" + secret + "@127.0.0.1:" + TestPostgresPort() + "/toolvfs_password#" +
      NewTestPostgresWorkspace();
  Result<std::unique_ptr<ProjectFiles>> store = OpenProject(uri);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_EQ((*store)->DisplayRoot().find(secret), std::string::npos) << (*store)->DisplayRoot();
  EXPECT_NE((*store)->DisplayRoot().find("toolvfs_password:***@"), std::string::npos) << (*store)->DisplayRoot();
  Status missing = (*store)->Read("nothing").status();
  EXPECT_EQ(missing.code(), StatusCode::kNotFound);
  EXPECT_EQ(missing.message().find(secret), std::string::npos) << missing.message();
  Result<std::unique_ptr<ProjectFiles>> unknown_snapshot = OpenProject(uri + "@nope");
  ASSERT_FALSE(unknown_snapshot.ok());
  EXPECT_EQ(unknown_snapshot.status().message().find(secret), std::string::npos)
      << unknown_snapshot.status().message();
  Result<std::unique_ptr<ProjectFiles>> malformed = OpenProject(uri + "#again");
  ASSERT_FALSE(malformed.ok());
  EXPECT_EQ(malformed.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(malformed.status().message().find(secret), std::string::npos) << malformed.status().message();
}

// One line each, naming the server without the password, with a code a
// caller can act on.
void ExpectOneClearLine(const Status& status, StatusCode code, const std::string& says) {
  EXPECT_EQ(status.code(), code) << status.ToString();
  EXPECT_NE(status.message().find(says), std::string::npos) << status.message();
  EXPECT_EQ(status.message().find('\n'), std::string::npos) << status.message();
  // libpq indents its message's second line with a tab ("...refused\n\tIs the server running...").
  EXPECT_EQ(status.message().find('\t'), std::string::npos) << status.message();
  EXPECT_EQ(status.message().find("wrong-secret"), std::string::npos) << status.message();
}

TEST(PostgresStoreTest, WithoutCreateIfMissingAMissingWorkspaceIsNotCreated) {
  const std::string workspace = NewTestPostgresWorkspace();
  const std::string uri = TestPostgresUri() + "#" + workspace;
  StoreOptions existing_only;
  existing_only.create_if_missing = false;
  Result<std::unique_ptr<ProjectFiles>> missing = OpenProject(uri, existing_only);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("Workspace '" + workspace + "' does not exist in the store"),
            std::string::npos)
      << missing.status().message();

  std::vector<StoreCreation> told;
  StoreOptions options;
  options.on_create = [&](const StoreCreation& created) { told.push_back(created); };
  ASSERT_TRUE(OpenProject(uri, options).ok()) << "a writer creates it";
  ASSERT_TRUE(OpenProject(uri, options).ok());
  ASSERT_EQ(told.size(), 1u);
  EXPECT_EQ(told[0].workspace, workspace);
  EXPECT_FALSE(told[0].new_store) << "a database is never created";
  EXPECT_TRUE(OpenProject(uri, existing_only).ok());
}

TEST(PostgresStoreTest, FaultsAreOneClearLineEach) {
  const std::string port = TestPostgresPort();
  ExpectOneClearLine(
      OpenProject("postgresql://toolvfs_password:wrong-secret@127.0.0.1:" + port + "/postgres#w").status(),
      StatusCode::kPermissionDenied, "password authentication failed");
  ExpectOneClearLine(OpenProject(TestPostgresTcpUri("no_such_database") + "#w").status(), StatusCode::kNotFound,
                     "no_such_database");

  // A closed loopback port: bound, not listening.
  int closed_port = 0;
  {
    UniqueFd socket_fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(::bind(socket_fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
    socklen_t length = sizeof(address);
    ASSERT_EQ(::getsockname(socket_fd.get(), reinterpret_cast<sockaddr*>(&address), &length), 0);
    closed_port = ntohs(address.sin_port);
    Status unreachable =
        OpenProject("postgresql://toolvfs:wrong-secret@127.0.0.1:" + std::to_string(closed_port) + "/postgres#w")
            .status();
    ExpectOneClearLine(unreachable, StatusCode::kUnavailable, "127.0.0.1");
  }

  // A database of a newer schema: refused, naming both versions.
  const std::string newer = NewDatabase();
  {
    Result<std::unique_ptr<ProjectFiles>> created = OpenProject(TestPostgresTcpUri(newer) + "#w");
    ASSERT_TRUE(created.ok()) << created.status().ToString();
  }
  ExecuteOn(newer, "UPDATE schema_version SET version = 99");
  ExpectOneClearLine(OpenProject(TestPostgresTcpUri(newer) + "#w").status(), StatusCode::kUnsupported,
                     "schema version 99, newer than version 6");

  // A database of version 4 (before contents' former_hash) is migrated
  // when opened, and goes on working.
  const std::string older = NewDatabase();
  {
    Result<std::unique_ptr<ProjectFiles>> created = OpenProject(TestPostgresTcpUri(older) + "#w");
    ASSERT_TRUE(created.ok()) << created.status().ToString();
    ASSERT_TRUE((*created)->Write("a.txt", "before").ok());
  }
  ExecuteOn(older, "ALTER TABLE contents DROP COLUMN former_hash; UPDATE schema_version SET version = 4");
  {
    Result<std::unique_ptr<ProjectFiles>> migrated = OpenProject(TestPostgresTcpUri(older) + "#w");
    ASSERT_TRUE(migrated.ok()) << migrated.status().ToString();
    EXPECT_EQ(CountOn(older, "SELECT version FROM schema_version"), 6);
    EXPECT_EQ(*(*migrated)->Read("a.txt"), "before");
    ASSERT_TRUE((*migrated)->Write("a.txt", "after").ok());
    EXPECT_EQ(*(*migrated)->Read("a.txt"), "after");
    EXPECT_EQ(CountOn(older, "SELECT count(*) FROM contents WHERE former_hash IS NOT NULL"), 0)
        << "with row locks no former address is left";
  }

  // A database of version 5 only records version 6: its identity column
  // never gave a deleted workspace's id again.
  ExecuteOn(older, "UPDATE schema_version SET version = 5");
  {
    Result<std::unique_ptr<ProjectFiles>> migrated = OpenProject(TestPostgresTcpUri(older) + "#w");
    ASSERT_TRUE(migrated.ok()) << migrated.status().ToString();
    EXPECT_EQ(CountOn(older, "SELECT version FROM schema_version"), 6);
    EXPECT_EQ(*(*migrated)->Read("a.txt"), "after");
  }

  // Another program's database: left alone.
  const std::string foreign = NewDatabase();
  ExecuteOn(foreign, "CREATE TABLE invoices(id BIGINT)");
  ExpectOneClearLine(OpenProject(TestPostgresTcpUri(foreign) + "#w").status(), StatusCode::kInvalidArgument,
                     "another program");
}

// The isolation levels of issue 18, READ COMMITTED and SERIALIZABLE (which
// distributed engines run at), and REPEATABLE READ, which the store raises
// to SERIALIZABLE for its writes (PostgresConnection::begin_write), set in
// the URI as libpq's options. The store writes at the connection's level
// with row locks (docs/stores.md, "Concurrency") and must lose nothing at
// each.
enum class Isolation { kReadCommitted, kRepeatableRead, kSerializable };

std::string AtIsolation(const std::string& uri, Isolation level) {
  if (level == Isolation::kReadCommitted) return uri;
  return uri + (uri.find('?') == std::string::npos ? "?" : "&") + "options=-c%20default_transaction_isolation%3D" +
         (level == Isolation::kSerializable ? "serializable" : "repeatable%5C%20read");
}

class PostgresConcurrencyTest : public ::testing::TestWithParam<Isolation> {};

TEST_P(PostgresConcurrencyTest, FourProcessesMakingAThousandMixedWritesEachLoseNothing) {
  TempDir journals;
  const std::string uri = AtIsolation(TestPostgresUri(), GetParam()) + "#" + NewTestPostgresWorkspace();
  {
    Result<std::unique_ptr<ProjectFiles>> created = OpenProject(uri);  // the schema and the workspace
    ASSERT_TRUE(created.ok()) << created.status().ToString();
  }
  store_stress::ExpectMixedWritersLoseNothing(uri, {}, /*processes=*/4, /*writes=*/1000, journals.path());
}

TEST_P(PostgresConcurrencyTest, ThreadsOfOneProcessShareItsConnections) {
  const std::string uri = AtIsolation(TestPostgresUri(), GetParam()) + "#" + NewTestPostgresWorkspace();
  Result<std::unique_ptr<ProjectFiles>> store = OpenProject(uri);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  const PostgresRetryCounts before = PostgresRetriedTransactions();
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  std::mutex first_failure_mutex;
  std::string first_failure;
  const auto count = [&](const Status& status) {
    if (status.ok()) return;
    ++failures;
    std::lock_guard lock(first_failure_mutex);
    if (first_failure.empty()) first_failure = status.ToString();
  };
  for (int thread = 0; thread < 12; ++thread) {
    threads.emplace_back([&, thread] {
      for (int i = 0; i < 50; ++i) {
        count((*store)->Write("own/" + std::to_string(thread), std::to_string(i)));
        count((*store)->Write("shared.log", "x", WriteMode::kAppend));
        count((*store)->Read("shared.log").status());
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0) << "the first: " << first_failure;
  EXPECT_EQ((*store)->Read("shared.log")->size(), 600u);
  EXPECT_EQ((*store)->Metadata("shared.log")->version, 600u);
  // The threads write at once (no lock of the process), so writers of
  // shared.log meet: at SERIALIZABLE the server ends some of them with
  // 40001 and the store runs them again; at READ COMMITTED they wait on the
  // row lock instead and the server never reports a serialization failure,
  // which shows the URI's level is the one the store wrote at.
  const PostgresRetryCounts after = PostgresRetriedTransactions();
  if (GetParam() != Isolation::kReadCommitted) {
    EXPECT_GT(after.serialization_failures, before.serialization_failures)
        << after.deadlocks - before.deadlocks << " deadlocks, " << after.unique_violations - before.unique_violations
        << " duplicate keys";
  } else {
    EXPECT_EQ(after.serialization_failures, before.serialization_failures);
  }
  for (int thread = 0; thread < 12; ++thread) {
    Result<FileMetadata> own = (*store)->Metadata("own/" + std::to_string(thread));
    ASSERT_TRUE(own.ok()) << own.status().ToString();
    EXPECT_EQ(own->version, 50u);
    EXPECT_EQ(*(*store)->Read("own/" + std::to_string(thread)), "49");
  }
  // Every thread wrote the same contents ("0" to "49") at the same time,
  // so their shared content rows were counted by concurrent writers (and a
  // concurrent first store of one content is a duplicate address, run
  // again). A count lost on the way would show now: releasing eleven of
  // the twelve references to "49" must leave it stored for the last file.
  for (int thread = 0; thread < 11; ++thread) {
    ASSERT_TRUE((*store)->Delete("own/" + std::to_string(thread)).ok());
  }
  Result<std::string> last = (*store)->Read("own/11");
  ASSERT_TRUE(last.ok()) << last.status().ToString();
  EXPECT_EQ(*last, "49");
}

// Writers of one new file at once, each expecting to create it (the last
// write of the database created its file): one creates it, the others
// find it there or lose the race for its key, and overwrite it, each once.
// create_only writers of one new file: one creates it, the others are told
// it exists.
TEST_P(PostgresConcurrencyTest, WritersOfOneNewFileExpectingToCreateItEachWriteItOnce) {
  const std::string database = NewDatabase();
  Result<std::unique_ptr<ProjectFiles>> store = OpenProject(AtIsolation(TestPostgresUri(database), GetParam()) + "#race");
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  ASSERT_TRUE((*store)->Write("race/seed", "the directory").ok());
  ASSERT_TRUE((*store)->Write("race/primer", "created: the next write expects to create").ok());
  constexpr int kWriters = 8;
  std::atomic<int> written{0}, created_only{0}, told_it_exists{0};
  std::vector<std::thread> threads;
  for (int writer = 0; writer < kWriters; ++writer) {
    threads.emplace_back([&, writer] {
      Status status = (*store)->Write("race/x", "writer " + std::to_string(writer));
      if (status.ok()) ++written;
      status = (*store)->Write("race/only", "only " + std::to_string(writer), WriteMode::kCreate);
      if (status.ok()) ++created_only;
      if (status.code() == StatusCode::kAlreadyExists) ++told_it_exists;
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(written.load(), kWriters);
  EXPECT_EQ((*store)->Metadata("race/x")->version, static_cast<uint64_t>(kWriters));
  EXPECT_EQ((*store)->Read("race/x")->substr(0, 7), "writer ");
  EXPECT_EQ(created_only.load(), 1);
  EXPECT_EQ(told_it_exists.load(), kWriters - 1);
  EXPECT_EQ((*store)->Metadata("race/only")->version, 1u);
  EXPECT_EQ(CountOn(database, "SELECT count(*) FROM entries WHERE parent='race' AND died IS NULL"), 4);
  ExpectExactContentCounts(database);
}

// A recursive delete, a rename or a restore of a directory racing a create
// inside it: afterwards no live file is left below a directory that is
// gone. At REPEATABLE READ, before writes were raised to SERIALIZABLE, the
// workspace-wide change acted on its snapshot from before its wait for the
// workspace row and left the new file live below nothing in most rounds.
TEST_P(PostgresConcurrencyTest, AWholeDirectoryChangeRacingACreateInsideItLeavesNoFileBelowNothing) {
  const std::string database = NewDatabase();
  const std::string uri = AtIsolation(TestPostgresUri(database), GetParam()) + "#race";
  Result<std::unique_ptr<ProjectFiles>> changer = OpenProject(uri);
  ASSERT_TRUE(changer.ok()) << changer.status().ToString();
  Result<std::unique_ptr<ProjectFiles>> creator = OpenProject(uri);
  ASSERT_TRUE(creator.ok()) << creator.status().ToString();
  // More than a chunk: the create goes the shared way, a transaction of
  // several statements, which leaves the widest window.
  const std::string content(100 * 1024, 'x');
  constexpr int kRounds = 30;
  for (int round = 0; round < kRounds; ++round) {
    const std::string directory = "d" + std::to_string(round);
    const int change = round % 3;  // 0 delete, 1 rename, 2 restore
    ASSERT_TRUE((*changer)->Write(directory + "/old", "old").ok());
    std::string before;
    if (change == 2) {
      ASSERT_TRUE((*changer)->Delete(directory, /*recursive=*/true).ok());
      Result<std::string> taken = (*changer)->Snapshot();
      ASSERT_TRUE(taken.ok()) << taken.status().ToString();
      before = *taken;
      ASSERT_TRUE((*changer)->Write(directory + "/old", "old").ok());
    }
    std::barrier start(2);
    std::thread create([&] {
      start.arrive_and_wait();
      (void)(*creator)->Write(directory + "/new", content);  // may find the directory gone: either is fine
    });
    start.arrive_and_wait();
    const Status changed = change == 0   ? (*changer)->Delete(directory, /*recursive=*/true)
                           : change == 1 ? (*changer)->Rename(directory, directory + "-moved", /*overwrite=*/false)
                                         : (*changer)->Restore(before);
    create.join();
    ASSERT_TRUE(changed.ok()) << changed.ToString();
    const std::string orphans = "SELECT count(*) FROM entries e WHERE e.died IS NULL AND e.parent='" + directory +
                                "' AND NOT EXISTS (SELECT 1 FROM entries p WHERE p.workspace_id=e.workspace_id "
                                "AND p.died IS NULL AND p.kind=1 AND p.path=e.parent)";
    EXPECT_EQ(CountOn(database, orphans.c_str()), 0)
        << "round " << round << ": a live file below a directory that is gone";
  }
  ExpectExactContentCounts(database);
}

// A delete or a rename of a file racing an overwrite of it after a
// snapshot (copy-on-write: the old row ends, a new one is inserted): the
// file exists before and after, so neither may answer that it is missing.
// At READ COMMITTED the lock that waited for the overwrite found the old
// row ended and the new one outside its snapshot: "does not exist" in
// about one round of thirty.
TEST_P(PostgresConcurrencyTest, ADeleteOrRenameRacingACopyOnWriteOverwriteFindsTheFile) {
  const std::string uri = AtIsolation(TestPostgresUri(), GetParam()) + "#" + NewTestPostgresWorkspace();
  Result<std::unique_ptr<ProjectFiles>> writer = OpenProject(uri);
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();
  Result<std::unique_ptr<ProjectFiles>> remover = OpenProject(uri);
  ASSERT_TRUE(remover.ok()) << remover.status().ToString();
  constexpr int kRounds = 150;
  for (int round = 0; round < kRounds; ++round) {
    ASSERT_TRUE((*writer)->Write("f", "start " + std::to_string(round)).ok());
    ASSERT_TRUE((*writer)->Snapshot().ok());  // the next overwrite of f is copy-on-write
    const bool rename = round % 2 == 1;
    std::barrier start(2);
    Status removed;
    std::thread remove([&] {
      start.arrive_and_wait();
      removed = rename ? (*remover)->Rename("f", "g", /*overwrite=*/true) : (*remover)->Delete("f");
    });
    start.arrive_and_wait();
    const Status written = (*writer)->Write("f", "overwrite " + std::to_string(round));
    remove.join();
    ASSERT_TRUE(written.ok()) << written.ToString();
    ASSERT_TRUE(removed.ok()) << "round " << round << ": " << removed.ToString();
    (void)(*writer)->Delete("f");
    (void)(*writer)->Delete("g");
  }
}

INSTANTIATE_TEST_SUITE_P(Isolation, PostgresConcurrencyTest,
                         ::testing::Values(Isolation::kReadCommitted, Isolation::kRepeatableRead,
                                           Isolation::kSerializable),
                         [](const ::testing::TestParamInfo<Isolation>& level) {
                           return level.param == Isolation::kReadCommitted    ? "ReadCommitted"
                                  : level.param == Isolation::kRepeatableRead ? "RepeatableRead"
                                                                              : "Serializable";
                         });

// The first integer of `sql`'s first row on `database`.
int64_t CountOn(const std::string& database, const char* sql) {
  Result<std::unique_ptr<PostgresConnection>> connection =
      PostgresConnection::Open(TestPostgresUri(database), "test server");
  EXPECT_TRUE(connection.ok()) << connection.status().ToString();
  if (!connection.ok()) return -1;
  Result<PostgresResult> rows = (*connection)->Execute(sql);
  EXPECT_TRUE(rows.ok()) << rows.status().ToString();
  if (!rows.ok() || rows->rows() == 0) return -1;
  return rows->Int(0, 0);
}

// The content rows of `database` agree with what references them: every
// count is the number of entry rows and chunk lists using the content, no
// content is unreferenced, and each has its address.
void ExpectExactContentCounts(const std::string& database) {
  EXPECT_EQ(CountOn(database,
                    "SELECT count(*) FROM contents c WHERE reference_count <> "
                    "(SELECT count(*) FROM entries e WHERE e.content_id=c.id) + "
                    "(SELECT count(*) FROM content_chunks k WHERE k.chunk_id=c.id)"),
            0);
  EXPECT_EQ(CountOn(database, "SELECT count(*) FROM contents WHERE reference_count<1"), 0);
  EXPECT_EQ(CountOn(database,
                    "SELECT (SELECT count(*) FROM contents c WHERE NOT EXISTS "
                    "(SELECT 1 FROM content_addresses a WHERE a.content_id=c.id AND a.hash=c.hash)) + "
                    "(SELECT count(*) FROM content_addresses a WHERE NOT EXISTS "
                    "(SELECT 1 FROM contents c WHERE c.id=a.content_id))"),
            0);
}

// The common write, a small file overwritten or created in an existing
// directory, goes in one round trip (postgres_file_write.h) and leaves
// what the shared write would: versions, times, snapshots, content counts.
// What it does not cover goes the shared way with the shared errors.
TEST(PostgresWriteTest, CommonWritesTakeOneRoundTripAndLeaveWhatTheSharedWriteWould) {
  const std::string database = NewDatabase();
  Result<std::unique_ptr<ProjectFiles>> store = OpenProject(TestPostgresUri(database) + "#direct");
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  ProjectFiles& files = **store;
  const uint64_t before = PostgresWritesInOneRoundTrip();
  const auto direct_writes = [&] { return PostgresWritesInOneRoundTrip() - before; };

  ASSERT_TRUE(files.Write("top.txt", "at the root").ok());
  EXPECT_EQ(direct_writes(), 1u) << "a new file at the root";
  ASSERT_TRUE(files.Write("dir/first", "1").ok());
  EXPECT_EQ(direct_writes(), 1u) << "a missing parent is the shared path's";
  ASSERT_TRUE(files.Write("dir/second", "2", WriteMode::kCreate).ok());
  EXPECT_EQ(direct_writes(), 2u) << "a new file in an existing directory";
  ASSERT_TRUE(files.Write("dir/second", "two").ok());
  ASSERT_TRUE(files.Write("dir/second", "two").ok());  // the same bytes again
  EXPECT_EQ(direct_writes(), 4u);
  EXPECT_EQ(*files.Read("dir/second"), "two");
  Result<FileMetadata> second = files.Metadata("dir/second");
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->version, 3u);
  EXPECT_LE(second->created_ms, second->modified_ms);

  // Not covered: the shared path answers, with its errors.
  EXPECT_EQ(files.Write("dir/second", "again", WriteMode::kCreate).code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(files.Write("dir", "a directory").code(), StatusCode::kIsDirectory);
  EXPECT_EQ(files.Write("top.txt/below", "under a file").code(), StatusCode::kNotDirectory);
  EXPECT_EQ(direct_writes(), 4u);
  EXPECT_EQ(*files.Read("dir/second"), "two");

  // Two files sharing one content, then each overwritten: the count drops
  // to one, then the content goes.
  ASSERT_TRUE(files.Write("dir/x", "shared bytes").ok());
  ASSERT_TRUE(files.Write("dir/y", "shared bytes").ok());
  EXPECT_EQ(CountOn(database, "SELECT reference_count FROM contents WHERE size=12"), 2);
  ASSERT_TRUE(files.Write("dir/x", "x alone").ok());
  EXPECT_EQ(CountOn(database, "SELECT reference_count FROM contents WHERE size=12"), 1);
  ASSERT_TRUE(files.Write("dir/y", "y alone").ok());
  EXPECT_EQ(CountOn(database, "SELECT count(*) FROM contents WHERE size=12"), 0);
  EXPECT_EQ(direct_writes(), 8u);
  ExpectExactContentCounts(database);

  // After a snapshot the old row stays for it: the write ends it and
  // inserts the new one; the version goes on from the old row's.
  Result<std::string> snapshot = files.Snapshot("before");
  ASSERT_TRUE(snapshot.ok()) << snapshot.status().ToString();
  ASSERT_TRUE(files.Write("dir/second", "after the snapshot").ok());
  ASSERT_TRUE(files.Write("dir/second", "and again").ok());
  ASSERT_TRUE(files.Write("dir/new", "born after").ok());
  EXPECT_EQ(direct_writes(), 11u);
  EXPECT_EQ(files.Metadata("dir/second")->version, 5u);
  EXPECT_EQ(files.Metadata("dir/second")->created_ms, second->created_ms);
  Result<std::unique_ptr<ProjectFiles>> frozen = OpenProject(TestPostgresUri(database) + "#direct@before");
  ASSERT_TRUE(frozen.ok()) << frozen.status().ToString();
  EXPECT_EQ(*(*frozen)->Read("dir/second"), "two");
  EXPECT_EQ((*frozen)->Metadata("dir/second")->version, 3u);
  EXPECT_FALSE(*(*frozen)->Exists("dir/new"));
  Result<TreeDiff> diff = files.Diff(*snapshot, std::nullopt);
  ASSERT_TRUE(diff.ok()) << diff.status().ToString();
  EXPECT_EQ(diff->added, std::vector<std::string>{"dir/new"});
  EXPECT_EQ(diff->modified, std::vector<std::string>{"dir/second"});
  ASSERT_TRUE(files.Restore(*snapshot).ok());
  EXPECT_EQ(*files.Read("dir/second"), "two");
  ExpectExactContentCounts(database);
}

// A write expected to create (the last write of the database created its
// file) tries the statement that only creates first; a wrong guess goes on
// to the statement for both cases, with the same result as any write.
TEST(PostgresWriteTest, AWriteExpectedToCreateTriesTheCreateStatementAndAWrongGuessStillWritesRight) {
  const std::string database = NewDatabase();
  Result<std::unique_ptr<ProjectFiles>> store = OpenProject(TestPostgresUri(database) + "#guess");
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  ProjectFiles& files = **store;
  ASSERT_TRUE(files.Write("dir/a", "a").ok());  // the parent first, the shared way
  const uint64_t writes_before = PostgresWritesInOneRoundTrip();
  const uint64_t creates_before = PostgresCreatesInOneRoundTrip();
  const auto direct_writes = [&] { return PostgresWritesInOneRoundTrip() - writes_before; };
  const auto direct_creates = [&] { return PostgresCreatesInOneRoundTrip() - creates_before; };

  ASSERT_TRUE(files.Write("dir/a", "a2").ok());  // an overwrite: the next write expects one too
  ASSERT_TRUE(files.Write("dir/b", "b").ok());   // so the statement for both, which creates
  EXPECT_EQ(direct_writes(), 2u);
  EXPECT_EQ(direct_creates(), 0u);
  ASSERT_TRUE(files.Write("dir/c", "c").ok());  // expected to create, and does
  ASSERT_TRUE(files.Write("dir/d", "c").ok());  // the same bytes: one more reference
  EXPECT_EQ(direct_creates(), 2u);
  EXPECT_EQ(CountOn(database, "SELECT reference_count FROM contents WHERE data='c'"), 2);

  ASSERT_TRUE(files.Write("dir/c", "c2").ok());  // a wrong guess: the file is there
  EXPECT_EQ(direct_writes(), 5u);
  EXPECT_EQ(direct_creates(), 2u);
  EXPECT_EQ(*files.Read("dir/c"), "c2");
  EXPECT_EQ(files.Metadata("dir/c")->version, 2u);
  ASSERT_TRUE(files.Write("dir/e", "e").ok());  // after an overwrite: the statement for both
  EXPECT_EQ(direct_creates(), 2u);

  // create_only always takes the create statement; an existing file is
  // the shared path's AlreadyExists, with nothing changed.
  ASSERT_TRUE(files.Write("dir/f", "f", WriteMode::kCreate).ok());
  EXPECT_EQ(direct_creates(), 3u);
  EXPECT_EQ(files.Write("dir/f", "f2", WriteMode::kCreate).code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(*files.Read("dir/f"), "f");

  // A name deleted and created again, before and after a snapshot (which
  // keeps the old row, ended): the create statement each time.
  ASSERT_TRUE(files.Delete("dir/f").ok());
  ASSERT_TRUE(files.Write("dir/f", "f again").ok());
  EXPECT_EQ(files.Metadata("dir/f")->version, 1u);
  ASSERT_TRUE(files.Snapshot("s").ok());
  ASSERT_TRUE(files.Delete("dir/f").ok());
  ASSERT_TRUE(files.Write("dir/g", "g").ok());
  ASSERT_TRUE(files.Write("dir/f", "f after the snapshot").ok());
  EXPECT_EQ(*files.Read("dir/f"), "f after the snapshot");
  EXPECT_EQ(files.Metadata("dir/f")->version, 1u);
  EXPECT_EQ(direct_creates(), 6u);

  // What neither statement covers goes the shared way, with its answers:
  // a missing parent (made by the shared write), a file as parent, a
  // directory at the path.
  const uint64_t writes_so_far = direct_writes();
  ASSERT_TRUE(files.Write("new/x", "x").ok());
  ASSERT_TRUE(files.Write("other/y", "y", WriteMode::kCreate).ok());
  EXPECT_EQ(*files.Read("new/x"), "x");
  EXPECT_EQ(*files.Read("other/y"), "y");
  EXPECT_EQ(files.Write("dir/g/under", "u").code(), StatusCode::kNotDirectory);
  EXPECT_EQ(files.Write("dir", "a directory").code(), StatusCode::kIsDirectory);
  EXPECT_EQ(direct_writes(), writes_so_far);
  EXPECT_EQ(direct_creates(), 6u);
  Result<std::unique_ptr<ProjectFiles>> frozen = OpenProject(TestPostgresUri(database) + "#guess@s");
  ASSERT_TRUE(frozen.ok()) << frozen.status().ToString();
  EXPECT_EQ(*(*frozen)->Read("dir/f"), "f again");
  EXPECT_FALSE(*(*frozen)->Exists("dir/g"));
  ExpectExactContentCounts(database);
}

// An engine that refuses kWriteFile (CockroachDB: SQLSTATE 0A000, one
// modification per table in a statement) gets every write the shared way,
// with the same results. PostgreSQL refuses the statement the same way
// (0A000, at prepare) when a table it modifies has a DO ALSO rule, which
// stands in for such an engine here.
TEST(PostgresWriteTest, AnEngineThatRefusesTheOneStatementWriteGetsEveryWriteTheSharedWay) {
  const std::string database = NewDatabase();
  ASSERT_TRUE(OpenProject(TestPostgresUri(database) + "#refused").ok());  // makes the schema
  ExecuteOn(database, "CREATE RULE refuse_in_with AS ON DELETE TO content_addresses DO ALSO NOTIFY toolvfs_test");
  Result<std::unique_ptr<ProjectFiles>> store = OpenProject(TestPostgresUri(database) + "#refused");
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  ProjectFiles& files = **store;
  const uint64_t before = PostgresWritesInOneRoundTrip();
  ASSERT_TRUE(files.Write("dir/a", "one").ok());
  ASSERT_TRUE(files.Write("dir/a", "two").ok());
  ASSERT_TRUE(files.Write("dir/b", "two").ok());
  ASSERT_TRUE(files.Write("top", "three", WriteMode::kCreate).ok());
  ASSERT_TRUE(files.Write("dir/a", "four").ok());
  EXPECT_EQ(PostgresWritesInOneRoundTrip() - before, 0u);
  EXPECT_EQ(*files.Read("dir/a"), "four");
  EXPECT_EQ(*files.Read("dir/b"), "two");
  EXPECT_EQ(*files.Read("top"), "three");
  EXPECT_EQ(files.Metadata("dir/a")->version, 3u);
  EXPECT_EQ(files.Write("top", "again", WriteMode::kCreate).code(), StatusCode::kAlreadyExists);
  ExpectExactContentCounts(database);
}

// The minor page faults of process `pid` so far (/proc/PID/stat, field 10):
// the test server runs on this machine.
uint64_t MinorFaultsOf(int64_t pid) {
  std::ifstream file("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  std::getline(file, stat);
  // Fields after the command name, which is in parentheses and may hold spaces.
  std::istringstream fields(stat.substr(stat.rfind(')') + 2));
  std::string field;
  for (int number = 3; number < 10 && fields >> field; ++number) {
  }
  uint64_t minor_faults = 0;
  fields >> minor_faults;
  return minor_faults;
}

// A run of the one-statement write allocates a few hundred KiB in the
// server process and frees it at the end of the statement. With glibc's
// default thresholds that memory went back to the system after every write
// of new bytes and the next write faulted it in again, page by page: writes
// 5-10 times slower, depending on the state the server's allocator was
// forked in. PostgresConnection::Open raises the server process's
// thresholds once, so the memory is reused.
TEST(PostgresWriteTest, TheServerProcessReusesItsMemoryFromWriteToWrite) {
  const std::string database = NewDatabase();
  Result<std::unique_ptr<ProjectFiles>> store = OpenProject(TestPostgresUri(database) + "#memory");
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  ProjectFiles& files = **store;
  // store_bench's order: file i in directory i % 20, each directory made
  // by its first file (the shared path), the rest in one statement each.
  constexpr int kDirectories = 20, kFiles = 400;
  const auto path = [](int i) { return "d" + std::to_string(i % kDirectories) + "/f" + std::to_string(i); };
  // Bytes of their own each (no content shared), as random as store_bench's.
  std::mt19937_64 random(17);
  const auto content = [&random] {
    std::string bytes(1024, '\0');
    for (char& byte : bytes) byte = static_cast<char>(random());
    return bytes;
  };
  for (int i = 0; i < kFiles / 2; ++i) ASSERT_TRUE(files.Write(path(i), content()).ok());

  // The server processes of the store's connections (its pool may hold
  // more than one).
  std::vector<int64_t> server_processes;
  {
    Result<std::unique_ptr<PostgresConnection>> connection =
        PostgresConnection::Open(TestPostgresUri(database), "test server");
    ASSERT_TRUE(connection.ok()) << connection.status().ToString();
    Result<PostgresResult> rows = (*connection)->Execute(
        "SELECT pid FROM pg_stat_activity WHERE datname=current_database() AND pid<>pg_backend_pid() "
        "AND backend_type='client backend'");
    ASSERT_TRUE(rows.ok()) << rows.status().ToString();
    for (int row = 0; row < rows->rows(); ++row) server_processes.push_back(rows->Int(row, 0));
  }
  ASSERT_FALSE(server_processes.empty());
  const auto minor_faults = [&] {
    uint64_t sum = 0;
    for (int64_t pid : server_processes) sum += MinorFaultsOf(pid);
    return sum;
  };

  const uint64_t before_writes = PostgresWritesInOneRoundTrip();
  const uint64_t before_faults = minor_faults();
  for (int i = kFiles / 2; i < kFiles; ++i) ASSERT_TRUE(files.Write(path(i), content()).ok());
  for (int i = 0; i < kFiles / 2; ++i) ASSERT_TRUE(files.Write(path(i), content()).ok());
  const uint64_t faults_per_write = (minor_faults() - before_faults) / kFiles;
  EXPECT_EQ(PostgresWritesInOneRoundTrip() - before_writes, static_cast<uint64_t>(kFiles))
      << "every write in one statement";
  // Reused memory faults only where the tables grow (a page now and then);
  // memory given back was faulted in again, about 40 pages per write here.
  EXPECT_LT(faults_per_write, 10u);
}

// Another host's write of dir/held stopped half-way, holding what a store
// write of one file holds (docs/stores.md, "Concurrency"): the workspace
// row shared, the file's entry row locked. Writes of other files go on;
// writes of that file, snapshots and subtree changes wait for it.
TEST(PostgresLockingTest, AWriteInProgressHoldsUpOnlyItsFileAndWholeWorkspaceChanges) {
  const std::string workspace = NewTestPostgresWorkspace();
  Result<std::unique_ptr<ProjectFiles>> store = OpenProject(TestPostgresUri() + "#" + workspace);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  ASSERT_TRUE((*store)->Write("dir/held", "1").ok());
  ASSERT_TRUE((*store)->Write("dir/free", "1").ok());
  ASSERT_TRUE((*store)->Write("other/file", "1").ok());
  Result<std::unique_ptr<PostgresConnection>> other = PostgresConnection::Open(TestPostgresUri(), "other host");
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  ASSERT_TRUE((*other)->Execute("BEGIN").ok());
  ASSERT_TRUE((*other)
                  ->Execute("SELECT generation FROM workspaces WHERE name=$1 FOR SHARE",
                            {PostgresParameter::Text(workspace)})
                  .ok());
  Result<PostgresResult> held = (*other)->Execute(
      "SELECT e.version FROM entries e JOIN workspaces w ON w.id=e.workspace_id WHERE w.name=$1 "
      "AND e.parent='dir' AND e.name='held' AND e.died IS NULL FOR UPDATE OF e",
      {PostgresParameter::Text(workspace)});
  ASSERT_TRUE(held.ok()) << held.status().ToString();
  ASSERT_EQ(held->rows(), 1);

  ProjectFiles& files = **store;
  auto finishes = [](std::future<Status>& pending, std::chrono::milliseconds within) {
    return pending.wait_for(within) == std::future_status::ready;
  };
  // Not held up: another file of the directory, a new file in it, a
  // rename and a delete elsewhere.
  for (auto write : std::vector<std::function<Status()>>{
           [&] { return files.Write("dir/free", "2"); },
           [&] { return files.Write("dir/new", "1"); },
           [&] { return files.Rename("other/file", "other/renamed", false); },
           [&] { return files.Delete("other/renamed", false); }}) {
    std::future<Status> pending = std::async(std::launch::async, write);
    ASSERT_TRUE(finishes(pending, std::chrono::seconds(20))) << "a write of another file waited";
    EXPECT_TRUE(pending.get().ok());
  }
  // Held up until the other host commits.
  std::future<Status> same_file = std::async(std::launch::async, [&] { return files.Write("dir/held", "2"); });
  EXPECT_FALSE(finishes(same_file, std::chrono::milliseconds(500))) << "a second writer of dir/held did not wait";
  // (Started after it, so they queue behind it.)
  std::future<Status> snapshot = std::async(std::launch::async, [&] { return files.Snapshot("s").status(); });
  std::future<Status> subtree = std::async(std::launch::async, [&] { return files.Rename("dir", "moved", false); });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_FALSE(finishes(snapshot, std::chrono::milliseconds(0))) << "a snapshot did not wait for a write in progress";
  EXPECT_FALSE(finishes(subtree, std::chrono::milliseconds(0))) << "a directory rename did not wait";
  ASSERT_TRUE((*other)->Execute("COMMIT").ok());
  EXPECT_TRUE(same_file.get().ok());
  EXPECT_TRUE(snapshot.get().ok());
  EXPECT_TRUE(subtree.get().ok());
  EXPECT_EQ(*files.Read("moved/held"), "2");
  EXPECT_EQ(files.Metadata("moved/held")->version, 2u);
  EXPECT_EQ(*files.Read("moved/free"), "2");
  EXPECT_FALSE(*files.Exists("dir"));
}

TEST(PostgresRestartTest, AServerRestartMidRunIsUnavailableThenTheStoreReconnectsByItself) {
  PrivatePostgresServer server;
  ASSERT_TRUE(server.started());
  TempDir journals;
  const std::string uri = server.Uri() + "#restarted";
  {
    Result<std::unique_ptr<ProjectFiles>> created = OpenProject(uri);
    ASSERT_TRUE(created.ok()) << created.status().ToString();
  }
  store_stress::InterruptedRun run = store_stress::RunWriterThroughInterruptions(
      uri, {}, /*interruptions=*/3,
      [&](pid_t) {
        EXPECT_TRUE(server.Stop());
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        EXPECT_TRUE(server.Start());
        return false;  // the writer lives on through it
      },
      journals.path());
  EXPECT_EQ(run.generations, 1) << "one writer process throughout";
  EXPECT_GT(run.failures[StatusCode::kUnavailable], 0) << "requests while the server was down fail";
  for (const auto& [code, count] : run.failures) {
    EXPECT_EQ(code, StatusCode::kUnavailable) << count << " failures of " << StatusCodeName(code) << ", e.g. "
                                              << (run.failure_messages.empty() ? "" : run.failure_messages[0]);
  }
  EXPECT_GE(run.confirmed_after_last_interruption, 20) << "the store reconnected by itself";
}

// The states of a SQL workspace: each snapshot's tree and label, then the
// live tree; files with content and version.
std::string Describe(const std::string& uri) {
  std::string text;
  auto describe_tree = [&](ProjectFiles& store) {
    for (const auto& [path, entry] : ReadTree(store)) {
      text += "  " + path + ": " + entry;
      Result<FileMetadata> metadata = store.Metadata(path);
      EXPECT_TRUE(metadata.ok()) << metadata.status().ToString();
      if (metadata.ok() && metadata->kind == EntryKind::kFile) {
        text += " version " + std::to_string(metadata->version.value_or(0)) + " created " +
                std::to_string(metadata->created_ms.value_or(0)) + " modified " +
                std::to_string(metadata->modified_ms);
      }
      text += "\n";
    }
  };
  Result<std::unique_ptr<ProjectFiles>> store = OpenProject(uri);
  EXPECT_TRUE(store.ok()) << store.status().ToString();
  if (!store.ok()) return text;
  Result<std::vector<SnapshotInfo>> snapshots = (*store)->ListSnapshots();
  EXPECT_TRUE(snapshots.ok());
  for (const SnapshotInfo& snapshot : *snapshots) {
    text += "snapshot " + snapshot.id + " " + snapshot.label.value_or("-") + "\n";
    Result<std::unique_ptr<ProjectFiles>> past = OpenProject(uri + "@" + snapshot.id);
    EXPECT_TRUE(past.ok()) << past.status().ToString();
    if (past.ok()) describe_tree(**past);
  }
  text += "live\n";
  describe_tree(**store);
  return text;
}

TEST(PostgresCopyTest, SqliteToPostgresToSqliteKeepsTreesVersionsTimesAndSnapshots) {
  TempDir dir;
  const std::string original = "sqlite:" + dir.Join("original.db") + "#main";
  {
    Result<std::unique_ptr<ProjectFiles>> store = OpenProject(original);
    ASSERT_TRUE(store.ok());
    ProjectFiles& files = **store;
    ASSERT_TRUE(files.Write("README.md", "# zero\n").ok());
    ASSERT_TRUE(files.Write("README.md", "# one\n").ok());  // version 2 before the first snapshot
    ASSERT_TRUE(files.Write("src/main.cc", "int main() {}\n").ok());
    ASSERT_TRUE(files.Write("empty/x", "").ok());
    ASSERT_TRUE(files.Delete("empty/x").ok());
    ASSERT_TRUE(files.Write("big.bin", std::string(300'000, 'b')).ok());  // chunked
    ASSERT_TRUE(files.Snapshot("first").ok());
    ASSERT_TRUE(files.Write("README.md", "# two\n", WriteMode::kAppend).ok());
    ASSERT_TRUE(files.Write("README.md", "# three\n", WriteMode::kAppend).ok());  // 4 in the second snapshot
    ASSERT_TRUE(files.Delete("src", true).ok());
    ASSERT_TRUE(files.Snapshot().ok());
    ASSERT_TRUE(files.Write("src", "now a file").ok());
    ASSERT_TRUE(files.Snapshot("third").ok());
    ASSERT_TRUE(files.Write("live.txt", "live").ok());
  }
  const std::string expected = Describe(original);
  ASSERT_NE(expected.find("snapshot 3 third"), std::string::npos) << expected;

  auto copy = [](const std::string& from, const std::string& to) {
    StoreOptions options;
    options.max_read_bytes = 1 << 20;
    Result<std::unique_ptr<ProjectFiles>> source = OpenProject(from, options);
    ASSERT_TRUE(source.ok()) << source.status().ToString();
    Result<std::unique_ptr<ProjectFiles>> target = OpenProject(to, options);
    ASSERT_TRUE(target.ok()) << target.status().ToString();
    WorkspaceCopyOptions copy_options;
    copy_options.open_snapshot = SnapshotOpenerForUri(from, options);
    Result<WorkspaceCopyReport> report = CopyWorkspace(**source, **target, copy_options);
    ASSERT_TRUE(report.ok()) << report.status().ToString();
    EXPECT_EQ(report->snapshots.size(), 3u);
  };
  // Later than every time of the original, so a copy that stamped its own
  // clock on the files would show.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const std::string shared = TestPostgresUri() + "#" + NewTestPostgresWorkspace();
  copy(original, shared);
  EXPECT_EQ(Describe(shared), expected);
  const std::string back = "sqlite:" + dir.Join("back.db") + "#main";
  copy(shared, back);
  EXPECT_EQ(Describe(back), expected);
  EXPECT_EQ(Describe(original), expected) << "the source is unchanged";
}

}  // namespace
}  // namespace toolvfs
