// `toolvfs mcp` against the official MCP filesystem server
// (@modelcontextprotocol/server-filesystem, Node.js) in the same run
// (issue 21, "Benchmark"; docs/benchmarks.md): a plain JSON-RPC loop
// client, not an SDK, so the client's cost does not hide the servers'.
//
//   reads/s   tools/call read_file (server-filesystem: read_text_file) of
//             1 KiB files, one call at a time, after a warm-up
//   start-up  from spawning the server to its initialize answer
//   memory    the server's resident set (VmRSS) after the calls, and of
//             it the private part (Anonymous in smaps_rollup: what is not
//             shared file pages such as libraries)
//
// Each figure is the median of --rounds fresh servers, the contenders
// taking turns within each round (so a burst of load on the shared machine
// hits all of them). Targets: at least 10x the reference's reads/s, at
// most 1/10 of its start-up time and memory. --baseline adds another
// toolvfs binary (main's build) to the same rounds, for an A/B ratio.
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "bench_report.h"
#include "mcp_servers.h"

extern char** environ;

namespace toolvfs::bench {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

struct Options {
  std::string toolvfs = TOOLVFS_BINARY;
  std::string node = "node";
  std::string mcp_server;  // server-filesystem's dist/index.js
  std::string baseline;    // another toolvfs binary (e.g. main's) to compare with; empty: none
  int calls = 1000;
  int warmup = 100;
  int rounds = 3;
  int files = 100;
};

// One server process with pipes to its stdin and from its stdout; stderr
// goes to /dev/null. Ended (stdin closed, then waited for) on destruction.
class Server {
 public:
  explicit Server(const std::vector<std::string>& argv) {
    int to_child[2], from_child[2];
    if (pipe2(to_child, O_CLOEXEC) != 0 || pipe2(from_child, O_CLOEXEC) != 0) Fail("pipe failed");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, to_child[0], 0);
    posix_spawn_file_actions_adddup2(&actions, from_child[1], 1);
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
    std::vector<char*> args;
    for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
    args.push_back(nullptr);
    if (posix_spawnp(&pid_, args[0], &actions, nullptr, args.data(), environ) != 0) {
      Fail("cannot start " + argv[0]);
    }
    posix_spawn_file_actions_destroy(&actions);
    close(to_child[0]);
    close(from_child[1]);
    input_ = to_child[1];
    output_ = from_child[0];
  }
  ~Server() {
    close(input_);
    close(output_);
    int status;
    waitpid(pid_, &status, 0);
  }
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  void Write(std::string_view text) {
    while (!text.empty()) {
      ssize_t written = write(input_, text.data(), text.size());
      if (written <= 0) Fail("the server closed its input");
      text.remove_prefix(static_cast<size_t>(written));
    }
  }

  // The next line the server writes that holds `"id":ID` as the message's
  // id (notifications in between are skipped).
  std::string AnswerTo(int id) {
    const std::string field = "\"id\":" + std::to_string(id);
    for (;;) {
      std::string line = NextLine();
      size_t at = line.find(field);
      if (at == std::string::npos) continue;
      size_t after = at + field.size();
      if (after < line.size() && (line[after] == ',' || line[after] == '}')) return line;
    }
  }

  // VmRSS in bytes, from /proc.
  double ResidentBytes() const {
    std::string line = FirstLineOf(("/proc/" + std::to_string(pid_) + "/status").c_str(), "VmRSS:");
    return std::atof(line.c_str() + 6) * 1024;
  }
  // The resident pages that are the process's own (anonymous), in bytes.
  double PrivateBytes() const {
    std::string line = FirstLineOf(("/proc/" + std::to_string(pid_) + "/smaps_rollup").c_str(), "Anonymous:");
    return std::atof(line.c_str() + 10) * 1024;
  }

