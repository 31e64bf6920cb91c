// The one source file of libtoolvfs of its own: everything else comes from
// the layers' static libraries (cmake/install.cmake).
#include "toolvfs.h"

namespace toolvfs {

const char* LibraryVersion() { return TOOLVFS_VERSION; }

}  // namespace toolvfs
