// Tests of the grep engine (project/grep.h) against an in-memory tree, and
// of its results against a plain line-by-line reference scan.
#include "project/grep.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <re2/re2.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/text.h"
#include "project/fs_store.h"
#include "project/grep_literals.h"
#include "project/grep_matcher.h"
#include "project/grep_pattern.h"
#include "project/path.h"
#include "project/test_util.h"

namespace toolvfs {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// A GrepFileReader over a string that hands out `sizes` bytes per read in
// turn (fewer at the end), and counts the bytes it handed out.
class ChunkedReader final : public GrepFileReader {
 public:
  ChunkedReader(std::string_view content, std::vector<size_t> sizes,
                std::atomic<size_t>& bytes_read)
      : content_(content), sizes_(std::move(sizes)), bytes_read_(bytes_read) {}

  Result<size_t> Read(char* data, size_t size) override {
    size_t count = std::min({size, sizes_[next_++ % sizes_.size()], content_.size() - offset_});
    std::memcpy(data, content_.data() + offset_, count);
    offset_ += count;
    bytes_read_ += count;
    return count;
  }

 private:
  std::string_view content_;
  std::vector<size_t> sizes_;
  size_t next_ = 0;
  size_t offset_ = 0;
  std::atomic<size_t>& bytes_read_;
};

// A GrepTree over a map: files, directories (implied by the paths below
// them) and symlinks holding a project path as target. Hands out the
// content of files as it is or, after SetReadSizes, through a reader.
// Faults can be injected per path.
class FakeTree : public GrepTree {
 public:
  // Files are read through a ChunkedReader handing out `sizes` bytes in turn.
  void SetReadSizes(std::vector<size_t> sizes) { read_sizes_ = std::move(sizes); }
  void AddFile(const std::string& path, std::string content) {
    AddParents(path);
    nodes_[path] = Node{EntryKind::kFile, std::move(content)};
  }
  void AddSymlink(const std::string& path, std::string target) {
    AddParents(path);
    nodes_[path] = Node{EntryKind::kSymlink, std::move(target)};
  }
  // List() of this directory fails.
  void MakeUnlistable(const std::string& path) { unlistable_.insert(path); }
  // ReadFile() of this file fails, as if it had vanished.
  void MakeUnreadable(const std::string& path) { unreadable_.insert(path); }

  std::set<std::string> ReadPaths() const {
    std::lock_guard lock(mutex_);
    return read_paths_;
  }

  // Bytes that readers handed out for `path` (after SetReadSizes).
  size_t BytesRead(const std::string& path) const {
    std::lock_guard lock(mutex_);
    auto bytes = bytes_read_.find(path);
    return bytes == bytes_read_.end() ? 0 : bytes->second.load();
  }

  Result<std::vector<Entry>> List(std::string_view path) override {
    TOOLVFS_ASSIGN_OR_RETURN(std::string real, ResolveAll(path));
    if (unlistable_.count(std::string(path)) != 0) {
      return PermissionDeniedError("Cannot list " + DisplayPath(path));
    }
    const Node& node = nodes_.at(real);
    if (node.kind != EntryKind::kDirectory) return NotDirectoryError(DisplayPath(path));
    std::vector<Entry> entries;
    for (const auto& [child, child_node] : nodes_) {
      if (!child.empty() && child != real && std::string(ParentPath(child)) == real) {
        entries.push_back({std::string(BaseName(child)), child_node.kind});
      }
    }
    // Any order is allowed: hand them out reversed to make sure.
    std::reverse(entries.begin(), entries.end());
    return entries;
  }

  Result<EntryKind> Resolve(std::string_view path) override {
    TOOLVFS_ASSIGN_OR_RETURN(std::string real, ResolveAll(path));
    return nodes_.at(real).kind;
  }

  Result<File> OpenFile(std::string_view path, bool follow_symlinks) override {
    std::atomic<size_t>* bytes_read;
    {
      std::lock_guard lock(mutex_);
      read_paths_.insert(std::string(path));
      bytes_read = &bytes_read_[std::string(path)];  // std::map: stays put
    }
    if (unreadable_.count(std::string(path)) != 0) {
      return NotFoundError(DisplayPath(path) + " vanished");
    }
    // Directories above the file are always followed; the file itself
    // only when asked.
    TOOLVFS_ASSIGN_OR_RETURN(std::string parent, ResolveAll(ParentPath(path)));
    std::string own = JoinPath(parent, BaseName(path));
    auto node = nodes_.find(own);
    if (node == nodes_.end()) return NotFoundError(DisplayPath(path) + " does not exist");
    if (node->second.kind == EntryKind::kSymlink) {
      if (!follow_symlinks) return PermissionDeniedError(DisplayPath(path) + " is a symlink");
      TOOLVFS_ASSIGN_OR_RETURN(own, ResolveAll(own));
      node = nodes_.find(own);
    }
    if (node->second.kind != EntryKind::kFile) return IsDirectoryError(DisplayPath(path));
    if (read_sizes_.empty()) return File{nullptr, node->second.content};
    return File{std::make_unique<ChunkedReader>(node->second.content, read_sizes_, *bytes_read),
                {}};
  }

 private:
  struct Node {
    EntryKind kind;
    std::string content;  // a file's content or a symlink's target
  };

  void AddParents(const std::string& path) {
    for (std::string_view parent = ParentPath(path); !parent.empty(); parent = ParentPath(parent)) {
      nodes_.try_emplace(std::string(parent), Node{EntryKind::kDirectory, {}});
    }
  }

  // `path` with every symlink in it followed.
  Result<std::string> ResolveAll(std::string_view path, int depth = 0) const {
    if (depth > 8) return PermissionDeniedError("Too many symlinks at " + DisplayPath(path));
    std::string real;
    for (std::string_view segment : PathSegments(path)) {
      real = JoinPath(real, segment);
      auto node = nodes_.find(real);
      if (node == nodes_.end()) {
        return NotFoundError("No such file or directory: " + DisplayPath(path));
      }
      if (node->second.kind == EntryKind::kSymlink) {
        TOOLVFS_ASSIGN_OR_RETURN(real, ResolveAll(node->second.content, depth + 1));
      }
    }
    return real;
  }

