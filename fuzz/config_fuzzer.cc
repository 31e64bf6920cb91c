// libFuzzer target: toolvfs.toml parsing never crashes or throws, every error
// and warning is one line that starts with the file name, and what is
// accepted holds the invariants the policy and runtimes rely on. Also feeds
// the input to the command splitter. Build and run with `make fuzz`.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "config/config.h"
#include "config/shell_words.h"
#include "config/url_check.h"

namespace {

void Check(bool condition) {
  if (!condition) std::abort();
}

bool IsOneLine(std::string_view text) {
  return text.find_first_of("\r\n") == std::string_view::npos;
}

void CheckAccepted(const toolvfs::Config& config) {
  for (const auto& [name, tool] : config.tools) {
    Check(name == tool.name && !name.empty());
    if (tool.source == toolvfs::ToolSource::kLocal) {
      Check(tool.command.has_value() && !tool.command->program.empty());
    } else {
      Check(!tool.command.has_value());
    }
    if (tool.source == toolvfs::ToolSource::kMcp)
      Check(config.mcp_servers.contains(tool.mcp_server));
    for (const std::string& url : tool.sandbox.network_allow)
      Check(toolvfs::CheckUrlPrefix(url).ok());
    for (const std::string& url : tool.sandbox.network_deny)
      Check(toolvfs::CheckUrlPrefix(url).ok());
    const toolvfs::LimitsConfig& limits = tool.sandbox.limits;
    for (int64_t limit : {limits.timeout_s, limits.idle_timeout_s, limits.cancel_grace_s,
                          limits.memory_mb, limits.max_message_mb, limits.max_processes}) {
      Check(limit > 0 && limit <= toolvfs::LimitsConfig::kMaxLimit);
    }
    for (const auto& [program, rule] : tool.sandbox.commands) {
      if (!rule.args) continue;
      for (const auto& list : *rule.args) {
        for (size_t i = 0; i + 1 < list.size(); ++i) Check(list[i] != "**");
      }
    }
    toolvfs::Result<toolvfs::RuntimeKind> runtime = toolvfs::ResolveRuntime(tool);
    if (!runtime.ok()) Check(IsOneLine(runtime.status().message()));
    (void)toolvfs::ConfigValue(tool.parameters).ToJson();
    (void)toolvfs::ConfigValue(tool.options).ToJson();
  }
  for (const std::string& warning : config.warnings) {
    Check(IsOneLine(warning) && warning.starts_with("fuzz.toml:"));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);

  toolvfs::ConfigCheck check = toolvfs::CheckConfigText(input, "fuzz.toml");
  for (const std::string& error : check.errors) {
    Check(IsOneLine(error) && error.starts_with("fuzz.toml:"));
  }
  if (check.errors.empty()) CheckAccepted(check.config);

  toolvfs::Result<std::vector<std::string>> words = toolvfs::SplitShellWords(input);
  if (words.ok()) {
    Check(!words->empty());
  } else {
    Check(IsOneLine(words.status().message()));
  }
  return 0;
}
