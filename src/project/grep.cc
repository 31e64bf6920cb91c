#include "project/grep.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <functional>
#include <iterator>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <system_error>
#include <thread>
#include <utility>

#include "core/text.h"
#include "project/grep_literals.h"
#include "project/grep_matcher.h"
#include "project/ignore.h"
#include "project/path.h"

namespace toolvfs {
namespace {

// Files of one directory are searched in batches of this many, so a large
// flat directory is shared between workers.
constexpr size_t kFilesPerBatch = 16;

// Bytes asked of GrepFileReader::Read at a time. A window this size stays
// in the CPU cache between the read that fills it and the search, which
// makes a search over a large tree markedly faster than reading each file
// whole into one large buffer.
constexpr size_t kReadBytes = 64 * 1024;

// Reads land in the window at the offset within a page that their bytes
// have in the file, so the kernel copies from the page cache to the same
// alignment: on some CPUs (AMD EPYC measured) the copy runs at half speed
// when the destination is a few bytes past the source's page offset.
constexpr size_t kPageBytes = 4096;

// A growable byte buffer reused across files, page-aligned. Unlike
// std::string it does not zero-fill what it grows into.
class ReadBuffer {
 public:
  // Room for at least `size` bytes; keeps the first `keep` bytes.
  char* Reserve(size_t size, size_t keep) {
    if (size <= capacity_) return start_;
    size_t capacity = std::max(size, capacity_ + capacity_ / 2);
    // Not value-initialized: no zero fill.
    std::unique_ptr<char[]> grown(new char[capacity + kPageBytes - 1]);
    auto address = reinterpret_cast<uintptr_t>(grown.get());
    char* start = grown.get() + (kPageBytes - address % kPageBytes) % kPageBytes;
    if (keep > 0) std::memcpy(start, start_, keep);
    storage_ = std::move(grown);
    start_ = start;
    capacity_ = capacity;
    return start_;
  }

 private:
  std::unique_ptr<char[]> storage_;
  char* start_ = nullptr;  // page-aligned, in storage_
  size_t capacity_ = 0;    // from start_
};

// Results found but not yet handed over in path order (a file waits for
// every file before it), in bytes of their JSON, past which workers take
// only the work that holds up the oldest of them: with a file sink, memory
// stays near this however large the result (GrepOptions::file_sink).
constexpr uint64_t kMaxWaitingResultBytes = uint64_t{16} << 20;

// What a collected line costs in memory besides its content.
constexpr uint64_t kLineMemoryBytes = sizeof(GrepLine);

// Bytes `text` takes as a JSON string, quotes included, escaped the way
// JsonWriter escapes (protocol/json_writer.h): '"', '\\', \b \t \n \f \r
// take two bytes, other control characters six (\u00XX).
uint64_t JsonStringBytes(std::string_view text) {
  uint64_t bytes = text.size() + 2;
  for (char c : text) {
    auto byte = static_cast<uint8_t>(c);
    if (byte == '"' || byte == '\\') {
      bytes += 1;
    } else if (byte < 0x20) {
      bool short_escape = byte == '\b' || byte == '\t' || byte == '\n' || byte == '\f' || byte == '\r';
      bytes += short_escape ? 1 : 5;
    }
  }
  return bytes;
}

// "256 MiB", or "1000 bytes" for an amount that is not whole MiB.
std::string FormatBytes(uint64_t bytes) {
  constexpr uint64_t kMebibyte = uint64_t{1} << 20;
  if (bytes >= kMebibyte && bytes % kMebibyte == 0) return std::to_string(bytes / kMebibyte) + " MiB";
  return std::to_string(bytes) + " bytes";
}

uint64_t DecimalDigits(uint64_t value) {
  uint64_t digits = 1;
  while (value >= 10) {
    value /= 10;
    ++digits;
  }
  return digits;
}

// {"path":P,"lines":[ ... ]} and a comma, without the lines.
uint64_t FileJsonBytesWithoutLines(std::string_view path) {
  return std::string_view(R"({"path":)").size() + JsonStringBytes(path) +
         std::string_view(R"(,"lines":[)").size() + std::string_view("]}").size() + 1;
}

// The matches of one file, before the result is assembled.
struct FileMatches {
  std::string path;
  std::vector<GrepLine> lines;
  // Matching lines found, counting one past the per-file limit when there
  // are more: the lines hold at most that limit.
  uint64_t match_count = 0;
  uint64_t lines_json_bytes = 0;  // GrepLineJsonBytes of the lines, summed
  // The lines stopped at GrepOptions::max_result_bytes: the file goes on.
  bool cut_at_result_bytes = false;
  MemoryReservation memory;  // the lines, held from GrepOptions::memory_budget
};

// Counts the cost of a file's lines as they are collected, and says when
// collecting must stop: past GrepOptions::max_result_bytes (no result can
// hold more of this file), or when the memory budget has no room.
class LineCosts {
 public:
  LineCosts(const GrepOptions& options, FileMatches& matches)
      : max_result_bytes_(options.max_result_bytes), matches_(matches) {}