  std::map<std::string, Node> nodes_{{"", Node{EntryKind::kDirectory, {}}}};
  std::set<std::string> unlistable_;
  std::set<std::string> unreadable_;
  std::vector<size_t> read_sizes_;  // empty: hand out the content as it is
  mutable std::mutex mutex_;
  std::set<std::string> read_paths_;
  std::map<std::string, std::atomic<size_t>> bytes_read_;
};

GrepOptions AllMatches() {
  GrepOptions options;
  options.max_matches = 0;
  return options;
}

GrepResult MustGrep(GrepTree& tree, std::string_view pattern, const GrepOptions& options) {
  Result<GrepResult> result = RunGrep(tree, pattern, options);
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  return result.ok() ? *std::move(result) : GrepResult{};
}

std::vector<std::string> MatchedPaths(const GrepResult& result) {
  std::vector<std::string> paths;
  for (const GrepFileMatches& file : result.matches) paths.push_back(file.path);
  return paths;
}

std::string Describe(const GrepResult& result) {
  std::ostringstream out;
  for (const GrepFileMatches& file : result.matches) {
    for (const GrepLine& line : file.lines) {
      out << file.path << (line.is_match ? ':' : '-') << line.line_number << ':'
          << EscapeForDisplay(line.content) << '\n';
    }
  }
  if (result.truncated) out << "(truncated)\n";
  return out.str();
}

// The specification in its plainest form: split every file into lines and
// ask RE2 about each line alone (\d \s \w in their Unicode meaning); then
// cut at max_matches in path order.
GrepResult ReferenceGrep(const std::map<std::string, std::string>& files, std::string_view pattern,
                         const GrepOptions& options) {
  RE2::Options regex_options;
  regex_options.set_case_sensitive(!options.case_insensitive);
  regex_options.set_max_mem(64 << 20);
  RE2 regex(UnicodePerlClasses(pattern), regex_options);
  EXPECT_TRUE(regex.ok()) << pattern;
  GrepResult result;
  uint64_t budget = options.max_matches == 0 ? UINT64_MAX : options.max_matches;
  for (const auto& [path, content] : files) {  // a std::map iterates in byte order
    bool skipped = false;
    for (std::string_view segment : PathSegments(path)) {
      if (segment == ".git" || segment == ".toolvfs") skipped = true;
    }
    if (skipped || content.substr(0, 8192).find('\0') != std::string::npos) continue;
    std::vector<std::string_view> lines;
    std::string_view rest = content;
    while (!rest.empty()) {
      size_t newline = rest.find('\n');
      lines.push_back(rest.substr(0, newline));
      rest.remove_prefix(newline == std::string_view::npos ? rest.size() : newline + 1);
    }
    std::vector<size_t> kept_matches;
    for (size_t index = 0; index < lines.size(); ++index) {
      if (!RE2::PartialMatch(re2::StringPiece(lines[index].data(), lines[index].size()), regex)) {
        continue;
      }
      if (budget == 0) {
        result.truncated = true;
        result.truncated_by = GrepTruncation::kMaxMatches;
        break;
      }
      --budget;
      kept_matches.push_back(index);
    }
    if (kept_matches.empty()) {
      if (result.truncated) break;
      continue;
    }
    std::vector<bool> shown(lines.size(), false);
    for (size_t match : kept_matches) {
      size_t first = match >= options.context ? match - options.context : 0;
      size_t last = std::min(lines.size() - 1, match + options.context);
      for (size_t index = first; index <= last; ++index) shown[index] = true;
    }
    GrepFileMatches file{path, {}};
    for (size_t index = 0; index < lines.size(); ++index) {
      if (!shown[index]) continue;
      bool is_match =
          std::find(kept_matches.begin(), kept_matches.end(), index) != kept_matches.end();
      file.lines.push_back({index + 1, ToValidUtf8(lines[index]), is_match});
    }
    result.matches.push_back(std::move(file));
    if (result.truncated) break;
  }
  return result;
}

// Random files: words that the patterns look for, in random case, with
// spaces and tabs, CRLF endings, invalid UTF-8, characters that Unicode
// case folding reaches from ASCII (U+212A KELVIN SIGN, U+017F LONG S,
// U+0130), long lines, empty lines, files without a final newline.
std::map<std::string, std::string> RandomFiles(uint32_t seed, int count) {
  std::mt19937 random(seed);
  auto pick = [&random](int bound) {
    return static_cast<int>(random() % static_cast<uint32_t>(bound));
  };
  // clang-format off
  const std::vector<std::string> words = {
      "foo", "Foo", "FOO", "bar", "baz", "foobar", "fooXbar", "foo.bar", "x", "xx", "kelvin",
      "\u212Aelvin", "ask", "a\u017Fk", "stra\u00DFe", "\u00E9t\u00E9", "\u0130stanbul",
      "istanbul", "\xFF", "\xC3", "tab\there", "(x)", "a|b", "end", "$", "return", "RETURN",
      "struct", "PM_RESUME", "pm_resume", "\\n", "", " ", "  ", "\t", "\U0001F600", "abc123",
      "_RESUME", "ERR_SYS", "CFG_BME_EVT"};
  // clang-format on
  const std::vector<std::string> directories = {
      "", "src", "src/lib", "docs", "a", "a/b", "a/b/c", "tests", ".hidden", "deep/er/still/more"};
  std::map<std::string, std::string> files;
  for (int index = 0; index < count; ++index) {
    std::string path =
        JoinPath(directories[static_cast<size_t>(pick(static_cast<int>(directories.size())))],
                 "file" + std::to_string(index) + (pick(3) == 0 ? ".rs" : ".txt"));
    std::string content;
    bool crlf = pick(5) == 0;
    int line_count = pick(6) == 0 ? 0 : pick(40);
    for (int line = 0; line < line_count; ++line) {
      int word_count = pick(40) == 0 ? 1500 : pick(8);  // sometimes a long line
      for (int word = 0; word < word_count; ++word) {
        if (word > 0 && pick(3) != 0) content += ' ';
        content += words[static_cast<size_t>(pick(static_cast<int>(words.size())))];
      }
      if (line + 1 < line_count || pick(3) != 0) content += crlf ? "\r\n" : "\n";
    }
    if (pick(25) == 0) content.insert(content.size() / 2, 1, '\0');  // binary, mostly
    files[path] = std::move(content);
  }
  files["empty.txt"] = "";
  files["only_newline.txt"] = "\n";
  files["no_final_newline.txt"] = "foo\nbar";
  files["late_nul.txt"] = std::string(9000, 'x') + '\0' + "\nfoo bar\n";
  return files;
}

const std::vector<std::string>& ReferencePatterns() {
  // clang-format off
  static const std::vector<std::string> patterns = {
      // literals
      "foo", "Foo", "foo.bar", "foo\\.bar", "\\(x\\)", "a\\|b", "PM_RESUME", "ask", "stra\u00DFe",
      "\u00E9t\u00E9", "\U0001F600", "tab\there", "kelvin", "zzz_never_present",
      // alternations
      "foo|bar", "ERR_SYS|CFG_BME_EVT|PM_RESUME", "kelvin|istanbul", "return|struct|baz",
      // anchors
      "^foo", "bar$", "^$", "^", "$", "^foo bar$", "e$", "\\bfoo\\b", "\\Bar",
      // classes
      "\\s+bar", "[^x]foo", "foo\\s", "\\S+$", "[[:upper:]]{3}", "\\d+", "\\w+_RESUME", "[a-c]{3}",
      "x\\s*x", "\\W", "[^a-z ]", ".", "^.{30,}$",
      // newlines can never be inside a line
      "foo\\nbar", "foo\n", "\\n", "a|\\n", "[\\n]", "foo\\n?",
      // empty matches
      "x*", "", "(?:)", "\\b",
      // Unicode and case folding
      "\u017F", "(?i)s", "(?i)k", "(?i)ask", "(?i)kelvin", "\\x{212A}", "\u0130", "(?i)\u0130",
      "\\b\u0130stanbul", "\\x{130}stanbul", "\\x{212A}elvin\\b", "[\u212A]elvin", "\\pL+",
      "\\p{Greek}", "(?i)STRASSE", "(?i)stra\u00DFe", "(?i)\u00C9T\u00C9", "\\x{FFFD}",
      // constructs that only a line alone answers exactly
      "\\Afoo", "bar\\z", "\\A\\z", "\\A", "foo\\Cbar", "\\C", "(?-m)^foo", "(?m)bar$",
      "(?s)foo.bar", "\\Qfoo.bar\\E", "(?U)f.*o", "\\r$", "foo\\r", "\r",
  };
  // clang-format on
  return patterns;
}

void ExpectSameAsReference(FakeTree& tree, const std::map<std::string, std::string>& files,
                           const std::string& pattern, const GrepOptions& options) {
  GrepResult expected = ReferenceGrep(files, pattern, options);
  GrepResult actual = MustGrep(tree, pattern, options);
  EXPECT_EQ(actual, expected) << "pattern " << Quote(pattern) << " case_insensitive "
                              << options.case_insensitive << " context " << options.context
                              << " max_matches " << options.max_matches << "\nexpected:\n"
                              << Describe(expected) << "actual:\n"
                              << Describe(actual);
}

// Compares RunGrep with ReferenceGrep over RandomFiles, the tree handing
// out files through reads of `read_sizes` bytes (empty: whole).
void ExpectRandomTreeMatchesReference(const std::vector<size_t>& read_sizes) {
  std::map<std::string, std::string> files = RandomFiles(/*seed=*/20240601, /*count=*/300);
  FakeTree tree;
  tree.SetReadSizes(read_sizes);
  for (const auto& [path, content] : files) tree.AddFile(path, content);
  for (const std::string& pattern : ReferencePatterns()) {
    for (bool case_insensitive : {false, true}) {
      GrepOptions options = AllMatches();
      options.case_insensitive = case_insensitive;
      ExpectSameAsReference(tree, files, pattern, options);
    }
    GrepOptions with_context = AllMatches();
    with_context.context = 2;
    with_context.max_matches = 37;
    ExpectSameAsReference(tree, files, pattern, with_context);
  }
}

TEST(GrepReferenceTest, RandomTreeMatchesLineByLineScan) { ExpectRandomTreeMatchesReference({}); }

TEST(GrepReferenceTest, RandomTreeReadInSmallChunksMatchesLineByLineScan) {
  // Chunk boundaries everywhere: inside lines, between '\r' and '\n',
  // inside UTF-8 sequences and around the binary probe.
  ExpectRandomTreeMatchesReference({1, 7, 4096, 3, 1, 13, 2});
}

TEST(GrepReferenceTest, ExampleProjectMatchesLineByLineScan) {
  // The example project, when it is there, is a tree of real source files.
  const char* source_directory = std::getenv("TOOLVFS_SOURCE_DIR");
  std::filesystem::path root =
      source_directory != nullptr
          ? std::filesystem::path(source_directory)
          : std::filesystem::path(__FILE__).parent_path().parent_path().parent_path();
  root /= "examples/project";
  std::map<std::string, std::string> files;
  std::error_code error;
  for (auto entry = std::filesystem::recursive_directory_iterator(root, error);
       !error && entry != std::filesystem::recursive_directory_iterator(); entry.increment(error)) {
    if (!entry->is_regular_file() || entry->is_symlink()) continue;
    std::ifstream in(entry->path(), std::ios::binary);
    std::ostringstream content;
    content << in.rdbuf();
    files[std::filesystem::relative(entry->path(), root).generic_string()] = content.str();
  }
  FakeTree tree;
  for (const auto& [path, content] : files) tree.AddFile(path, content);
  FakeTree chunked_tree;
  chunked_tree.SetReadSizes({100, 4096, 1});
  for (const auto& [path, content] : files) chunked_tree.AddFile(path, content);
  for (std::string pattern :
       {"fn|struct|impl", "TODO", "(?i)error", "^\\s*$", "\\w+\\(", "import", "return\\s+\\w+"}) {
    for (bool case_insensitive : {false, true}) {
      GrepOptions options = AllMatches();
      options.case_insensitive = case_insensitive;
      options.include_ignored = true;  // the reference knows no ignore files
      options.context = case_insensitive ? 1 : 0;
      ExpectSameAsReference(tree, files, pattern, options);
      options.context = case_insensitive ? 3 : 0;
      ExpectSameAsReference(chunked_tree, files, pattern, options);
    }
  }
}

// ----- Files read in chunks -------------------------------------------------

std::string NumberedLines(int count, const std::set<int>& foo_lines) {
  std::string content;
  for (int line = 1; line <= count; ++line) {
    content += (foo_lines.count(line) != 0 ? "foo " : "line ") + std::to_string(line) + "\n";
  }
  return content;
}

std::string DescribeSizes(const std::vector<size_t>& sizes) {
  if (sizes.empty()) return "whole";
  std::string text = "reads of";
  for (size_t size : sizes) text += " " + std::to_string(size);
  return text;
}

// Read-size cycles: every size from 1 to `max`, then a few mixes.
std::vector<std::vector<size_t>> ReadSizesUpTo(size_t max) {
  std::vector<std::vector<size_t>> cycles;
  for (size_t size = 1; size <= max; ++size) cycles.push_back({size});
  cycles.push_back({1, 7, 4096});
  cycles.push_back({2, 1, 5});
  cycles.push_back({65536});
  return cycles;
}

// Greps `files` handed out whole, then through reads of each of `cycles`;
// every result must equal the whole read's, which must equal
// ReferenceGrep's. Returns that result.
GrepResult GrepInChunks(const std::map<std::string, std::string>& files, std::string_view pattern,
                        const GrepOptions& options,
                        const std::vector<std::vector<size_t>>& cycles) {
  GrepResult expected = ReferenceGrep(files, pattern, options);
  std::vector<std::vector<size_t>> all = {{}};
  all.insert(all.end(), cycles.begin(), cycles.end());
  for (const std::vector<size_t>& sizes : all) {
    FakeTree tree;
    tree.SetReadSizes(sizes);
    for (const auto& [path, content] : files) tree.AddFile(path, content);
    GrepResult actual = MustGrep(tree, pattern, options);
    EXPECT_EQ(actual, expected) << "pattern " << Quote(pattern) << ", " << DescribeSizes(sizes)
                                << ", context " << options.context << ", max_matches "
                                << options.max_matches << "\nexpected:\n"
                                << Describe(expected) << "actual:\n"
                                << Describe(actual);
  }
  return expected;
}

TEST(GrepChunkTest, MatchingLineSplitAcrossReads) {
  const std::map<std::string, std::string> files = {{"f", "one\ntwo foo bar\nthree foo\nfour"}};
  const auto cycles = ReadSizesUpTo(files.at("f").size() + 1);
  EXPECT_THAT(GrepInChunks(files, "foo", AllMatches(), cycles).matches[0].lines,
              ElementsAre(GrepLine{2, "two foo bar", true}, GrepLine{3, "three foo", true}));
  EXPECT_THAT(GrepInChunks(files, "o b|^thr", AllMatches(), cycles).matches[0].lines,
              ElementsAre(GrepLine{2, "two foo bar", true}, GrepLine{3, "three foo", true}));
  EXPECT_THAT(GrepInChunks(files, "(?i)FOUR$", AllMatches(), cycles).matches[0].lines,
              ElementsAre(GrepLine{4, "four", true}));
  for (std::string pattern : {"\\bfoo\\b", "^", "x*", "r$", "\\Aone", "^t.*o$"}) {
    GrepInChunks(files, pattern, AllMatches(), cycles);
  }
}

TEST(GrepChunkTest, ContextSpansReads) {
  const std::map<std::string, std::string> files = {{"f", NumberedLines(30, {5, 8, 16, 29})}};
  const auto cycles = ReadSizesUpTo(40);
  GrepOptions options = AllMatches();
  options.context = 2;
  GrepResult result = GrepInChunks(files, "foo", options, cycles);
  ASSERT_EQ(result.matches.size(), 1u);
  std::vector<uint64_t> numbers;
  for (const GrepLine& line : result.matches[0].lines) numbers.push_back(line.line_number);
  EXPECT_EQ(numbers, (std::vector<uint64_t>{3, 4, 5, 6, 7, 8, 9, 10, 14, 15, 16, 17, 18, 27, 28,
                                            29, 30}));
  for (uint32_t context : {1u, 3u, 7u, 100u}) {
    options.context = context;
    GrepInChunks(files, "foo", options, cycles);
    GrepInChunks(files, "foo 16|line 1$", options, cycles);
  }
}

TEST(GrepChunkTest, LineLongerThanTheWindow) {
  // Longer than the engine's window and than the reads: the window grows.
  const std::string long_line = std::string(200000, 'x') + "foo" + std::string(100000, 'y');
  const std::map<std::string, std::string> files = {
      {"f", "a\n" + long_line + "\nb\nfoo\n" + long_line}};
  const std::vector<std::vector<size_t>> cycles = {
      {65536}, {65535}, {100000}, {4096}, {1000, 1, 70000}, {1 << 20}};
  GrepOptions options = AllMatches();
  options.context = 1;
  GrepResult result = GrepInChunks(files, "foo", options, cycles);
  ASSERT_EQ(result.matches.size(), 1u);
  ASSERT_EQ(result.matches[0].lines.size(), 5u);
  EXPECT_EQ(result.matches[0].lines[1], (GrepLine{2, long_line, true}));
  EXPECT_EQ(result.matches[0].lines[4], (GrepLine{5, long_line, true}));
  GrepInChunks(files, "^b$|xfooy", options, cycles);
  GrepInChunks(files, "y$", AllMatches(), cycles);
}

TEST(GrepChunkTest, CrlfLineEndings) {
  const std::map<std::string, std::string> files = {{"f", "a\r\nfoo\r\n\r\nb foo\r\nc"}};
  const auto cycles = ReadSizesUpTo(files.at("f").size() + 1);
  EXPECT_THAT(GrepInChunks(files, "foo", AllMatches(), cycles).matches[0].lines,
              ElementsAre(GrepLine{2, "foo\r", true}, GrepLine{4, "b foo\r", true}));
  EXPECT_THAT(GrepInChunks(files, "^\\r$", AllMatches(), cycles).matches[0].lines,
              ElementsAre(GrepLine{3, "\r", true}));
  GrepOptions options = AllMatches();
  options.context = 1;
  GrepInChunks(files, "\\r$|c", options, cycles);
  GrepInChunks(files, "foo\\r", options, cycles);
}

TEST(GrepChunkTest, LastLineWithoutNewline) {
  const std::map<std::string, std::string> files = {{"f", "foo\nbar\n\nfoo bar"},
                                                    {"g", "bar"},
                                                    {"h", "x\n"}};
  const auto cycles = ReadSizesUpTo(20);
  GrepResult result = GrepInChunks(files, "bar$", AllMatches(), cycles);
  EXPECT_THAT(MatchedPaths(result), ElementsAre("f", "g"));
  EXPECT_THAT(result.matches[0].lines,
              ElementsAre(GrepLine{2, "bar", true}, GrepLine{4, "foo bar", true}));
  GrepOptions options = AllMatches();
  options.context = 1;
  GrepInChunks(files, "^$", options, cycles);
  GrepInChunks(files, "", options, cycles);
  GrepInChunks(files, "x|foo b", options, cycles);
}

TEST(GrepChunkTest, MaxMatchesCutInALaterRead) {
  std::set<int> foo_lines;
  for (int line = 1000; line <= 10000; line += 10) foo_lines.insert(line);
  const std::string content = NumberedLines(10000, foo_lines);  // about 100 KB
  const std::map<std::string, std::string> files = {{"f", content}};
  GrepOptions options;
  options.max_matches = 5;
  options.context = 2;
  const std::vector<std::vector<size_t>> cycles = {{7}, {4096}, {1, 7, 4096}, {65536}};
  GrepResult result = GrepInChunks(files, "foo", options, cycles);
  EXPECT_TRUE(result.truncated);
  ASSERT_EQ(result.matches.size(), 1u);
  const std::vector<GrepLine>& lines = result.matches[0].lines;
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines.front(), (GrepLine{998, "line 998", false}));
  EXPECT_EQ(lines.back(), (GrepLine{1042, "line 1042", false}));
  // The sixth match, just beyond the after-context, tells the result is
  // truncated; reading stops soon after it.
  options.context = 10;
  result = GrepInChunks(files, "foo", options, cycles);
  EXPECT_EQ(result.matches[0].lines.back(), (GrepLine{1050, "foo 1050", false}));
  // The after-context goes on beyond the sixth match, into later reads.
  options.context = 15;
  result = GrepInChunks(files, "foo", options, cycles);
  EXPECT_EQ(result.matches[0].lines.back(), (GrepLine{1055, "line 1055", false}));
  FakeTree tree;
  tree.SetReadSizes({4096});
  tree.AddFile("f", content);
  MustGrep(tree, "foo", options);
  EXPECT_LT(tree.BytesRead("f"), 12000u + 4096u);
}

