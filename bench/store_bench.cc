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
// With --list-rounds N, after part 1: a new (b) and (c) filled with the
// same files, then N rounds listing every directory --list-sweeps times on
// each in turn (which goes first alternates), timed by the thread's CPU
// time; prints (b)/(c) per round and their median, a listing figure that a
// shared machine's load moves much less than the list phase's.
//
// Part 2, snapshots of the sqlite store: for workspaces of 1,000 and 10,000
// files (--large adds 100,000) and 10 and 1,000 changed files, each round
// takes a snapshot S0, changes K files (a tenth deleted, a tenth added, the
// rest overwritten), then times Snapshot() -> S1, Restore(S0), Diff(S0, S1)
// and DeleteSnapshot(S1); medians of --rounds rounds (5). Filling the
// workspace runs without sync; the changes and the timed calls use the
// durability of part 1.
//
// Part 3, PostgreSQL (issue 18; selected with --stores e, f and/or g): on a
// private server that the bench starts and stops with
// scripts/test-postgres.sh (PostgreSQL 15, fsync=off as in the tests;
// --postgres-fsync: on, as a production server runs), or on the server of
// --postgres-url (a user that may create databases),
//   (e) the postgres store, over the Unix socket and over loopback TCP,
//   (f) plain PostgreSQL: one table files(path TEXT COLLATE "C" PRIMARY
//       KEY, content BYTEA) through libpq (our RAII layer), each operation
//       one prepared statement in autocommit: one round trip, the least a
//       client of the server can do (the store needs several: see
//       docs/benchmarks.md),
//   (g) plain content-addressed tables, files(path, hash) and
//       contents(hash, content), a write one statement (see
//       PlainPostgresStore): what keeping content once per hash costs by
//       itself, a reference beside (f), not the issue's target,
// the part 1 workload on each, each pass in a database of its own; then
// part 2's snapshot figures on the postgres store; then WRITERS (8)
// processes writing different files of one directory of one workspace
// against one process (each creates --parallel-files files, then
// overwrites each once; throughput of all together, started at once).
//
//   store_bench [--no-sync] [--large] [--files N] [--agentfs-files N] ...
//   store_bench --stores efg [--postgres-url URL | --postgres-fsync] [--writers 8]
#include <sqlite3.h>
#include <stdlib.h>
#include <poll.h>
#include <signal.h>
#include <sys/statfs.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "bench_report.h"
#include "project/content/content_hash.h"
#include "project/project_files.h"
#include "project/sql/postgres_database.h"

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

// What this process handed the kernel to write, from /proc/self/io: write
// calls (write, pwrite: a WAL frame is two) and their bytes, checkpoints
// included. Unlike a time, the machine's load does not move it, so it
// tells a change that writes fewer pages from one that was measured on a
// quieter disk.
struct WriteCounts {
  double calls = 0, bytes = 0;
};

WriteCounts ProcessWrites() {
  WriteCounts counts;
  FILE* io = std::fopen("/proc/self/io", "r");
  if (io == nullptr) return counts;
  char line[128];
  while (std::fgets(line, sizeof line, io) != nullptr) {
    unsigned long long value = 0;
    if (std::sscanf(line, "wchar: %llu", &value) == 1) counts.bytes = static_cast<double>(value);
    if (std::sscanf(line, "syscw: %llu", &value) == 1) counts.calls = static_cast<double>(value);
  }
  std::fclose(io);
  return counts;
}

WriteCounts WritesSince(const WriteCounts& before) {
  const WriteCounts now = ProcessWrites();
  return WriteCounts{now.calls - before.calls, now.bytes - before.bytes};
}

// Seconds per phase (create, read, list, overwrite), and the writes of the
// two phases that write.
struct PhaseTimes {
  double create = 0, read = 0, list = 0, overwrite = 0;
  WriteCounts create_writes, overwrite_writes;
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
  WriteCounts writes = ProcessWrites();
  Clock::time_point start = Clock::now();
  for (int i = 0; i < work.files; ++i) store.Write(paths[i], contents[i]);
  times.create = SecondsSince(start);
  times.create_writes = WritesSince(writes);

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

  writes = ProcessWrites();
  start = Clock::now();
  for (int j = 0; j < work.overwrites; ++j) {
    store.Write(paths[static_cast<int64_t>(j) * work.files / work.overwrites], rewritten[j]);
  }
  times.overwrite = SecondsSince(start);
  times.overwrite_writes = WritesSince(writes);
  return times;
}

