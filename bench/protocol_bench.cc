// protocol_bench: the VFS protocol's round trip against a bare pipe
// (SPEC.md §11, issue 3). In the same run, alternating, for 1 KiB files
// (64 different ones, read in turn) and for one 1 MiB text file:
//   (a) reference: a forked child connected by two pipes answers each
//       request line with the bytes the host answers that fs.read with
//       (computed once by the host's own handler, the request's id spliced
//       in). Both sides frame NDJSON honestly: a line ends with '\n', the
//       reader reads 256 KiB at a time (as the SDK does) and looks for the
//       newline in what arrived; blocking pipes, default capacity.
//   (b)/(c) toolvfs: a vfs tool (bench/protocol_tool.cc, built on
//       sdk/toolvfs/tool.h) doing sequential fs.read calls through the
//       whole vfs runtime (VfsRuntime over the fs store on a temporary
//       directory). The tool times its own loop, so its start-up is out.
//   (s) split: the same tool against the reference's bare answering loop
//       instead of the host, which separates the SDK's share of the gap
//       from the host's.
//   (m) for scale: the official MCP filesystem server (Node.js,
//       @modelcontextprotocol/server-filesystem from
//       scripts/install-mcp-servers.sh) answering read_text_file calls of
//       the same files from the same kind of bare asking loop; a tenth of
//       the round trips, as it is 10 to 70 times slower. Skipped, with a
//       note, when the server is not installed. Issue 3 quotes it at "about 0.15x";
//       which placement gives that figure says which one the targets were
//       set in (docs/benchmarks.md, "Which placement the targets mean").
// Prints medians and the ratios (b)/(a) in round trips per second and
// (c)/(a) in MB/s against the targets of issue 3, and the CPU time each
// side spends per round trip.
//
// Where the two processes run decides what a round trip costs more than
// anything either of them does: on one CPU a wake-up is a context switch
// (about 1 µs); across two CPUs of a VM whose idle CPUs halt it is an
// inter-processor interrupt and a VM exit (about 20 µs on the machine of
// docs/benchmarks.md). Left to the kernel, a run lands in one regime or
// the other by chance. So every measurement runs in both placements, each
// pinned for all columns alike:
//   same:  answering side (host, reference child) and asking side (tool,
//          reference parent) on one CPU;
//   split: the answering side on one CPU, the asking side on another;
//   kernel (on request): no pinning, as the kernel places them.
//
//   protocol_bench [--quick] [--rounds N] [--case small|large] [--subject-only]
//                  [--placement same,split,kernel] [--tool PATH]
//                  [--mcp-server SCRIPT | --no-mcp]
//
// Exit status: 0 after measuring (a missed target is printed, not an
// error), 2 on a setup error. The targets are judged with the two sides on
// two CPUs (split); the other placements print their ratios beside them.
#include <fcntl.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "bench_report.h"
#include "host/cancel_token.h"
#include "host/init_message.h"
#include "host/methods.h"
#include "mcp_servers.h"
#include "policy/inquirer.h"
#include "policy/tool_policy.h"
#include "project/project_files.h"
#include "protocol/jsonrpc.h"
#include "runtime/vfs_runtime.h"
#include "sandbox/launcher.h"
#include "source_text.h"

#ifndef PROTOCOL_TOOL
#define PROTOCOL_TOOL ""
#endif

