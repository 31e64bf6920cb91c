// Checking a call's arguments against a tool's `parameters` (SPEC.md §6.3,
// docs/runtimes.md), for every runtime: defaults filled, unknown and
// missing required arguments rejected, strings that hold JSON of the
// declared type decoded. Pure functions, safe from any thread.
#pragma once

#include <string>
#include <string_view>

#include "config/config_value.h"
#include "core/status.h"

namespace toolvfs {

// What ValidateArguments found wrong, told apart for machines.
enum class ArgumentProblem {
  kNotAnObject,  // the arguments are no JSON object (or no JSON at all)
  kUnknown,      // an argument no schema declares
  kMissing,      // a required argument is absent and has no default
  kInvalid,      // a value of the wrong type, outside enum, bounds or pattern
};

struct ArgumentError {
  ArgumentProblem problem = ArgumentProblem::kInvalid;
  std::string argument;  // dotted path ("opts.depth", "a[2]"); empty for kNotAnObject
};

// `json` (one JSON value) as a ConfigValue; integers that fit int64 stay
// integers, other numbers become doubles. InvalidArgument with simdjson's
// reason otherwise.
Result<ConfigValue> ParseJsonValue(std::string_view json);

// Checks `arguments` (an object; null counts as {}) against `parameters`
// (name → schema, config.h) and returns it with defaults filled in. Per
// schema, recursively through `properties` and `items`:
//  - a value whose declared `type` does not include "string" but is a
//    string is decoded as JSON when that gives a value of a declared type
//    ("3" for an integer, "[1,2]" for an array);
//  - the value must have one of the declared types ("number" accepts
//    integers; "integer" accepts doubles with no fraction); no `type`: any;
//  - with `enum`, it must equal one of the values;
//  - numbers within minimum/maximum/exclusiveMinimum/exclusiveMaximum;
//    strings within minLength/maxLength (code points) and containing a
//    match of `pattern` (RE2, unanchored); arrays within minItems/maxItems
//    and, with uniqueItems, without repeats;
//  - an object with `properties` may hold only those keys; a missing key
//    takes its `default` (itself checked and filled), else is an error when
//    `required = true`, else stays absent.
// InvalidArgument with one line naming the argument by its dotted path and
// the reason: "unknown argument 'verbos'", "missing required argument
// 'path'", "argument 'opts.depth' must be integer, got \"x\"".
//
// On failure `error`, when given, says which kind of problem it is and
// which argument has it (for callers that answer in JSON, docs/cli.md).
Result<ConfigValue> ValidateArguments(const ConfigValue::Object& parameters, const ConfigValue& arguments,
                                      ArgumentError* error = nullptr);

// What every runtime does first with a call: `arguments_json` parsed (null
// counts as {}) and checked by ValidateArguments against `parameters`;
// with no parameters declared (an ad-hoc `toolvfs exec` tool, free-form
// input) passed on unchecked. InvalidArgument "Tool 'NAME': <why>", with
// `error` (when given) filled as ValidateArguments fills it.
Result<ConfigValue> CheckCallArguments(std::string_view tool_name, std::string_view arguments_json,
                                       const ConfigValue::Object& parameters, ArgumentError* error = nullptr);

}  // namespace toolvfs
