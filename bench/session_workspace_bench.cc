// session_workspace_bench: what snapshots cost an agent session (issue 19,
// docs/benchmarks.md, docs/sessions.md).
//
// For each store (memory:, and sqlite: with the default durability, or
// --no-sync), each round:
//   1. creates a session and fills it with FILES files (2,000) of SIZE
//      bytes (1 KiB) in 50 directories, written into the store as the host
//      mount loader writes them (timed: "creation");
//   2. runs CALLS session tool calls (1,000) through RunSessionTool, the
//      code the builtin runtime and the MCP server call: even calls
//      write_file (overwrite) file i * 7 % FILES, odd calls read_file it;
//   3. does the same on a second, identical session with a snapshot after
//      every EVERY calls (10).
// Prints the medians of --rounds rounds (3) and the ratio of 3 to 2, whose
// target is at most 1.10 (snapshots add at most 10 %). Contents are made
// before any clock starts; every call's result is checked.
//
//   session_workspace_bench [--no-sync] [--files N] [--calls N] [--every N] [--rounds N]
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "bench/bench_report.h"
#include "project/memory_store.h"
#include "project/sql/sqlite_store.h"
#include "session/session_tools.h"
#include "session/session_workspace.h"

namespace toolvfs::bench {
namespace {

using Clock = std::chrono::steady_clock;

struct Settings {
  size_t files = 2000;
  size_t size = 1024;
  size_t calls = 1000;
  size_t every = 10;
  size_t rounds = 3;
  bool no_sync = false;
};

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::string FilePath(size_t i) { return "mount/dir" + std::to_string(i % 50) + "/file" + std::to_string(i) + ".txt"; }

// Printable text of `size` bytes, distinct per `seed`.
std::string Content(size_t seed, size_t size) {
  std::string text;
  text.reserve(size);
  uint64_t state = seed * 6364136223846793005ULL + 1442695040888963407ULL;
  while (text.size() < size) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    text += static_cast<char>('a' + (state >> 59) % 26);
    if (text.size() % 64 == 63) text += '\n';
  }
  text.resize(size);
  return text;
}

class Stores {
 public:
  Stores(bool sqlite, bool no_sync) : sqlite_(sqlite), no_sync_(no_sync) {
    if (sqlite_) {
      directory_ = std::filesystem::temp_directory_path() / ("session-bench-" + std::to_string(::getpid()));
      std::filesystem::create_directories(directory_);
    }
  }
  ~Stores() {
    if (sqlite_) std::filesystem::remove_all(directory_);
  }
  std::unique_ptr<ProjectFiles> Open(const std::string& name) {
    if (!sqlite_) return NewMemoryStore(name);
    StoreOptions options;
    options.sync_writes = !no_sync_;
    auto opened = OpenSqliteStore("sqlite:" + (directory_ / "sessions.db").string() + "#" + name, options);
    if (!opened.ok()) Fail(opened.status().message());
    return std::move(opened).value();
  }

