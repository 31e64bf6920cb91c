#include "mcp/mcp_http_transport.h"

#include <httplib.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <sys/random.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <map>
#include <mutex>
#include <thread>
#include <utility>

#include "core/text.h"
#include "mcp/mcp_http_guarded_server.h"
#include "protocol/json_writer.h"

namespace toolvfs {
namespace {

constexpr const char* kEndpoint = "/mcp";
constexpr const char* kSessionHeader = "Mcp-Session-Id";
constexpr const char* kVersionHeader = "MCP-Protocol-Version";
// Requests of one session in progress at once (each holds a pool worker
// until answered): room for a client's parallel calls (the conformance
// suite runs three), not for one session to take the pool of all.
constexpr size_t kMaxRequestsInProgressPerSession = 8;

// The JSON-RPC error codes the transport answers itself (the server
// answers everything it receives).
constexpr int kParseError = kJsonRpcParseError;
constexpr int kInvalidRequest = kJsonRpcInvalidRequest;
constexpr int kInternalError = kJsonRpcInternalError;

// {"jsonrpc":"2.0","id":null,"error":{...}}: what an HTTP-level refusal
// carries, so a JSON-RPC client can show the reason.
std::string ErrorBody(int code, std::string_view message) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  writer.StartObject();
  writer.Key("jsonrpc");
  writer.String("2.0");
  writer.Key("id");
  writer.Null();
  writer.Key("error");
  writer.StartObject();
  writer.Key("code");
  writer.Int(code);
  writer.Key("message");
  writer.String(message.data(), static_cast<rapidjson::SizeType>(message.size()));
  writer.EndObject();
  writer.EndObject();
  return JsonText(buffer);
}

void Refuse(httplib::Response& response, int http_status, int code, std::string_view message) {
  response.status = http_status;
  response.set_content(ErrorBody(code, message), "application/json");
}

// A message a client POSTed, parsed once: the server takes the parsed
// line as it is (McpServer::Submit), the transport routes by the rest.
struct IncomingMessage {
  ParsedLine parsed = ParsedLine::Blank();  // a message; moved to the server when submitted
  MessageKind kind = MessageKind::kRequest;
  std::string method;
  std::string id_json;                        // requests and responses
  std::optional<std::string> progress_token;  // params._meta.progressToken, as JSON
  std::optional<std::string> cancelled_id;    // notifications/cancelled: params.requestId, as JSON
};

// Reads one JSON-RPC message with the server's own parser (its checks:
// version, id, method or result/error, params an object); an error
// message (for a 400) otherwise. Batches were removed from MCP in
// 2025-06-18 and are refused.
Result<IncomingMessage> ReadIncoming(MessageParser& parser, std::string_view body, int& error_code) {
  ParsedLine parsed = parser.Parse(body);
  if (parsed.is_blank()) {
    error_code = kParseError;
    return Status(StatusCode::kInvalidArgument, "Parse error: the request body is empty");
  }
  if (parsed.is_error()) {
    error_code = parsed.error().code;
    return Status(StatusCode::kInvalidArgument, parsed.error().message);
  }
  const Message& message = parsed.message();
  IncomingMessage incoming;
  incoming.kind = message.kind();
  incoming.method = std::string(message.method());
  if (message.kind() != MessageKind::kNotification) incoming.id_json = message.id().ToJson();
  if (message.kind() != MessageKind::kResponse) {
    Result<std::optional<Params>> meta = message.params().OptionalObject("_meta");
    if (meta.ok() && *meta) incoming.progress_token = (*meta)->Json("progressToken");
    if (incoming.method == "notifications/cancelled") incoming.cancelled_id = message.params().Json("requestId");
  }
  incoming.parsed = std::move(parsed);
  return incoming;
}

// 128 random bits as 32 hex digits: visible ASCII, as the transport asks
// of a session id, and not guessable.
Result<std::string> NewSessionId() {
  unsigned char bytes[16];
  size_t filled = 0;
  while (filled < sizeof bytes) {
    const ssize_t got = getrandom(bytes + filled, sizeof bytes - filled, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      return ErrnoToStatus(errno, "getrandom for a session id");
    }
    filled += static_cast<size_t>(got);
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id;
  for (unsigned char byte : bytes) {
    id += kHex[byte >> 4];
    id += kHex[byte & 0xF];
  }
  return id;
}

bool AcceptsType(const httplib::Request& request, std::string_view type) {
  if (!request.has_header("Accept")) return true;
  const std::string accept = request.get_header_value("Accept");
  const std::string_view family = type.substr(0, type.find('/'));
  return accept.find(type) != std::string::npos || accept.find("*/*") != std::string::npos ||
         accept.find(std::string(family) + "/*") != std::string::npos;
}

bool IsSupportedVersion(std::string_view version) {
  for (std::string_view known : kMcpProtocolVersions) {
    if (known == version) return true;
  }
  return false;
}

int64_t SteadyMilliseconds() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string SseEvent(std::string_view message) {
  std::string event = "event: message\ndata: ";
  event += message;
  event += "\n\n";
  return event;
}

// Server messages bound for one SSE stream (a POST's or the session's
// GET stream), filled by the server's send, drained by the HTTP worker
// that writes the stream. Guarded by the session's mutex.
struct Outbox {
  std::deque<std::string> messages;
  bool answered = false;   // a POST's answer is in `messages`: the stream ends after it
  bool closed = false;     // the stream's writer is gone: route elsewhere
  bool answer_only = false;  // a POST answered with JSON: only its answer comes here
};

// One MCP session: its server, and where that server's messages go.
struct HttpSession {
  std::string id;
  std::unique_ptr<McpHttpSession> backend;
  McpSend send;                     // routes into the outboxes below; outlives `server`
  std::unique_ptr<McpServer> server;

  // One Submit at a time (the server reads lines on one thread, as over
  // stdio); also guards teardown against a Submit in progress.
  std::mutex submit_mutex;
  std::shared_ptr<Outbox> submitting;  // the POST whose line is being submitted (mutex)

  std::mutex mutex;  // everything below, and every Outbox of this session
  std::condition_variable changed;
  bool ended = false;
  std::map<std::string, std::shared_ptr<Outbox>, std::less<>> by_request_id;
  std::map<std::string, std::shared_ptr<Outbox>, std::less<>> by_progress_token;
  std::shared_ptr<Outbox> get_stream;
  std::deque<std::string> backlog;  // for the next GET stream
  bool backlog_overflow_reported = false;

  std::atomic<int> in_use{0};  // requests and open streams
  std::atomic<int64_t> last_used_ms{SteadyMilliseconds()};
};

// Counts a session as in use while it lives; shared by a handler and the
// stream it leaves behind.
std::shared_ptr<void> UseSession(const std::shared_ptr<HttpSession>& session) {
  session->in_use.fetch_add(1);
  return std::shared_ptr<void>(nullptr, [session](void*) {
    session->last_used_ms.store(SteadyMilliseconds());
    session->in_use.fetch_sub(1);
  });
}

}  // namespace

class McpHttpTransport::Impl {
 public:
  Impl(McpHttpOptions options, McpServerOptions server_options, McpHttpSessionFactory factory)
      : options_(std::move(options)),
        server_options_(std::move(server_options)),
        factory_(std::move(factory)),
        http_(HttpHeaderLimits{.header_timeout = options_.header_timeout,
                               .max_header_bytes = options_.max_header_bytes,
                               .max_waiting_per_peer = options_.max_waiting_connections_per_peer}) {}

