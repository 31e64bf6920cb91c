// store_bench: the sqlite store against plain SQLite and AgentFS (issue 17,
// docs/benchmarks.md).
//
// Part 1, the AgentFS small-file workload, each operation awaited before
// the next, single threaded, in one run on four stores:
//   create FILES files (default 10,000) of SIZE bytes (1 KiB) in DIRS
//   directories (100; file i in directory i % DIRS), read them all (file
//   i * 7919 % FILES in turn, so not in creation order), list every
//   directory (--list-sweeps times in a row, 10, for (a)-(c): one sweep
//   takes milliseconds; AgentFS once), overwrite OVERWRITES files (1,000; file j * FILES / OVERWRITES)
// on
//   (a) the fs store (OpenProject of a directory),
//   (b) the sqlite store (OpenProject("sqlite:FILE#bench")),
//   (c) plain SQLite: one table files(path TEXT PRIMARY KEY, content BLOB)
//       through the C API, prepared statements reused, WAL, each write its
//       own transaction (an upsert), reads by primary key, a listing as a
//       range scan of the key,
//   (d) AgentFS (npm agentfs-sdk 0.6.4 under node, bench/agentfs_driver.mjs;
//       skipped with a note when node or npm is missing or the registry is
//       unreachable).
// Durability is the same for (a)-(c): StoreOptions::sync_writes=true and
// synchronous=FULL by default; --no-sync runs sync_writes=false and
// synchronous=NORMAL. AgentFS runs at its default, WAL and synchronous=FULL
// (it has no NORMAL). Contents are
// random, distinct and generated before any clock starts; every read is
// checked against what was written. (a)-(c) run --repeat passes (3) in
// turn, each on new files, and the table shows medians per phase; AgentFS
// runs once, after the middle pass (--agentfs-files shrinks its run: it
// takes minutes). Prints
// ops/s per phase and the ratios (b)/(c) and (b)/(d) against the targets of
// issue 17.
//
// Part 2, snapshots of the sqlite store: for workspaces of 1,000 and 10,000
// files (--large adds 100,000) and 10 and 1,000 changed files, each round
// takes a snapshot S0, changes K files (a tenth deleted, a tenth added, the
// rest overwritten), then times Snapshot() -> S1, Restore(S0), Diff(S0, S1)
// and DeleteSnapshot(S1); medians of --rounds rounds (5). Filling the
// workspace runs without sync; the changes and the timed calls use the
// durability of part 1.
//
//   store_bench [--no-sync] [--large] [--files N] [--agentfs-files N] ...
#include <sqlite3.h>
#include <stdlib.h>
#include <sys/statfs.h>
#include <sys/wait.h>

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "bench_report.h"
#include "project/project_files.h"

