// libFuzzer target for the store URIs (docs/stores.md): ValidateWorkspaceName
// agrees with an independent statement of the name rule; ParseWorkspaceAddress
// never crashes, its errors are one line of UTF-8 naming the URI, and what it
// accepts is a non-empty location with a valid workspace (and snapshot) whose
// parts join back to the input and parse again to the same parts; and
// RedactPostgresUri hides the password of a postgres:// URI built around one,
// in either place libpq reads it (user:PASSWORD@, a `password` query
// parameter with its key maybe percent-encoded), in its output and in every
// message ParseWorkspaceAddress gives with it, and redacting twice changes
// nothing; the same for the `password` value of a keyword/value
// connection string, quoted or bare. Build and run with `make fuzz`.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/text.h"
#include "project/sql/postgres_uri.h"
#include "project/sql/workspace_uri.h"

namespace {

using toolvfs::ParseWorkspaceAddress;
using toolvfs::RedactPostgresUri;
using toolvfs::Result;
using toolvfs::Status;
using toolvfs::StatusCode;
using toolvfs::WorkspaceAddress;

// UTF-8 as RFC 3629 has it, written out here rather than calling the
// project's IsValidUtf8, so that the two can disagree: no overlong forms,
// no surrogates, nothing past U+10FFFF.
bool IsUtf8(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    auto lead = static_cast<unsigned char>(text[i]);
    if (lead < 0x80) {
      ++i;
      continue;
    }
    size_t length = 0;
    uint32_t code_point = 0;
    uint32_t smallest = 0;
    if ((lead & 0xe0) == 0xc0) {
      length = 2, code_point = lead & 0x1fu, smallest = 0x80;
    } else if ((lead & 0xf0) == 0xe0) {
      length = 3, code_point = lead & 0x0fu, smallest = 0x800;
    } else if ((lead & 0xf8) == 0xf0) {
      length = 4, code_point = lead & 0x07u, smallest = 0x10000;
    } else {
      return false;
    }
    if (text.size() - i < length) return false;
    for (size_t k = 1; k < length; ++k) {
      auto trail = static_cast<unsigned char>(text[i + k]);
      if ((trail & 0xc0) != 0x80) return false;
      code_point = code_point << 6 | (trail & 0x3fu);
    }
    if (code_point < smallest || code_point > 0x10ffff || (code_point >= 0xd800 && code_point <= 0xdfff)) return false;
    i += length;
  }
  return true;
}

// The name rule of docs/stores.md, stated independently of workspace_uri.cc.
bool IsValidName(std::string_view name) {
  if (name.empty() || name.size() > 255 || !IsUtf8(name)) return false;
  for (char c : name) {
    auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f || c == '#' || c == '@') return false;
  }
  // C1 controls (U+0080-U+009F) and U+2028, U+2029, as code points.
  for (size_t i = 0; i < name.size();) {
    auto byte = static_cast<unsigned char>(name[i]);
    const size_t length = byte < 0x80 ? 1 : byte < 0xe0 ? 2 : byte < 0xf0 ? 3 : 4;
    uint32_t code_point = length == 1 ? byte : byte & (0x7f >> length);
    for (size_t k = 1; k < length; ++k) code_point = code_point << 6 | (static_cast<unsigned char>(name[i + k]) & 0x3f);
    if ((code_point >= 0x80 && code_point <= 0x9f) || code_point == 0x2028 || code_point == 0x2029) return false;
    i += length;
  }
  return true;
}

// A message as the user sees it: one line of valid UTF-8.
void CheckMessage(const Status& status) {
  if (status.code() != StatusCode::kInvalidArgument) std::abort();
  if (status.message().find_first_of("\n\r") != std::string::npos) std::abort();
  if (!IsUtf8(status.message())) std::abort();
}

void CheckName(std::string_view name) {
  Status status = toolvfs::ValidateWorkspaceName("workspace name", name);
  if (status.ok() != IsValidName(name)) std::abort();
  if (status.ok()) return;
  CheckMessage(status);
  if (!status.message().starts_with("Invalid workspace name '")) std::abort();
}

