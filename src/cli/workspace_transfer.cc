#include "cli/workspace_transfer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string_view>
#include <utility>
#include <vector>

#include "core/io.h"
#include "core/text.h"
#include "core/unique_fd.h"
#include "project/ignore.h"
#include "project/path.h"

namespace toolvfs {
namespace {

// git's and toolvfs's own state: never project content, never imported.
bool IsToolState(std::string_view name) { return name == ".git" || name == ".toolvfs"; }

struct PlannedEntry {
  std::string path;  // normalized project path
  EntryKind kind;    // kFile or kDirectory
};

class Planner {
 public:
  Planner(ProjectFiles& source, const TransferOptions& options, TransferReport& report)
      : source_(source), options_(options), report_(report) {}

  // Appends the entries below directory `path`, parents before children.
  Status Walk(const std::string& path, const IgnoreRules& inherited) {
    TOOLVFS_ASSIGN_OR_RETURN(std::vector<DirEntry> entries, source_.ListDir(path));
    IgnoreRules rules = inherited;
    if (options_.skip_ignored && !options_.include_ignored) {
      // .gitignore first: .ignore takes precedence in the same directory.
      for (std::string_view name : {kGitignoreFileName, kIgnoreFileName}) {
        bool present = false;
        for (const DirEntry& entry : entries) {
          if (entry.name == name && entry.kind == EntryKind::kFile && !entry.is_symlink()) present = true;
        }
        if (!present) continue;
        TOOLVFS_ASSIGN_OR_RETURN(std::string text, source_.Read(JoinPath(path, name)));
        rules = rules.With(IgnoreFile(path, text));
      }
    }
    for (const DirEntry& entry : entries) {
      if (entry.is_symlink()) {
        ++report_.skipped;
        continue;
      }
      std::string child = JoinPath(path, entry.name);
      Result<std::string> normalized = NormalizePath(child);
      if (!normalized.ok() || *normalized != child) {
        ++report_.skipped;
        continue;
      }
      const bool is_directory = entry.kind == EntryKind::kDirectory;
      if (options_.skip_ignored && (IsToolState(entry.name) || rules.IsIgnored(child, is_directory))) {
        ++report_.ignored;
        continue;
      }
      planned_.push_back(PlannedEntry{child, entry.kind});
      if (is_directory) TOOLVFS_RETURN_IF_ERROR(Walk(child, rules));
    }
    return OkStatus();
  }

  std::vector<PlannedEntry>& planned() { return planned_; }

 private:
  ProjectFiles& source_;
  const TransferOptions& options_;
  TransferReport& report_;
  std::vector<PlannedEntry> planned_;
};

std::string TargetPath(const std::string& target, std::string_view path) {
  return target + "/" + std::string(path);
}

// Whether `entry` can be written at its place in the target: nothing is
// there, or the same kind of thing (a regular file is overwritten, a
// directory merged). Never through a symbolic link.
Status CheckTarget(int target_fd, const std::string& target, const PlannedEntry& entry) {
  struct stat status;
  if (::fstatat(target_fd, entry.path.c_str(), &status, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return OkStatus();
    return ErrnoToStatus(errno, "Cannot write " + Quote(TargetPath(target, entry.path)));
  }
  std::string there = S_ISDIR(status.st_mode)   ? "a directory"
                      : S_ISREG(status.st_mode) ? "a file"
                      : S_ISLNK(status.st_mode) ? "a symbolic link"
                                                : "a special file";
  const bool fits = entry.kind == EntryKind::kDirectory ? S_ISDIR(status.st_mode) : S_ISREG(status.st_mode);
  if (fits) return OkStatus();
  return AlreadyExistsError("Cannot write the " +
                            std::string(entry.kind == EntryKind::kDirectory ? "directory " : "file ") +
                            Quote(TargetPath(target, entry.path)) + ": " + there +
                            " is in the way; nothing was written");
}

Status WriteTargetFile(int target_fd, const std::string& target, const std::string& path, std::string_view content) {
  std::string where = TargetPath(target, path);
  UniqueFd fd(::openat(target_fd, path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644));
  if (!fd) return ErrnoToStatus(errno, "Cannot write " + Quote(where));
  TOOLVFS_RETURN_IF_ERROR(WriteFull(fd.get(), content, Quote(where)));
  if (::close(fd.release()) != 0) return ErrnoToStatus(errno, "Cannot write " + Quote(where));
  return OkStatus();
}

}  // namespace

Result<TransferReport> CopyTreeInto(ProjectFiles& source, const std::string& target, const TransferOptions& options) {
  TransferReport report;
  Planner planner(source, options, report);
  TOOLVFS_RETURN_IF_ERROR(planner.Walk("", IgnoreRules()));

  UniqueFd target_fd(::open(target.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!target_fd) return ErrnoToStatus(errno, "Cannot open the directory " + Quote(target));
  // Every conflict before the first write, so a refused copy changes nothing.
  uint64_t files_total = 0;
  for (const PlannedEntry& entry : planner.planned()) {
    TOOLVFS_RETURN_IF_ERROR(CheckTarget(target_fd.get(), target, entry));
    files_total += entry.kind == EntryKind::kDirectory ? 0 : 1;
  }
  for (const PlannedEntry& entry : planner.planned()) {
    if (entry.kind == EntryKind::kDirectory) {
      if (::mkdirat(target_fd.get(), entry.path.c_str(), 0755) != 0 && errno != EEXIST) {
        return ErrnoToStatus(errno, "Cannot create the directory " + Quote(TargetPath(target, entry.path)));
      }
      ++report.directories;
      continue;
    }
    TOOLVFS_ASSIGN_OR_RETURN(std::string content, source.Read(entry.path));
    TOOLVFS_RETURN_IF_ERROR(WriteTargetFile(target_fd.get(), target, entry.path, content));
    ++report.files;
    report.bytes += content.size();
    if (options.progress) options.progress(report, files_total);
  }
  return report;
}

}  // namespace toolvfs
