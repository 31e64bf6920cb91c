// http.get and http.post (SPEC.md §3.2–3.3, §4.3) with libcurl.
//
// A request goes: params checked -> URL normalized (policy/url.h) -> every
// ${VAR} in the headers checked against network.envs and the URL against
// the network policy, both through the gate -> variables substituted ->
// one curl transfer per hop. curl never follows a redirect itself: each
// Location is normalized and authorized like a new request (the user can be
// asked about it, a denial ends the request naming that hop, and nothing of
// the denied hop's answer reaches the tool), at most HttpSettings::
// max_redirects times. What comes back is scrubbed of every substituted
// value (SecretScrubber) before the tool sees it, error messages included.
//
// curl is handed NormalizedUrl::ToString(), so it connects to the very
// host, port and path the policy decided on; TLS verification keeps curl's
// defaults (on). The whole request, redirects included, has one deadline:
// HttpSettings::timeout; a request the tool cancels (or a run that ends)
// stops within about a second, when curl next reports progress.
#include <curl/curl.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/text.h"
#include "host/methods.h"
#include "policy/secret_scrubber.h"
#include "core/url.h"
#include "protocol/base64.h"

namespace toolvfs {
namespace {

using Clock = std::chrono::steady_clock;

struct Header {
  std::string name;
  std::string value;
  bool has_secret = false;  // a ${VAR} was substituted into the value
};

// One hop of a request.
struct HttpRequest {
  std::string_view method;  // "GET" | "POST": the operation the gate sees
  NormalizedUrl url;
  std::vector<Header> headers;
  std::optional<std::string> body;  // POST only
};

struct HttpResponse {
  long status = 0;
  std::vector<Header> headers;
  std::string body;
  std::optional<std::string> location;  // a redirect target, resolved against the request URL
};

struct CurlEasyDeleter {
  void operator()(CURL* easy) const { curl_easy_cleanup(easy); }
};
using CurlEasy = std::unique_ptr<CURL, CurlEasyDeleter>;

struct CurlHeaderListDeleter {
  void operator()(curl_slist* list) const { curl_slist_free_all(list); }
};
using CurlHeaderList = std::unique_ptr<curl_slist, CurlHeaderListDeleter>;

char LowerAscii(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool EqualsIgnoringCase(std::string_view a, std::string_view b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](char x, char y) { return LowerAscii(x) == LowerAscii(y); });
}

bool IsOneOf(std::string_view name, std::span<const std::string_view> names) {
  return std::any_of(names.begin(), names.end(),
                     [&](std::string_view other) { return EqualsIgnoringCase(name, other); });
}

// --- Request headers

// Set by the host, never by the tool: Host would send the request to
// another virtual host than the one the policy checked, the framing
// headers could smuggle a second request, and Accept-Encoding is chosen by
// the host so that it sees (and scrubs) the decoded body.
constexpr std::string_view kHostOwnedHeaders[] = {"Host", "Content-Length", "Transfer-Encoding",
                                                  "Accept-Encoding"};

// What browsers drop when a redirect turns a POST into a GET.
constexpr std::string_view kBodyHeaders[] = {"Content-Type", "Content-Encoding", "Content-Language",
                                             "Content-Location"};

// What describes the bytes on the wire rather than the body a tool gets.
constexpr std::string_view kWireHeaders[] = {"Content-Encoding", "Content-Length"};

Status CheckHeaderName(std::string_view name) {
  constexpr std::string_view kTokenPunctuation = "!#$%&'*+-.^_`|~";
  bool is_token = !name.empty() && std::all_of(name.begin(), name.end(), [&](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           kTokenPunctuation.find(c) != std::string_view::npos;
  });
  if (!is_token) {
    return InvalidArgumentError("Invalid params: header name " + Quote(name) + " is not an HTTP token");
  }
  if (IsOneOf(name, kHostOwnedHeaders)) {
    return InvalidArgumentError("Invalid params: header " + Quote(name) +
                                " is set by the host, not the tool");
  }
  return OkStatus();
}

// A control character would end the header line (CR, LF) or be cut by
// curl (NUL); a tab is the one a value may hold.
bool HasControlCharacter(std::string_view value) {
  return std::any_of(value.begin(), value.end(), [](char c) {
    auto byte = static_cast<unsigned char>(c);
    return (byte < 0x20 && c != '\t') || byte == 0x7F;
  });
}

bool IsVariableName(std::string_view name) {
  auto is_start = [](char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; };
  return !name.empty() && is_start(name[0]) &&
         std::all_of(name.begin(), name.end(), [&](char c) { return is_start(c) || (c >= '0' && c <= '9'); });
}

// `value` with each ${NAME} replaced by expand(NAME). A "${" that does not
// start a reference to a valid name is an error, not literal text: a typo
// must not send "${GITHUB_TOKEN" to a server.
template <typename Expand>
Result<std::string> ExpandVariables(std::string_view header, std::string_view value, Expand&& expand) {
  std::string out;
  size_t position = 0;
  for (size_t start = value.find("${"); start != std::string_view::npos; start = value.find("${", position)) {
    size_t end = value.find('}', start);
    std::string_view name = end == std::string_view::npos ? "" : value.substr(start + 2, end - start - 2);
    if (!IsVariableName(name)) {
      return InvalidArgumentError("Invalid params: header " + Quote(header) +
                                  " has a '${' that is not a ${NAME} reference");
    }
    out += value.substr(position, start - position);
    TOOLVFS_ASSIGN_OR_RETURN(std::string replacement, expand(name));
    out += replacement;
    position = end + 1;
  }
  out += value.substr(position);
  return out;
}

Result<std::vector<Header>> ParseHeaders(const Params& params) {
  std::vector<Header> headers;
  if (!params.Has("headers")) return headers;
  TOOLVFS_ASSIGN_OR_RETURN(std::vector<Params> objects, params.ObjectArray("headers"));
  for (const Params& object : objects) {
    TOOLVFS_RETURN_IF_ERROR(object.ExpectOnly({"name", "value"}));
    TOOLVFS_ASSIGN_OR_RETURN(std::string_view name, object.String("name"));
    TOOLVFS_ASSIGN_OR_RETURN(std::string_view value, object.String("value"));
    TOOLVFS_RETURN_IF_ERROR(CheckHeaderName(name));
    if (HasControlCharacter(value)) {
      return InvalidArgumentError("Invalid params: the value of header " + Quote(name) +
                                  " contains a control character");
    }
    TOOLVFS_RETURN_IF_ERROR(ExpandVariables(name, value, [](std::string_view) {
                              return Result<std::string>(std::string());
                            }).status());
    headers.push_back(Header{std::string(name), std::string(value), false});
  }
  return headers;
}

// The variables the headers refer to, each once, in order.
std::vector<std::string> ReferencedVariables(const std::vector<Header>& headers) {
  std::vector<std::string> names;
  for (const Header& header : headers) {
    // Syntax errors were reported by ParseHeaders.
    static_cast<void>(ExpandVariables(header.name, header.value, [&](std::string_view name) {
      if (std::find(names.begin(), names.end(), name) == names.end()) names.emplace_back(name);
      return Result<std::string>(std::string());
    }));
  }
  return names;
}

// The host's value of `name`, or null when it has none.
const std::string* FindVariable(const std::map<std::string, std::string>* environment,
                                std::string_view name) {
  if (environment == nullptr) return nullptr;
  auto found = environment->find(std::string(name));
  return found == environment->end() ? nullptr : &found->second;
}

// Replaces the ${VAR} references with the host's values (the policy has
// allowed every one) and returns the values substituted, for the scrubber.
// Messages name the variable, never its value.
Result<std::vector<std::string>> SubstituteVariables(std::vector<Header>& headers,
                                                     const MethodContext& context) {
  std::vector<std::string> secrets;
  for (Header& header : headers) {
    auto lookup = [&](std::string_view name) -> Result<std::string> {
      const std::string* value = FindVariable(context.host_environment, name);
      if (value == nullptr) {
        return NotFoundError("The variable " + std::string(name) + " in header " + Quote(header.name) +
                             " is not set in the host's environment");
      }
      if (HasControlCharacter(*value)) {
        return InvalidArgumentError("The value of the variable " + std::string(name) +
                                    " contains a control character and cannot go in a header");
      }
      header.has_secret = true;
      secrets.push_back(*value);
      return *value;
    };
    TOOLVFS_ASSIGN_OR_RETURN(header.value, ExpandVariables(header.name, header.value, lookup));
  }
  return secrets;
}

Result<CurlHeaderList> BuildHeaderList(const std::vector<Header>& headers) {
  CurlHeaderList list;
  auto append = [&list](const std::string& line) {
    curl_slist* appended = curl_slist_append(list.get(), line.c_str());
    if (appended == nullptr) return false;
    static_cast<void>(list.release());
    list.reset(appended);
    return true;
  };
  // "Expect:" stops curl's 100-continue wait before larger POST bodies.
  bool ok = append("Expect:");
  for (const Header& header : headers) {
    // "Name;" is curl's spelling of a header with an empty value ("Name:"
    // would remove it).
    ok = ok && append(header.value.empty() ? header.name + ";" : header.name + ": " + header.value);
  }
  if (!ok) return ResourceExhaustedError("Out of memory building the request headers");
  return list;
}

// --- One transfer

// What the callbacks collect, and whether a limit stopped the transfer.
struct Receiver {
  uint64_t limit;
  std::vector<Header> headers;
  uint64_t header_bytes = 0;
  std::string body;
  bool over_limit = false;
};

std::string_view TrimSpace(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() &&
         (text.back() == ' ' || text.back() == '\t' || text.back() == '\r' || text.back() == '\n')) {
    text.remove_suffix(1);
  }
  return text;
}

