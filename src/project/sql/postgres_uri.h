// PostgreSQL URIs as they may be shown, without libpq: for front ends
// (the CLI) that print a project URI the user gave.
#pragma once

#include <string>
#include <string_view>

namespace toolvfs {

// `uri` as it may be shown: the password of a postgres:// URI (user:PASSWORD@)
// and a `password=` parameter are replaced by "***".
std::string RedactPostgresUri(std::string_view uri);

}  // namespace toolvfs
