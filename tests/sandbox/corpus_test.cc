// The malicious-tool corpus of issue 5: "security claims are tests". Every
// escape SPEC.md §5 lists is one small tool in corpus/ that tries it; each
// runs through the real `toolvfs exec`/`toolvfs run` in a temporary project,
// once as root and once as an unprivileged user (uid 65534 via setpriv), and
// the test proves that
//   - the attack failed inside the tool (the errno it reports) or the tool
//     was killed within its limits, with a clear error in the outcome;
//   - the host stayed healthy: toolvfs exited normally with the expected
//     code, in bounded time (every run has a deadline; no test can hang);
//   - nothing outside changed: no file in /tmp, the project as it was, no
//     connection or datagram at the test's sockets.
// Plus the --sandbox=require/best-effort seam, and a positive suite: the
// example tools still work under the sandbox, and a process.run child
// writes in the project only where the policy lets it and never outside.
#include <fcntl.h>
#include <linux/landlock.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cli/subprocess.h"

namespace toolvfs {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using ::testing::AnyOf;
using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr uid_t kNobody = 65534;
// Every toolvfs run is killed after this long: a hang is a failure, never a
// stuck test.
constexpr auto kRunDeadline = std::chrono::seconds(30);

enum class As { kRoot, kUnprivileged };

void PrintTo(As as, std::ostream* stream) { *stream << (as == As::kRoot ? "root" : "uid 65534"); }

std::string AsName(const ::testing::TestParamInfo<As>& info) {
  return info.param == As::kRoot ? "AsRoot" : "AsUnprivilegedUser";
}


// What `--json` printed: {status, content: [blocks], error?: {message}}.
struct JsonOutcome {
  std::string status;
  std::string text;  // the text blocks, concatenated
  std::string error_message;
};

JsonOutcome ParseOutcome(const ProcessResult& run) {
  JsonOutcome outcome;
  rapidjson::Document document;
  document.Parse(run.out.c_str());
  if (document.HasParseError() || !document.IsObject()) {
    ADD_FAILURE() << "toolvfs --json did not print one JSON object:\n" << run;
    return outcome;
  }
  if (document.HasMember("status") && document["status"].IsString()) {
    outcome.status = document["status"].GetString();
  }
  if (document.HasMember("content") && document["content"].IsArray()) {
    for (const auto& block : document["content"].GetArray()) {
      if (block.IsObject() && block.HasMember("text") && block["text"].IsString()) {
        outcome.text += block["text"].GetString();
      }
    }
  }
  if (document.HasMember("error") && document["error"].IsObject() &&
      document["error"].HasMember("message") && document["error"]["message"].IsString()) {
    outcome.error_message = document["error"]["message"].GetString();
  }
  return outcome;
}

// Every regular file under `root` (but toolvfs's own .toolvfs/ audit dir)
// with its content.
std::map<std::string, std::string> Snapshot(const fs::path& root) {
  std::map<std::string, std::string> files;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator(); ++it) {
    fs::path relative = it->path().lexically_relative(root);
    if (*relative.begin() == ".toolvfs") {
      if (it->is_directory()) it.disable_recursion_pending();
      continue;
    }
    if (it->is_symlink() || !it->is_regular_file()) {
      files[relative.string()] = it->is_directory() ? "<dir>" : "<other>";
      continue;
    }
    std::ifstream in(it->path(), std::ios::binary);
    std::stringstream content;
    content << in.rdbuf();
    files[relative.string()] = content.str();
  }
  return files;
}

void WriteFile(const fs::path& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary);
  out << content;
  ASSERT_TRUE(out.good()) << path;
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream content;
  content << in.rdbuf();
  return content.str();
}

void ChownTree(const fs::path& root, uid_t uid) {
  ASSERT_EQ(lchown(root.c_str(), uid, uid), 0) << root << ": " << std::strerror(errno);
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    ASSERT_EQ(lchown(entry.path().c_str(), uid, uid), 0) << entry.path() << ": " << std::strerror(errno);
  }
}

std::string RandomSuffix() {
  std::random_device device;
  return std::to_string(getpid()) + "-" + std::to_string(device());
}

int LandlockAbi() {
  long abi = syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
  return abi < 0 ? 0 : static_cast<int>(abi);
}

// The three kinds of tool process that run an attack program directly.
enum class Kind { kVfsTool, kStdioTool, kProcessRunChild };

class CorpusTest : public ::testing::TestWithParam<As> {
 protected:
  void SetUp() override {
    if (GetParam() == As::kRoot && geteuid() != 0) GTEST_SKIP() << "the root run needs the test to run as root";
    char pattern[] = "/tmp/toolvfs-corpus-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr) << std::strerror(errno);
    root_ = pattern;
    ASSERT_EQ(chmod(root_.c_str(), 0755), 0);
    project_ = root_ / "project";
    tools_ = root_ / "tools";
    fs::create_directories(project_ / "src");
    fs::create_directories(tools_);
    WriteFile(project_ / "secret.txt", "the project's secret\n");
    WriteFile(project_ / "src" / "main.c", "int main(void) { return 0; }\n");
    outside_ = "/tmp/toolvfs-corpus-escape-" + RandomSuffix();
  }

  void TearDown() override {
    std::error_code ignored;
    if (!root_.empty()) fs::remove_all(root_, ignored);
    fs::remove(outside_, ignored);
  }

  bool Unprivileged() const { return GetParam() == As::kUnprivileged; }

