// toolvfs/vfsd_client.h — a C++ client for `toolvfs vfsd` (docs/vfsd.md).
//
// vfsd serves one client files, pipes and temp files by handle over a
// channel of frames (a 4-byte big-endian length, then UTF-8 JSON). Header
// only, C++20 and POSIX, beside toolvfs/tool.h (whose Json and base64 it
// uses):
//
//   #include <toolvfs/vfsd_client.h>
//
//   toolvfs::VfsdClient vfsd = toolvfs::VfsdClient::spawn({"--project", "proj", "--allow", "logs"});
//   uint64_t in = vfsd.open_read("logs/today.txt");
//   for (auto chunk = vfsd.read(in); ; chunk = vfsd.read(in)) {
//     consume(chunk.data);
//     if (chunk.eof) break;
//   }
//   uint64_t out = vfsd.open_write("logs/summary.txt");
//   vfsd.write(out, "done\n");
//   vfsd.close(out);  // the write lands here, atomically
//
// Errors. An error answer throws VfsdException: code() is the daemon's code
// ("E_NOENT", "E_PERM", "E_CLOSED", ...), message() its one-line message.
// A channel that ends or carries garbage throws VfsdException with code
// "E_CHANNEL". Requests are answered one at a time, in order; a client is
// not thread-safe. Move-only: it owns the channel's descriptors and, after
// spawn(), the daemon process, which its destructor ends and waits for.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "toolvfs/tool.h"

extern char** environ;