TEST(GrepChunkTest, NulAtTheEndOfTheBinaryProbe) {
  const std::string head = "foo at the start\nfoo again\n" + std::string(8000, 'x') + "\n";
  const std::string at_8191 = head + std::string(8191 - head.size(), 'y') + '\0' + "\nfoo\n";
  const std::string at_8192 = head + std::string(8192 - head.size(), 'y') + '\0' + "\nfoo\n";
  ASSERT_EQ(at_8191.find('\0'), 8191u);
  ASSERT_EQ(at_8192.find('\0'), 8192u);
  const std::map<std::string, std::string> files = {{"at_8191", at_8191},
                                                    {"at_8192", at_8192}};
  const std::vector<std::vector<size_t>> cycles = {{1},    {7},    {4096}, {8191}, {8192},
                                                   {8193}, {9000}, {1, 7, 4096}};
  EXPECT_THAT(MatchedPaths(GrepInChunks(files, "foo", AllMatches(), cycles)),
              ElementsAre("at_8192"));
  // Even when max_matches stops the search before the NUL is read.
  GrepOptions options;
  options.max_matches = 1;
  GrepResult result = GrepInChunks(files, "foo", options, cycles);
  EXPECT_THAT(MatchedPaths(result), ElementsAre("at_8192"));
  EXPECT_TRUE(result.truncated);
}

