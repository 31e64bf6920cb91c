// grep_bench: `toolvfs grep` against ripgrep on the same large real tree
// (SPEC.md §11). For each pattern both tools run several times after a
// warm-up; the table shows the median wall times, their ratio toolvfs/rg
// and the number of matching lines each found, which must be equal.
//
//   grep_bench [--toolvfs PATH] [--tree DIR] [--runs N] [--rebuild]
//
// The tree (default /tmp/toolvfs-bench-tree) is built once from
// /usr/include, /usr/share/doc and the Python standard library, then reused.
// Exit status: 0 all counts equal, 1 a count differs, 2 setup error.
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bench_report.h"

extern char** environ;

namespace toolvfs {
namespace {

namespace fs = std::filesystem;
using bench::Fail;

constexpr std::string_view kDefaultTree = "/tmp/toolvfs-bench-tree";
constexpr std::string_view kMarkerName = ".toolvfs-bench-tree";
constexpr size_t kBinaryProbeBytes = 8192;           // toolvfs: NUL in the first 8 KiB = binary
constexpr uintmax_t kMaxTextFileBytes = 10u << 20;   // the stores' default read limit

struct Pattern {
  const char* label;
  const char* regex;
  bool case_insensitive;
};

// A literal with a few hundred matches, a case-insensitive literal and an
// alternation of literals (which engines handle with different
// prefilters), a literal with thousands of matches for output cost, and
// Unicode \s and \w around a literal (toolvfs rewrites them for RE2).
// Match counts on the default tree (Debian 12): 246, 310, 330, ~7000.
constexpr Pattern kPatterns[] = {
    {"literal", "SOCK_STREAM", false},
    {"literal -i", "getaddrinfo", true},
    {"alternation", "ENOENT|EACCES|EPERM", false},
    {"many", "uint32_t", false},
    {"classes", "struct\\s+\\w+_ops", false},
};

struct Run {
  int exit_code = -1;
  double seconds = 0;
  std::string out;
  std::string err;
};

// Runs `argv` in `cwd` with stdout and stderr captured, timing it from
// spawn to exit.
Run RunCaptured(const std::vector<std::string>& argv, const std::string& cwd = "") {
  int out_pipe[2];
  int err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0) {
    Fail(std::string("pipe2: ") + std::strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], STDERR_FILENO);
  if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
  std::vector<std::string> arguments = argv;
  std::vector<char*> pointers;
  for (std::string& argument : arguments) pointers.push_back(argument.data());
  pointers.push_back(nullptr);

  Run run;
  auto start = std::chrono::steady_clock::now();
  pid_t pid;
  int error = posix_spawn(&pid, argv[0].c_str(), &actions, nullptr, pointers.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(out_pipe[1]);
  close(err_pipe[1]);
  if (error != 0) Fail("cannot run " + argv[0] + ": " + std::strerror(error));

  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&run.out, &run.err};
  std::vector<char> buffer(1 << 20);
  for (int open_count = 2; open_count > 0;) {
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      Fail(std::string("poll: ") + std::strerror(errno));
    }
    for (int index = 0; index < 2; ++index) {
      if (fds[index].fd < 0 || fds[index].revents == 0) continue;
      ssize_t length = read(fds[index].fd, buffer.data(), buffer.size());
      if (length < 0 && errno == EINTR) continue;
      if (length <= 0) {
        close(fds[index].fd);
        fds[index].fd = -1;
        --open_count;
        continue;
      }
      sinks[index]->append(buffer.data(), static_cast<size_t>(length));
    }
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) Fail(std::string("waitpid: ") + std::strerror(errno));
  }
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return run;
}

