// vfsd_bench: streaming a file through `toolvfs vfsd` read handles against
// `cat FILE` into a pipe (SPEC.md §11, issue 20), and stat round trips.
//
//   vfsd_bench [--toolvfs PATH] [--size-mib N] [--rounds N] [--stats N]
//
// The file (256 MiB of pseudo-random bytes by default) is written once to a
// temporary directory and read once before timing, so every run reads from
// the page cache. Each round streams it:
//   - reference: `cat FILE` writing into a pipe this program drains;
//   - vfsd with read max 4096 (the default --read-max), audit off and on;
//   - vfsd with --read-max 1048576 and max 1048576.
// vfsd is driven over its stdin/stdout pipes, one request at a time, as a
// client would, timed from the first read to the last answer; the
// answer's base64 data is counted, not decoded. The
// table shows median wall times, throughput and the ratio to cat. Then
// --stats stat requests, one at a time: operations per second.
// Exit status: 0 done, 2 setup error (a wrong byte count included).
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "bench_report.h"

extern char** environ;

namespace toolvfs {
namespace {

using bench::Fail;
using Clock = std::chrono::steady_clock;

double Seconds(Clock::duration duration) { return std::chrono::duration<double>(duration).count(); }

// A child process with its stdin and stdout on pipes to us.
struct Child {
  pid_t pid = -1;
  int to_child = -1;
  int from_child = -1;
};

Child Start(const std::vector<std::string>& args, bool with_stdin) {
  int out[2], in[2] = {-1, -1};
  if (::pipe2(out, O_CLOEXEC) != 0 || (with_stdin && ::pipe2(in, O_CLOEXEC) != 0)) Fail("pipe: " + std::string(std::strerror(errno)));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  if (with_stdin) posix_spawn_file_actions_adddup2(&actions, in[0], 0);
  std::vector<char*> argv;
  std::vector<std::string> words = args;
  for (std::string& word : words) argv.push_back(word.data());
  argv.push_back(nullptr);
  Child child;
  int spawned = ::posix_spawnp(&child.pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) Fail("cannot start " + args[0] + ": " + std::strerror(spawned));
  ::close(out[1]);
  child.from_child = out[0];
  if (with_stdin) {
    ::close(in[0]);
    child.to_child = in[1];
  }
  return child;
}

int Finish(Child& child) {
  if (child.to_child >= 0) ::close(child.to_child);
  int status = 0;
  ::waitpid(child.pid, &status, 0);
  ::close(child.from_child);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

void WriteAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t written = ::write(fd, bytes.data(), bytes.size());
    if (written < 0 && errno == EINTR) continue;
    if (written < 0) Fail("write: " + std::string(std::strerror(errno)));
    bytes.remove_prefix(static_cast<size_t>(written));
  }
}

// Reads frames from a pipe into one reused buffer.
class FrameIn {
 public:
  explicit FrameIn(int fd) : fd_(fd), buffer_(1 << 20, '\0') {}

  std::string_view Next() {
    Fill(4);
    const auto* header = reinterpret_cast<const unsigned char*>(buffer_.data() + start_);
    size_t length = (size_t{header[0]} << 24) | (size_t{header[1]} << 16) | (size_t{header[2]} << 8) | header[3];
    Fill(4 + length);
    std::string_view payload(buffer_.data() + start_ + 4, length);
    start_ += 4 + length;
    return payload;
  }

 private:
  void Fill(size_t count) {
    if (end_ - start_ >= count) return;
    std::memmove(buffer_.data(), buffer_.data() + start_, end_ - start_);
    end_ -= start_;
    start_ = 0;
    if (buffer_.size() < count) buffer_.resize(count);
    while (end_ < count) {
      ssize_t got = ::read(fd_, buffer_.data() + end_, buffer_.size() - end_);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) Fail("the daemon closed the channel");
      end_ += static_cast<size_t>(got);
    }
  }

