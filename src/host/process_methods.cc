// process.run (SPEC.md §3.2, §3.3, §4.3): runs a program the tool's command
// rules allow, in the project directory, with a clean environment, and
// returns its output with every forwarded secret redacted.
//
// The steps, in order, so that nothing runs and no question is asked for a
// request that cannot be served: params; a project directory to run in;
// the program resolved to an absolute path; the command rule and the
// variables (a variable the rule does not list is denied at once: the
// user is never asked to hand a secret over); the gate; then the child,
// started through the same launcher as the tool, so the sandbox confines it.
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/text.h"
#include "host/methods.h"
#include "host/request_audit.h"
#include "policy/secret_scrubber.h"
#include "protocol/base64.h"
#include "sandbox/private_temp_dir.h"
#include "sandbox/tool_access.h"

namespace toolvfs {
namespace {

namespace fs = std::filesystem;

constexpr uint64_t kDefaultTimeoutSeconds = 60;
constexpr uint64_t kMaxTimeoutSeconds = 24 * 60 * 60;  // keeps the deadline arithmetic far from overflow
// Per stream: two full streams fit the answer limit of the default 10 MiB
// message limit (AnswerLimitBytes) even escaped at worst, six bytes a byte.
constexpr size_t kOutputLimit = size_t{1} << 20;

// ----- The program -----------------------------------------------------------

bool IsExecutableFile(const std::string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

bool IsSameFile(const std::string& a, const std::string& b) {
  struct stat first {
  }, second{};
  return ::stat(a.c_str(), &first) == 0 && ::stat(b.c_str(), &second) == 0 && first.st_dev == second.st_dev &&
         first.st_ino == second.st_ino;
}

// The host's PATH, or the fixed one when the host has none.
std::string_view SearchPath(const MethodContext& context) {
  if (context.host_environment != nullptr) {
    auto path = context.host_environment->find("PATH");
    if (path != context.host_environment->end()) return path->second;
  }
  return kFixedPath;
}

// Whether the absolute `path` lies in (or is) `directory`, component-wise.
bool LiesIn(const fs::path& path, const fs::path& directory) {
  fs::path relative = path.lexically_relative(directory);
  return !relative.empty() && *relative.begin() != "..";
}

// `path` with its symlinks followed as far as it exists (the rest appended
// as written), so a link into the project is judged where it leads; the
// path as written if even that fails.
fs::path ResolvedLocation(const fs::path& path) {
  std::error_code error;
  fs::path resolved = fs::weakly_canonical(path, error);
  return error ? path.lexically_normal() : resolved;
}

// A search path entry process.run leaves out, and why.
struct SkippedEntry {
  std::string entry;      // as written in PATH ("" for an empty entry)
  fs::path directory;     // where a lookup through it would search
  std::string reason;
};

// A search path split into the directories process.run searches (absolute,
// outside the project: tools cannot write there) and the entries it skips:
// empty and relative entries (searched from the working directory, the
// project) and directories inside the project, also through a symlink or
// one that does not exist yet (a tool could create it).
struct SplitPath {
  std::string usable;  // colon-separated, in the original order
  std::vector<SkippedEntry> skipped;
};

SplitPath SplitSearchPath(std::string_view search_path, const fs::path& project) {
  SplitPath split;
  while (true) {
    size_t colon = search_path.find(':');
    std::string entry(search_path.substr(0, colon));
    if (entry.empty()) {
      split.skipped.push_back({entry, project, "an empty entry means the working directory, the project"});
    } else if (!entry.starts_with('/')) {
      split.skipped.push_back({entry, project / entry, "a relative entry is searched from the project"});
    } else if (fs::path resolved = ResolvedLocation(entry); LiesIn(resolved, project)) {
      split.skipped.push_back({entry, resolved, "it lies inside the project, where tools write"});
    } else {
      if (!split.usable.empty()) split.usable += ':';
      split.usable += entry;
    }
    if (colon == std::string_view::npos) break;
    search_path.remove_prefix(colon + 1);
  }
  return split;
}

struct ResolvedProgram {
  std::string path;         // absolute: what runs
  std::string policy_name;  // what the command rules are keyed by (CommandPolicy::Check)
};

// A bare name is looked up on the host's PATH, in the directories outside
// the project only (SplitSearchPath): a program a tool wrote must never run
// by its bare name. An absolute path is taken as it is and keyed by its
// base name only when that lookup finds that same file for the name (so
// /tmp/x/rg is not `rg`); a relative path with a slash is refused, since it
// would name a file in the project, which tools write.
Result<ResolvedProgram> ResolveProgram(std::string_view program, const MethodContext& context,
                                       const fs::path& project) {
  std::string_view search_path = SearchPath(context);
  SplitPath split = SplitSearchPath(search_path, project);
  if (program.find('/') == std::string_view::npos) {
    Result<std::string> found = FindProgramOnPath(program, split.usable, RelativePathEntries::kSkip);
    if (!found.ok()) {
      for (const SkippedEntry& skipped : split.skipped) {
        if (IsExecutableFile((skipped.directory / program).string())) {
          return PermissionDeniedError("Program " + Quote(program) + " is found only in the host's PATH entry " +
                                       Quote(skipped.entry) + ", which process.run skips: " + skipped.reason +
                                       " (install it outside the project, or run it by absolute path under a "
                                       "commands rule that names that path)");
        }
      }
      return NotFoundError("Program " + Quote(program) + " was not found on the host's PATH " +
                           Quote(search_path));
    }
    // A link in a directory outside the project may still lead into it.
    if (fs::path target = ResolvedLocation(*found); LiesIn(target, project)) {
      return PermissionDeniedError("Program " + Quote(program) + " on the host's PATH is " + Quote(*found) +
                                   ", a link to " + Quote(target.string()) +
                                   " inside the project, where tools write; process.run does not run it by "
                                   "its bare name");
    }
    return ResolvedProgram{std::move(*found), std::string(program)};
  }
  if (!program.starts_with('/')) {
    return InvalidArgumentError(
        "Invalid params: 'program' must be a bare name (looked up on PATH) or an "
        "absolute path, got " +
        Quote(program));
  }
  std::string path(program);
  if (!IsExecutableFile(path)) {
    return NotFoundError("Program " + Quote(program) + " is not an executable file");
  }
  std::string_view base_name = program.substr(program.rfind('/') + 1);
  Result<std::string> on_path = FindProgramOnPath(base_name, split.usable, RelativePathEntries::kSkip);
  bool is_path_program = on_path.ok() && IsSameFile(*on_path, path);
  return ResolvedProgram{path, is_path_program ? std::string(base_name) : path};
}

// ----- The environment -------------------------------------------------------

struct Variable {
  std::string name;
  std::string value;
};

// The host's values of the `requested` variables the policy let through
// (CheckEnvironment passed): loader variables are dropped, variables the
// host does not set are left unset.
std::vector<Variable> ForwardedVariables(std::span<const std::string> requested,
                                         const MethodContext& context) {
  std::vector<Variable> forwarded;
  if (context.host_environment == nullptr) return forwarded;
  for (const std::string& name : requested) {
    if (IsLoaderVariable(name)) continue;
    auto value = context.host_environment->find(name);
    if (value != context.host_environment->end()) forwarded.push_back({name, value->second});
  }
  return forwarded;
}

// The fixed environment of SPEC.md §5 with the forwarded variables set over
// it: a rule that lists HOME or PATH in its envs means the host's value.
// The child's PATH keeps only directories outside the project
// (SplitSearchPath), so that a `make` or `sh -c` it runs cannot find a
// program a tool wrote either; with none left PATH is unset (an empty PATH
// would mean the working directory).
std::vector<std::string> ChildEnvironment(const PrivateTempDir& private_dir,
                                          const std::vector<Variable>& forwarded, const fs::path& project) {
  std::vector<std::string> environment = FixedEnvironment(private_dir);
  for (const Variable& variable : forwarded) {
    std::string prefix = variable.name + "=";
    std::erase_if(environment, [&](const std::string& entry) { return entry.starts_with(prefix); });
    environment.push_back(prefix + variable.value);
  }
  for (auto entry = environment.begin(); entry != environment.end(); ++entry) {
    if (!entry->starts_with("PATH=")) continue;
    std::string usable = SplitSearchPath(std::string_view(*entry).substr(5), project).usable;
    if (usable.empty()) {
      environment.erase(entry);
    } else {
      *entry = "PATH=" + usable;
    }
    break;
  }
  return environment;
}

// ----- Running ---------------------------------------------------------------

// Blocks SIGPIPE in the calling thread while it lives, so that writing the
// stdin of a child that stopped reading gives EPIPE instead of killing the
// host (the session ignores SIGPIPE, but an embedder calling a handler
// directly need not). A SIGPIPE raised meanwhile is consumed before the
// mask is restored.
class SigpipeBlockedInThisThread {
 public:
  SigpipeBlockedInThisThread() {
    sigemptyset(&sigpipe_);
    sigaddset(&sigpipe_, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &sigpipe_, &previous_);
  }
  ~SigpipeBlockedInThisThread() {
    timespec no_wait{};
    while (sigtimedwait(&sigpipe_, nullptr, &no_wait) > 0) {
    }
    pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
  }
  SigpipeBlockedInThisThread(const SigpipeBlockedInThisThread&) = delete;
  SigpipeBlockedInThisThread& operator=(const SigpipeBlockedInThisThread&) = delete;

 private:
  sigset_t sigpipe_;
  sigset_t previous_;
};

// Readable when the process ends, so the poll loop sleeps until then; an
// invalid fd on kernels without pidfd_open (the loop then polls the exit).
UniqueFd OpenExitFd(pid_t pid) {
#ifdef SYS_pidfd_open
  return UniqueFd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
#else
  return UniqueFd();
#endif
}

// One output stream of the child, read as it comes.
struct OutputCapture {
  UniqueFd fd;
  std::string bytes;     // the first `keep_limit` bytes
  uint64_t written = 0;  // everything the child wrote

  // Reads what is there now; closes the fd at end of file or on an error.
  void ReadAvailable(size_t keep_limit) {
    char buffer[64 * 1024];
    while (fd) {
      ssize_t count = ::read(fd.get(), buffer, sizeof buffer);
      if (count > 0) {
        written += static_cast<uint64_t>(count);
        size_t room = keep_limit - std::min(bytes.size(), keep_limit);
        bytes.append(buffer, std::min(static_cast<size_t>(count), room));
      } else if (count < 0 && errno == EINTR) {
        continue;
      } else if (count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        return;
      } else {
        fd.reset();
      }
    }
  }
};

// The child's stdin, written as the pipe takes it and closed at the end
// (or at once when there is no input), so the child sees end of file.
struct InputFeed {
  UniqueFd& fd;
  std::string_view input;
  size_t offset = 0;

  void WriteAvailable() {
    while (fd && offset < input.size()) {
      size_t chunk = std::min<size_t>(input.size() - offset, 64 * 1024);
      ssize_t count = ::write(fd.get(), input.data() + offset, chunk);
      if (count > 0) {
        offset += static_cast<size_t>(count);
      } else if (count < 0 && errno == EINTR) {
        continue;
      } else if (count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        return;
      } else {
        fd.reset();  // EPIPE: the child stopped reading, the rest is dropped
      }
    }
    fd.reset();
  }
};

struct FinishedRun {
  std::optional<ExitStatus> exit;  // nullopt: killed at the timeout
  OutputCapture stdout_capture;
  OutputCapture stderr_capture;
};

// Feeds `input` to the child and collects its output (the first
// `keep_limit` bytes of each stream) until it exits or `timeout` passes
// (exit unset) or the request is cancelled (Cancelled, the child killed),
// never blocking on one pipe while another is full. When the child exits,
// its process group is killed (background processes it left do not
// outlive the request) and what is left in the pipes is read.
Result<FinishedRun> Communicate(ChildProcess& child, std::string_view input, size_t keep_limit,
                                std::chrono::milliseconds timeout, const RequestScope& scope) {
  SigpipeBlockedInThisThread sigpipe_blocked;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  UniqueFd exit_fd = OpenExitFd(child.pid());
  FinishedRun run;
  run.stdout_capture.fd = std::move(child.stdout_fd());
  run.stderr_capture.fd = std::move(child.stderr_fd());
  InputFeed feed{child.stdin_fd(), input};
  feed.WriteAvailable();
  while (true) {
    TOOLVFS_ASSIGN_OR_RETURN(std::optional<ExitStatus> exit, child.TryWait());
    if (exit) {
      static_cast<void>(child.Signal(SIGKILL));  // the group's leftovers; ESRCH is fine
      run.stdout_capture.ReadAvailable(keep_limit);
      run.stderr_capture.ReadAvailable(keep_limit);
      run.exit = *exit;
      return run;
    }
    auto remaining =
        std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (scope.cancelled()) {
      TOOLVFS_RETURN_IF_ERROR(child.Signal(SIGKILL));
      static_cast<void>(child.Wait());
      return Status(StatusCode::kCancelled, "process.run was cancelled; the process was killed");
    }
    if (remaining.count() <= 0) {
      TOOLVFS_RETURN_IF_ERROR(child.Signal(SIGKILL));
      TOOLVFS_ASSIGN_OR_RETURN(ExitStatus killed, child.Wait());
      static_cast<void>(killed);
      return run;
    }
    pollfd fds[4];
    nfds_t count = 0;
    auto watch = [&](const UniqueFd& fd, short events) {
      if (fd) fds[count++] = pollfd{fd.get(), events, 0};
    };
    watch(feed.fd, POLLOUT);
    watch(run.stdout_capture.fd, POLLIN);
    watch(run.stderr_capture.fd, POLLIN);
    watch(exit_fd, POLLIN);
    // Without an exit fd the loop looks at the child every 10 ms; it looks
    // at the request's cancel flag every 50 ms.
    int wait_ms = static_cast<int>(std::min<int64_t>(remaining.count(), exit_fd ? 50 : 10));
    if (::poll(fds, count, wait_ms) < 0 && errno != EINTR) {
      return ErrnoToStatus(errno, "Cannot wait for the output of process " + std::to_string(child.pid()));
    }
    // Each handler reads or writes only what is there (non-blocking fds).
    feed.WriteAvailable();
    run.stdout_capture.ReadAvailable(keep_limit);
    run.stderr_capture.ReadAvailable(keep_limit);
  }
}

// One stream for the answer: scrubbed, cut at kOutputLimit, and base64 if
// it is not UTF-8 text.
struct AnswerOutput {
  std::string content;
  bool is_base64 = false;
  bool truncated = false;
};

AnswerOutput PrepareOutput(const OutputCapture& capture, const SecretScrubber& scrubber) {
  AnswerOutput output;
  output.truncated = capture.written > kOutputLimit;
  output.content = scrubber.ScrubPrefix(capture.bytes, kOutputLimit);
  if (output.truncated) {
    // The cut may split a character; that alone must not make text binary.
    size_t valid = ValidUtf8Prefix(output.content);
    if (output.content.size() - valid < 4) output.content.resize(valid);
  }
  if (!IsValidUtf8(output.content)) {
    output.content = Base64Encode(output.content);
    output.is_base64 = true;
  }
  return output;
}

// "SIGSEGV"; the number for a signal without a name.
std::string SignalName(int signal_number) {
  const char* abbreviation = sigabbrev_np(signal_number);
  return abbreviation == nullptr ? std::to_string(signal_number) : std::string("SIG") + abbreviation;
}

Status CheckNoNul(std::string_view value, std::string_view name) {
  if (value.find('\0') == std::string_view::npos) return OkStatus();
  return InvalidArgumentError("Invalid params: " + std::string(name) +
                              " contains a NUL character, which no program can receive");
}

// process.run {program, args?, envs?, stdin?, timeout_s?} ->
//   {stdout, stderr, exit_code, truncated, stdout_encoding?,
//    stderr_encoding?, signal?}
//
// `envs` names host variables to forward (see the file comment); `stdin`
// is text written to the child's stdin (closed at once when absent);
// `timeout_s` (default 60, at most 86400) kills the child's whole process
// group and answers -32004. Each of stdout and stderr keeps its first MiB
// (`truncated` when either was cut); a stream that is not UTF-8 comes as
// base64 with `<stream>_encoding: "base64"`. A child killed by a signal has
// exit_code 128 + the signal number and `signal` naming it ("SIGSEGV").
Result<WireMessage> ServeProcessRun(const Message& request, const MethodContext& context,
                                    RequestScope& scope) {
  const Params& params = request.params();
  TOOLVFS_RETURN_IF_ERROR(params.ExpectOnly({"program", "args", "envs", "stdin", "timeout_s"}));
  TOOLVFS_ASSIGN_OR_RETURN(std::string_view program, params.String("program"));
  TOOLVFS_ASSIGN_OR_RETURN(std::optional<std::vector<std::string_view>> arg_views,
                           params.OptionalStringArray("args"));
  TOOLVFS_ASSIGN_OR_RETURN(std::optional<std::vector<std::string_view>> env_views,
                           params.OptionalStringArray("envs"));
  TOOLVFS_ASSIGN_OR_RETURN(std::optional<std::string_view> input, params.OptionalString("stdin"));
  TOOLVFS_ASSIGN_OR_RETURN(std::optional<uint64_t> timeout_s, params.OptionalUint("timeout_s"));

  if (program.empty()) return InvalidArgumentError("Invalid params: 'program' is empty");
  TOOLVFS_RETURN_IF_ERROR(CheckNoNul(program, "'program'"));
  std::vector<std::string> args;
  if (arg_views) args.assign(arg_views->begin(), arg_views->end());
  for (size_t i = 0; i < args.size(); ++i) {
    TOOLVFS_RETURN_IF_ERROR(CheckNoNul(args[i], "'args[" + std::to_string(i) + "]'"));
  }
  std::vector<std::string> envs;
  if (env_views) envs.assign(env_views->begin(), env_views->end());
  uint64_t timeout_seconds = timeout_s.value_or(kDefaultTimeoutSeconds);
  if (timeout_seconds == 0 || timeout_seconds > kMaxTimeoutSeconds) {
    return InvalidArgumentError("Invalid params: 'timeout_s' must be from 1 to " +
                                std::to_string(kMaxTimeoutSeconds) + ", got " +
                                std::to_string(timeout_seconds));
  }
  if (!context.process_working_directory) {
    return NoProjectError("process.run needs a project directory to run in, and this host has none");
  }
  TOOLVFS_ASSIGN_OR_RETURN(std::string working_directory, context.process_working_directory());

  // Canonical, as the PATH entries it is compared with are.
  const fs::path project = ResolvedLocation(working_directory);
  TOOLVFS_ASSIGN_OR_RETURN(ResolvedProgram resolved, ResolveProgram(program, context, project));
  const CommandPolicy& commands = context.gate.policy().commands;
  PolicyDecision decision = commands.Check(resolved.policy_name, args);
  if (decision.decision != Decision::kDeny) {
    PolicyDecision environment = commands.CheckEnvironment(resolved.policy_name, envs);
    if (environment.decision == Decision::kDeny) decision = std::move(environment);
  }
  std::string command_line = CommandLine(resolved.path, args);
  TOOLVFS_RETURN_IF_ERROR(context.gate.Authorize(scope, "run", command_line, decision));

  std::vector<Variable> forwarded = ForwardedVariables(envs, context);
  std::vector<std::string> secrets;
  for (const Variable& variable : forwarded) secrets.push_back(variable.value);
  SecretScrubber scrubber(secrets);

  TOOLVFS_ASSIGN_OR_RETURN(PrivateTempDir private_dir, PrivateTempDir::Create());
  LaunchSpec spec;
  spec.program = resolved.path;
  spec.args = std::move(args);
  spec.environment = ChildEnvironment(private_dir, forwarded, project);
  spec.working_directory = working_directory;
  TOOLVFS_ASSIGN_OR_RETURN(ChildProcess child,
                           context.launch_process ? context.launch_process(spec) : Launch(spec));
  TOOLVFS_ASSIGN_OR_RETURN(FinishedRun run,
                           Communicate(child, input.value_or(""), kOutputLimit + scrubber.longest_form_size(),
                                       std::chrono::seconds(timeout_seconds), scope));
  if (!run.exit) {
    return TimeoutError("process.run of " + Quote(command_line) + " timed out after " +
                        std::to_string(timeout_seconds) + " s and was killed");
  }

  AnswerOutput out = PrepareOutput(run.stdout_capture, scrubber);
  AnswerOutput err = PrepareOutput(run.stderr_capture, scrubber);
  const ExitStatus& exit = *run.exit;
  return SerializeResult(
      request.id(),
      [&](JsonWriter& writer) {
        writer.StartObject();
        WriteJsonKey(writer, "stdout");
        WriteJsonString(writer, out.content);
        WriteJsonKey(writer, "stderr");
        WriteJsonString(writer, err.content);
        WriteJsonKey(writer, "exit_code");
        writer.Int(exit.exited() ? exit.code : 128 + exit.signal);
        WriteJsonKey(writer, "truncated");
        writer.Bool(out.truncated || err.truncated);
        if (out.is_base64) {
          WriteJsonKey(writer, "stdout_encoding");
          WriteJsonString(writer, "base64");
        }
        if (err.is_base64) {
          WriteJsonKey(writer, "stderr_encoding");
          WriteJsonString(writer, "base64");
        }
        if (exit.signaled()) {
          WriteJsonKey(writer, "signal");
          WriteJsonString(writer, SignalName(exit.signal));
        }
        writer.EndObject();
      },
      out.content.size() + err.content.size() + 128);
}

constexpr MethodSpec kProcessMethods[] = {
    {"process.run", &Handle<ServeProcessRun>, true},  // waits for the child
};

}  // namespace

std::span<const MethodSpec> ProcessMethods() { return kProcessMethods; }

}  // namespace toolvfs
