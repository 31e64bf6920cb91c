// The PostgreSQL server of the tests. Under CTest a fixture starts one for
// the whole run (tests/project/CMakeLists.txt) and TOOLVFS_TEST_POSTGRES
// names its socket directory; a test binary started by hand starts its own
// with scripts/test-postgres.sh on first use and stops it at exit. Either
// way it is a real server, never a stand-in.
#pragma once

#include <unistd.h>

#include <cstdlib>
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

// A URI of database `database` on the test server, as user toolvfs.
inline std::string TestPostgresUri(std::string_view database = "postgres") {
  return "postgresql://toolvfs@/" + std::string(database) + "?host=" + TestPostgresSocketDirectory();
}

}  // namespace toolvfs