namespace toolvfs {
namespace {

using bench::Fail;
using bench::Median;
using bench::Machine;

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr size_t kSmallBytes = 1024;
constexpr size_t kLargeBytes = size_t{1} << 20;
constexpr int kSmallFiles = 64;
// The SDK's LineReader reads 256 KiB at a time; the reference does too.
constexpr size_t kReadSize = 256 * 1024;

constexpr double kSmallTarget = 0.5;  // (b) / (a, 1 KiB), issue 3
constexpr double kLargeTarget = 0.4;  // (c) / (a, 1 MiB), issue 3

struct Options {
  int rounds = 5;
  uint64_t small_iterations = 20000;
  uint64_t large_iterations = 400;
  bool run_small = true;
  bool run_large = true;
  bool run_reference = true;  // (a) and (s)
  std::vector<std::string> placements = {"same", "split"};
  std::string tool = PROTOCOL_TOOL;
  // (m): server-filesystem's entry script, run with node; empty: no (m).
  std::string mcp_server;
};

Options ParseOptions(int argc, char** argv) {
  Options options;
  CLI::App app("fs.read through the vfs runtime against a bare pipe ping-pong", "protocol_bench");
  bool quick = false;
  std::string only_case;
  bool subject_only = false;
  app.add_flag("--quick", quick, "3 rounds of 2000 small and 40 large reads (default 5 x 20000 / 400)");
  app.add_option("--rounds", options.rounds, "Alternating rounds; the medians are reported")
      ->check(CLI::Range(1, 1000000));
  app.add_option("--case", only_case, "Only the 1 KiB (small) or the 1 MiB (large) measurement")
      ->check(CLI::IsMember({"small", "large"}));
  app.add_flag("--subject-only", subject_only, "Only the tool through toolvfs, no references: for profiling");
  app.add_option("--placement", options.placements,
                 "Where the two sides run: same (one CPU), split (two CPUs), kernel (not pinned); default same,split")
      ->delimiter(',')
      ->check(CLI::IsMember({"same", "split", "kernel"}));
  app.add_option("--tool", options.tool, "The protocol_tool binary (default: the one built with this program)");
  std::string mcp_server;
  bool no_mcp = false;
  app.add_option("--mcp-server", mcp_server,
                 "server-filesystem's dist/index.js for (m) (default: where scripts/install-mcp-servers.sh puts it)");
  app.add_flag("--no-mcp", no_mcp, "Leave out (m), the MCP filesystem server");
  bench::ParseCommandLine(app, argc, argv);
  if (quick) {
    if (app.count("--rounds") == 0) options.rounds = 3;
    options.small_iterations = 2000;
    options.large_iterations = 40;
  }
  if (!only_case.empty()) {
    options.run_small = only_case == "small";
    options.run_large = only_case == "large";
  }
  options.run_reference = !subject_only;
  if (options.run_reference && !no_mcp) {
    if (!mcp_server.empty()) {
      if (access(mcp_server.c_str(), R_OK) != 0) Fail("--mcp-server " + mcp_server + ": " + std::strerror(errno));
      options.mcp_server = mcp_server;
    } else if (std::string installed = McpServerScript("server-filesystem"); access(installed.c_str(), R_OK) == 0) {
      options.mcp_server = installed;
    } else {
      std::printf("(m) skipped: no MCP filesystem server at %s (run scripts/install-mcp-servers.sh)\n",
                  installed.c_str());
    }
  }
  if (options.tool.empty() || access(options.tool.c_str(), X_OK) != 0) {
    Fail("the tool '" + options.tool + "' is not an executable; pass --tool PATH");
  }
  return options;
}

void WriteFile(const fs::path& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary);
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
  if (!out) Fail("cannot write " + path.string());
}

// The request line the SDK sends for tool.read(path), with its '\n'.
std::string ReadRequest(uint64_t id, std::string_view path) {
  return "{\"jsonrpc\":\"2.0\",\"id\":" + std::to_string(id) +
         ",\"method\":\"fs.read\",\"params\":{\"path\":\"" + std::string(path) + "\"}}\n";
}

double CpuMicroseconds(const rusage& usage) {
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1e6 +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
}

// User plus system CPU time of the calling thread so far.
double ThreadCpuMicroseconds() {
  rusage usage{};
  getrusage(RUSAGE_THREAD, &usage);
  return CpuMicroseconds(usage);
}

// --- The bare answering side, shared by (a) and (s)

constexpr size_t kPage = 4096;

// A page-aligned heap buffer. Where a buffer starts within its page
// matters on this machine: the kernel's pipe and file copies (rep movsb)
// run about 3 times slower when the destination sits 1 to 31 bytes past
// the source modulo 4 KiB, and glibc puts large allocations 16 bytes past a
// page. The reference's buffers are placed where the copies run at full
// speed (docs/benchmarks.md, "Protocol round trip").
class AlignedBuffer {
 public:
  explicit AlignedBuffer(size_t size)
      : size_((size + kPage - 1) / kPage * kPage),
        data_(static_cast<char*>(std::aligned_alloc(kPage, size_))) {
    if (data_ == nullptr) Fail("out of memory");
  }
  AlignedBuffer(AlignedBuffer&& other) noexcept
      : size_(std::exchange(other.size_, 0)), data_(std::exchange(other.data_, nullptr)) {}
  AlignedBuffer& operator=(AlignedBuffer&& other) noexcept {
    std::swap(size_, other.size_);
    std::swap(data_, other.data_);
    return *this;
  }
  ~AlignedBuffer() { std::free(data_); }
  char* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  size_t size_;
  char* data_;
};

// The host's answer to fs.read of one path, laid out like the host's
// WireMessage: one contiguous line, written with one write(). The request's
// id is put in place for each answer.
class CannedAnswer {
 public:
  CannedAnswer(std::string before_id, std::string_view after_id)
      : before_id_(std::move(before_id)), after_size_(after_id.size()), buffer_(kIdEnd + after_id.size()) {
    std::memcpy(buffer_.data() + kIdEnd, after_id.data(), after_id.size());
  }
  // The whole line, '\n' included, for the request id `id` (its JSON text).
  std::string_view WithId(std::string_view id) {
    if (id.size() > kIdEnd - before_id_.size()) Fail("request id too long: " + std::string(id));
    char* start = buffer_.data() + kIdEnd - id.size() - before_id_.size();
    std::memcpy(start, before_id_.data(), before_id_.size());
    std::memcpy(start + before_id_.size(), id.data(), id.size());
    return {start, before_id_.size() + id.size() + after_size_};
  }
  size_t size_with_id(size_t id_digits) const { return before_id_.size() + id_digits + after_size_; }

