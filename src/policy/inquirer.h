// Asking the user about a request the policy does not cover (SPEC.md §3.2).
//
// The host asks at most one question at a time per inquirer (AccessGate
// serializes), and remembers run-scoped answers itself: an Inquirer only
// asks and returns what the user said.
#pragma once

#include <memory>
#include <string>

#include "core/status.h"

namespace toolvfs {

struct Inquiry {
  std::string tool;       // the tool's name
  std::string operation;  // "read", "write", "GET", "POST", "run"
  std::string target;     // exact: a project path, a URL, a command line
  std::string hint;       // PolicyDecision::hint, for the denial message
};

enum class InquiryAnswer {
  kAllowOnce,    // y
  kAllowForRun,  // a: this operation on this exact target, rest of the run
  kDenyOnce,     // n
  kDenyForRun,   // d
};

class Inquirer {
 public:
  virtual ~Inquirer() = default;
  // Blocks until the user answers. A failure (no terminal any more, EOF) is
  // returned as a Status and treated by the caller as a denial.
  virtual Result<InquiryAnswer> Ask(const Inquiry& inquiry) = 0;
  // False for an inquirer that denies without asking: the host then sends
  // no `pending` notification.
  virtual bool asks_user() const = 0;
};

// Prompts on /dev/tty: shows tool, operation and target with every control
// character (C0, DEL, C1, and ESC of ANSI sequences) shown escaped as \xNN,
// discards type-ahead before prompting (tcflush), reads one answer line;
// repeats the question on anything but y/a/n/d. Fails if /dev/tty cannot be
// opened — callers check TerminalAvailable() first.
std::unique_ptr<Inquirer> NewTerminalInquirer();
bool TerminalAvailable();

// Denies every inquiry at once (--no-interaction, or no terminal). Its Ask
// returns kDenyOnce; the denial message is built by the caller from the
// hint (NonInteractiveDenial).
std::unique_ptr<Inquirer> NewDenyingInquirer();

// "fs.write of 'src/gen/a.rs' was not covered by the policy of tool 'gen'
// and was denied (no interaction). To allow it, add \"src/gen\" to
// tools.gen.sandbox.filesystem.writable." — one line.
std::string NonInteractiveDenial(const Inquiry& inquiry, std::string_view method);

// `text` with control characters shown as \xNN (backslash itself as \\),
// so what the user reads is exactly what would be granted.
std::string EscapeForTerminal(std::string_view text);

}  // namespace toolvfs
