#include "core/lazy_library.h"

#include <dlfcn.h>

#include <utility>

namespace toolvfs {

LazyLibrary::LazyLibrary(std::string file_name, std::string needed_for, std::string package,
                         std::span<const char* const> symbols)
    : file_name_(std::move(file_name)),
      needed_for_(std::move(needed_for)),
      package_(std::move(package)),
      symbols_(symbols) {}

const Status& LazyLibrary::Load() {
  std::call_once(once_, [this] {
    // RTLD_LOCAL: the library's symbols serve only the addresses asked for
    // here, never the resolution of another library's names.
    void* handle = dlopen(file_name_.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* reason = dlerror();
      status_ = NotFoundError("Cannot load " + file_name_ + ", needed for " + needed_for_ + " (Debian package " +
                              package_ + "): " + (reason != nullptr ? reason : "unknown reason"));
      return;
    }
    std::vector<void*> addresses;
    addresses.reserve(symbols_.size());
    for (const char* symbol : symbols_) {
      void* address = dlsym(handle, symbol);
      if (address == nullptr) {
        status_ = UnsupportedError(file_name_ + " has no " + symbol + ", needed for " + needed_for_ +
                                   ": the installed " + package_ + " is older than the one toolvfs was built with");
        return;
      }
      addresses.push_back(address);
    }
    addresses_ = std::move(addresses);
    loaded_.store(true, std::memory_order_release);
  });
  return status_;
}

}  // namespace toolvfs