 private:
  // The page offset where the text after the id starts: the line then
  // starts 22 to 41 bytes into a page, close to where the host's starts.
  static constexpr size_t kIdEnd = 64;
  std::string before_id_;  // {"jsonrpc":"2.0","id":
  size_t after_size_;      // ,"result":{...}}\n
  AlignedBuffer buffer_;
};

// The canned answers by path.
using CannedAnswers = std::unordered_map<std::string, CannedAnswer>;

CannedAnswer HostAnswer(ProjectFiles& project, const std::string& path) {
  std::string request = ReadRequest(1, path);
  request.pop_back();
  MessageParser parser;
  ParsedLine parsed = parser.Parse(request);
  if (!parsed.is_message()) Fail("the reference request does not parse: " + request);
  const MethodSpec* method = FindMethod("fs.read");
  if (method == nullptr) Fail("the host has no fs.read");
  ToolConfig tool;
  ToolPolicy policy = ToolPolicy::ForTool(tool, std::nullopt);
  std::unique_ptr<Inquirer> inquirer = NewDenyingInquirer();
  AccessGate gate(policy, *inquirer);
  RequestScope scope(parsed.message().id(), method->name, true);
  std::string bytes = method->handler(parsed.message(), MethodContext{project, gate}, scope).ToString();
  constexpr std::string_view kPrefix = "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":";
  if (bytes.rfind(kPrefix, 0) != 0) Fail("fs.read of " + path + " failed: " + bytes.substr(0, 200));
  const size_t id_at = kPrefix.find(":1,") + 1;
  return CannedAnswer(bytes.substr(0, id_at), std::string_view(bytes).substr(id_at + 1));
}

// Reads NDJSON lines as the SDK's LineReader does: reads of up to 256 KiB
// into a buffer that grows as needed, memchr over the bytes that arrived.
// The buffer is page-aligned (see AlignedBuffer).
class PipeLineReader {
 public:
  explicit PipeLineReader(int fd, size_t capacity = 0) : fd_(fd), buffer_(capacity + kReadSize) {}

  // The next line without its '\n'; nullopt at end of input.
  std::optional<std::string_view> Next() {
    if (consumed_ > 0) {  // drop the previous line
      std::memmove(buffer_.data(), buffer_.data() + consumed_, filled_ - consumed_);
      filled_ -= consumed_;
      scanned_ = 0;
      consumed_ = 0;
    }
    while (true) {
      if (const void* newline = std::memchr(buffer_.data() + scanned_, '\n', filled_ - scanned_)) {
        size_t length = static_cast<size_t>(static_cast<const char*>(newline) - buffer_.data());
        consumed_ = length + 1;
        return std::string_view(buffer_.data(), length);
      }
      scanned_ = filled_;
      if (buffer_.size() - filled_ < kReadSize) {
        AlignedBuffer larger(2 * buffer_.size());
        std::memcpy(larger.data(), buffer_.data(), filled_);
        buffer_ = std::move(larger);
      }
      ssize_t got = read(fd_, buffer_.data() + filled_, std::min(kReadSize, buffer_.size() - filled_));
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) return std::nullopt;
      filled_ += static_cast<size_t>(got);
    }
  }

 private:
  int fd_;
  AlignedBuffer buffer_;
  size_t filled_ = 0;
  size_t scanned_ = 0;
  size_t consumed_ = 0;
};

bool WriteAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t written = write(fd, bytes.data(), bytes.size());
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(written));
  }
  return true;
}

// The text after `quoted_key` up to the first byte of `stop`.
std::string_view Field(std::string_view line, std::string_view quoted_key, std::string_view stop) {
  size_t at = line.find(quoted_key);
  if (at == std::string_view::npos) return {};
  line.remove_prefix(at + quoted_key.size());
  return line.substr(0, line.find_first_of(stop));
}

// Answers one fs.read request line with its canned answer. False if the
// line is not such a request.
bool AnswerRead(int fd, std::string_view request, CannedAnswers& answers) {
  std::string_view id = Field(request, "\"id\":", ",}");
  std::string_view path = Field(request, "\"path\":\"", "\"");
  // A short path's std::string does not allocate (SSO).
  auto found = answers.find(std::string(path));
  if (found == answers.end() || id.empty()) return false;
  return WriteAll(fd, found->second.WithId(id));
}

// Where the answering and the asking side run: a CPU each, or -1 for
// wherever the kernel puts them (the CPUs this program may use).
struct Placement {
  std::string description;
  int answerer_cpu = -1;
  int asker_cpu = -1;
};

cpu_set_t AllowedCpus() {
  static const cpu_set_t allowed = [] {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0) Fail("sched_getaffinity failed");
    return set;
  }();
  return allowed;
}

