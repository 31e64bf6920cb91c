#include "host/methods.h"

#include <vector>

namespace toolvfs {

std::span<const MethodSpec> AllMethods() {
  static const std::vector<MethodSpec> all = [] {
    std::vector<MethodSpec> methods;
    for (auto group : {FsMethods(), HttpMethods(), ProcessMethods()}) {
      methods.insert(methods.end(), group.begin(), group.end());
    }
    return methods;
  }();
  return all;
}

const MethodSpec* FindMethod(std::string_view name) {
  for (const MethodSpec& method : AllMethods()) {
    if (method.name == name) return &method;
  }
  return nullptr;
}

}  // namespace toolvfs