  int fd_;
  std::string buffer_;
  size_t start_ = 0, end_ = 0;
};

std::string Frame(std::string_view payload) {
  std::string frame(4, '\0');
  uint32_t length = static_cast<uint32_t>(payload.size());
  for (int index = 0; index < 4; ++index) frame[static_cast<size_t>(index)] = static_cast<char>(length >> (24 - 8 * index));
  frame.append(payload);
  return frame;
}

// Bytes of the "data" member of a read answer, from its base64 length.
uint64_t DataBytes(std::string_view answer) {
  size_t start = answer.find("\"data\":\"");
  if (start == std::string_view::npos) Fail("not a read answer: " + std::string(answer.substr(0, 200)));
  start += 8;
  size_t end = answer.find('"', start);
  std::string_view data = answer.substr(start, end - start);
  uint64_t padding = data.ends_with("==") ? 2 : data.ends_with("=") ? 1 : 0;
  return data.size() / 4 * 3 - padding;
}

struct Options {
  std::string toolvfs;
  std::string project;
  std::string file_name = "big.bin";
  uint64_t size = 0;
};

double TimeCat(const Options& options) {
  auto started = Clock::now();
  Child cat = Start({"cat", options.project + "/" + options.file_name}, false);
  std::vector<char> buffer(1 << 16);
  uint64_t total = 0;
  while (true) {
    ssize_t got = ::read(cat.from_child, buffer.data(), buffer.size());
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    total += static_cast<uint64_t>(got);
  }
  Finish(cat);
  double seconds = Seconds(Clock::now() - started);
  if (total != options.size) Fail("cat gave " + std::to_string(total) + " bytes");
  return seconds;
}

std::vector<std::string> DaemonArgs(const Options& options, uint64_t read_max, bool audit) {
  std::vector<std::string> args = {options.toolvfs, "vfsd", "--project", options.project, "--allow", "."};
  args.push_back("--read-max");
  args.push_back(std::to_string(read_max));
  if (audit) {
    args.push_back("--audit");
    args.push_back(options.project + "/../audit.jsonl");
  } else {
    args.push_back("--no-audit");
  }
  return args;
}

// Streams the file through one read handle, `max` bytes per read; the
// time from the first read to the last answer (the daemon's start-up and
// open_read are not streaming; cat's start-up is in its time, and small).
double TimeVfsd(const Options& options, uint64_t max, bool audit) {
  Child daemon = Start(DaemonArgs(options, max, audit), true);
  FrameIn in(daemon.from_child);
  WriteAll(daemon.to_child, Frame(R"({"id":"o","op":"open_read","params":{"path":")" + options.file_name + "\"}}"));
  std::string_view opened = in.Next();
  if (opened.find("\"handle\":1") == std::string_view::npos) Fail("open_read: " + std::string(opened));
  std::string read = Frame(R"({"id":"r","op":"read","params":{"h":1,"max":)" + std::to_string(max) + "}}");
  uint64_t total = 0;
  auto started = Clock::now();
  while (true) {
    WriteAll(daemon.to_child, read);
    std::string_view answer = in.Next();
    total += DataBytes(answer);
    if (answer.find("\"eof\":true") != std::string_view::npos) break;
  }
  double seconds = Seconds(Clock::now() - started);
  int status = Finish(daemon);
  if (status != 0) Fail("toolvfs vfsd exited with " + std::to_string(status));
  if (total != options.size) Fail("vfsd gave " + std::to_string(total) + " bytes, expected " + std::to_string(options.size));
  return seconds;
}

double StatsPerSecond(const Options& options, int count) {
  Child daemon = Start(DaemonArgs(options, 4096, false), true);
  FrameIn in(daemon.from_child);
  std::string stat = Frame(R"({"id":"s","op":"stat","params":{"path":")" + options.file_name + "\"}}");
  auto started = Clock::now();
  for (int index = 0; index < count; ++index) {
    WriteAll(daemon.to_child, stat);
    std::string_view answer = in.Next();
    if (answer.find("\"ok\":true") == std::string_view::npos) Fail("stat: " + std::string(answer));
  }
  double seconds = Seconds(Clock::now() - started);
  Finish(daemon);
  return count / seconds;
}

}  // namespace
}  // namespace toolvfs