  // Counts `line`, just collected; false once collecting must stop.
  bool Add(const GrepLine& line) {
    matches_.lines_json_bytes += GrepLineJsonBytes(line);
    if (!matches_.memory.Grow(line.content.size() + kLineMemoryBytes)) {
      out_of_memory_ = true;
      return false;
    }
    if (max_result_bytes_ != 0 && matches_.lines_json_bytes > max_result_bytes_) {
      matches_.cut_at_result_bytes = true;
      return false;
    }
    return true;
  }

  bool out_of_memory() const { return out_of_memory_; }

 private:
  const uint64_t max_result_bytes_;
  FileMatches& matches_;
  bool out_of_memory_ = false;
};

// Work for a worker: the files to search or, when there are none, the
// directory to list.
struct WorkItem {
  std::string directory;
  IgnoreRules rules;  // the rules in force for the directory's entries
  std::vector<std::string> files;
  bool follow_symlinks = false;  // the files were named in GrepOptions::paths
  // No file this item finds has a path before this: "dir/" for a directory
  // ("" for the root), the first path for files.
  std::string floor;
};

WorkItem DirectoryItem(std::string directory, IgnoreRules rules) {
  std::string floor = directory.empty() ? std::string() : directory + '/';
  return WorkItem{std::move(directory), std::move(rules), {}, false, std::move(floor)};
}

WorkItem FilesItem(std::vector<std::string> files, bool follow_symlinks) {
  std::string floor = files.empty() ? std::string() : *std::min_element(files.begin(), files.end());
  return WorkItem{"", {}, std::move(files), follow_symlinks, std::move(floor)};
}

// Accepts the file names of GrepOptions::extensions.
class ExtensionFilter {
 public:
  static Result<ExtensionFilter> Create(const std::vector<std::string>& extensions) {
    ExtensionFilter filter;
    for (const std::string& extension : extensions) {
      std::string_view bare = extension;
      if (!bare.empty() && bare.front() == '.') bare.remove_prefix(1);
      if (bare.empty()) {
        return InvalidArgumentError("Invalid extension " + Quote(extension) +
                                    ": it must name an extension, such as 'rs' or '.rs'");
      }
      filter.suffixes_.push_back("." + std::string(bare));
    }
    return filter;
  }

  bool Accepts(std::string_view name) const {
    if (suffixes_.empty()) return true;
    return std::any_of(suffixes_.begin(), suffixes_.end(), [name](const std::string& suffix) {
      return name.size() >= suffix.size() && name.substr(name.size() - suffix.size()) == suffix;
    });
  }

 private:
  std::vector<std::string> suffixes_;  // ".rs"
};

// Tracks max_matches across workers: once the files found so far hold more
// than max_matches matching lines up to some path (in the result's order),
// nothing after that path can appear in the result, and the result is
// truncated whatever else exists. Files and directories beyond it are
// skipped. The cut-off only moves towards the front, so the outcome does
// not depend on timing.
class MatchLimit {
 public:
  explicit MatchLimit(uint64_t max_matches) : max_matches_(max_matches) {}

  void Record(const std::string& path, uint64_t match_count) {
    if (max_matches_ == 0 || match_count == 0) return;
    std::lock_guard lock(mutex_);
    if (cutoff_ && path > *cutoff_) return;
    counts_[path] = match_count;
    uint64_t total = 0;
    for (auto entry = counts_.begin(); entry != counts_.end(); ++entry) {
      total += entry->second;
      if (total > max_matches_) {
        cutoff_ = entry->first;
        counts_.erase(std::next(entry), counts_.end());
        has_cutoff_.store(true, std::memory_order_release);
        return;
      }
    }
  }

  // Whether the file at `path` cannot be in the result.
  bool IsBeyond(std::string_view path) const {
    if (!has_cutoff_.load(std::memory_order_acquire)) return false;
    std::lock_guard lock(mutex_);
    return path > std::string_view(*cutoff_);
  }

  // Whether no file below `directory` can be in the result: all their
  // paths begin with "directory/".
  bool IsDirectoryBeyond(std::string_view directory) const {
    if (directory.empty() || !has_cutoff_.load(std::memory_order_acquire)) return false;
    std::string prefix = std::string(directory) + '/';
    std::lock_guard lock(mutex_);
    return prefix > *cutoff_;
  }

 private:
  const uint64_t max_matches_;
  mutable std::mutex mutex_;
  std::map<std::string, uint64_t> counts_;  // files with matches, up to the cut-off
  std::optional<std::string> cutoff_;
  std::atomic<bool> has_cutoff_{false};
};

// Builds the lines of one file: each match with `context` lines before and
// after, overlapping or adjacent windows merged.
//
// The file may arrive in pieces: the text is the complete lines of a window
// over the file, which grows at its end (SetText) and loses lines at its
// start that no later match can need (ForgetOldLines). Offsets are relative
// to the window.
class LineCollector {
 public:
  LineCollector(uint64_t context, std::vector<GrepLine>& lines, LineCosts& costs)
      : context_(context), lines_(lines), costs_(costs) {}

