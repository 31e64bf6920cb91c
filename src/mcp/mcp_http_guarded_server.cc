#include "mcp/mcp_http_guarded_server.h"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>

#include "core/unique_fd.h"
#include "protocol/jsonrpc.h"

namespace toolvfs {
namespace {

using Clock = std::chrono::steady_clock;

// How often a connection waiting for a request looks whether the server
// stops, so that stopping does not wait for its timeouts.
constexpr std::chrono::milliseconds kStopCheckInterval(50);

std::chrono::milliseconds Milliseconds(time_t seconds, time_t microseconds) {
  return std::chrono::seconds(seconds) + std::chrono::duration_cast<std::chrono::milliseconds>(
                                             std::chrono::microseconds(microseconds));
}

// poll() for `events` on `fd` up to `timeout` (EINTR retried): above 0
// when ready, 0 on timeout, below 0 on an error.
int WaitFor(int fd, short events, std::chrono::milliseconds timeout) {
  pollfd entry{.fd = fd, .events = events, .revents = 0};
  int ready;
  do {
    ready = ::poll(&entry, 1, static_cast<int>(std::max<int64_t>(timeout.count(), 0)));
  } while (ready < 0 && errno == EINTR);
  return ready;
}

// The numeric address of a socket's end ("127.0.0.1", "::1"), and its port.
template <typename GetName>
void NumericAddress(int fd, GetName get_name, std::string& ip, int& port) {
  sockaddr_storage address{};
  socklen_t length = sizeof address;
  if (get_name(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) return;
  std::array<char, NI_MAXHOST> host{};
  std::array<char, NI_MAXSERV> service{};
  if (getnameinfo(reinterpret_cast<sockaddr*>(&address), length, host.data(), host.size(), service.data(),
                  service.size(), NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
    return;
  }
  ip = host.data();
  port = std::atoi(service.data());
}

enum class HeaderRefusal { kNone, kTimeout, kTooLarge };

// One connection's socket as cpp-httplib reads and writes it (its
// SocketStream's semantics: a wait of the read timeout before each recv,
// of the write timeout before each send, a send only while the peer has
// not closed), plus the bounds of each request's header phase. It
// buffers what it receives and keeps the buffer from one request to the
// next (the library's stream, made anew per request, drops pipelined
// bytes). Borrows the descriptor.
class GuardedSocketStream final : public httplib::Stream {
 public:
  // `listener` is the server's listening socket, invalid once it stops.
  GuardedSocketStream(int fd, const HttpHeaderLimits& limits, const std::atomic<socket_t>& listener,
                      std::chrono::milliseconds read_timeout, std::chrono::milliseconds write_timeout)
      : fd_(fd), limits_(limits), listener_(listener), read_timeout_(read_timeout), write_timeout_(write_timeout) {
    NumericAddress(fd_, ::getpeername, peer_ip_, peer_port_);
    NumericAddress(fd_, ::getsockname, local_ip_, local_port_);
  }

  // The header block of the next request must be complete by `deadline`
  // and within the byte cap; `waiting` (the peer's place among its
  // waiting connections) is given back as soon as it is.
  void BeginRequest(Clock::time_point deadline, PeerWaitLimit::Slot waiting) {
    scanner_.Reset();
    header_phase_ = true;
    header_deadline_ = deadline;
    waiting_ = std::move(waiting);
  }

  // The request was answered, or failed: its place is given back if the
  // header block never ended (a request line the library refused).
  void EndRequest() {
    header_phase_ = false;
    waiting_.Release();
  }

  HeaderRefusal refusal() const { return refusal_; }
  bool has_buffered_bytes() const { return buffer_begin_ < buffer_end_; }
  const std::string& peer_ip() const { return peer_ip_; }

  bool is_readable() const override { return has_buffered_bytes() || WaitFor(fd_, POLLIN, ReadWait()) > 0; }

  bool is_writable() const override { return WaitFor(fd_, POLLOUT, write_timeout_) > 0 && PeerIsStillThere(); }

  ssize_t read(char* ptr, size_t size) override {
    if (refusal_ != HeaderRefusal::kNone) return -1;
    if (!has_buffered_bytes()) {
      if (!WaitReadable()) return -1;
      // A body read as large as the buffer goes straight to the caller.
      if (!header_phase_ && size >= buffer_.size()) return Receive(ptr, size);
      const ssize_t got = Receive(buffer_.data(), buffer_.size());
      if (got <= 0) return got;
      buffer_begin_ = 0;
      buffer_end_ = static_cast<size_t>(got);
    }
    size_t handed = std::min(size, buffer_end_ - buffer_begin_);
    if (header_phase_) {
      handed = scanner_.Feed(std::string_view(buffer_.data() + buffer_begin_, handed));
      if (scanner_.header_bytes() > limits_.max_header_bytes) {
        refusal_ = HeaderRefusal::kTooLarge;
        return -1;
      }
      if (scanner_.complete()) {
        header_phase_ = false;
        waiting_.Release();
      }
    }
    std::memcpy(ptr, buffer_.data() + buffer_begin_, handed);
    buffer_begin_ += handed;
    return static_cast<ssize_t>(handed);
  }

  ssize_t write(const char* ptr, size_t size) override {
    // What the library would answer a request cut here is replaced by the
    // 408 or 431 its server sends.
    if (refusal_ != HeaderRefusal::kNone) return -1;
    if (!is_writable()) return -1;
    ssize_t sent;
    do {
      sent = ::send(fd_, ptr, size, MSG_NOSIGNAL);
    } while (sent < 0 && errno == EINTR);
    return sent;
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    ip = peer_ip_;
    port = peer_port_;
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    ip = local_ip_;
    port = local_port_;
  }
  socket_t socket() const override { return fd_; }

 private:
  // How long the next recv may wait: the read timeout, and in the header
  // phase no later than its deadline.
  std::chrono::milliseconds ReadWait() const {
    if (!header_phase_) return read_timeout_;
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(header_deadline_ - Clock::now());
    return std::clamp(left, std::chrono::milliseconds(0), read_timeout_);
  }

  // Waits for bytes to read; false on the read timeout (as the library's
  // stream), an error, the server stopping during the header phase, or
  // the header deadline (then `refusal_` says so).
  bool WaitReadable() {
    if (!header_phase_) return WaitFor(fd_, POLLIN, read_timeout_) > 0;
    // Past the deadline, even bytes already there are not waited for: a
    // client that keeps a byte in flight must not outlast it.
    const Clock::time_point give_up = std::min(header_deadline_, Clock::now() + read_timeout_);
    while (true) {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(give_up - Clock::now());
      if (left.count() <= 0) break;
      const int ready = WaitFor(fd_, POLLIN, std::min(left, kStopCheckInterval));
      if (ready != 0) return ready > 0;
      if (listener_ == INVALID_SOCKET) return false;
    }
    if (Clock::now() >= header_deadline_) refusal_ = HeaderRefusal::kTimeout;
    return false;
  }

  ssize_t Receive(char* into, size_t size) const {
    ssize_t got;
    do {
      got = ::recv(fd_, into, size, 0);
    } while (got < 0 && errno == EINTR);
    return got;
  }

  // The library's is_socket_alive: nothing to read, or something that is
  // not the end of the stream (a client that vanished reads as the end).
  bool PeerIsStillThere() const {
    if (WaitFor(fd_, POLLIN, std::chrono::milliseconds(0)) == 0) return true;
    char byte;
    return ::recv(fd_, &byte, 1, MSG_PEEK | MSG_DONTWAIT) > 0;
  }

  const int fd_;
  const HttpHeaderLimits& limits_;
  const std::atomic<socket_t>& listener_;
  const std::chrono::milliseconds read_timeout_;
  const std::chrono::milliseconds write_timeout_;
  std::string peer_ip_;
  int peer_port_ = 0;
  std::string local_ip_;
  int local_port_ = 0;

  // The library reads headers a byte at a time; one recv serves many.
  std::array<char, 16384> buffer_{};
  size_t buffer_begin_ = 0;
  size_t buffer_end_ = 0;

  bool header_phase_ = false;
  Clock::time_point header_deadline_{};
  HttpHeaderBlockScanner scanner_;
  PeerWaitLimit::Slot waiting_;
  HeaderRefusal refusal_ = HeaderRefusal::kNone;
};

// Writes a refusal the transport's way (a JSON-RPC error body, id null)
// and asks to close. Best effort and without waiting: a client that does
// not read, or still sends, may see the connection reset instead.
void SendRefusal(int fd, std::string_view status_line, std::string_view extra_headers, std::string_view message) {
  const std::string body = R"({"jsonrpc":"2.0","id":null,"error":{"code":)" +
                           std::to_string(kJsonRpcInvalidRequest) + R"(,"message":")" + std::string(message) +
                           R"("}})";
  std::string response = "HTTP/1.1 " + std::string(status_line) +
                         "\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: " +
                         std::to_string(body.size()) + "\r\n" + std::string(extra_headers) + "\r\n" + body;
  ssize_t sent;
  do {
    sent = ::send(fd, response.data(), response.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  } while (sent < 0 && errno == EINTR);
}

void SendHeaderRefusal(int fd, HeaderRefusal refusal, const HttpHeaderLimits& limits) {
  if (refusal == HeaderRefusal::kTimeout) {
    SendRefusal(fd, "408 Request Timeout", "",
                "Request Timeout: the request headers were not complete within " +
                    std::to_string(limits.header_timeout.count()) + " ms");
  } else {
    SendRefusal(fd, "431 Request Header Fields Too Large", "",
                "Request Header Fields Too Large: the request line and headers are limited to " +
                    std::to_string(limits.max_header_bytes) + " bytes");
  }
}

}  // namespace

