// The real `toolvfs vfsd`: over stdin/stdout and over a socketpair (--fd),
// garbage on the wire, its exit, its memory while streaming 1 GiB, its
// audit log and its temp files.

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "cli/subprocess.h"
#include "core/io.h"
#include "core/unique_fd.h"
#include "vfsd/frame.h"
#include "vfsd/vfsd_test_util.h"

extern char** environ;

namespace toolvfs {
namespace {

// `toolvfs vfsd ARGS` with a channel to it: stdin/stdout pipes, or one end
// of a socketpair as its fd 3 (--fd 3 is added).
class DaemonProcess {
 public:
  enum class Channel { kStdio, kSocketpair };

  DaemonProcess(std::vector<std::string> args, Channel channel, std::vector<std::string> set_env = {})
      : channel_(channel) {
    std::vector<std::string> argv = {ToolvfsBinary(), "vfsd"};
    argv.insert(argv.end(), args.begin(), args.end());
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    UniqueFd child_in, child_out, child_socket;
    if (channel == Channel::kStdio) {
      int in[2], out[2];
      EXPECT_EQ(::pipe2(in, O_CLOEXEC), 0);
      EXPECT_EQ(::pipe2(out, O_CLOEXEC), 0);
      child_in.reset(in[0]);
      to_daemon_.reset(in[1]);
      from_daemon_.reset(out[0]);
      child_out.reset(out[1]);
      posix_spawn_file_actions_adddup2(&actions, child_in.get(), 0);
      posix_spawn_file_actions_adddup2(&actions, child_out.get(), 1);
    } else {
      int ends[2];
      EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends), 0);
      to_daemon_.reset(ends[0]);
      child_socket.reset(ends[1]);
      posix_spawn_file_actions_adddup2(&actions, child_socket.get(), 3);
      posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
      argv.push_back("--fd");
      argv.push_back("3");
    }
    err_path_ = err_dir_.Join("stderr");
    posix_spawn_file_actions_addopen(&actions, 2, err_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ProcessOptions options;
    options.set_env = std::move(set_env);
    std::vector<std::string> environment = BuildEnvironment(options);
    std::vector<char*> argv_pointers = PointerArray(argv);
    std::vector<char*> env_pointers = PointerArray(environment);
    int spawned = posix_spawn(&pid_, argv[0].c_str(), &actions, nullptr, argv_pointers.data(), env_pointers.data());
    EXPECT_EQ(spawned, 0) << "cannot start " << argv[0];
    posix_spawn_file_actions_destroy(&actions);
  }

  ~DaemonProcess() {
    if (pid_ > 0 && !exit_code_) {
      ::kill(pid_, SIGKILL);
      int status;
      ::waitpid(pid_, &status, 0);
    }
  }

  int read_fd() const { return channel_ == Channel::kStdio ? from_daemon_.get() : to_daemon_.get(); }

  void Send(std::string_view bytes) { EXPECT_TRUE(WriteFull(to_daemon_.get(), bytes, "the daemon").ok()); }

  // The next answer frame, or nullopt at the end of the channel.
  std::optional<std::string> ReadFrame() {
    if (!reader_) reader_.emplace(read_fd(), uint64_t{1} << 31);
    Result<Frame> frame = reader_->Next();
    if (!frame.ok() || frame->kind != Frame::Kind::kPayload) return std::nullopt;
    return std::move(frame->payload);
  }

  Answer Call(std::string_view op, std::string_view params = "{}") {
    std::string id = std::to_string(++last_id_);
    Send(EncodeFrame("{\"id\":\"" + id + "\",\"op\":\"" + std::string(op) + "\",\"params\":" + std::string(params) + "}"));
    std::optional<std::string> frame = ReadFrame();
    EXPECT_TRUE(frame.has_value()) << op << ": no answer; stderr: " << Stderr();
    return ParseAnswer(frame.value_or("{}"));
  }

