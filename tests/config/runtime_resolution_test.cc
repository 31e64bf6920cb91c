// SPEC.md §6.2: explicit runtime → ".wasm" program → stdio; builtin and mcp
// by source; wasm is an error for that tool only.
#include <gtest/gtest.h>

#include "config/config.h"

namespace toolvfs {
namespace {

constexpr std::string_view kWasmError =
    "Tool 'NAME' uses runtime 'wasm', which is not yet supported.";

std::string WasmError(std::string_view name) {
  std::string message(kWasmError);
  message.replace(message.find("NAME"), 4, name);
  return message;
}

TEST(RuntimeResolutionTest, ResolutionTable) {
  Result<Config> config = ParseConfig(R"toml(
[mcp_servers.s]
command = "srv"

[tools.plain]
command = "tools/x --fast"
[tools.explicit_stdio]
command = "tools/x.wasm"
runtime = "stdio"
[tools.explicit_vfs]
command = "tools/x"
runtime = "vfs"
[tools.vfs_wasm_suffix]
command = "tools/x.wasm"
runtime = "vfs"
[tools.explicit_wasm]
command = "tools/x"
runtime = "wasm"
[tools.suffix_wasm]
command = ".jp/plugins/my_tool.wasm"
[tools.suffix_wasm_with_args]
command = "plugins/t.wasm --fast"
[tools.suffix_wasm_table]
command = { program = "plugins/t.wasm", args = ["a"] }
[tools.wasm_as_argument]
command = "wasmtime run plugin.wasm"
[tools.suffix_not_wasm]
command = "tools/x.wasm2"
[tools.builtin]
source = "builtin"
[tools.builtin_runtime]
source = "builtin"
runtime = "wasm"
[tools.mcp]
source = "mcp.s.tool"
[tools.mcp_runtime]
source = "mcp.s"
runtime = "wasm"
)toml",
                                      "toolvfs.toml");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  struct Row {
    const char* tool;
    std::optional<RuntimeKind> runtime;  // nullopt: the wasm error
  };
  const Row rows[] = {
      {"plain", RuntimeKind::kStdio},
      {"explicit_stdio", RuntimeKind::kStdio},
      {"explicit_vfs", RuntimeKind::kVfs},
      {"vfs_wasm_suffix", RuntimeKind::kVfs},
      {"explicit_wasm", std::nullopt},
      {"suffix_wasm", std::nullopt},
      {"suffix_wasm_with_args", std::nullopt},
      {"suffix_wasm_table", std::nullopt},
      {"wasm_as_argument", RuntimeKind::kStdio},
      {"suffix_not_wasm", RuntimeKind::kStdio},
      {"builtin", RuntimeKind::kBuiltin},
      {"builtin_runtime", RuntimeKind::kBuiltin},
      {"mcp", RuntimeKind::kMcp},
      {"mcp_runtime", RuntimeKind::kMcp},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.tool);
    Result<RuntimeKind> runtime = ResolveRuntime(config->tools.at(row.tool));
    if (row.runtime) {
      ASSERT_TRUE(runtime.ok()) << runtime.status().ToString();
      EXPECT_EQ(RuntimeKindName(*runtime), RuntimeKindName(*row.runtime));
    } else {
      ASSERT_FALSE(runtime.ok());
      EXPECT_EQ(runtime.status().code(), StatusCode::kUnsupported);
      EXPECT_EQ(runtime.status().message(), WasmError(row.tool));
    }
  }
  // Ignored runtimes were reported once each, at load time.
  EXPECT_EQ(config->warnings.size(), 2u);
}

TEST(RuntimeResolutionTest, ExactWasmMessage) {
  Result<Config> config =
      ParseConfig("[tools.my_tool]\ncommand = \"t\"\nruntime = \"wasm\"\n", "toolvfs.toml");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  Result<RuntimeKind> runtime = ResolveRuntime(config->tools.at("my_tool"));
  ASSERT_FALSE(runtime.ok());
  EXPECT_EQ(runtime.status().message(),
            "Tool 'my_tool' uses runtime 'wasm', which is not yet supported.");
}

TEST(RuntimeResolutionTest, Names) {
  EXPECT_EQ(ToolSourceName(ToolSource::kLocal), "local");
  EXPECT_EQ(ToolSourceName(ToolSource::kBuiltin), "builtin");
  EXPECT_EQ(ToolSourceName(ToolSource::kMcp), "mcp");
  EXPECT_EQ(RuntimeKindName(RuntimeKind::kStdio), "stdio");
  EXPECT_EQ(RuntimeKindName(RuntimeKind::kVfs), "vfs");
  EXPECT_EQ(RuntimeKindName(RuntimeKind::kWasm), "wasm");
}

}  // namespace
}  // namespace toolvfs