size_t ReceiveBody(char* data, size_t size, size_t count, void* user) {
  auto& receiver = *static_cast<Receiver*>(user);
  size_t bytes = size * count;
  if (receiver.body.size() + bytes > receiver.limit) {
    receiver.over_limit = true;
    return 0;  // curl ends the transfer with CURLE_WRITE_ERROR
  }
  receiver.body.append(data, bytes);
  return bytes;
}

// Called once per header line, the status line and the blank line included.
size_t ReceiveHeader(char* data, size_t size, size_t count, void* user) {
  auto& receiver = *static_cast<Receiver*>(user);
  size_t bytes = size * count;
  receiver.header_bytes += bytes;
  if (receiver.header_bytes > receiver.limit) {
    receiver.over_limit = true;
    return 0;
  }
  std::string_view line(data, bytes);
  if (line.starts_with("HTTP/")) {
    receiver.headers.clear();  // a new response (after a 1xx): only the last one's headers count
  } else if (!line.empty() && (line.front() == ' ' || line.front() == '\t')) {
    if (!receiver.headers.empty()) receiver.headers.back().value += " " + std::string(TrimSpace(line));
  } else if (size_t colon = line.find(':'); colon != std::string_view::npos) {
    receiver.headers.push_back(Header{ToValidUtf8(TrimSpace(line.substr(0, colon))),
                                      ToValidUtf8(TrimSpace(line.substr(colon + 1)))});
  }
  return bytes;
}