 private:
  std::string NextLine() {
    for (;;) {
      size_t newline = buffer_.find('\n', scanned_);
      if (newline != std::string::npos) {
        std::string line = buffer_.substr(0, newline);
        buffer_.erase(0, newline + 1);
        scanned_ = 0;
        return line;
      }
      scanned_ = buffer_.size();
      char chunk[65536];
      ssize_t got = read(output_, chunk, sizeof chunk);
      if (got <= 0) Fail("the server stopped answering");
      buffer_.append(chunk, static_cast<size_t>(got));
    }
  }

  pid_t pid_ = -1;
  int input_ = -1;
  int output_ = -1;
  std::string buffer_;
  size_t scanned_ = 0;
};

struct Round {
  double startup_ms;
  double reads_per_second;
  double resident_mb;
  double private_mb;
};

// What differs between the two servers: how to start one and how to ask
// for file `index`.
struct Contender {
  std::string name;
  std::vector<std::string> argv;
  std::string tool;
  std::function<std::string(int index)> path;
};

Round Measure(const Contender& contender, const Options& options) {
  const auto spawned = Clock::now();
  Server server(contender.argv);
  server.Write(
      R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},)"
      R"("clientInfo":{"name":"mcp_bench","version":"1"}}})"
      "\n");
  if (server.AnswerTo(0).find("\"result\"") == std::string::npos) Fail(contender.name + " refused initialize");
  const double startup_ms = std::chrono::duration<double, std::milli>(Clock::now() - spawned).count();
  server.Write(R"({"jsonrpc":"2.0","method":"notifications/initialized"})"
               "\n");
  std::vector<std::string> requests;
  for (int i = 0; i < options.warmup + options.calls; ++i) {
    requests.push_back(R"({"jsonrpc":"2.0","id":)" + std::to_string(i + 1) +
                       R"(,"method":"tools/call","params":{"name":")" + contender.tool +
                       R"(","arguments":{"path":")" + contender.path(i % options.files) + "\"}}}\n");
  }
  Clock::time_point start;
  for (int i = 0; i < options.warmup + options.calls; ++i) {
    if (i == options.warmup) start = Clock::now();
    server.Write(requests[static_cast<size_t>(i)]);
    const std::string answer = server.AnswerTo(i + 1);
    if (answer.find("\"isError\":true") != std::string::npos || answer.find("\"result\"") == std::string::npos ||
        answer.find("kkkkkkkk") == std::string::npos) {
      Fail(contender.name + " failed a read: " + answer.substr(0, 300));
    }
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return {startup_ms, options.calls / seconds, server.ResidentBytes() / 1e6, server.PrivateBytes() / 1e6};
}

