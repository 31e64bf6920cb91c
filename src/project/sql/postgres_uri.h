// PostgreSQL URIs as they may be shown, without libpq: for front ends
// (the CLI) that print a project URI the user gave.
#pragma once

#include <string>
#include <string_view>

namespace toolvfs {

// `uri` as it may be shown: every password libpq would read from the part
// before '#' of a postgres:// URI, user:PASSWORD@ (and up to the last '@'
// of the authority, for "me:p@ss@host") and the value of a query parameter
// whose key is "password" once percent-decoded, is replaced by "***"; so is
// the value of a `password` keyword of a keyword/value connection string
// ("password='a b'", quotes and backslash escapes read as libpq reads
// them), and all after "://" up to '#' of a string that only looks like
// a URI (libpq reads it as keyword/value and refuses it: "POSTGRES://…",
// another scheme). What is shown does not depend on the password, and
// redacting again changes nothing.
std::string RedactPostgresUri(std::string_view uri);

}  // namespace toolvfs
