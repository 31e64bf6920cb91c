#include "core/idn2_library.h"

#include <idn2.h>

#include "core/lazy_library.h"

namespace toolvfs {
namespace {

// Every libidn2 function url.cc calls.
#define TOOLVFS_IDN2_FUNCTIONS(X) X(idn2_to_ascii_8z) X(idn2_strerror)
TOOLVFS_LAZY_FUNCTIONS(TOOLVFS_IDN2_FUNCTIONS);

LazyLibrary& Idn2() {
  static LazyLibrary library(TOOLVFS_IDN2_FILE, "URLs with internationalized host names", "libidn2-0",
                             kLazySymbols);
  return library;
}

}  // namespace

Status LoadIdn2() { return Idn2().Load(); }

}  // namespace toolvfs

// Hidden: libtoolvfs.so must not offer these to an embedder that links
// libidn2 itself. Without the library: IDN2_ICONV_FAIL, whose text is the
// load error.
#pragma GCC visibility push(hidden)
extern "C" {

int idn2_to_ascii_8z(const char* input, char** output, int flags) {
  auto function = TOOLVFS_LAZY_ADDRESS(toolvfs::Idn2(), idn2_to_ascii_8z);
  return function != nullptr ? function(input, output, flags) : IDN2_ICONV_FAIL;
}

const char* idn2_strerror(int code) {
  auto function = TOOLVFS_LAZY_ADDRESS(toolvfs::Idn2(), idn2_strerror);
  return function != nullptr ? function(code) : toolvfs::Idn2().error_text();
}

}  // extern "C"
#pragma GCC visibility pop
