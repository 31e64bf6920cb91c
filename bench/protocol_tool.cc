// protocol_tool: the tool side of protocol_bench. A vfs tool built from
// sdk/toolvfs/tool.h alone that reads files with sequential blocking
// fs.read calls and times its own loop, so that process start-up, init and
// the final result are not part of the figure.
//
// Arguments (the `init` message's tool.arguments):
//   paths       array of project paths, read in turn (cycled)
//   iterations  timed reads
//   warmup      untimed reads before them
//   cpu         optional: the CPU to run on (protocol_bench's placements)
// Result: one text block with a JSON object,
//   {"reads":N,"seconds":S,"bytes":B,"median_us":M,"cpu_us":C,"page_faults":F,
//    "parse_us":P}
// where median_us is the median time of one read() call, cpu_us and
// page_faults the tool's CPU time (user + system) and page faults per read
// in the timed loop, and parse_us the
// time the SDK's Json::parse takes on an answer line equivalent to the last
// one received (the same content, re-serialized by the SDK's writer).
#include <sched.h>
#include <sys/resource.h>
#include <toolvfs/tool.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
using toolvfs::Json;
using toolvfs::Tool;

double Microseconds(Clock::duration duration) {
  return std::chrono::duration<double, std::micro>(duration).count();
}

// User plus system CPU time of this process so far, and its page faults.
struct Usage {
  double cpu_us;
  double page_faults;
};
Usage UsageNow() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return {static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1e6 +
              static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec),
          static_cast<double>(usage.ru_minflt + usage.ru_majflt)};
}

// The median time of Json::parse on {"jsonrpc":"2.0","id":N,"result":
// {"content":CONTENT,"size":S}}, the answer the host sends for fs.read.
double ParseMicroseconds(const std::string& content) {
  std::string line = "{\"jsonrpc\":\"2.0\",\"id\":123456,\"result\":";
  toolvfs::JsonWriter writer(line);
  writer.begin_object();
  writer.key("content");
  writer.string(content);
  writer.key("size");
  writer.uinteger(content.size());
  writer.end_object();
  line += "}";
  std::vector<double> times;
  const int runs = content.size() > 65536 ? 21 : 201;
  for (int run = 0; run < runs; ++run) {
    Clock::time_point start = Clock::now();
    toolvfs::Result<Json> parsed = Json::parse(line);
    times.push_back(Microseconds(Clock::now() - start));
    if (!parsed.ok()) throw toolvfs::Exception(parsed.error());
  }
  std::nth_element(times.begin(), times.begin() + runs / 2, times.end());
  return times[static_cast<size_t>(runs / 2)];
}

std::string Run(Tool& tool) {
  std::vector<std::string> paths;
  for (const Json& path : tool.arguments()["paths"].as_array()) paths.push_back(path.as_string());
  if (paths.empty()) throw std::runtime_error("protocol_tool: argument 'paths' is empty");
  const uint64_t iterations = tool.arguments()["iterations"].as_uint(1000);
  const uint64_t warmup = tool.arguments()["warmup"].as_uint(iterations / 10);
  if (const int64_t cpu = tool.arguments()["cpu"].as_int(-1); cpu >= 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(static_cast<int>(cpu), &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0) {
      throw std::runtime_error("protocol_tool: cannot move to CPU " + std::to_string(cpu));
    }
  }

  std::string content;
  for (uint64_t i = 0; i < warmup; ++i) content = tool.read(paths[i % paths.size()]).value();

  std::vector<double> call_us;
  call_us.reserve(iterations);
  uint64_t bytes = 0;
  const Usage usage_start = UsageNow();
  const Clock::time_point start = Clock::now();
  Clock::time_point before = start;
  for (uint64_t i = 0; i < iterations; ++i) {
    content = tool.read(paths[i % paths.size()]).value();
    bytes += content.size();
    const Clock::time_point after = Clock::now();
    call_us.push_back(Microseconds(after - before));
    before = after;
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  const Usage usage_end = UsageNow();
  const double reads = static_cast<double>(std::max<uint64_t>(iterations, 1));

  std::nth_element(call_us.begin(), call_us.begin() + call_us.size() / 2, call_us.end());
  const double median_us = call_us.empty() ? 0 : call_us[call_us.size() / 2];
  char text[256];
  std::snprintf(text, sizeof text,
                "{\"reads\":%llu,\"seconds\":%.6f,\"bytes\":%llu,\"median_us\":%.2f,\"cpu_us\":%.2f,"
                "\"page_faults\":%.2f,\"parse_us\":%.2f}",
                static_cast<unsigned long long>(iterations), seconds,
                static_cast<unsigned long long>(bytes), median_us, (usage_end.cpu_us - usage_start.cpu_us) / reads,
                (usage_end.page_faults - usage_start.page_faults) / reads, ParseMicroseconds(content));
  return text;
}

}  // namespace

int main() { return toolvfs::tool_main(Run); }
