// session_bench: how the host scales with concurrent sessions (issue 16
// item 6). N copies of protocol_tool run at once through one VfsRuntime over
// the fs store, with the audit log on, each reading 1 KiB files with
// sequential blocking fs.read calls (one request at a time per session);
// the same total number of reads is split over 1, 8 and 32 sessions.
//
// Printed per session count: the throughput of all sessions together
// (reads per second of wall time, from the first tool start to the last
// tool's end), the host's CPU per read (this process: session loops,
// workers, audit; tool starts included), and both against one session.
// Beside each, the same traffic through bare pipe ping-pongs (RunReference),
// whose ratio is what the kernel alone does with that many pairs.
//
// On a machine with C CPUs, more sessions than C cannot go faster than C
// sessions; the ratio says how much of one session's throughput survives
// the contention, and the CPU per read where it goes.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "bench_report.h"
#include "source_text.h"
#include "policy/audit.h"
#include "runtime/vfs_runtime.h"

namespace toolvfs {
namespace {

namespace fs = std::filesystem;
using bench::Fail;

constexpr int kFiles = 64;
constexpr size_t kFileBytes = 1024;

double ProcessCpuMicroseconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1e6 +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
}

struct Options {
  std::vector<int> sessions = {1, 8, 32};
  uint64_t reads = 64'000;  // in total, split over the sessions
  int rounds = 3;
  bool audit = true;
  std::string tool = PROTOCOL_TOOL;
};

struct Figures {
  double reads_per_second = 0;
  double host_cpu_us_per_read = 0;
};

// One run of `sessions` tools at once, `reads` in total.
Figures RunSessions(VfsRuntime& runtime, const ToolConfig& tool, const std::string& paths_json,
                    int sessions, uint64_t reads) {
  const uint64_t per_session = reads / static_cast<uint64_t>(sessions);
  std::string arguments = "{\"paths\":" + paths_json + ",\"iterations\":" + std::to_string(per_session) +
                          ",\"warmup\":0}";
  std::vector<std::string> failures(static_cast<size_t>(sessions));
  const double cpu_start = ProcessCpuMicroseconds();
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int session = 0; session < sessions; ++session) {
    threads.emplace_back([&, session] {
      CancelToken cancel;
      ToolCall call{.name = tool.name, .arguments_json = arguments};
      Result<Outcome> outcome = runtime.Execute(call, tool, cancel);
      std::string& failure = failures[static_cast<size_t>(session)];
      if (!outcome.ok()) {
        failure = outcome.status().message();
      } else if (outcome->is_error) {
        failure = (outcome->error ? outcome->error->message : std::string("error")) + "\n" + outcome->stderr_tail;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double cpu_us = ProcessCpuMicroseconds() - cpu_start;
  for (const std::string& failure : failures) {
    if (!failure.empty()) Fail("a session failed: " + failure);
  }
  const double total = static_cast<double>(per_session * static_cast<uint64_t>(sessions));
  return {total / seconds, cpu_us / total};
}

// The reference: `sessions` bare pipe ping-pongs at once, each a thread of
// this process and a forked child answering every request line with a
// canned answer of the host's size, `reads` round trips in total. No
// epoll, no policy, no file read, no audit: what the kernel's pipes and
// scheduler cost for the same traffic, so that the toolvfs figures can be
// compared with what any two-process protocol would get on this machine.
Figures RunReference(int sessions, uint64_t reads, const std::string& request, const std::string& answer) {
  const uint64_t per_session = reads / static_cast<uint64_t>(sessions);
  struct Pair {
    pid_t child = -1;
    int to_child = -1;
    int from_child = -1;
  };
  std::vector<Pair> pairs(static_cast<size_t>(sessions));
  for (Pair& pair : pairs) {
    int requests[2], answers[2];
    if (pipe2(requests, O_CLOEXEC) != 0 || pipe2(answers, O_CLOEXEC) != 0) Fail("pipe2 failed");
    pid_t child = fork();
    if (child < 0) Fail("fork failed");
    if (child == 0) {
      // Only system calls from here: the parent has threads. Keep only
      // this pair's two ends (on 0 and 1): an inherited end of another
      // pair's pipe would keep that pair's child from seeing its end.
      if (dup2(requests[0], STDIN_FILENO) < 0 || dup2(answers[1], STDOUT_FILENO) < 0) _exit(1);
      close_range(3, ~0U, 0);
      char buffer[4096];
      size_t pending = 0;  // bytes of a request line read so far
      while (true) {
        ssize_t count = read(STDIN_FILENO, buffer, sizeof buffer);
        if (count <= 0) _exit(0);
        for (ssize_t index = 0; index < count; ++index) {
          ++pending;
          if (buffer[index] != '\n') continue;
          pending = 0;
          size_t written = 0;
          while (written < answer.size()) {
            ssize_t done = write(STDOUT_FILENO, answer.data() + written, answer.size() - written);
            if (done <= 0) _exit(1);
            written += static_cast<size_t>(done);
          }
        }
      }
    }
    close(requests[0]);
    close(answers[1]);
    pair = {child, requests[1], answers[0]};
  }
  const double cpu_start = ProcessCpuMicroseconds();
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (Pair& pair : pairs) {
    threads.emplace_back([&pair, &request, &answer, per_session] {
      std::vector<char> buffer(answer.size() + 4096);
      for (uint64_t round = 0; round < per_session; ++round) {
        if (write(pair.to_child, request.data(), request.size()) != static_cast<ssize_t>(request.size())) {
          Fail("reference: write failed");
        }
        size_t received = 0;
        while (received < answer.size()) {
          ssize_t count = read(pair.from_child, buffer.data(), buffer.size());
          if (count <= 0) Fail("reference: read failed");
          received += static_cast<size_t>(count);
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double cpu_us = ProcessCpuMicroseconds() - cpu_start;
  for (Pair& pair : pairs) {
    close(pair.to_child);
    close(pair.from_child);
    waitpid(pair.child, nullptr, 0);
  }
  const double total = static_cast<double>(per_session * static_cast<uint64_t>(sessions));
  return {total / seconds, cpu_us / total};
}

int Main(int argc, char** argv) {
  Options options;
  CLI::App app("session_bench: host throughput and CPU per request with 1, 8 and 32 concurrent sessions");
  app.add_option("--sessions", options.sessions, "Session counts to measure (default 1,8,32)")->delimiter(',');
  app.add_option("--reads", options.reads, "Reads in total per measurement, split over the sessions");
  app.add_option("--rounds", options.rounds, "Rounds; the table shows medians");
  app.add_flag("!--no-audit", options.audit, "Run without the audit log");
  app.add_option("--tool", options.tool, "The protocol_tool binary");
  bench::ParseCommandLine(app, argc, argv);
  if (options.sessions.empty() || options.rounds < 1) Fail("--sessions and --rounds need values");

  const fs::path root = fs::temp_directory_path() / ("toolvfs-session-bench-" + std::to_string(getpid()));
  fs::create_directories(root / "small");
  std::string paths_json = "[";
  for (int i = 0; i < kFiles; ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "small/f%02d.txt", i);
    std::ofstream(root / name) << bench::MakeSourceText(kFileBytes, bench::kTypicalSourceLines, static_cast<uint32_t>(i));
    paths_json += std::string(i == 0 ? "" : ",") + "\"" + name + "\"";
  }
  paths_json += "]";

  Result<std::unique_ptr<ProjectFiles>> project = OpenProject(root.string());
  if (!project.ok()) Fail("cannot open the project: " + project.status().message());
  std::unique_ptr<AuditSink> audit;
  if (options.audit) {
    Result<std::unique_ptr<AuditSink>> opened = OpenAuditLogFile((root / "audit.jsonl").string());
    if (!opened.ok()) Fail(opened.status().message());
    audit = std::move(opened).value();
  }
  VfsRuntime runtime(*project.value(), VfsRuntimeOptions{.working_directory = root.string(), .audit = audit.get()});
  ToolConfig tool;
  tool.name = "protocol_tool";
  tool.command = CommandSpec{.program = options.tool};

  std::printf("session_bench: 1 KiB fs.read, one at a time per session, %llu reads per measurement, audit %s\n",
              static_cast<unsigned long long>(options.reads), options.audit ? "on" : "off");
  std::printf("machine: %s\n", bench::Machine().c_str());
  std::printf("%d rounds, medians\n\n", options.rounds);

  // The reference's traffic: the tool's request line and the host's
  // answer for one of the files, as the host writes it.
  const std::string request = R"({"jsonrpc":"2.0","id":12345,"method":"fs.read","params":{"path":"small/f00.txt"}})" "\n";
  std::string answer = R"({"jsonrpc":"2.0","id":12345,"result":{"content":")";
  answer += std::string(kFileBytes + kFileBytes / 30, 'x') + R"(","size":1024}})" "\n";

  const size_t counts = options.sessions.size();
  std::vector<std::vector<double>> rates(counts), cpus(counts), reference_rates(counts), reference_cpus(counts);
  for (int round = 0; round < options.rounds; ++round) {
    for (size_t index = 0; index < counts; ++index) {
      Figures reference = RunReference(options.sessions[index], options.reads, request, answer);
      reference_rates[index].push_back(reference.reads_per_second);
      reference_cpus[index].push_back(reference.host_cpu_us_per_read);
      Figures figures = RunSessions(runtime, tool, paths_json, options.sessions[index], options.reads);
      rates[index].push_back(figures.reads_per_second);
      cpus[index].push_back(figures.host_cpu_us_per_read);
    }
  }
  const double base_rate = bench::Median(rates[0]);
  const double base_cpu = bench::Median(cpus[0]);
  const double reference_base_rate = bench::Median(reference_rates[0]);
  const double reference_base_cpu = bench::Median(reference_cpus[0]);
  std::printf("%-9s | %-44s | %-44s\n", "", "toolvfs (whole host, audit)",
              "reference (bare pipe ping-pong, same bytes)");
  std::printf("%-9s | %10s %8s %14s %8s | %10s %8s %14s %8s\n", "sessions", "reads/s", "vs 1st", "host CPU/read",
              "vs 1st", "reads/s", "vs 1st", "CPU/read", "vs 1st");
  for (size_t index = 0; index < counts; ++index) {
    const double rate = bench::Median(rates[index]);
    const double cpu = bench::Median(cpus[index]);
    const double reference_rate = bench::Median(reference_rates[index]);
    const double reference_cpu = bench::Median(reference_cpus[index]);
    std::printf("%-9d | %10.0f %7.2fx %11.1f us %7.2fx | %10.0f %7.2fx %11.1f us %7.2fx\n", options.sessions[index],
                rate, rate / base_rate, cpu, cpu / base_cpu, reference_rate, reference_rate / reference_base_rate,
                reference_cpu, reference_cpu / reference_base_cpu);
  }
  std::error_code ignored;
  fs::remove_all(root, ignored);
  return 0;
}

}  // namespace
}  // namespace toolvfs

int main(int argc, char** argv) { return toolvfs::Main(argc, argv); }
