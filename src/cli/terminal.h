// Human output helpers shared by the commands: the one-line error format
// and the colour decision.
#pragma once

#include <string_view>

#include "core/status.h"

namespace toolvfs {

// Prints "toolvfs: <what>: <why>" as one line on stderr (newlines in `why`
// are folded) and returns kExitUsage, so callers can `return ReportError(...)`.
int ReportError(std::string_view what, std::string_view why);

// The one place a store's Status becomes an exit code: prints
// "toolvfs: <what>: <message>" like ReportError and returns kExitUnavailable
// for Unavailable (a script may retry), kExitUsage for the rest.
int ReportStatus(std::string_view what, const Status& status);

// Prints "toolvfs: <what>: <why>" on stderr for something the user should
// know that is not a failure.
void ReportNote(std::string_view what, std::string_view why);

// --log-level, set once by main() after parsing: "error", "warn", "info"
// or "debug".
void SetLogLevel(std::string_view level);
bool DebugLogging();
// False with --log-level error: warnings and hints are then not printed.
bool WarningsWanted();

// With --log-level debug, prints "toolvfs: debug: <message>" on stderr
// (control characters escaped, one line); nothing otherwise. For what a
// user needs to see why a run went as it did: the config file used, the
// tool's command and directory, the sandbox mode, each request's decision.
void LogDebug(std::string_view message);

// Whether output on `fd` may use ANSI colour: only a terminal, never when
// NO_COLOR is set to a non-empty value (no-color.org) or TERM is "dumb".
bool ColorEnabled(int fd);

// ANSI escapes used by the commands; empty strings when colour is off.
struct Palette {
  std::string_view path;
  std::string_view line_number;
  std::string_view match;
  std::string_view good;
  std::string_view bad;
  std::string_view reset;
};
Palette MakePalette(bool color);

}  // namespace toolvfs
