#include "policy/inquirer.h"

#include <fcntl.h>
#include <poll.h>
#include <termios.h>
#include <unistd.h>

#include <signal.h>

#include <atomic>
#include <cerrno>
#include <iterator>
#include <mutex>
#include <optional>

#include "core/io.h"
#include "config/config_edit.h"
#include "core/text.h"
#include "policy/path_glob.h"

namespace toolvfs {
namespace {

// An answer line longer than this is not an answer; the rest of it is read
// and dropped so the next line is read cleanly.
constexpr size_t kMaxAnswerBytes = 256;

// The sandbox table's keys, as PolicyDecision hints name them.
constexpr std::string_view kSandboxKeys[] = {"filesystem.", "network.", "commands.",
                                             "sensitive_paths", "system_read", "limits"};

void AppendByteEscape(std::string& out, uint8_t byte) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += "\\x";
  out += kHex[byte >> 4];
  out += kHex[byte & 0xF];
}

// Length of the UTF-8 sequence its lead byte announces, 0 for a byte that
// cannot start one.
size_t AnnouncedLength(uint8_t lead) {
  if (lead >= 0xC2 && lead <= 0xDF) return 2;
  if (lead >= 0xE0 && lead <= 0xEF) return 3;
  if (lead >= 0xF0 && lead <= 0xF4) return 4;
  return 0;
}

// A code point that is valid UTF-8 but must not reach the terminal as it
// is: C1 controls, and characters that reorder or break the line so the
// text shown differs from the text granted.
bool IsHiddenControl(char32_t code_point) {
  return (code_point >= 0x80 && code_point <= 0x9F) || code_point == 0x061C || code_point == 0x200E ||
         code_point == 0x200F || (code_point >= 0x2028 && code_point <= 0x202E) ||
         (code_point >= 0x2066 && code_point <= 0x2069);
}

char32_t DecodeValidSequence(std::string_view sequence) {
  auto byte = [&](size_t i) { return static_cast<char32_t>(static_cast<uint8_t>(sequence[i])); };
  switch (sequence.size()) {
    case 2: return (byte(0) & 0x1F) << 6 | (byte(1) & 0x3F);
    case 3: return (byte(0) & 0x0F) << 12 | (byte(1) & 0x3F) << 6 | (byte(2) & 0x3F);
    default:
      return (byte(0) & 0x07) << 18 | (byte(1) & 0x3F) << 12 | (byte(2) & 0x3F) << 6 | (byte(3) & 0x3F);
  }
}

// `tools.NAME.sandbox` with NAME as TOML writes it.
std::string SandboxTableKey(std::string_view tool_name) {
  return "tools." + TomlKey(tool_name) + ".sandbox";
}

// A typed answer without the spaces and tabs around it (and the \r of a
// terminal sending CR LF).
std::string_view TrimAnswer(std::string_view line) {
  auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\r'; };
  while (!line.empty() && is_space(line.front())) line.remove_prefix(1);
  while (!line.empty() && is_space(line.back())) line.remove_suffix(1);
  return line;
}

// y/a/n/d, either case, of an answer TrimAnswer has trimmed; nullopt for
// anything else.
std::optional<InquiryAnswer> ParseAnswer(std::string_view line) {
  if (line.size() != 1) return std::nullopt;
  switch (line[0]) {
    case 'y': case 'Y': return InquiryAnswer::kAllowOnce;
    case 'a': case 'A': return InquiryAnswer::kAllowForRun;
    case 'n': case 'N': return InquiryAnswer::kDenyOnce;
    case 'd': case 'D': return InquiryAnswer::kDenyForRun;
    default: return std::nullopt;
  }
}

bool IsFileOperation(std::string_view operation) { return operation == "read" || operation == "write"; }

// Whether the question may offer a directory or a pattern (t/x/p): one
// target, a project path.
bool OffersWiderAnswers(const Inquiry& inquiry) {
  return IsFileOperation(inquiry.operation) && inquiry.targets.size() <= 1;
}

// The directory of a project path target, "" for the root.
std::string DirectoryOf(std::string_view target) {
  size_t slash = target.rfind('/');
  return slash == std::string_view::npos ? std::string() : std::string(target.substr(0, slash));
}

// The pattern of everything below the target's directory.
std::string DirectoryPattern(std::string_view target) {
  std::string directory = DirectoryOf(target);
  return directory.empty() ? std::string("**") : directory + "/**";
}

std::string DirectoryShown(std::string_view target) {
  std::string directory = DirectoryOf(target);
  return directory.empty() ? std::string("the whole project") : "all of '" + EscapeForTerminal(directory) + "/'";
}

// The answer keys the question offers, in the order shown.
std::string AnswerKeys(const Inquiry& inquiry, bool can_save) {
  std::string keys = "y/a/n/d";
  if (OffersWiderAnswers(inquiry)) keys += "/t/x/p";
  if (can_save) keys += "/s";
  return keys;
}

std::string Prompt(const Inquiry& inquiry, bool can_save) {
  std::string prompt = "toolvfs: tool '" + EscapeForTerminal(inquiry.tool) + "' asks to " +
                       EscapeForTerminal(inquiry.operation) + " " + InquiryTargetsShown(inquiry) +
                       ", which its policy does not cover\n";
  if (!inquiry.hint.empty()) {
    prompt += "  (to allow it without asking: " +
              EscapeForTerminal(inquiry.ad_hoc ? inquiry.hint : QualifyPolicyHint(inquiry.tool, inquiry.hint)) +
              ")\n";
  }
  prompt += "  y: allow once   a: allow for this run   n: deny once   d: deny for this run\n";
  if (OffersWiderAnswers(inquiry)) {
    prompt += "  t: allow " + DirectoryShown(inquiry.target) + " for this run   x: deny it for this run\n";
    prompt += "  p: allow or deny a pattern for this run\n";
  }
  if (can_save) prompt += "  s: save a rule allowing it in the config file (shown first)\n";
  prompt += "Allow? [" + AnswerKeys(inquiry, can_save) + "] ";
  return prompt;
}

// The terminal's settings while toolvfs waits for one key press, and a way
// back to the user's settings from a signal handler: a stop (Ctrl+Z), a
// quit (Ctrl+\\) or a hang-up must not leave the shell without echo.
// Ctrl+C and SIGTERM are the run's (they cancel the question, and the
// guard below restores on the way out).
struct RawTerminal {
  std::atomic<int> fd{-1};
  struct termios saved {};
  struct termios raw {};
};
RawTerminal raw_terminal;
constexpr int kRestoringSignals[] = {SIGTSTP, SIGQUIT, SIGHUP, SIGCONT};
struct sigaction previous_actions[std::size(kRestoringSignals)];

extern "C" void RestoreTerminalOnSignal(int signal_number);

// Installs the restoring handler for every signal of kRestoringSignals,
// keeping what was there before in previous_actions only the first time
// (after a stop, the handlers are put back without forgetting the
// dispositions toolvfs had before the question).
void InstallRestoringHandlers(bool keep_previous) {
  struct sigaction action {};
  action.sa_handler = RestoreTerminalOnSignal;
  sigemptyset(&action.sa_mask);
  for (size_t index = 0; index < std::size(kRestoringSignals); ++index) {
    ::sigaction(kRestoringSignals[index], &action, keep_previous ? &previous_actions[index] : nullptr);
  }
}

extern "C" void RestoreTerminalOnSignal(int signal_number) {
  const int saved_errno = errno;
  const int fd = raw_terminal.fd.load();
  if (signal_number == SIGCONT) {
    // Back from a stop: the question is still on the screen, keys again.
    if (fd >= 0) ::tcsetattr(fd, TCSANOW, &raw_terminal.raw);
    InstallRestoringHandlers(/*keep_previous=*/false);
    errno = saved_errno;
    return;
  }
  if (fd >= 0) ::tcsetattr(fd, TCSANOW, &raw_terminal.saved);
  // The signal's own effect (stop, end), as if toolvfs had no handler: the
  // previous disposition, then the signal again once this handler returns.
  for (size_t index = 0; index < std::size(kRestoringSignals); ++index) {
    if (kRestoringSignals[index] == signal_number) ::sigaction(signal_number, &previous_actions[index], nullptr);
  }
  ::raise(signal_number);
  errno = saved_errno;
}

// One question's key-press mode: non-canonical input without echo, one
// byte per read; the user's settings back in the destructor. Nothing
// changes when `fd` is no terminal (answers are then lines).
class KeyPressMode {
 public:
  explicit KeyPressMode(int fd) {
    if (::tcgetattr(fd, &raw_terminal.saved) != 0) return;
    raw_terminal.raw = raw_terminal.saved;
    raw_terminal.raw.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO);
    raw_terminal.raw.c_cc[VMIN] = 1;
    raw_terminal.raw.c_cc[VTIME] = 0;
    raw_terminal.fd.store(fd);
    InstallRestoringHandlers(/*keep_previous=*/true);
    handlers_installed_ = true;
    if (::tcsetattr(fd, TCSANOW, &raw_terminal.raw) != 0) {
      Restore();
      return;
    }
    fd_ = fd;
  }
  KeyPressMode(const KeyPressMode&) = delete;
  KeyPressMode& operator=(const KeyPressMode&) = delete;
  ~KeyPressMode() { Restore(); }

