// `toolvfs grep`: ProjectFiles::Grep on the command line, printed like
// ripgrep (path:line:content, path-line-content for context, "--" between
// groups), or as NDJSON: one fs.grep match entry per file, then a summary.
// The flags follow ripgrep's (docs/grep.md).
#include <re2/re2.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <charconv>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cli/command.h"
#include "cli/progress_line.h"
#include "cli/project_opening.h"
#include "cli/terminal.h"
#include "core/io.h"
#include "core/text.h"
#include "project/grep_pattern.h"
#include "project/ignore.h"
#include "project/path.h"
#include "project/project_files.h"
#include "protocol/json_writer.h"

namespace toolvfs {
namespace {

constexpr size_t kFlushBytes = 64 * 1024;

// `-t TYPE`: ripgrep's globs for the common types (`rg --type-list`).
struct FileType {
  std::string_view name;
  std::string_view globs;  // one gitignore-style glob per line
};
constexpr FileType kFileTypes[] = {
    {"c", "*.[chH]\n*.[chH].in\n*.cats\n"},
    {"cpp", "*.[ChH]\n*.cc\n*.[ch]pp\n*.[ch]xx\n*.hh\n*.inl\n*.[ChH].in\n*.cc.in\n*.[ch]pp.in\n*.[ch]xx.in\n*.hh.in\n"},
    {"go", "*.go\n"},
    {"java", "*.java\n*.jsp\n*.jspx\n*.properties\n"},
    {"js", "*.js\n*.jsx\n*.vue\n*.cjs\n*.mjs\n"},
    {"json", "*.json\n*.sarif\ncomposer.lock\n"},
    {"md", "*.markdown\n*.md\n*.mdown\n*.mdwn\n*.mkd\n*.mkdn\n*.mdx\n"},
    {"py", "*.py\n*.pyi\n"},
    {"rust", "*.rs\n"},
    {"sh", "*.bash\n*.bashrc\n.bash_login\n.bash_logout\n.bash_profile\n*.csh\n*.cshrc\n*.ksh\n*.kshrc\n*.sh\n*.tcsh\n*.zsh\n"},
    {"toml", "*.toml\nCargo.lock\n"},
    {"ts", "*.ts\n*.tsx\n*.cts\n*.mts\n"},
    {"txt", "*.txt\n"},
    {"yaml", "*.yaml\n*.yml\n"},
};

std::string FileTypeNames() {
  std::string names;
  for (const FileType& type : kFileTypes) names += (names.empty() ? "" : ", ") + std::string(type.name);
  return names;
}

// Which files the command line searches, on top of the store's own walk
// (ignore rules, binary files): hidden files and directories (a name
// starting with '.') only with --hidden, like ripgrep, except below a path
// named on the command line that is itself hidden; -g globs (gitignore
// syntax, a match includes, "!GLOB" excludes, any plain glob makes the
// rest excluded) and -t types. Immutable once built: safe from the
// search's threads.
class FileSelection {
 public:
  FileSelection(std::vector<std::string> named_paths, bool hidden, const std::vector<std::string>& globs,
                const std::vector<const FileType*>& types, std::vector<std::string> extensions)
      : named_paths_(std::move(named_paths)), hidden_(hidden), extensions_(std::move(extensions)) {
    std::string glob_text;
    for (const std::string& glob : globs) {
      glob_text += glob + "\n";
      if (!glob.starts_with('!')) has_positive_glob_ = true;
    }
    if (!glob_text.empty()) globs_.emplace(std::string(), glob_text);
    std::string type_text;
    for (const FileType* type : types) type_text += type->globs;
    if (!type_text.empty()) types_.emplace(std::string(), type_text);
  }