namespace toolvfs {
namespace {

using bench::Fail;
using bench::Machine;
using bench::Median;
using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// ----- The workload -----------------------------------------------------------

struct Workload {
  int files = 10000;
  int dirs = 100;
  int size = 1024;
  int overwrites = 1000;
  // Listings of all directories in a row for (a)-(c): one sweep of 100
  // takes a few ms, where one context switch decides the figure.
  int list_sweeps = 10;
};

// Random bytes from splitmix64: distinct for distinct seeds, so content
// addressing never merges two files.
std::string RandomContent(uint64_t seed, size_t size) {
  std::string bytes(size, '\0');
  uint64_t state = seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
  for (size_t i = 0; i < size; i += 8) {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    std::memcpy(bytes.data() + i, &z, std::min<size_t>(8, size - i));
  }
  return bytes;
}

std::string DirName(int d) {
  char name[16];
  std::snprintf(name, sizeof name, "d%02d", d);
  return name;
}

std::string FilePath(int i, int dirs) {
  char name[32];
  std::snprintf(name, sizeof name, "/f%05d", i);
  return DirName(i % dirs) + name;
}

// Seconds per phase (create, read, list, overwrite).
struct PhaseTimes {
  double create = 0, read = 0, list = 0, overwrite = 0;
};

// What each store offers the workload. Each call is one operation,
// completed (and durable, per the store's setting) when it returns.
class WorkloadStore {
 public:
  virtual ~WorkloadStore() = default;
  virtual void Write(const std::string& path, const std::string& content) = 0;
  virtual std::string Read(const std::string& path) = 0;
  virtual size_t List(const std::string& dir) = 0;  // the number of entries
};

PhaseTimes RunWorkload(WorkloadStore& store, const Workload& work, const std::vector<std::string>& paths,
                       const std::vector<std::string>& contents, const std::vector<std::string>& rewritten) {
  PhaseTimes times;
  Clock::time_point start = Clock::now();
  for (int i = 0; i < work.files; ++i) store.Write(paths[i], contents[i]);
  times.create = SecondsSince(start);

  start = Clock::now();
  for (int k = 0; k < work.files; ++k) {
    int i = static_cast<int>((static_cast<int64_t>(k) * 7919) % work.files);
    if (store.Read(paths[i]) != contents[i]) Fail(paths[i] + ": read back other bytes than written");
  }
  times.read = SecondsSince(start);

  start = Clock::now();
  for (int sweep = 0; sweep < work.list_sweeps; ++sweep) {
    size_t listed = 0;
    for (int d = 0; d < work.dirs; ++d) listed += store.List(DirName(d));
    if (listed != static_cast<size_t>(work.files)) {
      Fail("listing found " + std::to_string(listed) + " entries, not " + std::to_string(work.files));
    }
  }
  times.list = SecondsSince(start);

  start = Clock::now();
  for (int j = 0; j < work.overwrites; ++j) {
    store.Write(paths[static_cast<int64_t>(j) * work.files / work.overwrites], rewritten[j]);
  }
  times.overwrite = SecondsSince(start);
  return times;
}

// (a) and (b): a ProjectFiles.
class ProjectStore : public WorkloadStore {
 public:
  explicit ProjectStore(std::unique_ptr<ProjectFiles> files) : files_(std::move(files)) {}
  void Write(const std::string& path, const std::string& content) override {
    if (Status status = files_->Write(path, content); !status.ok()) Fail(status.message());
  }
  std::string Read(const std::string& path) override {
    Result<std::string> content = files_->Read(path);
    if (!content.ok()) Fail(content.status().message());
    return std::move(*content);
  }
  size_t List(const std::string& dir) override {
    Result<std::vector<DirEntry>> entries = files_->ListDir(dir);
    if (!entries.ok()) Fail(entries.status().message());
    return entries->size();
  }

