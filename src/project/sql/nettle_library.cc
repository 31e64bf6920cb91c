#include "project/sql/nettle_library.h"

#include <nettle/sha2.h>

#include <cstdio>
#include <cstdlib>

#include "core/lazy_library.h"

namespace toolvfs {
namespace {

// Every nettle function content_hash.cc calls (sha2.h's sha256_* macros).
constexpr const char* kNettleSymbols[] = {"nettle_sha256_init", "nettle_sha256_update", "nettle_sha256_digest"};
enum NettleFunction : size_t { kInit, kUpdate, kDigest };

LazyLibrary& Nettle() {
  static LazyLibrary library(TOOLVFS_NETTLE_FILE, "the SQL stores' content hashes", "libnettle8", kNettleSymbols);
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

// Hidden: libtoolvfs.so must not offer these to an embedder that links
// libnettle itself.
#pragma GCC visibility push(hidden)
extern "C" {

void nettle_sha256_init(sha256_ctx* context) {
  reinterpret_cast<decltype(&::nettle_sha256_init)>(toolvfs::NettleFunctionOrExit(toolvfs::kInit))(context);
}

void nettle_sha256_update(sha256_ctx* context, size_t length, const uint8_t* data) {
  reinterpret_cast<decltype(&::nettle_sha256_update)>(toolvfs::NettleFunctionOrExit(toolvfs::kUpdate))(
      context, length, data);
}

void nettle_sha256_digest(sha256_ctx* context, size_t length, uint8_t* digest) {
  reinterpret_cast<decltype(&::nettle_sha256_digest)>(toolvfs::NettleFunctionOrExit(toolvfs::kDigest))(
      context, length, digest);
}

}  // extern "C"
#pragma GCC visibility pop