  bool Selects(std::string_view path) const {
    if (!hidden_ && HasHiddenPart(path)) return false;
    if (globs_) {
      // A "!GLOB" matching a directory above excludes all below it.
      for (size_t slash = path.find('/'); slash != std::string_view::npos; slash = path.find('/', slash + 1)) {
        if (globs_->Match(path.substr(0, slash), true) == IgnoreVerdict::kIncluded) return false;
      }
      IgnoreVerdict verdict = globs_->Match(path, false);
      if (verdict == IgnoreVerdict::kIncluded) return false;
      if (verdict == IgnoreVerdict::kNoMatch && has_positive_glob_) return false;
    }
    if (types_ && types_->Match(path, false) != IgnoreVerdict::kIgnored) return false;
    if (!extensions_.empty()) {
      size_t dot = path.rfind('.');
      size_t slash = path.rfind('/');
      if (dot == std::string_view::npos || (slash != std::string_view::npos && dot < slash)) return false;
      std::string_view extension = path.substr(dot + 1);
      bool listed = false;
      for (const std::string& wanted : extensions_) {
        std::string_view name = wanted;
        if (name.starts_with('.')) name.remove_prefix(1);
        listed = listed || name == extension;
      }
      if (!listed) return false;
    }
    return true;
  }

 private:
  // Whether a component of `path` below the named path it lies in starts
  // with '.'.
  bool HasHiddenPart(std::string_view path) const {
    size_t from = 0;
    for (const std::string& named : named_paths_) {
      if (named.empty()) continue;
      if (path == named || (path.starts_with(named) && path[named.size()] == '/')) {
        from = std::max(from, named.size());
      }
    }
    for (size_t at = from; at < path.size();) {
      if (path[at] == '/') {
        ++at;
        continue;
      }
      if (path[at] == '.') return true;
      size_t slash = path.find('/', at);
      if (slash == std::string_view::npos) break;
      at = slash + 1;
    }
    return false;
  }

  std::vector<std::string> named_paths_;
  bool hidden_ = false;
  std::optional<IgnoreFile> globs_;
  bool has_positive_glob_ = false;
  std::optional<IgnoreFile> types_;
  std::vector<std::string> extensions_;
};

class GrepCommand final : public Command {
 public:
  void AddOptions(CLI::App& app) override {
    app.add_option("PATTERN", positionals_,
                   "PATTERN then PATH...: a regular expression, RE2 syntax (use -- before a pattern starting "
                   "with -), then the files and directories of the project to search; with -e or --files, "
                   "all are paths")
        ->type_name("PATTERN [PATH...]");
    app.add_option("-e,--regexp", patterns_, "A pattern to search for (repeatable: lines matching any)")
        ->type_name("PATTERN")
        ->allow_extra_args(false);
    app.add_flag("-i,--ignore-case", case_insensitive_, "Match case-insensitively");
    app.add_flag("-F,--fixed-strings", fixed_strings_, "The patterns are literal text, not regular expressions");
    app.add_flag("-w,--word-regexp", word_regexp_, "Only matches with a word boundary on both sides");
    app.add_flag("-v,--invert-match", invert_match_,
                 "Select the lines that do not match (with -c, -l, -o, context and --json as for matches)");
    app.add_option("-C,--context", context_, "Show N lines before and after each match")->type_name("N");
    app.add_option("-A,--after-context", after_, "Show N lines after each match")->type_name("N");
    app.add_option("-B,--before-context", before_, "Show N lines before each match")->type_name("N");
    app.add_flag("-l,--files-with-matches", files_with_matches_, "Print only the paths of files with a match");
    app.add_flag("-c,--count", count_, "Print path:N, the number of matching lines, per file");
    app.add_flag("-o,--only-matching", only_matching_, "Print each match on its own line, not the whole line");
    app.add_flag("--files", list_files_, "Print the files that would be searched, without searching");
    app.add_option("--ext", extensions_, "Only files with this extension (repeatable, or comma-separated)")
        ->type_name("EXT")
        ->delimiter(',');
    app.add_option("-t,--type", types_, "Only files of this type (repeatable): " + FileTypeNames())
        ->type_name("TYPE")
        ->allow_extra_args(false);
    app.add_option("-g,--glob", globs_,
                   "Only files matching this gitignore-style glob; !GLOB excludes (repeatable)")
        ->type_name("GLOB")
        ->allow_extra_args(false);
    app.add_flag("--hidden", hidden_, "Also search hidden files and directories (names starting with '.')");
    app.add_option("--max-matches", max_matches_, "Stop after N matching lines (default: no limit)")
        ->type_name("N");
    app.add_flag("--include-ignored", include_ignored_, "Also search files ignored by .gitignore/.ignore");
    app.add_option("--color", color_, "Colour: auto (a terminal without NO_COLOR), always or never")
        ->type_name("WHEN")
        ->check(CLI::IsMember({"auto", "always", "never"}));
    app.add_flag("--json", json_,
                 "Print NDJSON: one {\"path\",\"lines\"} object per file, then {\"truncated\":bool}");
    app.footer(
        "Output: path:line:content per matching line, path-line-content for context lines, "
        "\"--\" between groups (with context); --json prints NDJSON instead.\n"
        "Skips .git/, .toolvfs/, hidden files (unless --hidden), binary files and ignored files "
        "(unless --include-ignored).\n"
        "Example: toolvfs grep -w -t py 'def \\w+' src\n"
        "Exit codes: 0 matches found, 1 no match, 2 error, 69 the store's server is unavailable (try again).");
  }

