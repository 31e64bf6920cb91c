#include "policy/inquirer.h"

#include <fcntl.h>
#include <poll.h>
#include <termios.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <mutex>
#include <optional>

#include "core/io.h"
#include "core/text.h"

namespace toolvfs {
namespace {

// An answer line longer than this is not an answer; the rest of it is read
// and dropped so the next line is read cleanly.
constexpr size_t kMaxAnswerBytes = 256;

constexpr std::string_view kQuestion = "Allow? [y/a/n/d] ";

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

bool IsBareKey(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    bool allowed = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                   c == '-';
    if (!allowed) return false;
  }
  return true;
}

// `tools.NAME.sandbox` with NAME as TOML writes it.
std::string SandboxTableKey(std::string_view tool_name) {
  if (IsBareKey(tool_name)) return "tools." + std::string(tool_name) + ".sandbox";
  std::string quoted = "\"";
  for (char c : tool_name) {
    if (c == '"' || c == '\\') quoted += '\\';
    quoted += c;
  }
  quoted += '"';
  return "tools." + quoted + ".sandbox";
}

// y/a/n/d, either case, surrounded by any spaces or tabs (and the \r of a
// terminal sending CR LF); nullopt for anything else.
std::optional<InquiryAnswer> ParseAnswer(std::string_view line) {
  auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\r'; };
  while (!line.empty() && is_space(line.front())) line.remove_prefix(1);
  while (!line.empty() && is_space(line.back())) line.remove_suffix(1);
  if (line.size() != 1) return std::nullopt;
  switch (line[0]) {
    case 'y': case 'Y': return InquiryAnswer::kAllowOnce;
    case 'a': case 'A': return InquiryAnswer::kAllowForRun;
    case 'n': case 'N': return InquiryAnswer::kDenyOnce;
    case 'd': case 'D': return InquiryAnswer::kDenyForRun;
    default: return std::nullopt;
  }
}

std::string Prompt(const Inquiry& inquiry) {
  std::string prompt = "toolvfs: tool '" + EscapeForTerminal(inquiry.tool) + "' asks to " +
                       EscapeForTerminal(inquiry.operation) + " '" + EscapeForTerminal(inquiry.target) +
                       "', which its policy does not cover\n";
  if (!inquiry.hint.empty()) {
    prompt += "  (to allow it without asking: " +
              EscapeForTerminal(inquiry.ad_hoc ? inquiry.hint : QualifyPolicyHint(inquiry.tool, inquiry.hint)) +
              ")\n";
  }
  prompt += "  y: allow once   a: allow for this run   n: deny once   d: deny for this run\n";
  prompt += kQuestion;
  return prompt;
}

}  // namespace

std::mutex& TerminalPromptMutex() {
  static std::mutex mutex;
  return mutex;
}

