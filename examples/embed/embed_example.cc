// Embedding toolvfs: a program holds its project in a memory store, and runs
// a vfs tool against it under a policy, as `toolvfs run` would, without the
// command line. Built against the installed library (CMakeLists.txt here).
#include <toolvfs/toolvfs.h>


#include <cstdio>
#include <filesystem>
#include <string>

namespace {

int Fail(const char* what, const toolvfs::Status& status) {
  std::fprintf(stderr, "embed_example: %s: %s\n", what, status.ToString().c_str());
  return 1;
}

// The directory this program is in: the tool script sits beside it.
std::string ProgramDirectory() {
  std::error_code error;
  return std::filesystem::canonical("/proc/self/exe", error).parent_path().string();
}

}  // namespace

int main() {
  std::printf("libtoolvfs %s\n", toolvfs::LibraryVersion());

  // 1. The project: a memory store with one file.
  toolvfs::Result<std::unique_ptr<toolvfs::ProjectFiles>> project = toolvfs::OpenProject("memory:");
  if (!project.ok()) return Fail("open the store", project.status());
  toolvfs::Status written = (*project)->Write("notes/plan.txt", "ship the embed example today\n");
  if (!written.ok()) return Fail("write notes/plan.txt", written);

  // 2. The tool, declared as in a toolvfs.toml: it may read notes/ only.
  toolvfs::Result<toolvfs::Config> config = toolvfs::ParseConfig(R"toml(
[tools.word_count]
command = "python3 word_count.py"
runtime = "vfs"
description = "Counts the words of a file"
[tools.word_count.parameters]
path = { type = "string", required = true }
[tools.word_count.sandbox]
filesystem.allow = ["notes"]
)toml", "embedded toolvfs.toml");
  if (!config.ok()) return Fail("parse the tool's config", config.status());

  // 3. Run it. Without an inquirer a request the policy does not cover is
  // denied at once; the OS sandbox is used where the kernel has it.
  toolvfs::VfsRuntimeOptions options;
  options.working_directory = ProgramDirectory();
  options.confinement.sandbox = toolvfs::SandboxMode::kBestEffort;
  toolvfs::VfsRuntime runtime(**project, options);
  toolvfs::CancelToken cancel;
  toolvfs::ToolCall call{.name = "word_count", .arguments_json = R"({"path": "notes/plan.txt"})"};
  toolvfs::Result<toolvfs::Outcome> outcome = runtime.Execute(call, config->tools.at("word_count"), cancel);
  if (!outcome.ok()) return Fail("start the tool", outcome.status());
  for (const toolvfs::ContentBlock& block : outcome->content) std::printf("%s\n", block.text.c_str());
  if (outcome->is_error) {
    std::fprintf(stderr, "embed_example: the tool failed: %s\n", outcome->stderr_tail.c_str());
    return 1;
  }
  return 0;
}