// Sets the options of one transfer; the first option curl refuses fails
// the request (an older libcurl without CURLOPT_PROTOCOLS_STR must not
// quietly allow every protocol).
class CurlOptions {
 public:
  explicit CurlOptions(CURL* easy) : easy_(easy) {}
  template <typename Value>
  CurlOptions& Set(CURLoption option, Value value) {
    CURLcode code = curl_easy_setopt(easy_, option, value);
    if (first_error_ == CURLE_OK) first_error_ = code;
    return *this;
  }
  Status status() const {
    if (first_error_ == CURLE_OK) return OkStatus();
    return InternalError(std::string("libcurl refused an option: ") + curl_easy_strerror(first_error_));
  }

 private:
  CURL* easy_;
  CURLcode first_error_ = CURLE_OK;
};

// curl's progress callback, called about once a second even when nothing
// moves: non-zero aborts the transfer (CURLE_ABORTED_BY_CALLBACK).
int AbortIfCancelled(void* scope, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  return static_cast<const RequestScope*>(scope)->cancelled() ? 1 : 0;
}

Status EnsureCurlInitialized() {
  static const CURLcode code = curl_global_init(CURL_GLOBAL_DEFAULT);  // once, thread-safe
  if (code == CURLE_OK) return OkStatus();
  return InternalError(std::string("Cannot initialize libcurl: ") + curl_easy_strerror(code));
}