  bool active() const { return fd_ >= 0; }

  // The user's own settings for a moment (a pattern typed as a line, with
  // echo and editing), then keys again.
  void Suspend() {
    if (fd_ >= 0) ::tcsetattr(fd_, TCSANOW, &raw_terminal.saved);
  }
  void Resume() {
    if (fd_ >= 0) ::tcsetattr(fd_, TCSANOW, &raw_terminal.raw);
  }

 private:
  void Restore() {
    const int fd = raw_terminal.fd.exchange(-1);
    if (fd >= 0) ::tcsetattr(fd, TCSANOW, &raw_terminal.saved);
    if (handlers_installed_) {
      for (size_t index = 0; index < std::size(kRestoringSignals); ++index) {
        ::sigaction(kRestoringSignals[index], &previous_actions[index], nullptr);
      }
    }
    handlers_installed_ = false;
    fd_ = -1;
  }

  int fd_ = -1;
  bool handlers_installed_ = false;
};

}  // namespace

std::mutex& TerminalPromptMutex() {
  static std::mutex mutex;
  return mutex;
}

namespace {

class TerminalInquirer final : public Inquirer {
 public:
  TerminalInquirer(UniqueFd input, UniqueFd output, std::unique_ptr<RuleWriter> rules)
      : input_(std::move(input)), output_(std::move(output)), rules_(std::move(rules)) {
    int ends[2];
    // Without the pipe Cancel still works, between answer bytes only.
    if (::pipe2(ends, O_CLOEXEC | O_NONBLOCK) == 0) {
      wake_read_.reset(ends[0]);
      wake_write_.reset(ends[1]);
    }
  }

