// Small helpers shared by the tests of the method handlers.
#pragma once

#include <rapidjson/stringbuffer.h>

#include <string>
#include <string_view>

#include "protocol/json_writer.h"

namespace toolvfs {

// `text` as a JSON string literal, for building request lines.
inline std::string Json(std::string_view text) {
  rapidjson::StringBuffer buffer;
  AppendJsonString(buffer, text);
  return std::string(buffer.GetString(), buffer.GetSize());
}

// Every byte value once, 0 to 255: binary content for base64 round trips.
inline std::string AllBytes() {
  std::string bytes;
  for (int i = 0; i < 256; ++i) bytes += static_cast<char>(i);
  return bytes;
}

}  // namespace toolvfs
