// Files that only grow, one line at a time: the audit log (SPEC.md §3.4).
//
// The audit log lives in the project (`.toolvfs/audit.jsonl`), and only
// src/project/ calls the OS file API on project files, so its writer and
// reader are here.
//
// AppendOnlyFile is safe to share between processes: every Append is one
// write(2) on an O_APPEND descriptor, so lines of concurrent writers (two
// `toolvfs run` in the same project) never interleave on a local file
// system. It is not thread-safe: callers serialize Append (the audit sink
// holds a mutex). Nothing here ever truncates a file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"
#include "core/unique_fd.h"

namespace toolvfs {

class AppendOnlyFile {
 public:
  // Opens `path` for appending, creating it with mode 0600 and any missing
  // parent directory with mode 0700 (the log says what tools did: only its
  // owner reads it). The last component must not be a symbolic link (a
  // cloned repository could otherwise point `.toolvfs/audit.jsonl` at
  // ~/.bashrc) and must be a regular file. Errors name the path.
  static Result<AppendOnlyFile> Open(const std::string& path);

  // Like Open for `relative_path` below the directory `directory` (the
  // project's `.toolvfs/audit.jsonl`), except that no component of
  // `relative_path` may be a symbolic link, the directories too: a cloned
  // repository whose `.toolvfs` links to ~/.config would otherwise have the
  // log written there. `directory` itself is followed (the user named it).
  // A link on the way fails with PermissionDenied naming the path and the
  // link, in one line. `relative_path` holds no "..", "." or empty
  // components.
  static Result<AppendOnlyFile> OpenBelow(const std::string& directory, std::string_view relative_path);

  AppendOnlyFile(AppendOnlyFile&&) noexcept = default;
  AppendOnlyFile& operator=(AppendOnlyFile&&) noexcept = default;

  // Appends `line` (which the caller ends with '\n') in one write(2),
  // retrying EINTR. A short write (a full disk, a file size limit) is
  // completed by further writes, so the line is whole unless an error is
  // returned; only then could another process's line land inside it.
  Status Append(std::string_view line);

  const std::string& path() const { return path_; }

 private:
  AppendOnlyFile(UniqueFd fd, std::string path) : fd_(std::move(fd)), path_(std::move(path)) {}

  UniqueFd fd_;
  std::string path_;
};

// Reads a file line by line in bounded memory, for files of any size.
// Not thread-safe.
class FileLineReader {
 public:
  // Lines longer than this are reported as TooLarge and skipped.
  static constexpr size_t kDefaultMaxLineBytes = 64u << 20;

  // NotFound naming `path` if there is no such file.
  static Result<FileLineReader> Open(const std::string& path,
                                     size_t max_line_bytes = kDefaultMaxLineBytes);

  FileLineReader(FileLineReader&&) noexcept = default;
  FileLineReader& operator=(FileLineReader&&) noexcept = default;

  // The next line without its '\n', or nullopt at end of file. A last line
  // without '\n' is returned as it is (a writer killed mid-line leaves one;
  // the caller's parser decides). The view is valid until the next call.
  // A line longer than the limit fails with TooLarge naming its number; the
  // next call goes on after it. A read error fails with the errno's status.
  Result<std::optional<std::string_view>> NextLine();

  // For following a file that grows (`toolvfs audit --follow`): forgets
  // the end of file NextLine met, so the next call reads on from there.
  void ResumeAfterEnd() { end_of_file_ = false; }

  // The 1-based number of the line NextLine returned (or failed on) last.
  uint64_t line_number() const { return line_number_; }
  const std::string& path() const { return path_; }

 private:
  FileLineReader(UniqueFd fd, std::string path, size_t max_line_bytes)
      : fd_(std::move(fd)), path_(std::move(path)), max_line_bytes_(max_line_bytes) {}

  // Reads more of the file into buffer_; false at end of file.
  Result<bool> Fill();

  UniqueFd fd_;
  std::string path_;
  size_t max_line_bytes_;
  std::string buffer_;    // unread bytes start at consumed_
  size_t consumed_ = 0;
  bool end_of_file_ = false;
  uint64_t line_number_ = 0;
};

}  // namespace toolvfs