// The placements named on the command line, on the first two CPUs this
// program may use; "split" is left out (with a note) on one CPU.
std::vector<Placement> MakePlacements(const std::vector<std::string>& names) {
  cpu_set_t allowed = AllowedCpus();
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE && cpus.size() < 2; ++cpu) {
    if (CPU_ISSET(cpu, &allowed)) cpus.push_back(cpu);
  }
  std::vector<Placement> placements;
  for (const std::string& name : names) {
    if (name == "same") {
      placements.push_back({"host and tool on one CPU (" + std::to_string(cpus[0]) + ")", cpus[0], cpus[0]});
    } else if (name == "split" && cpus.size() < 2) {
      std::printf("placement split skipped: this program may use only CPU %d\n", cpus[0]);
    } else if (name == "split") {
      placements.push_back({"host on CPU " + std::to_string(cpus[0]) + ", tool on CPU " + std::to_string(cpus[1]),
                            cpus[0], cpus[1]});
    } else {
      placements.push_back({"placed by the kernel (not pinned)", -1, -1});
    }
  }
  return placements;
}

// Moves the calling thread (and what it forks or spawns from now on) to
// `cpu`, or back to every allowed CPU for -1.
void RunOn(int cpu) {
  cpu_set_t set = AllowedCpus();
  if (cpu >= 0) {
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
  }
  if (sched_setaffinity(0, sizeof set, &set) != 0) Fail("cannot move to CPU " + std::to_string(cpu));
}

// CPU time and rate of one measured loop.
struct Figures {
  double round_trips_per_second = 0;
  // CPU µs per round trip of the side that asks (the tool's place) and of
  // the side that answers (the host's place).
  double requester_cpu_us = 0;
  double answerer_cpu_us = 0;
  double median_call_us = 0;  // the tool's median read() call (tool runs only)
  double parse_us = 0;        // the SDK's Json::parse of one answer (tool runs only)
  double tool_page_faults = 0;  // per read (tool runs only)
};

struct Workload {
  std::vector<std::string> paths;  // read in turn
  uint64_t iterations = 0;
  uint64_t warmup = 0;
};

// (a): `iterations` exchanges after `warmup` ones between this process and
// a forked child, both bare loops. The child answers, like the host.
Figures PipeReference(const Workload& work, CannedAnswers& answers, const Placement& placement) {
  int to_child[2];
  int to_parent[2];
  if (pipe2(to_child, O_CLOEXEC) != 0 || pipe2(to_parent, O_CLOEXEC) != 0) Fail("pipe2 failed");
  size_t largest = 0;
  for (const auto& [path, answer] : answers) largest = std::max(largest, answer.size_with_id(20));
  // Everything the child touches is allocated before fork.
  PipeLineReader child_reader(to_child[0], 4096);
  PipeLineReader parent_reader(to_parent[0], largest);
  std::vector<std::string> requests;
  for (uint64_t i = 0; i < work.warmup + work.iterations; ++i) {
    requests.push_back(ReadRequest(i + 1, work.paths[i % work.paths.size()]));
  }
  std::fflush(stdout);
  RunOn(placement.answerer_cpu);  // the child's CPU
  pid_t pid = fork();
  if (pid < 0) Fail("fork failed");
  if (pid == 0) {
    close(to_child[1]);
    close(to_parent[0]);
    while (std::optional<std::string_view> line = child_reader.Next()) {
      if (!AnswerRead(to_parent[1], *line, answers)) _exit(1);
    }
    _exit(0);
  }
  close(to_child[0]);
  close(to_parent[1]);
  RunOn(placement.asker_cpu);
  const double cpu_start = ThreadCpuMicroseconds();
  Clock::time_point start = Clock::now();
  for (uint64_t i = 0; i < work.warmup + work.iterations; ++i) {
    if (i == work.warmup) start = Clock::now();
    if (!WriteAll(to_child[1], requests[i]) || !parent_reader.Next()) {
      Fail("the reference child stopped answering");
    }
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  const double requester_cpu_us = ThreadCpuMicroseconds() - cpu_start;
  RunOn(placement.answerer_cpu);
  close(to_child[1]);
  close(to_parent[0]);
  int status = 0;
  rusage child_usage{};
  wait4(pid, &status, 0, &child_usage);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) Fail("the reference child failed");
  const double exchanges = static_cast<double>(work.warmup + work.iterations);
  return {static_cast<double>(work.iterations) / seconds, requester_cpu_us / exchanges,
          CpuMicroseconds(child_usage) / exchanges};
}

// The tool's arguments; "cpu" puts it on the asking side's CPU.
std::string ArgumentsJson(const Workload& work, const Placement& placement) {
  std::string json = "{\"paths\":[";
  for (size_t i = 0; i < work.paths.size(); ++i) json += (i ? ",\"" : "\"") + work.paths[i] + "\"";
  return json + "],\"iterations\":" + std::to_string(work.iterations) +
         ",\"warmup\":" + std::to_string(work.warmup) + ",\"cpu\":" + std::to_string(placement.asker_cpu) + "}";
}

