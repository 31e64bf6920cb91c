// A client for one MCP server process (SPEC.md §6.4): newline-delimited
// JSON-RPC 2.0 over the server's stdin and stdout, the `initialize`
// handshake, `tools/list` and `tools/call`.
//
// The server is started under the OS sandbox as ToolKind::kMcpServer (the
// stdio-runtime rules plus its package tree, SPEC.md §5) with the fixed
// environment and only the host variables its config lists. Every wait is a
// poll loop with a deadline: a server that hangs, floods or dies never
// blocks the host. Requests the server sends us (`ping`, `roots/list`,
// sampling, ...) are answered (`ping` with {}, the rest with "method not
// found": this client declares no capabilities); notifications are
// ignored.
//
// The destructor shuts the server down: stdin closed, a short wait, SIGTERM,
// SIGKILL (ChildProcess). Not thread-safe: one caller at a time.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"
#include "core/status.h"
#include "host/cancel_token.h"
#include "runtime/confined_launch.h"
#include "sandbox/launcher.h"
#include "sandbox/private_temp_dir.h"

namespace toolvfs {

// The protocol version this client asks for, and every version it accepts
// from a server that answers with another one (MCP version negotiation).
inline constexpr std::string_view kMcpProtocolVersion = "2025-06-18";
inline constexpr std::string_view kMcpSupportedProtocolVersions[] = {"2025-06-18", "2025-03-26",
                                                                    "2024-11-05"};

// The least address space (RLIMIT_AS, limits.memory_mb) an MCP server
// gets. node, which runs the reference servers, reserves far more address
// space than it uses (a bare `node -e` process: 0.7 GiB; V8's code range,
// a 64 MiB malloc arena per thread, thread stacks): under the 1 GiB default
// of tools, V8 fails to map a heap page a few MiB into the server's life
// and aborts with "JavaScript heap out of memory". A larger limit in the
// config is kept.
inline constexpr int64_t kMcpServerMinimumMemoryMb = 4096;

struct McpClientOptions {
  McpServerConfig server;
  // The server's working directory (the project's real directory); also the
  // project root its sandbox rules are relative to. Empty: none.
  std::string working_directory;
  // Whose policy the server runs under (the sandbox table of the tool entry
  // that uses it; ConfinementRequest reads limits, filesystem and network).
  ToolConfig policy;
  ConfinementOptions confinement;
  // The host's environment; only the variables named in server.env pass.
  std::map<std::string, std::string> host_environment;
  // How long startup (initialize) may take.
  std::chrono::milliseconds startup_timeout{std::chrono::seconds(30)};
  // After stdin is closed at shutdown, how long the server has to exit
  // before SIGTERM, and again before SIGKILL.
  std::chrono::milliseconds shutdown_grace{std::chrono::seconds(2)};
  // One line from the server longer than this fails the request.
  size_t max_message_bytes = size_t{10} << 20;
};

// One entry of `tools/list`.
struct McpToolInfo {
  std::string name;
  std::string description;
  std::string input_schema_json = "{}";  // compact JSON of inputSchema
};

// Why a request failed, besides the Status: set when the server answered
// with a JSON-RPC error object.
struct McpRequestError {
  int64_t code = 0;
  std::string message;
  // "error CODE: MESSAGE", for "... refused METHOD: " messages.
  std::string Describe() const { return "error " + std::to_string(code) + ": " + message; }
};

// The answer to one request: the `result` member as compact JSON, or the
// server's JSON-RPC error.
struct McpResponse {
  std::string result_json;
  std::optional<McpRequestError> error;
};

class McpClient {
 public:
  // Starts the server and runs the handshake: `initialize` with
  // kMcpProtocolVersion, a check that the version the server answers is
  // one of kMcpSupportedProtocolVersions, then `notifications/initialized`.
  // Fails with one line naming the server: it cannot be started (NotFound /
  // the launcher's error), it exited or timed out during the handshake
  // (with its exit status and stderr's last line), or it speaks an
  // unsupported version (Unsupported).
  static Result<std::unique_ptr<McpClient>> Start(McpClientOptions options, CancelToken& cancel);

  McpClient(const McpClient&) = delete;
  McpClient& operator=(const McpClient&) = delete;
  ~McpClient();

  // Sends request `method` with `params_json` (a JSON object, or empty for
  // none) and waits for its answer until `timeout`. A JSON-RPC error answer
  // is a successful McpResponse with `error` set. Fails with kTimeout
  // (after sending notifications/cancelled), kCancelled (after sending
  // notifications/cancelled; the server is then shut down), kInternal when
  // the server exited (naming its exit status and stderr's last line) or
  // broke the protocol. After a failure other than kTimeout the client is
  // dead (alive() is false).
  Result<McpResponse> Request(std::string_view method, std::string_view params_json,
                              std::chrono::milliseconds timeout, CancelToken& cancel);

  // Every tool of the server: tools/list, following nextCursor.
  Result<std::vector<McpToolInfo>> ListTools(std::chrono::milliseconds timeout, CancelToken& cancel);

  // Closes stdin, waits up to shutdown_grace, SIGTERM, waits again, SIGKILL.
  // Idempotent; the destructor calls it.
  void Shutdown();

  bool alive() const { return alive_; }
  pid_t pid() const { return child_.pid(); }
  const std::string& server_name() const { return options_.server.name; }
  // The version the server agreed to.
  const std::string& protocol_version() const { return protocol_version_; }
  // The last 64 KiB of the server's stderr (valid UTF-8).
  std::string StderrTail() const;

 private:
  McpClient(McpClientOptions options, PrivateTempDir temp, ChildProcess child);

  struct Pending;
  // Queues `line` for the server's stdin and writes what it can. Its
  // errors do not name the server: the caller says which one, and when.
  Status Send(std::string_view line);
  Status Initialize(CancelToken& cancel);
  // Pumps I/O until the answer to `id` arrives or `deadline` passes.
  Result<McpResponse> Await(int64_t id, std::string_view method, std::chrono::milliseconds timeout,
                            CancelToken& cancel);
  // Handles one line from the server; sets `answer` when it is the response
  // to `id`.
  Status HandleLine(std::string_view line, int64_t id, std::optional<McpResponse>& answer);
  // Waits up to `timeout_ms` for the pipes (or `cancel_fd`), writes what is
  // queued for stdin, reads a bounded amount of stderr and, with
  // `read_stdout`, one chunk of stdout into the splitter. Only Await reads
  // stdout: it consumes the lines of each chunk before the next read, which
  // keeps the splitter's memory bounded however fast the server writes.
  Status Pump(int timeout_ms, int cancel_fd, bool read_stdout = false);
  std::string ExitedMessage(std::string_view during);
  void SendCancelled(int64_t id, std::string_view reason);

  McpClientOptions options_;
  PrivateTempDir temp_;
  ChildProcess child_;
  std::unique_ptr<Pending> io_;
  int64_t next_id_ = 1;
  bool alive_ = true;
  std::string protocol_version_;
};

}  // namespace toolvfs