  // An inquirer whose terminal could not be opened: every Ask fails.
  explicit TerminalInquirer(Status open_error) : open_error_(std::move(open_error)) {}

  Result<InquiryAnswer> Ask(const Inquiry& inquiry) override {
    TOOLVFS_ASSIGN_OR_RETURN(InquiryReply reply, AskWithScope(inquiry));
    return reply.answer;
  }

  Result<InquiryReply> AskWithScope(const Inquiry& inquiry) override {
    if (!open_error_.ok()) return open_error_;
    if (!input_.valid() || !output_.valid()) return InvalidArgumentError("The inquirer has no terminal");
    std::lock_guard question(TerminalPromptMutex());
    if (cancelled_.load()) return CancelledError("Cancelled while asking the user");
    const bool file_operation = OffersWiderAnswers(inquiry);
    const bool can_save =
        rules_ != nullptr && !inquiry.ad_hoc && inquiry.operation != "run" && inquiry.targets.size() <= 1;
    // Keys pressed before the question was on the screen answer nothing:
    // a stray "y" typed earlier must not grant what the user never read.
    // Fails harmlessly (ENOTTY) when the input is not a terminal.
    static_cast<void>(::tcflush(input_.get(), TCIFLUSH));
    KeyPressMode keys(input_.get());
    const std::string ask_again = "Allow? [" + AnswerKeys(inquiry, can_save) + "] ";
    TOOLVFS_RETURN_IF_ERROR(Say(Prompt(inquiry, can_save)));
    while (true) {
      TOOLVFS_ASSIGN_OR_RETURN(std::optional<std::string> typed, ReadAnswer(keys));
      if (!typed) return CancelledError("No answer: the terminal reached end of input");
      std::string_view answer = TrimAnswer(*typed);
      if (std::optional<InquiryAnswer> plain = ParseAnswer(answer)) {
        TOOLVFS_RETURN_IF_ERROR(Echo(keys, answer));
        return InquiryReply{*plain, {}};
      }
      if (file_operation && (answer == "t" || answer == "T" || answer == "x" || answer == "X")) {
        TOOLVFS_RETURN_IF_ERROR(Echo(keys, answer));
        const bool allow = answer == "t" || answer == "T";
        return InquiryReply{allow ? InquiryAnswer::kAllowForRun : InquiryAnswer::kDenyForRun,
                            DirectoryPattern(inquiry.target)};
      }
      if (file_operation && (answer == "p" || answer == "P")) {
        TOOLVFS_RETURN_IF_ERROR(Echo(keys, answer));
        TOOLVFS_ASSIGN_OR_RETURN(std::optional<InquiryReply> reply, AskPattern(inquiry, keys));
        if (reply) return *reply;
      } else if (can_save && (answer == "s" || answer == "S")) {
        TOOLVFS_RETURN_IF_ERROR(Echo(keys, answer));
        TOOLVFS_ASSIGN_OR_RETURN(std::optional<InquiryReply> reply, SaveRule(inquiry, keys));
        if (reply) return *reply;
      } else {
        TOOLVFS_RETURN_IF_ERROR(Say("\nPlease answer one of " + AnswerKeys(inquiry, can_save) + ". "));
      }
      TOOLVFS_RETURN_IF_ERROR(Say(ask_again));
    }
  }