  // The corpus program `name`, copied next to the project (so its path is
  // readable and executable by uid 65534 whatever the build dir's modes).
  std::string Tool(const std::string& name) {
    fs::path source = fs::path(TOOLVFS_CORPUS_BIN_DIR) / name;
    fs::path target = tools_ / name;
    if (!fs::exists(target)) {
      std::error_code error;
      fs::copy_file(source, target, error);
      EXPECT_FALSE(error) << "cannot copy " << source << ": " << error.message();
      chmod(target.c_str(), 0755);
    }
    return target.string();
  }

  // Hands the temporary tree to uid 65534 for the unprivileged run (the
  // audit log is written in the project; the attacks must be stopped by the
  // sandbox, not by file modes).
  void PrepareOwnership() {
    if (Unprivileged()) ChownTree(root_, kNobody);
  }

  // toolvfs with `args`, through setpriv for the unprivileged run.
  ProcessResult Toolvfs(std::vector<std::string> args, std::vector<std::string> set_env = {},
              Clock::duration deadline = kRunDeadline) {
    PrepareOwnership();
    std::vector<std::string> argv;
    if (Unprivileged()) {
      argv = {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"};
    }
    argv.insert(argv.end(), host_wrapper_.begin(), host_wrapper_.end());
    argv.push_back(ToolvfsBinary());
    argv.insert(argv.end(), args.begin(), args.end());
    set_env.push_back("TMPDIR=/tmp");
    std::vector<std::string> unset_env = {"TOOLVFS_TEST_HIDE_SANDBOX"};
    for (const std::string& entry : set_env) {
      if (entry.starts_with("TOOLVFS_TEST_HIDE_SANDBOX=")) unset_env.clear();
    }
    ProcessOptions options{.cwd = project_.string(),
                           .set_env = std::move(set_env),
                           .unset_env = std::move(unset_env),
                           .deadline = std::chrono::duration_cast<std::chrono::milliseconds>(deadline)};
    return RunProcess(argv, options);
  }

  // `toolvfs exec --no-interaction --json -- PROGRAM ARGS` in the project.
  ProcessResult Exec(const std::string& program, const std::vector<std::string>& program_args = {},
           std::vector<std::string> options = {}, std::vector<std::string> set_env = {}) {
    std::vector<std::string> args = {"exec", "--no-interaction", "--json", "--project", project_.string()};
    args.insert(args.end(), options.begin(), options.end());
    args.push_back("--");
    args.push_back(program);
    args.insert(args.end(), program_args.begin(), program_args.end());
    return Toolvfs(args, std::move(set_env));
  }

  // `toolvfs run TOOL --no-interaction --json` with the project's toolvfs.toml.
  ProcessResult RunTool(const std::string& tool, const std::string& arguments_json = "{}",
              Clock::duration deadline = kRunDeadline) {
    return Toolvfs({"run", tool, "--no-interaction", "--json", "--project", project_.string(), "--args",
                    arguments_json},
                   {}, deadline);
  }

  // The attack ran to its end, failed with one of `errnos`, and the host
  // reported it normally (exit 0, the tool's result) in bounded time.
  void ExpectDenied(const std::string& attack, const ProcessResult& run, const std::set<std::string>& errnos) {
    ASSERT_FALSE(run.deadline_passed) << attack << ": toolvfs hung\n" << run;
    ASSERT_EQ(run.exit_code, 0) << attack << ": the host did not end normally\n" << run;
    JsonOutcome outcome = ParseOutcome(run);
    EXPECT_EQ(outcome.status, "completed") << run;
    EXPECT_TRUE(errnos.contains(outcome.text))
        << attack << " was not stopped inside the tool: it reported '" << outcome.text
        << "' (expected one of " << ::testing::PrintToString(errnos) << ")\n" << run;
  }

  // What an attack program reported: the "content" of its result line,
  // which a stdio tool's outcome and a process.run child's stdout carry
  // verbatim; `text` itself when it is no such line (a refusal, say).
  static std::string AttackReport(const std::string& text) {
    rapidjson::Document line;
    line.Parse(text.c_str());
    if (line.HasParseError() || !line.IsObject() || !line.HasMember("params") ||
        !line["params"].IsObject() || !line["params"].HasMember("content") ||
        !line["params"]["content"].IsString()) {
      return text;
    }
    return line["params"]["content"].GetString();
  }

  // Runs the corpus program `attack` with `args` as a `kind`, with
  // `limits` (TOML lines for [...sandbox.limits]) if not empty, and
  // returns toolvfs's result. The stdio tool gets filesystem.allow =
  // ["logs"]: a narrow policy must not leave a way out either. The
  // process.run child is started by run_attack_child.py (a vfs tool with
  // the project readable) from a copy in the project, which its policy
  // lets it execute.
  ProcessResult RunAttackAs(Kind kind, const std::string& attack, const std::vector<std::string>& args,
                            const std::string& limits = "") {
    const std::string limits_table = limits.empty() ? "" : "\n[tools.attack.sandbox.limits]\n" + limits + "\n";
    std::string words;
    for (const std::string& arg : args) words += " " + arg;
    switch (kind) {
      case Kind::kVfsTool:
        WriteFile(project_ / "toolvfs.toml", "[tools.attack]\ncommand = \"" + Tool(attack) + words +
                                                 "\"\nruntime = \"vfs\"\n" + limits_table);
        break;
      case Kind::kStdioTool:
        fs::create_directories(project_ / "logs");
        WriteFile(project_ / "toolvfs.toml", "[tools.attack]\ncommand = \"" + Tool(attack) + words +
                                                 "\"\nruntime = \"stdio\"\n\n"
                                                 "[tools.attack.sandbox]\nfilesystem.allow = [\"logs\"]\n" +
                                                 limits_table);
        break;
      case Kind::kProcessRunChild: {
        fs::create_directories(project_ / "bin");
        const fs::path program = project_ / "bin" / attack;
        if (!fs::exists(program)) fs::copy_file(Tool(attack), program);
        chmod(program.c_str(), 0755);
        const fs::path runner = tools_ / "run_attack_child.py";
        if (!fs::exists(runner)) {
          fs::copy_file(fs::path(SourceDir()) / "tests" / "sandbox" / "corpus" / "run_attack_child.py", runner);
        }
        chmod(runner.c_str(), 0644);
        WriteFile(project_ / "toolvfs.toml",
                  "[tools.attack]\ncommand = \"python3 " + runner.string() + "\"\nruntime = \"vfs\"\n\n"
                  "[tools.attack.sandbox]\nfilesystem.allow = [\".\"]\n"
                  "commands.\"" + program.string() + "\" = {}\n" + limits_table);
        rapidjson::StringBuffer buffer;
        rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
        writer.StartObject();
        writer.Key("program");
        writer.String(program.c_str());
        writer.Key("args");
        writer.StartArray();
        for (const std::string& arg : args) writer.String(arg.c_str());
        writer.EndArray();
        writer.EndObject();
        return RunTool("attack", buffer.GetString());
      }
    }
    return RunTool("attack");
  }

  // The attack, run as `kind`, failed inside the tool with one of `errnos`.
  void ExpectAttackDenied(Kind kind, const std::string& attack, const ProcessResult& run,
                          const std::set<std::string>& errnos) {
    const std::string as = kind == Kind::kVfsTool     ? " (vfs tool)"
                           : kind == Kind::kStdioTool ? " (stdio tool)"
                                                      : " (process.run child)";
    ASSERT_FALSE(run.deadline_passed) << attack << as << ": toolvfs hung\n" << run;
    ASSERT_EQ(run.exit_code, 0) << attack << as << ": the host did not end normally\n" << run;
    JsonOutcome outcome = ParseOutcome(run);
    EXPECT_EQ(outcome.status, "completed") << run;
    const std::string report = AttackReport(outcome.text);
    EXPECT_TRUE(errnos.contains(report))
        << attack << as << " was not stopped inside the tool: it reported '" << report
        << "' (expected one of " << ::testing::PrintToString(errnos) << ")\n" << run;
  }

  fs::path root_;
  fs::path project_;
  fs::path tools_;
  fs::path outside_;  // a path directly in /tmp an attack tries to create
  // Runs toolvfs itself: a program and its first arguments (e.g. the
  // without_openat2 stand-in for a container's seccomp profile).
  std::vector<std::string> host_wrapper_;
};

const std::set<std::string> kFilesystemDenied = {"EACCES", "EPERM"};

// --- The attacks -----------------------------------------------------------

TEST_P(CorpusTest, OpeningEtcPasswdIsDeniedByLandlock) {
  ExpectDenied("open /etc/passwd", Exec(Tool("open_etc_passwd")), kFilesystemDenied);
}

TEST_P(CorpusTest, ReadingAProjectFileDirectlyIsDenied) {
  ExpectDenied("read a project file directly",
               Exec(Tool("read_project_file"), {},
                    {"--args", R"({"path": ")" + (project_ / "secret.txt").string() + R"("})"}),
               kFilesystemDenied);
}

TEST_P(CorpusTest, CreatingAFileInTmpIsDeniedAndNothingAppears) {
  ExpectDenied("create a file in /tmp", Exec(Tool("create_file"), {outside_.string()}), kFilesystemDenied);
  EXPECT_FALSE(fs::exists(outside_)) << outside_ << " was created";
}

TEST_P(CorpusTest, CreatingAFileInTheProjectIsDeniedAndTheProjectIsUnchanged) {
  Tool("create_file");
  auto before = Snapshot(project_);
  ExpectDenied("create a file in the project",
               Exec(Tool("create_file"), {(project_ / "src" / "planted.c").string()}), kFilesystemDenied);
  EXPECT_EQ(Snapshot(project_), before);
}

TEST_P(CorpusTest, TcpConnectToALocalListenerIsDeniedAndNoConnectionArrives) {
  int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  ASSERT_GE(listener, 0);
  sockaddr_in address{.sin_family = AF_INET, .sin_port = 0, .sin_addr = {htonl(INADDR_LOOPBACK)}};
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  ASSERT_EQ(listen(listener, 16), 0);
  socklen_t size = sizeof address;
  ASSERT_EQ(getsockname(listener, reinterpret_cast<sockaddr*>(&address), &size), 0);
  ProcessResult run = Exec(Tool("tcp_connect"), {std::to_string(ntohs(address.sin_port))});
  ExpectDenied("TCP connect to 127.0.0.1", run, {"EACCES", "EPERM"});
  int accepted = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
  EXPECT_EQ(accepted, -1) << "the listener got a connection from the tool";
  EXPECT_EQ(errno, EAGAIN);
  if (accepted >= 0) close(accepted);
  close(listener);
}

TEST_P(CorpusTest, UdpSendtoIsDeniedAndNothingArrives) {
  int receiver = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  ASSERT_GE(receiver, 0);
  sockaddr_in address{.sin_family = AF_INET, .sin_port = 0, .sin_addr = {htonl(INADDR_LOOPBACK)}};
  ASSERT_EQ(bind(receiver, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  socklen_t size = sizeof address;
  ASSERT_EQ(getsockname(receiver, reinterpret_cast<sockaddr*>(&address), &size), 0);
  ProcessResult run = Exec(Tool("udp_sendto"), {std::to_string(ntohs(address.sin_port))});
  ExpectDenied("UDP sendto 127.0.0.1", run, {"EACCES", "EPERM"});
  char byte;
  EXPECT_EQ(recv(receiver, &byte, 1, MSG_DONTWAIT), -1) << "a datagram from the tool arrived";
  EXPECT_EQ(errno, EAGAIN);
  close(receiver);
}

TEST_P(CorpusTest, ConnectingToAnAbstractUnixSocketIsDenied) {
  const std::string name = "toolvfs-corpus-" + RandomSuffix();
  int listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  ASSERT_GE(listener, 0);
  sockaddr_un address{.sun_family = AF_UNIX, .sun_path = {}};
  std::memcpy(address.sun_path + 1, name.data(), name.size());
  const socklen_t size = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&address), size), 0) << std::strerror(errno);
  ASSERT_EQ(listen(listener, 16), 0);
  ProcessResult run = Exec(Tool("abstract_unix_connect"), {name});
  // seccomp refuses every tool socket(AF_UNIX) (EACCES); behind it,
  // Landlock's abstract-socket scoping (ABI 6, EPERM; landlock_test.cc),
  // since a vfs tool has no network namespace of its own (namespaces.h).
  ExpectDenied("connect to an abstract unix socket", run, {"EACCES"});
  int accepted = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
  EXPECT_EQ(accepted, -1) << "the abstract socket got a connection from the tool";
  if (accepted >= 0) close(accepted);
  close(listener);
}