double NumberAfter(const std::string& text, std::string_view key) {
  std::string quoted(1, '"');
  quoted.append(key).append("\":");
  size_t at = text.find(quoted);
  if (at == std::string::npos) Fail("the tool's result has no '" + std::string(key) + "': " + text);
  return std::strtod(text.c_str() + at + quoted.size(), nullptr);
}

// Fills the tool's side of `figures` from its result text.
void TakeToolReport(const std::string& text, const Workload& work, double answerer_cpu_us, Figures& figures) {
  figures.round_trips_per_second = NumberAfter(text, "reads") / NumberAfter(text, "seconds");
  figures.requester_cpu_us = NumberAfter(text, "cpu_us");
  figures.median_call_us = NumberAfter(text, "median_us");
  figures.parse_us = NumberAfter(text, "parse_us");
  figures.tool_page_faults = NumberAfter(text, "page_faults");
  figures.answerer_cpu_us = answerer_cpu_us / static_cast<double>(work.iterations + work.warmup);
}

// (b), (c): the tool through the whole vfs runtime. The answering side's
// CPU time is the thread running the session loop, tool start and session
// set-up included (spread over the reads).
Figures ToolThroughToolvfs(VfsRuntime& runtime, const ToolConfig& tool, const Workload& work,
                           const Placement& placement) {
  RunOn(placement.answerer_cpu);
  ToolCall call;
  call.name = tool.name;
  call.arguments_json = ArgumentsJson(work, placement);
  CancelToken cancel;
  const double cpu_start = ThreadCpuMicroseconds();
  Result<Outcome> outcome = runtime.Execute(call, tool, cancel);
  const double host_cpu_us = ThreadCpuMicroseconds() - cpu_start;
  if (!outcome.ok()) Fail("cannot run the tool: " + outcome.status().message());
  if (outcome->is_error || outcome->content.empty()) {
    Fail("the tool failed: " + (outcome->error ? outcome->error->message : std::string("no content")) +
         "\n" + outcome->stderr_tail);
  }
  Figures figures;
  TakeToolReport(outcome->content.front().text, work, host_cpu_us, figures);
  return figures;
}

// Starts `spec` (Fail naming `what` if it cannot) with its stdin and stdout
// blocking on this side, like the reference's pipes.
ChildProcess LaunchWithBlockingPipes(const LaunchSpec& spec, const std::string& what) {
  Result<ChildProcess> launched = Launch(spec);
  if (!launched.ok()) Fail(what + launched.status().message());
  ChildProcess child = std::move(launched).value();
  for (int fd : {child.stdin_fd().get(), child.stdout_fd().get()}) {
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  }
  return child;
}

// (s): the same tool against the bare answering loop: init, then each
// fs.read answered with its canned answer, until the tool's result.
Figures ToolOnBareHost(const Options& options, const fs::path& root, const Workload& work,
                       CannedAnswers& answers, const Placement& placement) {
  RunOn(placement.answerer_cpu);
  LaunchSpec spec;
  spec.program = options.tool;
  spec.environment = {"PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8"};
  spec.working_directory = root.string();
  spec.stdin_pipe_bytes = kToolStdinPipeBytes;  // the transport VfsRuntime gives the tool
  ChildProcess child = LaunchWithBlockingPipes(spec, "cannot start the tool: ");
  InitInfo init;
  init.tool_name = "protocol_tool";
  init.arguments_json = ArgumentsJson(work, placement);
  init.root = root.string();
  const double cpu_start = ThreadCpuMicroseconds();
  if (!WriteAll(child.stdin_fd().get(), BuildInitNotification(init).bytes())) Fail("cannot send init");
  PipeLineReader reader(child.stdout_fd().get(), 4096);
  std::optional<std::string> result_line;
  while (std::optional<std::string_view> line = reader.Next()) {
    if (line->find("\"method\":\"result\"") != std::string_view::npos) {
      result_line = std::string(*line);
      break;
    }
    if (!AnswerRead(child.stdin_fd().get(), *line, answers)) {
      Fail("unexpected line from the tool: " + std::string(line->substr(0, 200)));
    }
  }
  const double answerer_cpu_us = ThreadCpuMicroseconds() - cpu_start;
  if (!result_line) Fail("the tool ended without a result");
  MessageParser parser;
  ParsedLine parsed = parser.Parse(*result_line);
  if (!parsed.is_message()) Fail("the tool's result does not parse: " + *result_line);
  Result<std::string_view> text = parsed.message().params().String("content");
  if (!text.ok()) Fail("the tool's result has no text content: " + *result_line);
  child.stdin_fd().reset();
  static_cast<void>(child.Wait());
  Figures figures;
  TakeToolReport(std::string(text.value()), work, answerer_cpu_us, figures);
  return figures;
}

