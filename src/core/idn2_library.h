// libidn2, opened on first use (core/lazy_library.h; docs/install.md,
// "Libraries loaded on first use"): only URLs need it (url.cc converts
// internationalized host names), and with libunistring it costs a process
// that never parses one 200 KB resident. idn2_library.cc defines the idn2_*
// functions url.cc calls, each forwarding to the library.
#pragma once

#include "core/status.h"

namespace toolvfs {

// Opens libidn2 if not done yet: OK, or NotFound naming the file and why.
// url.cc calls it before converting a host name, so a missing library is
// that error rather than a host reported invalid.
Status LoadIdn2();

}  // namespace toolvfs
