#include "project/content/nettle_library.h"

#include <nettle/sha2.h>

#include <cstdio>
#include <cstdlib>

#include "core/lazy_library.h"

namespace toolvfs {
namespace {

// Every nettle function content_hash.cc calls (sha2.h's sha256_* macros).
#define TOOLVFS_NETTLE_FUNCTIONS(X) X(nettle_sha256_init) X(nettle_sha256_update) X(nettle_sha256_digest)
TOOLVFS_LAZY_FUNCTIONS(TOOLVFS_NETTLE_FUNCTIONS);

LazyLibrary& Nettle() {
  static LazyLibrary library(TOOLVFS_NETTLE_FILE, "the SQL stores' content hashes", "libnettle8", kLazySymbols);
  return library;
}

// The address of nettle's function `index`; see nettle_library.h for why a
// missing library ends the process here.
void* NettleFunctionOrExit(size_t index) {
  void* address = Nettle().Address(index);
  if (address == nullptr) {
    std::fprintf(stderr, "toolvfs: %s\n", Nettle().error_text());
    std::abort();
  }
  return address;
}

}  // namespace

Status LoadNettle() { return Nettle().Load(); }

}  // namespace toolvfs

// nettle's function `name` with its declared type; without the library the
// process ends (nettle_library.h).
#define TOOLVFS_NETTLE(name) \
  reinterpret_cast<decltype(&::name)>(toolvfs::NettleFunctionOrExit(toolvfs::k_##name))

// Hidden: libtoolvfs.so must not offer these to an embedder that links
// libnettle itself.
#pragma GCC visibility push(hidden)
extern "C" {

void nettle_sha256_init(sha256_ctx* context) { TOOLVFS_NETTLE(nettle_sha256_init)(context); }

void nettle_sha256_update(sha256_ctx* context, size_t length, const uint8_t* data) {
  TOOLVFS_NETTLE(nettle_sha256_update)(context, length, data);
}

void nettle_sha256_digest(sha256_ctx* context, size_t length, uint8_t* digest) {
  TOOLVFS_NETTLE(nettle_sha256_digest)(context, length, digest);
}

}  // extern "C"
#pragma GCC visibility pop