bool GuardedHttpServer::process_and_close_socket(socket_t sock) {
  const Clock::time_point started = Clock::now();
  UniqueFd connection(sock);
  GuardedSocketStream stream(connection.get(), limits_, svr_sock_, Milliseconds(read_timeout_sec_, read_timeout_usec_),
                             Milliseconds(write_timeout_sec_, write_timeout_usec_));
  PeerWaitLimit::Slot waiting = waiting_.TryTake(stream.peer_ip());
  if (!waiting) {
    SendRefusal(connection.get(), "503 Service Unavailable", "Retry-After: 1\r\n",
                "Service Unavailable: " + std::to_string(limits_.max_waiting_per_peer) +
                    " connections from this address are already waiting to send a request");
    ::shutdown(connection.get(), SHUT_RDWR);
    return false;
  }
  // The library's keep-alive loop (process_server_socket_core): wait for
  // the next request up to the keep-alive timeout, at most
  // keep_alive_max_count_ requests, the last one answered with
  // "Connection: close"; and, unlike it, stop waiting once the server stops.
  const auto await_request = [&] {
    if (stream.has_buffered_bytes()) return true;
    const Clock::time_point give_up = Clock::now() + std::chrono::seconds(keep_alive_timeout_sec_);
    while (svr_sock_ != INVALID_SOCKET) {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(give_up - Clock::now());
      if (left.count() <= 0) return false;
      const int ready = WaitFor(connection.get(), POLLIN, std::min(left, kStopCheckInterval));
      if (ready != 0) return ready > 0;
    }
    return false;
  };
  bool answered = false;
  Clock::time_point header_deadline = started + limits_.header_timeout;
  for (size_t requests_left = keep_alive_max_count_; requests_left > 0; --requests_left) {
    if (!await_request()) break;
    // The first request's headers are due `header_timeout` after the
    // connection reached a worker; a later one's after its first byte.
    if (requests_left != keep_alive_max_count_) header_deadline = Clock::now() + limits_.header_timeout;
    stream.BeginRequest(header_deadline, std::move(waiting));
    bool connection_closed = false;
    answered = process_request(stream, requests_left == 1, connection_closed, nullptr);
    stream.EndRequest();
    if (stream.refusal() != HeaderRefusal::kNone) {
      SendHeaderRefusal(connection.get(), stream.refusal(), limits_);
      answered = false;
      break;
    }
    if (!answered || connection_closed) break;
    // Waiting for the next request takes a place among the peer's waiting
    // connections again: without one the connection ends here.
    waiting = waiting_.TryTake(stream.peer_ip());
    if (!waiting) break;
  }
  ::shutdown(connection.get(), SHUT_RDWR);
  return answered;
}

}  // namespace toolvfs
