// TEMPORARY placeholder while the null store is written (replaced this session).
#include "project/null_store.h"
namespace toolvfs {
std::unique_ptr<ProjectFiles> NewNullStore() { return nullptr; }
}  // namespace toolvfs