int main(int argc, char** argv) {
  using namespace toolvfs;
  CLI::App app{"vfsd read streaming against cat through a pipe, and stat round trips", "vfsd_bench"};
  Options options;
  options.toolvfs = "build/toolvfs";
  uint64_t size_mib = 256;
  int rounds = 3;
  int stats = 20000;
  app.add_option("--toolvfs", options.toolvfs, "The toolvfs binary (default: build/toolvfs)");
  app.add_option("--size-mib", size_mib, "File size in MiB (default: 256)");
  app.add_option("--rounds", rounds, "Timed rounds per variant; medians are shown (default: 3)");
  app.add_option("--stats", stats, "stat requests timed (default: 20000)");
  bench::ParseCommandLine(app, argc, argv);
  if (size_mib == 0 || rounds < 1 || stats < 1) Fail("--size-mib, --rounds and --stats must be at least 1");

  char directory[] = "/tmp/toolvfs-vfsd-bench-XXXXXX";
  if (::mkdtemp(directory) == nullptr) Fail("mkdtemp: " + std::string(std::strerror(errno)));
  options.project = std::string(directory) + "/project";
  std::filesystem::create_directory(options.project);
  options.size = size_mib << 20;
  {
    // Pseudo-random bytes: base64 and the pipe see real data, not zeros.
    std::string block(1 << 20, '\0');
    uint64_t state = 0x9e3779b97f4a7c15ULL;
    FILE* file = std::fopen((options.project + "/" + options.file_name).c_str(), "wb");
    if (file == nullptr) Fail("cannot create the test file");
    for (uint64_t mib = 0; mib < size_mib; ++mib) {
      for (size_t index = 0; index < block.size(); index += 8) {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        std::memcpy(block.data() + index, &state, 8);
      }
      std::fwrite(block.data(), 1, block.size(), file);
    }
    std::fclose(file);
  }
  TimeCat(options);  // warm the page cache

  struct Variant {
    const char* label;
    uint64_t max;
    bool audit;
  };
  const Variant variants[] = {{"vfsd read max 4096", 4096, false},
                              {"vfsd read max 4096, audit on", 4096, true},
                              {"vfsd --read-max 1048576", 1 << 20, false}};
  std::vector<double> cat_times;
  std::vector<std::vector<double>> variant_times(std::size(variants));
  for (int round = 0; round < rounds; ++round) {
    cat_times.push_back(TimeCat(options));
    for (size_t index = 0; index < std::size(variants); ++index) {
      variant_times[index].push_back(TimeVfsd(options, variants[index].max, variants[index].audit));
    }
  }
  double cat = bench::Median(cat_times);
  double mib = static_cast<double>(size_mib);
  std::printf("vfsd_bench: streaming a %llu MiB file, median of %d rounds\n", static_cast<unsigned long long>(size_mib),
              rounds);
  std::printf("  %-32s %9s %11s %9s\n", "", "seconds", "MiB/s", "x cat");
  std::printf("  %-32s %9.3f %11.1f %9.2f\n", "cat FILE into a pipe", cat, mib / cat, 1.0);
  for (size_t index = 0; index < std::size(variants); ++index) {
    double seconds = bench::Median(variant_times[index]);
    std::printf("  %-32s %9.3f %11.1f %9.2f\n", variants[index].label, seconds, mib / seconds, seconds / cat);
  }
  std::printf("  stat of one file, one request at a time: %.0f ops/s (%d requests)\n", StatsPerSecond(options, stats),
              stats);
  std::printf("  machine: %s\n", bench::Machine().c_str());
  std::filesystem::remove_all(directory);
  return 0;
}
