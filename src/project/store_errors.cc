#include "project/store_errors.h"

#include "core/io.h"
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

}  // namespace toolvfs