void CheckAddress(std::string_view rest) {
  const std::string uri = "sqlite:" + std::string(rest);
  Result<WorkspaceAddress> address = ParseWorkspaceAddress(uri, rest);
  if (!address.ok()) {
    CheckMessage(address.status());
    // The contract (workspace_uri.h): every refusal names the URI.
    if (address.status().message().find(toolvfs::Quote(uri)) == std::string::npos) std::abort();
    return;
  }
  if (address->location.empty() || address->location.find('#') != std::string::npos) std::abort();
  if (!IsValidName(address->workspace)) std::abort();
  if (address->snapshot && !IsValidName(*address->snapshot)) std::abort();
  // The parts are the input cut at its '#' and the '@' after it, nothing
  // dropped or added; without a '#' the workspace is the default one.
  std::string joined = address->location;
  if (rest.find('#') == std::string_view::npos) {
    if (joined != rest || address->workspace != toolvfs::kDefaultWorkspace || address->snapshot) std::abort();
  } else {
    joined += "#" + address->workspace;
    if (address->snapshot) joined += "@" + *address->snapshot;
    if (joined != rest) std::abort();
  }
  const std::string rejoined = address->location + "#" + address->workspace +
                               (address->snapshot ? "@" + *address->snapshot : std::string());
  Result<WorkspaceAddress> again = ParseWorkspaceAddress("sqlite:" + rejoined, rejoined);
  if (!again.ok() || again->location != address->location || again->workspace != address->workspace ||
      again->snapshot != address->snapshot) {
    std::abort();
  }
}

// `text` without the bytes in `excluded`, so that a field cannot end early
// where libpq would end it.
std::string Without(std::string text, std::string_view excluded) {
  std::erase_if(text, [&](char c) { return excluded.find(c) != std::string_view::npos; });
  return text;
}

// What a user sees of `uri`, as OpenPostgresStore and the CLI show it: the
// redacted URI, the message ParseWorkspaceAddress gives with it, and the
// redacted location of what it accepts.
std::string Shown(const std::string& uri) {
  std::string shown = RedactPostgresUri(uri);
  if (RedactPostgresUri(shown) != shown) std::abort();  // redacting twice changes nothing
  Result<WorkspaceAddress> address = ParseWorkspaceAddress(shown, uri);
  if (!address.ok()) {
    CheckMessage(address.status());
    return shown + "\n" + address.status().message();
  }
  return shown + "\n" + RedactPostgresUri(address->location) + "\n" + address->workspace + "\n" +
         address->snapshot.value_or("");
}

// Builds a postgres:// URI with a password where libpq reads one (checked
// against libpq 15's PQconninfoParse by hand): between the first ':' and the
// first '@' when that '@' comes before any '/', or as the value of a query
// parameter whose key, percent-decoded, is "password" (up to the next '&').
// Only the part before '#' reaches libpq (docs/stores.md), so no password
// holds a '#'. What is shown must not depend on the password: the same URI
// with another password must show the same, and a distinctive password must
// not appear at all.
void CheckRedaction(FuzzedDataProvider& fuzz) {
  const std::string scheme = fuzz.ConsumeBool() ? "postgres://" : "postgresql://";
  const bool in_query = fuzz.ConsumeBool();
  std::string before;
  std::string after;
  std::string password;
  if (!in_query) {
    before = scheme + Without(fuzz.ConsumeRandomLengthString(64), std::string_view(":@/#\0", 5)) + ":";
    password = Without(fuzz.ConsumeRandomLengthString(64), std::string_view("@/#\0", 4));
    after = "@" + fuzz.ConsumeRandomLengthString(256);
  } else {
    // A '/' after the authority, so that libpq does not take an '@' in the
    // query for the end of a user name.
    before = scheme + Without(fuzz.ConsumeRandomLengthString(64), "/?#") + "/" +
             Without(fuzz.ConsumeRandomLengthString(32), "?#") + "?";
    std::string earlier = Without(fuzz.ConsumeRandomLengthString(64), "#");
    if (!earlier.empty()) before += earlier + "&";
    // libpq decodes %XX in a key, in either case of hex digit.
    for (char c : std::string_view("password")) {
      if (fuzz.ConsumeBool()) {
        constexpr std::string_view kHex = "0123456789abcdef0123456789ABCDEF";
        const size_t upper = fuzz.ConsumeBool() ? 16 : 0;
        before += '%';
        before += kHex[upper + (static_cast<unsigned char>(c) >> 4)];
        before += kHex[upper + (static_cast<unsigned char>(c) & 0xf)];
      } else {
        before += c;
      }
    }
    before += "=";
    password = Without(fuzz.ConsumeRandomLengthString(64), std::string_view("&#\0", 3));
    std::string later = Without(fuzz.ConsumeRandomLengthString(64), "#");
    if (!later.empty()) after = "&" + later;
  }
  if (fuzz.ConsumeBool()) after += "#" + fuzz.ConsumeRandomLengthString(64);
  if (password.empty()) return;  // nothing to hide

  const std::string shown = Shown(before + password + after);
  // Another password, distinct from this one, must show the same.
  const std::string other = password == "x" ? "y" : "x";
  if (Shown(before + other + after) != shown) std::abort();
  // A password found nowhere else in the URI must not be in what is shown.
  constexpr std::string_view kMarker = "Pw0rdMarker";
  const std::string uri = before + std::string(kMarker) + after;
  if (before.find(kMarker) == std::string::npos && after.find(kMarker) == std::string::npos &&
      Shown(uri).find(kMarker) != std::string::npos) {
    std::abort();
  }
}