int Main(int argc, char** argv) {
  Options options;
  CLI::App app("mcp_bench: toolvfs mcp against @modelcontextprotocol/server-filesystem (issue 21)");
  app.add_option("--toolvfs", options.toolvfs, "The toolvfs binary");
  app.add_option("--node", options.node, "Node.js for the reference server");
  app.add_option("--mcp-server", options.mcp_server,
                 "server-filesystem's dist/index.js (default: where scripts/install-mcp-servers.sh puts it)");
  app.add_option("--baseline", options.baseline,
                 "Another toolvfs binary (e.g. main's build) measured in the same rounds, for an A/B ratio");
  app.add_option("--calls", options.calls, "Timed reads per round")->check(CLI::PositiveNumber);
  app.add_option("--rounds", options.rounds, "Fresh servers per contender; figures are medians")
      ->check(CLI::PositiveNumber);
  ParseCommandLine(app, argc, argv);
  if (options.mcp_server.empty()) options.mcp_server = McpServerScript("server-filesystem");
  if (access(options.mcp_server.c_str(), R_OK) != 0) {
    Fail(options.mcp_server + " is missing: run scripts/install-mcp-servers.sh");
  }

  std::string pattern = (fs::temp_directory_path() / "mcp_bench-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) Fail("mkdtemp failed");
  const fs::path root = fs::canonical(pattern);
  for (int i = 0; i < options.files; ++i) {
    std::ofstream(root / ("f" + std::to_string(i) + ".txt")) << std::string(1024, 'k');
  }
  std::ofstream(root / "toolvfs.toml") << "";

  const auto toolvfs = [&root](std::string name, std::string binary) {
    return Contender{std::move(name),
                     {std::move(binary), "mcp", "--project", root.string(), "--audit",
                      (root / "../mcp_bench-audit.jsonl").string()},
                     "read_file",
                     [](int index) { return "f" + std::to_string(index) + ".txt"; }};
  };
  std::vector<Contender> contenders = {
      toolvfs("toolvfs mcp", options.toolvfs),
      {"server-filesystem",
       {options.node, options.mcp_server, root.string()},
       "read_text_file",
       [&root](int index) { return (root / ("f" + std::to_string(index) + ".txt")).string(); }},
  };
  if (!options.baseline.empty()) contenders.push_back(toolvfs("toolvfs (baseline)", options.baseline));
  std::vector<std::vector<Round>> rounds(contenders.size());
  for (int round = 0; round < options.rounds; ++round) {
    for (size_t which = 0; which < contenders.size(); ++which) {
      rounds[which].push_back(Measure(contenders[which], options));
    }
  }
  fs::remove_all(root);
  fs::remove(root / "../mcp_bench-audit.jsonl");

  std::printf("mcp_bench: %d reads of 1 KiB files (after %d to warm up), one call at a time; median of %d rounds\n",
              options.calls, options.warmup, options.rounds);
  std::printf("machine: %s\n\n", Machine().c_str());
  std::printf("%-20s %12s %12s %12s %12s\n", "server", "reads/s", "start-up ms", "RSS MB", "private MB");
  std::vector<Round> medians;
  for (size_t which = 0; which < contenders.size(); ++which) {
    std::vector<double> startup, reads, resident, own;
    for (const Round& r : rounds[which]) {
      startup.push_back(r.startup_ms);
      reads.push_back(r.reads_per_second);
      resident.push_back(r.resident_mb);
      own.push_back(r.private_mb);
    }
    medians.push_back({Median(startup), Median(reads), Median(resident), Median(own)});
    std::printf("%-20s %12.0f %12.1f %12.1f %12.1f\n", contenders[which].name.c_str(),
                medians.back().reads_per_second, medians.back().startup_ms, medians.back().resident_mb,
                medians.back().private_mb);
  }
  const Round& ours = medians[0];
  const Round& theirs = medians[1];
  const double reads_ratio = ours.reads_per_second / theirs.reads_per_second;
  const double startup_ratio = ours.startup_ms / theirs.startup_ms;
  const double memory_ratio = ours.resident_mb / theirs.resident_mb;
  std::printf("\nreads/s:  %.1fx the reference's (target >= 10x): %s\n", reads_ratio,
              reads_ratio >= 10 ? "met" : "NOT met");
  std::printf("start-up: %.3f of the reference's (target <= 0.1): %s\n", startup_ratio,
              startup_ratio <= 0.1 ? "met" : "NOT met");
  std::printf("memory:   %.3f of the reference's RSS (target <= 0.1): %s\n", memory_ratio,
              memory_ratio <= 0.1 ? "met" : "NOT met");
  std::printf("          %.3f of its private memory (shared library pages left out)\n",
              ours.private_mb / theirs.private_mb);
  if (medians.size() > 2) {
    std::printf("\nagainst --baseline: %.2fx its reads/s, %.2fx its start-up time, %.2fx its RSS\n",
                ours.reads_per_second / medians[2].reads_per_second, ours.startup_ms / medians[2].startup_ms,
                ours.resident_mb / medians[2].resident_mb);
  }
  return 0;
}

}  // namespace
}  // namespace toolvfs::bench

int main(int argc, char** argv) { return toolvfs::bench::Main(argc, argv); }