  // Ends the client's side of the channel: the daemon sees end of input.
  void CloseInput() {
    if (channel_ == Channel::kStdio) {
      to_daemon_.reset();
    } else {
      ::shutdown(to_daemon_.get(), SHUT_WR);
    }
  }

  // Waits for the exit; 128 + N if killed by signal N.
  int Wait() {
    if (!exit_code_) {
      int status = 0;
      ::waitpid(pid_, &status, 0);
      exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    return *exit_code_;
  }

  // Peak resident memory so far in KiB (VmHWM), -1 if unknown.
  long PeakResidentKib() const {
    std::ifstream status("/proc/" + std::to_string(pid_) + "/status");
    std::string line;
    while (std::getline(status, line)) {
      if (line.rfind("VmHWM:", 0) == 0) return std::stol(line.substr(6));
    }
    return -1;
  }

  std::string Stderr() const { return ReadRealFile(err_path_); }
  pid_t pid() const { return pid_; }

 private:
  Channel channel_;
  UniqueFd to_daemon_, from_daemon_;
  pid_t pid_ = -1;
  std::optional<int> exit_code_;
  std::optional<FrameReader> reader_;
  TempDir err_dir_;
  std::string err_path_;
  int last_id_ = 0;
};

class VfsdDaemonTest : public ::testing::TestWithParam<DaemonProcess::Channel> {
 protected:
  void SetUp() override {
    WriteRealFile(dir_.Join("project/logs/a.txt"), "hello\n");
    MakeDirectory(dir_.Join("temp"));
    project_ = dir_.Join("project");
  }

  std::vector<std::string> Args(std::vector<std::string> more = {}) {
    std::vector<std::string> args = {"--project", project_, "--no-audit", "--allow", "logs"};
    args.insert(args.end(), more.begin(), more.end());
    return args;
  }

