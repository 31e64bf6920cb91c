// A raw HTTP/1.1 client for `toolvfs mcp --http` (one request per
// connection, read to the end) and a running server with it: for the
// tests that drive the transport by hand (mcp_http_test,
// mcp_postgres_session_test).
#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/unique_fd.h"
#include "mcp_http_server_process.h"

namespace toolvfs {

// An initialize request, as a client opens a session with.
inline constexpr std::string_view kInitialize =
    R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25",)"
    R"("capabilities":{},"clientInfo":{"name":"raw","version":"1"}}})";

// The lines of `text`, without their "\n" (and a "\r" before it).
inline std::vector<std::string> SplitLines(std::string_view text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (line.ends_with('\r')) line.remove_suffix(1);
    lines.emplace_back(line);
    start = end + 1;
  }
  return lines;
}

struct HttpResponse {
  int status = 0;
  std::map<std::string, std::string> headers;  // names in lower case
  std::string body;

  std::string Header(const std::string& name) const {
    auto found = headers.find(name);
    return found == headers.end() ? std::string() : found->second;
  }
  // The JSON-RPC messages of the body: the body itself for JSON, each
  // `data:` line of an SSE stream.
  std::vector<std::string> Messages() const {
    if (Header("content-type").find("text/event-stream") == std::string::npos) return {body};
    std::vector<std::string> messages;
    for (const std::string& line : SplitLines(body)) {
      if (line.starts_with("data: ")) messages.push_back(line.substr(6));
    }
    return messages;
  }
  // The last message (a request's answer comes last).
  std::string Answer() const {
    std::vector<std::string> all = Messages();
    return all.empty() ? std::string() : all.back();
  }
};

inline std::ostream& operator<<(std::ostream& stream, const HttpResponse& response) {
  return stream << "HTTP " << response.status << " " << response.body;
}

inline std::string Lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

// One request per connection (Connection: close), read to the end; with
// `headers_only` the connection is left open after the headers and handed
// back in `*open` (an SSE stream that does not end).
// Connects to 127.0.0.1:`port` from `source_ip` (another loopback
// address, to be another peer) or from wherever the kernel picks; an
// invalid fd when that fails.
inline UniqueFd ConnectToLoopback(uint16_t port, const std::string& source_ip = "") {
  UniqueFd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!source_ip.empty()) {
    sockaddr_in source{};
    source.sin_family = AF_INET;
    if (inet_pton(AF_INET, source_ip.c_str(), &source.sin_addr) != 1 ||
        bind(fd.get(), reinterpret_cast<sockaddr*>(&source), sizeof source) != 0) {
      return UniqueFd();
    }
  }
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) return UniqueFd();
  return fd;
}

class RawHttpClient {
 public:
  explicit RawHttpClient(uint16_t port, std::string source_ip = "") : port_(port), source_ip_(std::move(source_ip)) {}

