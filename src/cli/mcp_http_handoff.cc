// ServeMcpHttp in the `toolvfs` binary: hands over to the helper program
// that has the Streamable HTTP transport, toolvfs-mcp-http (docs/install.md,
// "Libraries loaded on first use").
//
// Why a second program: the transport is cpp-httplib, whose shared library
// initializes OpenSSL when it is loaded (OPENSSL_init_ssl with the error
// strings, from a static initializer), which costs every process that links
// it 3 MB resident before main, although only `toolvfs mcp --http` uses
// it. The helper is the same command line with the transport linked in
// (src/cli/CMakeLists.txt); `toolvfs` runs it in its own place (execv, same
// process id, same arguments), so signals, exit codes and output are the
// helper's as if `toolvfs` served HTTP itself.
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "cli/mcp_http_serve.h"
#include "cli/terminal.h"
#include "core/io.h"
#include "core/unique_fd.h"

namespace toolvfs {
namespace {

// The helper's place under the install prefix (or the build directory,
// which stages it the same way).
constexpr char kHelperInPrefix[] = TOOLVFS_LIBEXECDIR "/toolvfs/toolvfs-mcp-http";

// The helper beside this binary: PREFIX/libexec/toolvfs/toolvfs-mcp-http
// for PREFIX/bin/toolvfs (installed), BUILD/libexec/... for BUILD/toolvfs
// (the build tree); the installed place when neither exists, for the
// error message.
std::string HelperPath() {
  std::error_code error;
  const std::filesystem::path binary = std::filesystem::canonical("/proc/self/exe", error);
  if (error) return kHelperInPrefix;
  const std::filesystem::path installed = binary.parent_path().parent_path() / kHelperInPrefix;
  const std::filesystem::path staged = binary.parent_path() / kHelperInPrefix;
  if (!std::filesystem::exists(installed, error) && std::filesystem::exists(staged, error)) return staged.string();
  return installed.string();
}

// This process's arguments as the kernel has them (at most ARG_MAX's
// usual 2 MiB).
Result<std::vector<std::string>> CommandLine() {
  constexpr char kFile[] = "/proc/self/cmdline";
  UniqueFd file(::open(kFile, O_RDONLY | O_CLOEXEC));
  if (!file) return IoError(std::string("Cannot open ") + kFile + ": " + std::strerror(errno));
  TOOLVFS_ASSIGN_OR_RETURN(std::string text, ReadToEnd(file.get(), uint64_t{2} << 20, kFile));
  std::vector<std::string> arguments;
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\0', start);
    if (end == std::string::npos) end = text.size();
    arguments.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return arguments;
}

}  // namespace

const bool kMcpHttpServedInThisProgram = false;

int ServeMcpHttp(const McpHttpCommandOptions&, const std::optional<SessionConfig>&, McpServerOptions,
                 McpSessionToolsFactory) {
  const std::string helper = HelperPath();
  Result<std::vector<std::string>> command_line = CommandLine();
  if (!command_line.ok()) return ReportStatus("mcp --http", command_line.status());
  std::vector<std::string> arguments = std::move(*command_line);
  if (arguments.empty()) return ReportError("mcp --http", "/proc/self/cmdline is empty");
  arguments[0] = helper;
  std::vector<char*> argv;
  for (std::string& argument : arguments) argv.push_back(argument.data());
  argv.push_back(nullptr);
  execv(helper.c_str(), argv.data());
  return ReportError("mcp --http", "cannot run " + helper + ", the program that serves MCP over HTTP: " +
                                       std::strerror(errno) + " (reinstall toolvfs)");
}

}  // namespace toolvfs