  TempDir dir_;
  std::string project_;
};

TEST_P(VfsdDaemonTest, ServesUntilTheClientClosesThenExitsZero) {
  DaemonProcess daemon(Args(), GetParam());
  EXPECT_TRUE(daemon.Call("ping").Bool("pong"));
  uint64_t handle = daemon.Call("open_read", PathParams("logs/a.txt")).Uint("handle");
  Answer read = daemon.Call("read", "{\"h\":" + std::to_string(handle) + "}");
  EXPECT_EQ(read.Data(), "hello\n");
  uint64_t writer = daemon.Call("open_write", PathParams("logs/b.txt")).Uint("handle");
  daemon.Call("write", "{\"h\":" + std::to_string(writer) + ",\"data\":\"" + Base64Encode("written") + "\"}");
  EXPECT_TRUE(daemon.Call("close", "{\"h\":" + std::to_string(writer) + "}").ok());
  EXPECT_EQ(ReadRealFile(project_ + "/logs/b.txt"), "written");
  daemon.CloseInput();
  EXPECT_EQ(daemon.Wait(), 0) << daemon.Stderr();
  EXPECT_EQ(daemon.Stderr(), "");
}

TEST_P(VfsdDaemonTest, GarbageOnTheWireGetsErrorsAndTheSessionGoesOn) {
  DaemonProcess daemon(Args({"--max-frame", "4096"}), GetParam());
  auto answer_to = [&](std::string_view payload) {
    daemon.Send(EncodeFrame(payload));
    return ParseAnswer(daemon.ReadFrame().value_or("{}"));
  };
  for (std::string payload : {std::string("abc"), std::string(""), std::string("\xff\xfe\xfd"), std::string(3000, '['),
                              std::string("{\"id\":\"a\",\"id\":\"b\",\"op\":\"ping\"}"), std::string("[]"),
                              std::string("{\"id\":\"a\",\"op\":\"ping\",\"params\":{\"x\":1,\"x\":2}}")}) {
    Answer answer = answer_to(payload);
    EXPECT_EQ(answer.code(), "E_ARG") << payload.substr(0, 40) << ": " << answer;
  }
  // A frame over --max-frame: read past, answered, and the next one served.
  daemon.Send(EncodeFrame(std::string(10000, ' ')));
  Answer oversized = ParseAnswer(daemon.ReadFrame().value_or("{}"));
  EXPECT_EQ(oversized.code(), "E_RANGE") << oversized;
  EXPECT_TRUE(oversized.json["id"].IsNull());
  // A length the daemon will never see the end of does not make it wait
  // for memory: it reads past what arrives, then the client goes away.
  EXPECT_TRUE(daemon.Call("ping").ok());
  // A truncated frame at the end: a clean end.
  daemon.Send(std::string("\0\0\0\x50{\"id\":", 10));
  daemon.CloseInput();
  EXPECT_EQ(daemon.Wait(), 0) << daemon.Stderr();
}

TEST_P(VfsdDaemonTest, TempFilesAreNeverVisibleAndGoneAtExitEvenWhenKilled) {
  DaemonProcess daemon(Args(), GetParam(), {"TMPDIR=" + dir_.Join("temp")});
  uint64_t temp = daemon.Call("temp").Uint("handle");
  daemon.Call("write", "{\"h\":" + std::to_string(temp) + ",\"data\":\"" + Base64Encode(std::string(100000, 'x')) + "\"}");
  uint64_t staged = daemon.Call("open_write", PathParams("logs/a.txt")).Uint("handle");
  daemon.Call("write", "{\"h\":" + std::to_string(staged) + ",\"data\":\"" + Base64Encode("unfinished") + "\"}");
  EXPECT_EQ(ListRealDirectory(dir_.Join("temp")), std::vector<std::string>{});
  ::kill(daemon.pid(), SIGKILL);
  EXPECT_EQ(daemon.Wait(), 128 + SIGKILL);
  EXPECT_EQ(ListRealDirectory(dir_.Join("temp")), std::vector<std::string>{});
  EXPECT_EQ(ReadRealFile(project_ + "/logs/a.txt"), "hello\n");  // never committed
}

INSTANTIATE_TEST_SUITE_P(Channels, VfsdDaemonTest,
                         ::testing::Values(DaemonProcess::Channel::kStdio, DaemonProcess::Channel::kSocketpair),
                         [](const ::testing::TestParamInfo<DaemonProcess::Channel>& channel) {
                           return channel.param == DaemonProcess::Channel::kStdio ? std::string("Stdio")
                                                                                  : std::string("Socketpair");
                         });

TEST(VfsdDaemonOptionsTest, BadOptionsAreOneLineErrors) {
  TempDir dir;
  for (std::vector<std::string> args : {std::vector<std::string>{"--read-max", "0"},
                                        std::vector<std::string>{"--fd", "97"},
                                        std::vector<std::string>{"--allow", "/etc"},
                                        std::vector<std::string>{"--allow", "../up"},
                                        std::vector<std::string>{"--max-frame", "0"},
                                        std::vector<std::string>{"--max-handles", "0"},
                                        std::vector<std::string>{"--project", dir.Join("missing")}}) {
    std::vector<std::string> argv = {ToolvfsBinary(), "vfsd", "--no-audit", "--project", dir.path()};
    argv.insert(argv.end(), args.begin(), args.end());
    ProcessResult result = RunProcess(argv);
    EXPECT_EQ(result.exit_code, 2) << args[0] << ": " << result;
    ExpectOneLineError(result);
  }
}

TEST(VfsdDaemonAuditTest, EveryRequestIsAppendedToTheAuditLog) {
  TempDir dir;
  WriteRealFile(dir.Join("project/logs/a.txt"), "hello\n");
  std::string log = dir.Join("audit.jsonl");
  DaemonProcess daemon({"--project", dir.Join("project"), "--audit", log, "--allow", "logs"},
                       DaemonProcess::Channel::kStdio);
  daemon.Call("ping");
  daemon.Call("open_read", PathParams("logs/a.txt"));
  daemon.Call("open_read", PathParams("secret.txt"));
  daemon.CloseInput();
  ASSERT_EQ(daemon.Wait(), 0) << daemon.Stderr();
  std::istringstream lines(ReadRealFile(log));
  std::vector<AuditRecord> records;
  for (std::string line; std::getline(lines, line);) {
    Result<AuditRecord> record = ParseAuditRecord(line);
    ASSERT_TRUE(record.ok()) << line;
    records.push_back(*record);
  }
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[0].method, "vfsd.ping");
  EXPECT_EQ(records[1].target, "logs/a.txt");
  EXPECT_EQ(records[1].decision, AuditDecision::kAllow);
  EXPECT_EQ(records[2].decision, AuditDecision::kDeny);
  EXPECT_EQ(records[2].target, "secret.txt");
  // Without --audit the project's own log is used.
  DaemonProcess project_log({"--project", dir.Join("project"), "--allow", "logs"}, DaemonProcess::Channel::kStdio);
  project_log.Call("ping");
  project_log.CloseInput();
  ASSERT_EQ(project_log.Wait(), 0);
  EXPECT_NE(ReadRealFile(dir.Join("project/.toolvfs/audit.jsonl")).find("\"vfsd.ping\""), std::string::npos);
}

// SPEC.md §8 / issue 20: a 1 GiB file streams through a read handle in
// constant memory, because the handle is the open file.
TEST(VfsdDaemonStreamingTest, StreamingOneGibibyteKeepsMemoryFlat) {
  TempDir dir;
  MakeDirectory(dir.Join("project"));
  constexpr uint64_t kSize = uint64_t{1} << 30;
  {
    // Sparse: the test writes no gigabyte; every read still returns it.
    UniqueFd file(::open(dir.Join("project/big.bin").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
    ASSERT_TRUE(file.valid());
    ASSERT_EQ(::ftruncate(file.get(), static_cast<off_t>(kSize)), 0);
  }
  DaemonProcess daemon({"--project", dir.Join("project"), "--no-audit", "--allow", ".", "--read-max", "1048576"},
                       DaemonProcess::Channel::kSocketpair);
  uint64_t handle = daemon.Call("open_read", PathParams("big.bin")).Uint("handle");
  std::string request = EncodeFrame("{\"id\":\"r\",\"op\":\"read\",\"params\":{\"h\":" + std::to_string(handle) +
                                    ",\"max\":1048576}}");
  uint64_t total = 0;
  for (int round = 0; round < 2000; ++round) {
    daemon.Send(request);
    std::optional<std::string> frame = daemon.ReadFrame();
    ASSERT_TRUE(frame.has_value());
    // The data's length without decoding it: 4 base64 characters per 3 bytes.
    size_t start = frame->find("\"data\":\"") + 8;
    size_t end = frame->find('"', start);
    std::string_view data(*frame);
    data = data.substr(start, end - start);
    uint64_t bytes = data.size() / 4 * 3 - (data.ends_with("==") ? 2 : data.ends_with("=") ? 1 : 0);
    total += bytes;
    if (frame->find("\"eof\":true") != std::string::npos) break;
  }
  EXPECT_EQ(total, kSize);
  long peak_kib = daemon.PeakResidentKib();
  daemon.CloseInput();
  EXPECT_EQ(daemon.Wait(), 0);
  // A few 1 MiB buffers (the read, its base64, the answer), never the file.
  EXPECT_GT(peak_kib, 0);
  EXPECT_LT(peak_kib, 48 * 1024) << "peak resident memory " << peak_kib << " KiB while streaming 1 GiB";
  RecordProperty("peak_resident_kib", std::to_string(peak_kib));
  std::printf("vfsd streamed 1 GiB with a peak resident size of %ld KiB\n", peak_kib);
}

}  // namespace
}  // namespace toolvfs
