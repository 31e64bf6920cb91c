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

// The matches of one file, before the result is assembled.
struct FileMatches {
  std::string path;
  std::vector<GrepLine> lines;
  // Matching lines found, counting one past the per-file limit when there
  // are more: the lines hold at most that limit.
  uint64_t match_count = 0;
};

// Work for a worker: the files to search or, when there are none, the
// directory to list.
struct WorkItem {
  std::string directory;
  IgnoreRules rules;  // the rules in force for the directory's entries
  std::vector<std::string> files;
  bool follow_symlinks = false;  // the files were named in GrepOptions::paths
};

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
  LineCollector(uint64_t context, std::vector<GrepLine>& lines)
      : context_(context), lines_(lines) {}

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
    while (emitted_number_ + 1 < number) EmitNext(false);
    EmitNext(true);
    after_remaining_ = context_;
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
    while (after_remaining_ > 0 && emitted_end_ < limit) {
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
  }

  std::string_view text_;
  const uint64_t context_;
  std::vector<GrepLine>& lines_;
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
        max_matches_(options.max_matches),
        matches_(matches),
        collector_(options.context, matches.lines) {}

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
    while (searching_) {
      std::optional<LineMatcher::Line> line = matcher_.FindMatchingLine(text, from);
      if (!line) break;
      if (max_matches_ != 0 && matches_.match_count == max_matches_) {
        ++matches_.match_count;
        searching_ = false;
        break;
      }
      collector_.AddMatch(*line);
      ++matches_.match_count;
      from = line->end + 1;
    }
    collector_.EmitAfterContext();
  }

  const LineMatcher& matcher_;
  const uint64_t max_matches_;
  FileMatches& matches_;
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

// One search: the shared queue of work, and the workers draining it.
class GrepRun {
 public:
  GrepRun(GrepTree& tree, const GrepOptions& options, ExtensionFilter extensions)
      : tree_(tree),
        options_(options),
        extensions_(std::move(extensions)),
        limit_(options.max_matches) {}

  void Push(WorkItem item) {
    {
      std::lock_guard lock(mutex_);
      queue_.push_back(std::move(item));
    }
    work_available_.notify_one();
  }

  // Drains the queue with `worker_count` workers and returns every file
  // with matches, in no particular order. The calling thread searches with
  // `first_matcher` at once; each other worker builds its own matcher with
  // `make_matcher` on its own thread, so that building them (milliseconds
  // for Unicode classes) overlaps the search instead of preceding it.
  std::vector<FileMatches> Run(
      const LineMatcher& first_matcher, size_t worker_count,
      const std::function<Result<std::unique_ptr<LineMatcher>>()>& make_matcher) {
    std::vector<std::vector<FileMatches>> found(worker_count);
    std::vector<std::thread> threads;
    for (size_t index = 1; index < worker_count; ++index) {
      try {
        threads.emplace_back([this, &first_matcher, &make_matcher, &found, index] {
          Result<std::unique_ptr<LineMatcher>> matcher = make_matcher();
          // The pattern compiled once already; should it fail now (memory),
          // sharing the first matcher only costs contention.
          Work(matcher.ok() ? **matcher : first_matcher, found[index]);
        });
      } catch (const std::system_error&) {
        break;  // no more threads: the workers that exist do all the work
      }
    }
    Work(first_matcher, found[0]);
    for (std::thread& thread : threads) thread.join();

    std::vector<FileMatches> all;
    for (std::vector<FileMatches>& part : found) {
      std::move(part.begin(), part.end(), std::back_inserter(all));
    }
    return all;
  }

 private:
  void Work(const LineMatcher& matcher, std::vector<FileMatches>& found) {
    ReadBuffer buffer;  // reused for every file this worker reads
    while (true) {
      WorkItem item;
      {
        std::unique_lock lock(mutex_);
        work_available_.wait(lock, [this] { return !queue_.empty() || busy_workers_ == 0; });
        if (queue_.empty()) return;  // nothing queued and nobody can queue more
        item = std::move(queue_.back());
        queue_.pop_back();
        ++busy_workers_;
      }
      if (item.files.empty()) {
        ListDirectory(item.directory, std::move(item.rules), matcher, buffer, found);
      } else {
        for (const std::string& path : item.files) {
          SearchFile(path, item.follow_symlinks, matcher, buffer, found);
        }
      }
      bool finished;
      {
        std::lock_guard lock(mutex_);
        --busy_workers_;
        finished = busy_workers_ == 0 && queue_.empty();
      }
      if (finished) work_available_.notify_all();
    }
  }

