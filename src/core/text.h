// Text helpers shared by every component: UTF-8 checks and quoting of
// untrusted strings in one-line messages.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace toolvfs {

// True if `text` is well-formed UTF-8 (no overlong forms, no surrogates,
// nothing above U+10FFFF).
bool IsValidUtf8(std::string_view text);

// Length of the longest prefix of `text` that is well-formed UTF-8.
size_t ValidUtf8Prefix(std::string_view text);

// `text` with every ill-formed byte sequence replaced by U+FFFD.
std::string ToValidUtf8(std::string_view text);

// `text` made safe to show on one line: control characters, backslash and
// invalid UTF-8 bytes are written as escapes (\n, \t, \x1b, \\). Keeps a
// message one line and shows the user the exact value.
std::string EscapeForDisplay(std::string_view text);

// EscapeForDisplay wrapped in single quotes: 'a\nb'.
std::string Quote(std::string_view text);

// Optimal-string-alignment distance: Levenshtein plus adjacent swaps, so
// "filesytem" and "fielsystem" are both one edit from "filesystem". Cost
// is a.size() x b.size(); callers bound the lengths they compare.
size_t EditDistance(std::string_view a, std::string_view b);

// `text` as one word for a POSIX shell: in single quotes, each ' written
// as '\''.
std::string ShellQuoted(std::string_view text);

// `text` as one word for a POSIX shell, as a person would type it: bare
// when it is plainly one word (letters, digits, _-+=.,:/@%), else
// ShellQuoted.
std::string ShellWord(std::string_view text);

// `text` with the ASCII letters A-Z made lowercase; every other byte (UTF-8
// included) kept. For the case-insensitive parts of URLs, schemes and
// header values, which are ASCII by definition.
std::string AsciiLowercase(std::string_view text);

}  // namespace toolvfs
