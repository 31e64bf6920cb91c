// ConfigValue: a small JSON-shaped value for the free-form parts of
// toolvfs.toml (a tool's `parameters` schema and its `options`).
//
// These parts are handed to tools and to MCP clients as JSON later, so they
// are kept as a JSON tree rather than as toml++ nodes: the rest of toolvfs
// never sees toml++. TOML has no null, so a parsed value is never null; TOML
// dates and times become strings in their TOML spelling (1979-05-27T07:32:00Z).
// Objects are ordered by key (TOML tables are unordered).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace toolvfs {

class ConfigValue {
 public:
  using Array = std::vector<ConfigValue>;
  using Object = std::map<std::string, ConfigValue, std::less<>>;

  ConfigValue() = default;                                       // null
  ConfigValue(bool value) : data_(value) {}                      // NOLINT: implicit by design
  ConfigValue(int value) : data_(int64_t{value}) {}              // NOLINT
  ConfigValue(int64_t value) : data_(value) {}                   // NOLINT
  ConfigValue(double value) : data_(value) {}                    // NOLINT
  ConfigValue(std::string value) : data_(std::move(value)) {}    // NOLINT
  ConfigValue(const char* value) : data_(std::string(value)) {}  // NOLINT
  ConfigValue(Array value) : data_(std::move(value)) {}          // NOLINT
  ConfigValue(Object value) : data_(std::move(value)) {}         // NOLINT

  bool is_null() const { return std::holds_alternative<std::monostate>(data_); }
  bool is_bool() const { return std::holds_alternative<bool>(data_); }
  bool is_integer() const { return std::holds_alternative<int64_t>(data_); }
  bool is_float() const { return std::holds_alternative<double>(data_); }
  bool is_string() const { return std::holds_alternative<std::string>(data_); }
  bool is_array() const { return std::holds_alternative<Array>(data_); }
  bool is_object() const { return std::holds_alternative<Object>(data_); }

  // Accessors; calling the wrong one is a bug (std::bad_variant_access).
  bool as_bool() const { return std::get<bool>(data_); }
  int64_t as_integer() const { return std::get<int64_t>(data_); }
  double as_float() const { return std::get<double>(data_); }
  const std::string& as_string() const { return std::get<std::string>(data_); }
  const Array& as_array() const { return std::get<Array>(data_); }
  const Object& as_object() const { return std::get<Object>(data_); }
  Array& as_array() { return std::get<Array>(data_); }
  Object& as_object() { return std::get<Object>(data_); }

  // The member `key` of an object, or nullptr (also when this is no object).
  const ConfigValue* Find(std::string_view key) const;

  // Compact JSON, e.g. {"path":{"required":true,"type":"string"}}. Strings
  // are escaped per RFC 8259 (control characters as \u00XX); non-finite
  // floats (TOML inf/nan) have no JSON form and are written as null.
  std::string ToJson() const;

  friend bool operator==(const ConfigValue& a, const ConfigValue& b) = default;

 private:
  std::variant<std::monostate, bool, int64_t, double, std::string, Array, Object> data_;
};

}  // namespace toolvfs
