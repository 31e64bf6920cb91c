// TEMPORARY placeholder while the grep engine is written (replaced this session).
#include "project/grep.h"
namespace toolvfs {
Result<GrepResult> RunGrep(GrepTree&, std::string_view, const GrepOptions&) {
  return UnsupportedError("grep engine not built yet");
}
}  // namespace toolvfs
