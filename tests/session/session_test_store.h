// The stores the parameterized session tests run on: the memory store, and
// a sqlite workspace in a directory of its own.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>

#include "project/memory_store.h"
#include "project/project_files.h"
#include "project/sql/sqlite_store.h"
#include "session/session_workspace.h"

namespace toolvfs {

enum class Backend { kMemory, kSqlite };

// A fresh store of `backend` for the running test: for sqlite, the
// workspace `agent-1` in `directory`, a new directory named after `prefix`
// and the test, which the caller removes. Null after a failed open (the
// test has then failed).
inline std::unique_ptr<ProjectFiles> OpenSessionTestStore(Backend backend, const std::string& prefix,
                                                          std::filesystem::path& directory) {
  if (backend == Backend::kMemory) return NewMemoryStore(prefix);
  // A parameterized test's name is "Name/1": the slash would make the
  // directory two levels deep and the caller's removal would leave the outer one.
  std::string test_name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  std::replace(test_name.begin(), test_name.end(), '/', '-');
  directory = std::filesystem::temp_directory_path() /
              ("toolvfs-" + prefix + "-" + std::to_string(::getpid()) + "-" + test_name);
  std::filesystem::remove_all(directory);
  std::filesystem::create_directories(directory);
  Result<std::unique_ptr<ProjectFiles>> opened =
      OpenSqliteStore("sqlite:" + (directory / "store.db").string() + "#agent-1", {});
  EXPECT_TRUE(opened.ok()) << opened.status().ToString();
  return opened.ok() ? std::move(opened).value() : nullptr;
}

// "Memory" or "Sqlite", for INSTANTIATE_TEST_SUITE_P.
inline std::string BackendName(const ::testing::TestParamInfo<Backend>& info) {
  return info.param == Backend::kMemory ? "Memory" : "Sqlite";
}

// A parameterized test with a session of `settings` on a fresh store of
// each backend (OpenSessionTestStore), removed after the test.
class SessionOnEachStoreTest : public ::testing::TestWithParam<Backend> {
 protected:
  void CreateSession(const std::string& prefix, const SessionSettings& settings, SessionClock clock = nullptr) {
    store_ = OpenSessionTestStore(GetParam(), prefix, directory_);
    ASSERT_NE(store_, nullptr);
    Result<std::unique_ptr<SessionWorkspace>> created =
        SessionWorkspace::Create(*store_, settings, nullptr, std::move(clock));
    ASSERT_TRUE(created.ok()) << created.status().ToString();
    session_ = std::move(created).value();
  }
  void TearDown() override {
    session_.reset();
    store_.reset();
    if (!directory_.empty()) std::filesystem::remove_all(directory_);
  }

  std::filesystem::path directory_;
  std::unique_ptr<ProjectFiles> store_;
  std::unique_ptr<SessionWorkspace> session_;
};

}  // namespace toolvfs