  unsigned UsedCommonOptions() const override { return kOptionProject; }

  int Run(const CommonOptions& common) override {
    if (max_matches_ && *max_matches_ == 0) {
      return ReportError("grep", "--max-matches must be at least 1 (see toolvfs grep --help)");
    }
    std::vector<std::string> paths = positionals_;
    if (patterns_.empty() && !list_files_) {
      if (paths.empty()) return ReportError("grep", "PATTERN is required (see toolvfs grep --help)");
      patterns_.push_back(paths.front());
      paths.erase(paths.begin());
    }
    std::vector<const FileType*> types;
    for (const std::string& name : types_) {
      const FileType* found = nullptr;
      for (const FileType& type : kFileTypes) found = type.name == name ? &type : found;
      if (found == nullptr) {
        return ReportError("--type", "Unknown file type " + Quote(name) + " (known: " + FileTypeNames() + ")");
      }
      types.push_back(found);
    }
    Result<std::unique_ptr<ProjectFiles>> store = OpenCommandProject(common.project, ProjectUse::kRead);
    if (!store.ok()) return ReportStatus("--project", store.status());

    std::vector<std::string> named;
    for (const std::string& path : paths) {
      Result<std::string> normalized = NormalizePath(path);
      if (normalized.ok()) named.push_back(*normalized);
    }
    // --ext is the store's own filter when searching; --files never reads,
    // so it checks extensions itself.
    const FileSelection selection(named, hidden_, globs_, types,
                                  list_files_ ? extensions_ : std::vector<std::string>());

    GrepOptions options;
    options.paths = paths;
    options.extensions = list_files_ ? std::vector<std::string>() : extensions_;
    // As in ripgrep, -A or -B overrides -C (on both sides).
    const uint32_t context = after_ || before_ ? 0 : context_;
    after_context_ = after_.value_or(context);
    before_context_ = before_.value_or(context);
    options.context = std::max(after_context_, before_context_);
    options.case_insensitive = case_insensitive_;
    options.invert_match = invert_match_;
    options.max_matches = max_matches_.value_or(0);  // 0: no limit on the command line
    options.include_ignored = include_ignored_;
    if (list_files_) return ListFiles(**store, options, selection);
    options.file_filter = [&selection](std::string_view path) { return selection.Selects(path); };

    const std::string pattern = CombinedPattern();
    RE2::Options re_options;
    re_options.set_case_sensitive(!case_insensitive_);
    re_options.set_log_errors(false);
    // Where in a line the matches are (-o, colour, --json offsets): the
    // store's search says which lines match, this finds the spans again.
    // A selected line of -v has no match in it to show (like rg: no
    // colour, an empty "matches", -o prints the whole line).
    if (!invert_match_) matcher_ = std::make_unique<RE2>(UnicodePerlClasses(pattern), re_options);
    if (matcher_ && !matcher_->ok()) matcher_.reset();

    // On a terminal, a line of progress while the search goes on; --json
    // output is for programs, and --log-level error asks for quiet.
    SearchProgress progress(ProgressLine::ForStderr(!json_ && common.log_level != "error"));
    if (progress.line.enabled()) {
      options.file_filter = [&selection, &progress](std::string_view path) {
        if (!selection.Selects(path)) return false;
        progress.files.fetch_add(1, std::memory_order_relaxed);
        progress.Update();
        return true;
      };
    }

    // Each file is printed as soon as the search hands it over (in path
    // order), so memory stays bounded however large the output.
    uint64_t files_found = 0;
    Result<GrepResult> result = json_ ? GrepToJson(**store, pattern, options, files_found)
                                      : GrepToText(**store, pattern, options, files_found, progress);
    progress.line.Clear();
    if (!result.ok()) return ReportError("grep", result.status().message());
    if (result->truncated && !json_) {
      ReportNote("grep", "stopped after " + std::to_string(options.max_matches) +
                             " matching lines (--max-matches); there are more");
    }
    return files_found == 0 ? kExitNoResult : kExitOk;
  }