TEST_P(CorpusTest, ExecveOfBinShIsDenied) {
  ExpectDenied("execve /bin/sh", Exec(Tool("exec_shell")), {"EACCES", "EPERM"});
}

TEST_P(CorpusTest, ForkIsDeniedBySeccomp) {
  ExpectDenied("fork", Exec(Tool("fork")), {"EPERM", "EACCES"});
}

TEST_P(CorpusTest, VforkIsDeniedBySeccomp) {
  ExpectDenied("vfork", Exec(Tool("vfork")), {"EPERM", "EACCES"});
}

TEST_P(CorpusTest, Clone3IsAnsweredEnosys) {
  ExpectDenied("clone3", Exec(Tool("clone3")), {"ENOSYS"});
}

TEST_P(CorpusTest, PtraceAttachToTheHostIsDenied) {
  ExpectDenied("ptrace(PTRACE_ATTACH) on the host", Exec(Tool("ptrace_host")), {"EPERM", "EACCES"});
}

TEST_P(CorpusTest, KillingTheHostIsDeniedAndTheHostSurvives) {
  if (LandlockAbi() < 6) GTEST_SKIP() << "needs Landlock ABI 6 (signal scoping)";
  // A successful SIGKILL would show as exit 137 of toolvfs.
  ExpectDenied("kill(SIGKILL) the host", Exec(Tool("kill_host")), {"EPERM"});
}