namespace toolvfs {
inline namespace sdk {

class VfsdException : public std::runtime_error {
 public:
  VfsdException(std::string code, std::string message)
      : std::runtime_error(code + ": " + message), code_(std::move(code)), message_(std::move(message)) {}
  const std::string& code() const noexcept { return code_; }
  const std::string& message() const noexcept { return message_; }

 private:
  std::string code_;
  std::string message_;
};

// What a read returns.
struct VfsdChunk {
  std::string data;  // the bytes read; empty from an empty pipe or at the end
  bool eof = false;  // the end: of the file, or of a pipe whose writers are gone and which is drained
};

// One directory entry of list().
struct VfsdEntry {
  std::string name;
  std::string kind;  // "file", "dir" or "symlink"
};

// What stat() returns.
struct VfsdStat {
  std::string kind;      // "file", "dir", "temp" or "pipe"
  uint64_t size = 0;     // bytes (a pipe: bytes waiting in it; a write handle: bytes staged)
  std::string mode;      // "r", "w" or "rw": what this session may do with it
  std::string modified;  // UTC RFC 3339 with milliseconds
};

class VfsdClient {
 public:
  // A client over descriptors it takes ownership of: answers are read from
  // `read_fd`, requests written to `write_fd` (the same descriptor for a
  // socketpair end).
  VfsdClient(int read_fd, int write_fd) : read_fd_(read_fd), write_fd_(write_fd) {}

  // Starts `BINARY vfsd ARGS` with its stdin and stdout as the channel.
  // `binary` empty: $TOOLVFS_BINARY, else "toolvfs" on PATH.
  static VfsdClient spawn(const std::vector<std::string>& args, std::string binary = {}) {
    if (binary.empty()) {
      const char* from_environment = std::getenv("TOOLVFS_BINARY");
      binary = from_environment != nullptr && *from_environment != '\0' ? from_environment : "toolvfs";
    }
    int requests[2], answers[2];
    if (::pipe2(requests, O_CLOEXEC) != 0) throw channel_error("cannot create a pipe", errno);
    if (::pipe2(answers, O_CLOEXEC) != 0) {
      int error = errno;
      ::close(requests[0]);
      ::close(requests[1]);
      throw channel_error("cannot create a pipe", error);
    }
    std::vector<std::string> argv_strings = {binary, "vfsd"};
    argv_strings.insert(argv_strings.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& word : argv_strings) argv.push_back(word.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, requests[0], 0);
    posix_spawn_file_actions_adddup2(&actions, answers[1], 1);
    pid_t pid = -1;
    int spawned = ::posix_spawnp(&pid, binary.c_str(), &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(requests[0]);
    ::close(answers[1]);
    if (spawned != 0) {
      ::close(requests[1]);
      ::close(answers[0]);
      throw channel_error("cannot start " + binary, spawned);
    }
    VfsdClient client(answers[0], requests[1]);
    client.pid_ = pid;
    return client;
  }

  VfsdClient(const VfsdClient&) = delete;
  VfsdClient& operator=(const VfsdClient&) = delete;
  VfsdClient(VfsdClient&& other) noexcept
      : read_fd_(std::exchange(other.read_fd_, -1)),
        write_fd_(std::exchange(other.write_fd_, -1)),
        pid_(std::exchange(other.pid_, -1)),
        next_id_(other.next_id_),
        buffer_(std::move(other.buffer_)),
        start_(other.start_),
        end_(other.end_) {}
  VfsdClient& operator=(VfsdClient&& other) noexcept {
    if (this != &other) {
      finish();
      read_fd_ = std::exchange(other.read_fd_, -1);
      write_fd_ = std::exchange(other.write_fd_, -1);
      pid_ = std::exchange(other.pid_, -1);
      next_id_ = other.next_id_;
      buffer_ = std::move(other.buffer_);
      start_ = other.start_;
      end_ = other.end_;
    }
    return *this;
  }
  ~VfsdClient() { finish(); }

  // Ends the session (the daemon discards unclosed writes and removes its
  // temp files) and, after spawn(), returns the daemon's exit status (128 +
  // N if a signal N ended it); -1 otherwise.
  int finish() {
    if (write_fd_ >= 0 && write_fd_ != read_fd_) ::close(write_fd_);
    if (write_fd_ >= 0 && write_fd_ == read_fd_) ::shutdown(write_fd_, SHUT_WR);  // a socketpair end
    write_fd_ = -1;
    int status = -1;
    if (pid_ > 0) {
      int raw = 0;
      while (::waitpid(pid_, &raw, 0) < 0 && errno == EINTR) {
      }
      status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
      pid_ = -1;
    }
    if (read_fd_ >= 0) ::close(read_fd_);
    read_fd_ = -1;
    return status;
  }

  // Sends `op` with `params` and returns the result object; throws
  // VfsdException for an error answer or a broken channel.
  Json call(std::string_view op, Json params = Json::object()) {
    std::string id = std::to_string(++next_id_);
    Json request = Json::object({{"id", id}, {"op", std::string(op)}, {"params", std::move(params)}});
    std::string payload = request.dump();
    std::string frame = header(payload.size()) + payload;
    write_all(frame);
    std::string answer_text = read_frame();
    Result<Json> answer = Json::parse(answer_text);
    if (!answer.ok() || !answer->is_object()) throw VfsdException("E_CHANNEL", "the daemon's answer is not a JSON object");
    if ((*answer)["id"].as_string() != id) {
      throw VfsdException("E_CHANNEL", "expected the answer to request " + id + ", got one for " + (*answer)["id"].dump());
    }
    if ((*answer)["ok"].as_bool()) return (*answer)["result"];
    const Json& error = (*answer)["error"];
    throw VfsdException(error["code"].as_string("E_IO"), error["message"].as_string(""));
  }

  bool ping() { return call("ping")["pong"].as_bool(); }

  // Narrows the allowlist (never widens it); `read_only` can only be turned on.
  void init(std::optional<std::vector<std::string>> allow, std::optional<bool> read_only = std::nullopt) {
    Json params = Json::object();
    if (allow) {
      Json list = Json::array();
      for (const std::string& prefix : *allow) list.array_ref().push_back(prefix);
      params.object_ref().emplace_back("allow", std::move(list));
    }
    if (read_only) params.object_ref().emplace_back("read_only", *read_only);
    call("init", std::move(params));
  }

  uint64_t open_read(std::string_view path) { return call("open_read", Json::object({{"path", path}}))["handle"].as_uint(); }

  // Writes replace the file (or with `append` extend it) when the handle is closed.
  uint64_t open_write(std::string_view path, bool append = false) {
    return call("open_write", Json::object({{"path", path}, {"append", append}}))["handle"].as_uint();
  }

  // At most `max` bytes (clamped by the daemon's --read-max; 0: the daemon's default).
  VfsdChunk read(uint64_t handle, uint64_t max = 0) {
    Json params = Json::object({{"h", handle}});
    if (max > 0) params.object_ref().emplace_back("max", max);
    Json result = call("read", std::move(params));
    Result<std::string> data = base64_decode(result["data"].as_string());
    if (!data.ok()) throw VfsdException("E_CHANNEL", "the daemon's data is not base64: " + data.error().message);
    return VfsdChunk{std::move(*data), result["eof"].as_bool()};
  }

  // Bytes written: all of them, except to a full pipe (possibly 0).
  uint64_t write(uint64_t handle, std::string_view data) {
    return call("write", Json::object({{"h", handle}, {"data", base64_encode(data)}}))["written"].as_uint();
  }

  // Closes a handle; for a write handle, commits what was written.
  void close(uint64_t handle) { call("close", Json::object({{"h", handle}})); }

  VfsdStat stat(std::string_view path) { return to_stat(call("stat", Json::object({{"path", path}}))); }
  VfsdStat stat_handle(uint64_t handle) { return to_stat(call("stat", Json::object({{"h", handle}}))); }

  std::vector<VfsdEntry> list(std::string_view path) {
    std::vector<VfsdEntry> entries;
    Json result = call("list", Json::object({{"path", path}}));
    for (const Json& entry : result["entries"].as_array()) {
      entries.push_back(VfsdEntry{entry["name"].as_string(), entry["kind"].as_string()});
    }
    return entries;
  }

  // {read end, write end}.
  std::pair<uint64_t, uint64_t> make_pipe() {
    Json result = call("make_pipe");
    return {result["r"].as_uint(), result["w"].as_uint()};
  }

  // A private temp file, readable and writable, gone at close.
  uint64_t temp() { return call("temp")["handle"].as_uint(); }

  // `whence`: "set", "cur" or "end". The new offset.
  uint64_t seek(uint64_t handle, int64_t offset, std::string_view whence = "set") {
    return call("seek", Json::object({{"h", handle}, {"offset", offset}, {"whence", whence}}))["offset"].as_uint();
  }

 private:
  static VfsdException channel_error(const std::string& what, int error) {
    return VfsdException("E_CHANNEL", what + ": " + std::strerror(error));
  }

  static std::string header(size_t length) {
    std::string bytes(4, '\0');
    for (int index = 0; index < 4; ++index) bytes[static_cast<size_t>(index)] = static_cast<char>((length >> (24 - 8 * index)) & 0xff);
    return bytes;
  }

  void write_all(std::string_view bytes) {
    if (write_fd_ < 0) throw VfsdException("E_CHANNEL", "the session is finished");
    while (!bytes.empty()) {
      ssize_t written = ::write(write_fd_, bytes.data(), bytes.size());
      if (written < 0 && errno == EINTR) continue;
      if (written < 0) throw channel_error("cannot send a request to the daemon", errno);
      bytes.remove_prefix(static_cast<size_t>(written));
    }
  }

  // Makes `count` unread bytes available from buffer_[start_] on. The
  // buffer grows to the largest frame once; it is not refilled with zeros
  // per read.
  void fill(size_t count) {
    if (end_ - start_ >= count) return;
    buffer_.erase(0, start_);
    end_ -= start_;
    start_ = 0;
    if (buffer_.size() < count) buffer_.resize(std::max<size_t>(count, 65536));
    while (end_ < count) {
      ssize_t got = ::read(read_fd_, buffer_.data() + end_, buffer_.size() - end_);
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) throw channel_error("cannot read the daemon's answer", errno);
      if (got == 0) throw VfsdException("E_CHANNEL", "the daemon closed the channel");
      end_ += static_cast<size_t>(got);
    }
  }

  std::string read_frame() {
    fill(4);
    size_t length = 0;
    for (size_t index = 0; index < 4; ++index) {
      length = (length << 8) | static_cast<unsigned char>(buffer_[start_ + index]);
    }
    fill(4 + length);
    std::string payload = buffer_.substr(start_ + 4, length);
    start_ += 4 + length;
    return payload;
  }

  static VfsdStat to_stat(const Json& result) {
    return VfsdStat{result["kind"].as_string(), result["size"].as_uint(), result["mode"].as_string(),
                    result["modified"].as_string()};
  }

  int read_fd_ = -1;
  int write_fd_ = -1;
  pid_t pid_ = -1;
  uint64_t next_id_ = 0;
  std::string buffer_;  // answer bytes; [start_, end_) read but not yet consumed
  size_t start_ = 0;
  size_t end_ = 0;
};

}  // namespace sdk
}  // namespace toolvfs
