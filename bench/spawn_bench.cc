// spawn_bench: what it costs to start a tool process (issue 5, "Benchmark
// (bench/spawn)"). In the same run, in alternating rounds, each variant
// starts bench/exit_at_once (a static program that exits at once) and waits
// for it to end:
//   (a) reference: posix_spawn + waitpid, nothing else;
//   (s) split: toolvfs's Launch() without a sandbox (its pipes, clone, setsid,
//       fd cleanup, signal reset, error pipe), which separates the launcher's
//       own cost from the sandbox's;
//   (b) toolvfs: Launch() with the full sandbox profile of a vfs tool, built
//       as VfsRuntime::LaunchConfined builds it, once before the loop (the
//       runtime's unit is a tool configuration); the one-time build cost is
//       reported on its own;
//   (n) as (b) without namespaces (what they add to a vfs tool's start);
//   (p) Launch() with the profile of a process.run child (namespaces with
//       a PID namespace, its init and supervisor: a fork and a clone more);
//   (c) bwrap --ro-bind / / --unshare-all --die-with-parent TOOL, skipped
//       with the reason when bwrap is missing or cannot create namespaces.
// Prints the median µs per start of each, the CPU time per start, and the
// ratios (b)/(a) (target <= 1.3) and (c)/(b) (target >= 2.5) with "met" or
// "MISSED".
//
//   spawn_bench [--quick] [--rounds N] [--starts N] [--parent-mib N]
//               [--no-bwrap] [--only a|s|n|b|p|c] [--hide landlock,seccomp]
//               [--tool PATH]
//
// Exit status: 0 after measuring (a missed target is printed, not an
// error), 2 on a setup error.
#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <tuple>
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
#include "runtime/confined_launch.h"
#include "config/config.h"
#include "sandbox/launcher.h"
#include "sandbox/private_temp_dir.h"
#include "sandbox/resource_limits.h"
#include "sandbox/sandbox_profile.h"
#include "sandbox/tool_access.h"

#ifndef EXIT_AT_ONCE_TOOL
#define EXIT_AT_ONCE_TOOL ""
#endif
#ifndef TOOLVFS_SDK_DIR
#define TOOLVFS_SDK_DIR ""
#endif

namespace toolvfs {
namespace {

using bench::Fail;
using bench::Median;
using bench::FirstLineOf;
using bench::Machine;

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr double kLauncherTarget = 1.3;  // (b) / (a) at most, issue 5
constexpr double kBwrapTarget = 2.5;     // (c) / (b) at least, issue 5
constexpr int kProfileBuilds = 15;       // builds timed for the one-time cost
constexpr int kWarmupStarts = 20;        // per variant, before the rounds

struct Options {
  int rounds = 9;
  int starts = 300;  // per variant per round
  size_t parent_mib = 0;
  bool bwrap = true;
  int only = -1;  // a Variant: measure only that one (for perf, strace)
  std::vector<std::string> hide;  // mechanisms (n) goes without besides namespaces
  std::string tool = EXIT_AT_ONCE_TOOL;
};

Options ParseOptions(int argc, char** argv) {
  Options options;
  CLI::App app("Starts a tool that exits at once: plain, through the launcher, and under bwrap", "spawn_bench");
  bool quick = false;
  std::string only;
  app.add_flag("--quick", quick, "3 rounds of 100 starts per variant (default 9 x 300)");
  app.add_option("--rounds", options.rounds, "Alternating rounds; the medians are reported")
      ->check(CLI::Range(1, 1000000));
  app.add_option("--starts", options.starts, "Starts of each variant per round")->check(CLI::Range(1, 1000000));
  app.add_option("--parent-mib", options.parent_mib,
                 "Touch N MiB in this process first (fork copies page tables; a host is larger)");
  bool no_bwrap = false;
  app.add_flag("--no-bwrap", no_bwrap, "Leave out the bwrap column");
  app.add_option("--only", only, "Measure only this variant, no ratios (for perf, strace)")
      ->check(CLI::IsMember({"a", "s", "n", "b", "p", "c"}));
  app.add_option("--hide", options.hide,
                 "Leave these out of (n) too, to price each mechanism (best-effort profile)")
      ->delimiter(',')
      ->check(CLI::IsMember({"landlock", "seccomp"}));
  app.add_option("--tool", options.tool, "The program to start (default: bench/exit_at_once)");
  bench::ParseCommandLine(app, argc, argv);
  if (quick) {
    if (app.count("--rounds") == 0) options.rounds = 3;
    if (app.count("--starts") == 0) options.starts = 100;
  }
  options.bwrap = !no_bwrap;
  if (!only.empty()) {
    options.only = static_cast<int>(std::string_view("asnbpc").find(only[0]));  // the order of enum Variant
    options.bwrap = only == "c";
  }
  if (options.tool.empty()) Fail("no tool to start: pass --tool PATH");
  return options;
}

// --- The variants

enum Variant {
  kPosixSpawn,
  kLaunchUnsandboxed,
  kLaunchWithoutNamespaces,
  kLaunchSandboxed,
  kLaunchProcessChild,
  kBwrap,
  kVariantCount
};

constexpr const char* kVariantLabels[kVariantCount] = {
    "(a) posix_spawn",       "(s) Launch, no sandbox", "(n) vfs, no namespaces",
    "(b) Launch, vfs sandbox", "(p) process.run child", "(c) bwrap",
};

// Argument and environment arrays that stay valid for the whole run.
struct Argv {
  std::vector<std::string> strings;
  std::vector<char*> pointers;

