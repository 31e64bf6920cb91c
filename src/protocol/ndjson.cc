#include "protocol/ndjson.h"

#include <algorithm>
#include <cassert>
#include <cstring>

namespace toolvfs {
namespace {

const char* FindNewline(const char* begin, const char* end) {
  return static_cast<const char*>(std::memchr(begin, '\n', static_cast<size_t>(end - begin)));
}

const char* FindLastNewline(const char* begin, const char* end) {
  return static_cast<const char*>(memrchr(begin, '\n', static_cast<size_t>(end - begin)));
}

}  // namespace

LineSplitter::LineSplitter(size_t max_line_bytes) : max_line_bytes_(max_line_bytes) {}

LineSplitter::~LineSplitter() = default;

void LineSplitter::Reserve(size_t bytes) {
  if (end_ + bytes + kLinePadding <= capacity_) return;
  size_t live = end_ - begin_;
  size_t needed = live + bytes + kLinePadding;
  if (needed <= capacity_) {
    // Enough room once the consumed bytes are gone.
    std::memmove(buffer_.get(), buffer_.get() + begin_, live);
  } else {
    // Grow geometrically, but not past what the limit can ever need, so a
    // flood costs at most max_line_bytes + one chunk + padding.
    size_t bound = max_line_bytes_ + bytes + kLinePadding;
    size_t grown = std::max(needed, std::min(capacity_ * 2, bound));
    grown = std::max(grown, std::min(kDefaultReadChunk, max_line_bytes_) + kLinePadding);
    std::unique_ptr<char[]> buffer(new char[grown]);
    if (live > 0) std::memcpy(buffer.get(), buffer_.get() + begin_, live);
    buffer_ = std::move(buffer);
    capacity_ = grown;
  }
  scanned_ -= begin_;
  tail_start_ -= begin_;
  tail_checked_ -= begin_;
  for (size_t& offset : too_long_at_) offset -= begin_;
  end_ = live;
  begin_ = 0;
}

std::span<char> LineSplitter::PrepareAppend(size_t max_bytes) {
  Reserve(max_bytes);
  return {buffer_.get() + end_, max_bytes};
}

void LineSplitter::CommitAppend(size_t bytes) {
  assert(end_ + bytes + kLinePadding <= capacity_);
  size_t from = end_;
  end_ += bytes;
  CheckNewBytes(from);
}

void LineSplitter::CheckNewBytes(size_t from) {
  char* data = buffer_.get();
  if (discarding_) {
    const char* newline = FindNewline(data + from, data + end_);
    if (newline == nullptr) {
      end_ = from;  // still inside the over-long line: drop it all
      return;
    }
    // Keep what follows the newline: it starts the next line.
    size_t rest_begin = static_cast<size_t>(newline - data) + 1;
    size_t rest = end_ - rest_begin;
    std::memmove(data + from, data + rest_begin, rest);
    end_ = from + rest;
    tail_start_ = tail_checked_ = from;
    discarding_ = false;
  }
  if (end_ - tail_start_ <= max_line_bytes_) return;
  // The unfinished line may be too long: find where it really starts,
  // searching each byte at most once.
  const char* last_newline = FindLastNewline(data + tail_checked_, data + end_);
  if (last_newline != nullptr) tail_start_ = static_cast<size_t>(last_newline - data) + 1;
  tail_checked_ = end_;
  if (end_ - tail_start_ <= max_line_bytes_) return;
  // It is: report it after the lines before it, keep none of its bytes and
  // skip the rest of it as it arrives.
  end_ = tail_start_;
  scanned_ = std::min(scanned_, end_);
  tail_checked_ = end_;
  discarding_ = true;
  too_long_at_.push_back(tail_start_);
}

void LineSplitter::Append(std::string_view chunk) {
  while (!chunk.empty()) {
    size_t piece = std::min(chunk.size(), kDefaultReadChunk);
    std::span<char> space = PrepareAppend(piece);
    std::memcpy(space.data(), chunk.data(), piece);
    CommitAppend(piece);
    chunk.remove_prefix(piece);
  }
}

std::optional<LineSplitter::Event> LineSplitter::Next() {
  if (!too_long_at_.empty() && too_long_at_.front() == begin_) {
    too_long_at_.pop_front();
    return Event{EventKind::kTooLong, {}};
  }
  if (begin_ == end_) return std::nullopt;
  const char* data = buffer_.get();
  const char* newline = FindNewline(data + scanned_, data + end_);
  if (newline == nullptr) {
    scanned_ = end_;
    return std::nullopt;
  }
  size_t line_end = static_cast<size_t>(newline - data);
  std::string_view line(data + begin_, line_end - begin_);
  begin_ = scanned_ = line_end + 1;
  if (tail_start_ < begin_) tail_start_ = begin_;
  if (tail_checked_ < begin_) tail_checked_ = begin_;
  if (line.size() > max_line_bytes_) return Event{EventKind::kTooLong, {}};
  return Event{EventKind::kLine, line};
}

std::optional<LineSplitter::Event> LineSplitter::Finish() {
  if (finished_) return std::nullopt;
  finished_ = true;
  if (discarding_ || begin_ == end_) return std::nullopt;
  std::string_view rest(buffer_.get() + begin_, end_ - begin_);
  begin_ = scanned_ = tail_start_ = tail_checked_ = end_;
  return Event{EventKind::kUnterminated, rest};
}

}  // namespace toolvfs
