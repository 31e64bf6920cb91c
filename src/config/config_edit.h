// Surgical edits of a toolvfs.toml's text: a rule added where a person
// would add it, every other byte (comments, order, spacing, quoting) kept.
// toml++ would re-serialise the whole file and lose all of that, so the
// text is edited line by line and the result checked by parsing it.
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"

namespace toolvfs {

// `text` with `value` added to the string array `key` ("filesystem.allow",
// "filesystem.writable", "network.allow") of tool `tool_name`'s sandbox
// table:
// - into an existing array (one line or several; the new element follows
//   the last one, in the style of the others), whether the array is
//   written `filesystem.writable = [...]` under [tools.NAME.sandbox] or
//   `writable = [...]` under [tools.NAME.sandbox.filesystem];
// - else as a new line `KEY = ["VALUE"]` after the last key of one of those
//   tables;
// - else as a new [tools.NAME.sandbox] table after the tool's last table.
// Unsupported, saying what to add by hand, for layouts this does
// not edit (inline tables, the key written another way, a boolean
// `writable`); AlreadyExists when the array holds the value already. The
// caller checks the result with CheckConfigText before writing it.
Result<std::string> AddSandboxRule(std::string_view text, std::string_view tool_name, std::string_view key,
                                   std::string_view value);

// A unified diff of `before` and `after` as `diff -u` prints it, three
// lines of context, one hunk per run of changed lines, with `path` in the
// ---/+++ header. Empty when the texts are equal.
std::string UnifiedDiff(std::string_view before, std::string_view after, std::string_view path);

// `value` as a TOML basic string, so that rules and hints can be pasted
// into toolvfs.toml as they are shown: quoted, '"' and '\' escaped, \n \t
// \r as such, other control characters as \uXXXX.
std::string TomlString(std::string_view value);

// One part of a TOML key as TOML writes it: bare (letters, digits, _ and
// -), else a TomlString.
std::string TomlKey(std::string_view part);

}  // namespace toolvfs
