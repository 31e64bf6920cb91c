// A tool's `parameters` (name → schema, config.h) as the JSON Schema an MCP
// client or a harness expects as a tool's input schema (SPEC.md §6.3).
//
// The config writes schemas per parameter, with `required = true` on each
// required one; JSON Schema wants one object schema with a `required` array
// of names. Pure functions, safe from any thread.
#pragma once

#include <string>

#include "config/config_value.h"

namespace toolvfs {

// `parameters` as an object schema: {"type":"object","properties":{...},
// "required":[names],"additionalProperties":false}, recursively through
// `properties` (an object's members) and `items`; every other keyword
// (description, default, enum, minimum, ...) is passed through unchanged.
// `additionalProperties` is false wherever `properties` is given, because
// ValidateArguments rejects unknown keys there; with no parameters at all
// the input is free-form and the schema is just {"type":"object"}.
ConfigValue InputSchema(const ConfigValue::Object& parameters);

// InputSchema as compact JSON, keys sorted.
std::string InputSchemaJson(const ConfigValue::Object& parameters);

}  // namespace toolvfs