TEST_P(CorpusTest, AForkBombFailsAtTheFirstFork) {
  ExpectDenied("fork bomb", Exec(Tool("fork_bomb")), {"EPERM at fork 1", "EACCES at fork 1"});
}

TEST_P(CorpusTest, AMemoryBombHitsTheMemoryLimitNotTheMachine) {
  WriteFile(project_ / "toolvfs.toml", "[tools.memory_bomb]\ncommand = \"" + Tool("memory_bomb") +
                                           "\"\nruntime = \"vfs\"\n\n"
                                           "[tools.memory_bomb.sandbox.limits]\nmemory_mb = 64\n");
  ProcessResult run = RunTool("memory_bomb");
  ASSERT_FALSE(run.deadline_passed) << "toolvfs hung\n" << run;
  JsonOutcome outcome = ParseOutcome(run);
  if (run.exit_code == 0) {
    // Allocation failed inside the tool, under 64 MiB.
    ASSERT_THAT(outcome.text, StartsWith("ENOMEM after ")) << run;
    EXPECT_LE(std::stoi(outcome.text.substr(std::strlen("ENOMEM after "))), 64) << run;
  } else {
    // Or the tool was killed: a tool error with a message saying so.
    EXPECT_EQ(run.exit_code, 1) << run;
    EXPECT_EQ(outcome.status, "error") << run;
    EXPECT_FALSE(outcome.error_message.empty()) << run;
  }
}

TEST_P(CorpusTest, ACpuSpinIsKilledAtTheTimeout) {
  WriteFile(project_ / "toolvfs.toml", "[tools.cpu_spin]\ncommand = \"" + Tool("cpu_spin") +
                                           "\"\nruntime = \"vfs\"\n\n"
                                           "[tools.cpu_spin.sandbox.limits]\ntimeout_s = 2\n");
  ProcessResult run = RunTool("cpu_spin");
  ASSERT_FALSE(run.deadline_passed) << "toolvfs hung\n" << run;
  EXPECT_EQ(run.exit_code, 124) << run;
  EXPECT_LT(run.elapsed, std::chrono::seconds(12)) << "the 2 s timeout took too long to act";
  EXPECT_GE(run.elapsed, std::chrono::milliseconds(1900)) << "killed before its timeout";
  JsonOutcome outcome = ParseOutcome(run);
  EXPECT_EQ(outcome.status, "error") << run;
  EXPECT_FALSE(outcome.error_message.empty()) << run;
}