  void ListDirectory(const std::string& directory, IgnoreRules rules, const LineMatcher& matcher,
                     ReadBuffer& buffer, std::vector<FileMatches>& found) {
    if (limit_.IsDirectoryBeyond(directory)) return;
    Result<std::vector<GrepTree::Entry>> listed = tree_.List(directory);
    if (!listed.ok()) return;  // vanished or unreadable since it was seen: skip it
    std::vector<GrepTree::Entry>& entries = *listed;
    // In name order, so the walk roughly follows the result's order and
    // max_matches can cut off the rest early.
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
    // out first, and keep the first batch of files for this worker.
    for (auto subdirectory = subdirectories.rbegin(); subdirectory != subdirectories.rend();
         ++subdirectory) {
      Push(WorkItem{std::move(*subdirectory), rules, {}, false});
    }
    size_t first_batch_end = std::min(files.size(), kFilesPerBatch);
    for (size_t batch_end = files.size(); batch_end > first_batch_end;) {
      size_t batch_begin = std::max(first_batch_end, batch_end - kFilesPerBatch);
      WorkItem batch;
      batch.files.assign(
          std::make_move_iterator(files.begin() + static_cast<ptrdiff_t>(batch_begin)),
          std::make_move_iterator(files.begin() + static_cast<ptrdiff_t>(batch_end)));
      Push(std::move(batch));
      batch_end = batch_begin;
    }
    for (size_t index = 0; index < first_batch_end; ++index) {
      SearchFile(files[index], false, matcher, buffer, found);
    }
  }

  void SearchFile(const std::string& path, bool follow_symlinks, const LineMatcher& matcher,
                  ReadBuffer& buffer, std::vector<FileMatches>& found) {
    if (limit_.IsBeyond(path)) return;
    if (options_.file_filter && !options_.file_filter(path)) return;  // as if absent
    Result<GrepTree::File> file = tree_.OpenFile(path, follow_symlinks);
    if (!file.ok()) return;  // vanished, unreadable...
    FileMatches matches;
    FileSearch search(matcher, options_, matches);
    bool searched = file->reader != nullptr ? search.SearchReader(*file->reader, buffer)
                                            : search.SearchContent(file->content);
    if (!searched || matches.match_count == 0) return;  // binary, unreadable, no match
    matches.path = path;
    limit_.Record(matches.path, matches.match_count);
    found.push_back(std::move(matches));
  }

  GrepTree& tree_;
  const GrepOptions& options_;
  const ExtensionFilter extensions_;
  MatchLimit limit_;

  std::mutex mutex_;
  std::condition_variable work_available_;
  std::vector<WorkItem> queue_;  // a stack: depth first keeps it short
  size_t busy_workers_ = 0;
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

GrepResult AssembleResult(std::vector<FileMatches> files, const GrepOptions& options) {
  std::sort(files.begin(), files.end(),
            [](const FileMatches& a, const FileMatches& b) { return a.path < b.path; });
  // Overlapping entries of options.paths find a file twice.
  files.erase(
      std::unique(files.begin(), files.end(),
                  [](const FileMatches& a, const FileMatches& b) { return a.path == b.path; }),
      files.end());

  GrepResult result;
  uint64_t budget = options.max_matches;
  for (FileMatches& file : files) {
    if (options.max_matches != 0) {
      if (budget == 0) {
        result.truncated = true;
        break;
      }
      if (file.match_count > budget) {
        TruncateFile(file, budget, options.context);
        result.matches.push_back({std::move(file.path), std::move(file.lines)});
        result.truncated = true;
        break;
      }
      budget -= file.match_count;
    }
    result.matches.push_back({std::move(file.path), std::move(file.lines)});
  }
  return result;
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
  WorkItem named_files;
  named_files.follow_symlinks = true;
  if (options.paths.empty()) seeds.push_back(WorkItem{"", {}, {}, false});
  for (const std::string& path : options.paths) {
    TOOLVFS_ASSIGN_OR_RETURN(std::string normalized, NormalizePath(path));
    TOOLVFS_ASSIGN_OR_RETURN(EntryKind kind, tree.Resolve(normalized));
    if (kind == EntryKind::kDirectory) {
      IgnoreRules rules = options.include_ignored ? IgnoreRules() : AncestorRules(tree, normalized);
      seeds.push_back(WorkItem{std::move(normalized), std::move(rules), {}, false});
    } else {
      named_files.files.push_back(std::move(normalized));
    }
  }
  if (!named_files.files.empty()) seeds.push_back(std::move(named_files));

  // Each worker owns a matcher: RE2 objects are thread-safe, but sharing
  // one makes the workers contend for its cache lock on every search.
  size_t worker_count = std::max(2u, std::thread::hardware_concurrency());
  auto make_matcher = [pattern, &options] {
    return LineMatcher::Create(pattern, options.case_insensitive);
  };

  GrepRun run(tree, options, std::move(extensions));
  for (WorkItem& seed : seeds) run.Push(std::move(seed));
  return AssembleResult(run.Run(*first_matcher, worker_count, make_matcher), options);
}

}  // namespace toolvfs