 private:
  std::unique_ptr<ProjectFiles> files_;
};

// (c): plain SQLite, one table, the C API.
class PlainSqliteStore : public WorkloadStore {
 public:
  PlainSqliteStore(const std::string& file, bool sync) {
    if (sqlite3_open_v2(file.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) != SQLITE_OK) {
      Fail("cannot open " + file + ": " + sqlite3_errmsg(db_));
    }
    Exec("PRAGMA journal_mode=WAL");
    Exec(sync ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL");
    Exec("CREATE TABLE files(path TEXT PRIMARY KEY, content BLOB)");
    write_ = Prepare(
        "INSERT INTO files(path, content) VALUES(?1, ?2) "
        "ON CONFLICT(path) DO UPDATE SET content=excluded.content");
    read_ = Prepare("SELECT content FROM files WHERE path=?1");
    list_ = Prepare("SELECT path FROM files WHERE path>=?1 AND path<?2");
  }
  ~PlainSqliteStore() override {
    sqlite3_finalize(write_);
    sqlite3_finalize(read_);
    sqlite3_finalize(list_);
    sqlite3_close(db_);
  }
  void Write(const std::string& path, const std::string& content) override {
    sqlite3_bind_text(write_, 1, path.data(), static_cast<int>(path.size()), SQLITE_STATIC);
    sqlite3_bind_blob(write_, 2, content.data(), static_cast<int>(content.size()), SQLITE_STATIC);
    if (sqlite3_step(write_) != SQLITE_DONE) Fail(std::string("plain write: ") + sqlite3_errmsg(db_));
    sqlite3_reset(write_);
  }
  std::string Read(const std::string& path) override {
    sqlite3_bind_text(read_, 1, path.data(), static_cast<int>(path.size()), SQLITE_STATIC);
    if (sqlite3_step(read_) != SQLITE_ROW) Fail("plain read: " + path + " missing");
    std::string content(static_cast<const char*>(sqlite3_column_blob(read_, 0)),
                        static_cast<size_t>(sqlite3_column_bytes(read_, 0)));
    sqlite3_reset(read_);
    return content;
  }
  // The direct children of `dir`: a range scan of the key, deeper paths
  // skipped (there are none in this workload).
  size_t List(const std::string& dir) override {
    const std::string first = dir + "/", past = dir + "0";
    sqlite3_bind_text(list_, 1, first.data(), static_cast<int>(first.size()), SQLITE_STATIC);
    sqlite3_bind_text(list_, 2, past.data(), static_cast<int>(past.size()), SQLITE_STATIC);
    std::vector<std::string> names;
    while (sqlite3_step(list_) == SQLITE_ROW) {
      std::string_view path(reinterpret_cast<const char*>(sqlite3_column_text(list_, 0)),
                            static_cast<size_t>(sqlite3_column_bytes(list_, 0)));
      std::string_view name = path.substr(first.size());
      if (name.find('/') == std::string_view::npos) names.emplace_back(name);
    }
    sqlite3_reset(list_);
    return names.size();
  }

 private:
  void Exec(const char* sql) {
    char* error = nullptr;
    if (sqlite3_exec(db_, sql, nullptr, nullptr, &error) != SQLITE_OK) {
      std::string message = error != nullptr ? error : "?";
      sqlite3_free(error);
      Fail(std::string(sql) + ": " + message);
    }
  }
  sqlite3_stmt* Prepare(const char* sql) {
    sqlite3_stmt* statement = nullptr;
    if (sqlite3_prepare_v3(db_, sql, -1, SQLITE_PREPARE_PERSISTENT, &statement, nullptr) != SQLITE_OK) {
      Fail(std::string(sql) + ": " + sqlite3_errmsg(db_));
    }
    return statement;
  }

  sqlite3* db_ = nullptr;
  sqlite3_stmt* write_ = nullptr;
  sqlite3_stmt* read_ = nullptr;
  sqlite3_stmt* list_ = nullptr;
};

std::unique_ptr<ProjectFiles> Open(const std::string& uri, bool sync) {
  StoreOptions options;
  options.sync_writes = sync;
  Result<std::unique_ptr<ProjectFiles>> store = OpenProject(uri, options);
  if (!store.ok()) Fail(store.status().message());
  return std::move(*store);
}

// The output of `command` (run by sh), its exit status in `status`.
std::string Capture(const std::string& command, int& status) {
  std::string output;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) {
    status = -1;
    return output;
  }
  char buffer[4096];
  while (size_t got = std::fread(buffer, 1, sizeof buffer, pipe)) output.append(buffer, got);
  int raw = pclose(pipe);
  status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return output;
}

std::string ShellQuote(const std::string& word) {
  std::string quoted = "'";
  for (char c : word) {
    if (c == '\'') quoted += "'\\''";
    else quoted += c;
  }
  return quoted + "'";
}

double JsonNumber(const std::string& json, const char* key) {
  std::string needle = std::string("\"") + key + "\":";
  size_t at = json.find(needle);
  if (at == std::string::npos) return -1;
  return std::strtod(json.c_str() + at + needle.size(), nullptr);
}

// (d), or nothing (with the reason on stdout) when AgentFS cannot run here.
std::optional<PhaseTimes> RunAgentFs(const Workload& work, const std::string& dir) {
  int status = 0;
  std::string where = Capture(std::string(INSTALL_AGENTFS) + " --print-dir", status);
  while (!where.empty() && (where.back() == '\n' || where.back() == ' ')) where.pop_back();
  if (size_t newline = where.rfind('\n'); newline != std::string::npos) where = where.substr(newline + 1);
  if (status != 0 || where.empty()) {
    std::printf("note: (d) AgentFS skipped: scripts/install-agentfs.sh could not install agentfs-sdk "
                "(npm missing or registry unreachable; its message is above)\n");
    return std::nullopt;
  }
  std::string command = "node " + ShellQuote(AGENTFS_DRIVER) + " " + ShellQuote(where) + " " +
                        ShellQuote(dir + "/agentfs.db") + " " + std::to_string(work.files) + " " +
                        std::to_string(work.dirs) + " " + std::to_string(work.size) + " " +
                        std::to_string(work.overwrites);
  std::string json = Capture(command, status);
  PhaseTimes times{JsonNumber(json, "create"), JsonNumber(json, "read"), JsonNumber(json, "list"),
                   JsonNumber(json, "overwrite")};
  if (status != 0 || times.create <= 0 || times.read <= 0 || times.list <= 0 || times.overwrite <= 0) {
    std::printf("note: (d) AgentFS skipped: its driver failed (exit %d; output: %s)\n", status, json.c_str());
    return std::nullopt;
  }
  return times;
}

// ----- Snapshots ---------------------------------------------------------------

struct SnapshotCosts {
  double snapshot = 0, restore = 0, diff = 0, delete_snapshot = 0;  // milliseconds, medians
};

template <typename T>
T Must(Result<T> result) {
  if (!result.ok()) Fail(result.status().message());
  return std::move(*result);
}
void Must(const Status& status) {
  if (!status.ok()) Fail(status.message());
}

std::string SnapshotFilePath(int i, int dirs) {
  char name[32];
  std::snprintf(name, sizeof name, "/f%06d", i);
  return DirName(i % dirs) + name;
}

// Fills a workspace of `files` files (through a connection without sync, to
// save time), then runs `rounds` rounds of `changes` changes for each count
// in `change_counts`, all with the durability asked for: the changes are
// synced by their own commits, so a timed call pays for its own work only.
std::vector<SnapshotCosts> MeasureSnapshots(const std::string& store_file, int files, int dirs, int size,
                                            const std::vector<int>& change_counts, int rounds, bool sync,
                                            uint64_t& seed) {
  const std::string uri = "sqlite:" + store_file + "#snapshots";
  {
    std::unique_ptr<ProjectFiles> setup = Open(uri, /*sync=*/false);
    for (int i = 0; i < files; ++i) Must(setup->Write(SnapshotFilePath(i, dirs), RandomContent(++seed, size)));
  }
  std::unique_ptr<ProjectFiles> store = Open(uri, sync);
  std::vector<SnapshotCosts> costs;
  for (int changes : change_counts) {
    std::vector<double> snapshot, restore, diff, delete_snapshot;
    for (int round = 0; round < rounds; ++round) {
      const std::string before = Must(store->Snapshot());
      // A tenth deleted, a tenth added, the rest overwritten; distinct files.
      const int tenth = std::max(1, changes / 10);
      size_t deleted = 0, added = 0, modified = 0;
      for (int j = 0; j < changes; ++j) {
        int i = static_cast<int>((static_cast<int64_t>(j) * files / changes + round) % files);
        if (j < tenth) {
          Must(store->Delete(SnapshotFilePath(i, dirs)));
          ++deleted;
        } else if (j < 2 * tenth) {
          Must(store->Write(DirName(j % dirs) + "/new" + std::to_string(j), RandomContent(++seed, size)));
          ++added;
        } else {
          Must(store->Write(SnapshotFilePath(i, dirs), RandomContent(++seed, size)));
          ++modified;
        }
      }
      Clock::time_point start = Clock::now();
      const std::string after = Must(store->Snapshot());
      snapshot.push_back(SecondsSince(start) * 1e3);
      start = Clock::now();
      Must(store->Restore(before));
      restore.push_back(SecondsSince(start) * 1e3);
      start = Clock::now();
      TreeDiff difference = Must(store->Diff(before, after));
      diff.push_back(SecondsSince(start) * 1e3);
      if (difference.added.size() != added || difference.deleted.size() != deleted ||
          difference.modified.size() != modified) {
        Fail("Diff of " + std::to_string(changes) + " changes found " + std::to_string(difference.added.size()) +
             " added, " + std::to_string(difference.modified.size()) + " modified, " +
             std::to_string(difference.deleted.size()) + " deleted");
      }
      start = Clock::now();
      Must(store->DeleteSnapshot(after));
      delete_snapshot.push_back(SecondsSince(start) * 1e3);
      Must(store->DeleteSnapshot(before));
      // The live state is `before` again, so each round starts alike.
      if (!Must(store->Exists(SnapshotFilePath(round % files, dirs)))) Fail("Restore did not bring a deleted file back");
    }
    costs.push_back({Median(snapshot), Median(restore), Median(diff), Median(delete_snapshot)});
  }
  return costs;
}

// ----- Report -------------------------------------------------------------------

std::string FileSystemOf(const std::string& dir) {
  struct statfs info;
  if (statfs(dir.c_str(), &info) != 0) return "unknown file system";
  switch (static_cast<unsigned long>(info.f_type)) {
    case 0xEF53: return "ext4";
    case 0x01021994: return "tmpfs (no disk: sync costs nothing)";
    case 0x58465342: return "xfs";
    case 0x9123683E: return "btrfs";
    case 0x794C7630: return "overlayfs";
    default: {
      char hex[32];
      std::snprintf(hex, sizeof hex, "file system 0x%lx", static_cast<unsigned long>(info.f_type));
      return hex;
    }
  }
}

std::string Ratio(double numerator, double denominator) {
  if (numerator <= 0 || denominator <= 0) return "—";
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", numerator / denominator);
  return text;
}

std::string OpsText(double ops_per_second) {
  if (ops_per_second <= 0) return "—";
  char text[32];
  std::snprintf(text, sizeof text, "%.0f", ops_per_second);
  return text;
}

}  // namespace
}  // namespace toolvfs