// `value` written for a keyword/value connection string so that libpq
// (conninfo_parse) reads it back: quoted, with ' and \ escaped, or bare,
// with whitespace, quotes and \ escaped (not empty: a bare empty value is
// none, and libpq reads the next word instead).
std::string ConnectionStringValue(std::string_view value, bool quoted) {
  std::string written = quoted ? "'" : "";
  for (char c : value) {
    const bool escaped = c == '\\' || c == '\'' || (!quoted && (c == ' ' || (c >= '\t' && c <= '\r')));
    if (escaped) written += '\\';
    written += c;
  }
  if (quoted) written += '\'';
  return written;
}

// The same promise for a keyword/value connection string (as a
// --session-store may be given): well-formed KEYWORD=VALUE pairs, then the
// password keyword in any case with whitespace around '=' or none, its value
// quoted or bare, then anything.
void CheckConnectionStringRedaction(FuzzedDataProvider& fuzz) {
  std::string before;
  const int pairs = fuzz.ConsumeIntegralInRange(0, 3);
  for (int i = 0; i < pairs; ++i) {
    std::string keyword = Without(fuzz.ConsumeRandomLengthString(16), std::string_view("#= \t\n\v\f\r\0", 9));
    if (keyword.empty()) keyword = "host";
    const std::string value = Without(fuzz.ConsumeRandomLengthString(32), std::string_view("#\0", 2));
    // An empty value is written quoted: bare, libpq would read the next word.
    before += keyword + "=" + ConnectionStringValue(value, value.empty() || fuzz.ConsumeBool()) + " ";
  }
  before += fuzz.ConsumeBool() ? "password" : "PassWord";
  before += fuzz.ConsumeBool() ? " = " : "=";
  const bool quoted = fuzz.ConsumeBool();
  // As in a URI, only the part before '#' is the connection string.
  const std::string password = Without(fuzz.ConsumeRandomLengthString(64), std::string_view("#\0", 2));
  const std::string after = " " + fuzz.ConsumeRandomLengthString(128);
  if (password.empty()) return;  // a bare empty value is not one: libpq reads the next word
  // libpq reads a string with these starts as a URI, which CheckRedaction covers.
  if (before.starts_with("postgresql://") || before.starts_with("postgres://")) return;

  const std::string shown = Shown(before + ConnectionStringValue(password, quoted) + after);
  const std::string other = password == "x" ? "y" : "x";
  if (Shown(before + ConnectionStringValue(other, quoted) + after) != shown) std::abort();
  constexpr std::string_view kMarker = "Pw0rdMarker";
  if (before.find(kMarker) == std::string::npos && after.find(kMarker) == std::string::npos &&
      Shown(before + ConnectionStringValue(kMarker, quoted) + after).find(kMarker) != std::string::npos) {
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  CheckName(input);
  CheckAddress(input);
  FuzzedDataProvider fuzz(data, size);
  CheckRedaction(fuzz);
  CheckConnectionStringRedaction(fuzz);
  return 0;
}