// --- (m): the official MCP filesystem server, for scale

// The CPU time of process `pid` so far, all its threads (node's main
// thread and its libuv workers, which do the file reads), exited ones too.
double ProcessCpuMicroseconds(pid_t pid) {
  clockid_t clock;
  timespec now{};
  if (clock_getcpuclockid(pid, &clock) != 0 || clock_gettime(clock, &now) != 0) {
    Fail("cannot read the CPU time of process " + std::to_string(pid));
  }
  return static_cast<double>(now.tv_sec) * 1e6 + static_cast<double>(now.tv_nsec) / 1e3;
}

// The tools/call request for read_text_file of `path`, with its '\n'.
std::string McpReadRequest(uint64_t id, const std::string& path) {
  return "{\"jsonrpc\":\"2.0\",\"id\":" + std::to_string(id) +
         ",\"method\":\"tools/call\",\"params\":{\"name\":\"read_text_file\",\"arguments\":{\"path\":\"" + path +
         "\"}}}\n";
}

// Fewer round trips than the others, as the server is far slower: a tenth,
// and at least 50 (1 KiB) or 2 (1 MiB) to warm up node's compiler.
Workload McpWorkload(const Workload& work) {
  Workload fewer = work;
  fewer.iterations = std::max<uint64_t>(1, work.iterations / 10);
  fewer.warmup = std::max<uint64_t>(work.paths.size() > 1 ? 50 : 2, fewer.iterations / 10);
  return fewer;
}

// Fails with `what` and what the MCP server wrote to stderr (otherwise a
// start-up line: far from filling its pipe, so it is only read here).
[[noreturn]] void FailQuotingStderr(ChildProcess& server, const std::string& what) {
  char text[4096];
  ssize_t got = read(server.stderr_fd().get(), text, sizeof text);
  Fail(what + (got > 0 ? "; its stderr: " + std::string(text, static_cast<size_t>(got)) : std::string()));
}

