#include "host/methods.h"

namespace toolvfs {

std::span<const MethodSpec> AllMethods() { return FsMethods(); }

const MethodSpec* FindMethod(std::string_view name) {
  for (const MethodSpec& method : AllMethods()) {
    if (method.name == name) return &method;
  }
  return nullptr;
}

}  // namespace toolvfs
