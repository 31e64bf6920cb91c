// The PostgreSQL server of the tests. Under CTest a fixture starts one for
// the whole run (tests/project/CMakeLists.txt) and TOOLVFS_TEST_POSTGRES
// names its socket directory; a test binary started by hand starts its own
// with scripts/test-postgres.sh on first use and stops it at exit. Either
// way it is a real server, never a stand-in.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

namespace toolvfs {

namespace test_postgres_internal {
inline std::string& StartedDirectory() {
  static std::string directory;
  return directory;
}
inline void StopStartedServer() {
  const std::string& directory = StartedDirectory();
  if (directory.empty()) return;
  std::string command = std::string(TOOLVFS_TEST_SOURCE_DIR) + "/scripts/test-postgres.sh stop " + directory;
  if (std::system(command.c_str()) != 0) std::fprintf(stderr, "could not stop the test server in %s\n", directory.c_str());
}
}  // namespace test_postgres_internal

// The directory of the server's Unix socket; starts the server if needed.
inline std::string TestPostgresSocketDirectory() {
  const char* fixture = std::getenv("TOOLVFS_TEST_POSTGRES");
  if (fixture != nullptr && fixture[0] != '\0') return fixture;
  std::string& directory = test_postgres_internal::StartedDirectory();
  if (directory.empty()) {
    directory = "/tmp/toolvfs-test-postgres-" + std::to_string(::getpid());
    std::string command = std::string(TOOLVFS_TEST_SOURCE_DIR) + "/scripts/test-postgres.sh start " + directory;
    if (std::system(command.c_str()) != 0) {
      ADD_FAILURE() << "cannot start the test PostgreSQL server: " << command;
    }
    std::atexit(test_postgres_internal::StopStartedServer);
  }
  return directory;
}

// The server's port: its loopback TCP port, which also names its socket
// in TestPostgresSocketDirectory() (.s.PGSQL.PORT).
inline std::string TestPostgresPort(const std::string& directory = TestPostgresSocketDirectory()) {
  std::ifstream file(directory + "/port");
  std::string port;
  if (!(file >> port)) ADD_FAILURE() << "the test server in " << directory << " wrote no port file";
  return port;
}

// A URI of database `database` on the test server, as user toolvfs,
// through its Unix socket.
inline std::string TestPostgresUri(std::string_view database = "postgres") {
  const std::string directory = TestPostgresSocketDirectory();
  return "postgresql://toolvfs@/" + std::string(database) + "?host=" + directory + "&port=" + TestPostgresPort(directory);
}

// A workspace name no other test of any run on the test server used, so
// a test starts from an empty workspace without cleaning up after others.
inline std::string NewTestPostgresWorkspace() {
  static int count = 0;
  return "test-" + std::to_string(::getpid()) + "-" + std::to_string(++count);
}

// The same over loopback TCP.
inline std::string TestPostgresTcpUri(std::string_view database = "postgres") {
  return "postgresql://toolvfs@127.0.0.1:" + TestPostgresPort() + "/" + std::string(database);
}

// A server of its own for a test that stops and starts it (a restart
// mid-run), so the shared one stays up for the tests running beside it.
// Started by the constructor, stopped and deleted by the destructor.
class PrivatePostgresServer {
 public:
  PrivatePostgresServer() {
    static int count = 0;
    directory_ = "/tmp/toolvfs-test-postgres-" + std::to_string(::getpid()) + "-" + std::to_string(++count);
    started_ = Run("start");
    if (started_) port_ = TestPostgresPort(directory_);
  }
  PrivatePostgresServer(const PrivatePostgresServer&) = delete;
  PrivatePostgresServer& operator=(const PrivatePostgresServer&) = delete;
  ~PrivatePostgresServer() { (void)Run("stop"); }

  bool started() const { return started_; }
  // Stops the server; its data and port stay, so Start() brings it back.
  bool Stop() { return Run("halt"); }
  bool Start() { return Run("start"); }
  std::string Uri(std::string_view database = "postgres") const {
    return "postgresql://toolvfs@/" + std::string(database) + "?host=" + directory_ + "&port=" + port_;
  }
  std::string TcpUri(std::string_view database = "postgres") const {
    return "postgresql://toolvfs@127.0.0.1:" + port_ + "/" + std::string(database);
  }

 private:
  bool Run(const char* action) {
    std::string command = std::string(TOOLVFS_TEST_SOURCE_DIR) + "/scripts/test-postgres.sh " + action + " " + directory_;
    if (std::system(command.c_str()) == 0) return true;
    ADD_FAILURE() << "failed: " << command;
    return false;
  }
  std::string directory_;
  std::string port_;
  bool started_ = false;
};

}  // namespace toolvfs
