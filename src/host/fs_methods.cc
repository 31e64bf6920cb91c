// Placeholder until the fs.* handlers land (issue 3, in progress).
#include "host/methods.h"

namespace toolvfs {

std::span<const MethodSpec> FsMethods() { return {}; }

}  // namespace toolvfs