TEST(GrepChunkTest, StopsReadingABinaryFileAtItsNul) {
  FakeTree tree;
  tree.AddFile("binary", "foo\n" + std::string(6, 'x') + '\0' + std::string(1 << 20, 'x'));
  tree.SetReadSizes({4096});
  EXPECT_TRUE(MustGrep(tree, "foo", GrepOptions()).matches.empty());
  EXPECT_EQ(tree.BytesRead("binary"), 4096u);

  FakeTree byte_tree;
  byte_tree.AddFile("binary", "foo\n" + std::string(6, 'x') + '\0' + std::string(1 << 20, 'x'));
  byte_tree.SetReadSizes({1});
  EXPECT_TRUE(MustGrep(byte_tree, "foo", GrepOptions()).matches.empty());
  EXPECT_EQ(byte_tree.BytesRead("binary"), 11u);
}

TEST(GrepChunkTest, IgnoreFilesReadInChunks) {
  FakeTree tree;
  tree.SetReadSizes({1, 3});
  tree.AddFile(".gitignore", "*.log\nbuild/\n!keep.log");
  tree.AddFile("a.log", "foo\n");
  tree.AddFile("keep.log", "foo\n");
  tree.AddFile("build/b.txt", "foo\n");
  tree.AddFile("sub/.ignore", "c.txt\n");
  tree.AddFile("sub/c.txt", "foo\n");
  tree.AddFile("sub/d.txt", "foo\n");
  EXPECT_THAT(MatchedPaths(MustGrep(tree, "foo", GrepOptions())),
              ElementsAre("keep.log", "sub/d.txt"));
  GrepOptions named;
  named.paths = {"sub"};
  EXPECT_THAT(MatchedPaths(MustGrep(tree, "foo", named)), ElementsAre("sub/d.txt"));
}

