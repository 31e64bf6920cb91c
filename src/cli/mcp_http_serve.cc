#include "cli/mcp_http_serve.h"

#include <chrono>
#include <cstdio>
#include <utility>

#include "cli/stop_on_signals.h"
#include "cli/terminal.h"
#include "core/text.h"
#include "mcp/mcp_http_security.h"
#include "mcp/mcp_http_transport.h"
#include "project/sql/postgres_store.h"
#include "project/sql/postgres_uri.h"
#include "project/sql/sql_store.h"
#include "session/session_config.h"
#include "session/session_tools.h"

namespace toolvfs {
namespace {

constexpr std::string_view kSqliteScheme = "sqlite:";

// One MCP session's workspace, made a session workspace named after the
// session id; removed again when the session ends unless --keep-sessions.
// In a sqlite or postgres store the open creates the workspace row
// exclusively and the removal deletes that row by its id, never by name:
// a namesake that was there before (kept by --keep-sessions, or someone
// else's) makes this session fail and stays untouched, and one made after
// this session's workspace was deleted survives the session's end.
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
    StoreOptions store_options;
    if (uri.starts_with(kSqliteScheme) || IsPostgresUri(uri)) {
      uri += "#" + id;
      store_options.create_new_workspace = true;
      session->created_in_database_ = true;
    }
    Result<std::unique_ptr<ProjectFiles>> store = OpenProject(uri, store_options);
    if (!store.ok()) {
      if (store.status().code() != StatusCode::kAlreadyExists) return store.status();
      return AlreadyExistsError("session " + id + ": " + store.status().message() +
                                "; a session's workspace must be new, so that one is left as it is");
    }
    session->store_ = std::move(store).value();
    Result<std::unique_ptr<SessionWorkspace>> workspace =
        SessionWorkspace::Create(*session->store_, SessionSettingsFrom(session_config, id));
    if (!workspace.ok()) {
      session->RemoveWorkspace();
      return workspace.status();
    }
    session->workspace_ = std::move(workspace).value();
    session->tools_ = make_tools(*session->store_, *session->workspace_);
    return std::unique_ptr<McpHttpSession>(std::move(session));
  }

  ~WorkspaceSession() override {
    // The tools use the workspace, and both use the store.
    tools_.reset();
    workspace_.reset();
    if (keep_) {
      store_.reset();
    } else {
      RemoveWorkspace();
    }
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

  // Closes the store. A memory: workspace goes with it; a sqlite or
  // postgres one is deleted from its database by the row its open
  // inserted (DeleteCreatedWorkspace).
  void RemoveWorkspace() {
    if (!created_in_database_) {
      store_.reset();
      return;
    }
    Status removed = DeleteCreatedWorkspace(std::move(store_));
    // NotFound: deleted meanwhile (toolvfs workspace rm), so nothing is left behind.
    if (!removed.ok() && removed.code() != StatusCode::kNotFound) {
      std::fprintf(stderr, "toolvfs mcp: warning: session %s: its workspace was not removed: %s\n", id_.c_str(),
                   removed.message().c_str());
    }
  }

  std::string id_;
  bool keep_ = false;
  bool created_in_database_ = false;  // sqlite:FILE or postgres://…: store_ was opened with create_new_workspace
  std::unique_ptr<ProjectFiles> store_;
  std::unique_ptr<SessionWorkspace> workspace_;
  std::unique_ptr<McpToolHost> tools_;
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
    Result<std::unique_ptr<SqlStoreFile>> database = OpenPostgresStoreFile(options.session_store);
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
  http.header_timeout = std::chrono::milliseconds(static_cast<int64_t>(options.header_timeout_seconds * 1000.0));

  McpHttpSessionFactory factory = [&options, &session_config, make_tools](const std::string& id) {
    return WorkspaceSession::Open(options, session_config, make_tools, id);
  };
  Result<std::unique_ptr<McpHttpTransport>> transport =
      McpHttpTransport::Bind(std::move(http), std::move(server_options), std::move(factory));
  if (!transport.ok()) return ReportError("mcp", transport.status().message());
  StopOnSignals stop_on_signals([&transport] { (*transport)->Stop(); });
  const bool bracket = address->host.find(':') != std::string::npos;
  std::fprintf(stderr, "toolvfs mcp: listening on http://%s%s%s:%u/mcp\n", bracket ? "[" : "",
               address->host.c_str(), bracket ? "]" : "", static_cast<unsigned>((*transport)->port()));
  std::fflush(stderr);
  Status served = (*transport)->Serve();
  if (!served.ok()) return ReportError("mcp", served.message());
  return kExitOk;
}

}  // namespace toolvfs