  Status Bind() {
    // Every open stream holds a worker: one GET stream per session, the
    // POST streams of running calls, idle keep-alive connections. Twice
    // the sessions plus a margin keeps a slow tool or a stream of one
    // session from starving the others (docs/mcp.md, "Library"); the
    // connections one peer may keep waiting for a request come on top, so
    // a client at that limit leaves the sessions their share.
    const size_t workers = options_.max_sessions * 2 + 16 + options_.max_waiting_connections_per_peer;
    http_.new_task_queue = [workers] { return new httplib::ThreadPool(workers); };
    http_.set_payload_max_length(options_.max_body_bytes);
    http_.set_keep_alive_timeout(2);
    http_.set_read_timeout(30, 0);
    http_.set_write_timeout(10, 0);
    http_.set_pre_routing_handler([this](const httplib::Request& request, httplib::Response& response) {
      return CheckAccess(request, response) ? httplib::Server::HandlerResponse::Unhandled
                                            : httplib::Server::HandlerResponse::Handled;
    });
    http_.set_error_handler([](const httplib::Request&, httplib::Response& response) {
      if (response.status == 413 && response.body.empty()) {
        response.set_content(ErrorBody(kInvalidRequest, "Invalid Request: the request body is larger than the "
                                                        "server's limit (--max-body-bytes)"),
                             "application/json");
      }
    });
    http_.Post(kEndpoint, [this](const httplib::Request& request, httplib::Response& response) {
      HandlePost(request, response);
    });
    http_.Get(kEndpoint, [this](const httplib::Request& request, httplib::Response& response) {
      HandleGet(request, response);
    });
    http_.Delete(kEndpoint, [this](const httplib::Request& request, httplib::Response& response) {
      HandleDelete(request, response);
    });
    const auto not_allowed = [](const httplib::Request&, httplib::Response& response) {
      response.set_header("Allow", "GET, POST, DELETE");
      Refuse(response, 405, kInvalidRequest, "Method not allowed: /mcp takes POST, GET and DELETE");
    };
    http_.Put(kEndpoint, not_allowed);
    http_.Patch(kEndpoint, not_allowed);
    http_.Options(kEndpoint, not_allowed);

    const std::string& host = options_.address.host;
    if (options_.address.port == 0) {
      const int port = http_.bind_to_any_port(host);
      if (port <= 0) return BindError();
      port_ = static_cast<uint16_t>(port);
    } else {
      if (!http_.bind_to_port(host, options_.address.port)) return BindError();
      port_ = options_.address.port;
    }
    return OkStatus();
  }