  HttpResponse Send(const std::string& method, const std::vector<std::string>& headers, const std::string& body,
                    UniqueFd* open = nullptr) const {
    HttpResponse response;
    UniqueFd fd = ConnectToLoopback(port_, source_ip_);
    if (!fd) {
      ADD_FAILURE() << "cannot connect to port " << port_ << (source_ip_.empty() ? "" : " from " + source_ip_);
      return response;
    }
    timeval timeout{30, 0};
    setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    std::string request = method + " /mcp HTTP/1.1\r\nConnection: close\r\n";
    bool has_length = false;
    bool has_host = false;
    for (const std::string& header : headers) {
      request += header + "\r\n";
      // A chunked body carries its own lengths.
      if (Lower(header).starts_with("content-length:") || Lower(header).starts_with("transfer-encoding:")) {
        has_length = true;
      }
      if (Lower(header).starts_with("host:")) has_host = true;
    }
    if (!has_host) request += "Host: 127.0.0.1:" + std::to_string(port_) + "\r\n";
    if (!body.empty() && !has_length) request += "Content-Length: " + std::to_string(body.size()) + "\r\n";
    request += "\r\n" + body;
    if (::send(fd.get(), request.data(), request.size(), MSG_NOSIGNAL) < 0) {
      // A server that refuses early may close before the body is sent.
    }
    std::string data;
    char buffer[65536];
    size_t header_end;
    while ((header_end = data.find("\r\n\r\n")) == std::string::npos) {
      const ssize_t got = recv(fd.get(), buffer, sizeof buffer, 0);
      if (got <= 0) return response;
      data.append(buffer, static_cast<size_t>(got));
    }
    std::vector<std::string> head = SplitLines(std::string_view(data).substr(0, header_end));
    if (head.empty()) return response;
    response.status = std::atoi(head[0].substr(head[0].find(' ') + 1).c_str());
    for (size_t i = 1; i < head.size(); ++i) {
      const std::string& line = head[i];
      const size_t colon = line.find(':');
      if (colon == std::string::npos) continue;
      std::string value = line.substr(colon + 1);
      value.erase(0, value.find_first_not_of(' '));
      response.headers[Lower(line.substr(0, colon))] = value;
    }
    if (open != nullptr) {
      *open = std::move(fd);
      return response;
    }
    std::string rest = data.substr(header_end + 4);
    for (ssize_t got; (got = recv(fd.get(), buffer, sizeof buffer, 0)) > 0;) {
      rest.append(buffer, static_cast<size_t>(got));
    }
    if (Lower(response.Header("transfer-encoding")) == "chunked") {
      size_t at = 0;
      while (at < rest.size()) {
        const size_t line_end = rest.find("\r\n", at);
        if (line_end == std::string::npos) break;
        const size_t size = std::stoul(rest.substr(at, line_end - at), nullptr, 16);
        if (size == 0) break;
        response.body += rest.substr(line_end + 2, size);
        at = line_end + 2 + size + 2;
      }
    } else {
      response.body = rest;
    }
    return response;
  }

 private:
  uint16_t port_;
  std::string source_ip_;
};

// A running `toolvfs mcp --http 127.0.0.1:0` and a client for it.
class HttpServer {
 public:
  HttpServer(const std::filesystem::path& directory, const std::vector<std::string>& extra_arguments)
      : process_(directory / "proj", (directory / ("server-" + std::to_string(counter_++) + ".log")).string(),
                 extra_arguments) {}

  std::string Log() const { return process_.Log(); }
  int Stop() { return process_.Stop(); }
  pid_t pid() const { return process_.pid(); }

  // A client; from `source_ip` (a loopback address) to be another peer.
  RawHttpClient client(const std::string& source_ip = "") const { return RawHttpClient(process_.port(), source_ip); }
  uint16_t port() const { return process_.port(); }

  static std::vector<std::string> JsonHeaders(const std::string& session = "") {
    std::vector<std::string> headers = {"Content-Type: application/json",
                                        "Accept: application/json, text/event-stream"};
    if (!session.empty()) {
      headers.push_back("Mcp-Session-Id: " + session);
      headers.push_back("MCP-Protocol-Version: 2025-11-25");
    }
    return headers;
  }

  HttpResponse Post(const std::string& session, const std::string& body,
                    std::vector<std::string> extra_headers = {}, const std::string& source_ip = "") const {
    std::vector<std::string> headers = JsonHeaders(session);
    headers.insert(headers.end(), extra_headers.begin(), extra_headers.end());
    return client(source_ip).Send("POST", headers, body);
  }

  // initialize + notifications/initialized; the session id.
  std::string Initialize(std::vector<std::string> extra_headers = {}, const std::string& source_ip = "") const {
    HttpResponse answer = Post("", std::string(kInitialize), extra_headers, source_ip);
    EXPECT_EQ(answer.status, 200) << answer;
    const std::string session = answer.Header("mcp-session-id");
    EXPECT_EQ(session.size(), 32u) << answer;
    HttpResponse initialized =
        Post(session, R"({"jsonrpc":"2.0","method":"notifications/initialized"})", extra_headers, source_ip);
    EXPECT_EQ(initialized.status, 202) << initialized;
    return session;
  }

  bool Alive() const {
    const std::string session = Initialize();
    HttpResponse pong = Post(session, R"({"jsonrpc":"2.0","id":"p","method":"ping"})");
    return pong.status == 200 && pong.Answer().find(R"("result":{})") != std::string::npos;
  }

 private:
  static inline int counter_ = 0;
  McpHttpServerProcess process_;
};

}  // namespace toolvfs
