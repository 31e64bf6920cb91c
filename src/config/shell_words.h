// Splitting a command string into argv words the way a POSIX shell does,
// without ever running a shell (`command = "tools/x --fast"`, docs/config.md).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace toolvfs {

// Splits `command` into words. The rules are the POSIX shell's quoting rules
// and nothing else is interpreted:
//   - words are separated by unquoted spaces, tabs and newlines;
//   - '...' keeps everything literally; "..." keeps everything except that
//     a backslash escapes $ ` " \ and newline; an unquoted backslash keeps the
//     next character literally; backslash-newline is removed (continuation);
//   - '' and "" make an empty word;
//   - a template `{{ ... }}` (outside single quotes) is copied verbatim up to
//     its "}}", so `--x {{ tool.arguments | tojson }}` is two words and
//     quotes or spaces inside the braces never split a placeholder;
//   - a variable `${toolvfs.NAME}` (outside single quotes) is copied verbatim
//     up to its "}" for the config layer to replace (config.h).
// Because no shell runs, characters a shell would act on are errors rather
// than silently passed as arguments: unquoted | & ; < > ( ), $ and ` outside
// single quotes, and # at the start of a word. Quote them to pass them on.
//
// Fails with InvalidArgument on an unbalanced quote, a trailing backslash, an
// unterminated "{{", one of the characters above, or no words at all. The
// message is a predicate without the input ("has an unbalanced single quote",
// "is empty") so the caller can prefix the key: "'tools.x.command' is empty".
Result<std::vector<std::string>> SplitShellWords(std::string_view command);

}  // namespace toolvfs
