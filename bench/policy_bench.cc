// policy_bench: what the access policy adds to one small fs.read (issue 4,
// docs/benchmarks.md). In the same run, in alternating rounds:
//   (a) reference: opening and closing the file through the store's own
//       resolution (ProjectFiles::ResolvePath: one openat2 + close), the
//       cheapest system work a read needs;
//   (p) FilePolicy::Check of the same path for a read, with the built-in
//       sensitive patterns and the config file, under the default policy
//       and under a sandbox table with allow, writable and deny rules.
// Prints the median ns per call and the ratio (p)/(a): the policy must stay
// a small fraction of the system call it sits beside.
//
//   policy_bench [--quick]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "bench_report.h"
#include "config/config.h"
#include "policy/file_policy.h"
#include "project/project_files.h"

namespace toolvfs {
namespace {

using bench::Machine;
using bench::Median;
using Clock = std::chrono::steady_clock;

using bench::Fail;
// Median ns per call of `work` over `rounds` rounds of `calls` calls.
template <typename Work>
double NanosecondsPerCall(int rounds, int calls, Work&& work) {
  std::vector<double> per_call;
  for (int round = 0; round < rounds; ++round) {
    Clock::time_point begin = Clock::now();
    for (int call = 0; call < calls; ++call) work();
    per_call.push_back(std::chrono::duration<double, std::nano>(Clock::now() - begin).count() / calls);
  }
  return Median(per_call);
}

FilePolicy PolicyOf(std::string_view sandbox_table) {
  std::string text = "[tools.t]\ncommand = \"t\"\nruntime = \"vfs\"\n" + std::string(sandbox_table);
  Result<Config> config = ParseConfig(text, "policy_bench.toml");
  if (!config.ok()) Fail(config.status().message());
  return FilePolicy::ForTool(config->tools.at("t"), std::string("toolvfs.toml"));
}

}  // namespace
}  // namespace toolvfs

int main(int argc, char** argv) {
  using namespace toolvfs;
  const bool quick = argc > 1 && std::string(argv[1]) == "--quick";
  const int rounds = quick ? 3 : 9;
  const int calls = quick ? 20000 : 200000;

  const std::filesystem::path root = std::filesystem::temp_directory_path() / "toolvfs-policy-bench";
  std::filesystem::create_directories(root / "src/deeper");
  std::ofstream(root / "src/deeper/file_17.txt") << "content\n";
  Result<std::unique_ptr<ProjectFiles>> store = OpenProject(root.string());
  if (!store.ok()) Fail(store.status().message());
  const std::string path = "src/deeper/file_17.txt";

  FilePolicy default_policy = PolicyOf("");
  FilePolicy sandboxed = PolicyOf(
      "[tools.t.sandbox]\nfilesystem.allow = [\"src\", \"docs\"]\nfilesystem.writable = [\"src/gen\"]\n"
      "filesystem.deny = [\"src/secrets\"]\nsensitive_paths = [\"config/**\", \"**/*.p12\"]\n");
  int allowed = 0;
  auto resolve = [&] { allowed += (*store)->ResolvePath(path).ok(); };
  auto check_default = [&] { allowed += default_policy.Check(FileAccess::kRead, path).decision == Decision::kAllow; };
  auto check_sandboxed = [&] { allowed += sandboxed.Check(FileAccess::kRead, path).decision == Decision::kAllow; };
  resolve();
  check_default();
  check_sandboxed();
  if (allowed != 3) Fail("the setup is wrong: the read is not allowed");

  double reference = 0, default_ns = 0, sandboxed_ns = 0;
  // Alternate the three, so a slow phase of the machine hits them alike.
  std::vector<double> reference_rounds, default_rounds, sandboxed_rounds;
  for (int round = 0; round < rounds; ++round) {
    reference_rounds.push_back(NanosecondsPerCall(1, calls / 10, resolve));
    default_rounds.push_back(NanosecondsPerCall(1, calls, check_default));
    sandboxed_rounds.push_back(NanosecondsPerCall(1, calls, check_sandboxed));
  }
  reference = Median(reference_rounds);
  default_ns = Median(default_rounds);
  sandboxed_ns = Median(sandboxed_rounds);
  std::filesystem::remove_all(root);

  std::printf("policy_bench: the access policy's check beside the system call of a read\n");
  std::printf("machine: %s\n", Machine().c_str());
  std::printf("%d alternating rounds, medians; path %s\n\n", rounds, path.c_str());
  std::printf("  (a) ResolvePath (openat2 + close)              %8.0f ns\n", reference);
  std::printf("  (p) FilePolicy::Check, default policy          %8.0f ns   %.2f of (a)\n", default_ns,
              default_ns / reference);
  std::printf("  (p) FilePolicy::Check, sandbox table           %8.0f ns   %.2f of (a)\n", sandboxed_ns,
              sandboxed_ns / reference);
  return allowed > 0 ? 0 : 1;
}
