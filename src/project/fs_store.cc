// TEMPORARY placeholder while the fs store is written (replaced this session).
#include "project/fs_store.h"
namespace toolvfs {
Result<std::unique_ptr<ProjectFiles>> OpenFsStore(std::string_view, const StoreOptions&) {
  return UnsupportedError("fs store not built yet");
}
}  // namespace toolvfs