std::optional<std::string> FindInPath(std::string_view name) {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return std::nullopt;
  std::string_view dirs = path;
  while (!dirs.empty()) {
    size_t colon = dirs.find(':');
    std::string dir(dirs.substr(0, colon));
    dirs = colon == std::string_view::npos ? "" : dirs.substr(colon + 1);
    std::string candidate = (dir.empty() ? "." : dir) + "/" + std::string(name);
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return std::nullopt;
}

// toolvfs next to this program: build/bench/grep_bench -> build/toolvfs.
std::optional<std::string> FindToolvfsNextToSelf() {
  std::error_code error;
  fs::path self = fs::read_symlink("/proc/self/exe", error);
  if (error) return std::nullopt;
  for (const fs::path& candidate : {self.parent_path() / "toolvfs", self.parent_path().parent_path() / "toolvfs"}) {
    if (access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  return std::nullopt;
}

std::string PythonStdlib() {
  FILE* pipe = popen("python3 -c 'import sysconfig; print(sysconfig.get_paths()[\"stdlib\"])' 2>/dev/null", "r");
  if (pipe == nullptr) return "";
  char line[4096] = {0};
  std::string path = std::fgets(line, sizeof line, pipe) != nullptr ? line : "";
  pclose(pipe);
  while (!path.empty() && (path.back() == '\n' || path.back() == '\r')) path.pop_back();
  return path;
}

// Replaces `content` with the file at `path`; false if it cannot be read.
bool ReadWholeFile(const fs::path& path, std::string& content) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return false;
  content.clear();
  char buffer[1 << 16];
  ssize_t length;
  while ((length = read(fd, buffer, sizeof buffer)) != 0) {
    if (length < 0) {
      if (errno == EINTR) continue;
      close(fd);
      return false;
    }
    content.append(buffer, static_cast<size_t>(length));
  }
  close(fd);
  return true;
}

struct TreeStats {
  uintmax_t bytes = 0;
  uintmax_t files = 0;
  uintmax_t skipped = 0;
};

// Copies the regular files under `source` to `target` so that toolvfs and
// rg (with --hidden --no-ignore) search exactly the same files: symlinks,
// .git dirs and ignore files are left out, and so are files whose binary
// status the two tools would judge differently (a NUL byte only after the
// first 8 KiB, which rg may see and toolvfs does not) and text files past
// the stores' 10 MiB read limit. Files with a NUL early are kept: both
// skip them, which is part of the work.
void CopyTree(const fs::path& source, const fs::path& target, const std::vector<std::string>& skip_dirs,
              TreeStats& stats) {
  std::error_code error;
  fs::recursive_directory_iterator it(source, fs::directory_options::skip_permission_denied, error);
  if (error) {
    std::fprintf(stderr, "grep_bench: skipping %s: %s\n", source.c_str(), error.message().c_str());
    return;
  }
  std::string content;
  for (; it != fs::recursive_directory_iterator(); it.increment(error)) {
    if (error) break;
    const fs::directory_entry& entry = *it;
    std::string name = entry.path().filename().string();
    fs::file_status status = entry.symlink_status(error);
    if (error) continue;
    if (fs::is_directory(status)) {
      bool skip = name == ".git" ||
                  (it.depth() == 0 && std::find(skip_dirs.begin(), skip_dirs.end(), name) != skip_dirs.end());
      if (skip) it.disable_recursion_pending();
      continue;
    }
    if (!fs::is_regular_file(status)) continue;
    if (name == ".gitignore" || name == ".ignore" || name == ".rgignore") continue;
    if (!ReadWholeFile(entry.path(), content)) continue;
    size_t nul = content.find('\0');
    bool early_nul = nul != std::string::npos && nul < kBinaryProbeBytes;
    if ((nul != std::string::npos && !early_nul) || (!early_nul && content.size() > kMaxTextFileBytes)) {
      ++stats.skipped;
      continue;
    }
    fs::path destination = target / fs::relative(entry.path(), source);
    fs::create_directories(destination.parent_path());
    std::ofstream output(destination, std::ios::binary);
    output.write(content.data(), static_cast<std::streamsize>(content.size()));
    if (!output) Fail("cannot write " + destination.string());
  }
}

void BuildTree(const fs::path& tree) {
  fs::path staging = tree.string() + ".building";
  fs::remove_all(staging);
  fs::create_directories(staging);
  std::string stdlib = PythonStdlib();
  std::fprintf(stderr, "grep_bench: building %s from /usr/include, /usr/share/doc and %s ...\n",
               tree.c_str(), stdlib.empty() ? "(no python3 found)" : stdlib.c_str());
  TreeStats stats;
  CopyTree("/usr/include", staging / "include", {}, stats);
  CopyTree("/usr/share/doc", staging / "doc", {}, stats);
  // The standard library only, not the packages installed into it.
  if (!stdlib.empty()) CopyTree(stdlib, staging / "python", {"site-packages", "dist-packages"}, stats);
  std::ofstream(staging / std::string(kMarkerName))
      << "Benchmark tree of toolvfs bench/grep_bench; safe to delete.\n";
  fs::rename(staging, tree);
  std::fprintf(stderr, "grep_bench: %ju files left out (NUL after 8 KiB, or text over 10 MiB)\n",
               stats.skipped);
}

TreeStats MeasureTree(const fs::path& tree) {
  TreeStats stats;
  for (const fs::directory_entry& entry : fs::recursive_directory_iterator(tree)) {
    if (entry.is_regular_file()) {
      ++stats.files;
      stats.bytes += entry.file_size();
    }
  }
  return stats;
}

// /proc/loadavg's first three fields: a busy machine makes the figures noisy.
std::string LoadAverage() {
  std::string content;
  if (!ReadWholeFile("/proc/loadavg", content)) return "unknown";
  size_t end = 0;
  for (int field = 0; field < 3 && end != std::string::npos; ++field) end = content.find(' ', end + 1);
  return content.substr(0, end) + " (1, 5, 15 min)\n";
}

size_t CountLines(std::string_view text) { return static_cast<size_t>(std::count(text.begin(), text.end(), '\n')); }

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  size_t middle = values.size() / 2;
  return values.size() % 2 == 1 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
}

struct Measurement {
  std::vector<double> seconds;
  size_t matching_lines = 0;
  std::string output;  // of the last run, for a mismatch report
};

struct Tool {
  std::string name;
  std::vector<std::string> argv;
  std::string cwd;
};

// Runs each tool once as a warm-up, then `runs` times, alternating between
// the tools so that background load on the machine hits both alike.
std::vector<Measurement> MeasureInterleaved(const std::vector<Tool>& tools, int runs) {
  std::vector<Measurement> measurements(tools.size());
  for (int round = 0; round <= runs; ++round) {  // round 0 is the warm-up
    for (size_t index = 0; index < tools.size(); ++index) {
      Run run = RunCaptured(tools[index].argv, tools[index].cwd);
      if (run.exit_code != 0 && run.exit_code != 1) {
        Fail(tools[index].name + " exited with " + std::to_string(run.exit_code) + ": " +
             run.err.substr(0, 500));
      }
      Measurement& measurement = measurements[index];
      if (round > 0) measurement.seconds.push_back(run.seconds);
      measurement.matching_lines = CountLines(run.out);
      measurement.output = std::move(run.out);
    }
  }
  return measurements;
}

// Writes `output` sorted (rg prints files in any order) for `diff`.
std::string SaveSorted(const std::string& output, const std::string& path) {
  std::vector<std::string_view> lines;
  for (size_t start = 0; start < output.size();) {
    size_t end = output.find('\n', start);
    if (end == std::string::npos) end = output.size();
    lines.push_back(std::string_view(output).substr(start, end - start));
    start = end + 1;
  }
  std::sort(lines.begin(), lines.end());
  std::ofstream file(path, std::ios::binary);
  for (std::string_view line : lines) file << line << '\n';
  return path;
}

int Main(int argc, char** argv) {
  std::string toolvfs;
  std::string tree(kDefaultTree);
  int runs = 5;
  bool rebuild = false;
  CLI::App app("toolvfs grep against ripgrep on a tree of real text", "grep_bench");
  app.add_option("--toolvfs", toolvfs, "The toolvfs binary (default: next to grep_bench, or its parent dir)");
  app.add_option("--tree", tree, "Benchmark tree, built on first use")->capture_default_str();
  app.add_option("--runs", runs, "Timed runs per tool and pattern, after one warm-up")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  app.add_flag("--rebuild", rebuild, "Delete and rebuild the tree");
  bench::ParseCommandLine(app, argc, argv);

  if (toolvfs.empty()) {
    std::optional<std::string> found = FindToolvfsNextToSelf();
    if (!found) Fail("toolvfs not found next to grep_bench; build it or pass --toolvfs PATH");
    toolvfs = *found;
  } else if (access(toolvfs.c_str(), X_OK) != 0) {
    Fail("--toolvfs " + toolvfs + ": not an executable file");
  }
  std::optional<std::string> rg = FindInPath("rg");
  if (!rg) Fail("ripgrep (rg) is not installed; run scripts/install-deps.sh");

  fs::path tree_path = fs::absolute(tree);
  bool reused = fs::exists(tree_path);
  if (reused && rebuild) {
    if (!fs::exists(tree_path / std::string(kMarkerName))) {
      Fail(tree_path.string() + " is not a benchmark tree (no " + std::string(kMarkerName) + "); not deleting it");
    }
    fs::remove_all(tree_path);
    reused = false;
  }
  if (!reused) BuildTree(tree_path);
  TreeStats stats = MeasureTree(tree_path);
  std::string rg_version = RunCaptured({*rg, "--version"}).out;
  rg_version = rg_version.substr(0, rg_version.find('\n'));

  // Same files for both: hidden files included, no ignore files (the tree
  // has none; --no-ignore also disables global and parent ignores), raw
  // bytes (no BOM transcoding), line numbers as toolvfs prints them.
  std::vector<std::string> rg_base = {*rg,        "--no-config",  "--hidden",    "--no-ignore",
                                      "--encoding", "none",       "--line-number", "--no-heading",
                                      "--color",    "never"};
  std::printf("tree:    %s (%s; %.1f MiB in %ju files)\n", tree_path.c_str(), reused ? "reused" : "built",
              static_cast<double>(stats.bytes) / (1024.0 * 1024.0), stats.files);
  std::printf("toolvfs: %s grep PATTERN --project TREE\n", toolvfs.c_str());
  std::printf("rg:      %s (%s) --no-config --hidden --no-ignore --encoding none --line-number "
              "--no-heading --color never PATTERN, in TREE\n",
              rg->c_str(), rg_version.c_str());
  std::printf("runs:    1 warm-up + %d timed per tool and pattern, the tools alternating; median wall time\n",
              runs);
  std::printf("load:    %s\n", LoadAverage().c_str());
  std::printf("%-12s %-40s %11s %11s %7s  %s\n", "pattern", "", "toolvfs", "rg", "ratio",
              "matching lines (toolvfs / rg)");

  bool all_equal = true;
  int pattern_index = 0;
  for (const Pattern& pattern : kPatterns) {
    std::vector<std::string> toolvfs_argv = {toolvfs, "grep", pattern.regex, "--project", tree_path.string()};
    std::vector<std::string> rg_argv = rg_base;
    if (pattern.case_insensitive) {
      toolvfs_argv.push_back("-i");
      rg_argv.push_back("-i");
    }
    rg_argv.push_back("--");
    rg_argv.push_back(pattern.regex);
    std::vector<Measurement> measured = MeasureInterleaved(
        {{"toolvfs", toolvfs_argv, ""}, {"rg", rg_argv, tree_path.string()}}, runs);
    const Measurement& ours = measured[0];
    const Measurement& theirs = measured[1];
    double ours_median = Median(ours.seconds);
    double theirs_median = Median(theirs.seconds);
    bool equal = ours.matching_lines == theirs.matching_lines;
    all_equal = all_equal && equal;
    std::printf("%-12s %-40s %8.1f ms %8.1f ms %7.2f  %zu / %zu%s\n", pattern.label, pattern.regex,
                ours_median * 1000, theirs_median * 1000, ours_median / theirs_median,
                ours.matching_lines, theirs.matching_lines, equal ? "" : "   <-- MISMATCH");
    if (!equal) {
      std::string prefix = "/tmp/grep_bench-" + std::to_string(pattern_index);
      std::printf("  MISMATCH: compare with: diff %s %s\n",
                  SaveSorted(ours.output, prefix + "-toolvfs.txt").c_str(),
                  SaveSorted(theirs.output, prefix + "-rg.txt").c_str());
    }
    std::fflush(stdout);
    ++pattern_index;
  }
  if (!all_equal) {
    std::printf("\n*** MISMATCH: toolvfs and rg found different numbers of matching lines ***\n");
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace toolvfs

int main(int argc, char** argv) { return toolvfs::Main(argc, argv); }
