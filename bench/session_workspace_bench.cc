// session_workspace_bench: what snapshots cost an agent session (issue 19,
// docs/benchmarks.md, docs/sessions.md).
//
// Before any clock starts, a host directory of FILES files (2,000) of SIZE
// bytes (1 KiB) in 50 directories is written to a temp dir. For each store
// (memory:, and sqlite: with the default durability, or --no-sync), each
// round:
//   1. creates a session whose config mounts that directory at `mount`
//      (allowed root: the temp dir), so SessionWorkspace::Create loads it
//      through LoadSessionHostMounts (timed: "creation");
//   2. runs CALLS tool calls (1,000) through the builtin runtime, as `toolvfs
//      run` and the MCP server do (argument check, policy, audit record):
//      even calls write_file (overwrite) file i * 7 % FILES, odd calls
//      read_file it;
//   3. does the same on a second session made the same way, with a snapshot
//      (SessionWorkspace::Snapshot, the orchestrator's call) after every
//      EVERY calls (10).
// 2 and 3 alternate which goes first (AB, BA, ...). Prints the medians of
// --rounds rounds (7) and the median of the rounds' ratios of 3 to 2, whose
// target is at most 1.10 (snapshots add at most 10 %). Every call's
// outcome is checked.
//
//   session_workspace_bench [--no-sync] [--files N] [--calls N] [--every N] [--rounds N]
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "bench/bench_report.h"
#include "policy/audit.h"
#include "project/memory_store.h"
#include "project/sql/sqlite_store.h"
#include "runtime/builtin_runtime.h"
#include "session/session_workspace.h"

