#include "cli/progress_line.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/io.h"

namespace toolvfs {

namespace {

// Erase from the cursor to the end of the line (ECMA-48 EL).
constexpr std::string_view kEraseLine = "\x1b[K";

}  // namespace

ProgressLine::ProgressLine(Options options) : options_(std::move(options)) {
  first_draw_ = Now() + options_.first_after;
  next_draw_.store(first_draw_.time_since_epoch().count(), std::memory_order_relaxed);
}

ProgressLine::~ProgressLine() { Clear(); }

ProgressLine::Options ProgressLine::ForStderr(bool wanted) {
  Options options;
  if (!wanted || ::isatty(STDERR_FILENO) != 1) return options;
  const char* term = std::getenv("TERM");
  if (term != nullptr && std::string_view(term) == "dumb") return options;
  // How soon the line may first appear (default 250 ms), for a user who
  // wants it at once and for the end-to-end tests, whose work is quick.
  if (const char* after = std::getenv("TOOLVFS_PROGRESS_AFTER_MS"); after != nullptr && after[0] != '\0') {
    char* end = nullptr;
    const long milliseconds = std::strtol(after, &end, 10);
    if (*end == '\0' && milliseconds >= 0) options.first_after = std::chrono::milliseconds(milliseconds);
  }
  struct winsize size {};
  if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) options.width = size.ws_col;
  options.write = [](std::string_view bytes) {
    // Progress is best effort: a full or closed terminal loses a redraw.
    static_cast<void>(WriteFull(STDERR_FILENO, bytes, "standard error"));
  };
  return options;
}

ProgressLine::Clock::time_point ProgressLine::Now() const {
  return options_.now ? options_.now() : Clock::now();
}

void ProgressLine::Update(const std::function<std::string()>& text) {
  if (!enabled()) return;
  // Not due: no lock, so grep's searching threads do not queue up here.
  Clock::time_point now = Now();
  if (now.time_since_epoch().count() < next_draw_.load(std::memory_order_relaxed)) return;
  std::lock_guard lock(mutex_);
  now = Now();
  if (now.time_since_epoch().count() < next_draw_.load(std::memory_order_relaxed)) return;
  DrawLocked(text(), now);
}

void ProgressLine::ShowNow(std::string_view text) {
  if (!enabled()) return;
  std::lock_guard lock(mutex_);
  const Clock::time_point now = Now();
  if (now < first_draw_) return;
  DrawLocked(std::string(text), now);
}

void ProgressLine::DrawLocked(std::string line, Clock::time_point now) {
  next_draw_.store((now + options_.interval).time_since_epoch().count(), std::memory_order_relaxed);
  for (char& c : line) {
    const unsigned char byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) c = '?';
  }
  const size_t columns = options_.width > 1 ? options_.width - 1 : 1;
  // Bytes, not display columns: UTF-8 text is cut early, never late, and
  // never inside a character.
  if (line.size() > columns) {
    size_t cut = columns;
    while (cut > 0 && (static_cast<unsigned char>(line[cut]) & 0xC0) == 0x80) --cut;
    line.resize(cut);
  }
  options_.write("\r" + line + std::string(kEraseLine));
  drawn_ = true;
}

void ProgressLine::ClearLocked() {
  if (!drawn_) return;
  options_.write("\r" + std::string(kEraseLine));
  drawn_ = false;
}

void ProgressLine::Clear() {
  if (!enabled()) return;
  std::lock_guard lock(mutex_);
  ClearLocked();
}

void ProgressLine::WhileCleared(const std::function<void()>& print) {
  if (!enabled()) {
    print();
    return;
  }
  std::lock_guard lock(mutex_);
  ClearLocked();
  print();
}

std::string FormatElapsed(std::chrono::nanoseconds elapsed) {
  const int64_t milliseconds = std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count();
  if (milliseconds < 1000) return std::to_string(milliseconds) + " ms";
  char text[32];
  if (milliseconds < 60'000) {
    std::snprintf(text, sizeof text, "%.1f s", static_cast<double>(milliseconds) / 1000.0);
  } else {
    const int64_t seconds = milliseconds / 1000;
    std::snprintf(text, sizeof text, "%lld min %02lld s", static_cast<long long>(seconds / 60),
                  static_cast<long long>(seconds % 60));
  }
  return text;
}

std::string FormatApproximateBytes(uint64_t bytes) {
  constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024) return std::to_string(bytes) + " B";
  double value = static_cast<double>(bytes) / 1024.0;
  size_t unit = 0;
  while (value >= 1024.0 && unit + 1 < std::size(kUnits)) {
    value /= 1024.0;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, "%.1f %s", value, kUnits[unit]);
  return text;
}

std::string FormatCount(uint64_t count) {
  std::string digits = std::to_string(count);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

}  // namespace toolvfs