  bool asks_user() const override { return true; }

  void Cancel() override {
    cancelled_.store(true);
    if (wake_write_.valid()) {
      char byte = 0;
      static_cast<void>(::write(wake_write_.get(), &byte, 1));  // full pipe: already woken
    }
  }

 private:
  Status Say(std::string_view text) { return WriteFull(output_.get(), text, "Cannot ask on the terminal"); }

  // Shows the key pressed (the terminal does not echo it), so the screen
  // keeps the answer; a line answer was echoed by the terminal itself.
  Status Echo(const KeyPressMode& keys, std::string_view answer) {
    if (!keys.active()) return OkStatus();
    return Say(std::string(answer) + "\n");
  }

  // One key in key-press mode (line breaks and spaces skipped: a habitual
  // Enter answers nothing), else one line.
  Result<std::optional<std::string>> ReadAnswer(const KeyPressMode& keys) {
    if (!keys.active()) return ReadLine();
    while (true) {
      TOOLVFS_ASSIGN_OR_RETURN(std::optional<char> key, ReadByte());
      if (!key) return std::optional<std::string>();
      if (*key == '\n' || *key == '\r' || *key == ' ' || *key == '\t') continue;
      // Ctrl+D (the terminal's end-of-input key) ends the input as it does
      // in line mode.
      if (static_cast<cc_t>(*key) == raw_terminal.saved.c_cc[VEOF]) return std::optional<std::string>();
      // An arrow or function key sends ESC [ A and the like: its letters
      // must not answer ("A" would allow for the run). Its bytes arrive
      // together; they are dropped up to the sequence's final byte.
      if (*key == '\x1b') {
        TOOLVFS_RETURN_IF_ERROR(DropEscapeSequence());
        continue;
      }
      return std::optional<std::string>(std::string(1, *key));
    }
  }

  // "p": a pattern typed as a line (with the terminal's own echo and
  // editing), which must match the target, then a or d. nullopt: ask the
  // first question again.
  Result<std::optional<InquiryReply>> AskPattern(const Inquiry& inquiry, KeyPressMode& keys) {
    keys.Suspend();
    Status said = Say("  Pattern (gitignore style, e.g. " + EscapeForTerminal(DirectoryPattern(inquiry.target)) +
                      "; empty to go back): ");
    Result<std::optional<std::string>> line = said.ok() ? ReadLine() : Result<std::optional<std::string>>(said);
    keys.Resume();
    if (!line.ok()) return line.status();
    if (!*line) return CancelledError("No answer: the terminal reached end of input");
    std::string pattern(TrimAnswer(**line));
    if (pattern.empty()) return std::optional<InquiryReply>();
    if (!PathGlob::Pattern(pattern).Matches(inquiry.target)) {
      TOOLVFS_RETURN_IF_ERROR(Say("  '" + EscapeForTerminal(pattern) + "' does not match '" +
                                  EscapeForTerminal(inquiry.target) + "'; nothing was decided.\n"));
      return std::optional<InquiryReply>();
    }
    TOOLVFS_RETURN_IF_ERROR(Say("  a: allow '" + EscapeForTerminal(pattern) + "' for this run   d: deny it for this run\n"
                                "Allow or deny? [a/d] "));
    while (true) {
      TOOLVFS_ASSIGN_OR_RETURN(std::optional<std::string> typed, ReadAnswer(keys));
      if (!typed) return CancelledError("No answer: the terminal reached end of input");
      std::string_view answer = TrimAnswer(*typed);
      if (answer == "a" || answer == "A" || answer == "d" || answer == "D") {
        TOOLVFS_RETURN_IF_ERROR(Echo(keys, answer));
        const bool allow = answer == "a" || answer == "A";
        return std::optional<InquiryReply>(
            InquiryReply{allow ? InquiryAnswer::kAllowForRun : InquiryAnswer::kDenyForRun, pattern});
      }
      TOOLVFS_RETURN_IF_ERROR(Say("\nPlease answer a or d. Allow or deny? [a/d] "));
    }
  }

