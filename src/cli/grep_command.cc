// `toolvfs grep`: ProjectFiles::Grep on the command line, printed like
// ripgrep (path:line:content, path-line-content for context, "--" between
// groups) or as the JSON object of the protocol's fs.grep.
#include <re2/re2.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <charconv>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/terminal.h"
#include "core/io.h"
#include "project/project_files.h"
#include "protocol/grep_json.h"
#include "protocol/json_writer.h"

namespace toolvfs {
namespace {

constexpr size_t kFlushBytes = 64 * 1024;

class GrepCommand final : public Command {
 public:
  void AddOptions(CLI::App& app) override {
    app.add_option("PATTERN", pattern_, "Regular expression, RE2 syntax (use -- before a pattern starting with -)")
        ->required();
    app.add_option("PATH", paths_, "Search only these files and directories of the project");
    app.add_flag("-i,--ignore-case", case_insensitive_, "Match case-insensitively");
    app.add_option("-C,--context", context_, "Show N lines before and after each match")
        ->type_name("N");
    app.add_option("--ext", extensions_, "Only files with this extension (repeatable, or comma-separated)")
        ->type_name("EXT")
        ->delimiter(',');
    app.add_option("--max-matches", max_matches_, "Stop after N matching lines (default: no limit)")
        ->type_name("N");
    app.add_flag("--include-ignored", include_ignored_, "Also search files ignored by .gitignore/.ignore");
    app.footer(
        "Output: path:line:content per matching line, path-line-content for context lines, "
        "\"--\" between groups (with -C); --json prints one object instead.\n"
        "Skips .git/, .toolvfs/, binary files and ignored files (unless --include-ignored).\n"
        "Exit codes: 0 matches found, 1 no match, 2 error.");
    app.add_flag("--json", json_, "Print one JSON object: {\"matches\":[...],\"truncated\":bool}");
  }

  int Run(const CommonOptions& common) override {
    if (max_matches_ && *max_matches_ == 0) {
      return ReportError("grep", "--max-matches must be at least 1 (see toolvfs grep --help)");
    }
    Result<std::unique_ptr<ProjectFiles>> store = OpenProject(common.project);
    if (!store.ok()) return ReportError("--project", store.status().message());

    GrepOptions options;
    options.paths = paths_;
    options.extensions = extensions_;
    options.context = context_;
    options.case_insensitive = case_insensitive_;
    options.max_matches = max_matches_.value_or(0);  // 0: no limit on the command line
    options.include_ignored = include_ignored_;
    // Each file is printed as soon as the search hands it over (in path
    // order), so memory stays bounded however large the output.
    uint64_t files_found = 0;
    Result<GrepResult> result = json_ ? GrepToJson(**store, options, files_found)
                                      : GrepToText(**store, options, files_found);
    if (!result.ok()) return ReportError("grep", result.status().message());
    if (result->truncated && !json_) {
      ReportNote("grep", "stopped after " + std::to_string(options.max_matches) +
                             " matching lines (--max-matches); there are more");
    }
    return files_found == 0 ? kExitNoResult : kExitOk;
  }

 private:
  Result<GrepResult> GrepToJson(ProjectFiles& store, GrepOptions& options, uint64_t& files_found) const {
    rapidjson::StringBuffer buffer(nullptr, kFlushBytes * 2);
    JsonWriter writer(buffer);
    GrepJsonStream stream(writer);
    auto flush = [&buffer]() -> Status {
      TOOLVFS_RETURN_IF_ERROR(
          WriteFull(STDOUT_FILENO, std::string_view(buffer.GetString(), buffer.GetSize()), "standard output"));
      buffer.Clear();
      return OkStatus();
    };
    options.file_sink = [&](GrepFileMatches&& file) -> Status {
      ++files_found;
      stream.WriteFile(file);
      return buffer.GetSize() >= kFlushBytes ? flush() : OkStatus();
    };
    TOOLVFS_ASSIGN_OR_RETURN(GrepResult result, store.Grep(pattern_, options));
    stream.Finish(result);
    buffer.Put('\n');
    TOOLVFS_RETURN_IF_ERROR(flush());
    return result;
  }

  Result<GrepResult> GrepToText(ProjectFiles& store, GrepOptions& options, uint64_t& files_found) const {
    bool color = ColorEnabled(STDOUT_FILENO);
    Palette palette = MakePalette(color);
    // Highlighting only: the search itself happens in the store.
    std::unique_ptr<RE2> highlighter;
    if (color) {
      RE2::Options re_options;
      re_options.set_case_sensitive(!case_insensitive_);
      re_options.set_log_errors(false);
      highlighter = std::make_unique<RE2>(pattern_, re_options);
      if (!highlighter->ok()) highlighter.reset();
    }

    std::string out;
    out.reserve(kFlushBytes * 2);
    bool first_group = true;
    options.file_sink = [&](GrepFileMatches&& file) -> Status {
      ++files_found;
      std::optional<uint64_t> previous_line;
      for (const GrepLine& line : file.lines) {
        bool starts_group = !previous_line || line.line_number != *previous_line + 1;
        if (starts_group) {
          // ripgrep prints "--" between non-adjacent groups only with context.
          if (context_ > 0 && !first_group) out += "--\n";
          first_group = false;
        }
        previous_line = line.line_number;
        AppendLine(out, palette, file.path, line, highlighter.get());
        if (out.size() >= kFlushBytes) {
          TOOLVFS_RETURN_IF_ERROR(WriteFull(STDOUT_FILENO, out, "standard output"));
          out.clear();
        }
      }
      return OkStatus();
    };
    TOOLVFS_ASSIGN_OR_RETURN(GrepResult result, store.Grep(pattern_, options));
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

  std::string pattern_;
  std::vector<std::string> paths_;
  bool case_insensitive_ = false;
  uint32_t context_ = 0;
  std::vector<std::string> extensions_;
  std::optional<uint64_t> max_matches_;
  bool include_ignored_ = false;
  bool json_ = false;
};

}  // namespace

std::unique_ptr<Command> NewGrepCommand() { return std::make_unique<GrepCommand>(); }

}  // namespace toolvfs