TEST(GrepChunkTest, FsStoreReadsLargeFilesInChunks) {
  // The fs store hands out real reads: files around and beyond the engine's
  // read size, compared with the reference scan.
  std::string lines_64k;  // 4096 lines of 16 bytes
  for (int line = 0; line < 4096; ++line) {
    char text[17];
    std::snprintf(text, sizeof text, "%s line %06d\n", line % 97 == 0 ? "foo" : "bar", line);
    lines_64k += text;
  }
  ASSERT_EQ(lines_64k.size(), 65536u);
  std::string crlf;
  for (int line = 0; line < 30000; ++line) {
    crlf += (line % 1000 == 999 ? "foo " : "crlf ") + std::to_string(line) + "\r\n";
  }
  const std::string long_line = std::string(70000, 'x') + "foo" + std::string(70000, 'x');
  std::map<std::string, std::string> files = {
      {"exact_64k", lines_64k},
      {"over_64k", lines_64k + "foo tail"},
      {"under_64k", lines_64k.substr(0, 65535)},
      {"long_line", "a\n" + long_line + "\nfoo\n" + long_line},
      {"crlf", crlf},
      {"big", lines_64k + lines_64k + crlf + lines_64k},
      {"nul_8191", std::string(8191, 'x') + '\0' + "\nfoo\n"},
      {"nul_8192", std::string(8192, 'x') + '\0' + "\nfoo\n"},
  };
  TempDir root;
  for (const auto& [path, content] : files) WriteRealFile(root.Join(path), content);
  Result<std::unique_ptr<ProjectFiles>> store = OpenFsStore(root.path());
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  for (std::string pattern : {"foo", "foo tail$", "^x+foo", "(?i)FOO line 0[0-9]+\\r?$", "9\\r$"}) {
    for (uint32_t context : {0u, 2u}) {
      GrepOptions options = AllMatches();
      options.context = context;
      for (uint64_t max_matches : {0u, 500u}) {
        options.max_matches = max_matches;
        GrepResult expected = ReferenceGrep(files, pattern, options);
        Result<GrepResult> actual = (*store)->Grep(pattern, options);
        ASSERT_TRUE(actual.ok()) << actual.status().ToString();
        EXPECT_EQ(*actual, expected) << "pattern " << Quote(pattern) << " context " << context
                                     << " max_matches " << max_matches;
      }
    }
  }
}

TEST(GrepLiteralsTest, CountNewlinesAtEveryLengthAndAlignment) {
  std::mt19937 random(11);
  std::string bytes(4096, '\0');
  for (char& byte : bytes) byte = random() % 3 == 0 ? '\n' : static_cast<char>(random());
  for (size_t start = 0; start < 40; ++start) {
    for (size_t length = 0; start + length <= 1200; ++length) {
      std::string_view text = std::string_view(bytes).substr(start, length);
      auto expected = static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
      ASSERT_EQ(CountNewlines(text), expected) << "start " << start << " length " << length;
    }
  }
  // Per-lane byte counters must not overflow: 255 blocks and more of '\n'.
  for (size_t length : {255u * 16, 255u * 32, 255u * 32 * 3 + 17, 100000u}) {
    EXPECT_EQ(CountNewlines(std::string(length, '\n')), length);
  }
}

TEST(GrepMatcherTest, PicksTheExpectedStrategy) {
  using Strategy = LineMatcher::Strategy;
  auto strategy = [](std::string_view pattern, bool case_insensitive) {
    Result<std::unique_ptr<LineMatcher>> matcher = LineMatcher::Create(pattern, case_insensitive);
    EXPECT_TRUE(matcher.ok()) << pattern;
    return matcher.ok() ? (*matcher)->strategy() : Strategy::kEachLine;
  };
  EXPECT_EQ(strategy("PM_RESUME", false), Strategy::kLiteral);
  EXPECT_EQ(strategy("foo\\.bar", false), Strategy::kLiteral);
  EXPECT_EQ(strategy("PM_RE", true), Strategy::kLiteral);
  EXPECT_EQ(strategy("ERR_SYS|PME_TURN_OFF|LINK_REQ_RST", false), Strategy::kPrefilter);
  EXPECT_EQ(strategy("PM_RESUME", true), Strategy::kPrefilter);  // 's' also matches U+017F
  EXPECT_EQ(strategy("\\w+_RESUME", false), Strategy::kPrefilter);
  EXPECT_EQ(strategy("ask", true), Strategy::kWholeBuffer);
  EXPECT_EQ(strategy("^$", false), Strategy::kWholeBuffer);
  EXPECT_EQ(strategy("x*", false), Strategy::kWholeBuffer);
  EXPECT_EQ(strategy("a\\Cb", false), Strategy::kWholeBufferThenLine);
  EXPECT_EQ(strategy("\\A\\w", false), Strategy::kEachLine);
  EXPECT_EQ(strategy("(?-m)^a", false), Strategy::kEachLine);
}

TEST(GrepTest, FindsMatchesWithLineNumbers) {
  FakeTree tree;
  tree.AddFile("b.txt", "one\ntwo foo\nthree\nfoo four");
  tree.AddFile("a/c.txt", "foo\n");
  tree.AddFile("a.txt", "nothing\n");
  tree.AddFile("a-b.txt", "foo\r\n");
  GrepResult result = MustGrep(tree, "foo", GrepOptions());
  EXPECT_FALSE(result.truncated);
  // Bytewise order: '-' < '.' < '/'.
  EXPECT_THAT(MatchedPaths(result), ElementsAre("a-b.txt", "a/c.txt", "b.txt"));
  EXPECT_THAT(result.matches[0].lines, ElementsAre(GrepLine{1, "foo\r", true}));
  EXPECT_THAT(result.matches[2].lines,
              ElementsAre(GrepLine{2, "two foo", true}, GrepLine{4, "foo four", true}));
}

TEST(GrepTest, EmptyFilesAndFinalLines) {
  FakeTree tree;
  tree.AddFile("empty", "");
  tree.AddFile("newline", "\n");
  tree.AddFile("two", "a\n\n");
  tree.AddFile("unterminated", "a\nb");
  GrepResult result = MustGrep(tree, "^$", GrepOptions());
  EXPECT_THAT(MatchedPaths(result), ElementsAre("newline", "two"));
  EXPECT_THAT(result.matches[1].lines, ElementsAre(GrepLine{2, "", true}));
  result = MustGrep(tree, "b$", GrepOptions());
  EXPECT_THAT(MatchedPaths(result), ElementsAre("unterminated"));
  EXPECT_THAT(result.matches[0].lines, ElementsAre(GrepLine{2, "b", true}));
}

TEST(GrepTest, InvalidUtf8IsReplaced) {
  FakeTree tree;
  tree.AddFile("a",
               "x\xFF"
               "foo\n");
  GrepResult result = MustGrep(tree, "foo", GrepOptions());
  ASSERT_EQ(result.matches.size(), 1u);
  EXPECT_EQ(result.matches[0].lines[0].content,
            "x\xEF\xBF\xBD"
            "foo");
}

TEST(GrepTest, SkipsBinaryFiles) {
  FakeTree tree;
  tree.AddFile("binary", "foo\n" + std::string(1, '\0') + "foo\n");
  tree.AddFile("nul_after_8k", std::string(8192, 'x') + '\0' + "\nfoo\n");
  tree.AddFile("text", "foo\n");
  GrepResult result = MustGrep(tree, "foo", GrepOptions());
  EXPECT_THAT(MatchedPaths(result), ElementsAre("nul_after_8k", "text"));
  // A named binary file is skipped too.
  GrepOptions named;
  named.paths = {"binary"};
  EXPECT_TRUE(MustGrep(tree, "foo", named).matches.empty());
}