// This thread's CPU time in seconds: what a listing (all in memory, no
// waits) costs, without the time other programs take from the CPU.
double ThreadCpuSeconds() {
  timespec now;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) / 1e9;
}

// Runs `measure` (seconds of one store's turn in round `round`) on (b) and
// on (c) `rounds` times, which goes first alternating, so that the two
// figures of a round come from the same seconds of a shared machine (and
// of a disk whose flushes speed up and slow down). Returns (b)/(c) per
// round, in operations per second.
template <typename Measure>
std::vector<double> AlternateRounds(WorkloadStore& sqlite_store, WorkloadStore& plain_store, int rounds,
                                    const Measure& measure) {
  std::vector<double> ratios;
  for (int round = 0; round < rounds; ++round) {
    double sqlite_seconds = 0, plain_seconds = 0;
    if (round % 2 == 0) {
      sqlite_seconds = measure(sqlite_store, round);
      plain_seconds = measure(plain_store, round);
    } else {
      plain_seconds = measure(plain_store, round);
      sqlite_seconds = measure(sqlite_store, round);
    }
    ratios.push_back(plain_seconds / sqlite_seconds);
  }
  return ratios;
}

// Both stores filled with the workload's files.
void FillBoth(WorkloadStore& sqlite_store, WorkloadStore& plain_store, const Workload& work,
              const std::vector<std::string>& paths, const std::vector<std::string>& contents) {
  for (WorkloadStore* store : {&sqlite_store, &plain_store}) {
    for (int i = 0; i < work.files; ++i) store->Write(paths[i], contents[i]);
  }
}

// --list-rounds: every directory listed --list-sweeps times per turn, timed
// by this thread's CPU time (a listing is all in memory, no waits), so
// that the load's preemptions do not count.
std::vector<double> AlternateListings(WorkloadStore& sqlite_store, WorkloadStore& plain_store, const Workload& work,
                                      int rounds) {
  return AlternateRounds(sqlite_store, plain_store, rounds, [&](WorkloadStore& store, int) {
    const double start = ThreadCpuSeconds();
    for (int sweep = 0; sweep < work.list_sweeps; ++sweep) {
      size_t listed = 0;
      for (int d = 0; d < work.dirs; ++d) listed += store.List(DirName(d));
      if (listed != static_cast<size_t>(work.files)) Fail("alternating listings found " + std::to_string(listed));
    }
    return ThreadCpuSeconds() - start;
  });
}