// "GET http://host/path", for messages.
std::string RequestLine(const HttpRequest& request) {
  return std::string(request.method) + " " + request.url.ToString();
}

// Performs `request` without following redirects, within `deadline`,
// unless `scope` is cancelled.
Result<HttpResponse> Transfer(const HttpRequest& request, const HttpSettings& settings,
                              Clock::time_point deadline, const RequestScope& scope) {
  TOOLVFS_RETURN_IF_ERROR(EnsureCurlInitialized());
  auto remaining = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  std::string timed_out = RequestLine(request) + " timed out after " +
                          std::to_string(settings.timeout.count()) + " ms (the http timeout)";
  if (remaining.count() <= 0) return TimeoutError(timed_out);
  std::string cancelled = RequestLine(request) + " was cancelled";
  if (scope.cancelled()) return CancelledError(cancelled);

  CurlEasy easy(curl_easy_init());
  if (easy == nullptr) return ResourceExhaustedError("Cannot create a libcurl handle");
  TOOLVFS_ASSIGN_OR_RETURN(CurlHeaderList header_list, BuildHeaderList(request.headers));
  std::string url = request.url.ToString();
  Receiver receiver{.limit = settings.max_body_bytes};
  char error_text[CURL_ERROR_SIZE] = {};
  CurlOptions options(easy.get());
  options.Set(CURLOPT_URL, url.c_str())
      .Set(CURLOPT_PROTOCOLS_STR, "http,https")
      .Set(CURLOPT_REDIR_PROTOCOLS_STR, "http,https")
      .Set(CURLOPT_FOLLOWLOCATION, 0L)
      .Set(CURLOPT_NOSIGNAL, 1L)  // no SIGALRM on worker threads
      .Set(CURLOPT_TIMEOUT_MS, static_cast<long>(remaining.count()))
      .Set(CURLOPT_ACCEPT_ENCODING, "")  // every encoding curl decodes; the tool gets the decoded body
      .Set(CURLOPT_MAXFILESIZE_LARGE,    // an early stop when Content-Length already says too much
           static_cast<curl_off_t>(std::min<uint64_t>(settings.max_body_bytes, INT64_MAX)))
      .Set(CURLOPT_HTTPHEADER, header_list.get())
      .Set(CURLOPT_WRITEFUNCTION, &ReceiveBody)
      .Set(CURLOPT_WRITEDATA, &receiver)
      .Set(CURLOPT_HEADERFUNCTION, &ReceiveHeader)
      .Set(CURLOPT_HEADERDATA, &receiver)
      .Set(CURLOPT_NOPROGRESS, 0L)
      .Set(CURLOPT_XFERINFOFUNCTION, &AbortIfCancelled)
      .Set(CURLOPT_XFERINFODATA, &scope)
      .Set(CURLOPT_ERRORBUFFER, error_text);
  if (request.body) {
    options.Set(CURLOPT_POST, 1L)
        .Set(CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body->size()))
        .Set(CURLOPT_POSTFIELDS, request.body->data());
  }
  TOOLVFS_RETURN_IF_ERROR(options.status());

  CURLcode code = curl_easy_perform(easy.get());
  if (receiver.over_limit || code == CURLE_FILESIZE_EXCEEDED) {
    return TooLargeError(RequestLine(request) + ": the response is larger than the limit of " +
                         std::to_string(settings.max_body_bytes) + " bytes");
  }
  if (code == CURLE_OPERATION_TIMEDOUT) return TimeoutError(timed_out);
  if (code == CURLE_ABORTED_BY_CALLBACK) return CancelledError(cancelled);
  if (code != CURLE_OK) {
    return IoError(RequestLine(request) +
                   " failed: " + (error_text[0] != '\0' ? error_text : curl_easy_strerror(code)));
  }
  HttpResponse response;
  curl_easy_getinfo(easy.get(), CURLINFO_RESPONSE_CODE, &response.status);
  char* location = nullptr;
  if (curl_easy_getinfo(easy.get(), CURLINFO_REDIRECT_URL, &location) == CURLE_OK && location != nullptr) {
    response.location = location;
  }
  response.headers = std::move(receiver.headers);
  response.body = std::move(receiver.body);
  return response;
}