// (m): server-filesystem on the answering side's CPU, serving `root`; this
// thread asks, on the asking side's CPU, one read_text_file call at a time,
// reading each answer line as the reference's parent does.
Figures McpServerReference(const Options& options, const fs::path& root, const Workload& work,
                           const Placement& placement) {
  RunOn(placement.answerer_cpu);
  LaunchSpec spec;
  spec.program = "node";
  spec.args = {options.mcp_server, root.string()};
  spec.environment = {"PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8"};
  ChildProcess server = LaunchWithBlockingPipes(spec, "(m), the MCP filesystem server (--no-mcp leaves it out): ");
  RunOn(placement.asker_cpu);
  PipeLineReader reader(server.stdout_fd().get(), 4096);
  // The answer to the request with id `id` (the server writes the id last,
  // as '"id":7}'); server notifications between are skipped.
  auto answer = [&](uint64_t id) -> std::string_view {
    const std::string id_field = "\"id\":" + std::to_string(id);
    while (std::optional<std::string_view> line = reader.Next()) {
      size_t at = line->find(id_field);
      if (at == std::string_view::npos) continue;
      size_t after = at + id_field.size();
      if (after == line->size() || (*line)[after] == '}' || (*line)[after] == ',') return *line;
    }
    FailQuotingStderr(server, "the MCP filesystem server stopped answering");
  };
  const std::string initialize =
      "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\","
      "\"capabilities\":{},\"clientInfo\":{\"name\":\"protocol_bench\",\"version\":\"1\"}}}\n"
      "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n";
  constexpr std::string_view kCannotWrite = "cannot write to the MCP filesystem server";
  if (!WriteAll(server.stdin_fd().get(), initialize)) FailQuotingStderr(server, std::string(kCannotWrite));
  if (answer(0).find("\"result\"") == std::string_view::npos) {
    FailQuotingStderr(server, "the MCP filesystem server refused initialize");
  }
  std::vector<std::string> requests;
  for (uint64_t i = 0; i < work.warmup + work.iterations; ++i) {
    requests.push_back(McpReadRequest(i + 1, (root / work.paths[i % work.paths.size()]).string()));
  }
  double server_cpu_start = 0;
  double cpu_start = 0;
  Clock::time_point start;
  for (uint64_t i = 0; i < work.warmup + work.iterations; ++i) {
    if (i == work.warmup) {
      server_cpu_start = ProcessCpuMicroseconds(server.pid());
      cpu_start = ThreadCpuMicroseconds();
      start = Clock::now();
    }
    if (!WriteAll(server.stdin_fd().get(), requests[i])) FailQuotingStderr(server, std::string(kCannotWrite));
    std::string_view line = answer(i + 1);
    if (line.find("\"result\"") == std::string_view::npos || line.find("\"isError\":true") != std::string_view::npos) {
      FailQuotingStderr(server, "the MCP filesystem server failed: " + std::string(line.substr(0, 300)));
    }
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  const double asker_cpu_us = ThreadCpuMicroseconds() - cpu_start;
  const double server_cpu_us = ProcessCpuMicroseconds(server.pid()) - server_cpu_start;
  const double calls = static_cast<double>(work.iterations);
  return {calls / seconds, asker_cpu_us / calls, server_cpu_us / calls};
}  // ~ChildProcess ends the server

// --- Reporting

// The rounds of one measurement.
struct Series {
  std::vector<Figures> rounds;

  double MedianOf(double Figures::*field) const {
    std::vector<double> values;
    for (const Figures& figures : rounds) values.push_back(figures.*field);
    return Median(values);
  }
};

struct Case {
  std::string label;
  double content_bytes;
  double target;
  bool throughput;  // report MB/s rather than round trips/s
  // Issue 3's targets are judged with the two sides on two CPUs, where the
  // issue's own figure of scale holds (docs/benchmarks.md); elsewhere the
  // ratio is printed beside the target, not judged.
  bool judged;
  Series reference, bare_host, toolvfs, mcp_server;
};

void Report(const Case& c) {
  auto rate = [&](const Series& series) -> std::string {
    if (series.rounds.empty()) return "-";
    const double round_trips = series.MedianOf(&Figures::round_trips_per_second);
    char text[64];
    if (c.throughput) {
      std::snprintf(text, sizeof text, "%.0f MB/s", round_trips * c.content_bytes / 1e6);
    } else {
      std::snprintf(text, sizeof text, "%.0f /s", round_trips);
    }
    return text;
  };
  auto latency = [&](const Series& series) -> std::string {
    if (series.rounds.empty()) return "-";
    char text[64];
    std::snprintf(text, sizeof text, "%.1f", 1e6 / series.MedianOf(&Figures::round_trips_per_second));
    return text;
  };
  auto cpu = [&](const Series& series) -> std::string {
    if (series.rounds.empty()) return "-";
    char text[64];
    std::snprintf(text, sizeof text, "%.1f + %.1f", series.MedianOf(&Figures::requester_cpu_us),
                  series.MedianOf(&Figures::answerer_cpu_us));
    return text;
  };
  auto ratio = [&](const Series& series) -> std::string {
    if (series.rounds.empty() || c.reference.rounds.empty()) return "-";
    char text[64];
    std::snprintf(text, sizeof text, "%.2f", series.MedianOf(&Figures::round_trips_per_second) /
                                                 c.reference.MedianOf(&Figures::round_trips_per_second));
    return text;
  };
  std::printf("%s\n", c.label.c_str());
  auto row = [&](const char* what, auto&& cell, const std::string& reference_cell) {
    std::printf("  %-34s %18s %18s %18s %18s\n", what, reference_cell.c_str(), cell(c.bare_host).c_str(),
                cell(c.toolvfs).c_str(), cell(c.mcp_server).c_str());
  };
  std::printf("  %-34s %18s %18s %18s %18s\n", "", "(a) pipe reference", "(s) SDK, bare host", "toolvfs",
              "(m) MCP fs server");
  row(c.throughput ? "throughput" : "round trips", rate, rate(c.reference));
  row("µs per round trip", latency, latency(c.reference));
  row("CPU µs per round trip: asker + answerer", cpu, cpu(c.reference));
  row("ratio to (a)", ratio, c.reference.rounds.empty() ? "-" : "1");
  if (!c.toolvfs.rounds.empty()) {
    std::printf("  tool: median read() call %.1f µs; SDK parse of one answer %.1f µs; %.1f page faults per read\n",
                c.toolvfs.MedianOf(&Figures::median_call_us), c.toolvfs.MedianOf(&Figures::parse_us),
                c.toolvfs.MedianOf(&Figures::tool_page_faults));
  }
  if (!c.reference.rounds.empty() && !c.toolvfs.rounds.empty()) {
    std::vector<double> per_round;
    for (size_t i = 0; i < c.toolvfs.rounds.size(); ++i) {
      per_round.push_back(c.toolvfs.rounds[i].round_trips_per_second / c.reference.rounds[i].round_trips_per_second);
    }
    const double value = c.toolvfs.MedianOf(&Figures::round_trips_per_second) /
                         c.reference.MedianOf(&Figures::round_trips_per_second);
    auto [low, high] = std::minmax_element(per_round.begin(), per_round.end());
    const char* verdict = !c.judged ? "judged on two CPUs, not here" : value >= c.target ? "met" : "MISSED";
    std::printf("  => toolvfs / reference = %.2f (rounds %.2f-%.2f), target >= %.1f: %s\n", value, *low, *high,
                c.target, verdict);
  }
  if (!c.reference.rounds.empty() && !c.mcp_server.rounds.empty()) {
    std::printf("  => MCP filesystem server / reference = %.3f (issue 3: \"about 0.15\")\n",
                c.mcp_server.MedianOf(&Figures::round_trips_per_second) /
                    c.reference.MedianOf(&Figures::round_trips_per_second));
  }
  std::printf("\n");
}

}  // namespace
}  // namespace toolvfs

