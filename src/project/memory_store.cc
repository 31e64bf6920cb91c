// TEMPORARY placeholder while the memory store is written (replaced this session).
#include "project/memory_store.h"
namespace toolvfs {
std::unique_ptr<ProjectFiles> NewMemoryStore(std::string, const StoreOptions&) { return nullptr; }
}  // namespace toolvfs
