// PLACEHOLDER: replaced by the process work (issue 4).
#include "host/methods.h"

namespace toolvfs {
std::span<const MethodSpec> ProcessMethods() { return {}; }
}  // namespace toolvfs
