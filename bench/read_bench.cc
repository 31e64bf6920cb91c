// read_bench: how grep should read files. Reads every file of the grep
// benchmark's tree (build it with grep_bench first) three ways, single
// threaded, from the page cache, and prints each time against the way the
// engine reads (64 KiB chunks into a page-aligned buffer, each chunk at the
// file's own page offset):
//   - whole file into one buffer (what the first engine did);
//   - 64 KiB chunks into a buffer 16 bytes past a page boundary (where
//     glibc's large allocations land);
//   - 64 KiB chunks into a page-aligned buffer (the engine).
// The figures behind the design notes in docs/grep.md and docs/benchmarks.md.
//
//   read_bench [TREE]        default /tmp/toolvfs-bench-tree
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

namespace {

constexpr size_t kChunk = 64 * 1024;
constexpr size_t kPage = 4096;

void CollectFiles(const std::string& directory, std::vector<std::string>& files) {
  DIR* stream = opendir(directory.c_str());
  if (stream == nullptr) return;
  while (dirent* entry = readdir(stream)) {
    std::string name = entry->d_name;
    if (name == "." || name == "..") continue;
    std::string path = directory + "/" + name;
    if (entry->d_type == DT_DIR) CollectFiles(path, files);
    else if (entry->d_type == DT_REG) files.push_back(path);
  }
  closedir(stream);
}

// Touches one byte per cache line, so the data is read as a search would.
size_t Consume(const char* data, size_t size) {
  size_t newlines = 0;
  for (size_t i = 0; i < size; i += 64) newlines += data[i] == '\n';
  return newlines;
}

struct Outcome {
  double milliseconds;
  size_t bytes;
};

// kind 0: whole file; 1: chunks 16 bytes past a page; 2: chunks at the file's page offset.
Outcome ReadAll(const std::vector<std::string>& files, int kind) {
  size_t capacity = kChunk + 2 * kPage;
  char* raw = static_cast<char*>(std::aligned_alloc(kPage, capacity));
  size_t bytes = 0, checksum = 0;
  auto start = std::chrono::steady_clock::now();
  for (const std::string& path : files) {
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    struct stat status;
    fstat(fd, &status);
    if (kind == 0 && static_cast<size_t>(status.st_size) + 1 > capacity) {
      std::free(raw);
      capacity = static_cast<size_t>(status.st_size) + 1;
      // A plain malloc, as std::string or new[] would get.
      raw = static_cast<char*>(std::malloc(capacity));
    }
    size_t offset_in_file = 0;
    while (true) {
      char* destination;
      size_t room;
      if (kind == 0) {
        destination = raw + offset_in_file;
        room = capacity - offset_in_file;
      } else {
        destination = raw + (kind == 1 ? 16 : offset_in_file % kPage);
        room = kChunk;
      }
      ssize_t got = read(fd, destination, room);
      if (got <= 0) break;
      checksum += Consume(destination, static_cast<size_t>(got));
      offset_in_file += static_cast<size_t>(got);
    }
    bytes += offset_in_file;
    close(fd);
  }
  double elapsed = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::free(raw);
  if (checksum == 1) std::puts("");  // keeps Consume from being optimized away
  return {elapsed, bytes};
}

}  // namespace

int main(int argc, char** argv) {
  std::string tree = argc > 1 ? argv[1] : "/tmp/toolvfs-bench-tree";
  std::vector<std::string> files;
  CollectFiles(tree, files);
  if (files.empty()) {
    std::fprintf(stderr, "read_bench: no files in %s; run build/bench/grep_bench first to build the tree\n",
                 tree.c_str());
    return 2;
  }
  ReadAll(files, 2);  // warm the page cache
  const char* names[] = {"whole file, malloc'd buffer", "64 KiB chunks, buffer at page + 16",
                         "64 KiB chunks, page-aligned (engine)"};
  std::vector<double> times[3];
  size_t bytes = 0;
  for (int round = 0; round < 5; ++round) {
    for (int kind = 0; kind < 3; ++kind) {
      Outcome outcome = ReadAll(files, kind);
      times[kind].push_back(outcome.milliseconds);
      bytes = outcome.bytes;
    }
  }
  std::printf("tree: %s (%zu files, %.1f MiB), 1 thread, median of 5 rounds\n\n", tree.c_str(),
              files.size(), static_cast<double>(bytes) / (1 << 20));
  double medians[3];
  for (int kind = 0; kind < 3; ++kind) {
    std::sort(times[kind].begin(), times[kind].end());
    medians[kind] = times[kind][2];
  }
  for (int kind = 0; kind < 3; ++kind) {
    std::printf("%-40s %8.1f ms   %.2f x the engine's way\n", names[kind], medians[kind], medians[kind] / medians[2]);
  }
  return 0;
}