  // Whether a line could not be counted (LineCosts::Add): nothing more is
  // collected.
  bool full() const { return full_; }

  // The window's complete lines: up to just after a '\n', or to the end of
  // the file. The previous text, less what ForgetOldLines dropped, is a
  // prefix of `text`.
  void SetText(std::string_view text) { text_ = text; }

  void AddMatch(LineMatcher::Line line) {
    // Line numbers are counted lazily, only as far as the matches reach.
    uint64_t number = counted_number_ +
                      CountNewlines(text_.substr(counted_offset_, line.begin - counted_offset_));
    counted_offset_ = line.begin;
    counted_number_ = number;

    EmitAfterContext(line.begin);
    uint64_t first = std::max(emitted_number_ + 1, number > context_ ? number - context_ : 1);
    size_t start = line.begin;
    for (uint64_t lines_back = number - first; lines_back > 0; --lines_back) {
      // The text holds the context_ lines before a match (ForgetOldLines).
      start = PreviousLineStart(start);
    }
    emitted_end_ = start;
    emitted_number_ = first - 1;
    while (emitted_number_ + 1 < number && !full_) EmitNext(false);
    if (full_) return;
    EmitNext(true);
    if (!full_) after_remaining_ = context_;
  }

  // Emits the after-context of the last match that the text holds.
  void EmitAfterContext() { EmitAfterContext(text_.size()); }

  // Whether the last match's after-context goes on beyond the text.
  bool OwesAfterContext() const { return after_remaining_ > 0; }

  // Forgets the lines at the start of the text that no later line needs:
  // all but the last `context` (a later match's before-context; pending
  // after-context is never in the text). Returns the length forgotten: the
  // caller drops that many bytes from the window's start.
  size_t ForgetOldLines() {
    const size_t keep = KeptLinesStart();
    // Count the forgotten lines, which later line numbers need.
    if (counted_offset_ < keep) {
      counted_number_ += CountNewlines(text_.substr(counted_offset_, keep - counted_offset_));
      counted_offset_ = keep;
    }
    counted_offset_ -= keep;
    // Only needed while after-context is pending, and then at the text's end.
    emitted_end_ = emitted_end_ > keep ? emitted_end_ - keep : 0;
    kept_start_ -= keep;
    tracked_end_ -= keep;
    text_.remove_prefix(keep);
    return keep;
  }

 private:
  // Where the last `context_` complete lines of the text begin, or where
  // the text does if it has fewer. Tracked as the text grows, so each byte
  // is looked at a bounded number of times however large `context_` is.
  size_t KeptLinesStart() {
    std::string_view added = text_.substr(tracked_end_);
    tracked_end_ = text_.size();
    uint64_t added_lines = context_ == 0 ? 0 : CountNewlines(added);
    if (added_lines >= context_) {
      // Walk back from the end, within the added lines.
      kept_start_ = text_.size();
      for (uint64_t line = 0; line < context_; ++line) kept_start_ = PreviousLineStart(kept_start_);
      kept_lines_ = context_;
    } else {
      // Walk forward past the lines beyond `context_`, fewer than were added.
      for (kept_lines_ += added_lines; kept_lines_ > context_; --kept_lines_) {
        const void* newline =
            std::memchr(text_.data() + kept_start_, '\n', text_.size() - kept_start_);
        kept_start_ = static_cast<size_t>(static_cast<const char*>(newline) - text_.data()) + 1;
      }
    }
    return kept_start_;
  }

  // Where the line before the one that begins at `start` begins. `start`
  // begins a line after the first of the text, so a '\n' precedes it.
  size_t PreviousLineStart(size_t start) const {
    const void* newline = memrchr(text_.data(), '\n', start - 1);
    return newline == nullptr
               ? 0
               : static_cast<size_t>(static_cast<const char*>(newline) - text_.data()) + 1;
  }

  // Emits after-context lines that begin before `limit`.
  void EmitAfterContext(size_t limit) {
    while (after_remaining_ > 0 && emitted_end_ < limit && !full_) {
      EmitNext(false);
      --after_remaining_;
    }
  }

  // Emits the line that begins at emitted_end_.
  void EmitNext(bool is_match) {
    const void* newline =
        std::memchr(text_.data() + emitted_end_, '\n', text_.size() - emitted_end_);
    size_t end = newline == nullptr
                     ? text_.size()
                     : static_cast<size_t>(static_cast<const char*>(newline) - text_.data());
    ++emitted_number_;
    lines_.push_back(GrepLine{
        emitted_number_, ToValidUtf8(text_.substr(emitted_end_, end - emitted_end_)), is_match});
    emitted_end_ = newline == nullptr ? text_.size() : end + 1;
    if (!costs_.Add(lines_.back())) {
      full_ = true;
      after_remaining_ = 0;
    }
  }