TEST(GrepTest, SkipsGitAndToolvfsDirectories) {
  FakeTree tree;
  tree.AddFile(".git/config", "foo\n");
  tree.AddFile("sub/.git/HEAD", "foo\n");
  tree.AddFile(".toolvfs/state", "foo\n");
  tree.AddFile("sub/.toolvfs/x", "foo\n");
  tree.AddFile(".github/workflow", "foo\n");
  tree.AddFile("sub/.gitkeep", "foo\n");
  tree.AddFile("sub/file", "foo\n");
  GrepResult result = MustGrep(tree, "foo", GrepOptions());
  EXPECT_THAT(MatchedPaths(result), ElementsAre(".github/workflow", "sub/.gitkeep", "sub/file"));
  for (const std::string& path : tree.ReadPaths()) {
    EXPECT_THAT(path, ::testing::Not(HasSubstr(".git/"))) << "read " << path;
    EXPECT_THAT(path, ::testing::Not(HasSubstr(".toolvfs/"))) << "read " << path;
  }
}

TEST(GrepTest, DoesNotFollowSymlinksWhileWalking) {
  FakeTree tree;
  tree.AddFile("real/a.txt", "foo\n");
  tree.AddSymlink("link", "real");
  tree.AddSymlink("file_link", "real/a.txt");
  tree.AddSymlink("dangling", "missing");
  GrepResult result = MustGrep(tree, "foo", GrepOptions());
  EXPECT_THAT(MatchedPaths(result), ElementsAre("real/a.txt"));

  GrepOptions through_links;
  through_links.paths = {"link", "file_link"};
  result = MustGrep(tree, "foo", through_links);
  EXPECT_THAT(MatchedPaths(result), ElementsAre("file_link", "link/a.txt"));
}

// The policy's hook: every candidate file is offered to file_filter, from
// several threads, before it is opened; a refused file is never read.
TEST(GrepTest, FileFilterSkipsFilesBeforeOpeningThem) {
  FakeTree tree;
  for (int index = 0; index < 100; ++index) {
    tree.AddFile("src/file" + std::to_string(index) + ".txt", "foo\n");
  }
  tree.AddFile("secrets/key.txt", "foo\n");
  tree.AddFile("top.txt", "foo\n");
  std::mutex mutex;
  std::set<std::string> offered;
  GrepOptions options = AllMatches();
  options.file_filter = [&](std::string_view path) {
    std::lock_guard lock(mutex);
    offered.insert(std::string(path));
    return !PathContains("secrets", path) && path != "src/file7.txt";
  };
  GrepResult result = MustGrep(tree, "foo", options);
  std::vector<std::string> paths = MatchedPaths(result);
  EXPECT_EQ(paths.size(), 100u);
  EXPECT_THAT(paths, ::testing::Not(::testing::Contains("secrets/key.txt")));
  EXPECT_THAT(paths, ::testing::Not(::testing::Contains("src/file7.txt")));
  EXPECT_EQ(offered.size(), 102u);
  EXPECT_EQ(tree.ReadPaths().count("secrets/key.txt"), 0u);
  EXPECT_EQ(tree.ReadPaths().count("src/file7.txt"), 0u);

  // A file named in paths is offered too, and skipped as if absent.
  options.paths = {"secrets/key.txt", "top.txt"};
  EXPECT_THAT(MatchedPaths(MustGrep(tree, "foo", options)), ElementsAre("top.txt"));
}

TEST(GrepTest, PathsRestrictTheSearch) {
  FakeTree tree;
  tree.AddFile("src/a.rs", "foo\n");
  tree.AddFile("src/b.rs", "foo\n");
  tree.AddFile("docs/c.md", "foo\n");
  tree.AddFile("top.txt", "foo\n");
  GrepOptions options;
  options.paths = {"./src//", "top.txt", "src/a.rs"};  // overlapping entries: each file once
  EXPECT_THAT(MatchedPaths(MustGrep(tree, "foo", options)),
              ElementsAre("src/a.rs", "src/b.rs", "top.txt"));
  options.paths = {"."};
  EXPECT_EQ(MustGrep(tree, "foo", options).matches.size(), 4u);
}

TEST(GrepTest, ErrorsForBadPathsAndPatterns) {
  FakeTree tree;
  tree.AddFile("a.txt", "foo\n");
  GrepOptions missing;
  missing.paths = {"a.txt", "nope"};
  Result<GrepResult> result = RunGrep(tree, "foo", missing);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(result.status().message(), HasSubstr("'nope'"));

  GrepOptions escaping;
  escaping.paths = {"../etc"};
  EXPECT_EQ(RunGrep(tree, "foo", escaping).status().code(), StatusCode::kPermissionDenied);
  GrepOptions absolute;
  absolute.paths = {"/etc"};
  EXPECT_EQ(RunGrep(tree, "foo", absolute).status().code(), StatusCode::kInvalidArgument);

  result = RunGrep(tree, "(foo", GrepOptions());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(result.status().message(), "Invalid pattern '(foo': missing ): (foo");
  result = RunGrep(tree, "a{2,1}\n", GrepOptions());
  EXPECT_THAT(result.status().message(), StartsWith("Invalid pattern 'a{2,1}\\n': "));
}

TEST(GrepTest, SkipsEntriesThatFailWhileWalking) {
  FakeTree tree;
  tree.AddFile("ok.txt", "foo\n");
  tree.AddFile("gone.txt", "foo\n");
  tree.AddFile("locked/inside.txt", "foo\n");
  tree.AddFile("visible/x", "foo\n");
  tree.MakeUnreadable("gone.txt");
  tree.MakeUnlistable("locked");
  GrepResult result = MustGrep(tree, "foo", GrepOptions());
  EXPECT_THAT(MatchedPaths(result), ElementsAre("ok.txt", "visible/x"));
}

TEST(GrepTest, ExtensionsApplyToWalkedFiles) {
  FakeTree tree;
  tree.AddFile("a.rs", "foo\n");
  tree.AddFile("b.RS", "foo\n");
  tree.AddFile("c.rs.bak", "foo\n");
  tree.AddFile("d.py", "foo\n");
  tree.AddFile("rs", "foo\n");
  tree.AddFile("sub/e.rs", "foo\n");
  tree.AddFile("f.tar.gz", "foo\n");
  GrepOptions options;
  options.extensions = {"rs"};
  EXPECT_THAT(MatchedPaths(MustGrep(tree, "foo", options)), ElementsAre("a.rs", "sub/e.rs"));
  options.extensions = {".py", "gz"};
  EXPECT_THAT(MatchedPaths(MustGrep(tree, "foo", options)), ElementsAre("d.py", "f.tar.gz"));
  options.extensions = {"tar.gz"};
  EXPECT_THAT(MatchedPaths(MustGrep(tree, "foo", options)), ElementsAre("f.tar.gz"));
  // A file named in paths is searched whatever its extension.
  options.extensions = {"rs"};
  options.paths = {"d.py", "sub"};
  EXPECT_THAT(MatchedPaths(MustGrep(tree, "foo", options)), ElementsAre("d.py", "sub/e.rs"));

  for (std::string bad : {"", "."}) {
    options.extensions = {"rs", bad};
    Result<GrepResult> result = RunGrep(tree, "foo", options);
    EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument) << bad;
  }
}

