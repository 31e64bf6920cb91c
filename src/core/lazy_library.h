// LazyLibrary: a system shared library opened with dlopen on the first call
// that needs it instead of at start-up (docs/install.md, "Libraries loaded
// on first use").
//
// Linked the usual way, a library is loaded into every toolvfs process with
// its own dependencies and runs their initializers before main: libcurl and
// libpq brought OpenSSL, GnuTLS (which initializes itself from a
// constructor), Kerberos, LDAP and p11-kit, and with SQLite, nettle and
// libidn2 they cost a `toolvfs mcp` serving a directory, which uses none of
// them, about 5 MB resident. With a LazyLibrary the program is linked to
// small forwarding functions of the same names instead
// (src/host/curl_library.cc, src/project/sql/libpq_library.cc,
// sqlite_library.cc, src/project/content/nettle_library.cc, src/core/idn2_library.cc), which
// open the library when one of them is first called.
//
// Thread-safe: Load() and Address() may be called from any thread; the
// library is opened once. It is never closed (libraries keep threads and
// exit handlers of their own), so an instance lives as long as the process
// (a function-local static).
#pragma once

#include <atomic>
#include <cstddef>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace toolvfs {

class LazyLibrary {
 public:
  // `file_name`: what dlopen searches for, the library's SONAME
  // ("libpq.so.5"); `needed_for` and `package` complete the error message
  // ("PostgreSQL stores", "libpq5"). `symbols` are resolved together by
  // Load(), in the order Address() indexes them; the array must outlive the
  // object.
  LazyLibrary(std::string file_name, std::string needed_for, std::string package,
              std::span<const char* const> symbols);
  LazyLibrary(const LazyLibrary&) = delete;
  LazyLibrary& operator=(const LazyLibrary&) = delete;

  // Opens the library and resolves every symbol on the first call; later
  // calls return the first outcome. NotFound when the library cannot be
  // opened ("Cannot load libpq.so.5, needed for PostgreSQL stores (Debian
  // package libpq5): <dlerror's reason>"), Unsupported when it lacks one of
  // the symbols (an older version); one line either way.
  const Status& Load();

  // The address of symbols[index], loading the library if needed; nullptr
  // when Load() failed.
  void* Address(size_t index) {
    // Once loaded, an inline check: SQLite's column and bind calls come
    // here a few times per row (store_bench's listings spent 2 % in Load).
    if (loaded_.load(std::memory_order_acquire)) return addresses_[index];
    return Load().ok() ? addresses_[index] : nullptr;
  }

  // Load()'s message as a C string, "" while loaded: for the forwarding
  // functions whose library API reports errors as text.
  const char* error_text() { return Load().message().c_str(); }

 private:
  const std::string file_name_;
  const std::string needed_for_;
  const std::string package_;
  const std::span<const char* const> symbols_;
  std::once_flag once_;
  Status status_;
  std::vector<void*> addresses_;
  std::atomic<bool> loaded_{false};  // Load() succeeded: addresses_ is complete
};

}  // namespace toolvfs

// For a file of forwarding functions: TOOLVFS_LAZY_FUNCTIONS(LIST), with
// LIST(X) calling X(name) for each function, declares `kLazySymbols` (the
// names, for the LazyLibrary) and an index `k_NAME` for each, in that
// order, in a namespace within toolvfs; TOOLVFS_LAZY_ADDRESS(library, name)
// is then `name`'s address in `library` with its declared type, or nullptr
// when the library cannot be loaded.
#define TOOLVFS_LAZY_INDEX(name) k_##name,
#define TOOLVFS_LAZY_NAME(name) #name,
#define TOOLVFS_LAZY_FUNCTIONS(LIST)                                  \
  enum LazyFunction : size_t { LIST(TOOLVFS_LAZY_INDEX) };            \
  constexpr const char* kLazySymbols[] = {LIST(TOOLVFS_LAZY_NAME)}
#define TOOLVFS_LAZY_ADDRESS(library, name) \
  reinterpret_cast<decltype(&::name)>((library).Address(toolvfs::k_##name))