  std::string_view text_;
  const uint64_t context_;
  std::vector<GrepLine>& lines_;
  LineCosts& costs_;
  bool full_ = false;
  size_t emitted_end_ = 0;        // where the line after the last emitted one begins
  uint64_t emitted_number_ = 0;   // number of the last emitted line; 0 before any
  size_t counted_offset_ = 0;     // a line begins here ...
  uint64_t counted_number_ = 1;   // ... and has this number
  uint64_t after_remaining_ = 0;  // after-context lines still owed to the last match
  size_t kept_start_ = 0;         // the text from here to tracked_end_ ...
  uint64_t kept_lines_ = 0;       // ... holds this many lines, at most context_
  size_t tracked_end_ = 0;        // KeptLinesStart() has looked at the text up to here
};

// Searches one file and collects its matching lines with their context.
// Only the first max_matches matches of a file can be in the result: one
// more tells that the result is truncated, and the search stops there.
class FileSearch {
 public:
  FileSearch(const LineMatcher& matcher, const GrepOptions& options, FileMatches& matches)
      : matcher_(matcher),
        invert_match_(options.invert_match),
        max_matches_(options.max_matches),
        matches_(matches),
        costs_(options, matches),
        collector_(options.context, matches.lines, costs_) {}

  // The memory budget had no room for a line: the search must fail.
  bool out_of_memory() const { return costs_.out_of_memory(); }

  // Searches `content`, the whole file. False if the file is binary.
  bool SearchContent(std::string_view content) {
    if (LooksBinary(content)) return false;
    SearchLines(content, 0);
    return true;
  }

  // Searches the file `reader` reads, chunk by chunk through a window in
  // `buffer`. False if the file is binary or a read fails.
  bool SearchReader(GrepFileReader& reader, ReadBuffer& buffer) {
    // The window begins `base` bytes into `buffer`, the offset its first
    // byte has within a page of the file (kPageBytes).
    size_t base = 0;
    size_t size = 0;          // bytes in the window
    size_t searched = 0;      // its lines before this were searched; no '\n' after it
    uint64_t file_bytes = 0;  // bytes read from the file
    while (true) {
      // Room for a read, and for moving the window to any offset in a page.
      char* data = buffer.Reserve(kPageBytes + size + kReadBytes, base + size) + base;
      Result<size_t> read = reader.Read(data + size, kReadBytes);
      if (!read.ok()) return false;
      const size_t count = *read;
      if (file_bytes < kBinaryProbeBytes) {
        uint64_t probed = std::min<uint64_t>(count, kBinaryProbeBytes - file_bytes);
        if (std::memchr(data + size, '\0', static_cast<size_t>(probed)) != nullptr) {
          return false;  // binary; the lines found so far are dropped with it
        }
      }
      file_bytes += count;
      // The lines completed by this read; at the end, the last line too.
      size_t lines_end = searched;
      if (count == 0) {
        lines_end = size;
      } else if (const void* newline = memrchr(data + size, '\n', count)) {
        lines_end = static_cast<size_t>(static_cast<const char*>(newline) - data) + 1;
      }
      size += count;
      SearchLines(std::string_view(data, lines_end), searched);
      searched = lines_end;
      if (count == 0) return true;
      if (!searching_ && !collector_.OwesAfterContext() && file_bytes >= kBinaryProbeBytes) {
        return true;  // nothing more to find, and known not to be binary
      }
      if (size_t forgotten = collector_.ForgetOldLines(); forgotten > 0) {
        size -= forgotten;
        searched -= forgotten;
        size_t new_base = static_cast<size_t>((file_bytes - size) % kPageBytes);
        std::memmove(data - base + new_base, data + forgotten, size);
        base = new_base;
      }
    }
  }

 private:
  // Searches the lines of `text`, complete lines, that begin at or after
  // `from` (a line start), and emits the after-context that `text` holds.
  void SearchLines(std::string_view text, size_t from) {
    collector_.SetText(text);
    // A match found for an earlier (shorter) text may lie beyond its end.
    next_match_known_ = false;
    while (searching_) {
      std::optional<LineMatcher::Line> line =
          invert_match_ ? FindNonMatchingLine(text, from) : matcher_.FindMatchingLine(text, from);
      if (!line) break;
      if (max_matches_ != 0 && matches_.match_count == max_matches_) {
        ++matches_.match_count;
        searching_ = false;
        break;
      }
      collector_.AddMatch(*line);
      if (collector_.full()) {
        // Past max_result_bytes, or out of memory: the lines so far are
        // all the result can use of this file.
        searching_ = false;
        if (matches_.lines.empty() || !matches_.lines.back().is_match) break;
      }
      ++matches_.match_count;
      from = line->end + 1;
    }
    collector_.EmitAfterContext();
  }

  // The first line of `text` at or after `from` (a line start) that does not
  // match (grep -v). The matcher still looks for matches, which skips runs
  // of lines at its speed; the next match is kept, so each line is split
  // off once and each match found once.
  std::optional<LineMatcher::Line> FindNonMatchingLine(std::string_view text, size_t from) {
    while (from < text.size()) {
      if (!next_match_known_ || (next_match_ && next_match_->begin < from)) {
        next_match_ = matcher_.FindMatchingLine(text, from);
        next_match_known_ = true;
      }
      if (!next_match_ || next_match_->begin > from) {
        const void* newline = std::memchr(text.data() + from, '\n', text.size() - from);
        const size_t end =
            newline == nullptr ? text.size() : static_cast<size_t>(static_cast<const char*>(newline) - text.data());
        return LineMatcher::Line{from, end};
      }
      from = next_match_->end + 1;
    }
    return std::nullopt;
  }

