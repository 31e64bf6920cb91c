// What every benchmark program prints the same way: medians of rounds and
// the machine the figures came from (docs/benchmarks.md quotes both).
#pragma once

#include <errno.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

namespace toolvfs::bench {

// The median of `values` (the mean of the middle two for an even count);
// 0 for none.
inline double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  size_t middle = values.size() / 2;
  return values.size() % 2 == 1 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
}

// The first line of the file at `path` that starts with `prefix` (any line
// for an empty prefix), or "unknown".
inline std::string FirstLineOf(const char* path, std::string_view prefix) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (prefix.empty() || line.rfind(prefix, 0) == 0) return line;
  }
  return "unknown";
}

// "2 CPUs (AMD EPYC ...), load average 0.12 0.30 0.25": the figures of a
// loaded machine are not comparable, so each report says what it ran on.
inline std::string Machine() {
  std::string model = FirstLineOf("/proc/cpuinfo", "model name");
  if (size_t colon = model.find(": "); colon != std::string::npos) model = model.substr(colon + 2);
  std::string load = FirstLineOf("/proc/loadavg", "");
  size_t end = 0;
  for (int field = 0; field < 3 && end != std::string::npos; ++field) end = load.find(' ', end + 1);
  return std::to_string(sysconf(_SC_NPROCESSORS_ONLN)) + " CPUs (" + model + "), load average " +
         load.substr(0, end);
}

// "grep_bench: <message>" on stderr and exit status 2: a benchmark that
// cannot measure what it says says why and stops.
[[noreturn]] inline void Fail(const std::string& message) {
  std::fprintf(stderr, "%s: %s\n", program_invocation_short_name, message.c_str());
  std::exit(2);
}

// Parses the command line into the options `app` declares; --help prints
// the usage and exits 0, bad options Fail with CLI11's one-line reason.
inline void ParseCommandLine(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::fputs(app.help().c_str(), stdout);
    std::exit(0);
  } catch (const CLI::ParseError& error) {
    Fail(std::string(error.what()) + " (see --help)");
  }
}

}  // namespace toolvfs::bench