 private:
  // What the progress line of a search shows: files searched (counted by
  // the searching threads), matching lines and the time so far.
  struct SearchProgress {
    explicit SearchProgress(ProgressLine::Options options) : line(std::move(options)) {}
    void Update() {
      line.Update([this] {
        return "searching: " + FormatCount(files.load(std::memory_order_relaxed)) + " files, " +
               FormatCount(matching_lines.load(std::memory_order_relaxed)) + " matching lines, " +
               FormatElapsed(ProgressLine::Clock::now() - started);
      });
    }
    ProgressLine line;
    std::atomic<uint64_t> files{0};
    std::atomic<uint64_t> matching_lines{0};
    const ProgressLine::Clock::time_point started = ProgressLine::Clock::now();
  };

  // The patterns as one RE2 pattern: -F quotes them, several become an
  // alternation, -w puts word boundaries around it. One plain pattern is
  // passed as written, so its errors name what the user typed.
  std::string CombinedPattern() const {
    if (patterns_.size() == 1 && !fixed_strings_ && !word_regexp_) return patterns_.front();
    std::string combined;
    for (const std::string& pattern : patterns_) {
      if (!combined.empty()) combined += '|';
      combined += "(?:" + (fixed_strings_ ? RE2::QuoteMeta(pattern) : pattern) + ")";
    }
    return word_regexp_ ? "\\b(?:" + combined + ")\\b" : combined;
  }

  // --files: the files a search would read, sorted, without reading them
  // (binary files included, as with ripgrep).
  int ListFiles(ProjectFiles& store, GrepOptions& options, const FileSelection& selection) const {
    std::mutex mutex;
    std::vector<std::string> files;
    options.file_filter = [&](std::string_view path) {
      if (selection.Selects(path)) {
        std::lock_guard lock(mutex);
        files.emplace_back(path);
      }
      return false;  // never read
    };
    Result<GrepResult> result = store.Grep("x", options);
    if (!result.ok()) return ReportError("grep", result.status().message());
    std::sort(files.begin(), files.end());
    std::string out;
    for (const std::string& file : files) out += file + "\n";
    Status written = WriteFull(STDOUT_FILENO, out, "standard output");
    if (!written.ok()) return ReportError("grep", written.message());
    return files.empty() ? kExitNoResult : kExitOk;
  }

  // The lines of `file` the command line shows: the matches, and context
  // lines within -B lines before or -A lines after one (the store gives
  // the larger of the two on both sides).
  std::vector<const GrepLine*> ShownLines(const GrepFileMatches& file) const {
    std::vector<const GrepLine*> shown;
    const std::vector<GrepLine>& lines = file.lines;
    std::vector<bool> keep(lines.size(), false);
    std::optional<uint64_t> last_match;
    for (size_t index = 0; index < lines.size(); ++index) {
      if (lines[index].is_match) {
        last_match = lines[index].line_number;
        keep[index] = true;
      } else if (last_match && lines[index].line_number - *last_match <= after_context_) {
        keep[index] = true;
      }
    }
    std::optional<uint64_t> next_match;
    for (size_t index = lines.size(); index-- > 0;) {
      if (lines[index].is_match) {
        next_match = lines[index].line_number;
      } else if (next_match && *next_match - lines[index].line_number <= before_context_) {
        keep[index] = true;
      }
    }
    for (size_t index = 0; index < lines.size(); ++index) {
      if (keep[index]) shown.push_back(&lines[index]);
    }
    return shown;
  }