TEST_P(CorpusTest, WritingProcSelfMemIsDenied) {
  ExpectDenied("write /proc/self/mem", Exec(Tool("proc_self_mem")), kFilesystemDenied);
}

TEST_P(CorpusTest, OpeningProc1EnvironIsDenied) {
  ExpectDenied("open /proc/1/environ", Exec(Tool("proc1_environ")), kFilesystemDenied);
}

TEST_P(CorpusTest, IoUringSetupIsDenied) {
  ExpectDenied("io_uring_setup", Exec(Tool("io_uring_setup")), {"EPERM", "ENOSYS"});
}

// --- Ways out through the kernel (issue "Close the escapes") -----------------
// Each runs in every kind of tool process that runs a program directly.

constexpr Kind kEveryKind[] = {Kind::kVfsTool, Kind::kStdioTool, Kind::kProcessRunChild};

// A path-named unix socket outside the sandbox, listening (stream) or bound
// (datagram), that uid 65534 may connect to as well: only the sandbox may
// stand in the way. Removed with the object.
class OutsideUnixSocket {
 public:
  explicit OutsideUnixSocket(int type) : path_("/tmp/toolvfs-corpus-unix-" + RandomSuffix()) {
    fd_ = socket(AF_UNIX, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    EXPECT_GE(fd_, 0) << std::strerror(errno);
    sockaddr_un address{.sun_family = AF_UNIX, .sun_path = {}};
    std::memcpy(address.sun_path, path_.data(), path_.size());
    EXPECT_EQ(bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address), 0) << std::strerror(errno);
    EXPECT_EQ(chmod(path_.c_str(), 0777), 0);
    if (type == SOCK_STREAM) {
      EXPECT_EQ(listen(fd_, 16), 0);
    }
  }
  ~OutsideUnixSocket() {
    close(fd_);
    unlink(path_.c_str());
  }
  const std::string& path() const { return path_; }

  // Whether a connection (stream) or a datagram arrived.
  bool Reached() const {
    int accepted = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (accepted >= 0) {
      close(accepted);
      return true;
    }
    char byte;
    return recv(fd_, &byte, 1, MSG_DONTWAIT) >= 0;
  }

 private:
  std::string path_;
  int fd_ = -1;
};

TEST_P(CorpusTest, ConnectingToAPathNamedUnixSocketOutsideIsDenied) {
  for (const Kind kind : kEveryKind) {
    SCOPED_TRACE(static_cast<int>(kind));
    OutsideUnixSocket listener(SOCK_STREAM);
    ExpectAttackDenied(kind, "connect to a unix socket in /tmp",
                       RunAttackAs(kind, "unix_connect", {listener.path()}), {"EACCES"});
    EXPECT_FALSE(listener.Reached()) << "the socket outside got a connection from the tool";
  }
}

TEST_P(CorpusTest, ADatagramSocketPairCannotReachAUnixSocketOutside) {
  for (const Kind kind : kEveryKind) {
    SCOPED_TRACE(static_cast<int>(kind));
    OutsideUnixSocket receiver(SOCK_DGRAM);
    ExpectAttackDenied(kind, "sendto a unix socket in /tmp from a socketpair",
                       RunAttackAs(kind, "unix_datagram_pair", {receiver.path()}), {"EACCES"});
    EXPECT_FALSE(receiver.Reached()) << "a datagram from the tool arrived outside";
  }
}

// The attack reports the executable memfd's errno only after creating a
// non-executable one (MFD_NOEXEC_SEAL), which must still work.
TEST_P(CorpusTest, ExecutingAProgramFromAMemfdIsDenied) {
  for (const Kind kind : kEveryKind) {
    SCOPED_TRACE(static_cast<int>(kind));
    ExpectAttackDenied(kind, "execveat of a memfd", RunAttackAs(kind, "memfd_exec", {}), {"EACCES"});
  }
}

// The toolvfs-* cgroups below this process's pids cgroup (cgroup v1, as on
// the test machine); empty where there is none.
std::set<std::string> ToolvfsCgroups() {
  std::set<std::string> found;
  std::ifstream cgroups("/proc/self/cgroup");
  std::string path;
  for (std::string line; std::getline(cgroups, line);) {
    const size_t first = line.find(':');
    const size_t second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    const std::string controllers = "," + line.substr(first + 1, second - first - 1) + ",";
    if (controllers.find(",pids,") != std::string::npos) path = line.substr(second + 1);
  }
  const fs::path directory = fs::path("/sys/fs/cgroup/pids") / fs::path(path).relative_path();
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(directory, error)) {
    if (entry.path().filename().string().starts_with("toolvfs-")) found.insert(entry.path().string());
  }
  return found;
}