 private:
  bool sqlite_;
  bool no_sync_;
  std::filesystem::path directory_;
};

struct Round {
  double creation = 0;
  double calls_plain = 0;
  double calls_snapshots = 0;
};

// A session of `files` files; returns the creation time.
double Fill(ProjectFiles& store, SessionWorkspace& session, const Settings& settings,
            const std::vector<std::string>& contents) {
  static_cast<void>(session);
  Clock::time_point start = Clock::now();
  for (size_t i = 0; i < settings.files; ++i) {
    if (Status written = store.Write(FilePath(i), contents[i]); !written.ok()) Fail(written.message());
  }
  return SecondsSince(start);
}

// The run's time; `in_snapshots` gets the part spent in Snapshot() itself.
double Calls(SessionWorkspace& session, const Settings& settings, const std::vector<std::string>& updates,
             size_t snapshot_every, double& in_snapshots) {
  in_snapshots = 0;
  Clock::time_point start = Clock::now();
  for (size_t call = 0; call < settings.calls; ++call) {
    size_t file = call * 7 % settings.files;
    ConfigValue::Object arguments{{"path", FilePath(file)}};
    const char* tool = "read_file";
    if (call % 2 == 0) {
      tool = "write_file";
      arguments["content"] = updates[call];
      arguments["mode"] = "overwrite";
    }
    Result<std::string> result = RunSessionTool(session, tool, arguments);
    if (!result.ok()) Fail(std::string(tool) + ": " + result.status().message());
    if (snapshot_every != 0 && (call + 1) % snapshot_every == 0) {
      Clock::time_point snapshot_start = Clock::now();
      Result<std::string> snapshot = session.Snapshot(std::nullopt);
      if (!snapshot.ok()) Fail(snapshot.status().message());
      in_snapshots += SecondsSince(snapshot_start);
    }
  }
  return SecondsSince(start);
}

void RunStore(const char* label, bool sqlite, const Settings& settings) {
  std::vector<std::string> contents, updates;
  for (size_t i = 0; i < settings.files; ++i) contents.push_back(Content(i, settings.size));
  for (size_t i = 0; i < settings.calls; ++i) updates.push_back(Content(settings.files + i, settings.size));
  Stores stores(sqlite, settings.no_sync);
  std::vector<double> creation, plain, with_snapshots, snapshot_part;
  for (size_t round = 0; round < settings.rounds; ++round) {
    for (int snapshots = 0; snapshots < 2; ++snapshots) {
      std::string name = "r" + std::to_string(round) + (snapshots ? "s" : "p");
      std::unique_ptr<ProjectFiles> store = stores.Open(name);
      auto session = SessionWorkspace::Create(*store, {.id = name});
      if (!session.ok()) Fail(session.status().message());
      double created = Fill(*store, **session, settings, contents);
      if (!snapshots) creation.push_back(created);
      double in_snapshots = 0;
      double seconds = Calls(**session, settings, updates, snapshots ? settings.every : 0, in_snapshots);
      (snapshots ? with_snapshots : plain).push_back(seconds);
      if (snapshots) snapshot_part.push_back(in_snapshots);
    }
  }
  double plain_median = Median(plain), snapshot_median = Median(with_snapshots);
  std::printf("%-8s creation %8.1f ms | %zu calls: %8.1f ms without snapshots, %8.1f ms with one every %zu "
              "(%.1f ms in Snapshot() itself) | ratio %.3f (target <= 1.10)\n",
              label, Median(creation) * 1000, settings.calls, plain_median * 1000, snapshot_median * 1000,
              settings.every, Median(snapshot_part) * 1000, snapshot_median / plain_median);
}

}  // namespace
}  // namespace toolvfs::bench

int main(int argc, char** argv) {
  using namespace toolvfs::bench;
  Settings settings;
  CLI::App app("session_workspace_bench: snapshots every N session tool calls against none");
  app.add_option("--files", settings.files, "Files in the session's mount (2000)");
  app.add_option("--calls", settings.calls, "Tool calls per run (1000)");
  app.add_option("--every", settings.every, "Calls between snapshots (10)");
  app.add_option("--rounds", settings.rounds, "Rounds; medians are printed (3)");
  app.add_flag("--no-sync", settings.no_sync, "sqlite without a disk flush per write");
  ParseCommandLine(app, argc, argv);
  if (settings.files == 0 || settings.calls == 0 || settings.every == 0 || settings.rounds == 0) {
    Fail("--files, --calls, --every and --rounds must be at least 1");
  }
  std::printf("session_workspace_bench: %zu files of %zu bytes, %zu calls (write/read), %zu rounds; %s\n",
              settings.files, settings.size, settings.calls, settings.rounds, Machine().c_str());
  RunStore("memory", false, settings);
  RunStore(settings.no_sync ? "sqlite*" : "sqlite", true, settings);
  return 0;
}