  // The non-empty matches of the pattern in `content`, as byte spans.
  std::vector<std::pair<size_t, size_t>> Matches(std::string_view content) const {
    std::vector<std::pair<size_t, size_t>> spans;
    if (!matcher_) return spans;
    size_t position = 0;
    re2::StringPiece match;
    while (position <= content.size() &&
           matcher_->Match(content, position, content.size(), RE2::UNANCHORED, &match, 1)) {
      size_t start = static_cast<size_t>(match.data() - content.data());
      size_t end = start + match.size();
      if (match.empty()) {
        position = end + 1;  // step over an empty match
        continue;
      }
      spans.emplace_back(start, end);
      position = end;
    }
    return spans;
  }

  Result<GrepResult> GrepToJson(ProjectFiles& store, const std::string& pattern, GrepOptions& options,
                                uint64_t& files_found) const {
    rapidjson::StringBuffer buffer(nullptr, kFlushBytes * 2);
    auto flush = [&buffer]() -> Status {
      TOOLVFS_RETURN_IF_ERROR(
          WriteFull(STDOUT_FILENO, JsonView(buffer), "standard output"));
      buffer.Clear();
      return OkStatus();
    };
    options.file_sink = [&](GrepFileMatches&& file) -> Status {
      ++files_found;
      // One object per file, the shape of an fs.grep match entry, each
      // matching line with the byte spans of its matches.
      JsonWriter writer(buffer);
      writer.StartObject();
      WriteJsonKey(writer, "path");
      WriteJsonString(writer, file.path);
      WriteJsonKey(writer, "lines");
      writer.StartArray();
      for (const GrepLine* line : ShownLines(file)) {
        writer.StartObject();
        WriteJsonKey(writer, "line_number");
        writer.Uint64(line->line_number);
        WriteJsonKey(writer, "content");
        WriteJsonString(writer, line->content);
        WriteJsonKey(writer, "is_match");
        writer.Bool(line->is_match);
        if (line->is_match) {
          WriteJsonKey(writer, "matches");
          writer.StartArray();
          for (auto [start, end] : Matches(line->content)) {
            writer.StartObject();
            WriteJsonKey(writer, "start");
            writer.Uint64(start);
            WriteJsonKey(writer, "end");
            writer.Uint64(end);
            writer.EndObject();
          }
          writer.EndArray();
        }
        writer.EndObject();
      }
      writer.EndArray();
      writer.EndObject();
      buffer.Put('\n');
      return buffer.GetSize() >= kFlushBytes ? flush() : OkStatus();
    };
    TOOLVFS_ASSIGN_OR_RETURN(GrepResult result, store.Grep(pattern, options));
    JsonWriter summary(buffer);
    summary.StartObject();
    WriteJsonKey(summary, "truncated");
    summary.Bool(result.truncated);
    if (result.truncated) {
      WriteJsonKey(summary, "truncated_by");
      WriteJsonString(summary, GrepTruncationName(result.truncated_by));
    }
    summary.EndObject();
    buffer.Put('\n');
    TOOLVFS_RETURN_IF_ERROR(flush());
    return result;
  }

