// sync_back_bench: the sync-back of a materialized copy into a sqlite store
// (docs/stores.md, "The check's address is the store's"; docs/benchmarks.md,
// "Sync-back").
//
// Each round fills a new sqlite workspace with FILES files (16) of MIB MiB
// (64) in all, materializes it, overwrites every file of the copy with new
// random bytes (made before any clock starts) and times Release(): the walk
// that finds what changed, and the one transaction that writes it back.
// The reference, timed in the same round on the same new bytes: each file
// read from a plain directory, hashed once (ContentAddress, SHA-256 as the
// store addresses content), written to another directory and fdatasync'ed:
// about the least any sync that checks what it writes can do. Prints the
// medians of --rounds rounds (3) in MB/s, their ratio, and the bytes
// SHA-256 hashed per changed byte during the sync (Sha256BytesHashed).
//
//   sync_back_bench [--mib 64] [--files 16] [--rounds 3]
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "bench_report.h"
#include "core/io.h"
#include "core/unique_fd.h"
#include "project/content/content_hash.h"
#include "project/project_files.h"

namespace toolvfs {
namespace {

using Clock = std::chrono::steady_clock;

// A private directory, removed with everything in it.
class ScratchDirectory {
 public:
  ScratchDirectory() : path_(std::string(P_tmpdir) + "/sync_back_bench-XXXXXX") {
    if (::mkdtemp(path_.data()) == nullptr) bench::Fail("cannot create a directory in " + std::string(P_tmpdir));
  }
  ScratchDirectory(const ScratchDirectory&) = delete;
  ScratchDirectory& operator=(const ScratchDirectory&) = delete;
  ~ScratchDirectory() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

void WriteFileOrFail(const std::string& path, std::string_view bytes, bool sync) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (!fd) bench::Fail("cannot create " + path);
  Status written = WriteFull(fd.get(), bytes, path);
  if (!written.ok()) bench::Fail(written.message());
  if (sync && ::fdatasync(fd.get()) != 0) bench::Fail("cannot sync " + path);
}

std::string ReadFileOrFail(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) bench::Fail("cannot open " + path);
  Result<std::string> bytes = ReadToEnd(fd.get(), uint64_t{1} << 32, path);
  if (!bytes.ok()) bench::Fail(bytes.status().message());
  return std::move(*bytes);
}

std::string RandomBytes(size_t size, std::mt19937_64& generator) {
  std::string bytes(size, '\0');
  for (size_t i = 0; i + 8 <= size; i += 8) {
    const uint64_t word = generator();
    for (size_t b = 0; b < 8; ++b) bytes[i + b] = static_cast<char>(word >> (8 * b));
  }
  return bytes;
}

double Seconds(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

struct Round {
  double sync_seconds = 0;
  double reference_seconds = 0;
  double hash_passes = 0;
};

Round RunRound(size_t files, size_t file_bytes, std::mt19937_64& generator) {
  ScratchDirectory scratch;
  std::vector<std::string> names;
  for (size_t i = 0; i < files; ++i) names.push_back("f" + std::to_string(i) + ".bin");

  Result<std::unique_ptr<ProjectFiles>> store = OpenProject("sqlite:" + scratch.path() + "/store.db#bench");
  if (!store.ok()) bench::Fail(store.status().message());
  for (const std::string& name : names) {
    Status written = (*store)->Write(name, RandomBytes(file_bytes, generator));
    if (!written.ok()) bench::Fail(written.message());
  }
  Result<std::unique_ptr<MaterializedView>> view = (*store)->Materialize();
  if (!view.ok()) bench::Fail(view.status().message());
  const std::string source = scratch.path() + "/source";
  const std::string target = scratch.path() + "/target";
  if (::mkdir(source.c_str(), 0700) != 0 || ::mkdir(target.c_str(), 0700) != 0) bench::Fail("cannot mkdir");
  for (const std::string& name : names) {
    const std::string changed = RandomBytes(file_bytes, generator);
    WriteFileOrFail((*view)->path() + "/" + name, changed, /*sync=*/false);
    WriteFileOrFail(source + "/" + name, changed, /*sync=*/false);
  }

  Round round;
  const uint64_t hashed_before = Sha256BytesHashed();
  Clock::time_point start = Clock::now();
  Status released = (*view)->Release();
  round.sync_seconds = Seconds(start);
  if (!released.ok()) bench::Fail(released.message());
  round.hash_passes = static_cast<double>(Sha256BytesHashed() - hashed_before) /
                      static_cast<double>(files * file_bytes);

  start = Clock::now();
  uint64_t checksum = 0;
  for (const std::string& name : names) {
    const std::string bytes = ReadFileOrFail(source + "/" + name);
    checksum += ContentAddress(bytes)[0];
    WriteFileOrFail(target + "/" + name, bytes, /*sync=*/true);
  }
  round.reference_seconds = Seconds(start);
  if (checksum == UINT64_MAX) std::printf(" ");  // keeps the hashes from being optimized away
  return round;
}

}  // namespace
}  // namespace toolvfs

int main(int argc, char** argv) {
  using namespace toolvfs;
  size_t mib = 64;
  size_t files = 16;
  int rounds = 3;
  CLI::App app("The sync-back of a materialized copy into a sqlite store against read + SHA-256 + write");
  app.add_option("--mib", mib, "MiB of changed files per round")->check(CLI::Range(1, 4096));
  app.add_option("--files", files, "Files they are cut into")->check(CLI::Range(1, 100000));
  app.add_option("--rounds", rounds, "Rounds; medians are printed")->check(CLI::Range(1, 100));
  bench::ParseCommandLine(app, argc, argv);
  const size_t file_bytes = (mib << 20) / files;
  std::mt19937_64 generator(42);
  std::vector<double> sync_rates;
  std::vector<double> reference_rates;
  std::vector<double> passes;
  const double megabytes = static_cast<double>(file_bytes * files) / 1e6;
  for (int round = 0; round < rounds; ++round) {
    Round measured = RunRound(files, file_bytes, generator);
    sync_rates.push_back(megabytes / measured.sync_seconds);
    reference_rates.push_back(megabytes / measured.reference_seconds);
    passes.push_back(measured.hash_passes);
  }
  const double sync = bench::Median(sync_rates);
  const double reference = bench::Median(reference_rates);
  std::printf("sync_back_bench: %zu files, %.1f MB changed, %d rounds, medians; %s\n", files, megabytes, rounds,
              bench::Machine().c_str());
  std::printf("  sync-back into sqlite        %8.1f MB/s  (SHA-256 passes over the changed bytes: %.2f)\n", sync,
              bench::Median(passes));
  std::printf("  read + SHA-256 + write/sync  %8.1f MB/s  (reference)\n", reference);
  std::printf("  ratio sync-back / reference  %8.2f\n", sync / reference);
  return 0;
}
