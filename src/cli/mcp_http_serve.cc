#include "cli/mcp_http_serve.h"

#include <signal.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>
#include <utility>

#include "cli/terminal.h"
#include "core/text.h"
#include "mcp/mcp_http_security.h"
#include "mcp/mcp_http_transport.h"
#include "project/sql/postgres_store.h"
#include "project/sql/postgres_uri.h"
#include "project/sql/sqlite_store.h"
#include "session/session_config.h"
#include "session/session_tools.h"

namespace toolvfs {
namespace {

constexpr std::string_view kSqliteScheme = "sqlite:";

// The database of a sqlite:FILE or postgres:// session store, for
// deleting workspaces (and, at start, for checking it can be reached).
Result<std::unique_ptr<SqlStoreFile>> OpenSessionDatabase(const std::string& uri) {
  if (IsPostgresUri(uri)) return OpenPostgresStoreFile(uri);
  TOOLVFS_ASSIGN_OR_RETURN(std::unique_ptr<SqliteStoreFile> file,
                           SqliteStoreFile::Open(uri.substr(kSqliteScheme.size())));
  return std::unique_ptr<SqlStoreFile>(std::move(file));
}

// One MCP session's workspace, opened in the session store and made a
// session workspace named after the session id; removed again when the
// session ends unless --keep-sessions.
class WorkspaceSession final : public McpHttpSession {
 public:
  static Result<std::unique_ptr<McpHttpSession>> Open(const McpHttpCommandOptions& options,
                                                      const std::optional<SessionConfig>& session_config,
                                                      const McpSessionToolsFactory& make_tools,
                                                      const std::string& id) {
    auto session = std::unique_ptr<WorkspaceSession>(new WorkspaceSession());
    session->id_ = id;
    session->keep_ = options.keep_sessions;
    std::string uri = options.session_store;
    if (uri.starts_with(kSqliteScheme) || IsPostgresUri(uri)) {
      session->database_uri_ = uri;
      uri += "#" + id;
    }
    TOOLVFS_ASSIGN_OR_RETURN(session->store_, OpenProject(uri));
    Result<std::unique_ptr<SessionWorkspace>> workspace =
        SessionWorkspace::Create(*session->store_, SessionSettingsFrom(session_config, id));
    if (!workspace.ok()) {
      session->store_.reset();
      session->RemoveWorkspace();
      return workspace.status();
    }
    session->workspace_ = std::move(workspace).value();
    session->tools_ = make_tools(*session->store_, *session->workspace_);
    return std::unique_ptr<McpHttpSession>(std::move(session));
  }

  ~WorkspaceSession() override {
    tools_.reset();
    workspace_.reset();
    store_.reset();
    if (!keep_) RemoveWorkspace();
  }

  McpToolHost& tools() override { return *tools_; }

  std::string instructions() override {
    Result<std::string> guidance = SessionGuidance(*workspace_);
    std::string text =
        "A session workspace of its own for this MCP session (id " + id_ +
        "): the builtin file tools work on it; the tools of toolvfs.toml run under their policy and sandbox.";
    if (guidance.ok()) text += "\n\n" + *guidance;
    return text;
  }

 private:
  WorkspaceSession() = default;

  // A memory: workspace went with its store; a sqlite or postgres one is
  // deleted from its database.
  void RemoveWorkspace() {
    if (!database_uri_) return;
    Result<std::unique_ptr<SqlStoreFile>> file = OpenSessionDatabase(*database_uri_);
    Status removed = file.ok() ? (*file)->DeleteWorkspace(id_) : file.status();
    if (!removed.ok() && removed.code() != StatusCode::kNotFound) {
      std::fprintf(stderr, "toolvfs mcp: warning: session %s: its workspace was not removed: %s\n", id_.c_str(),
                   removed.message().c_str());
    }
  }

  std::string id_;
  bool keep_ = false;
  std::optional<std::string> database_uri_;  // sqlite:FILE or postgres://…: where workspaces are deleted
  std::unique_ptr<ProjectFiles> store_;
  std::unique_ptr<SessionWorkspace> workspace_;
  std::unique_ptr<McpToolHost> tools_;
};

// For its lifetime SIGINT and SIGTERM are taken by a thread that stops
// `transport` (so the sessions end cleanly), and SIGPIPE is ignored (a
// client that hangs up must be a failed write, not the end of the server).
class StopOnSignals {
 public:
  explicit StopOnSignals(McpHttpTransport& transport) {
    sigemptyset(&signals_);
    sigaddset(&signals_, SIGINT);
    sigaddset(&signals_, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &signals_, &previous_mask_);
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &ignore, &previous_pipe_);
    waiter_ = std::thread([this, &transport] {
      const timespec tick{0, 200'000'000};
      while (!done_.load()) {
        if (sigtimedwait(&signals_, nullptr, &tick) > 0) {
          transport.Stop();
          return;
        }
      }
    });
  }
  StopOnSignals(const StopOnSignals&) = delete;
  StopOnSignals& operator=(const StopOnSignals&) = delete;
  ~StopOnSignals() {
    done_.store(true);
    waiter_.join();
    sigaction(SIGPIPE, &previous_pipe_, nullptr);
    pthread_sigmask(SIG_SETMASK, &previous_mask_, nullptr);
  }