  explicit Argv(std::vector<std::string> values) : strings(std::move(values)) {
    for (std::string& value : strings) pointers.push_back(value.data());
    pointers.push_back(nullptr);
  }
  char* const* get() const { return pointers.data(); }
};

struct Subjects {
  std::string tool;
  Argv tool_argv{{}};
  Argv environment{{}};
  LaunchSpec unsandboxed;
  LaunchSpec sandboxed;  // .sandbox points at `profile`
  std::optional<SandboxProfile> profile;
  LaunchSpec without_namespaces;  // .sandbox points at `profile_without_namespaces`
  std::optional<SandboxProfile> profile_without_namespaces;
  LaunchSpec process_child;  // .sandbox points at `process_child_profile`
  std::optional<SandboxProfile> process_child_profile;
  std::string bwrap_path;  // empty: column skipped
  Argv bwrap_argv{{}};
};

// posix_spawn + waitpid; the exit status of the child, or -1.
int SpawnAndWait(const char* path, char* const* argv, char* const* envp,
                 const posix_spawn_file_actions_t* actions = nullptr) {
  pid_t pid;
  if (int error = posix_spawn(&pid, path, actions, nullptr, argv, envp); error != 0) {
    Fail(std::string("posix_spawn of ") + path + " failed: " + std::strerror(error));
  }
  int wait_status = 0;
  while (waitpid(pid, &wait_status, 0) < 0) {
    if (errno != EINTR) Fail(std::string("waitpid failed: ") + std::strerror(errno));
  }
  return WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : -1;
}

void StartOnce(const Subjects& subjects, Variant variant) {
  switch (variant) {
    case kPosixSpawn:
      if (SpawnAndWait(subjects.tool.c_str(), subjects.tool_argv.get(), subjects.environment.get()) != 0) {
        Fail("the tool did not exit with 0 under posix_spawn");
      }
      return;
    case kLaunchUnsandboxed:
    case kLaunchWithoutNamespaces:
    case kLaunchSandboxed:
    case kLaunchProcessChild: {
      const LaunchSpec& spec = variant == kLaunchSandboxed            ? subjects.sandboxed
                               : variant == kLaunchWithoutNamespaces ? subjects.without_namespaces
                               : variant == kLaunchProcessChild      ? subjects.process_child
                                                                     : subjects.unsandboxed;
      Result<ChildProcess> child = Launch(spec);
      if (!child.ok()) Fail("Launch failed: " + child.status().message());
      Result<ExitStatus> status = child->Wait();
      if (!status.ok()) Fail("waiting for the tool failed: " + status.status().message());
      if (!status->success()) Fail("the tool " + status->Describe() + " under Launch");
      return;
    }
    case kBwrap:
      if (SpawnAndWait(subjects.bwrap_path.c_str(), subjects.bwrap_argv.get(), subjects.environment.get()) != 0) {
        Fail("the tool did not exit with 0 under bwrap");
      }
      return;
    case kVariantCount:
      break;
  }
  Fail("unknown variant");
}

// --- Measuring

double CpuMicroseconds(int who) {
  struct rusage usage;
  getrusage(who, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1e6 +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
}

// One round of one variant, per start.
struct Figures {
  double wall_us = 0;
  double parent_cpu_us = 0;  // this process (clone or fork, pipes, wait)
  double child_cpu_us = 0;   // the started processes (bwrap's own children included)
};

Figures TimeStarts(const Subjects& subjects, Variant variant, int starts) {
  const double parent_cpu = CpuMicroseconds(RUSAGE_SELF);
  const double child_cpu = CpuMicroseconds(RUSAGE_CHILDREN);
  const Clock::time_point begin = Clock::now();
  for (int i = 0; i < starts; ++i) StartOnce(subjects, variant);
  const double wall_us = std::chrono::duration<double, std::micro>(Clock::now() - begin).count();
  return Figures{.wall_us = wall_us / starts,
                 .parent_cpu_us = (CpuMicroseconds(RUSAGE_SELF) - parent_cpu) / starts,
                 .child_cpu_us = (CpuMicroseconds(RUSAGE_CHILDREN) - child_cpu) / starts};
}

struct Series {
  std::vector<Figures> rounds;

  double MedianOf(double Figures::*field) const {
    std::vector<double> values;
    for (const Figures& figures : rounds) values.push_back(figures.*field);
    return Median(values);
  }
};

// --- Setup

// The profile LaunchConfined builds for `kind` with the default policy and
// limits, for `spec` (program, environment, working directory).
Result<SandboxProfile> BuildProfile(const LaunchSpec& spec, const std::string& project_directory, ToolKind kind,
                                    SandboxMode mode, std::vector<std::string> hidden = {}) {
  SandboxRequest request = ConfinementRequest(spec, ToolConfig{}, kind, project_directory);
  request.hidden_for_testing = std::move(hidden);
  return SandboxProfile::Build(request, mode);
}

// Runs bwrap once; the reason it cannot be used, or nullopt when it works.
std::optional<std::string> ProbeBwrap(const Subjects& subjects) {
  FILE* errors = std::tmpfile();
  if (errors == nullptr) return "cannot create a temporary file for bwrap's stderr";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fileno(errors), 2);
  const int status = SpawnAndWait(subjects.bwrap_path.c_str(), subjects.bwrap_argv.get(),
                                  subjects.environment.get(), &actions);
  posix_spawn_file_actions_destroy(&actions);
  std::string message;
  std::rewind(errors);
  char buffer[512];
  while (std::fgets(buffer, sizeof buffer, errors) != nullptr) message += buffer;
  std::fclose(errors);
  if (status == 0) return std::nullopt;
  while (!message.empty() && message.back() == '\n') message.pop_back();
  return "bwrap exited with " + std::to_string(status) + (message.empty() ? "" : ": " + message);
}

std::string FindOnPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string search = path != nullptr ? path : "/usr/bin:/bin";
  Result<std::string> found = FindProgramOnPath(name, search);
  return found.ok() ? found.value() : std::string();
}

std::string OwnResidentSize() {
  std::string line = FirstLineOf("/proc/self/status", "VmRSS:");
  size_t start = line.find_first_of("0123456789");
  return start == std::string::npos ? "unknown" : line.substr(start);
}

// --- Reporting

std::string Format(const char* format, double value) {
  char text[64];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

void ReportRatio(const char* name, const Series& numerator, const Series& denominator, double target,
                 bool at_most) {
  std::vector<double> per_round;
  for (size_t i = 0; i < numerator.rounds.size() && i < denominator.rounds.size(); ++i) {
    per_round.push_back(numerator.rounds[i].wall_us / denominator.rounds[i].wall_us);
  }
  const double value = numerator.MedianOf(&Figures::wall_us) / denominator.MedianOf(&Figures::wall_us);
  auto [low, high] = std::minmax_element(per_round.begin(), per_round.end());
  const bool met = at_most ? value <= target : value >= target;
  std::printf("=> %s = %.2f (rounds %.2f-%.2f), target %s %.1f: %s\n", name, value, *low, *high,
              at_most ? "<=" : ">=", target, met ? "met" : "MISSED");
}

}  // namespace
}  // namespace toolvfs