  const LineMatcher& matcher_;
  const bool invert_match_;
  std::optional<LineMatcher::Line> next_match_;  // for FindNonMatchingLine
  bool next_match_known_ = false;
  const uint64_t max_matches_;
  FileMatches& matches_;
  LineCosts costs_;
  LineCollector collector_;
  bool searching_ = true;  // false once max_matches stopped the search
};

// The content of the file at `path`, not following a final symlink: a view
// valid until `buffer` is used again, or as long as the tree holds it.
Result<std::string_view> ReadWholeFile(GrepTree& tree, std::string_view path, ReadBuffer& buffer) {
  TOOLVFS_ASSIGN_OR_RETURN(GrepTree::File file, tree.OpenFile(path, /*follow_symlinks=*/false));
  if (file.reader == nullptr) return file.content;
  size_t size = 0;
  while (true) {
    char* data = buffer.Reserve(size + kReadBytes, size);
    TOOLVFS_ASSIGN_OR_RETURN(size_t count, file.reader->Read(data + size, kReadBytes));
    if (count == 0) return std::string_view(data, size);
    size += count;
  }
}

// Whether a listed name can be part of a project path (path.h): names that
// NormalizePath would reject cannot be shown or passed back to any
// operation, so the walk leaves them out.
bool IsUsableName(std::string_view name) {
  if (name.empty() || name == "." || name == "..") return false;
  for (char c : name) {
    auto byte = static_cast<uint8_t>(c);
    if (byte < 0x20 || byte == 0x7F || c == '/') return false;
  }
  return IsValidUtf8(name);
}

// Keeps the lines of `file` up to its `keep`-th match and that match's
// after-context, where later matches count as context.
void TruncateFile(FileMatches& file, uint64_t keep, uint64_t context) {
  uint64_t seen = 0;
  uint64_t last_kept_line = 0;
  for (const GrepLine& line : file.lines) {
    if (line.is_match && ++seen == keep) {
      last_kept_line = line.line_number;
      break;
    }
  }
  std::erase_if(file.lines,
                [&](const GrepLine& line) { return line.line_number > last_kept_line + context; });
  for (GrepLine& line : file.lines) {
    if (line.line_number > last_kept_line) line.is_match = false;
  }
}

// One search: the shared queue of work, the workers draining it, and the
// hand-over of files in path order as each becomes final.
//
// Every queued or running item has a floor, a path no file it finds can
// come before (WorkItem::floor). A file found is final once every floor is
// after it: nothing can turn up before it any more. Final files are handed
// over (Deliver) in path order by one thread at a time, which applies
// max_matches and max_result_bytes as the files come, and stops the search
// once the result is complete.
class GrepRun {
 public:
  GrepRun(GrepTree& tree, const GrepOptions& options, ExtensionFilter extensions)
      : tree_(tree),
        options_(options),
        extensions_(std::move(extensions)),
        limit_(options.max_matches),
        // Past max_result_bytes of waiting files the result is full once
        // they are handed over: work after them is wasted.
        max_waiting_bytes_(options.max_result_bytes == 0
                               ? kMaxWaitingResultBytes
                               : std::min(kMaxWaitingResultBytes, options.max_result_bytes)),
        match_budget_(options.max_matches) {}

  void Push(WorkItem item) {
    {
      std::lock_guard lock(mutex_);
      floors_.insert(item.floor);
      queue_.push_back(std::move(item));
    }
    work_available_.notify_one();
  }

  // Drains the queue with `worker_count` workers, handing every file with
  // matches over in path order. The calling thread searches with
  // `first_matcher` at once; each other worker builds its own matcher with
  // `make_matcher` on its own thread, so that building them (milliseconds
  // for Unicode classes) overlaps the search instead of preceding it.
  // Returns the result: its matches, unless options.file_sink took them.
  Result<GrepResult> Run(const LineMatcher& first_matcher, size_t worker_count,
                         const std::function<Result<std::unique_ptr<LineMatcher>>()>& make_matcher) {
    std::vector<std::thread> threads;
    for (size_t index = 1; index < worker_count; ++index) {
      try {
        threads.emplace_back([this, &first_matcher, &make_matcher] {
          Result<std::unique_ptr<LineMatcher>> matcher = make_matcher();
          // The pattern compiled once already; should it fail now (memory),
          // sharing the first matcher only costs contention.
          Work(matcher.ok() ? **matcher : first_matcher);
        });
      } catch (const std::system_error&) {
        break;  // no more threads: the workers that exist do all the work
      }
    }
    Work(first_matcher);
    for (std::thread& thread : threads) thread.join();
    DeliverFinal();
    if (!error_.ok()) return error_;
    return std::move(result_);
  }