  uint16_t port() const { return port_; }

  Status Serve() {
    serving_.store(true);
    std::thread reaper([this] { ExpireIdleSessions(); });
    const bool listened = stop_requested_.load() ? true : http_.listen_after_bind();
    serving_.store(false);
    {
      std::lock_guard lock(reaper_mutex_);
      stopping_ = true;
    }
    reaper_wake_.notify_all();
    reaper.join();
    EndAllSessions();
    if (!listened && !stop_requested_.load()) {
      return Status(StatusCode::kIo, "--http: the listener on port " + std::to_string(port_) + " failed");
    }
    return OkStatus();
  }

  void Stop() {
    stop_requested_.store(true);
    {
      std::lock_guard lock(reaper_mutex_);
      stopping_ = true;
    }
    reaper_wake_.notify_all();
    // Wake every stream writer so the workers return and the pool can end.
    std::vector<std::shared_ptr<HttpSession>> sessions = AllSessions();
    for (auto& session : sessions) {
      std::lock_guard lock(session->mutex);
      session->changed.notify_all();
    }
    // httplib's stop() acts only once the listener runs: a Stop() that
    // comes while Serve() is about to listen waits for it to.
    while (serving_.load() && !http_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    http_.stop();
  }

  size_t session_count() const {
    std::lock_guard lock(sessions_mutex_);
    return sessions_.size();
  }

 private:
  Status BindError() const {
    return Status(StatusCode::kInvalidArgument,
                  "--http " + Quote(options_.address.host + ":" + std::to_string(options_.address.port)) +
                      ": cannot listen there (address in use, not an address of this machine, or a port "
                      "below 1024 without the right)");
  }

  // Token, Origin and Host, before anything is read or routed. False when
  // `response` holds the refusal.
  bool CheckAccess(const httplib::Request& request, httplib::Response& response) {
    if (options_.bearer_token &&
        !BearerTokenMatches(request.get_header_value("Authorization"), *options_.bearer_token)) {
      response.set_header("WWW-Authenticate", "Bearer");
      Refuse(response, 401, kInvalidRequest,
             request.has_header("Authorization") ? "Unauthorized: the bearer token does not match"
                                                 : "Unauthorized: this server needs an Authorization: Bearer "
                                                   "header (the token of its --token-file)");
      return false;
    }
    const std::string origin = request.get_header_value("Origin");
    if (!options_.allowed_origins.Allows(origin)) {
      Refuse(response, 403, kInvalidRequest,
             "Forbidden: Origin " + Quote(origin) + " is not allowed (loopback origins only, plus --allow-origin)");
      return false;
    }
    // A page that rebinds its own name to 127.0.0.1 sends no Origin on a
    // same-origin GET, but its Host is still its own name. A Host that
    // cannot be read is refused too (the check fails closed); none at all
    // is an HTTP/1.0 client's, never a browser's.
    if (IsLoopbackHost(options_.address.host) && request.has_header("Host")) {
      const std::string written = request.get_header_value("Host");
      const std::string host = HostOfHostHeader(written);
      if (host.empty() || !IsLoopbackHost(host)) {
        Refuse(response, 403, kInvalidRequest,
               "Forbidden: Host " + Quote(host.empty() ? written : host) +
                   " is not a loopback name (DNS-rebinding protection)");
        return false;
      }
    }
    // cpp-httplib bounds a body by --max-body-bytes only when its length is
    // given: a chunked one would be read whole whatever its size. MCP
    // clients send Content-Length.
    if (request.has_header("Transfer-Encoding")) {
      Refuse(response, 411, kInvalidRequest,
             "Length Required: send the body with Content-Length, not Transfer-Encoding " +
                 Quote(request.get_header_value("Transfer-Encoding")));
      return false;
    }
    return true;
  }

  // The session the request names. Null with `response` set when it names
  // none (400) or one that does not exist (404), or carries a protocol
  // version this server does not speak (400).
  std::shared_ptr<HttpSession> SessionOf(const httplib::Request& request, httplib::Response& response) {
    if (!CheckVersionHeader(request, response)) return nullptr;
    if (!request.has_header(kSessionHeader)) {
      Refuse(response, 400, kInvalidRequest,
             "Bad Request: Mcp-Session-Id header missing (send initialize first; its answer carries the id)");
      return nullptr;
    }
    const std::string id = request.get_header_value(kSessionHeader);
    std::lock_guard lock(sessions_mutex_);
    auto found = sessions_.find(id);
    if (found == sessions_.end()) {
      Refuse(response, 404, kInvalidRequest,
             "Session not found: " + Quote(id) + " (ended, expired or never made); initialize a new session");
      return nullptr;
    }
    return found->second;
  }

  bool CheckVersionHeader(const httplib::Request& request, httplib::Response& response) {
    if (!request.has_header(kVersionHeader)) return true;  // 2025-03-26 clients send none
    const std::string version = request.get_header_value(kVersionHeader);
    if (IsSupportedVersion(version)) return true;
    Refuse(response, 400, kInvalidRequest,
           "Bad Request: MCP-Protocol-Version " + Quote(version) +
               " is not supported (2025-11-25, 2025-06-18, 2025-03-26)");
    return false;
  }

  void HandlePost(const httplib::Request& request, httplib::Response& response) {
    const std::string content_type = request.get_header_value("Content-Type");
    if (content_type.find("application/json") == std::string::npos) {
      Refuse(response, 415, kInvalidRequest,
             "Unsupported Media Type: POST a JSON-RPC message as application/json (got " + Quote(content_type) +
                 ")");
      return;
    }
    if (!AcceptsType(request, "application/json") && !AcceptsType(request, "text/event-stream")) {
      Refuse(response, 406, kInvalidRequest,
             "Not Acceptable: the Accept header must list application/json and text/event-stream");
      return;
    }
    int error_code = 0;
    Result<IncomingMessage> message = [&] {
      std::lock_guard lock(parser_mutex_);
      return ReadIncoming(parser_, request.body, error_code);
    }();
    if (!message.ok()) {
      Refuse(response, 400, error_code, message.status().message());
      return;
    }
    std::shared_ptr<HttpSession> session;
    if (!request.has_header(kSessionHeader) && message->method == "initialize" &&
        message->kind == MessageKind::kRequest) {
      if (!CheckVersionHeader(request, response)) return;
      Initialize(*message, response);
      return;
    }
    session = SessionOf(request, response);
    if (!session) return;
    std::shared_ptr<void> use = UseSession(session);
    if (message->kind != MessageKind::kRequest) {
      // Notifications (initialized, cancelled) and the client's answers
      // to the server's requests: accepted, nothing to return.
      if (!Submit(*session, std::move(message->parsed), nullptr)) {
        Refuse(response, 404, kInvalidRequest, "Session not found: " + Quote(session->id) + " has ended");
        return;
      }
      if (message->cancelled_id) EndCancelledRequest(*session, *message->cancelled_id);
      response.status = 202;
      return;
    }
    Answer(session, std::move(use), *message, request, response);
  }

  // A request the client cancelled gets no answer (MCP cancellation), so
  // the POST waiting for it ends now: its stream closes, or (JSON) it gets
  // 204. An answer already on its way is still delivered.
  void EndCancelledRequest(HttpSession& session, const std::string& id_json) {
    std::lock_guard lock(session.mutex);
    auto found = session.by_request_id.find(id_json);
    if (found == session.by_request_id.end() || found->second->answered) return;
    found->second->answered = true;
    session.changed.notify_all();
  }

  // Submits `line` to the session's server with `outbox` as the POST it
  // came from. False when the session has ended.
  bool Submit(HttpSession& session, ParsedLine line, std::shared_ptr<Outbox> outbox) {
    std::lock_guard submit(session.submit_mutex);
    {
      std::lock_guard lock(session.mutex);
      if (session.ended) return false;
      session.submitting = std::move(outbox);
    }
    session.server->Submit(std::move(line), session.send);
    std::lock_guard lock(session.mutex);
    session.submitting = nullptr;
    return true;
  }

  void Initialize(IncomingMessage& message, httplib::Response& response) {
    {
      std::lock_guard lock(sessions_mutex_);
      if (sessions_.size() + pending_sessions_ >= options_.max_sessions) {
        response.set_header("Retry-After", "10");
        Refuse(response, 503, kInternalError,
               "Service Unavailable: " + std::to_string(options_.max_sessions) +
                   " sessions are open (--max-sessions); end one with DELETE or wait for one to expire");
        return;
      }
      ++pending_sessions_;
    }
    std::shared_ptr<HttpSession> session = MakeSession(message, response);
    std::lock_guard lock(sessions_mutex_);
    --pending_sessions_;
    if (!session) return;
    if (stop_requested_.load()) {
      std::lock_guard session_lock(session->mutex);
      session->ended = true;
      return;
    }
    sessions_.emplace(session->id, session);
  }

  // Makes a session, submits the initialize to its server and answers it.
  // Null (with the answer in `response`) when it is not to be kept.
  std::shared_ptr<HttpSession> MakeSession(IncomingMessage& message,
                                           httplib::Response& response) {
    Result<std::string> id = NewSessionId();
    if (!id.ok()) {
      Refuse(response, 500, kInternalError, "Internal error: " + id.status().message());
      return nullptr;
    }
    Result<std::unique_ptr<McpHttpSession>> backend = factory_(*id);
    if (!backend.ok()) {
      // A session workspace of that name already in the store (kept by
      // --keep-sessions, or someone else's) is a conflict with what the
      // store holds, not a fault of the server; either way the operator
      // learns of it here, since the client alone sees the answer.
      const Status& why = backend.status();
      std::fprintf(stderr, "toolvfs mcp: session %s refused: %s\n", id->c_str(), why.message().c_str());
      if (why.code() == StatusCode::kAlreadyExists) {
        Refuse(response, 409, kInternalError, "Conflict: cannot make the session: " + why.message());
      } else {
        Refuse(response, 500, kInternalError, "Internal error: cannot make the session: " + why.message());
      }
      return nullptr;
    }
    auto session = std::make_shared<HttpSession>();
    session->id = *id;
    session->backend = std::move(backend).value();
    HttpSession* raw = session.get();
    // Every message the server sends comes through the routed send below,
    // with its id and kind; this one is only Submit's required channel.
    session->send = [this, raw](const WireMessage& sent) { Route(*raw, sent.line(), McpOutgoing{}); };
    McpServerOptions server_options = server_options_;
    const std::string instructions = session->backend->instructions();
    if (!instructions.empty()) server_options.instructions = instructions;
    session->server = std::make_unique<McpServer>(session->backend->tools(), std::move(server_options));
    // A call's own messages (its elicitation requests, progress, log
    // lines) go on the SSE stream of the POST that carries it.
    session->server->SetRoutedSend(
        [this, raw](const WireMessage& sent, const McpOutgoing& what) { Route(*raw, sent.line(), what); });

    auto outbox = std::make_shared<Outbox>();
    outbox->answer_only = true;
    {
      std::lock_guard lock(session->mutex);
      session->by_request_id.emplace(message.id_json, outbox);
    }
    Submit(*session, std::move(message.parsed), outbox);
    std::lock_guard lock(session->mutex);
    session->by_request_id.erase(message.id_json);
    if (!outbox->answered || outbox->messages.empty()) {
      Refuse(response, 500, kInternalError, "Internal error: the server did not answer initialize");
      return nullptr;
    }
    const std::string answer = outbox->messages.back();
    response.set_content(answer, "application/json");
    // Refused (no version agreed): nothing to keep, the client may try again.
    if (session->server->protocol_version().empty()) return nullptr;
    response.set_header(kSessionHeader, session->id);
    return session;
  }

  // Answers a request of a session: JSON when the answer is ready once the
  // line is submitted (or the client takes no SSE), else an SSE stream.
  void Answer(const std::shared_ptr<HttpSession>& session, std::shared_ptr<void> use,
              IncomingMessage& message, const httplib::Request& request, httplib::Response& response) {
    const bool takes_sse = request.has_header("Accept") ? AcceptsType(request, "text/event-stream") : false;
    auto outbox = std::make_shared<Outbox>();
    outbox->answer_only = !takes_sse;
    {
      std::lock_guard lock(session->mutex);
      if (session->by_request_id.contains(message.id_json)) {
        Refuse(response, 400, kInvalidRequest,
               "Invalid Request: id " + message.id_json + " is already in use by a request in progress");
        return;
      }
      // Each request in progress holds a worker of the pool, which is sized
      // for a few per session: one session must not take them all.
      if (session->by_request_id.size() >= kMaxRequestsInProgressPerSession) {
        response.set_header("Retry-After", "1");
        Refuse(response, 429, kInvalidRequest,
               "Too Many Requests: this session has " + std::to_string(kMaxRequestsInProgressPerSession) +
                   " requests in progress already; send more once one is answered");
        return;
      }
      session->by_request_id.emplace(message.id_json, outbox);
      if (message.progress_token && takes_sse) session->by_progress_token[*message.progress_token] = outbox;
    }
    const auto forget = [session, outbox, id_json = message.id_json, progress_token = message.progress_token] {
      // Caller holds session->mutex.
      outbox->closed = true;
      auto by_id = session->by_request_id.find(id_json);
      if (by_id != session->by_request_id.end() && by_id->second == outbox) session->by_request_id.erase(by_id);
      if (progress_token) {
        auto by_token = session->by_progress_token.find(*progress_token);
        if (by_token != session->by_progress_token.end() && by_token->second == outbox) {
          session->by_progress_token.erase(by_token);
        }
      }
    };
    if (!Submit(*session, std::move(message.parsed), outbox)) {
      std::lock_guard lock(session->mutex);
      forget();
      Refuse(response, 404, kInvalidRequest, "Session not found: " + Quote(session->id) + " has ended");
      return;
    }
    std::unique_lock lock(session->mutex);
    if (outbox->answered && outbox->messages.size() == 1) {
      response.set_content(outbox->messages.front(), "application/json");
      forget();
      return;
    }
    if (!takes_sse) {
      session->changed.wait(lock, [&] { return outbox->answered || session->ended || stop_requested_.load(); });
      if (!outbox->answered) {
        forget();
        Refuse(response, 404, kInvalidRequest,
               "Session not found: " + Quote(session->id) + " ended before the request was answered");
        return;
      }
      if (outbox->messages.empty()) {  // cancelled by the client: no answer
        forget();
        response.status = 204;
        return;
      }
      response.set_content(outbox->messages.back(), "application/json");
      forget();
      return;
    }
    lock.unlock();
    RespondWithStream(response, session, outbox, forget, std::move(use), /*ends_with_answer=*/true);
  }

  // Makes `response` the SSE stream of `outbox` (Stream). `forget`, called
  // with the session's mutex held, unregisters the outbox once the stream
  // ends, whether it ended normally, the client went away or httplib never
  // started it; `use` keeps the session in use meanwhile.
  void RespondWithStream(httplib::Response& response, const std::shared_ptr<HttpSession>& session,
                         const std::shared_ptr<Outbox>& outbox, const std::function<void()>& forget,
                         std::shared_ptr<void> use, bool ends_with_answer) {
    response.set_header("Cache-Control", "no-cache");
    response.set_chunked_content_provider(
        "text/event-stream",
        [this, session, outbox, forget, use, ends_with_answer](size_t, httplib::DataSink& sink) {
          const bool finished = Stream(*session, *outbox, sink, ends_with_answer);
          std::lock_guard guard(session->mutex);
          forget();
          return finished;
        },
        [session, forget](bool) {
          std::lock_guard guard(session->mutex);
          forget();
        });
  }

  // Writes the outbox's messages as SSE events until the answer went out
  // (`ends_with_answer`), the session ended, the transport stops or the
  // client is gone. True when the stream ended normally (done() called).
  bool Stream(HttpSession& session, Outbox& outbox, httplib::DataSink& sink, bool ends_with_answer) {
    std::unique_lock lock(session.mutex);
    while (true) {
      const bool woke = session.changed.wait_for(lock, options_.heartbeat_interval, [&] {
        return !outbox.messages.empty() || (ends_with_answer && outbox.answered) || session.ended ||
               stop_requested_.load();
      });
      std::deque<std::string> batch;
      batch.swap(outbox.messages);
      const bool answered = outbox.answered;
      const bool ended = session.ended || stop_requested_.load();
      lock.unlock();
      for (const std::string& message : batch) {
        const std::string event = SseEvent(message);
        if (!sink.write(event.data(), event.size())) return false;
      }
      if (!woke) {
        static constexpr std::string_view kHeartbeat = ": keep-alive\n\n";
        if (!sink.write(kHeartbeat.data(), kHeartbeat.size())) return false;
      }
      if ((ends_with_answer && answered) || ended) {
        sink.done();
        return true;
      }
      lock.lock();
    }
  }

  void HandleGet(const httplib::Request& request, httplib::Response& response) {
    if (!AcceptsType(request, "text/event-stream") || !request.has_header("Accept")) {
      Refuse(response, 406, kInvalidRequest, "Not Acceptable: GET /mcp opens an SSE stream; Accept text/event-stream");
      return;
    }
    std::shared_ptr<HttpSession> session = SessionOf(request, response);
    if (!session) return;
    std::shared_ptr<void> use = UseSession(session);
    auto outbox = std::make_shared<Outbox>();
    {
      std::lock_guard lock(session->mutex);
      if (session->get_stream && !session->get_stream->closed) {
        Refuse(response, 409, kInvalidRequest,
               "Conflict: this session already has its GET stream open (one per session)");
        return;
      }
      outbox->messages.swap(session->backlog);
      session->backlog_overflow_reported = false;
      session->get_stream = outbox;
    }
    const auto forget = [session, outbox] {
      outbox->closed = true;
      if (session->get_stream == outbox) session->get_stream = nullptr;
      // What arrived meanwhile waits for the next GET stream.
      for (std::string& message : outbox->messages) session->backlog.push_back(std::move(message));
      outbox->messages.clear();
    };
    RespondWithStream(response, session, outbox, forget, std::move(use), /*ends_with_answer=*/false);
  }

  void HandleDelete(const httplib::Request& request, httplib::Response& response) {
    std::shared_ptr<HttpSession> session = SessionOf(request, response);
    if (!session) return;
    {
      std::lock_guard lock(sessions_mutex_);
      auto found = sessions_.find(session->id);
      if (found == sessions_.end() || found->second != session) {
        Refuse(response, 404, kInvalidRequest, "Session not found: " + Quote(session->id) + " has ended");
        return;
      }
      sessions_.erase(found);
    }
    EndSession(*session);
    response.status = 200;
  }

  // Routes one message the session's server sends: an answer to the POST
  // that asked; a message of a running call (`related`: its request id)
  // to that call's POST stream, and progress to the POST whose call
  // carries its token; the rest to the session's GET stream, else to any
  // open POST stream, else to the backlog the next GET stream starts with.
  // A call whose POST asked for JSON only (or whose stream is gone) has
  // its messages routed like the rest.
  void Route(HttpSession& session, std::string_view line, const McpOutgoing& outgoing) {
    std::lock_guard lock(session.mutex);
    if (session.ended) return;
    std::shared_ptr<Outbox> target;
    if (outgoing.is_answer) {
      auto found = session.by_request_id.find(outgoing.id_json);
      if (found != session.by_request_id.end()) {
        target = found->second;
      } else if (outgoing.id_json == "null" && session.submitting) {
        target = session.submitting;  // the server could not read the line being submitted
      }
      if (!target || target->closed) return;  // its client went away: nobody to tell
      target->messages.emplace_back(line);
      target->answered = true;
      session.changed.notify_all();
      return;
    }
    if (!outgoing.related_request_id_json.empty()) {
      auto found = session.by_request_id.find(outgoing.related_request_id_json);
      if (found != session.by_request_id.end() && !found->second->closed && !found->second->answer_only &&
          !found->second->answered) {
        target = found->second;
      }
    }
    if (!target && !outgoing.progress_token.empty()) {
      auto found = session.by_progress_token.find(outgoing.progress_token);
      if (found != session.by_progress_token.end() && !found->second->closed) target = found->second;
    }
    if (!target && session.get_stream && !session.get_stream->closed) target = session.get_stream;
    if (!target) {
      for (auto& [id, outbox] : session.by_request_id) {
        if (!outbox->closed && !outbox->answer_only) {
          target = outbox;
          break;
        }
      }
    }
    if (target) {
      target->messages.emplace_back(line);
    } else {
      if (session.backlog.size() >= options_.max_backlog_messages) {
        session.backlog.pop_front();
        if (!session.backlog_overflow_reported) {
          std::fprintf(stderr,
                       "toolvfs mcp: warning: session %s: no stream open for %zu server messages; dropping the "
                       "oldest\n",
                       session.id.c_str(), options_.max_backlog_messages);
          session.backlog_overflow_reported = true;
        }
      }
      session.backlog.emplace_back(line);
    }
    session.changed.notify_all();
  }

  // Ends a session already removed from sessions_: its streams close, its
  // running calls are cancelled and waited for, its resources released.
  void EndSession(HttpSession& session) {
    std::lock_guard submit(session.submit_mutex);
    std::vector<std::string> running;
    {
      std::lock_guard lock(session.mutex);
      if (session.ended) return;
      for (const auto& [id, outbox] : session.by_request_id) running.push_back(id);
    }
    for (const std::string& id : running) {
      const std::string cancel =
          R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":)" + id +
          R"(,"reason":"the session ended"}})";
      session.server->Submit(cancel, session.send);
    }
    {
      std::lock_guard lock(session.mutex);
      session.ended = true;
      session.changed.notify_all();
    }
    session.server.reset();  // waits for the calls, which now see `ended`
    session.backend.reset();
  }

  std::vector<std::shared_ptr<HttpSession>> AllSessions() const {
    std::lock_guard lock(sessions_mutex_);
    std::vector<std::shared_ptr<HttpSession>> all;
    for (const auto& [id, session] : sessions_) all.push_back(session);
    return all;
  }

  void EndAllSessions() {
    std::map<std::string, std::shared_ptr<HttpSession>> sessions;
    {
      std::lock_guard lock(sessions_mutex_);
      sessions.swap(sessions_);
    }
    for (auto& [id, session] : sessions) EndSession(*session);
  }

  void ExpireIdleSessions() {
    const auto tick = std::min<std::chrono::milliseconds>(std::chrono::seconds(1),
                                                          std::max<std::chrono::milliseconds>(
                                                              options_.session_idle_timeout / 4,
                                                              std::chrono::milliseconds(10)));
    std::unique_lock lock(reaper_mutex_);
    while (!reaper_wake_.wait_for(lock, tick, [this] { return stopping_; })) {
      lock.unlock();
      const int64_t now = SteadyMilliseconds();
      std::vector<std::shared_ptr<HttpSession>> expired;
      {
        std::lock_guard sessions_lock(sessions_mutex_);
        for (auto it = sessions_.begin(); it != sessions_.end();) {
          HttpSession& session = *it->second;
          if (session.in_use.load() == 0 &&
              now - session.last_used_ms.load() >= options_.session_idle_timeout.count()) {
            expired.push_back(it->second);
            it = sessions_.erase(it);
          } else {
            ++it;
          }
        }
      }
      for (auto& session : expired) {
        std::fprintf(stderr, "toolvfs mcp: session %s expired after %lld ms idle\n", session->id.c_str(),
                     static_cast<long long>(options_.session_idle_timeout.count()));
        EndSession(*session);
      }
      lock.lock();
    }
  }

  McpHttpOptions options_;
  McpServerOptions server_options_;
  std::mutex parser_mutex_;  // parser_, shared by the HTTP worker threads
  MessageParser parser_;
  McpHttpSessionFactory factory_;
  GuardedHttpServer http_;
  uint16_t port_ = 0;
  std::atomic<bool> stop_requested_{false};
  std::atomic<bool> serving_{false};  // Serve() has started and not yet left the listener

  mutable std::mutex sessions_mutex_;
  std::map<std::string, std::shared_ptr<HttpSession>> sessions_;
  size_t pending_sessions_ = 0;  // being made by an initialize

  std::mutex reaper_mutex_;
  std::condition_variable reaper_wake_;
  bool stopping_ = false;
};

Result<std::unique_ptr<McpHttpTransport>> McpHttpTransport::Bind(McpHttpOptions options,
                                                                 McpServerOptions server_options,
                                                                 McpHttpSessionFactory factory) {
  auto impl = std::make_unique<Impl>(std::move(options), std::move(server_options), std::move(factory));
  TOOLVFS_RETURN_IF_ERROR(impl->Bind());
  return std::unique_ptr<McpHttpTransport>(new McpHttpTransport(std::move(impl)));
}

McpHttpTransport::McpHttpTransport(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
McpHttpTransport::~McpHttpTransport() { impl_->Stop(); }
uint16_t McpHttpTransport::port() const { return impl_->port(); }
Status McpHttpTransport::Serve() { return impl_->Serve(); }
void McpHttpTransport::Stop() { impl_->Stop(); }
size_t McpHttpTransport::session_count() const { return impl_->session_count(); }

}  // namespace toolvfs
