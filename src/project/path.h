// Project paths (SPEC.md §2.1).
//
// A project path is a root-relative string with '/' separators. Every
// ProjectFiles operation normalizes its path arguments with NormalizePath
// before anything else, so backends only ever see normalized paths.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace toolvfs {

// The longest project path accepted, in bytes (Linux's PATH_MAX): it bounds
// every walk of a path, and of the names built while walking it.
inline constexpr size_t kMaxPathBytes = 4096;

// The longest name of one entry, in bytes (Linux's NAME_MAX): a store that
// keeps names itself (memory, sqlite, postgres) would otherwise hold a file
// no directory can: its workspace could not be exported or materialized.
inline constexpr size_t kMaxNameBytes = 255;

// Returns the normalized form of `path`: "" (the root) for "" and ".";
// duplicate slashes, "." segments and a trailing slash removed; ".."
// segments resolved lexically ("a/../b" -> "b").
//
// Fails with InvalidArgument, naming the path and the reason, if the path
// is longer than kMaxPathBytes, has a segment longer than kMaxNameBytes,
// is absolute, contains a NUL byte, a control character (U+0000-U+001F,
// U+007F) or invalid UTF-8. Fails with PermissionDenied if ".." would
// leave the root ("../x", "a/../../x").
Result<std::string> NormalizePath(std::string_view path);

// The segments of a normalized path; none for the root.
std::vector<std::string_view> PathSegments(std::string_view normalized);

// Joins a normalized directory path and one entry name.
std::string JoinPath(std::string_view directory, std::string_view name);

// The directory part of a normalized path ("" for a top-level entry).
std::string_view ParentPath(std::string_view normalized);

// The last segment of a normalized path ("" for the root).
std::string_view BaseName(std::string_view normalized);

// True if `path` equals `prefix` or lies below it, segment-wise:
// "src" contains "src/a" but not "src_gen". The root "" contains everything.
bool PathContains(std::string_view prefix, std::string_view path);

// How a path is shown in messages: quoted, escaped, "." for the root.
std::string DisplayPath(std::string_view normalized);

}  // namespace toolvfs