  // "s": the rule as a diff, confirmed with y before it is written. The
  // current request and what the rule covers are then allowed for the
  // rest of the run (the policy in force was read before the edit).
  Result<std::optional<InquiryReply>> SaveRule(const Inquiry& inquiry, KeyPressMode& keys) {
    Result<RuleWriter::Proposal> proposal = rules_->Propose(inquiry);
    if (!proposal.ok()) {
      TOOLVFS_RETURN_IF_ERROR(Say("  Cannot save a rule: " + EscapeForTerminal(proposal.status().message()) + "\n"));
      return std::optional<InquiryReply>();
    }
    std::string shown;
    for (size_t start = 0; start < proposal->diff.size();) {
      size_t end = proposal->diff.find('\n', start);
      if (end == std::string::npos) end = proposal->diff.size();
      shown += "  " + EscapeForTerminal(std::string_view(proposal->diff).substr(start, end - start)) + "\n";
      start = end + 1;
    }
    TOOLVFS_RETURN_IF_ERROR(Say(shown + "Write this change? [y/n] "));
    while (true) {
      TOOLVFS_ASSIGN_OR_RETURN(std::optional<std::string> typed, ReadAnswer(keys));
      if (!typed) return CancelledError("No answer: the terminal reached end of input");
      std::string_view answer = TrimAnswer(*typed);
      if (answer == "n" || answer == "N") {
        TOOLVFS_RETURN_IF_ERROR(Echo(keys, answer));
        return std::optional<InquiryReply>();
      }
      if (answer == "y" || answer == "Y") {
        TOOLVFS_RETURN_IF_ERROR(Echo(keys, answer));
        Status applied = rules_->Apply();
        if (!applied.ok()) {
          TOOLVFS_RETURN_IF_ERROR(Say("  Cannot save the rule: " + EscapeForTerminal(applied.message()) + "\n"));
          return std::optional<InquiryReply>();
        }
        TOOLVFS_RETURN_IF_ERROR(Say("  Saved.\n"));
        return std::optional<InquiryReply>(InquiryReply{InquiryAnswer::kAllowForRun, proposal->pattern});
      }
      TOOLVFS_RETURN_IF_ERROR(Say("\nPlease answer y or n. Write this change? [y/n] "));
    }
  }

  // The rest of an escape sequence whose ESC was read: bytes that follow
  // within 50 ms, up to a final byte (a letter or '~' after "[" or "O").
  Status DropEscapeSequence() {
    for (size_t index = 0; index < 16; ++index) {
      struct pollfd ready = {input_.get(), POLLIN, 0};
      if (::poll(&ready, 1, 50) != 1) return OkStatus();
      char byte;
      if (::read(input_.get(), &byte, 1) != 1) return OkStatus();
      const bool introducer = index == 0 && (byte == '[' || byte == 'O');
      if (!introducer && byte >= 0x40 && byte <= 0x7E) return OkStatus();
    }
    return OkStatus();
  }

  // One byte of input, nullopt at its end.
  Result<std::optional<char>> ReadByte() {
    while (true) {
      TOOLVFS_RETURN_IF_ERROR(WaitForInput());
      char byte;
      ssize_t got = ::read(input_.get(), &byte, 1);
      if (got < 0) {
        if (errno == EINTR || errno == EAGAIN) continue;
        if (errno == EIO) return std::optional<char>();
        return ErrnoToStatus(errno, "Cannot read the answer from the terminal");
      }
      if (got == 0) return std::optional<char>();
      return std::optional<char>(byte);
    }
  }