// --write-rounds: per turn, --overwrites new files created (round r's own
// names, in the workload's directories), then as many overwritten, each
// with content no file has (made before the clock starts), by wall-clock
// time: a write's time is mostly the disk's flush, which alternating turns
// shares fairly between the stores. Returns the create and the overwrite
// ratios per round.
struct WriteRatios {
  std::vector<double> create, overwrite;
};
WriteRatios AlternateWrites(WorkloadStore& sqlite_store, WorkloadStore& plain_store, const Workload& work,
                            const std::vector<std::string>& paths, int rounds) {
  const auto new_contents = [&](uint64_t seed) {
    std::vector<std::string> contents;
    for (int j = 0; j < work.overwrites; ++j) {
      contents.push_back(RandomContent(seed + static_cast<uint64_t>(j), work.size));
    }
    return contents;
  };
  WriteRatios ratios;
  ratios.create = AlternateRounds(sqlite_store, plain_store, rounds, [&](WorkloadStore& store, int round) {
    const std::vector<std::string> contents = new_contents(100'000'000 + 100'000 * static_cast<uint64_t>(round));
    const Clock::time_point start = Clock::now();
    for (int j = 0; j < work.overwrites; ++j) {
      store.Write(DirName(j % work.dirs) + "/round" + std::to_string(round) + "-" + std::to_string(j), contents[j]);
    }
    return SecondsSince(start);
  });
  ratios.overwrite = AlternateRounds(sqlite_store, plain_store, rounds, [&](WorkloadStore& store, int round) {
    const std::vector<std::string> contents = new_contents(200'000'000 + 100'000 * static_cast<uint64_t>(round));
    const Clock::time_point start = Clock::now();
    for (int j = 0; j < work.overwrites; ++j) {
      store.Write(paths[(static_cast<int64_t>(j) * work.files / work.overwrites + round) % work.files], contents[j]);
    }
    return SecondsSince(start);
  });
  return ratios;
}

// "label: r1 r2 ...", then their median and range.
void PrintRatios(const std::string& label, const std::vector<double>& ratios) {
  std::printf("%s:", label.c_str());
  for (double ratio : ratios) std::printf(" %.2f", ratio);
  const auto [low, high] = std::minmax_element(ratios.begin(), ratios.end());
  std::printf("\n  median %.3f (range %.2f-%.2f)\n", Median(ratios), *low, *high);
}

// The workload's paths, contents and overwriting contents, made before any
// clock starts.
struct WorkloadData {
  std::vector<std::string> paths, contents, rewritten;
};
WorkloadData MakeWorkloadData(const Workload& work) {
  WorkloadData data;
  for (int i = 0; i < work.files; ++i) {
    data.paths.push_back(FilePath(i, work.dirs));
    data.contents.push_back(RandomContent(static_cast<uint64_t>(i) + 1, work.size));
  }
  for (int j = 0; j < work.overwrites; ++j) data.rewritten.push_back(RandomContent(1'000'000 + j, work.size));
  return data;
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
std::vector<SnapshotCosts> MeasureSnapshotsAt(const std::string& uri, int files, int dirs, int size,
                                              const std::vector<int>& change_counts, int rounds, bool sync,
                                              uint64_t& seed) {
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

std::vector<SnapshotCosts> MeasureSnapshots(const std::string& store_file, int files, int dirs, int size,
                                            const std::vector<int>& change_counts, int rounds, bool sync,
                                            uint64_t& seed) {
  return MeasureSnapshotsAt("sqlite:" + store_file + "#snapshots", files, dirs, size, change_counts, rounds, sync,
                            seed);
}

// ----- Part 3: PostgreSQL ---------------------------------------------------------------

// A PostgreSQL server for the bench: a private one started (and stopped
// when this ends) with scripts/test-postgres.sh in a directory of /tmp, or
// the one of --postgres-url.
class BenchPostgresServer {
 public:
  // `fsync`: the private server flushes its log at each commit, as a
  // production server does (scripts/test-postgres.sh starts it without).
  BenchPostgresServer(std::string url, bool fsync) : url_(std::move(url)) {
    if (!url_.empty()) return;
    if (fsync) ::setenv("TOOLVFS_TEST_POSTGRES_FSYNC", "on", 1);
    char pattern[] = "/tmp/store_bench-pg-XXXXXX";  // short: a socket path has at most 107 bytes
    if (mkdtemp(pattern) == nullptr) Fail(std::string("cannot create a directory in /tmp: ") + std::strerror(errno));
    directory_ = pattern;
    // A bench that Fails exits without unwinding: stop the server then too
    // (only from this process, not from a writer process that fails).
    owner_ = ::getpid();
    started_ = this;
    std::atexit([] {
      if (started_ != nullptr && ::getpid() == started_->owner_) started_->Stop();
    });
    Script("start");
    int status = 0;
    port_ = Capture("cat " + directory_ + "/port", status);
    while (!port_.empty() && port_.back() == '\n') port_.pop_back();
    if (status != 0 || port_.empty()) Fail("the private server wrote no port into " + directory_);
  }
  ~BenchPostgresServer() { Stop(); }
  BenchPostgresServer(const BenchPostgresServer&) = delete;
  BenchPostgresServer& operator=(const BenchPostgresServer&) = delete;

  // A URI of database `database` over the Unix socket (private server) or
  // as --postgres-url says; over loopback TCP when `tcp`.
  std::string Uri(const std::string& database, bool tcp) const {
    if (!url_.empty()) return WithDatabase(url_, database);
    if (tcp) return "postgresql://toolvfs@127.0.0.1:" + port_ + "/" + database;
    return "postgresql://toolvfs@/" + database + "?host=" + directory_ + "&port=" + port_;
  }
  bool private_server() const { return url_.empty(); }

  // Creates database `name` (dropped by DropDatabase).
  void CreateDatabase(const std::string& name) { Admin("CREATE DATABASE " + name); }
  void DropDatabase(const std::string& name) { Admin("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)"); }

 private:
  void Stop() {
    if (directory_.empty()) return;
    const std::string directory = std::move(directory_);
    directory_.clear();
    started_ = nullptr;
    int status = 0;
    (void)Capture(std::string(TEST_POSTGRES_SCRIPT) + " stop " + directory + " 2>&1", status);
  }
  void Script(const std::string& action) {
    int status = 0;
    std::string output = Capture(std::string(TEST_POSTGRES_SCRIPT) + " " + action + " " + directory_ + " 2>&1", status);
    if (status != 0) Fail("scripts/test-postgres.sh " + action + " failed: " + output);
  }
  void Admin(const std::string& sql) {
    Result<std::unique_ptr<PostgresConnection>> admin = PostgresConnection::Open(Uri("postgres", false), "bench server");
    if (!admin.ok()) Fail(admin.status().message());
    Result<PostgresResult> done = (*admin)->Execute(sql.c_str());
    if (!done.ok()) Fail(done.status().message());
  }
  // `url` with its database (the path after the authority) replaced.
  static std::string WithDatabase(const std::string& url, const std::string& database) {
    const size_t scheme = url.find("://");
    if (scheme == std::string::npos) Fail("--postgres-url " + url + " is not a postgres:// or postgresql:// URI");
    const size_t path = url.find_first_of("/?#", scheme + 3);
    if (path == std::string::npos) return url + "/" + database;
    const size_t path_end = url[path] == '/' ? url.find_first_of("?#", path) : path;
    return url.substr(0, path) + "/" + database + (path_end == std::string::npos ? "" : url.substr(path_end));
  }

  std::string url_;
  std::string directory_;
  std::string port_;
  pid_t owner_ = 0;
  static inline BenchPostgresServer* started_ = nullptr;
};

// (f): plain PostgreSQL, one table, each operation one prepared statement
// in autocommit.
// (g), with `content_addressed`: the least a store that keeps each content
// once by its SHA-256 does: files(path, hash) and contents(hash, content),
// a write one statement that adds the content unless its hash is there and
// points the path at it. No versions, no snapshots, no reference counts:
// replaced contents are never freed. A reference for the team's question
// of issue 18 (what content addressing itself costs), not the issue's
// target, which is against (f).
class PlainPostgresStore : public WorkloadStore {
 public:
  PlainPostgresStore(const std::string& uri, bool content_addressed) : content_addressed_(content_addressed) {
    Result<std::unique_ptr<PostgresConnection>> connection = PostgresConnection::Open(uri, "plain table");
    if (!connection.ok()) Fail(connection.status().message());
    connection_ = std::move(*connection);
    if (Status made = connection_->ExecuteScript(
            content_addressed
                ? "CREATE TABLE contents(hash BYTEA PRIMARY KEY, content BYTEA NOT NULL);"
                  "CREATE TABLE files(path TEXT COLLATE \"C\" PRIMARY KEY, hash BYTEA NOT NULL)"
                : "CREATE TABLE files(path TEXT COLLATE \"C\" PRIMARY KEY, content BYTEA NOT NULL)");
        !made.ok()) {
      Fail(made.message());
    }
    if (content_addressed) {
      Prepare(kWrite,
              "WITH stored AS (INSERT INTO contents(hash, content) VALUES($2, $3) ON CONFLICT(hash) DO NOTHING) "
              "INSERT INTO files(path, hash) VALUES($1, $2) ON CONFLICT(path) DO UPDATE SET hash=excluded.hash");
      Prepare(kRead, "SELECT c.content FROM files f JOIN contents c ON c.hash=f.hash WHERE f.path=$1");
    } else {
      Prepare(kWrite,
              "INSERT INTO files(path, content) VALUES($1, $2) ON CONFLICT(path) DO UPDATE SET "
              "content=excluded.content");
      Prepare(kRead, "SELECT content FROM files WHERE path=$1");
    }
    Prepare(kList, "SELECT path FROM files WHERE path>=$1 AND path<$2");
  }
  void Write(const std::string& path, const std::string& content) override {
    if (content_addressed_) {
      const ContentHash hash = Sha256(content);
      const char* values[] = {path.c_str(), reinterpret_cast<const char*>(hash.data()), content.data()};
      const int lengths[] = {0, static_cast<int>(hash.size()), static_cast<int>(content.size())};
      const int formats[] = {0, 1, 1};
      Run(kWrite, 3, values, lengths, formats);
      return;
    }
    const char* values[] = {path.c_str(), content.data()};
    const int lengths[] = {0, static_cast<int>(content.size())};
    const int formats[] = {0, 1};
    Run(kWrite, 2, values, lengths, formats);
  }
  std::string Read(const std::string& path) override {
    const char* values[] = {path.c_str()};
    const int lengths[] = {0};
    const int formats[] = {0};
    PostgresResult rows = Run(kRead, 1, values, lengths, formats);
    if (rows.rows() != 1) Fail("plain read: " + path + " missing");
    return rows.Bytes(0, 0);
  }
  // The direct children of `dir`, as (c) lists them.
  size_t List(const std::string& dir) override {
    const std::string first = dir + "/", past = dir + "0";
    const char* values[] = {first.c_str(), past.c_str()};
    const int lengths[] = {0, 0};
    const int formats[] = {0, 0};
    PostgresResult rows = Run(kList, 2, values, lengths, formats);
    std::vector<std::string> names;
    for (int row = 0; row < rows.rows(); ++row) {
      std::string_view name = rows.Text(row, 0).substr(first.size());
      if (name.find('/') == std::string_view::npos) names.emplace_back(name);
    }
    return names.size();
  }

 private:
  static constexpr const char* kWrite = "write";
  static constexpr const char* kRead = "read";
  static constexpr const char* kList = "list";
  void Prepare(const char* key, const std::string& sql) {
    if (Status prepared = connection_->Prepare(key, sql); !prepared.ok()) Fail(prepared.message());
  }
  PostgresResult Run(const char* key, int count, const char* const* values, const int* lengths, const int* formats) {
    Result<PostgresResult> result = connection_->ExecutePrepared(key, count, values, lengths, formats);
    if (!result.ok()) Fail(result.status().message());
    return std::move(*result);
  }

  bool content_addressed_;
  std::unique_ptr<PostgresConnection> connection_;
};

// Writes per second of `processes` processes, each opening the store of
// `uri` and then, all started at once, creating `files` files of its own
// (in one directory shared by all) and overwriting each once.
double ParallelWriteRate(const std::string& uri, int processes, int files, int size, uint64_t seed) {
  // The schema and the workspace first, and closed again before the fork
  // (a child must not inherit an open store's connections).
  Open(uri, /*sync=*/true).reset();
  int ready[2], go[2];
  if (::pipe(ready) != 0 || ::pipe(go) != 0) Fail(std::string("pipe: ") + std::strerror(errno));
  std::fflush(stdout);
  std::vector<pid_t> children;
  for (int writer = 0; writer < processes; ++writer) {
    const pid_t pid = ::fork();
    if (pid < 0) Fail(std::string("fork: ") + std::strerror(errno));
    if (pid == 0) {
      ::close(ready[0]);
      ::close(go[1]);
      std::vector<std::string> contents;
      for (int i = 0; i < 2 * files; ++i) contents.push_back(RandomContent(seed + writer * 1'000'000ull + i, size));
      std::unique_ptr<ProjectFiles> store = Open(uri, /*sync=*/true);
      char byte = 1;
      if (::write(ready[1], &byte, 1) != 1) _exit(2);
      if (::read(go[0], &byte, 1) != 0) _exit(2);  // the parent closes it: everyone starts at once
      for (int round = 0; round < 2; ++round) {
        for (int i = 0; i < files; ++i) {
          const std::string path = "shared/w" + std::to_string(writer) + "-f" + std::to_string(i);
          Status written = store->Write(path, contents[round * files + i]);
          if (!written.ok()) {
            std::fprintf(stderr, "writer %d: %s\n", writer, written.message().c_str());
            _exit(1);
          }
        }
      }
      _exit(0);
    }
    children.push_back(pid);
  }
  ::close(ready[1]);
  ::close(go[0]);
  // Every writer says when its store is open; one that died instead (its
  // message is on stderr) fails the bench rather than leaving it waiting.
  for (int ready_count = 0; ready_count < processes;) {
    pollfd waiting{ready[0], POLLIN, 0};
    if (::poll(&waiting, 1, 1000) == 1) {
      char byte = 0;
      if (::read(ready[0], &byte, 1) != 1) Fail("a writer process died before it opened the store");
      ++ready_count;
      continue;
    }
    for (pid_t child : children) {
      int status = 0;
      if (::waitpid(child, &status, WNOHANG) == child) {
        for (pid_t other : children) ::kill(other, SIGKILL);
        Fail("a writer process ended before it opened the store (status " + std::to_string(status) + ")");
      }
    }
  }
  const Clock::time_point start = Clock::now();
  ::close(go[1]);
  bool failed = false;
  for (pid_t child : children) {
    int status = 0;
    ::waitpid(child, &status, 0);
    failed = failed || !WIFEXITED(status) || WEXITSTATUS(status) != 0;
  }
  const double seconds = SecondsSince(start);
  ::close(ready[0]);
  if (failed) Fail("a writer process failed (its message is above)");
  return 2.0 * processes * files / seconds;
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

// Part 3 (see the top of the file): (e) against (f) over the socket and
// TCP, snapshots of the postgres store, WRITERS processes against one.
void RunPostgresPart(const std::string& url, bool fsync, const Workload& work, int repeat, int rounds, int writers,
                     int parallel_files, bool workload, bool snapshots, bool store, bool plain,
                     bool content_addressed) {
  BenchPostgresServer server(url, fsync);
  std::printf("part 3, PostgreSQL: %s\n",
              server.private_server()
                  ? (std::string("a private server (scripts/test-postgres.sh: PostgreSQL 15, ") +
                     (fsync ? "fsync=on" : "fsync=off") + ", Unix socket and loopback TCP)")
                        .c_str()
                  : ("the server of --postgres-url " + server.Uri("DB", false)).c_str());
  int databases = 0;
  const auto new_database = [&] {
    const std::string name = "store_bench_" + std::to_string(::getpid()) + "_" + std::to_string(++databases);
    server.CreateDatabase(name);
    return name;
  };
  const auto transports = server.private_server() ? std::vector<bool>{false, true} : std::vector<bool>{false};

  if (workload) {
    const auto [paths, contents, rewritten] = MakeWorkloadData(work);
    std::printf("workload: create %d files of %d bytes in %d directories, read them all, list the directories, "
                "overwrite %d; one operation at a time; each pass in a new database\n",
                work.files, work.size, work.dirs, work.overwrites);
    // runs[transport][0 = (e), 1 = (f), 2 = (g)]
    std::vector<PhaseTimes> runs[2][3];
    const bool selected[3] = {store, plain, content_addressed};
    const char* const names[3] = {"postgres store", "plain table", "plain content-addressed tables"};
    for (int pass = 1; pass <= repeat; ++pass) {
      for (bool tcp : transports) {
        for (int kind = 0; kind < 3; ++kind) {
          if (!selected[kind]) continue;
          std::printf("  pass %d/%d: (%c) %s over %s ...\n", pass, repeat, "efg"[kind], names[kind],
                      tcp ? "TCP" : "the socket");
          std::fflush(stdout);
          const std::string database = new_database();
          const std::string uri = server.Uri(database, tcp);
          if (kind == 0) {
            ProjectStore tested(Open(uri + "#bench", /*sync=*/true));
            runs[tcp][kind].push_back(RunWorkload(tested, work, paths, contents, rewritten));
          } else {
            PlainPostgresStore tested(uri, /*content_addressed=*/kind == 2);
            runs[tcp][kind].push_back(RunWorkload(tested, work, paths, contents, rewritten));
          }
          server.DropDatabase(database);
        }
      }
    }
    struct Row {
      const char* name;
      int ops;
      double PhaseTimes::*phase;
    };
    const Row rows[] = {{"create", work.files, &PhaseTimes::create},
                        {"read", work.files, &PhaseTimes::read},
                        {"list", work.dirs, &PhaseTimes::list},
                        {"overwrite", work.overwrites, &PhaseTimes::overwrite}};
    std::printf("\nops/s (median of %d passes)\n", repeat);
    std::printf("             %12s %12s %9s %12s %12s %9s\n", "(e) socket", "(f) socket", "(e)/(f)", "(e) TCP",
                "(f) TCP", "(e)/(f)");
    bool met = true;
    double rates[4][2][3] = {};  // [row][transport][kind]
    for (size_t row_index = 0; row_index < std::size(rows); ++row_index) {
      const Row& row = rows[row_index];
      double (&rate)[2][3] = rates[row_index];
      for (bool tcp : transports) {
        for (int kind = 0; kind < 3; ++kind) {
          std::vector<double> seconds;
          for (const PhaseTimes& run : runs[tcp][kind]) seconds.push_back(run.*row.phase);
          const double median = seconds.empty() ? 0 : Median(seconds);
          rate[tcp][kind] = median > 0 ? row.ops / median : 0;
        }
        if (store && plain) met = met && rate[tcp][0] >= 0.8 * rate[tcp][1];
      }
      std::printf("%-12s %12s %12s %9s %12s %12s %9s\n", row.name, OpsText(rate[0][0]).c_str(),
                  OpsText(rate[0][1]).c_str(), Ratio(rate[0][0], rate[0][1]).c_str(), OpsText(rate[1][0]).c_str(),
                  OpsText(rate[1][1]).c_str(), Ratio(rate[1][0], rate[1][1]).c_str());
    }
    if (store && plain) std::printf("\ntarget (e) >= 0.8 x (f) in every phase: %s\n", met ? "met" : "MISSED");
    if (content_addressed) {
      std::printf("\nagainst (g), plain content-addressed tables (a reference, not the target)\n");
      std::printf("             %12s %12s %9s %12s %12s %9s\n", "(e) socket", "(g) socket", "(e)/(g)", "(e) TCP",
                  "(g) TCP", "(e)/(g)");
      for (size_t row_index = 0; row_index < std::size(rows); ++row_index) {
        const double (&rate)[2][3] = rates[row_index];
        std::printf("%-12s %12s %12s %9s %12s %12s %9s\n", rows[row_index].name, OpsText(rate[0][0]).c_str(),
                    OpsText(rate[0][2]).c_str(), Ratio(rate[0][0], rate[0][2]).c_str(), OpsText(rate[1][0]).c_str(),
                    OpsText(rate[1][2]).c_str(), Ratio(rate[1][0], rate[1][2]).c_str());
      }
    }
    std::printf("\n");
    std::fflush(stdout);
  }
  if (!store) return;

  if (snapshots) {
    const std::vector<int> change_counts = {10, 1000};
    std::printf("snapshots of the postgres store (socket): ms per call, median of %d rounds; a change as in "
                "part 2\n",
                rounds);
    std::printf("%9s %8s %12s %12s %12s %12s\n", "files", "changed", "snapshot", "restore", "diff", "delete snap");
    uint64_t seed = 7'000'000;
    for (int files : {1000, 10000}) {
      const std::string database = new_database();
      std::vector<SnapshotCosts> costs = MeasureSnapshotsAt(server.Uri(database, false) + "#snapshots", files, 100,
                                                            work.size, change_counts, rounds, true, seed);
      for (size_t k = 0; k < costs.size(); ++k) {
        std::printf("%9d %8d %12.2f %12.2f %12.2f %12.2f\n", files, change_counts[k], costs[k].snapshot,
                    costs[k].restore, costs[k].diff, costs[k].delete_snapshot);
      }
      std::fflush(stdout);
      server.DropDatabase(database);
    }
    std::printf("\n");
  }

  std::printf("%d processes writing different files of one directory of one workspace vs 1 process "
              "(socket; each creates %d files, then overwrites them; median of %d)\n",
              writers, parallel_files, repeat);
  std::vector<double> one, many;
  for (int pass = 0; pass < repeat; ++pass) {
    for (int processes : {1, writers}) {
      const std::string database = new_database();
      const double rate = ParallelWriteRate(server.Uri(database, false) + "#parallel", processes, parallel_files,
                                            work.size, 9'000'000ull + pass * 100'000'000ull);
      (processes == 1 ? one : many).push_back(rate);
      server.DropDatabase(database);
    }
  }
  std::printf("  1 process:   %s writes/s\n", OpsText(Median(one)).c_str());
  std::printf("  %d processes: %s writes/s\n", writers, OpsText(Median(many)).c_str());
  std::printf("  ratio: %s\n", Ratio(Median(many), Median(one)).c_str());
  std::fflush(stdout);
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
  int list_rounds = 0;
  app.add_option("--list-rounds", list_rounds,
                 "after part 1: (b) and (c) filled anew, then this many rounds of --list-sweeps listings "
                 "alternating between them; prints (b)/(c) per round and their median (0: skip)")
      ->check(CLI::NonNegativeNumber);
  int write_rounds = 0;
  app.add_option("--write-rounds", write_rounds,
                 "after part 1: (b) and (c) filled anew, then this many rounds of --overwrites creates, then as "
                 "many of --overwrites overwrites, alternating between them; prints (b)/(c) per round and their "
                 "median (0: skip)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--agentfs-files", agentfs_files,
                 "files (and overwrites in proportion) for AgentFS only, which is slow (default: --files)")
      ->check(CLI::Range(1, 99999));
  app.add_flag("--no-agentfs", no_agentfs, "skip (d)");
  std::string stores = "abcd";
  app.add_option("--stores", stores,
                 "which of (a)-(g) run, e.g. 'b' alone for a profile (default abcd; e, f and g: part 3, PostgreSQL)");
  std::string postgres_url;
  app.add_option("--postgres-url", postgres_url,
                 "part 3 on this server (libpq URI; its database part is replaced by databases the bench creates "
                 "and drops) instead of a private one");
  bool postgres_fsync = false;
  app.add_flag("--postgres-fsync", postgres_fsync,
               "part 3: the private server flushes its log at each commit (fsync=on, a production server's "
               "durability; default off, as in the tests)")
      ->excludes("--postgres-url");
  int writers = 8, parallel_files = 500;
  app.add_option("--writers", writers, "part 3: processes writing one workspace at once (against 1)")
      ->check(CLI::Range(2, 64));
  app.add_option("--parallel-files", parallel_files, "part 3: files each writer process creates, then overwrites")
      ->check(CLI::Range(1, 100000));
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

  const auto selected = [&](char store) { return stores.find(store) != std::string::npos; };
  if (!skip_workload && stores.find_first_of("abcd") != std::string::npos) {
    const auto [paths, contents, rewritten] = MakeWorkloadData(work);

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
      for (WriteCounts PhaseTimes::*phase : {&PhaseTimes::create_writes, &PhaseTimes::overwrite_writes}) {
        for (double WriteCounts::*count : {&WriteCounts::calls, &WriteCounts::bytes}) {
          std::vector<double> values;
          for (const PhaseTimes& run : runs) values.push_back(run.*phase.*count);
          median.*phase.*count = Median(values);
        }
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
    std::printf("\nwrites per operation: write calls / KiB handed to the kernel (/proc/self/io, WAL and "
                "checkpoints; the load does not move them), median of %d passes\n", repeat);
    std::printf("             %16s %16s %16s %12s\n", "(a) fs", "(b) sqlite", "(c) plain", "(b)/(c) KiB");
    for (const auto& [name, ops, phase] : {std::tuple{"create", work.files, &PhaseTimes::create_writes},
                                           std::tuple{"overwrite", work.overwrites, &PhaseTimes::overwrite_writes}}) {
      const auto per_op = [ops = ops, phase = phase](const PhaseTimes& times) {
        const WriteCounts& counts = times.*phase;
        char text[32];
        std::snprintf(text, sizeof text, "%.2f / %.1f", counts.calls / ops, counts.bytes / 1024 / ops);
        return std::string(counts.calls > 0 ? text : "—");
      };
      std::printf("%-12s %16s %16s %16s %12s\n", name, per_op(fs_times).c_str(), per_op(sqlite_times).c_str(),
                  per_op(plain_times).c_str(),
                  Ratio((sqlite_times.*phase).bytes, (plain_times.*phase).bytes).c_str());
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
    if ((list_rounds > 0 || write_rounds > 0) && selected('b') && selected('c')) {
      const std::string rounds_dir = dir + "/rounds";
      std::filesystem::create_directory(rounds_dir);
      ProjectStore sqlite_store(Open("sqlite:" + rounds_dir + "/store.db#bench", sync));
      PlainSqliteStore plain_store(rounds_dir + "/plain.db", sync);
      FillBoth(sqlite_store, plain_store, work, paths, contents);
      if (list_rounds > 0) {
        PrintRatios("list (b)/(c) by CPU time, " + std::to_string(list_rounds) + " alternating rounds of " +
                        std::to_string(work.dirs * work.list_sweeps) + " listings each",
                    AlternateListings(sqlite_store, plain_store, work, list_rounds));
      }
      if (write_rounds > 0) {
        WriteRatios ratios = AlternateWrites(sqlite_store, plain_store, work, paths, write_rounds);
        const std::string each = std::to_string(write_rounds) + " alternating rounds of " +
                                 std::to_string(work.overwrites) + " each";
        PrintRatios("create (b)/(c), " + each, ratios.create);
        PrintRatios("overwrite (b)/(c), " + each, ratios.overwrite);
      }
      std::printf("\n");
      std::fflush(stdout);
    }
  }

  if (!skip_snapshots && selected('b')) {
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

  if (selected('e') || selected('f') || selected('g')) RunPostgresPart(postgres_url, postgres_fsync, work, repeat, rounds, writers, parallel_files,
                                                     !skip_workload, !skip_snapshots, selected('e'), selected('f'),
                                                     selected('g'));

  if (keep) {
    std::printf("\nkept %s\n", dir.c_str());
  } else {
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  }
  return 0;
}
