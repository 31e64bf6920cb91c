// libFuzzer target: ParseAuditRecord never crashes on a damaged audit log
// line; a failure is one line; a record it accepts survives a round trip
// through ToJson. Build and run with `make fuzz`.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "policy/audit.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  toolvfs::Result<toolvfs::AuditRecord> record = toolvfs::ParseAuditRecord(input);
  if (!record.ok()) {
    if (record.status().message().find('\n') != std::string::npos) std::abort();
    return 0;
  }
  std::string json = record->ToJson();
  toolvfs::Result<toolvfs::AuditRecord> again = toolvfs::ParseAuditRecord(json);
  if (!again.ok() || again->ToJson() != json) std::abort();
  return 0;
}