  // One line of input without its '\n' (at most kMaxAnswerBytes kept),
  // nullopt at end of input (also for a last line without '\n': it was
  // never confirmed with Enter). One byte per read(2), so nothing after
  // the answer's line is consumed.
  // A pseudo-terminal whose other side closed reads EIO: the end too.
  Result<std::optional<std::string>> ReadLine() {
    std::string line;
    while (true) {
      TOOLVFS_ASSIGN_OR_RETURN(std::optional<char> byte, ReadByte());
      if (!byte) return std::optional<std::string>();
      if (*byte == '\n') return std::optional<std::string>(std::move(line));
      if (line.size() <= kMaxAnswerBytes) line += *byte;
    }
  }

  // Returns once the input has something to read (or has ended); Cancelled
  // once Cancel() was called.
  Status WaitForInput() {
    while (true) {
      if (cancelled_.load()) return CancelledError("Cancelled while asking the user");
      struct pollfd fds[2] = {{input_.get(), POLLIN, 0}, {wake_read_.get(), POLLIN, 0}};
      int ready = ::poll(fds, wake_read_.valid() ? 2 : 1, wake_read_.valid() ? -1 : 100);
      if (ready < 0 && errno != EINTR) return ErrnoToStatus(errno, "Cannot wait for the answer");
      if (ready > 0 && fds[0].revents != 0) return OkStatus();
    }
  }

  Status open_error_;
  UniqueFd input_;
  UniqueFd output_;
  UniqueFd wake_read_;
  UniqueFd wake_write_;
  std::unique_ptr<RuleWriter> rules_;
  std::atomic<bool> cancelled_{false};
};

class DenyingInquirer final : public Inquirer {
 public:
  Result<InquiryAnswer> Ask(const Inquiry&) override { return InquiryAnswer::kDenyOnce; }
  bool asks_user() const override { return false; }
};

class ScriptedInquirer final : public Inquirer {
 public:
  ScriptedInquirer(std::vector<InquiryAnswer> answers, std::vector<Inquiry>* asked)
      : answers_(std::move(answers)), asked_(asked) {}

  Result<InquiryAnswer> Ask(const Inquiry& inquiry) override {
    std::lock_guard lock(mutex_);
    if (asked_ != nullptr) asked_->push_back(inquiry);
    if (cancelled_) return CancelledError("Cancelled while asking the user");
    if (next_ == answers_.size()) {
      return CancelledError("No answer: the scripted inquirer has used its " +
                            std::to_string(answers_.size()) + " answers");
    }
    return answers_[next_++];
  }

  bool asks_user() const override { return true; }

  void Cancel() override {
    std::lock_guard lock(mutex_);
    cancelled_ = true;
  }

 private:
  std::mutex mutex_;
  std::vector<InquiryAnswer> answers_;
  size_t next_ = 0;
  std::vector<Inquiry>* asked_;
  bool cancelled_ = false;
};

Result<UniqueFd> OpenTerminal() {
  int fd = ::open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return ErrnoToStatus(errno, "Cannot open the terminal /dev/tty to ask the user");
  return UniqueFd(fd);
}

}  // namespace

std::unique_ptr<Inquirer> NewTerminalInquirer(std::unique_ptr<RuleWriter> rules) {
  Result<UniqueFd> terminal = OpenTerminal();
  if (!terminal.ok()) return std::make_unique<TerminalInquirer>(terminal.status());
  UniqueFd output(::fcntl(terminal->get(), F_DUPFD_CLOEXEC, 0));
  if (!output.valid()) {
    return std::make_unique<TerminalInquirer>(
        ErrnoToStatus(errno, "Cannot duplicate the terminal descriptor"));
  }
  return std::make_unique<TerminalInquirer>(std::move(*terminal), std::move(output), std::move(rules));
}

std::unique_ptr<Inquirer> NewTerminalInquirer(UniqueFd input, UniqueFd output, std::unique_ptr<RuleWriter> rules) {
  return std::make_unique<TerminalInquirer>(std::move(input), std::move(output), std::move(rules));
}

bool TerminalAvailable() { return OpenTerminal().ok(); }

std::unique_ptr<Inquirer> NewDenyingInquirer() { return std::make_unique<DenyingInquirer>(); }