namespace {

class TerminalInquirer final : public Inquirer {
 public:
  TerminalInquirer(UniqueFd input, UniqueFd output) : input_(std::move(input)), output_(std::move(output)) {
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
    if (!open_error_.ok()) return open_error_;
    if (!input_.valid() || !output_.valid()) return InvalidArgumentError("The inquirer has no terminal");
    std::lock_guard question(TerminalPromptMutex());
    if (cancelled_.load()) return CancelledError("Cancelled while asking the user");
    // Keys pressed before the question was on the screen answer nothing:
    // a stray "y" typed earlier must not grant what the user never read.
    // Fails harmlessly (ENOTTY) when the input is not a terminal.
    static_cast<void>(::tcflush(input_.get(), TCIFLUSH));
    TOOLVFS_RETURN_IF_ERROR(WriteFull(output_.get(), Prompt(inquiry), "Cannot ask on the terminal"));
    while (true) {
      TOOLVFS_ASSIGN_OR_RETURN(std::optional<std::string> line, ReadLine());
      if (!line) return CancelledError("No answer: the terminal reached end of input");
      if (std::optional<InquiryAnswer> answer = ParseAnswer(*line)) return *answer;
      std::string again = "Please answer y, a, n or d. " + std::string(kQuestion);
      TOOLVFS_RETURN_IF_ERROR(WriteFull(output_.get(), again, "Cannot ask on the terminal"));
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
  // One line of input without its '\n' (at most kMaxAnswerBytes kept),
  // nullopt at end of input (also for a last line without '\n': it was
  // never confirmed with Enter). One byte per read(2), so nothing after
  // the answer's line is consumed.
  Result<std::optional<std::string>> ReadLine() {
    std::string line;
    while (true) {
      TOOLVFS_RETURN_IF_ERROR(WaitForInput());
      char byte;
      ssize_t got = ::read(input_.get(), &byte, 1);
      if (got < 0) {
        if (errno == EINTR || errno == EAGAIN) continue;
        // A pseudo-terminal whose other side closed reads EIO: the end too.
        if (errno == EIO) return std::optional<std::string>();
        return ErrnoToStatus(errno, "Cannot read the answer from the terminal");
      }
      if (got == 0) return std::optional<std::string>();
      if (byte == '\n') return std::optional<std::string>(std::move(line));
      if (line.size() <= kMaxAnswerBytes) line += byte;
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

std::unique_ptr<Inquirer> NewTerminalInquirer() {
  Result<UniqueFd> terminal = OpenTerminal();
  if (!terminal.ok()) return std::make_unique<TerminalInquirer>(terminal.status());
  UniqueFd output(::fcntl(terminal->get(), F_DUPFD_CLOEXEC, 0));
  if (!output.valid()) {
    return std::make_unique<TerminalInquirer>(
        ErrnoToStatus(errno, "Cannot duplicate the terminal descriptor"));
  }
  return std::make_unique<TerminalInquirer>(std::move(*terminal), std::move(output));
}

std::unique_ptr<Inquirer> NewTerminalInquirer(UniqueFd input, UniqueFd output) {
  return std::make_unique<TerminalInquirer>(std::move(input), std::move(output));
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

namespace {

// A value as a word for the shell: bare when it is plainly one word, else
// in single quotes.
std::string ShellWordFor(std::string_view value) {
  bool plain = !value.empty();
  for (char c : value) {
    plain = plain && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '_' || c == '-' || c == '.' || c == '/' || c == ':' || c == '+' || c == '@');
  }
  if (plain) return std::string(value);
  std::string quoted = "'";
  for (char c : value) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

// The first TOML basic string in `text` ("a\"b" -> a"b), or nullopt.
std::optional<std::string> FirstTomlString(std::string_view text) {
  size_t open = text.find('"');
  if (open == std::string_view::npos) return std::nullopt;
  std::string value;
  for (size_t index = open + 1; index < text.size(); ++index) {
    char c = text[index];
    if (c == '"') return value;
    if (c == '\\' && index + 1 < text.size()) c = text[++index];
    value += c;
  }
  return std::nullopt;
}

}  // namespace

std::string ExecFlagHint(std::string_view hint) {
  // The config key the hint names decides the flag; the value is the
  // hint's quoted path or URL ("." is the whole project).
  struct KeyFlag {
    std::string_view key;
    std::string_view flag;
  };
  constexpr KeyFlag kFlags[] = {{"filesystem.writable", "--allow-write"},
                                {"filesystem.allow", "--allow-read"},
                                {"network.allow", "--allow-net"}};
  for (const KeyFlag& entry : kFlags) {
    if (hint.find(entry.key) == std::string_view::npos) continue;
    std::optional<std::string> value = FirstTomlString(hint);
    if (!value) break;
    return "pass " + std::string(entry.flag) + " " + ShellWordFor(*value);
  }
  // "add a commands.rg rule": any arguments of the program.
  if (size_t key = hint.find("commands."); key != std::string_view::npos) {
    std::string_view rest = hint.substr(key + 9);
    std::string program;
    if (rest.starts_with('"')) {
      program = FirstTomlString(rest).value_or("");
    } else {
      program = std::string(rest.substr(0, rest.find_first_of(" .")));
    }
    if (!program.empty()) return "pass --allow-cmd " + ShellWordFor(program);
  }
  return std::string(hint);
}

std::string NonInteractiveDenial(const Inquiry& inquiry, std::string_view method) {
  std::string message = EscapeForTerminal(method) + " of '" + EscapeForTerminal(inquiry.target) +
                        "' was not covered by the policy of tool '" + EscapeForTerminal(inquiry.tool) +
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
