#include "project/sql/postgres_database.h"

#include <poll.h>

#include <algorithm>
#include <cctype>
#include <atomic>
#include <charconv>
#include <cstdlib>
#include <optional>
#include <random>
#include <thread>
#include <utility>
#include <vector>

#include "core/text.h"

namespace toolvfs {
namespace {

// libpq's messages end with a newline and may span lines, the next
// indented by a tab ("...failed: Connection refused\n\tIs the server
// running..."); ours are one line: each run of line breaks and tabs
// becomes one space.
std::string OneLine(std::string_view message) {
  std::string line;
  for (char c : message) {
    if (c == '\n' || c == '\r' || c == '\t' || c == '\v' || c == '\f') {
      if (!line.empty() && line.back() != ' ') line += ' ';
    } else {
      line += c;
    }
  }
  while (!line.empty() && line.back() == ' ') line.pop_back();
  return line;
}

}  // namespace

Status ConnectionFailure(std::string_view display, std::string_view message) {
  // libpq gives no SQLSTATE for a refused connection, only the server's
  // text; these two phrases are the server's own (English, as the server's
  // lc_messages are at connection time) and name what the user must fix.
  const std::string text = "Cannot connect to " + Quote(display) + ": " + OneLine(message);
  if (message.find("password authentication failed") != std::string_view::npos ||
      message.find("no password supplied") != std::string_view::npos) {
    return PermissionDeniedError(text + "; check the user and password");
  }
  if (message.find("does not exist") != std::string_view::npos &&
      message.find("database") != std::string_view::npos) {
    return NotFoundError(text + "; create it or name another database");
  }
  return UnavailableError(text);
}

namespace {

// `text` with %XX decoded as libpq decodes a URI query key; nothing when
// libpq would refuse it (a bad escape or %00), as it then never connects.
std::optional<std::string> PercentDecoded(std::string_view text) {
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string decoded;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      decoded += text[i];
      continue;
    }
    if (text.size() - i < 3 || hex(text[i + 1]) < 0 || hex(text[i + 2]) < 0) return std::nullopt;
    const int byte = hex(text[i + 1]) * 16 + hex(text[i + 2]);
    if (byte == 0) return std::nullopt;
    decoded += static_cast<char>(byte);
    i += 2;
  }
  return decoded;
}

// The ranges [first, second) of a postgres:// URI that hold a password, as
// libpq (fe-connect.c, conninfo_uri_parse_options) reads one, and a little
// more where a user's mistake makes a password likely.
std::vector<std::pair<size_t, size_t>> UriPasswordRanges(std::string_view uri, size_t authority) {
  std::vector<std::pair<size_t, size_t>> ranges;
  // Only what comes before '#' is given to libpq; the rest is the workspace.
  const size_t end = std::min(uri.find('#', authority), uri.size());
  size_t host = authority;
  // user[:password]@ when an '@' comes before any '/' (not '?': libpq
  // takes "me:se?cret@host" as the password "se?cret"); the password runs
  // from the first ':' to that first '@'.
  const size_t at = uri.find_first_of("@/", authority);
  if (at < end && uri[at] == '@') {
    host = at + 1;
    const size_t colon = uri.find(':', authority);
    if (colon < at) {
      // An unencoded '@' in a password ("me:p@ss@host") ends it for libpq,
      // but the rest is most likely the password too: up to the last '@'
      // before the host's end.
      const size_t host_end = std::min(uri.find_first_of("/?", host), end);
      const size_t last_at = uri.rfind('@', host_end - 1);
      ranges.emplace_back(colon + 1, std::max(at, last_at));
    }
  }
  // Query parameters: after the first '?' past the user, "KEY=VALUE"
  // joined by '&'; libpq percent-decodes the key ("pass%77ord" is
  // "password") and ends a value at '&' only (spaces included).
  const size_t query = uri.find('?', host);
  if (query >= end) return ranges;
  for (size_t start = query + 1; start <= end;) {
    const size_t stop = std::min(uri.find('&', start), end);
    const std::string_view parameter = uri.substr(start, stop - start);
    const size_t equals = parameter.find('=');
    // libpq's keys are case-sensitive, but "Password=" is likely meant as one
    // (and the message saying libpq refused it shows the URI as redacted here).
    std::optional<std::string> key =
        equals == std::string_view::npos ? std::nullopt : PercentDecoded(parameter.substr(0, equals));
    if (key && AsciiLowercase(*key) == "password") {
      ranges.emplace_back(start + equals + 1, stop);
    }
    start = stop + 1;
  }
  return ranges;
}

