// Base64 for binary content on the wire: fs.read/fs.write and http.*
// `encoding: "base64"` (D11). RFC 4648 §4: standard alphabet, '=' padding.
//
// Our own table-driven code rather than a Debian package: libb64 skips
// bytes outside the alphabet instead of rejecting them, and libmodpbase64
// rejects them without saying where and accepts non-zero unused bits in the
// last group. A tool's malformed content must fail loudly, with a message
// that points at the problem, not be written half-decoded.
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"

namespace toolvfs {

std::string Base64Encode(std::string_view bytes);

// Strict: only the standard alphabet, '=' padding to a multiple of 4 (0, 1
// or 2 of them, at the end), no whitespace or line breaks, and zero unused
// bits in the last group, so every byte string has exactly one accepted
// encoding. Otherwise InvalidArgument naming the offset and the byte, e.g.
// "Invalid base64: byte '\n' at offset 76 is not in the alphabet".
Result<std::string> Base64Decode(std::string_view text);

}  // namespace toolvfs