TEST(GrepTest, ContextWindowsMerge) {
  FakeTree tree;
  tree.AddFile("a", NumberedLines(20, {5, 8, 16}));
  GrepOptions options;
  options.context = 2;
  GrepResult result = MustGrep(tree, "foo", options);
  ASSERT_EQ(result.matches.size(), 1u);
  std::vector<std::pair<uint64_t, bool>> shown;
  for (const GrepLine& line : result.matches[0].lines) {
    shown.emplace_back(line.line_number, line.is_match);
    EXPECT_EQ(line.content, (line.is_match ? "foo " : "line ") + std::to_string(line.line_number));
  }
  // 5 and 8 are three lines apart: one block 3..10; 16 alone: 14..18.
  std::vector<std::pair<uint64_t, bool>> expected = {
      {3, false},  {4, false},  {5, true},   {6, false}, {7, false},  {8, true},  {9, false},
      {10, false}, {14, false}, {15, false}, {16, true}, {17, false}, {18, false}};
  EXPECT_EQ(shown, expected);
}

TEST(GrepTest, ContextStopsAtFileEdges) {
  FakeTree tree;
  tree.AddFile("a", "foo\nb\nc\nd\nfoo");
  GrepOptions options;
  options.context = 3;
  GrepResult result = MustGrep(tree, "foo", options);
  ASSERT_EQ(result.matches.size(), 1u);
  EXPECT_THAT(
      result.matches[0].lines,
      ElementsAre(GrepLine{1, "foo", true}, GrepLine{2, "b", false}, GrepLine{3, "c", false},
                  GrepLine{4, "d", false}, GrepLine{5, "foo", true}));
}

TEST(GrepTest, MaxMatchesTruncates) {
  std::set<int> every_other;
  for (int line = 1; line <= 40; line += 2) every_other.insert(line);
  FakeTree tree;
  tree.AddFile("a", NumberedLines(40, every_other));  // 20 matches

  GrepOptions options;
  options.max_matches = 5;
  GrepResult result = MustGrep(tree, "foo", options);
  EXPECT_TRUE(result.truncated);
  ASSERT_EQ(result.matches.size(), 1u);
  EXPECT_THAT(result.matches[0].lines,
              ElementsAre(GrepLine{1, "foo 1", true}, GrepLine{3, "foo 3", true},
                          GrepLine{5, "foo 5", true}, GrepLine{7, "foo 7", true},
                          GrepLine{9, "foo 9", true}));

  options.max_matches = 20;
  result = MustGrep(tree, "foo", options);
  EXPECT_FALSE(result.truncated);
  EXPECT_EQ(result.matches[0].lines.size(), 20u);
  options.max_matches = 19;
  EXPECT_TRUE(MustGrep(tree, "foo", options).truncated);

  // Context after the last kept match is shown, later matches as context.
  options.max_matches = 2;
  options.context = 1;
  result = MustGrep(tree, "foo", options);
  EXPECT_TRUE(result.truncated);
  EXPECT_THAT(result.matches[0].lines,
              ElementsAre(GrepLine{1, "foo 1", true}, GrepLine{2, "line 2", false},
                          GrepLine{3, "foo 3", true}, GrepLine{4, "line 4", false}));
  options.context = 2;
  result = MustGrep(tree, "foo", options);
  EXPECT_THAT(result.matches[0].lines,
              ElementsAre(GrepLine{1, "foo 1", true}, GrepLine{2, "line 2", false},
                          GrepLine{3, "foo 3", true}, GrepLine{4, "line 4", false},
                          GrepLine{5, "foo 5", false}));
}

TEST(GrepTest, MaxMatchesCountsAcrossFilesInPathOrder) {
  FakeTree tree;
  for (int index = 0; index < 50; ++index) {
    tree.AddFile("dir" + std::to_string(index % 7) + "/f" + std::to_string(index),
                 "foo\nbar\nfoo\n");
  }
  GrepOptions options;
  options.max_matches = 5;
  GrepResult result = MustGrep(tree, "foo", options);
  EXPECT_TRUE(result.truncated);
  EXPECT_THAT(MatchedPaths(result), ElementsAre("dir0/f0", "dir0/f14", "dir0/f21"));
  EXPECT_EQ(result.matches[2].lines, (std::vector<GrepLine>{{1, "foo", true}}));

  options.max_matches = 100;
  EXPECT_FALSE(MustGrep(tree, "foo", options).truncated);
  options.max_matches = 99;
  EXPECT_TRUE(MustGrep(tree, "foo", options).truncated);
}

TEST(GrepTest, ResultIsDeterministic) {
  std::map<std::string, std::string> files = RandomFiles(/*seed=*/7, /*count=*/400);
  FakeTree tree;
  for (const auto& [path, content] : files) tree.AddFile(path, content);
  for (uint64_t max_matches : {0, 7, 1000}) {
    GrepOptions options;
    options.max_matches = max_matches;
    options.context = 1;
    GrepResult first = MustGrep(tree, "foo|bar", options);
    EXPECT_FALSE(first.matches.empty());
    for (int run = 0; run < 20; ++run) {
      ASSERT_EQ(MustGrep(tree, "foo|bar", options), first) << "run " << run;
    }
  }
}

TEST(GrepTest, HonorsIgnoreFiles) {
  FakeTree tree;
  tree.AddFile(".gitignore", "*.log\nbuild/\n/top_only.txt\n");
  tree.AddFile("app.log", "foo\n");
  tree.AddFile("build/out.txt", "foo\n");
  tree.AddFile("top_only.txt", "foo\n");
  tree.AddFile("src/top_only.txt", "foo\n");
  tree.AddFile("src/.gitignore", "!keep.log\n");
  tree.AddFile("src/keep.log", "foo\n");
  tree.AddFile("src/other.log", "foo\n");
  tree.AddFile("src/.ignore", "keep.log\n");  // .ignore wins over .gitignore
  tree.AddFile("lib/.gitignore", "!*.log\n");
  tree.AddFile("lib/x.log", "foo\n");
  tree.AddFile("notes.txt", "foo\n");
  GrepResult result = MustGrep(tree, "foo", GrepOptions());
  EXPECT_THAT(MatchedPaths(result), ElementsAre("lib/x.log", "notes.txt", "src/top_only.txt"));
  EXPECT_EQ(tree.ReadPaths().count("build/out.txt"), 0u);

  GrepOptions include;
  include.include_ignored = true;
  EXPECT_EQ(MustGrep(tree, "foo", include).matches.size(), 8u);

  // Named files are searched even if ignored; a named directory is walked
  // with the rules of the directories above it.
  GrepOptions named;
  named.paths = {"app.log", "build", "src"};
  EXPECT_THAT(MatchedPaths(MustGrep(tree, "foo", named)),
              ElementsAre("app.log", "build/out.txt", "src/top_only.txt"));
}

TEST(GrepTest, IgnoreFileThatIsASymlinkIsNotRead) {
  FakeTree tree;
  tree.AddFile("elsewhere/rules", "*.txt\n");
  tree.AddSymlink(".gitignore", "elsewhere/rules");
  tree.AddFile("a.txt", "foo\n");
  EXPECT_THAT(MatchedPaths(MustGrep(tree, "foo", GrepOptions())), ElementsAre("a.txt"));
}

// What a search with max_result_bytes `limit` must return: the full result
// cut where the next line would pass the limit (GrepFileJsonBytes).
GrepResult CutAtResultBytes(const GrepResult& full, uint64_t limit) {
  GrepResult cut;
  uint64_t used = 0;
  for (const GrepFileMatches& file : full.matches) {
    GrepFileMatches kept{file.path, {}};
    uint64_t bytes = GrepFileJsonBytes(kept);
    for (const GrepLine& line : file.lines) {
      if (used + bytes + GrepLineJsonBytes(line) > limit) {
        if (!kept.lines.empty()) cut.matches.push_back(std::move(kept));
        cut.truncated = true;
        cut.truncated_by = GrepTruncation::kResultBytes;
        return cut;
      }
      bytes += GrepLineJsonBytes(line);
      kept.lines.push_back(line);
    }
    used += bytes;
    cut.matches.push_back(std::move(kept));
  }
  cut.truncated = full.truncated;
  cut.truncated_by = full.truncated_by;
  return cut;
}