// max_processes holds as root too, where the kernel never applies
// RLIMIT_NPROC: 300 forks with max_processes = 20 get about 19 (the tool
// itself counts), and the run's cgroups are gone afterwards.
TEST_P(CorpusTest, TheProcessLimitHoldsForEveryUserRootIncluded) {
  const std::set<std::string> cgroups_before = ToolvfsCgroups();
  for (const Kind kind : {Kind::kStdioTool, Kind::kProcessRunChild}) {
    SCOPED_TRACE(static_cast<int>(kind));
    ProcessResult run = RunAttackAs(kind, "fork_many", {"300"}, "max_processes = 20");
    ASSERT_FALSE(run.deadline_passed) << run;
    ASSERT_EQ(run.exit_code, 0) << run;
    const std::string report = AttackReport(ParseOutcome(run).text);
    int forked = -1;
    ASSERT_EQ(sscanf(report.c_str(), "forked %d of 300", &forked), 1) << report << "\n" << run;
    EXPECT_LE(forked, 20) << report;
    EXPECT_GE(forked, 10) << "the limit is far below max_processes: " << report;
    EXPECT_THAT(report, HasSubstr("EAGAIN")) << report;
    // A new one of a host that has exited was left behind (other tests
    // running at the same time may have theirs).
    for (const std::string& cgroup : ToolvfsCgroups()) {
      if (cgroups_before.contains(cgroup)) continue;
      const std::string name = fs::path(cgroup).filename().string();
      const pid_t owner = static_cast<pid_t>(std::atoi(name.c_str() + std::strlen("toolvfs-")));
      EXPECT_FALSE(owner > 0 && kill(owner, 0) != 0 && errno == ESRCH)
          << "a run's cgroup was left behind: " << cgroup;
    }
  }
}

// --- Controls: the mechanism named is what stops the attack -----------------
// With it hidden (best-effort), the same attack gets through, so the denials
// above are not an accident of file modes or of the machine.

TEST_P(CorpusTest, ControlWithoutLandlockEtcPasswdIsReadable) {
  ProcessResult run = Exec(Tool("open_etc_passwd"), {}, {"--sandbox=best-effort"}, {"TOOLVFS_TEST_HIDE_SANDBOX=landlock"});
  ASSERT_EQ(run.exit_code, 0) << run;
  EXPECT_EQ(ParseOutcome(run).text, "succeeded") << run;
}

TEST_P(CorpusTest, ControlWithoutLandlockTmpIsWritable) {
  ProcessResult run =
      Exec(Tool("create_file"), {outside_.string()}, {"--sandbox=best-effort"}, {"TOOLVFS_TEST_HIDE_SANDBOX=landlock"});
  ASSERT_EQ(run.exit_code, 0) << run;
  EXPECT_EQ(ParseOutcome(run).text, "succeeded") << run;
  EXPECT_TRUE(fs::exists(outside_));
}

TEST_P(CorpusTest, ControlWithoutSeccompAUnixSocketOutsideIsReachable) {
  OutsideUnixSocket listener(SOCK_STREAM);
  ProcessResult run = Exec(Tool("unix_connect"), {listener.path()}, {"--sandbox=best-effort"},
                           {"TOOLVFS_TEST_HIDE_SANDBOX=seccomp"});
  ASSERT_EQ(run.exit_code, 0) << run;
  EXPECT_EQ(ParseOutcome(run).text, "succeeded") << run;
  EXPECT_TRUE(listener.Reached());
}

TEST_P(CorpusTest, ControlWithoutSeccompAMemfdRuns) {
  ProcessResult run = Exec(Tool("memfd_exec"), {}, {"--sandbox=best-effort"}, {"TOOLVFS_TEST_HIDE_SANDBOX=seccomp"});
  ASSERT_EQ(run.exit_code, 0) << run;
  EXPECT_EQ(ParseOutcome(run).text, "succeeded") << run;
}

TEST_P(CorpusTest, ControlWithoutSeccompForkWorks) {
  ProcessResult run = Exec(Tool("fork"), {}, {"--sandbox=best-effort"}, {"TOOLVFS_TEST_HIDE_SANDBOX=seccomp"});
  ASSERT_EQ(run.exit_code, 0) << run;
  EXPECT_EQ(ParseOutcome(run).text, "succeeded") << run;
}

// --- --sandbox=require / best-effort (TOOLVFS_TEST_HIDE_SANDBOX seam) -------

TEST_P(CorpusTest, RequireRefusesToStartWithoutLandlockAndTheToolNeverRuns) {
  ProcessResult run = Exec(Tool("write_marker"), {}, {"--allow-write", "marker.txt", "--sandbox=require"},
                 {"TOOLVFS_TEST_HIDE_SANDBOX=landlock"});
  ASSERT_FALSE(run.deadline_passed) << run;
  EXPECT_EQ(run.exit_code, 4) << run;
  ExpectOneLineError(ProcessResult{run.exit_code, run.out, run.err});
  EXPECT_THAT(run.err, HasSubstr("Landlock")) << run;
  EXPECT_FALSE(fs::exists(project_ / "marker.txt")) << "the tool ran\n" << run;
}

TEST_P(CorpusTest, RequireRefusesToStartWithoutSeccompAndTheToolNeverRuns) {
  ProcessResult run = Exec(Tool("write_marker"), {}, {"--allow-write", "marker.txt", "--sandbox=require"},
                 {"TOOLVFS_TEST_HIDE_SANDBOX=seccomp"});
  ASSERT_FALSE(run.deadline_passed) << run;
  EXPECT_EQ(run.exit_code, 4) << run;
  ExpectOneLineError(ProcessResult{run.exit_code, run.out, run.err});
  EXPECT_THAT(run.err, AnyOf(HasSubstr("seccomp"), HasSubstr("Seccomp"))) << run;
  EXPECT_FALSE(fs::exists(project_ / "marker.txt")) << "the tool ran\n" << run;
}