int main(int argc, char** argv) {
  using namespace toolvfs;  // NOLINT: a benchmark's main
  Options options = ParseOptions(argc, argv);

  char pattern[] = "/tmp/protocol_bench-XXXXXX";
  if (mkdtemp(pattern) == nullptr) Fail("mkdtemp failed");
  const fs::path root = pattern;
  struct Cleanup {
    fs::path path;
    ~Cleanup() {
      std::error_code ignored;
      fs::remove_all(path, ignored);
    }
  } cleanup{root};

  Workload small{.iterations = options.small_iterations, .warmup = options.small_iterations / 10};
  fs::create_directories(root / "small");
  for (int i = 0; i < kSmallFiles; ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "small/f%02d.txt", i);
    small.paths.push_back(name);
    WriteFile(root / name, bench::MakeSourceText(kSmallBytes, bench::kTypicalSourceLines, static_cast<uint32_t>(i)));
  }
  Workload large{.paths = {"large.txt"},
                 .iterations = options.large_iterations,
                 .warmup = std::max<uint64_t>(2, options.large_iterations / 10)};
  WriteFile(root / "large.txt", bench::MakeSourceText(kLargeBytes, bench::kTypicalSourceLines, 99));

  Result<std::unique_ptr<ProjectFiles>> project = OpenProject(root.string());
  if (!project.ok()) Fail("cannot open the project: " + project.status().message());
  VfsRuntime runtime(*project.value(), VfsRuntimeOptions{.working_directory = root.string()});
  ToolConfig tool;
  tool.name = "protocol_tool";
  tool.command = CommandSpec{.program = options.tool};

  CannedAnswers small_answers, large_answers;
  for (const std::string& path : small.paths) small_answers.emplace(path, HostAnswer(*project.value(), path));
  large_answers.emplace(large.paths[0], HostAnswer(*project.value(), large.paths[0]));
  const CannedAnswer& small_answer = small_answers.at(small.paths[0]);
  const CannedAnswer& large_answer = large_answers.at(large.paths[0]);

  std::printf("protocol_bench: fs.read through the vfs runtime against a bare pipe ping-pong\n");
  std::printf("machine: %s\n", Machine().c_str());
  std::printf("%d alternating rounds, medians; per round %llu x 1 KiB and %llu x 1 MiB round trips\n",
              options.rounds, static_cast<unsigned long long>(small.iterations),
              static_cast<unsigned long long>(large.iterations));
  std::printf("answer lines: %zu bytes (a 1 KiB file), %zu bytes (the 1 MiB file); requests %zu bytes\n\n",
              small_answer.size_with_id(2), large_answer.size_with_id(2),
              ReadRequest(10, small.paths[0]).size());

  std::vector<Placement> placements = MakePlacements(options.placements);
  std::vector<Case> cases;  // per placement: small, large
  for (const Placement& placement : placements) {
    const bool two_cpus = placement.answerer_cpu >= 0 && placement.asker_cpu != placement.answerer_cpu;
    cases.push_back({"(b) fs.read of 1 KiB files (64 files in turn); " + placement.description, kSmallBytes,
                     kSmallTarget, false, two_cpus, {}, {}, {}, {}});
    cases.push_back({"(c) fs.read of a 1 MiB text file; " + placement.description, kLargeBytes, kLargeTarget,
                     true, two_cpus, {}, {}, {}, {}});
  }
  // Rounds alternate over placements and cases, so that a change in the
  // machine's state mid-run shows in every column alike.
  for (int round = 0; round < options.rounds; ++round) {
    for (size_t index = 0; index < placements.size(); ++index) {
      const Placement& placement = placements[index];
      for (auto [run, work, answers, c] :
           {std::tuple{options.run_small, &small, &small_answers, &cases[2 * index]},
            std::tuple{options.run_large, &large, &large_answers, &cases[2 * index + 1]}}) {
        if (!run) continue;
        if (options.run_reference) {
          c->reference.rounds.push_back(PipeReference(*work, *answers, placement));
          c->bare_host.rounds.push_back(ToolOnBareHost(options, root, *work, *answers, placement));
          if (!options.mcp_server.empty()) {
            c->mcp_server.rounds.push_back(McpServerReference(options, root, McpWorkload(*work), placement));
          }
        }
        c->toolvfs.rounds.push_back(ToolThroughToolvfs(runtime, tool, *work, placement));
      }
    }
  }
  RunOn(-1);
  for (size_t index = 0; index < cases.size(); ++index) {
    if (index % 2 == 0 ? options.run_small : options.run_large) Report(cases[index]);
  }
  return 0;
}