std::unique_ptr<Inquirer> NewScriptedInquirer(std::vector<InquiryAnswer> answers,
                                              std::vector<Inquiry>* asked) {
  return std::make_unique<ScriptedInquirer>(std::move(answers), asked);
}

std::string QualifyPolicyHint(std::string_view tool_name, std::string_view hint) {
  const std::string table = SandboxTableKey(tool_name) + ".";
  std::string out;
  out.reserve(hint.size() + table.size());
  for (size_t i = 0; i < hint.size();) {
    // A key starts a word: at the start, or after a space or an opening
    // bracket or quote of the prose around it. Text inside a quoted value
    // ("network.allow" as a path) does not, since '"' is not in the list.
    bool word_start = i == 0 || hint[i - 1] == ' ' || hint[i - 1] == '(' || hint[i - 1] == '`';
    if (word_start) {
      for (std::string_view key : kSandboxKeys) {
        if (hint.substr(i).starts_with(key)) {
          out += table;
          break;
        }
      }
    }
    out += hint[i++];
  }
  return out;
}

std::string ExecFlagHint(const PolicyDecision& decision) {
  if (!decision.grant) return decision.hint;
  const PolicyGrant& grant = *decision.grant;
  switch (grant.kind) {
    case PolicyGrant::Kind::kRead: return "pass --allow-read " + ShellWord(grant.value.empty() ? "." : grant.value);
    case PolicyGrant::Kind::kWrite: return "pass --allow-write " + ShellWord(grant.value.empty() ? "." : grant.value);
    case PolicyGrant::Kind::kNetwork: return "pass --allow-net " + ShellWord(grant.value);
    case PolicyGrant::Kind::kCommand: return "pass --allow-cmd " + ShellWord(grant.value);
  }
  return decision.hint;
}

std::string NonInteractiveDenial(const Inquiry& inquiry, std::string_view method) {
  std::string message = EscapeForTerminal(method) + " of " + InquiryTargetsShown(inquiry) +
                        " was not covered by the policy of tool '" + EscapeForTerminal(inquiry.tool) +
                        "' and was denied without asking (no interaction); to allow it, ";
  if (inquiry.hint.empty()) {
    message += "add a rule for it to " + EscapeForTerminal(SandboxTableKey(inquiry.tool)) +
               " in toolvfs.toml, or run on a terminal without --no-interaction to be asked";
  } else if (inquiry.ad_hoc) {
    message += EscapeForTerminal(inquiry.hint);
  } else {
    message += EscapeForTerminal(QualifyPolicyHint(inquiry.tool, inquiry.hint));
  }
  return message;
}

std::string InquiryTargetsShown(const Inquiry& inquiry) {
  if (inquiry.targets.size() <= 1) return "'" + EscapeForTerminal(inquiry.target) + "'";
  constexpr size_t kListed = 20;
  std::string shown = std::to_string(inquiry.targets.size()) + " paths: ";
  for (size_t i = 0; i < inquiry.targets.size() && i < kListed; ++i) {
    shown += (i == 0 ? "'" : ", '") + EscapeForTerminal(inquiry.targets[i]) + "'";
  }
  if (inquiry.targets.size() > kListed) shown += " … and " + std::to_string(inquiry.targets.size() - kListed) + " more";
  return shown;
}

std::string EscapeForTerminal(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  while (!text.empty()) {
    auto lead = static_cast<uint8_t>(text[0]);
    if (lead < 0x80) {
      if (lead < 0x20 || lead == 0x7F) {
        AppendByteEscape(out, lead);
      } else if (lead == '\\') {
        out += "\\\\";
      } else {
        out += static_cast<char>(lead);
      }
      text.remove_prefix(1);
      continue;
    }
    size_t length = AnnouncedLength(lead);
    bool valid = length > 0 && length <= text.size() && ValidUtf8Prefix(text.substr(0, length)) == length;
    if (!valid) {
      AppendByteEscape(out, lead);
      text.remove_prefix(1);
      continue;
    }
    std::string_view sequence = text.substr(0, length);
    if (IsHiddenControl(DecodeValidSequence(sequence))) {
      for (char byte : sequence) AppendByteEscape(out, static_cast<uint8_t>(byte));
    } else {
      out.append(sequence);
    }
    text.remove_prefix(length);
  }
  return out;
}

}  // namespace toolvfs
