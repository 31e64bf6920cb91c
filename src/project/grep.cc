#include "project/grep.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstring>
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
class LineCollector {
 public:
  LineCollector(std::string_view text, uint64_t context, std::vector<GrepLine>& lines)
      : text_(text), context_(context), lines_(lines) {}

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
      // `start` begins a line after the first, so a '\n' precedes it.
      const void* newline = memrchr(text_.data(), '\n', start - 1);
      start = newline == nullptr
                  ? 0
                  : static_cast<size_t>(static_cast<const char*>(newline) - text_.data()) + 1;
    }
    emitted_end_ = start;
    emitted_number_ = first - 1;
    while (emitted_number_ + 1 < number) EmitNext(false);
    EmitNext(true);
    after_remaining_ = context_;
  }

  // Emits what remains of the last match's after-context.
  void Finish() { EmitAfterContext(text_.size()); }

 private:
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

  const std::string_view text_;
  const uint64_t context_;
  std::vector<GrepLine>& lines_;
  size_t emitted_end_ = 0;        // where the line after the last emitted one begins
  uint64_t emitted_number_ = 0;   // number of the last emitted line; 0 before any
  size_t counted_offset_ = 0;     // a line begins here ...
  uint64_t counted_number_ = 1;   // ... and has this number
  uint64_t after_remaining_ = 0;  // after-context lines still owed to the last match
};

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

  // Drains the queue with one worker per matcher (the calling thread
  // included) and returns every file with matches, in no particular order.
  std::vector<FileMatches> Run(std::vector<std::unique_ptr<LineMatcher>> matchers) {
    std::vector<std::vector<FileMatches>> found(matchers.size());
    std::vector<std::thread> threads;
    for (size_t index = 1; index < matchers.size(); ++index) {
      try {
        threads.emplace_back(
            [this, &matchers, &found, index] { Work(*matchers[index], found[index]); });
      } catch (const std::system_error&) {
        break;  // no more threads: the workers that exist do all the work
      }
    }
    Work(*matchers[0], found[0]);
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
        Result<std::string_view> content = tree_.ReadFile(JoinPath(directory, name), false, buffer);
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
    Result<std::string_view> content = tree_.ReadFile(path, follow_symlinks, buffer);
    if (!content.ok()) return;  // vanished, unreadable...
    if (LooksBinary(*content)) {
      return;  // binary
    }
    const std::string_view text = *content;
    const uint64_t max_matches = options_.max_matches;
    FileMatches matches;
    LineCollector collector(text, options_.context, matches.lines);
    size_t from = 0;
    while (std::optional<LineMatcher::Line> line = matcher.FindMatchingLine(text, from)) {
      if (max_matches != 0 && matches.match_count == max_matches) {
        // Only the first max_matches of one file can be in the result; one
        // more tells that the result is truncated.
        ++matches.match_count;
        break;
      }
      collector.AddMatch(*line);
      ++matches.match_count;
      from = line->end + 1;
    }
    if (matches.match_count == 0) return;
    collector.Finish();
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
      Result<std::string_view> content = tree.ReadFile(JoinPath(ancestor, name), false, buffer);
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

char* ReadBuffer::Reserve(size_t size, size_t keep) {
  if (size <= capacity_) return data_.get();
  size_t capacity = std::max(size, capacity_ + capacity_ / 2);
  std::unique_ptr<char[]> grown(new char[capacity]);  // not value-initialized: no zero fill
  if (keep > 0) std::memcpy(grown.get(), data_.get(), std::min(keep, capacity_));
  data_ = std::move(grown);
  capacity_ = capacity;
  return data_.get();
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
  std::vector<std::unique_ptr<LineMatcher>> matchers;
  matchers.push_back(std::move(first_matcher));
  while (matchers.size() < worker_count) {
    TOOLVFS_ASSIGN_OR_RETURN(std::unique_ptr<LineMatcher> matcher,
                             LineMatcher::Create(pattern, options.case_insensitive));
    matchers.push_back(std::move(matcher));
  }

  GrepRun run(tree, options, std::move(extensions));
  for (WorkItem& seed : seeds) run.Push(std::move(seed));
  return AssembleResult(run.Run(std::move(matchers)), options);
}

}  // namespace toolvfs
