// NDJSON framing: turns the byte stream a tool writes on its stdout into
// lines, one JSON-RPC message each (SPEC.md §4.1).
//
// The splitter is fed arbitrary chunks, as they come from a non-blocking
// pipe, and yields events: a complete line, a line that broke the size
// limit, or unterminated data at end of stream. Its memory is bounded
// whatever the tool writes: an over-long line is reported once and the rest
// of it is skipped up to its newline without being buffered, so a tool that
// floods stdout without newlines costs at most
// max_line_bytes + one read chunk + kLinePadding bytes.
//
// Only '\n' ends a line. A '\r' before it stays in the line: it is JSON
// whitespace, so CRLF input parses as is. The only per-byte work is memchr
// for '\n', once per byte, plus one memrchr over an unfinished line whose
// buffered part passes the limit.
//
// Not thread-safe: one splitter belongs to one reader.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <string_view>

namespace toolvfs {

// Default and SPEC.md §4.1 default of max_message_mb: 10 MiB per line.
inline constexpr size_t kDefaultMaxLineBytes = size_t{10} << 20;

// Every line the splitter yields is followed by at least this many readable
// bytes inside its buffer, so a parser that reads past the end of its input
// (simdjson) can use the line without copying it (MessageParser::ParsePadded).
inline constexpr size_t kLinePadding = 64;

class LineSplitter {
 public:
  static constexpr size_t kDefaultReadChunk = size_t{64} << 10;

  enum class EventKind {
    kLine,          // a complete line, without its '\n'
    kTooLong,       // a line grew past the limit; it is dropped up to its '\n'
    kUnterminated,  // from Finish(): bytes after the last '\n' at end of stream
  };

  struct Event {
    EventKind kind;
    // kLine, kUnterminated: the bytes (at most max_line_bytes). Valid until
    // the next call of Append, PrepareAppend or CommitAppend. Empty for
    // kTooLong.
    std::string_view line;
  };

  // `max_line_bytes` counts the bytes of a line without its '\n'; a line of
  // exactly max_line_bytes is accepted.
  explicit LineSplitter(size_t max_line_bytes = kDefaultMaxLineBytes);
  LineSplitter(const LineSplitter&) = delete;
  LineSplitter& operator=(const LineSplitter&) = delete;
  ~LineSplitter();

  // Zero-copy input: returns `max_bytes` of writable space for read(2) to
  // fill; CommitAppend then says how many bytes arrived. Invalidates the
  // lines of earlier events. Complete lines not yet taken with Next() stay
  // buffered: the memory bound above holds for a loop that drains Next()
  // after each read.
  std::span<char> PrepareAppend(size_t max_bytes = kDefaultReadChunk);
  void CommitAppend(size_t bytes);

  // Copying input: PrepareAppend + memcpy + CommitAppend, in pieces of at
  // most 64 KiB so that a long unterminated run is dropped as it comes.
  void Append(std::string_view chunk);

  // The next event from the input appended so far, or nullopt when more
  // input is needed. A line over the limit gives one kTooLong event as soon
  // as the limit is passed (not when its newline finally arrives).
  std::optional<Event> Next();

  // At end of stream, after Next() returned nullopt: the bytes after the
  // last newline as one kUnterminated event, if there are any and they are
  // not the tail of a line already reported as kTooLong. Once only.
  std::optional<Event> Finish();

  size_t max_line_bytes() const { return max_line_bytes_; }
  // Skipping the rest of an over-long line (its kTooLong was reported, its
  // newline has not come yet).
  bool discarding() const { return discarding_; }
  // Bytes held: the unfinished line and lines not yet returned by Next().
  size_t buffered_bytes() const { return end_ - begin_; }
  // Size of the internal buffer (for tests of the memory bound).
  size_t capacity() const { return capacity_; }

 private:
  // Makes room for `bytes` more bytes after end_ (plus padding), moving the
  // unconsumed data to the front or growing the buffer.
  void Reserve(size_t bytes);
  // Called by CommitAppend for the new bytes [from, end_): skips the rest of
  // an over-long line, and cuts the unfinished line off when it passes the
  // limit.
  void CheckNewBytes(size_t from);

  size_t max_line_bytes_;
  std::unique_ptr<char[]> buffer_;
  size_t capacity_ = 0;  // allocated bytes, padding included
  // Offsets into buffer_, begin_ <= scanned_ <= end_:
  size_t begin_ = 0;         // first byte not yet returned by Next()
  size_t scanned_ = 0;       // Next() found no '\n' in [begin_, scanned_)
  size_t end_ = 0;           // end of the data
  // The unfinished line starts at tail_start_ or later: tail_start_ follows
  // a '\n' (or a dropped line), and [tail_start_, tail_checked_) holds none.
  size_t tail_start_ = 0;
  size_t tail_checked_ = 0;
  bool discarding_ = false;  // skipping the rest of an over-long line
  // Offsets of over-long lines cut off by CommitAppend, in input order: a
  // kTooLong event is due when begin_ reaches the first. More than one only
  // when several arrive between two drains.
  std::deque<size_t> too_long_at_;
  bool finished_ = false;
};

}  // namespace toolvfs
