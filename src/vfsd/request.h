// vfsd requests: `{id, op, version?, params}` parsed from one frame's JSON.
//
// Parsing is strict (fail-first, as the source document asks): the payload
// must be valid UTF-8 JSON (simdjson validates both; nesting deeper than
// simdjson's limit is an error, not a crash), an object with a string `id`,
// a string `op`, an optional `version` of 1 and an optional object
// `params`. Unknown or duplicate members of the request or of its params
// are errors rather than silently ignored: a typo ("hanlde") must not turn
// into a default. Every error names the member and says why, and carries
// the request's id when it could be read, so the client can match it.
//
// Params are copied out of the parsed document into plain values (they are
// all scalars or arrays of strings), so a Request owns everything it holds.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/status.h"

namespace toolvfs {

// The one version of the vfsd request format this daemon speaks.
inline constexpr int64_t kVfsdVersion = 1;

// One member of `params`, as sent.
struct ParamValue {
  enum class Type { kNull, kBool, kInteger, kNumber, kString, kArray, kObject };
  Type type = Type::kNull;
  bool boolean = false;
  int64_t integer = 0;  // kInteger: fits in int64
  std::string text;     // kString
  // kArray: the elements if every one is a string; `strings_only` false
  // otherwise.
  std::vector<std::string> strings;
  bool strings_only = true;
};

// Typed access to `params`. Errors are InvalidArgument naming the member:
// "Invalid params: 'h' must be a positive integer".
class RequestParams {
 public:
  bool Has(std::string_view name) const;
  // InvalidArgument naming the first member not in `names`.
  Status ExpectOnly(std::initializer_list<std::string_view> names) const;

  Result<std::string> String(std::string_view name) const;
  Result<int64_t> Integer(std::string_view name) const;
  Result<std::optional<int64_t>> OptionalInteger(std::string_view name) const;
  Result<std::optional<bool>> OptionalBool(std::string_view name) const;
  Result<std::optional<std::vector<std::string>>> OptionalStringArray(std::string_view name) const;

  // Adds a member; false if `name` is already there.
  bool Add(std::string name, ParamValue value);

 private:
  const ParamValue* Find(std::string_view name) const;
  std::map<std::string, ParamValue, std::less<>> members_;
};

struct Request {
  std::string id;
  std::string op;
  RequestParams params;
};

// A frame that is not a valid request: the status to answer with
// (InvalidArgument, or Unsupported for an unknown version) and the id to
// answer under (nullopt: null, when the id could not be read).
struct RequestError {
  std::optional<std::string> id;
  Status status;
};

std::variant<Request, RequestError> ParseRequest(std::string_view payload);

}  // namespace toolvfs