namespace toolvfs::bench {
namespace {

using Clock = std::chrono::steady_clock;

struct Settings {
  size_t files = 2000;
  size_t size = 1024;
  size_t calls = 1000;
  size_t every = 10;
  size_t rounds = 7;
  bool no_sync = false;
};

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::string HostPath(size_t i) { return "dir" + std::to_string(i % 50) + "/file" + std::to_string(i) + ".txt"; }
std::string FilePath(size_t i) { return "mount/" + HostPath(i); }

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

// The temp dir: the host directory to mount (`host/`) and the SQLite file.
class Directory {
 public:
  explicit Directory(const Settings& settings)
      : path_(std::filesystem::temp_directory_path() / ("session-bench-" + std::to_string(::getpid()))) {
    for (size_t i = 0; i < settings.files; ++i) {
      std::filesystem::path file = path_ / "host" / HostPath(i);
      std::filesystem::create_directories(file.parent_path());
      std::ofstream out(file, std::ios::binary);
      out << Content(i, settings.size);
      if (!out.flush()) Fail("cannot write " + file.string());
    }
  }
  ~Directory() { std::filesystem::remove_all(path_); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

class Stores {
 public:
  Stores(bool sqlite, bool no_sync, std::filesystem::path directory)
      : sqlite_(sqlite), no_sync_(no_sync), directory_(std::move(directory)) {}
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

// The session mounting the host directory, created in `store`; `seconds`
// gets the creation time (the mount's load included).
std::unique_ptr<SessionWorkspace> CreateSession(ProjectFiles& store, const std::string& name,
                                                const std::filesystem::path& directory, double& seconds) {
  SessionSettings settings{.id = name};
  settings.allowed_roots = {directory.string()};
  settings.mounts = {SessionMount{.host_path = (directory / "host").string(), .mount_path = "mount"}};
  Clock::time_point start = Clock::now();
  auto session = SessionWorkspace::Create(store, std::move(settings));
  seconds = SecondsSince(start);
  if (!session.ok()) Fail(session.status().message());
  return std::move(session).value();
}

// A builtin tool allowed to read and write the whole workspace.
ToolConfig Tool(const std::string& name) {
  ToolConfig tool;
  tool.name = name;
  tool.source = ToolSource::kBuiltin;
  tool.has_sandbox_table = true;
  tool.sandbox.filesystem_allow = {""};
  tool.sandbox.filesystem_writable.prefixes = {""};
  return tool;
}

// The arguments of each call, made before the clock starts.
std::vector<ToolCall> MakeCalls(const Settings& settings) {
  std::vector<ToolCall> calls;
  for (size_t call = 0; call < settings.calls; ++call) {
    ConfigValue::Object arguments{{"path", FilePath(call * 7 % settings.files)}};
    std::string tool = "read_file";
    if (call % 2 == 0) {
      tool = "write_file";
      arguments["content"] = Content(settings.files + call, settings.size);
      arguments["mode"] = "overwrite";
    }
    calls.push_back(ToolCall{.name = tool, .id = "c" + std::to_string(call),
                             .arguments_json = ConfigValue(std::move(arguments)).ToJson()});
  }
  return calls;
}

// The run's time; `in_snapshots` gets the part spent in Snapshot() itself.
double Calls(ProjectFiles& store, SessionWorkspace& session, const std::vector<ToolCall>& calls,
             size_t snapshot_every, double& in_snapshots) {
  in_snapshots = 0;
  size_t audited = 0;
  std::unique_ptr<AuditSink> audit = NewCallbackAuditSink([&](const AuditRecord&) { ++audited; });
  BuiltinRuntime runtime(store, BuiltinRuntimeOptions{.audit = audit.get(), .session_workspace = true});
  const ToolConfig read_file = Tool("read_file");
  const ToolConfig write_file = Tool("write_file");
  CancelToken cancel;
  Clock::time_point start = Clock::now();
  for (size_t call = 0; call < calls.size(); ++call) {
    const ToolConfig& tool = calls[call].name == "read_file" ? read_file : write_file;
    Result<Outcome> outcome = runtime.Execute(calls[call], tool, cancel);
    if (!outcome.ok()) Fail(tool.name + ": " + outcome.status().message());
    if (outcome->is_error) Fail(tool.name + ": " + (outcome->error ? outcome->error->message : "failed"));
    if (snapshot_every != 0 && (call + 1) % snapshot_every == 0) {
      Clock::time_point snapshot_start = Clock::now();
      Result<std::string> snapshot = session.Snapshot(std::nullopt);
      if (!snapshot.ok()) Fail(snapshot.status().message());
      in_snapshots += SecondsSince(snapshot_start);
    }
  }
  double seconds = SecondsSince(start);
  if (audited != calls.size()) Fail("expected one audit record per call");
  return seconds;
}

// One session's run: creation with the mount, then the calls with a
// snapshot every `snapshot_every` calls (0: none).
struct SessionRun {
  double creation = 0;
  double calls = 0;
  double in_snapshots = 0;
};

SessionRun RunSession(Stores& stores, const std::string& name, const Directory& directory,
                      const std::vector<ToolCall>& calls, size_t snapshot_every) {
  std::unique_ptr<ProjectFiles> store = stores.Open(name);
  SessionRun run;
  std::unique_ptr<SessionWorkspace> session = CreateSession(*store, name, directory.path(), run.creation);
  run.calls = Calls(*store, *session, calls, snapshot_every, run.in_snapshots);
  return run;
}

// Rounds of a pair of runs, without (A) and with (B) snapshots, in the
// order AB, BA, AB, ...: every session of a store lives in one file that
// grows by one workspace per run, and the machine's load drifts, so neither
// variant may always go first. Each round gives one ratio B/A from two runs
// made within a second of each other; the median of those ratios is the
// figure to quote, so one slow moment moves one round, not the result.
void RunStore(const char* label, bool sqlite, const Settings& settings, const Directory& directory) {
  const std::vector<ToolCall> calls = MakeCalls(settings);
  Stores stores(sqlite, settings.no_sync, directory.path());
  std::vector<double> creation, plain, with_snapshots, snapshot_part, ratios;
  for (size_t round = 0; round < settings.rounds; ++round) {
    SessionRun runs[2];  // [0] without, [1] with snapshots
    for (int turn = 0; turn < 2; ++turn) {
      const int snapshots = round % 2 == 0 ? turn : 1 - turn;
      const std::string name = "r" + std::to_string(round) + (snapshots ? "s" : "p");
      runs[snapshots] = RunSession(stores, name, directory, calls, snapshots ? settings.every : 0);
      creation.push_back(runs[snapshots].creation);
    }
    plain.push_back(runs[0].calls);
    with_snapshots.push_back(runs[1].calls);
    snapshot_part.push_back(runs[1].in_snapshots);
    ratios.push_back(runs[1].calls / runs[0].calls);
  }
  std::string spread;
  if (ratios.size() > 1) {
    auto [low, high] = std::minmax_element(ratios.begin(), ratios.end());
    char text[64];
    std::snprintf(text, sizeof text, ", rounds %.3f-%.3f", *low, *high);
    spread = text;
  }
  std::printf("%-8s creation with the mount %8.1f ms | %zu calls: %8.1f ms without snapshots, %8.1f ms with one every %zu "
              "(%.1f ms in Snapshot() itself) | median ratio of %zu rounds %.3f%s (target <= 1.10)\n",
              label, Median(creation) * 1000, settings.calls, Median(plain) * 1000, Median(with_snapshots) * 1000,
              settings.every, Median(snapshot_part) * 1000, settings.rounds, Median(ratios), spread.c_str());
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
  app.add_option("--rounds", settings.rounds, "Rounds of a run without and one with snapshots, in turns (AB, BA, ...); the median of the rounds' ratios is printed (7)");
  app.add_flag("--no-sync", settings.no_sync, "sqlite without a disk flush per write");
  ParseCommandLine(app, argc, argv);
  if (settings.files == 0 || settings.calls == 0 || settings.every == 0 || settings.rounds == 0) {
    Fail("--files, --calls, --every and --rounds must be at least 1");
  }
  std::printf("session_workspace_bench: %zu files of %zu bytes, %zu calls (write/read), %zu rounds; %s\n",
              settings.files, settings.size, settings.calls, settings.rounds, Machine().c_str());
  const Directory directory(settings);
  RunStore("memory", false, settings, directory);
  RunStore(settings.no_sync ? "sqlite*" : "sqlite", true, settings, directory);
  return 0;
}