 private:
  // Whether a worker may take queued work now. Past kMaxWaitingResultBytes
  // of files waiting for an earlier one, only the item with the lowest
  // floor: it is what they wait for (queued or running, it finishes).
  // Called with mutex_ held.
  std::vector<WorkItem>::iterator TakeableItem() {
    if (queue_.empty()) return queue_.end();
    if (waiting_bytes_ <= max_waiting_bytes_) return std::prev(queue_.end());
    const std::string& lowest = *floors_.begin();
    for (auto item = queue_.end(); item != queue_.begin();) {
      --item;
      if (item->floor == lowest) return item;
    }
    return queue_.end();
  }

  void Work(const LineMatcher& matcher) {
    ReadBuffer buffer;  // reused for every file this worker reads
    while (true) {
      WorkItem item;
      {
        std::unique_lock lock(mutex_);
        work_available_.wait(lock, [this] {
          return stopped_.load() || busy_workers_ == 0 || TakeableItem() != queue_.end();
        });
        auto takeable = TakeableItem();
        // Stopped, or nothing queued and nobody can queue more.
        if (stopped_.load() || takeable == queue_.end()) return;
        item = std::move(*takeable);
        queue_.erase(takeable);
        ++busy_workers_;
      }
      if (item.files.empty()) {
        ListDirectory(item.directory, item.floor, std::move(item.rules), matcher, buffer);
      } else {
        SearchFiles(item.files, item.floor, item.follow_symlinks, matcher, buffer);
      }
      {
        std::lock_guard lock(mutex_);
        --busy_workers_;
        floors_.erase(floors_.find(item.floor));
      }
      DeliverFinal();
      // A floor went: files may have been handed over (room to take any
      // work again), and the last worker out ends the others' wait.
      work_available_.notify_all();
    }
  }

  // Searches `files` (sorted) of an item whose floor is `floor`. Past the
  // limit of waiting files, unless this item is what they wait for, the
  // files not yet searched go back to the queue for later, so that the
  // files held stay few however many workers run.
  void SearchFiles(std::vector<std::string>& files, const std::string& floor, bool follow_symlinks,
                   const LineMatcher& matcher, ReadBuffer& buffer) {
    for (size_t index = 0; index < files.size(); ++index) {
      if (index > 0 && MustYield(floor)) {
        std::vector<std::string> rest(std::make_move_iterator(files.begin() + static_cast<ptrdiff_t>(index)),
                                      std::make_move_iterator(files.end()));
        Push(FilesItem(std::move(rest), follow_symlinks));
        return;
      }
      SearchFile(files[index], follow_symlinks, matcher, buffer);
    }
  }

  // Whether the item with `floor` should leave its remaining work for
  // later (SearchFiles).
  bool MustYield(const std::string& floor) {
    std::lock_guard lock(mutex_);
    return waiting_bytes_ > max_waiting_bytes_ && floor != *floors_.begin();
  }

  void ListDirectory(const std::string& directory, const std::string& floor, IgnoreRules rules,
                     const LineMatcher& matcher, ReadBuffer& buffer) {
    if (stopped_.load() || limit_.IsDirectoryBeyond(directory)) return;
    Result<std::vector<GrepTree::Entry>> listed = tree_.List(directory);
    if (!listed.ok()) return;  // vanished or unreadable since it was seen: skip it
    std::vector<GrepTree::Entry>& entries = *listed;
    // In name order, so the walk roughly follows the result's order, files
    // become final early, and max_matches can cut off the rest early.
    std::sort(entries.begin(), entries.end(),
              [](const GrepTree::Entry& a, const GrepTree::Entry& b) { return a.name < b.name; });

    if (!options_.include_ignored) {
      for (std::string_view name : {kGitignoreFileName, kIgnoreFileName}) {
        bool present = std::any_of(entries.begin(), entries.end(), [name](const auto& entry) {
          return entry.name == name && entry.kind == EntryKind::kFile;
        });
        if (!present) continue;
        Result<std::string_view> content = ReadWholeFile(tree_, JoinPath(directory, name), buffer);
        if (content.ok()) rules = rules.With(IgnoreFile(directory, *content));
      }
    }

    std::vector<std::string> subdirectories;
    std::vector<std::string> files;
    for (const GrepTree::Entry& entry : entries) {
      if (!IsUsableName(entry.name)) continue;
      std::string path = JoinPath(directory, entry.name);
      switch (entry.kind) {
        case EntryKind::kSymlink:
          break;  // never followed while walking, like ripgrep without -L
        case EntryKind::kDirectory:
          if (entry.name == ".git" || entry.name == ".toolvfs") break;
          if (rules.IsIgnored(path, /*is_directory=*/true)) break;
          subdirectories.push_back(std::move(path));
          break;
        case EntryKind::kFile:
          if (!extensions_.Accepts(entry.name)) break;
          if (rules.IsIgnored(path, /*is_directory=*/false)) break;
          files.push_back(std::move(path));
          break;
      }
    }

    // The queue is a stack: push the last names first so the first come
    // out first, and keep the first batch of files for this worker (the
    // directory's floor, still held, covers them).
    for (auto subdirectory = subdirectories.rbegin(); subdirectory != subdirectories.rend();
         ++subdirectory) {
      Push(DirectoryItem(std::move(*subdirectory), rules));
    }
    size_t first_batch_end = std::min(files.size(), kFilesPerBatch);
    for (size_t batch_end = files.size(); batch_end > first_batch_end;) {
      size_t batch_begin = std::max(first_batch_end, batch_end - kFilesPerBatch);
      std::vector<std::string> batch(
          std::make_move_iterator(files.begin() + static_cast<ptrdiff_t>(batch_begin)),
          std::make_move_iterator(files.begin() + static_cast<ptrdiff_t>(batch_end)));
      Push(FilesItem(std::move(batch), false));
      batch_end = batch_begin;
    }
    files.resize(first_batch_end);
    SearchFiles(files, floor, false, matcher, buffer);
  }

