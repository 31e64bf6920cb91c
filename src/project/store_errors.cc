#include "project/store_errors.h"

#include <charconv>

#include "core/io.h"
#include "core/text.h"
#include "project/path.h"

namespace toolvfs {

std::string CannotDo(std::string_view verb, std::string_view path) {
  return "Cannot " + std::string(verb) + " " + DisplayPath(path);
}

std::string CannotRename(std::string_view from, std::string_view to) {
  return "Cannot rename " + DisplayPath(from) + " to " + DisplayPath(to);
}

Status MissingError(std::string_view noun, std::string_view path) {
  return NotFoundError(std::string(noun) + " " + DisplayPath(path) + " does not exist");
}

Status ParentIsFileError(std::string_view what, std::string_view file) {
  return NotDirectoryError(std::string(what) + ": " + DisplayPath(file) + " is a file");
}

Status IsDirectoryActionError(std::string_view verb, std::string_view path) {
  return IsDirectoryError(CannotDo(verb, path) + ": it is a directory");
}

Status ListFileError(std::string_view path) {
  return NotDirectoryError(CannotDo("list", path) + ": it is a file");
}

Status CreateExistsError(std::string_view path) {
  return AlreadyExistsError(CannotDo("create", path) + ": it already exists");
}

Status ProjectRootError(std::string_view verb) {
  return InvalidArgumentError(CannotDo(verb, "") + ": it is the project root");
}

Status DeleteNotEmptyError(std::string_view path) {
  return NotEmptyError(CannotDo("delete", path) +
                       ": directory is not empty (pass recursive to delete it with its contents)");
}

Status ReadLimitError(std::string_view path, uint64_t size, uint64_t limit) {
  return TooLargeError(CannotDo("read", path) + ": " + FormatBytes(size) +
                       " is larger than the read limit of " + FormatBytes(limit));
}

Status ReadRangeLimitError(std::string_view path, uint64_t offset, uint64_t bytes, uint64_t limit) {
  return TooLargeError(CannotDo("read", path) + ": " + FormatBytes(bytes) + " from offset " +
                       std::to_string(offset) + " is larger than the read limit of " +
                       FormatBytes(limit) + "; read it in parts with offset and length");
}

Status RenameRootError(std::string_view from, std::string_view to) {
  return InvalidArgumentError(CannotRename(from, to) + ": the project root cannot be moved or replaced");
}

Status RenameIntoItselfError(std::string_view from, std::string_view to) {
  return InvalidArgumentError(CannotRename(from, to) + ": the destination is inside the source");
}

Status RenameSourceMissingError(std::string_view from, std::string_view to) {
  return NotFoundError(CannotRename(from, to) + ": " + DisplayPath(from) + " does not exist");
}

Status RenameTargetExistsError(std::string_view from, std::string_view to) {
  return AlreadyExistsError(CannotRename(from, to) + ": " + DisplayPath(to) +
                            " already exists (pass overwrite to replace it)");
}

Status RenameTargetIsDirectoryError(std::string_view from, std::string_view to) {
  return IsDirectoryError(CannotRename(from, to) + ": " + DisplayPath(to) + " is a directory");
}

Status RenameTargetIsFileError(std::string_view from, std::string_view to) {
  return NotDirectoryError(CannotRename(from, to) + ": " + DisplayPath(to) + " is a file");
}

Status RenameTargetNotEmptyError(std::string_view from, std::string_view to) {
  return NotEmptyError(CannotRename(from, to) + ": directory " + DisplayPath(to) + " is not empty");
}

Status CheckSnapshotLabel(std::string_view label) {
  if (label.size() > kMaxSnapshotLabelBytes) {
    // The start only, as for a long path: the message stays one readable line.
    return InvalidArgumentError("Invalid snapshot label " + Quote(label.substr(0, 48)) + "... (" +
                                std::to_string(label.size()) + " bytes): longer than the limit of " +
                                std::to_string(kMaxSnapshotLabelBytes) + " bytes");
  }
  for (char c : label) {
    auto byte = static_cast<uint8_t>(c);
    if (byte < 0x20 || byte == 0x7F) {
      return InvalidArgumentError("Invalid snapshot label " + Quote(label) + ": contains a control character");
    }
  }
  if (!IsValidUtf8(label)) {
    return InvalidArgumentError("Invalid snapshot label " + Quote(label) + ": is not valid UTF-8");
  }
  return OkStatus();
}

std::optional<uint64_t> ParseSnapshotId(std::string_view id) {
  if (id.empty() || id.front() < '1' || id.front() > '9') return std::nullopt;
  uint64_t number = 0;
  auto [end, error] = std::from_chars(id.data(), id.data() + id.size(), number);
  if (error != std::errc() || end != id.data() + id.size()) return std::nullopt;
  return number;
}

Status SnapshotNotFoundError(std::string_view id, std::string_view project) {
  return NotFoundError("Snapshot " + Quote(id) + " does not exist in " + Quote(project));
}

}  // namespace toolvfs