bool IsConnectionStringSpace(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

// The end of the value that starts at `at` of a keyword/value connection
// string, read as libpq (fe-connect.c, conninfo_parse) reads one: up to
// whitespace, or, opened by a quote, up to the closing quote (included;
// the end of the string if there is none); a backslash escapes the next
// character either way.
size_t ConnectionStringValueEnd(std::string_view conninfo, size_t at) {
  const bool quoted = at < conninfo.size() && conninfo[at] == '\'';
  for (size_t i = quoted ? at + 1 : at; i < conninfo.size(); ++i) {
    const char c = conninfo[i];
    if (c == '\\') {
      ++i;
    } else if (quoted ? c == '\'' : IsConnectionStringSpace(c)) {
      return quoted ? i + 1 : i;
    }
  }
  return conninfo.size();
}

// The ranges of a keyword/value connection string ("host=/run
// password='a b'") that hold a password, read as libpq reads the string:
// each KEYWORD [whitespace] = [whitespace] VALUE, the value of a keyword
// that is "password" in any case (libpq takes only "password", but
// "Password" is likely meant as one). A keyword without '=' (libpq refuses
// the string, and its refusal shows the string as redacted here) is
// followed by the next value when it is "password", and by the next
// keyword otherwise.
std::vector<std::pair<size_t, size_t>> ConnectionStringPasswordRanges(std::string_view conninfo) {
  std::vector<std::pair<size_t, size_t>> ranges;
  auto skip_space = [&](size_t at) {
    while (at < conninfo.size() && IsConnectionStringSpace(conninfo[at])) ++at;
    return at;
  };
  for (size_t at = skip_space(0); at < conninfo.size(); at = skip_space(at)) {
    const size_t keyword = at;
    while (at < conninfo.size() && conninfo[at] != '=' && !IsConnectionStringSpace(conninfo[at])) ++at;
    const bool is_password = AsciiLowercase(conninfo.substr(keyword, at - keyword)) == "password";
    at = skip_space(at);
    const bool has_value = at < conninfo.size() && conninfo[at] == '=';
    if (!has_value && !is_password) continue;
    if (has_value) at = skip_space(at + 1);
    const size_t value_end = ConnectionStringValueEnd(conninfo, at);
    if (is_password) ranges.emplace_back(at, value_end);
    at = value_end;
  }
  return ranges;
}

// Where the authority of `conninfo` starts if it looks like a URI: after
// "SCHEME://" at its start, whitespace before it skipped; npos if not.
size_t UriAuthority(std::string_view conninfo) {
  size_t at = 0;
  while (at < conninfo.size() && IsConnectionStringSpace(conninfo[at])) ++at;
  const size_t scheme = at;
  while (at < conninfo.size() && (std::isalnum(static_cast<unsigned char>(conninfo[at])) ||
                                  conninfo[at] == '+' || conninfo[at] == '-' || conninfo[at] == '.')) {
    ++at;
  }
  if (at == scheme || !conninfo.substr(at).starts_with("://")) return std::string_view::npos;
  return at + 3;
}

// The ranges of `conninfo` that hold a password. libpq reads a URI when
// the string starts with postgresql:// or postgres://, and a keyword/value
// string otherwise. A string that only looks like a URI (another scheme,
// capitals, whitespace first) libpq reads as keyword/value and refuses,
// its refusal showing the string as redacted here; what was meant cannot be
// told, so all of it from "://" up to '#' is hidden.
std::vector<std::pair<size_t, size_t>> PasswordRanges(std::string_view conninfo) {
  const size_t authority = UriAuthority(conninfo);
  if (conninfo.starts_with("postgresql://") || conninfo.starts_with("postgres://")) {
    return UriPasswordRanges(conninfo, authority);
  }
  if (authority != std::string_view::npos) {
    return {{authority, std::min(conninfo.find('#', authority), conninfo.size())}};
  }
  return ConnectionStringPasswordRanges(conninfo);
}

// A keyword/value string's value as libpq reads it: without the quotes
// around it and with each backslash escape resolved.
std::string ConnectionStringValue(std::string_view written) {
  const bool quoted = written.starts_with('\'');
  if (quoted) written.remove_prefix(1);
  if (quoted && written.ends_with('\'')) written.remove_suffix(1);
  std::string value;
  for (size_t i = 0; i < written.size(); ++i) {
    if (written[i] == '\\' && i + 1 < written.size()) ++i;
    value += written[i];
  }
  return value;
}

// `message` (libpq's, about a connection to `conninfo`) with every password
// of `conninfo` in it, as written and as libpq decodes it, replaced by
// "***": libpq quotes the value it could not parse ("invalid
// percent-encoded token: \"se%zzcret\""), which may be the password.
std::string HidePasswords(std::string_view conninfo, std::string message) {
  std::vector<std::string> passwords;
  for (auto [first, last] : PasswordRanges(conninfo)) {
    if (first >= last) continue;
    std::string_view written = conninfo.substr(first, last - first);
    passwords.emplace_back(written);
    // As libpq decodes it, in either reading (hiding more costs nothing).
    if (std::optional<std::string> decoded = PercentDecoded(written); decoded && !decoded->empty()) {
      passwords.push_back(std::move(*decoded));
    }
    if (std::string value = ConnectionStringValue(written); !value.empty()) passwords.push_back(std::move(value));
  }
  // The longest first, so that a password containing another is hidden whole.
  std::sort(passwords.begin(), passwords.end(),
            [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  for (const std::string& password : passwords) {
    for (size_t at = message.find(password); at != std::string::npos; at = message.find(password, at + 3)) {
      message.replace(at, password.size(), "***");
    }
  }
  return message;
}

}  // namespace

std::string RedactPostgresUri(std::string_view uri) {
  std::vector<std::pair<size_t, size_t>> ranges = PasswordRanges(uri);
  // Ranges may overlap ("password=password=x"): each maximal stretch becomes
  // one "***", so that what is shown does not depend on the password, not
  // even on its length. A quoted value of a keyword/value string stays
  // quoted: bare, "***" would run on into what follows its closing quote
  // ("password='a b''x"), and redacting again would hide more.
  std::sort(ranges.begin(), ranges.end());
  const bool keyword_value = UriAuthority(uri) == std::string_view::npos;
  std::string redacted;
  size_t shown_up_to = 0;
  for (size_t i = 0; i < ranges.size();) {
    auto [first, last] = ranges[i];
    for (++i; i < ranges.size() && ranges[i].first <= last; ++i) last = std::max(last, ranges[i].second);
    redacted.append(uri.substr(shown_up_to, first - shown_up_to));
    redacted += keyword_value && first < uri.size() && uri[first] == '\'' ? "'***'" : "***";
    shown_up_to = last;
  }
  redacted.append(uri.substr(shown_up_to));
  return redacted;
}

bool IsRetryableSqlState(std::string_view state) { return state == "40001" || state == "40P01"; }

bool IsUnavailableSqlState(std::string_view state) {
  // Class 08: connection exception; 57P01 admin_shutdown, 57P02
  // crash_shutdown, 57P03 cannot_connect_now (starting up or shutting down).
  return state.starts_with("08") || state == "57P01" || state == "57P02" || state == "57P03";
}

Status PostgresStatus(std::string_view sql_state, std::string_view what, std::string_view message) {
  std::string text = std::string(what) + ": " + OneLine(message);
  if (!sql_state.empty()) text += " (SQLSTATE " + std::string(sql_state) + ")";
  if (IsRetryableSqlState(sql_state)) return ChangedError(std::move(text));
  if (IsUnavailableSqlState(sql_state)) return UnavailableError(text + "; the server is unavailable, try again once it is back");
  if (sql_state == "53100") return ResourceExhaustedError(text + "; the server's disk is full");
  if (sql_state == "53200" || sql_state == "53300") return ResourceExhaustedError(std::move(text));
  if (sql_state == "42501" || sql_state == "25006") return PermissionDeniedError(std::move(text));
  if (sql_state == "57014") return CancelledError(std::move(text));
  if (sql_state.starts_with("23") || sql_state.starts_with("42")) return InternalError(std::move(text));
  return IoError(std::move(text));
}

PostgresParameter PostgresParameter::Integer(int64_t value) {
  PostgresParameter parameter({}, false, false);
  parameter.owned_ = std::make_shared<std::string>(std::to_string(value));
  return parameter;
}

std::string_view PostgresResult::Text(int row, int column) const {
  return std::string_view(PQgetvalue(result_.get(), row, column),
                          static_cast<size_t>(PQgetlength(result_.get(), row, column)));
}

int64_t PostgresResult::Int(int row, int column) const {
  std::string_view text = Text(row, column);
  if (IsBinary(column)) {
    // Network byte order, signed, of the column's own width.
    uint64_t bits = 0;
    for (unsigned char byte : text) bits = bits << 8 | byte;
    switch (text.size()) {
      case 2: return static_cast<int16_t>(bits);
      case 4: return static_cast<int32_t>(bits);
      case 8: return static_cast<int64_t>(bits);
      default: break;  // NULL (no bytes), or not an integer column: parsed below, 0
    }
  }
  int64_t value = 0;
  std::from_chars(text.data(), text.data() + text.size(), value);
  return value;
}

std::optional<int64_t> PostgresResult::OptionalInt(int row, int column) const {
  if (IsNull(row, column)) return std::nullopt;
  return Int(row, column);
}

std::string PostgresResult::Bytes(int row, int column) const {
  if (IsBinary(column)) return std::string(Text(row, column));
  const auto* escaped = reinterpret_cast<const unsigned char*>(PQgetvalue(result_.get(), row, column));
  size_t length = 0;
  unsigned char* bytes = PQunescapeBytea(escaped, &length);
  if (bytes == nullptr) return std::string();
  std::string decoded(reinterpret_cast<const char*>(bytes), length);
  PQfreemem(bytes);
  return decoded;
}

Result<std::unique_ptr<PostgresConnection>> PostgresConnection::Open(const std::string& conninfo,
                                                                     std::string display) {
  // A host that drops packets would otherwise hold the caller for the
  // operating system's TCP timeout (minutes): unless the URI or
  // PGCONNECT_TIMEOUT says otherwise, give up after kDefaultConnectTimeoutSeconds.
  // The URI comes after the default so its own connect_timeout wins.
  std::vector<const char*> keywords;
  std::vector<const char*> values;
  const std::string default_timeout = std::to_string(kDefaultConnectTimeoutSeconds);
  const char* environment_timeout = std::getenv("PGCONNECT_TIMEOUT");
  if (environment_timeout == nullptr || environment_timeout[0] == '\0') {
    keywords.push_back("connect_timeout");
    values.push_back(default_timeout.c_str());
  }
  keywords.push_back("dbname");
  values.push_back(conninfo.c_str());
  keywords.push_back(nullptr);
  values.push_back(nullptr);
  PGconn* connection = PQconnectdbParams(keywords.data(), values.data(), /*expand_dbname=*/1);
  if (connection == nullptr) return ResourceExhaustedError("Cannot connect to " + Quote(display) + ": out of memory");
  if (PQstatus(connection) != CONNECTION_OK) {
    std::string message = HidePasswords(conninfo, PQerrorMessage(connection));
    PQfinish(connection);
    return ConnectionFailure(display, message);
  }
  // libpq prints the server's notices and warnings (e.g. "no transaction
  // in progress" after a failed COMMIT) on stderr, which belongs to the
  // host's own output; failures reach us as results, so notices are dropped.
  PQsetNoticeProcessor(connection, [](void*, const char*) {}, nullptr);
  // The server process of a connection allocates a few hundred KiB for a
  // run of the one-statement write (postgres_file_write.cc) and frees it at
  // the statement's end. With glibc's default thresholds (mallopt(3):
  // M_MMAP_THRESHOLD and M_TRIM_THRESHOLD, 128 KiB) that memory went back
  // to the system after each write and the next faulted it in again, page
  // by page (about 40 pages a write): writes 5-10 times slower, depending on
  // the state of the allocator the server process was forked with. glibc
  // raises both thresholds for good when a block it mapped is freed, so one
  // statement that allocates and frees 1 MiB keeps that memory in the
  // process for the connection's life. An optimization only: a server that
  // refuses it (or another allocator) changes nothing, so its answer is
  // not looked at.
  PQclear(PQexec(connection, "SELECT length(repeat('x', 1048576))"));
  std::unique_ptr<PostgresConnection> opened(new PostgresConnection(connection, std::move(display)));
  // The level writes begin at (begin_write()). An engine without SHOW, or
  // a connection lost meanwhile (the next operation says so), keeps BEGIN.
  Result<PostgresResult> level = opened->Execute("SHOW default_transaction_isolation");
  if (level.ok() && level->rows() == 1 && level->Text(0, 0) == "repeatable read") {
    opened->begin_write_ = "BEGIN ISOLATION LEVEL SERIALIZABLE";
  }
  return opened;
}

PostgresConnection::~PostgresConnection() { PQfinish(connection_); }

void PostgresConnection::FillParameters(const std::vector<PostgresParameter>& parameters, ParameterArrays& arrays) {
  // libpq reads text parameters up to their NUL, so each is copied into a
  // string (a string_view may be part of a longer one); binary ones are
  // passed with their length (an empty one still needs a pointer: NULL
  // would be SQL NULL).
  arrays.texts.reserve(parameters.size());  // no reallocation: values point into it
  for (const PostgresParameter& parameter : parameters) {
    arrays.lengths.push_back(static_cast<int>(parameter.value().size()));
    arrays.formats.push_back(parameter.binary() ? 1 : 0);
    if (parameter.null()) {
      arrays.values.push_back(nullptr);
    } else if (parameter.binary()) {
      arrays.values.push_back(parameter.value().data() != nullptr ? parameter.value().data() : "");
    } else {
      arrays.texts.emplace_back(parameter.value());
      arrays.values.push_back(arrays.texts.back().c_str());
    }
  }
}

Result<PostgresResult> PostgresConnection::Execute(const char* sql, const std::vector<PostgresParameter>& parameters) {
  ParameterArrays arrays;
  FillParameters(parameters, arrays);
  return Finish(PQexecParams(connection_, sql, static_cast<int>(parameters.size()), nullptr, arrays.values.data(),
                             arrays.lengths.data(), arrays.formats.data(), /*resultFormat=*/0));
}

Status PostgresConnection::Pipeline(const std::function<bool()>& queue, size_t parts,
                                    std::vector<std::optional<PostgresResult>>& answers) {
  last_sql_state_.clear();
  answers.clear();
  answers.resize(parts);
  if (PQenterPipelineMode(connection_) != 1) return LostConnection(PQerrorMessage(connection_));
  // A part that could not even be queued (the connection is gone) leaves
  // the connection in pipeline mode with what was queued: not reusable,
  // so the pool drops it.
  if (!queue() || PQpipelineSync(connection_) != 1) return LostConnection(PQerrorMessage(connection_));

  // Each part answers with its result and a NULL; a part the server
  // skipped after a failure with PGRES_PIPELINE_ABORTED; the sync last.
  Status failure = OkStatus();
  size_t part = 0;
  while (true) {
    PGresult* raw = PQgetResult(connection_);
    if (raw == nullptr) {
      if (PQstatus(connection_) == CONNECTION_BAD || part > parts) {
        if (failure.ok()) failure = LostConnection(PQerrorMessage(connection_));
        break;
      }
      ++part;
      continue;
    }
    const ExecStatusType status = PQresultStatus(raw);
    if (status == PGRES_PIPELINE_SYNC) {
      PQclear(raw);
      break;
    }
    if (status == PGRES_PIPELINE_ABORTED || !failure.ok() || part >= parts) {
      PQclear(raw);
      continue;
    }
    Result<PostgresResult> answer = Finish(raw);
    if (!answer.ok()) {
      failure = answer.status();
      continue;
    }
    answers[part] = std::move(answer).value();
  }
  if (PQexitPipelineMode(connection_) != 1 && failure.ok()) failure = LostConnection(PQerrorMessage(connection_));
  return failure;
}

Result<std::vector<PostgresResult>> PostgresConnection::RunPipeline(const std::vector<PipelineStep>& steps) {
  const auto queue = [&] {
    for (const PipelineStep& step : steps) {
      ParameterArrays arrays;
      FillParameters(step.parameters, arrays);
      const int count = static_cast<int>(step.parameters.size());
      int queued = 0;
      if (step.key == nullptr) {
        queued = PQsendQueryParams(connection_, step.sql, 0, nullptr, nullptr, nullptr, nullptr, /*resultFormat=*/0);
      } else {
        auto found = prepared_.find(step.key);
        if (found == prepared_.end()) return false;
        // Text results: the pipeline's answers are read as text (a count's
        // "0", a boolean's "t").
        queued = PQsendQueryPrepared(connection_, found->second.name.c_str(), count, arrays.values.data(),
                                     arrays.lengths.data(), arrays.formats.data(), /*resultFormat=*/0);
      }
      if (queued != 1) return false;
    }
    return true;
  };
  std::vector<std::optional<PostgresResult>> answers;
  TOOLVFS_RETURN_IF_ERROR(Pipeline(queue, steps.size(), answers));
  std::vector<PostgresResult> results;
  for (std::optional<PostgresResult>& answer : answers) {
    if (!answer) return InternalError("A pipeline step gave no result");
    results.push_back(std::move(*answer));
  }
  return results;
}

Status PostgresConnection::ExecuteScript(const std::string& sql) {
  Result<PostgresResult> result = Finish(PQexec(connection_, sql.c_str()));
  return result.ok() ? OkStatus() : result.status();
}

Status PostgresConnection::Prepare(const char* key, const std::string& sql) {
  std::string name = "toolvfs_" + std::to_string(prepared_.size() + 1);
  // The prepare and its describe in one pipeline: one round trip, as a
  // plain PQprepare takes (a describe of its own was one more per
  // statement and connection, which a short-lived client pays on each).
  std::vector<std::optional<PostgresResult>> answers;
  Status prepared = Pipeline(
      [&] {
        return PQsendPrepare(connection_, name.c_str(), sql.c_str(), 0, nullptr) == 1 &&
               PQsendDescribePrepared(connection_, name.c_str()) == 1;
      },
      2, answers);
  // Kept whenever the server has the statement under this name (its name
  // is taken); a failed describe leaves it in the text format.
  if (answers[0]) {
    const bool binary = answers[1] && BinaryResultsFit(*answers[1]);
    prepared_.emplace(key, PreparedStatement{name, binary ? 1 : 0});
  }
  return prepared;
}

// Binary results for a statement that returns bytea, when every column it
// returns is one PostgresResult reads in binary: bytea as it is, integers,
// text. In the text format a bytea value travels as hex, twice its size,
// and is decoded on this side. Any other column (numeric, boolean, a
// literal of unknown type) keeps the statement in the text format.
// `described` is the statement's describe.
bool PostgresConnection::BinaryResultsFit(const PostgresResult& described) {
  constexpr Oid kBytea = 17, kBigint = 20, kSmallint = 21, kInteger = 23, kText = 25, kVarchar = 1043;
  PGresult* columns = described.raw();
  bool bytea = false;
  for (int column = 0; column < PQnfields(columns); ++column) {
    const Oid type = PQftype(columns, column);
    if (type == kBytea) {
      bytea = true;
    } else if (type != kBigint && type != kSmallint && type != kInteger && type != kText && type != kVarchar) {
      return false;
    }
  }
  return bytea;
}

Result<PostgresResult> PostgresConnection::ExecutePrepared(const char* key, int count, const char* const* values,
                                                           const int* lengths, const int* formats) {
  auto found = prepared_.find(key);
  if (found == prepared_.end()) return InternalError("A statement was run before it was prepared");
  return Finish(PQexecPrepared(connection_, found->second.name.c_str(), count, values, lengths, formats,
                               found->second.result_format));
}

bool PostgresConnection::StillConnected() {
  if (PQstatus(connection_) != CONNECTION_OK) return false;
  pollfd descriptor{.fd = PQsocket(connection_), .events = POLLIN, .revents = 0};
  if (descriptor.fd < 0) return false;
  // Nothing waiting: as it was left. Anything else arrived unasked, and
  // what a server sends an idle session unasked is almost always its
  // goodbye (a shutdown, a terminated backend) before the end of the
  // stream, which libpq would notice only on the next query: the
  // connection is not trusted, and a fresh one costs one connect.
  return ::poll(&descriptor, 1, 0) == 0;
}

Status PostgresConnection::LostConnection(std::string_view message) const {
  return UnavailableError("Cannot use the store " + Quote(display_) + ": " + OneLine(message) +
                          "; the server is unavailable, try again once it is back");
}

Result<PostgresResult> PostgresConnection::Finish(PGresult* raw) {
  PostgresResult result(raw);
  ExecStatusType status = PQresultStatus(raw);  // PGRES_FATAL_ERROR for NULL (out of memory)
  last_sql_state_.clear();
  if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) return result;
  const char* state = raw != nullptr ? PQresultErrorField(raw, PG_DIAG_SQLSTATE) : nullptr;
  if (state != nullptr) last_sql_state_ = state;
  const char* message = raw != nullptr ? PQresultErrorMessage(raw) : "";
  if (message == nullptr || message[0] == '\0') message = PQerrorMessage(connection_);
  if (state == nullptr && PQstatus(connection_) == CONNECTION_BAD) {
    // The server went away (restart, crash, network): nothing of this
    // operation was committed, and the pool opens a fresh connection next.
    return LostConnection(message);
  }
  return PostgresStatus(state != nullptr ? state : "", "Cannot use the store " + Quote(display_), message);
}

namespace {
std::atomic<uint64_t> retried_serialization_failures{0};
std::atomic<uint64_t> retried_deadlocks{0};
std::atomic<uint64_t> retried_unique_violations{0};
}  // namespace

PostgresRetryCounts PostgresRetriedTransactions() {
  return PostgresRetryCounts{retried_serialization_failures.load(std::memory_order_relaxed),
                             retried_deadlocks.load(std::memory_order_relaxed),
                             retried_unique_violations.load(std::memory_order_relaxed)};
}

void PostgresBackoff::Pause() {
  thread_local std::minstd_rand random(std::random_device{}());
  std::uniform_int_distribution<int64_t> pause(0, std::max<int64_t>(1, next_.count()));
  std::this_thread::sleep_for(std::chrono::milliseconds(pause(random)));
  next_ = std::min(next_ * 2, max_);
}

Status RunPostgresTransaction(PostgresConnection& connection, PostgresIsolation isolation,
                              const std::function<Status(PostgresConnection&)>& body,
                              const PostgresRetryPolicy& policy, int* attempts) {
  const char* begin = isolation == PostgresIsolation::kSerializable    ? "BEGIN ISOLATION LEVEL SERIALIZABLE"
                      : isolation == PostgresIsolation::kReadCommitted ? "BEGIN ISOLATION LEVEL READ COMMITTED"
                                                                       : connection.begin_write();
  PostgresBackoff backoff(policy.first_backoff, policy.max_backoff);
  const int max_attempts = std::max(1, policy.max_attempts);
  Status last = OkStatus();
  for (int attempt = 1; attempt <= max_attempts; ++attempt) {
    if (attempts != nullptr) *attempts = attempt;
    Result<PostgresResult> started = connection.Execute(begin);
    if (!started.ok()) return started.status();
    Status status = body(connection);
    if (status.ok()) {
      Result<PostgresResult> committed = connection.Execute("COMMIT");
      if (committed.ok()) return OkStatus();
      status = committed.status();
    }
    const std::string state = connection.last_sql_state();  // a copy: the ROLLBACK below resets it
    const bool retryable = IsRetryableSqlState(state) || (policy.retry_unique_violations && state == "23505");
    // After a failed COMMIT the transaction is already over and ROLLBACK
    // only warns; after anything else it ends the failed transaction.
    (void)connection.Execute("ROLLBACK");
    if (!retryable) return status;
    last = status;
    if (attempt == max_attempts) break;
    (state == "40001"   ? retried_serialization_failures
     : state == "40P01" ? retried_deadlocks
                        : retried_unique_violations)
        .fetch_add(1, std::memory_order_relaxed);
    backoff.Pause();
  }
  return ChangedError("Gave up after " + std::to_string(max_attempts) +
                      " attempts, each ended by a concurrent transaction: " + last.message());
}

}  // namespace toolvfs