int main(int argc, char** argv) {
  using namespace toolvfs;  // NOLINT: a benchmark's main
  Options options = ParseOptions(argc, argv);
  std::error_code error;
  if (!fs::is_regular_file(options.tool, error)) Fail("no tool at " + options.tool);

  // A larger parent, on request: fork() copies its page tables, posix_spawn
  // and Launch() (clone with CLONE_VM | CLONE_VFORK) do not; Launch() with a
  // PID namespace (p) forks its supervisor.
  std::vector<char> ballast(options.parent_mib << 20);
  for (size_t i = 0; i < ballast.size(); i += 4096) ballast[i] = static_cast<char>(i >> 12);

  Result<PrivateTempDir> private_dir = PrivateTempDir::Create();
  if (!private_dir.ok()) Fail(private_dir.status().message());
  Result<PrivateTempDir> project_dir = PrivateTempDir::Create();  // stands in for the project
  if (!project_dir.ok()) Fail(project_dir.status().message());

  Subjects subjects;
  subjects.tool = fs::absolute(options.tool).string();
  subjects.tool_argv = Argv({subjects.tool});
  // The environment the vfs runtime gives a tool (VfsRuntime::Execute).
  std::vector<std::string> environment = FixedEnvironment(private_dir.value());
  environment.push_back(std::string("PYTHONPATH=") + TOOLVFS_SDK_DIR);
  subjects.environment = Argv(environment);
  subjects.unsandboxed.program = subjects.tool;
  subjects.unsandboxed.environment = environment;
  subjects.unsandboxed.working_directory = project_dir->path();
  subjects.sandboxed = subjects.unsandboxed;

  // The one-time cost: kProfileBuilds builds, the median reported, the last kept.
  std::vector<double> build_us;
  SandboxMode mode = SandboxMode::kRequire;
  std::string best_effort_reason;
  for (int i = 0; i < kProfileBuilds; ++i) {
    const Clock::time_point begin = Clock::now();
    Result<SandboxProfile> profile = BuildProfile(subjects.sandboxed, project_dir->path(), ToolKind::kVfs, mode);
    build_us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - begin).count());
    if (!profile.ok() && mode == SandboxMode::kRequire && IsSandboxUnavailable(profile.status())) {
      best_effort_reason = profile.status().message();
      mode = SandboxMode::kBestEffort;
      build_us.clear();
      --i;
      continue;
    }
    if (!profile.ok()) Fail("cannot build the sandbox profile: " + profile.status().message());
    subjects.profile.emplace(std::move(profile).value());
  }
  subjects.sandboxed.sandbox = &*subjects.profile;
  std::vector<std::string> hidden_in_n = {"namespaces"};
  hidden_in_n.insert(hidden_in_n.end(), options.hide.begin(), options.hide.end());
  for (auto [spec, profile, kind, hidden] :
       {std::tuple{&subjects.without_namespaces, &subjects.profile_without_namespaces, ToolKind::kVfs,
                   hidden_in_n},
        std::tuple{&subjects.process_child, &subjects.process_child_profile, ToolKind::kProcessChild,
                   std::vector<std::string>{}}}) {
    *spec = subjects.unsandboxed;
    // A hidden mechanism is missing as far as kRequire is concerned.
    const SandboxMode hidden_mode = hidden.size() > 1 ? SandboxMode::kBestEffort : mode;
    Result<SandboxProfile> built = BuildProfile(*spec, project_dir->path(), kind, hidden_mode, hidden);
    if (!built.ok()) Fail("cannot build a sandbox profile: " + built.status().message());
    profile->emplace(std::move(built).value());
    spec->sandbox = &**profile;
  }

  std::optional<std::string> bwrap_skipped;
  if (!options.bwrap) {
    bwrap_skipped = "--no-bwrap";
  } else if (subjects.bwrap_path = FindOnPath("bwrap"); subjects.bwrap_path.empty()) {
    bwrap_skipped = "bwrap is not installed (scripts/install-deps.sh --bench installs bubblewrap)";
  } else {
    subjects.bwrap_argv =
        Argv({"bwrap", "--ro-bind", "/", "/", "--unshare-all", "--die-with-parent", subjects.tool});
    bwrap_skipped = ProbeBwrap(subjects);
  }

  std::vector<Variant> variants = {kPosixSpawn, kLaunchUnsandboxed, kLaunchWithoutNamespaces, kLaunchSandboxed,
                                   kLaunchProcessChild};
  if (!bwrap_skipped) variants.push_back(kBwrap);
  if (options.only == kBwrap && bwrap_skipped) Fail("cannot measure bwrap: " + *bwrap_skipped);
  if (options.only >= 0) variants = {static_cast<Variant>(options.only)};

  std::printf("spawn_bench: starting a tool that exits at once, plain, through the launcher, and under bwrap\n");
  std::printf("machine: %s\n", Machine().c_str());
  std::printf("tool: %s (%ju bytes); this process: RSS %s%s\n", subjects.tool.c_str(),
              static_cast<uintmax_t>(fs::file_size(subjects.tool, error)), OwnResidentSize().c_str(),
              options.parent_mib > 0 ? (" (" + std::to_string(options.parent_mib) + " MiB ballast)").c_str()
                                     : "");
  std::printf("%d alternating rounds x %d starts per variant, medians of the rounds\n", options.rounds,
              options.starts);
  if (!best_effort_reason.empty()) {
    std::printf("sandbox: NOT complete here, measured best-effort: %s\n", best_effort_reason.c_str());
    for (const std::string& missing : subjects.profile->unenforced()) std::printf("  without %s\n", missing.c_str());
  }
  std::optional<sock_fprog> seccomp = subjects.profile->seccomp_program();
  std::printf("vfs tool sandbox profile (rlimits, Landlock, seccomp: %s), built once: %.0f µs (median of %d builds)\n",
              seccomp ? (std::to_string(seccomp->len) + " BPF instructions").c_str() : "none", Median(build_us),
              kProfileBuilds);
  if (!options.hide.empty()) {
    std::string list;
    for (const std::string& name : options.hide) list += (list.empty() ? "" : ", ") + name;
    std::printf("(n) is also without: %s (--hide)\n", list.c_str());
  }
  if (bwrap_skipped) std::printf("(c) bwrap skipped: %s\n", bwrap_skipped->c_str());
  std::printf("\n");
  std::fflush(stdout);

  for (Variant variant : variants) static_cast<void>(TimeStarts(subjects, variant, kWarmupStarts));
  Series series[kVariantCount];
  for (int round = 0; round < options.rounds; ++round) {
    std::vector<Variant> order = variants;
    if (round % 2 == 1) std::reverse(order.begin(), order.end());
    for (Variant variant : order) series[variant].rounds.push_back(TimeStarts(subjects, variant, options.starts));
  }

  const Series& reference = series[kPosixSpawn];
  std::printf("  %-34s", "");
  for (Variant variant : variants) std::printf(" %24s", kVariantLabels[variant]);
  std::printf("\n  %-34s", "µs per start");
  for (Variant variant : variants) std::printf(" %24s", Format("%.0f", series[variant].MedianOf(&Figures::wall_us)).c_str());
  std::printf("\n  %-34s", "CPU µs per start: parent + child");
  for (Variant variant : variants) {
    std::printf(" %24s", (Format("%.0f", series[variant].MedianOf(&Figures::parent_cpu_us)) + " + " +
                          Format("%.0f", series[variant].MedianOf(&Figures::child_cpu_us)))
                             .c_str());
  }
  std::printf("\n");
  if (options.only >= 0) return 0;  // no reference to compare with
  auto cpu = [](const Series& of) {
    return of.MedianOf(&Figures::parent_cpu_us) + of.MedianOf(&Figures::child_cpu_us);
  };
  std::printf("  %-34s", "ratio to (a)");
  for (Variant variant : variants) {
    std::printf(" %24s", Format("%.2f", series[variant].MedianOf(&Figures::wall_us) /
                                            reference.MedianOf(&Figures::wall_us))
                             .c_str());
  }
  std::printf("\n  %-34s", "CPU ratio to (a)");
  for (Variant variant : variants) {
    std::printf(" %24s", Format("%.2f", cpu(series[variant]) / cpu(reference)).c_str());
  }
  std::printf("\n\n");
  ReportRatio("launcher with sandbox / posix_spawn, (b)/(a)", series[kLaunchSandboxed], reference, kLauncherTarget,
              true);
  if (!bwrap_skipped) {
    ReportRatio("bwrap / launcher with sandbox, (c)/(b)", series[kBwrap], series[kLaunchSandboxed], kBwrapTarget,
                false);
  } else {
    std::printf("=> bwrap / launcher with sandbox, (c)/(b): not measured (%s)\n", bwrap_skipped->c_str());
  }
  return 0;
}
