#include "core/idn2_library.h"

#include <idn2.h>

#include "core/lazy_library.h"

namespace toolvfs {
namespace {

// Every libidn2 function url.cc calls.
constexpr const char* kIdn2Symbols[] = {"idn2_to_ascii_8z", "idn2_strerror"};
enum Idn2Function : size_t { kToAscii, kStrerror };

LazyLibrary& Idn2() {
  static LazyLibrary library(TOOLVFS_IDN2_FILE, "URLs with internationalized host names", "libidn2-0",
                             kIdn2Symbols);
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
  auto function = reinterpret_cast<decltype(&::idn2_to_ascii_8z)>(toolvfs::Idn2().Address(toolvfs::kToAscii));
  return function != nullptr ? function(input, output, flags) : IDN2_ICONV_FAIL;
}

const char* idn2_strerror(int code) {
  auto function = reinterpret_cast<decltype(&::idn2_strerror)>(toolvfs::Idn2().Address(toolvfs::kStrerror));
  return function != nullptr ? function(code) : toolvfs::Idn2().error_text();
}

}  // extern "C"
#pragma GCC visibility pop
