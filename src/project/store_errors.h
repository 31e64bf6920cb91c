// The wording of store errors, shared by every backend, so a client sees
// the same one-line message whichever store serves it (and the conformance
// suite can compare messages across backends).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"

namespace toolvfs {

// "Cannot <verb> '<path>'": the start of most messages below.
std::string CannotDo(std::string_view verb, std::string_view path);

// "Cannot rename '<from>' to '<to>'".
std::string CannotRename(std::string_view from, std::string_view to);

// NotFound "<noun> '<path>' does not exist"; noun is "File" (read),
// "Directory" (list) or "Path" (everything else).
Status MissingError(std::string_view noun, std::string_view path);

// NotDirectory "<what>: '<file>' is a file": a component of the path is a
// file, so nothing can be below it.
Status ParentIsFileError(std::string_view what, std::string_view file);

// IsDirectory "Cannot <verb> '<path>': it is a directory".
Status IsDirectoryActionError(std::string_view verb, std::string_view path);

// NotDirectory "Cannot list '<path>': it is a file".
Status ListFileError(std::string_view path);

// AlreadyExists "Cannot create '<path>': it already exists".
Status CreateExistsError(std::string_view path);

// InvalidArgument "Cannot <verb> '.': it is the project root".
Status ProjectRootError(std::string_view verb);

// NotEmpty "Cannot delete '<path>': directory is not empty (pass recursive ...)".
Status DeleteNotEmptyError(std::string_view path);

// TooLarge "Cannot read '<path>': <size> is larger than the read limit of <limit>".
Status ReadLimitError(std::string_view path, uint64_t size, uint64_t limit);

// TooLarge "Cannot read '<path>': <bytes> from offset <offset> is larger than
// the read limit of <limit>; read it in parts with offset and length": a
// ranged read (ReadRange) that would return more than the limit.
Status ReadRangeLimitError(std::string_view path, uint64_t offset, uint64_t bytes, uint64_t limit);

// Rename failures, each "Cannot rename 'from' to 'to': <reason>".
Status RenameRootError(std::string_view from, std::string_view to);
Status RenameIntoItselfError(std::string_view from, std::string_view to);
Status RenameSourceMissingError(std::string_view from, std::string_view to);
Status RenameTargetExistsError(std::string_view from, std::string_view to);
Status RenameTargetIsDirectoryError(std::string_view from, std::string_view to);
Status RenameTargetIsFileError(std::string_view from, std::string_view to);
Status RenameTargetNotEmptyError(std::string_view from, std::string_view to);

// ----- Snapshots (ProjectFiles::Snapshot and the calls that take an id) -----
//
// Every store that keeps snapshots validates labels and words unknown ids
// with these, so a client sees one behaviour whichever store serves it.

// The longest snapshot label, in bytes.
inline constexpr size_t kMaxSnapshotLabelBytes = 255;

// OK, or InvalidArgument naming the label and why:
//   "Invalid snapshot label 'a\nb': contains a control character"
//   "Invalid snapshot label 'x\xff': is not valid UTF-8"
//   "Invalid snapshot label 'xxx...' (300 bytes): longer than the limit of 255 bytes"
// Control characters are those of path.h (U+0000-U+001F, U+007F); invalid
// UTF-8 is refused too, since a label is shown on terminals and in JSON. An
// empty label is valid (it is kept as given).
Status CheckSnapshotLabel(std::string_view label);

// The number an id names, if `id` is a canonical snapshot id: the decimal
// form of a number from 1 up, without sign, spaces or leading zeros ("7",
// not "07" or "+7"). Ids are issued as 1, 2, 3... per workspace and never
// reused, so anything else names no snapshot.
std::optional<uint64_t> ParseSnapshotId(std::string_view id);

// NotFound "Snapshot '<id>' does not exist in '<project>'", both quoted and
// escaped; `project` is the workspace's URI (DisplayRoot() of its live
// state), so that the user sees which workspace was looked in.
Status SnapshotNotFoundError(std::string_view id, std::string_view project);

}  // namespace toolvfs