TEST_P(CorpusTest, RequireIsTheDefault) {
  ProcessResult run = Exec(Tool("write_marker"), {}, {"--allow-write", "marker.txt"}, {"TOOLVFS_TEST_HIDE_SANDBOX=landlock"});
  ASSERT_FALSE(run.deadline_passed) << run;
  EXPECT_EQ(run.exit_code, 4) << run;
  EXPECT_FALSE(fs::exists(project_ / "marker.txt")) << "the tool ran\n" << run;
}

TEST_P(CorpusTest, BestEffortRunsWithoutLandlockWithAWarningNamingIt) {
  ProcessResult run = Exec(Tool("write_marker"), {}, {"--allow-write", "marker.txt", "--sandbox=best-effort"},
                 {"TOOLVFS_TEST_HIDE_SANDBOX=landlock"});
  ASSERT_FALSE(run.deadline_passed) << run;
  EXPECT_EQ(run.exit_code, 0) << run;
  EXPECT_EQ(ParseOutcome(run).text, "wrote marker") << run;
  EXPECT_THAT(run.err, HasSubstr("warning")) << run;
  EXPECT_THAT(run.err, HasSubstr("Landlock")) << run;
  EXPECT_EQ(ReadFile(project_ / "marker.txt"), "ran");
}

TEST_P(CorpusTest, BestEffortRunsWithoutSeccompWithAWarningNamingIt) {
  ProcessResult run = Exec(Tool("write_marker"), {}, {"--allow-write", "marker.txt", "--sandbox=best-effort"},
                 {"TOOLVFS_TEST_HIDE_SANDBOX=seccomp"});
  ASSERT_FALSE(run.deadline_passed) << run;
  EXPECT_EQ(run.exit_code, 0) << run;
  EXPECT_EQ(ParseOutcome(run).text, "wrote marker") << run;
  EXPECT_THAT(run.err, HasSubstr("warning")) << run;
  EXPECT_THAT(run.err, AnyOf(HasSubstr("seccomp"), HasSubstr("Seccomp"))) << run;
  EXPECT_EQ(ReadFile(project_ / "marker.txt"), "ran");
}

TEST_P(CorpusTest, BestEffortOnAFullKernelRunsWithoutWarnings) {
  ProcessResult run = Exec(Tool("write_marker"), {}, {"--allow-write", "marker.txt", "--sandbox=best-effort"});
  ASSERT_FALSE(run.deadline_passed) << run;
  EXPECT_EQ(run.exit_code, 0) << run;
  EXPECT_THAT(run.err, ::testing::Not(HasSubstr("runs without"))) << run;
  EXPECT_EQ(ReadFile(project_ / "marker.txt"), "ran");
}

// --- The positive suite ------------------------------------------------------

// examples/project in the temporary dir, its C++ tool's command pointed at
// a copy of the built todo_report that uid 65534 can run (the Python tools
// are in the project, agent_tools/).
class ExamplesTest : public CorpusTest {
 protected:
  void CopyExampleProject() {
    // The built todo_report, copied like the corpus so uid 65534 can run it.
    const fs::path todo_report = tools_ / "todo_report";
    fs::copy_file(TOOLVFS_TODO_REPORT, todo_report);
    chmod(todo_report.c_str(), 0755);
    fs::remove_all(project_);
    fs::copy(fs::path(SourceDir()) / "examples" / "project", project_, fs::copy_options::recursive);
    std::string config = ReadFile(project_ / "toolvfs.toml");
    ReplaceOnce(config, "\"${toolvfs.prefix}/libexec/toolvfs/examples/todo_report\"",
                "\"" + todo_report.string() + "\"");
    WriteFile(project_ / "toolvfs.toml", config);
  }

  static void ReplaceOnce(std::string& text, const std::string& from, const std::string& to) {
    size_t at = text.find(from);
    ASSERT_NE(at, std::string::npos) << "examples/project/toolvfs.toml no longer has " << from;
    text.replace(at, from.size(), to);
  }
};

TEST_P(ExamplesTest, TheCppExampleToolWorksUnderTheSandbox) {
  CopyExampleProject();
  auto before = Snapshot(project_);
  ProcessResult run = RunTool("todo_report");
  ASSERT_FALSE(run.deadline_passed) << run;
  ASSERT_EQ(run.exit_code, 0) << run;
  JsonOutcome outcome = ParseOutcome(run);
  EXPECT_EQ(outcome.status, "completed") << run;
  EXPECT_THAT(outcome.text, HasSubstr("shortlink/")) << run;
  EXPECT_EQ(Snapshot(project_), before);
}

TEST_P(ExamplesTest, ThePythonExampleToolWorksUnderTheSandbox) {
  CopyExampleProject();
  auto before = Snapshot(project_);
  ProcessResult run = RunTool("rename_symbol", R"({"from": "LinkStore", "to": "SlugStore", "dry_run": true})");
  ASSERT_FALSE(run.deadline_passed) << run;
  ASSERT_EQ(run.exit_code, 0) << run;
  JsonOutcome outcome = ParseOutcome(run);
  EXPECT_EQ(outcome.status, "completed") << run;
  EXPECT_THAT(outcome.text, HasSubstr("LinkStore")) << run;
  EXPECT_EQ(Snapshot(project_), before) << "a dry run changed the project";
}