 private:
  sigset_t signals_{};
  sigset_t previous_mask_{};
  struct sigaction previous_pipe_ {};
  std::atomic<bool> done_{false};
  std::thread waiter_;
};

}  // namespace

const bool kMcpHttpServedInThisProgram = true;

int ServeMcpHttp(const McpHttpCommandOptions& options, const std::optional<SessionConfig>& session_config,
                 McpServerOptions server_options, McpSessionToolsFactory make_tools) {
  Result<HttpListenAddress> address = ParseHttpListenAddress(*options.listen);
  if (!address.ok()) return ReportError("mcp", address.status().message());
  Result<OriginAllowList> origins = OriginAllowList::Make(options.allowed_origins);
  if (!origins.ok()) return ReportError("mcp", origins.status().message());
  McpHttpOptions http;
  http.address = *address;
  http.allowed_origins = std::move(origins).value();
  if (options.token_file) {
    Result<std::string> token = ReadBearerTokenFile(*options.token_file);
    if (!token.ok()) return ReportError("mcp", token.status().message());
    http.bearer_token = std::move(token).value();
  } else if (!IsLoopbackHost(address->host)) {
    return ReportError("mcp", "--http " + Quote(*options.listen) +
                                  " listens beyond loopback; give --token-file FILE so that every request "
                                  "must carry its bearer token");
  }
  const bool postgres = IsPostgresUri(options.session_store);
  if (options.session_store != "memory:" && !options.session_store.starts_with(kSqliteScheme) && !postgres) {
    return ReportError("mcp", "--session-store " + Quote(RedactPostgresUri(options.session_store)) +
                                  ": expected memory:, sqlite:FILE or postgres://… (each session gets a workspace "
                                  "named after its id)");
  }
  if (postgres) {
    if (options.session_store.find('#') != std::string::npos) {
      return ReportError("mcp", "--session-store " + Quote(RedactPostgresUri(options.session_store)) +
                                    ": name the database only (no #WORKSPACE); each session's workspace is named "
                                    "after its id");
    }
    // Refused at start rather than at the first session: a wrong
    // password or a server that is down is the operator's to fix now.
    Result<std::unique_ptr<SqlStoreFile>> database = OpenSessionDatabase(options.session_store);
    if (!database.ok()) return ReportStatus("mcp: --session-store", database.status());
  }
  if (options.session_store.starts_with(kSqliteScheme) &&
      options.session_store.find_first_of("#@", kSqliteScheme.size()) != std::string::npos) {
    return ReportError("mcp", "--session-store " + Quote(options.session_store) +
                                  ": name the file only (sqlite:FILE); each session's workspace is named after "
                                  "its id");
  }
  http.max_body_bytes = options.max_body_bytes;
  http.max_sessions = options.max_sessions;
  http.session_idle_timeout = std::chrono::milliseconds(
      static_cast<int64_t>(options.session_idle_timeout_seconds * 1000.0));

  McpHttpSessionFactory factory = [&options, &session_config, make_tools](const std::string& id) {
    return WorkspaceSession::Open(options, session_config, make_tools, id);
  };
  Result<std::unique_ptr<McpHttpTransport>> transport =
      McpHttpTransport::Bind(std::move(http), std::move(server_options), std::move(factory));
  if (!transport.ok()) return ReportError("mcp", transport.status().message());
  StopOnSignals stop_on_signals(**transport);
  const bool bracket = address->host.find(':') != std::string::npos;
  std::fprintf(stderr, "toolvfs mcp: listening on http://%s%s%s:%u/mcp\n", bracket ? "[" : "",
               address->host.c_str(), bracket ? "]" : "", static_cast<unsigned>((*transport)->port()));
  std::fflush(stderr);
  Status served = (*transport)->Serve();
  if (!served.ok()) return ReportError("mcp", served.message());
  return kExitOk;
}

}  // namespace toolvfs
