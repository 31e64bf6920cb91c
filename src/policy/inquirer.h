// Asking the user about a request the policy does not cover (SPEC.md §3.2).
//
// The host asks at most one question at a time per inquirer (AccessGate
// serializes), and remembers run-scoped answers itself: an Inquirer only
// asks and returns what the user said.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "core/unique_fd.h"
#include "policy/decision.h"

namespace toolvfs {

struct Inquiry {
  std::string tool;       // the tool's name
  std::string operation;  // "read", "write", "GET", "POST", "run"
  std::string target;     // exact: a project path, a URL, a command line
  std::string hint;       // PolicyDecision::hint, for the denial message
  // The tool runs under `toolvfs exec`: `hint` names exec's --allow-*
  // flags already (ExecFlagHint) and is shown as it is.
  bool ad_hoc = false;
  // Two or more targets asked about in one question (the paths a
  // snapshot_restore changes, AccessGate::AuthorizeAll): the answer is
  // each one's, `target` is the first, and an inquirer offers only the
  // plain answers (no directory, pattern or saved rule).
  std::vector<std::string> targets;
};

// The inquiry's target(s) for a message, escaped (EscapeForTerminal) and
// quoted: "'a.txt'", or "3 paths: 'a', 'b', 'c'" with at most 20 listed
// ("… and N more").
std::string InquiryTargetsShown(const Inquiry& inquiry);

enum class InquiryAnswer {
  kAllowOnce,    // y
  kAllowForRun,  // a: this operation on this exact target, rest of the run
  kDenyOnce,     // n
  kDenyForRun,   // d
};

// An answer with its reach.
struct InquiryReply {
  InquiryAnswer answer = InquiryAnswer::kDenyOnce;
  // With kAllowForRun / kDenyForRun: empty for the exact target, else a
  // path pattern (PathGlob syntax: "src/gen/**") that gets the same answer
  // for every target it matches, for the rest of the run. Only for file
  // operations (read, write), whose targets are project paths.
  std::string pattern;
};

// Saves an allow rule in the tool configuration for an inquiry (the "s"
// answer), given to the terminal inquirer by the front end that knows the
// config file.
class RuleWriter {
 public:
  struct Proposal {
    std::string diff;     // the change as a unified diff, shown before asking
    std::string pattern;  // what the rule covers, as InquiryReply::pattern
  };
  virtual ~RuleWriter() = default;
  // The rule that would allow the inquiry's operation on its target from
  // now on, or why none can be written (the file's layout, an operation
  // without a rule key). Reads the file afresh each time.
  virtual Result<Proposal> Propose(const Inquiry& inquiry) = 0;
  // Writes the change Propose returned last (atomically: the file is
  // replaced whole, never left half-written).
  virtual Status Apply() = 0;
};

class Inquirer {
 public:
  virtual ~Inquirer() = default;
  // Like Ask, with the wider answers an inquirer may offer (a directory or
  // a pattern for the rest of the run). The default asks with Ask.
  virtual Result<InquiryReply> AskWithScope(const Inquiry& inquiry) {
    TOOLVFS_ASSIGN_OR_RETURN(InquiryAnswer answer, Ask(inquiry));
    return InquiryReply{answer, {}};
  }
  // Blocks until the user answers. A failure (no terminal any more, EOF) is
  // returned as a Status and treated by the caller as a denial.
  virtual Result<InquiryAnswer> Ask(const Inquiry& inquiry) = 0;
  // False for an inquirer that denies without asking: the host then sends
  // no `pending` notification.
  virtual bool asks_user() const = 0;
  // True for an inquirer whose questions end by themselves once the run's
  // cancel token fires (the MCP elicitation inquirer waits on its call's
  // token): a runtime then starts no thread to watch the token for it.
  virtual bool ends_questions_on_cancel() const { return false; }
  // The audit rule of an allow the user gave this inquirer earlier for
  // `operation` on `target` of tool `tool` and that outlives the gate's
  // run: an MCP session's "allow for this session" (mcp_approvals.h),
  // kept across the calls, each of which has a gate of its own. The gate
  // then allows the target without a question or a `pending`, and records
  // it as asked-allow with this rule, not as an answer given now. nullopt
  // (the default) when the user gave none.
  virtual std::optional<std::string> RememberedAllowRule(std::string_view /*tool*/, std::string_view /*operation*/,
                                                         std::string_view /*target*/) const {
    return std::nullopt;
  }
  // Makes an Ask in progress, and every later one, fail at once with
  // Cancelled: the run is being cancelled (Ctrl+C while a question is on
  // the screen must not wait for an answer). Thread-safe; callable from a
  // signal-watching thread. The default does nothing, for inquirers that
  // never block.
  virtual void Cancel() {}
};

// Prompts on /dev/tty: shows tool, operation and target with every control
// character (C0, DEL, C1, and ESC of ANSI sequences) shown escaped as \xNN,
// discards type-ahead before prompting (tcflush), and takes the answer as
// one key press (the terminal in non-canonical mode without echo for the
// question, restored on every way out, signals that stop or end toolvfs
// included), or as a line where the input is no terminal. Answers:
// y/a/n/d (either case); for file operations also t/x (allow/deny the
// target's directory and everything below it for the run) and p (a
// pattern, typed as a line, then a/d); s (save an allow rule in the
// config, shown as a diff and confirmed first) when `rules` is given and
// the operation has a rule key. Anything else repeats the question. End
// of input is a failed Ask (a denial). If /dev/tty cannot be opened,
// every Ask fails with the reason — callers check TerminalAvailable()
// first.
std::unique_ptr<Inquirer> NewTerminalInquirer(std::unique_ptr<RuleWriter> rules = nullptr);
bool TerminalAvailable();

// Held by whoever has a question on the terminal: this inquirer and a
// tool's own questions (runtime/answers.h) may ask from different threads
// of one run, and two prompts reading one terminal would split the user's
// keystrokes between them.
std::mutex& TerminalPromptMutex();

// The terminal inquirer on explicit descriptors (a pseudo-terminal in
// tests, or an embedder's own terminal): reads answers from `input`,
// writes questions to `output` (both may be dups of one terminal fd).
// Type-ahead is discarded only when `input` is a terminal.
std::unique_ptr<Inquirer> NewTerminalInquirer(UniqueFd input, UniqueFd output,
                                              std::unique_ptr<RuleWriter> rules = nullptr);

// For tests and embedders: answers with `answers` in order and appends
// every inquiry to `*asked` (if not null; it must outlive the inquirer).
// Fails with Cancelled once the answers are used up. Thread-safe.
std::unique_ptr<Inquirer> NewScriptedInquirer(std::vector<InquiryAnswer> answers,
                                              std::vector<Inquiry>* asked);

// Denies every inquiry at once (--no-interaction, or no terminal). Its Ask
// returns kDenyOnce; the denial message is built by the caller from the
// hint (NonInteractiveDenial).
std::unique_ptr<Inquirer> NewDenyingInquirer();

// "fs.write of 'src/gen/a.rs' was not covered by the policy of tool 'gen'
// and was denied without asking (no interaction); to allow it, add
// \"src/gen\" to tools.gen.sandbox.filesystem.writable" — one line, every
// part escaped with EscapeForTerminal; the key is the hint's made whole by
// QualifyPolicyHint.
std::string NonInteractiveDenial(const Inquiry& inquiry, std::string_view method);

// A PolicyDecision hint with its config keys spelled out in full for tool
// `tool_name`: `add "src/gen" to filesystem.writable` becomes `add
// "src/gen" to tools.gen.sandbox.filesystem.writable` (a name that is not a
// TOML bare key is quoted: tools."my tool".sandbox...). Keys are the
// sandbox table's: filesystem.*, network.*, commands.*, sensitive_paths,
// limits.*; anything else in the hint is kept as it is.
std::string QualifyPolicyHint(std::string_view tool_name, std::string_view hint);

// A PolicyDecision's hint for a tool of `toolvfs exec`, which has no
// config to add a rule to, made from its grant: `add "todo.txt" to
// filesystem.writable` becomes `pass --allow-write todo.txt`; a read grant
// --allow-read ("." for the whole project), a network prefix --allow-net,
// a command --allow-cmd. Without a grant, the hint as it is.
std::string ExecFlagHint(const PolicyDecision& decision);

// `text` with control characters shown as \xNN (backslash itself as \\),
// so what the user reads is exactly what would be granted: every C0
// control (line breaks and tabs too), DEL, the C1 controls U+0080-U+009F
// (each byte of their UTF-8 form, so "\xc2\x9b" for CSI), the characters
// that reorder or break displayed text (bidi controls U+061C, U+200E,
// U+200F, U+202A-U+202E, U+2066-U+2069; U+2028, U+2029) as the bytes of
// their UTF-8 form, and every byte that is not part of valid UTF-8. Other
// characters, non-ASCII letters included, are shown as they are.
std::string EscapeForTerminal(std::string_view text);

}  // namespace toolvfs