// --- Redirects

bool IsRedirect(long status) {
  return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

// A fragment is never sent to a server, so it takes no part in a request:
// it is dropped (NormalizeUrl rejects it, as a prefix must not have one).
Result<NormalizedUrl> NormalizeRequestUrl(std::string_view url) {
  return NormalizeUrl(url.substr(0, url.find('#')));
}

// The request for the hop `response` redirects `request` to, at `target`
// (its Location, normalized). 301/302/303 turn a POST into a GET without
// body and body headers, as browsers do (307/308 keep it); headers that
// carry a substituted secret are dropped when the origin changes, and stay
// dropped.
HttpRequest NextHop(const HttpRequest& request, const HttpResponse& response, NormalizedUrl target) {
  HttpRequest next{request.method, std::move(target), request.headers, request.body};
  if (request.body && response.status != 307 && response.status != 308) {
    next.method = "GET";
    next.body.reset();
    std::erase_if(next.headers, [](const Header& header) { return IsOneOf(header.name, kBodyHeaders); });
  }
  if (!next.url.SameOrigin(request.url)) {
    std::erase_if(next.headers, [](const Header& header) { return header.has_secret; });
  }
  return next;
}

// Performs `request`, following allowed redirects, and returns the last
// response.
Result<HttpResponse> FollowRedirects(HttpRequest request, const MethodContext& context, RequestScope& scope,
                                     const SecretScrubber& scrubber) {
  Clock::time_point deadline = Clock::now() + context.http.timeout;
  for (int redirects = 0;; ++redirects) {
    TOOLVFS_ASSIGN_OR_RETURN(HttpResponse response, Transfer(request, context.http, deadline, scope));
    if (!IsRedirect(response.status) || !response.location) return response;
    if (redirects == context.http.max_redirects) {
      return TooLargeError(RequestLine(request) + " redirected again after " + std::to_string(redirects) +
                           " redirects (the limit)");
    }
    Result<NormalizedUrl> target = NormalizeRequestUrl(*response.location);
    if (!target.ok()) {
      // Refused like a denied hop, and recorded with what was refused.
      static_cast<void>(context.gate.Authorize(
          scope, request.method, scrubber.Scrub(*response.location),
          PolicyDecision::Deny("redirects (only to a valid http or https URL)")));
      return PermissionDeniedError(RequestLine(request) + " was redirected to a URL that is not followed: " +
                                   target.status().message());
    }
    HttpRequest next = NextHop(request, response, std::move(target).value());
    Status allowed = context.gate.Authorize(scope, next.method, scrubber.Scrub(next.url.ToString()),
                                            context.gate.policy().network.Check(next.url));
    if (!allowed.ok()) {
      return Status(allowed.code(),
                    allowed.message() + " (redirected from " + Quote(request.url.ToString()) + ")");
    }
    request = std::move(next);
  }
}

// --- The answer

// {status, headers: [{name, value}], body, encoding?}, scrubbed: the body
// and every header's name and value. A body that is not UTF-8 goes as
// base64. Content-Encoding and Content-Length describe the bytes on the
// wire: they are left out when the tool gets other bytes (curl decoded
// them, or the scrubber changed them).
WireMessage SerializeResponse(const RequestId& id, HttpResponse& response, const SecretScrubber& scrubber) {
  std::string body = scrubber.Scrub(response.body);
  bool decoded = std::any_of(response.headers.begin(), response.headers.end(), [](const Header& header) {
    return EqualsIgnoringCase(header.name, "Content-Encoding") &&
           !EqualsIgnoringCase(header.value, "identity");
  });
  if (decoded || body != response.body) {
    std::erase_if(response.headers, [](const Header& header) { return IsOneOf(header.name, kWireHeaders); });
  }
  bool is_text = IsValidUtf8(body);
  if (!is_text) body = Base64Encode(body);
  return SerializeResult(
      id,
      [&](JsonWriter& writer) {
        writer.StartObject();
        WriteJsonKey(writer, "status");
        writer.Int64(response.status);
        WriteJsonKey(writer, "headers");
        writer.StartArray();
        for (const Header& header : response.headers) {
          writer.StartObject();
          // A server can echo a secret in a header's name as well as in its
          // value (reflected headers): both are scrubbed.
          WriteJsonKey(writer, "name");
          WriteJsonString(writer, ToValidUtf8(scrubber.Scrub(header.name)));
          WriteJsonKey(writer, "value");
          WriteJsonString(writer, ToValidUtf8(scrubber.Scrub(header.value)));
          writer.EndObject();
        }
        writer.EndArray();
        WriteJsonKey(writer, "body");
        WriteJsonString(writer, body);
        if (!is_text) {
          WriteJsonKey(writer, "encoding");
          WriteJsonString(writer, "base64");
        }
        writer.EndObject();
      },
      body.size() + 256);
}

// --- The methods

// The parsed request: http.get {url, headers?} or http.post {url, headers?,
// body, encoding?}.
Result<HttpRequest> ParseRequest(const Params& params, std::string_view method) {
  if (method == "GET") {
    TOOLVFS_RETURN_IF_ERROR(params.ExpectOnly({"url", "headers"}));
  } else {
    TOOLVFS_RETURN_IF_ERROR(params.ExpectOnly({"url", "headers", "body", "encoding"}));
  }
  TOOLVFS_ASSIGN_OR_RETURN(std::string_view url, params.String("url"));
  HttpRequest request{.method = method};
  TOOLVFS_ASSIGN_OR_RETURN(request.url, NormalizeRequestUrl(url));
  TOOLVFS_ASSIGN_OR_RETURN(request.headers, ParseHeaders(params));
  if (method == "GET") return request;

  TOOLVFS_ASSIGN_OR_RETURN(std::string_view body, params.String("body"));
  TOOLVFS_ASSIGN_OR_RETURN(std::optional<std::string_view> encoding, params.OptionalString("encoding"));
  if (encoding && *encoding != "base64") {
    return InvalidArgumentError(
        "Invalid params: 'encoding' must be \"base64\" (or absent for UTF-8 text), got " + Quote(*encoding));
  }
  if (encoding) {
    TOOLVFS_ASSIGN_OR_RETURN(request.body, Base64Decode(body));
  } else {
    request.body = std::string(body);
  }
  return request;
}

// The first hop through the gate: a header variable outside network.envs
// is a denial naming it (recorded like any denial, and never asked about:
// the user cannot grant a variable at the prompt), then the URL itself.
Status AuthorizeRequest(const HttpRequest& request, const MethodContext& context, RequestScope& scope) {
  const NetworkPolicy& network = context.gate.policy().network;
  std::string target = request.url.ToString();
  for (const std::string& name : ReferencedVariables(request.headers)) {
    if (network.MayUseVariable(name)) continue;
    return context.gate.Authorize(scope, request.method, target,
                                  PolicyDecision::Deny("network.envs without \"" + name + "\"",
                                                       "add \"" + name + "\" to network.envs"));
  }
  return context.gate.Authorize(scope, request.method, target, network.Check(request.url));
}

template <const std::string_view& method>
Result<WireMessage> ServeHttp(const Message& message, const MethodContext& context, RequestScope& scope) {
  TOOLVFS_ASSIGN_OR_RETURN(HttpRequest request, ParseRequest(message.params(), method));
  TOOLVFS_RETURN_IF_ERROR(AuthorizeRequest(request, context, scope));
  TOOLVFS_ASSIGN_OR_RETURN(std::vector<std::string> secrets, SubstituteVariables(request.headers, context));
  SecretScrubber scrubber(secrets);
  Result<HttpResponse> response = FollowRedirects(std::move(request), context, scope, scrubber);
  if (!response.ok()) return Status(response.status().code(), scrubber.Scrub(response.status().message()));
  return SerializeResponse(message.id(), *response, scrubber);
}

constexpr std::string_view kGet = "GET";
constexpr std::string_view kPost = "POST";

constexpr MethodSpec kHttpMethods[] = {
    {"http.get", &Handle<ServeHttp<kGet>>, true},
    {"http.post", &Handle<ServeHttp<kPost>>, true},
};

}  // namespace

std::span<const MethodSpec> HttpMethods() { return kHttpMethods; }

}  // namespace toolvfs
