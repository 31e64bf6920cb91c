#include "config/config_value.h"

#include <charconv>
#include <cmath>
#include <system_error>

namespace toolvfs {
namespace {

void AppendJsonString(std::string_view text, std::string& out) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  for (char c : text) {
    auto byte = static_cast<unsigned char>(c);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (byte < 0x20) {
          out += "\\u00";
          out += kHex[byte >> 4];
          out += kHex[byte & 0xF];
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

void AppendJson(const ConfigValue& value, std::string& out) {
  if (value.is_null()) {
    out += "null";
  } else if (value.is_bool()) {
    out += value.as_bool() ? "true" : "false";
  } else if (value.is_integer()) {
    out += std::to_string(value.as_integer());
  } else if (value.is_float()) {
    double number = value.as_float();
    if (!std::isfinite(number)) {
      out += "null";
      return;
    }
    char buffer[64];
    // Shortest form that reads back as the same double.
    auto [end, error] = std::to_chars(buffer, buffer + sizeof(buffer), number);
    std::string text(buffer, error == std::errc() ? end : buffer);
    // Keep a float a float: 1.0 stays "1.0", not "1".
    if (text.find_first_of(".eE") == std::string::npos) text += ".0";
    out += text;
  } else if (value.is_string()) {
    AppendJsonString(value.as_string(), out);
  } else if (value.is_array()) {
    out += '[';
    bool first = true;
    for (const ConfigValue& element : value.as_array()) {
      if (!first) out += ',';
      first = false;
      AppendJson(element, out);
    }
    out += ']';
  } else {
    out += '{';
    bool first = true;
    for (const auto& [key, member] : value.as_object()) {
      if (!first) out += ',';
      first = false;
      AppendJsonString(key, out);
      out += ':';
      AppendJson(member, out);
    }
    out += '}';
  }
}

}  // namespace

const ConfigValue* ConfigValue::Find(std::string_view key) const {
  if (!is_object()) return nullptr;
  const Object& object = as_object();
  auto found = object.find(key);
  return found == object.end() ? nullptr : &found->second;
}

std::string ConfigValue::ToJson() const {
  std::string out;
  AppendJson(*this, out);
  return out;
}

}  // namespace toolvfs
