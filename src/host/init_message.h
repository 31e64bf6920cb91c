// The `init` notification, the first line a vfs tool reads (SPEC.md §4.2).
#pragma once

#include <string>

#include "protocol/jsonrpc.h"

namespace toolvfs {

inline constexpr std::string_view kProtocolVersion = "0.1.0";

struct InitInfo {
  std::string tool_name;
  // Compact JSON objects, passed through as they are.
  std::string arguments_json = "{}";
  std::string answers_json = "{}";
  std::string options_json = "{}";
  std::string root;  // ProjectFiles::DisplayRoot()
};

// {"jsonrpc":"2.0","method":"init","params":{"tool":{name, arguments,
// answers, options},"protocol_version":"0.1.0","host":{"name":"toolvfs",
// "version", "root", "methods":[every name of AllMethods()],
// "concurrent_requests":true}}}
// The JSON members must be valid JSON (the caller parsed or wrote them).
WireMessage BuildInitNotification(const InitInfo& info);

}  // namespace toolvfs