  void SearchFile(const std::string& path, bool follow_symlinks, const LineMatcher& matcher,
                  ReadBuffer& buffer) {
    if (stopped_.load() || limit_.IsBeyond(path)) return;
    if (options_.file_filter && !options_.file_filter(path)) return;  // as if absent
    Result<GrepTree::File> file = tree_.OpenFile(path, follow_symlinks);
    if (!file.ok()) return;  // vanished, unreadable...
    FileMatches matches;
    matches.memory = MemoryReservation(options_.memory_budget);
    FileSearch search(matcher, options_, matches);
    bool searched = file->reader != nullptr ? search.SearchReader(*file->reader, buffer)
                                            : search.SearchContent(file->content);
    if (searched && search.out_of_memory()) {
      Stop(GrepOutOfMemoryError(*options_.memory_budget));
      return;
    }
    if (!searched || matches.match_count == 0) return;  // binary, unreadable, no match
    matches.path = path;
    limit_.Record(matches.path, matches.match_count);
    std::lock_guard lock(mutex_);
    waiting_bytes_ += matches.lines_json_bytes;
    // Overlapping entries of options.paths find a file twice: one is kept.
    waiting_.try_emplace(matches.path, std::move(matches));
  }

  // Hands over the files that are final, in path order, one thread at a
  // time.
  void DeliverFinal() {
    std::lock_guard deliver_lock(deliver_mutex_);
    while (true) {
      FileMatches next;
      {
        std::lock_guard lock(mutex_);
        if (stopped_.load() || waiting_.empty()) return;
        auto first = waiting_.begin();
        if (!floors_.empty() && first->first >= *floors_.begin()) return;
        waiting_bytes_ -= first->second.lines_json_bytes;
        next = std::move(first->second);
        waiting_.erase(first);
      }
      Deliver(std::move(next));
    }
  }

  // Adds the next file in path order to the result, as much of it as the
  // limits leave room for; stops the search when they leave no more.
  void Deliver(FileMatches file) {
    GrepTruncation cut = GrepTruncation::kNone;
    if (options_.max_matches != 0) {
      if (match_budget_ == 0) {
        // max_matches was used up exactly by the files before: this one
        // is what makes the result truncated.
        file.lines.clear();
        cut = GrepTruncation::kMaxMatches;
      } else if (file.match_count > match_budget_) {
        TruncateFile(file, match_budget_, options_.context);
        cut = GrepTruncation::kMaxMatches;
      } else {
        match_budget_ -= file.match_count;
      }
    }
    if (options_.max_result_bytes != 0) {
      // Whole lines, as many as fit. A file cut short while collecting has
      // more lines than any result can hold, so it never fits whole.
      uint64_t bytes = FileJsonBytesWithoutLines(file.path);
      size_t fitting = 0;
      while (fitting < file.lines.size() && result_bytes_ + bytes +
                                                    GrepLineJsonBytes(file.lines[fitting]) <=
                                                options_.max_result_bytes) {
        bytes += GrepLineJsonBytes(file.lines[fitting]);
        ++fitting;
      }
      if (fitting < file.lines.size()) {
        file.lines.resize(fitting);
        cut = GrepTruncation::kResultBytes;
      }
      result_bytes_ += bytes;
    }
    file.memory.ReleaseAll();  // the caller's now: its sink, or the result
    if (!file.lines.empty()) {
      GrepFileMatches handed{std::move(file.path), std::move(file.lines)};
      if (options_.file_sink) {
        if (Status taken = options_.file_sink(std::move(handed)); !taken.ok()) {
          Stop(std::move(taken));
          return;
        }
      } else {
        result_.matches.push_back(std::move(handed));
      }
    }
    if (cut != GrepTruncation::kNone) {
      result_.truncated = true;
      result_.truncated_by = cut;
      std::lock_guard lock(mutex_);
      stopped_.store(true);
      work_available_.notify_all();
    }
  }

  // Ends the search with `status` as its answer.
  void Stop(Status status) {
    std::lock_guard lock(mutex_);
    if (error_.ok()) error_ = std::move(status);
    stopped_.store(true);
    work_available_.notify_all();
  }

  GrepTree& tree_;
  const GrepOptions& options_;
  const ExtensionFilter extensions_;
  MatchLimit limit_;
  const uint64_t max_waiting_bytes_;

