#include "cli/terminal.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "cli/command.h"
#include "core/text.h"

namespace toolvfs {
namespace {

void PrintLine(std::string_view what, std::string_view why) {
  std::string line = "toolvfs: ";
  line += what;
  line += ": ";
  // One line whatever the message: fold line breaks (CLI11 messages may
  // have several lines).
  bool pending_break = false;
  for (char c : why) {
    if (c == '\n' || c == '\r') {
      pending_break = true;
      continue;
    }
    if (pending_break) {
      line += "; ";
      pending_break = false;
    }
    line += c;
  }
  line += '\n';
  std::fflush(stdout);  // keep the order of stdout and stderr on a terminal
  std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace

int ReportError(std::string_view what, std::string_view why) {
  PrintLine(what, why);
  return kExitUsage;
}

int ReportStatus(std::string_view what, const Status& status) {
  PrintLine(what, status.message());
  return status.code() == StatusCode::kUnavailable ? kExitUnavailable : kExitUsage;
}

void ReportNote(std::string_view what, std::string_view why) { PrintLine(what, why); }

namespace {
std::atomic<bool> debug_logging{false};
std::atomic<bool> warnings_wanted{true};
}  // namespace

void SetLogLevel(std::string_view level) {
  debug_logging.store(level == "debug");
  warnings_wanted.store(level != "error");
}

bool DebugLogging() { return debug_logging.load(); }

bool WarningsWanted() { return warnings_wanted.load(); }

void LogDebug(std::string_view message) {
  if (!DebugLogging()) return;
  PrintLine("debug", EscapeForDisplay(message));
}

bool ColorEnabled(int fd) {
  const char* no_color = std::getenv("NO_COLOR");
  if (no_color != nullptr && no_color[0] != '\0') return false;
  const char* term = std::getenv("TERM");
  if (term != nullptr && std::strcmp(term, "dumb") == 0) return false;
  return isatty(fd) == 1;
}

Palette MakePalette(bool color) {
  if (!color) return Palette{};
  return Palette{.path = "\x1b[35m",
                 .line_number = "\x1b[32m",
                 .match = "\x1b[1;31m",
                 .good = "\x1b[32m",
                 .bad = "\x1b[31m",
                 .reset = "\x1b[0m"};
}

}  // namespace toolvfs