  Result<GrepResult> GrepToText(ProjectFiles& store, const std::string& pattern, GrepOptions& options,
                                uint64_t& files_found, SearchProgress& progress) const {
    bool color = color_ == "always" || (color_ == "auto" && ColorEnabled(STDOUT_FILENO));
    Palette palette = MakePalette(color);
    std::string out;
    out.reserve(kFlushBytes * 2);
    bool first_group = true;
    const bool with_context = after_context_ > 0 || before_context_ > 0;
    options.file_sink = [&](GrepFileMatches&& file) -> Status {
      ++files_found;
      if (files_with_matches_) {
        out += palette.path;
        out += file.path;
        out += palette.reset;
        out += '\n';
      } else if (count_) {
        uint64_t matching = 0;
        for (const GrepLine& line : file.lines) matching += line.is_match ? 1 : 0;
        out += palette.path;
        out += file.path;
        out += palette.reset;
        out += ':' + std::to_string(matching) + '\n';
      } else if (only_matching_) {
        for (const GrepLine& line : file.lines) {
          if (!line.is_match) continue;
          if (invert_match_) {
            AppendLine(out, palette, file.path, line, nullptr);
            continue;
          }
          for (auto [start, end] : Matches(line.content)) {
            GrepLine part{.line_number = line.line_number,
                          .content = line.content.substr(start, end - start),
                          .is_match = true};
            AppendLine(out, palette, file.path, part, color ? matcher_.get() : nullptr);
          }
        }
      } else {
        std::optional<uint64_t> previous_line;
        for (const GrepLine* line : ShownLines(file)) {
          bool starts_group = !previous_line || line->line_number != *previous_line + 1;
          if (starts_group) {
            // ripgrep prints "--" between non-adjacent groups only with context.
            if (with_context && !first_group) out += "--\n";
            first_group = false;
          }
          previous_line = line->line_number;
          AppendLine(out, palette, file.path, *line, color ? matcher_.get() : nullptr);
        }
      }
      if (progress.line.enabled()) {
        uint64_t matching = 0;
        for (const GrepLine& line : file.lines) matching += line.is_match ? 1 : 0;
        progress.matching_lines.fetch_add(matching, std::memory_order_relaxed);
        progress.Update();
      }
      if (out.size() >= kFlushBytes) {
        // Results on the same terminal as the progress line: never in it.
        Status written;
        progress.line.WhileCleared([&] { written = WriteFull(STDOUT_FILENO, out, "standard output"); });
        TOOLVFS_RETURN_IF_ERROR(written);
        out.clear();
      }
      return OkStatus();
    };
    TOOLVFS_ASSIGN_OR_RETURN(GrepResult result, store.Grep(pattern, options));
    progress.line.Clear();
    TOOLVFS_RETURN_IF_ERROR(WriteFull(STDOUT_FILENO, out, "standard output"));
    return result;
  }

  static void AppendLine(std::string& out, const Palette& palette, std::string_view path,
                         const GrepLine& line, const RE2* highlighter) {
    char separator = line.is_match ? ':' : '-';
    out += palette.path;
    out += path;
    out += palette.reset;
    out += separator;
    char digits[24];
    auto [end, error] = std::to_chars(digits, digits + sizeof digits, line.line_number);
    (void)error;  // cannot fail: 24 digits hold any uint64_t
    out += palette.line_number;
    out.append(digits, end);
    out += palette.reset;
    out += separator;
    if (highlighter != nullptr && line.is_match) {
      AppendHighlighted(out, palette, line.content, *highlighter);
    } else {
      out += line.content;
    }
    out += '\n';
  }

  static void AppendHighlighted(std::string& out, const Palette& palette, std::string_view content,
                                const RE2& highlighter) {
    size_t done = 0;
    size_t position = 0;
    re2::StringPiece match;
    while (position <= content.size() &&
           highlighter.Match(content, position, content.size(), RE2::UNANCHORED, &match, 1)) {
      size_t start = static_cast<size_t>(match.data() - content.data());
      size_t end = start + match.size();
      if (match.empty()) {
        position = end + 1;  // step over an empty match
        continue;
      }
      out.append(content.substr(done, start - done));
      out += palette.match;
      out.append(content.substr(start, end - start));
      out += palette.reset;
      done = end;
      position = end;
    }
    out.append(content.substr(done));
  }

  std::vector<std::string> positionals_;
  std::vector<std::string> patterns_;
  std::unique_ptr<RE2> matcher_;
  bool case_insensitive_ = false;
  bool fixed_strings_ = false;
  bool word_regexp_ = false;
  bool invert_match_ = false;
  uint32_t context_ = 0;
  std::optional<uint32_t> after_;
  std::optional<uint32_t> before_;
  uint32_t after_context_ = 0;
  uint32_t before_context_ = 0;
  bool files_with_matches_ = false;
  bool count_ = false;
  bool only_matching_ = false;
  bool list_files_ = false;
  std::vector<std::string> extensions_;
  std::vector<std::string> types_;
  std::vector<std::string> globs_;
  bool hidden_ = false;
  std::optional<uint64_t> max_matches_;
  bool include_ignored_ = false;
  std::string color_ = "auto";
  bool json_ = false;
};

}  // namespace

std::unique_ptr<Command> NewGrepCommand() { return std::make_unique<GrepCommand>(); }

}  // namespace toolvfs