int main(int argc, char** argv) {
  using namespace toolvfs;
  Workload work;
  bool no_sync = false, large = false, no_agentfs = false, keep = false, skip_workload = false,
       skip_snapshots = false;
  int agentfs_files = 0, rounds = 5, repeat = 3;
  std::string parent = std::filesystem::temp_directory_path();
  CLI::App app{"store_bench: the sqlite store against the fs store, plain SQLite and AgentFS (issue 17)"};
  app.add_flag("--no-sync", no_sync,
               "sync_writes=false and synchronous=NORMAL for (a)-(c) (default: sync_writes=true, FULL)");
  app.add_flag("--large", large, "snapshots also of a 100,000-file workspace (minutes to fill)");
  app.add_option("--files", work.files, "files of the workload")->check(CLI::Range(1, 99999));
  app.add_option("--dirs", work.dirs, "directories of the workload")->check(CLI::Range(1, 100));
  app.add_option("--size", work.size, "bytes per file")->check(CLI::Range(1, 1 << 20));
  app.add_option("--overwrites", work.overwrites, "files overwritten")->check(CLI::PositiveNumber);
  app.add_option("--list-sweeps", work.list_sweeps,
                 "listings of every directory in a row for (a)-(c) (10; AgentFS lists once)")
      ->check(CLI::PositiveNumber);
  app.add_option("--agentfs-files", agentfs_files,
                 "files (and overwrites in proportion) for AgentFS only, which is slow (default: --files)")
      ->check(CLI::Range(1, 99999));
  app.add_flag("--no-agentfs", no_agentfs, "skip (d)");
  std::string stores = "abcd";
  app.add_option("--stores", stores, "which of (a)-(d) run, e.g. 'b' alone for a profile (default abcd)");
  app.add_option("--repeat", repeat, "passes of (a)-(c), in turn (median per phase; AgentFS runs once)")
      ->check(CLI::PositiveNumber);
  app.add_option("--rounds", rounds, "snapshot rounds per cell (median)")->check(CLI::PositiveNumber);
  app.add_flag("--no-workload", skip_workload, "skip part 1 (the small-file workload)");
  app.add_flag("--no-snapshots", skip_snapshots, "skip part 2 (snapshot, restore, diff)");
  app.add_option("--dir", parent, "where the temporary directory goes (the same disk for every store)");
  app.add_flag("--keep", keep, "keep the temporary directory");
  bench::ParseCommandLine(app, argc, argv);
  if (work.overwrites > work.files) Fail("--overwrites must not exceed --files");
  const bool sync = !no_sync;

  std::string pattern = parent + "/store_bench-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) Fail("cannot create a directory in " + parent + ": " + std::strerror(errno));
  const std::string dir = pattern;

  std::printf("store_bench: %s\n", Machine().c_str());
  std::printf("stores in %s (%s)\n", dir.c_str(), FileSystemOf(dir).c_str());
  std::printf("durability of (a)-(c): %s\n\n",
              sync ? "sync_writes=true, synchronous=FULL (default)" : "sync_writes=false, synchronous=NORMAL (--no-sync)");
  std::fflush(stdout);

  if (!skip_workload) {
    std::vector<std::string> paths, contents, rewritten;
    for (int i = 0; i < work.files; ++i) {
      paths.push_back(FilePath(i, work.dirs));
      contents.push_back(RandomContent(static_cast<uint64_t>(i) + 1, work.size));
    }
    for (int j = 0; j < work.overwrites; ++j) rewritten.push_back(RandomContent(1'000'000 + j, work.size));

    std::printf("workload: create %d files of %d bytes in %d directories, read them all, list the "
                "directories, overwrite %d; one operation at a time\n",
                work.files, work.size, work.dirs, work.overwrites);
    std::optional<PhaseTimes> agentfs_times;
    Workload agentfs_work = work;
    if (agentfs_files > 0 && agentfs_files != work.files) {
      agentfs_work.files = agentfs_files;
      agentfs_work.overwrites = std::max<int>(1, static_cast<int>(static_cast<int64_t>(work.overwrites) *
                                                                   agentfs_files / work.files));
      agentfs_work.dirs = std::min(work.dirs, agentfs_files);
    }

    // (a)-(c) run `repeat` times in turn, each time on new files, so that
    // a change of the machine's load hits all three alike; medians.
    std::vector<PhaseTimes> fs_runs, sqlite_runs, plain_runs;
    const auto selected = [&](char store) { return stores.find(store) != std::string::npos; };
    for (int pass = 1; pass <= repeat; ++pass) {
      const std::string pass_dir = dir + "/pass" + std::to_string(pass);
      std::filesystem::create_directory(pass_dir);
      if (selected('a')) {
        std::printf("  pass %d/%d: (a) fs store ...\n", pass, repeat);
        std::fflush(stdout);
        std::filesystem::create_directory(pass_dir + "/fs");
        ProjectStore store(Open(pass_dir + "/fs", sync));
        fs_runs.push_back(RunWorkload(store, work, paths, contents, rewritten));
      }
      if (selected('b')) {
        std::printf("  pass %d/%d: (b) sqlite store ...\n", pass, repeat);
        std::fflush(stdout);
        ProjectStore store(Open("sqlite:" + pass_dir + "/store.db#bench", sync));
        sqlite_runs.push_back(RunWorkload(store, work, paths, contents, rewritten));
      }
      if (selected('c')) {
        std::printf("  pass %d/%d: (c) plain SQLite ...\n", pass, repeat);
        std::fflush(stdout);
        PlainSqliteStore store(pass_dir + "/plain.db", sync);
        plain_runs.push_back(RunWorkload(store, work, paths, contents, rewritten));
      }
      if (!keep) {
        std::error_code ignored;
        std::filesystem::remove_all(pass_dir, ignored);
      }
      // AgentFS once, after the middle pass, so that (a)-(c)'s medians come
      // from around the time it ran (the disk's flush time drifts).
      if (pass == (repeat + 1) / 2) {
        if (no_agentfs || !selected('d')) {
          std::printf("note: (d) AgentFS skipped (--no-agentfs or --stores)\n");
        } else {
          std::printf("  (d) AgentFS (agentfs-sdk 0.6.4, node) ...\n");
          std::fflush(stdout);
          agentfs_times = RunAgentFs(agentfs_work, dir);
        }
      }
    }
    const auto median_of = [](const std::vector<PhaseTimes>& runs) {
      PhaseTimes median;
      for (double PhaseTimes::*phase : {&PhaseTimes::create, &PhaseTimes::read, &PhaseTimes::list, &PhaseTimes::overwrite}) {
        std::vector<double> values;
        for (const PhaseTimes& run : runs) values.push_back(run.*phase);
        median.*phase = Median(values);
      }
      return median;
    };
    const PhaseTimes fs_times = median_of(fs_runs), sqlite_times = median_of(sqlite_runs),
                     plain_times = median_of(plain_runs);
    struct Row {
      const char* name;
      int ops, agentfs_ops;
      double PhaseTimes::*phase;
    };
    const Row rows[] = {{"create", work.files, agentfs_work.files, &PhaseTimes::create},
                        {"read", work.files, agentfs_work.files, &PhaseTimes::read},
                        {"list", work.dirs * work.list_sweeps, agentfs_work.dirs, &PhaseTimes::list},
                        {"overwrite", work.overwrites, agentfs_work.overwrites, &PhaseTimes::overwrite}};
    std::printf("\nops/s (median of %d passes for (a)-(c))\n", repeat);
    std::printf("             %12s %12s %12s %12s %9s %9s\n", "(a) fs", "(b) sqlite", "(c) plain",
                "(d) AgentFS", "(b)/(c)", "(b)/(d)");
    bool plain_met = true;
    double write_ratio = 1e300, read_ratio = 1e300;
    for (const Row& row : rows) {
      const auto rate = [](int ops, double seconds) { return seconds > 0 ? ops / seconds : 0.0; };
      double a = rate(row.ops, fs_times.*row.phase), b = rate(row.ops, sqlite_times.*row.phase),
             c = rate(row.ops, plain_times.*row.phase);
      double d = agentfs_times ? rate(row.agentfs_ops, (*agentfs_times).*row.phase) : 0;
      std::printf("%-12s %12s %12s %12s %12s %9s %9s\n", row.name, OpsText(a).c_str(), OpsText(b).c_str(),
                  OpsText(c).c_str(), OpsText(d).c_str(), Ratio(b, c).c_str(), Ratio(b, d).c_str());
      plain_met = plain_met && b >= 0.8 * c;
      if (agentfs_times) {
        if (row.phase == &PhaseTimes::create || row.phase == &PhaseTimes::overwrite) write_ratio = std::min(write_ratio, b / d);
        if (row.phase == &PhaseTimes::read) read_ratio = b / d;
      }
    }
    if (agentfs_work.files != work.files) {
      std::printf("(d) ran %d files in %d directories, %d overwrites (--agentfs-files)\n", agentfs_work.files,
                  agentfs_work.dirs, agentfs_work.overwrites);
    }
    if (selected('b') && selected('c')) {
      std::printf("\ntarget (b) >= 0.8 x (c) in every phase: %s\n", plain_met ? "met" : "MISSED");
    }
    if (agentfs_times && !sync) {
      std::printf("note: AgentFS runs at its default, synchronous=FULL (it has no NORMAL), so (b)/(d) under "
                  "--no-sync is not at the same durability\n");
    }
    if (agentfs_times && selected('b')) {
      std::printf("target (b) >= 10 x AgentFS writes (create, overwrite): %s (%.1f x at least)\n",
                  write_ratio >= 10 ? "met" : "MISSED", write_ratio);
      std::printf("target (b) >= 50 x AgentFS reads: %s (%.1f x)\n", read_ratio >= 50 ? "met" : "MISSED", read_ratio);
    }
    std::printf("\n");
    std::fflush(stdout);
  }

  if (!skip_snapshots) {
    std::vector<int> sizes = {1000, 10000};
    if (large) sizes.push_back(100000);
    const std::vector<int> change_counts = {10, 1000};
    std::printf("snapshots of the sqlite store: ms per call, median of %d rounds; a change = a tenth "
                "deleted, a tenth added, the rest overwritten, files of %d bytes%s\n",
                rounds, work.size, large ? "" : " (--large adds 100,000 files)");
    std::printf("%9s %8s %12s %12s %12s %12s\n", "files", "changed", "snapshot", "restore", "diff",
                "delete snap");
    std::fflush(stdout);
    uint64_t seed = 5'000'000;
    std::optional<double> bar;
    for (int files : sizes) {
      std::vector<SnapshotCosts> costs =
          MeasureSnapshots(dir + "/snapshots-" + std::to_string(files) + ".db", files, 100, work.size,
                           change_counts, rounds, sync, seed);
      for (size_t k = 0; k < costs.size(); ++k) {
        std::printf("%9d %8d %12.2f %12.2f %12.2f %12.2f\n", files, change_counts[k], costs[k].snapshot,
                    costs[k].restore, costs[k].diff, costs[k].delete_snapshot);
        if (files == 10000 && change_counts[k] == 10) bar = costs[k].snapshot;
      }
      std::fflush(stdout);
    }
    if (bar) {
      std::printf("\ntarget: snapshot of 10,000 files after 10 changes <= 5 ms: %s (%.2f ms)\n",
                  *bar <= 5 ? "met" : "MISSED", *bar);
    }
  }

  if (keep) {
    std::printf("\nkept %s\n", dir.c_str());
  } else {
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  }
  return 0;
}