uint64_t ResultJsonBytes(const GrepResult& result) {
  uint64_t bytes = 0;
  for (const GrepFileMatches& file : result.matches) bytes += GrepFileJsonBytes(file);
  return bytes;
}

TEST(GrepResultBytesTest, KeepsTheLinesThatFitInPathOrder) {
  std::map<std::string, std::string> files = RandomFiles(/*seed=*/11, /*count=*/300);
  FakeTree tree;
  for (const auto& [path, content] : files) tree.AddFile(path, content);
  for (uint32_t context : {0u, 2u}) {
    GrepOptions options;
    options.max_matches = 0;
    options.context = context;
    GrepResult full = MustGrep(tree, "foo|bar", options);
    const uint64_t full_bytes = ResultJsonBytes(full);
    ASSERT_GT(full_bytes, 10'000u);
    for (uint64_t limit : {uint64_t{1}, uint64_t{100}, uint64_t{4'000}, full_bytes / 2, full_bytes - 1,
                           full_bytes, full_bytes + 1}) {
      options.max_result_bytes = limit;
      GrepResult result = MustGrep(tree, "foo|bar", options);
      EXPECT_EQ(result, CutAtResultBytes(full, limit)) << "limit " << limit << " context " << context;
      EXPECT_LE(ResultJsonBytes(result), limit);
      EXPECT_EQ(result.truncated, limit < full_bytes) << "limit " << limit;
    }
  }
}

TEST(GrepResultBytesTest, WithMaxMatchesTheFirstLimitReachedSaysWhy) {
  FakeTree tree;
  for (int index = 0; index < 10; ++index) tree.AddFile("f" + std::to_string(index), "foo\nfoo\n");
  GrepOptions options;
  options.max_matches = 3;
  options.max_result_bytes = 1'000'000;
  GrepResult result = MustGrep(tree, "foo", options);
  EXPECT_EQ(result.truncated_by, GrepTruncation::kMaxMatches);
  options.max_result_bytes = GrepFileJsonBytes(GrepFileMatches{"f0", {{1, "foo", true}, {2, "foo", true}}});
  result = MustGrep(tree, "foo", options);
  EXPECT_TRUE(result.truncated);
  EXPECT_EQ(result.truncated_by, GrepTruncation::kResultBytes);
  EXPECT_THAT(MatchedPaths(result), ElementsAre("f0"));
}

TEST(GrepResultBytesTest, StopsReadingOnceTheResultIsFull) {
  // 400 files of 2,000 matching lines each: a result of about 40 MB of
  // JSON, of which 64 KiB are wanted.
  FakeTree tree;
  std::string lines;
  for (int line = 0; line < 2000; ++line) lines += "a line that matches\n";
  for (int index = 0; index < 400; ++index) {
    tree.AddFile("d" + std::to_string(index % 20) + "/f" + std::to_string(index), lines);
  }
  tree.SetReadSizes({4096});
  MemoryBudget budget(uint64_t{1} << 30);
  GrepOptions options;
  options.max_matches = 0;
  options.max_result_bytes = 64 << 10;
  options.memory_budget = &budget;
  GrepResult result = MustGrep(tree, "^", options);
  EXPECT_TRUE(result.truncated);
  EXPECT_EQ(result.truncated_by, GrepTruncation::kResultBytes);
  EXPECT_LE(ResultJsonBytes(result), uint64_t{64} << 10);
  // Each file is collected only up to the limit, and few files are read
  // past the one that fills the result (before: every file, whole): the
  // root's first batch, searched before anything can be handed over, and
  // about one file per worker.
  const uint64_t workers = std::max(2u, std::thread::hardware_concurrency());
  EXPECT_LT(tree.ReadPaths().size(), 16 + 2 * workers);
  EXPECT_LT(tree.BytesRead("d0/f0"), lines.size());
  // Lines held at once: those files' worth of the limit (in collection or
  // waiting), not the 40 MB.
  EXPECT_LT(budget.peak_bytes(), (16 + 2 * workers) * (uint64_t{128} << 10));
  EXPECT_EQ(budget.reserved_bytes(), 0u);
}

TEST(GrepResultBytesTest, AFullMemoryBudgetFailsTheSearchNamingIt) {
  FakeTree tree;
  std::string lines;
  for (int line = 0; line < 20000; ++line) lines += "a line that matches\n";
  tree.AddFile("big", lines);
  MemoryBudget budget(uint64_t{1} << 20);
  GrepOptions options;
  options.max_matches = 0;
  options.memory_budget = &budget;
  Result<GrepResult> result = RunGrep(tree, "^", options);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kResourceExhausted);
  EXPECT_THAT(result.status().message(), HasSubstr("memory budget of 1 MiB"));
  EXPECT_EQ(budget.reserved_bytes(), 0u);
  // Within the budget the same search succeeds.
  options.max_result_bytes = 256 << 10;
  EXPECT_TRUE(RunGrep(tree, "^", options).ok());
  EXPECT_EQ(budget.reserved_bytes(), 0u);
}

TEST(GrepFileSinkTest, GetsTheResultsFilesInPathOrder) {
  std::map<std::string, std::string> files = RandomFiles(/*seed=*/5, /*count=*/300);
  FakeTree tree;
  for (const auto& [path, content] : files) tree.AddFile(path, content);
  for (uint64_t max_matches : {0, 7, 1000}) {
    for (uint64_t max_result_bytes : {0, 20'000}) {
      GrepOptions options;
      options.max_matches = max_matches;
      options.max_result_bytes = max_result_bytes;
      options.context = 1;
      options.paths = {"", "src"};  // files found twice are handed over once
      GrepResult expected = MustGrep(tree, "foo|bar", options);
      std::vector<GrepFileMatches> handed;
      options.file_sink = [&handed](GrepFileMatches&& file) {
        handed.push_back(std::move(file));
        return OkStatus();
      };
      GrepResult result = MustGrep(tree, "foo|bar", options);
      EXPECT_TRUE(result.matches.empty());
      EXPECT_EQ(result.truncated_by, expected.truncated_by);
      EXPECT_EQ(handed, expected.matches) << "max_matches " << max_matches;
    }
  }
}

TEST(GrepFileSinkTest, AnErrorStopsTheSearchAndIsReturned) {
  FakeTree tree;
  for (int index = 0; index < 200; ++index) tree.AddFile("f" + std::to_string(1000 + index), "foo\n");
  GrepOptions options;
  int calls = 0;
  options.file_sink = [&calls](GrepFileMatches&&) {
    ++calls;
    return IoError("Cannot write standard output: broken pipe");
  };
  Result<GrepResult> result = RunGrep(tree, "foo", options);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().message(), "Cannot write standard output: broken pipe");
  EXPECT_EQ(calls, 1);
}

TEST(GrepTest, DefaultMaxMatchesStopsEarlyOnHugeResults) {
  FakeTree tree;
  std::string many_lines;
  for (int line = 0; line < 3000; ++line) many_lines += "x\n";
  for (int index = 0; index < 20; ++index) tree.AddFile("f" + std::to_string(index), many_lines);
  GrepResult result = MustGrep(tree, "x*", GrepOptions());
  EXPECT_TRUE(result.truncated);
  ASSERT_EQ(result.matches.size(), 1u);
  EXPECT_EQ(result.matches[0].path, "f0");
  EXPECT_EQ(result.matches[0].lines.size(), 1000u);
  EXPECT_EQ(result.matches[0].lines.back().line_number, 1000u);
}

}  // namespace
}  // namespace toolvfs
