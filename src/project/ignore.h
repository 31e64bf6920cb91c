// .gitignore / .ignore rules for grep's walk (SPEC.md §2.3).
//
// An IgnoreFile is one ignore file parsed with git's rules (gitignore(5)):
// blank lines and '#' comments skipped, trailing spaces dropped unless
// escaped with '\', '\' escapes the next character, a leading '!' negates,
// a trailing '/' matches directories only, a '/' at the start or in the
// middle anchors the pattern to the file's directory (otherwise it matches
// an entry's name at any depth), '*' '?' and '[...]' (ranges, '!' or '^'
// negation, [:alpha:]-style classes) never match '/', and '**' as a whole
// segment matches any number of directories ("**/x", "a/**/b", "a/**").
// Matching is byte-wise and case-sensitive, like git's wildmatch.
//
// IgnoreRules is an immutable chain of ignore files: deeper files take
// precedence over shallower ones and, in one directory, .ignore over
// .gitignore (callers add them in that order). Within a file the last
// matching pattern decides. Copies share the chain, so a directory hands
// its rules to its subdirectories cheaply, and any number of threads may
// use the same rules at once.
//
// The rules say nothing about ancestors: a file below an ignored directory
// is not reported ignored here. The walk never descends into an ignored
// directory, which gives git's "a file cannot be re-included if a parent
// directory is excluded".
//
// toolvfs honors these files whether or not the project is a git
// repository (there may be no .git directory); .git/info/exclude and the
// user's global excludes file are not read.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace toolvfs {

// Names of the ignore files read in every walked directory, lowest
// precedence first.
inline constexpr std::string_view kGitignoreFileName = ".gitignore";
inline constexpr std::string_view kIgnoreFileName = ".ignore";

enum class IgnoreVerdict {
  kNoMatch,   // no pattern of the file matches; ask the next file
  kIgnored,   // the last matching pattern ignores the entry
  kIncluded,  // the last matching pattern is a '!' negation
};

class IgnoreFile {
 public:
  // Parses `text`, the content of an ignore file in the directory at
  // normalized project path `directory` ("" for the root). Lines that are
  // not valid patterns (an unterminated '[', an unknown [:class:]) match
  // nothing, like in git.
  IgnoreFile(std::string directory, std::string_view text);
  ~IgnoreFile();
  IgnoreFile(IgnoreFile&&) noexcept;
  IgnoreFile& operator=(IgnoreFile&&) noexcept;

  // The verdict of the last pattern matching the entry at normalized
  // project path `path`, which must lie below directory(); kNoMatch for a
  // path outside it.
  IgnoreVerdict Match(std::string_view path, bool is_directory) const;

  const std::string& directory() const { return directory_; }
  bool empty() const;  // no patterns (an empty or all-comment file)

 private:
  struct Pattern;
  std::string directory_;
  std::vector<Pattern> patterns_;
};

class IgnoreRules {
 public:
  IgnoreRules() = default;  // no rules: nothing is ignored

  // These rules with `file` on top, taking precedence over all of them.
  // An empty file adds nothing and returns the same chain.
  IgnoreRules With(IgnoreFile file) const;

  // Whether the entry at normalized `path` is ignored: the verdict of the
  // most recently added file that has a matching pattern; false if none.
  bool IsIgnored(std::string_view path, bool is_directory) const;

  bool empty() const { return head_ == nullptr; }

 private:
  struct Node;
  std::shared_ptr<const Node> head_;
};

}  // namespace toolvfs