  std::mutex mutex_;
  std::condition_variable work_available_;
  std::vector<WorkItem> queue_;  // a stack: depth first keeps it short
  size_t busy_workers_ = 0;
  std::multiset<std::string> floors_;  // of the items queued and running
  // Files found, by path, until every floor is after them.
  std::map<std::string, FileMatches> waiting_;
  uint64_t waiting_bytes_ = 0;  // their lines_json_bytes
  std::atomic<bool> stopped_{false};  // the result is complete, or failed
  Status error_;

  // Delivery, one thread at a time.
  std::mutex deliver_mutex_;
  uint64_t match_budget_;     // matching lines the result can still take
  uint64_t result_bytes_ = 0;  // of the files handed over (max_result_bytes)
  GrepResult result_;
};

// The rules that .gitignore/.ignore files in the directories above
// `directory` (not in it) impose on its entries. Missing files are fine.
IgnoreRules AncestorRules(GrepTree& tree, std::string_view directory) {
  IgnoreRules rules;
  if (directory.empty()) return rules;
  ReadBuffer buffer;
  std::string ancestor;
  std::vector<std::string_view> segments = PathSegments(directory);
  for (size_t depth = 0; depth < segments.size(); ++depth) {
    for (std::string_view name : {kGitignoreFileName, kIgnoreFileName}) {
      Result<std::string_view> content = ReadWholeFile(tree, JoinPath(ancestor, name), buffer);
      if (content.ok()) {
        rules = rules.With(IgnoreFile(ancestor, *content));
      }
    }
    ancestor = JoinPath(ancestor, segments[depth]);
  }
  return rules;
}


}  // namespace

bool LooksBinary(std::string_view content) {
  return std::memchr(content.data(), '\0', std::min(content.size(), kBinaryProbeBytes)) != nullptr;
}

Result<GrepResult> RunGrep(GrepTree& tree, std::string_view pattern, const GrepOptions& options) {
  TOOLVFS_ASSIGN_OR_RETURN(std::unique_ptr<LineMatcher> first_matcher,
                           LineMatcher::Create(pattern, options.case_insensitive));
  TOOLVFS_ASSIGN_OR_RETURN(ExtensionFilter extensions, ExtensionFilter::Create(options.extensions));

  // Resolve every entry of options.paths before searching anything, so an
  // error is returned instead of a partial result.
  std::vector<WorkItem> seeds;
  std::vector<std::string> named_files;
  if (options.paths.empty()) seeds.push_back(DirectoryItem("", {}));
  for (const std::string& path : options.paths) {
    TOOLVFS_ASSIGN_OR_RETURN(std::string normalized, NormalizePath(path));
    TOOLVFS_ASSIGN_OR_RETURN(EntryKind kind, tree.Resolve(normalized));
    if (kind == EntryKind::kDirectory) {
      IgnoreRules rules = options.include_ignored ? IgnoreRules() : AncestorRules(tree, normalized);
      seeds.push_back(DirectoryItem(std::move(normalized), std::move(rules)));
    } else {
      named_files.push_back(std::move(normalized));
    }
  }
  if (!named_files.empty()) seeds.push_back(FilesItem(std::move(named_files), true));

  // Each worker owns a matcher: RE2 objects are thread-safe, but sharing
  // one makes the workers contend for its cache lock on every search.
  size_t worker_count = std::max(2u, std::thread::hardware_concurrency());
  auto make_matcher = [pattern, &options] {
    return LineMatcher::Create(pattern, options.case_insensitive);
  };

  GrepRun run(tree, options, std::move(extensions));
  for (WorkItem& seed : seeds) run.Push(std::move(seed));
  return run.Run(*first_matcher, worker_count, make_matcher);
}

uint64_t GrepLineJsonBytes(const GrepLine& line) {
  // {"line_number":N,"content":C,"is_match":B} and a comma.
  return std::string_view(R"({"line_number":)").size() + DecimalDigits(line.line_number) +
         std::string_view(R"(,"content":)").size() + JsonStringBytes(line.content) +
         std::string_view(R"(,"is_match":)").size() + (line.is_match ? 4 : 5) + 1 + 1;
}

uint64_t GrepFileJsonBytes(const GrepFileMatches& file) {
  uint64_t bytes = FileJsonBytesWithoutLines(file.path);
  for (const GrepLine& line : file.lines) bytes += GrepLineJsonBytes(line);
  return bytes;
}

Status GrepOutOfMemoryError(const MemoryBudget& budget) {
  return ResourceExhaustedError(
      "Search stopped: the results being built at once by all requests in flight would pass "
      "the host's memory budget of " + FormatBytes(budget.limit_bytes()) +
      "; try again, or ask for less (a narrower path or pattern, a lower max_matches)");
}

std::string_view GrepTruncationName(GrepTruncation truncation) {
  switch (truncation) {
    case GrepTruncation::kNone: return "";
    case GrepTruncation::kMaxMatches: return "max_matches";
    case GrepTruncation::kResultBytes: return "max_result_bytes";
  }
  return "";
}

}  // namespace toolvfs
