#include "cli/progress_line.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/text.h"

namespace toolvfs {
namespace {

bool StderrIsTerminal() {
  const char* term = std::getenv("TERM");
  if (term != nullptr && std::strcmp(term, "dumb") == 0) return false;
  return isatty(STDERR_FILENO) == 1;
}

// The terminal's width, less one column: a line that fills the last column
// wraps on some terminals, and "\r" would then redraw only its second half.
size_t UsableColumns() {
  winsize size{};
  if (ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 1) return size.ws_col - 1;
  return 79;
}

void WriteStderr(std::string_view bytes) {
  std::fflush(stdout);  // keep stdout's order on a shared terminal
  std::fwrite(bytes.data(), 1, bytes.size(), stderr);
  std::fflush(stderr);
}

}  // namespace

ProgressLine::ProgressLine() : enabled_(StderrIsTerminal()) {}

void ProgressLine::EraseLocked() {
  if (!status_.empty()) WriteStderr("\r\x1b[K");
}

void ProgressLine::DrawLocked() {
  if (!status_.empty()) WriteStderr(status_);
}

void ProgressLine::Show(std::string_view text) {
  if (!enabled_) return;
  std::string line = EscapeForDisplay(text);
  // Cut by bytes at a character boundary: columns and bytes differ for
  // non-ASCII text, where this errs on the short side.
  const size_t columns = UsableColumns();
  if (line.size() > columns) line.resize(ValidUtf8Prefix(std::string_view(line).substr(0, columns)));
  std::lock_guard lock(mutex_);
  if (line == status_) return;
  EraseLocked();
  status_ = std::move(line);
  DrawLocked();
}

void ProgressLine::Clear() {
  if (!enabled_) return;
  std::lock_guard lock(mutex_);
  EraseLocked();
  status_.clear();
}

void ProgressLine::PrintAbove(std::string_view line) {
  std::lock_guard lock(mutex_);
  EraseLocked();
  std::string text(line);
  text += '\n';
  WriteStderr(text);
  DrawLocked();
}

}  // namespace toolvfs