// A process.run child is confined to the calling tool's filesystem policy:
// it writes in the project only where the policy makes it writable, and
// never outside the project.
class ProcessRunTest : public CorpusTest {
 protected:
  void WriteConfig() {
    fs::path script = tools_ / "process_run_child.py";
    fs::copy_file(fs::path(SourceDir()) / "tests" / "sandbox" / "corpus" / "process_run_child.py", script);
    chmod(script.c_str(), 0644);
    const std::string command = "python3 " + script.string();
    WriteFile(project_ / "toolvfs.toml",
              "[tools.writer]\ncommand = \"" + command + "\"\nruntime = \"vfs\"\n\n"
              "[tools.writer.sandbox]\nfilesystem.allow = [\".\"]\nfilesystem.writable = true\n"
              "commands.touch = {}\n\n"
              "[tools.reader]\ncommand = \"" + command + "\"\nruntime = \"vfs\"\n\n"
              "[tools.reader.sandbox]\nfilesystem.allow = [\".\"]\ncommands.touch = {}\n");
  }

  // {target: {exit_code, stderr} | {refused}} as the tool reported it.
  static rapidjson::Document Report(const ProcessResult& run) {
    rapidjson::Document report;
    report.Parse(ParseOutcome(run).text.c_str());
    EXPECT_TRUE(report.IsObject()) << run;
    return report;
  }

  static int ExitCodeOf(const rapidjson::Document& report, const std::string& target) {
    if (!report.IsObject() || !report.HasMember(target.c_str())) return -1000;
    const auto& entry = report[target.c_str()];
    return entry.HasMember("exit_code") ? entry["exit_code"].GetInt() : -1000;
  }

  // The writer tool's process.run child creates `inside` (a project path)
  // and fails to create a file directly in /tmp.
  void ExpectTheWritersChildWritesOnlyAt(const std::string& inside) {
    ProcessResult run = RunTool("writer", R"({"targets": [")" + inside + R"(", ")" + outside_.string() + R"("]})");
    ASSERT_FALSE(run.deadline_passed) << run;
    ASSERT_EQ(run.exit_code, 0) << run;
    rapidjson::Document report = Report(run);
    EXPECT_EQ(ExitCodeOf(report, inside), 0) << run;
    EXPECT_TRUE(fs::exists(project_ / inside)) << run;
    EXPECT_NE(ExitCodeOf(report, outside_.string()), 0) << "the child wrote outside the project\n" << run;
    EXPECT_FALSE(fs::exists(outside_)) << outside_ << " was created by a process.run child";
  }
};

TEST_P(ProcessRunTest, AChildOfAWritableToolWritesInTheProjectButNotInTmp) {
  WriteConfig();
  // In src/, not the root: the root holds toolvfs.toml (sensitive), so the
  // sandbox grants its entries one by one and nothing new can be created
  // there (docs/sandbox.md, "Exceptions inside a prefix").
  ExpectTheWritersChildWritesOnlyAt("src/created-by-child.txt");
}

TEST_P(ProcessRunTest, AChildOfAReadOnlyToolWritesNowhere) {
  WriteConfig();
  const std::string inside = "src/created-by-child.txt";
  ProcessResult run = RunTool("reader", R"({"targets": [")" + inside + R"(", ")" + outside_.string() + R"("]})");
  ASSERT_FALSE(run.deadline_passed) << run;
  ASSERT_EQ(run.exit_code, 0) << run;
  rapidjson::Document report = Report(run);
  EXPECT_NE(ExitCodeOf(report, inside), 0) << run;
  EXPECT_FALSE(fs::exists(project_ / inside)) << "a read-only tool's child wrote in the project\n" << run;
  EXPECT_NE(ExitCodeOf(report, outside_.string()), 0) << run;
  EXPECT_FALSE(fs::exists(outside_)) << outside_ << " was created by a process.run child";
}

// Where a container's seccomp profile refuses openat2 (ENOSYS on older
// kernels and profiles, EPERM on some), the host builds the sandbox's
// per-entry rules by walking the path instead (OpenWithoutSymlinks): the
// tool starts, and its child still writes only where the policy lets it.
TEST_P(ProcessRunTest, WhereOpenat2IsRefusedTheSandboxIsBuiltAndHolds) {
  WriteConfig();
  for (const char* refusal : {"ENOSYS", "EPERM"}) {
    SCOPED_TRACE(refusal);
    host_wrapper_ = {Tool("without_openat2"), refusal};
    ExpectTheWritersChildWritesOnlyAt(std::string("src/created-without-openat2-") + refusal + ".txt");
  }
}

// The unprivileged run really is unprivileged.
TEST_P(CorpusTest, TheRunsUseTheExpectedUser) {
  std::vector<std::string> argv;
  if (Unprivileged()) argv = {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"};
  argv.push_back("/usr/bin/id");
  argv.push_back("-u");
  ProcessResult run = RunProcess(argv, {.cwd = "/", .deadline = kRunDeadline});
  EXPECT_EQ(run.exit_code, 0) << run;
  EXPECT_EQ(run.out, Unprivileged() ? "65534\n" : "0\n");
}

INSTANTIATE_TEST_SUITE_P(Users, CorpusTest, ::testing::Values(As::kRoot, As::kUnprivileged), AsName);
INSTANTIATE_TEST_SUITE_P(Users, ExamplesTest, ::testing::Values(As::kRoot, As::kUnprivileged), AsName);
INSTANTIATE_TEST_SUITE_P(Users, ProcessRunTest, ::testing::Values(As::kRoot, As::kUnprivileged), AsName);

}  // namespace
}  // namespace toolvfs
