// libcurl, opened on first use (core/lazy_library.h; docs/install.md,
// "Libraries loaded on first use").
//
// toolvfs is not linked to libcurl: this file defines the curl_* functions
// the http.* methods call (http_methods.cc), each forwarding to the library
// opened with dlopen the first time one is called, so that a process that
// never makes an HTTP request does not load libcurl nor its TLS, SSH,
// GSSAPI and LDAP stacks. A curl_* function added to http_methods.cc must
// be added here (the link fails until it is).
//
// Without the library each function fails as libcurl does when it cannot
// initialize: curl_global_init returns CURLE_FAILED_INIT and
// curl_easy_strerror then gives the load error (naming the file and the
// reason), which http_methods.cc reports.

// The forwarding definitions below take the variadic arguments themselves;
// curl's type-checking macros would rename them.
#define CURL_DISABLE_TYPECHECK
#include <curl/curl.h>

#include <cstdarg>

#include "core/lazy_library.h"

namespace toolvfs {
namespace {

#define TOOLVFS_CURL_FUNCTIONS(X)                                                                                   \
  X(curl_global_init)                                                                                               \
  X(curl_easy_init)                                                                                                 \
  X(curl_easy_setopt)                                                                                               \
  X(curl_easy_perform)                                                                                              \
  X(curl_easy_getinfo)                                                                                              \
  X(curl_easy_strerror)                                                                                             \
  X(curl_easy_cleanup)                                                                                              \
  X(curl_slist_append)                                                                                              \
  X(curl_slist_free_all)

TOOLVFS_LAZY_FUNCTIONS(TOOLVFS_CURL_FUNCTIONS);

LazyLibrary& Curl() {
  static LazyLibrary library(TOOLVFS_CURL_FILE, "the http.* methods", "libcurl4", kLazySymbols);
  return library;
}

}  // namespace
}  // namespace toolvfs

// libcurl's own function `name`, or nullptr when the library cannot be loaded.
#define TOOLVFS_CURL(name) TOOLVFS_LAZY_ADDRESS(toolvfs::Curl(), name)

// Hidden: libtoolvfs.so must not offer these to an embedder that links
// libcurl itself.
#pragma GCC visibility push(hidden)
extern "C" {

CURLcode curl_global_init(long flags) {
  auto function = TOOLVFS_CURL(curl_global_init);
  return function != nullptr ? function(flags) : CURLE_FAILED_INIT;
}

CURL* curl_easy_init() {
  auto function = TOOLVFS_CURL(curl_easy_init);
  return function != nullptr ? function() : nullptr;
}

// The third argument's type follows from the option's number, as libcurl
// reads it (curl.h, CURLOPTTYPE_*): a long, a curl_off_t, or a pointer
// (object, string, list, callback, blob).
CURLcode curl_easy_setopt(CURL* easy, CURLoption option, ...) {
  auto function = TOOLVFS_CURL(curl_easy_setopt);
  if (function == nullptr) return CURLE_FAILED_INIT;
  va_list arguments;
  va_start(arguments, option);
  CURLcode code;
  if (option < CURLOPTTYPE_OBJECTPOINT) {
    code = function(easy, option, va_arg(arguments, long));
  } else if (option >= CURLOPTTYPE_OFF_T && option < CURLOPTTYPE_BLOB) {
    code = function(easy, option, va_arg(arguments, curl_off_t));
  } else {
    code = function(easy, option, va_arg(arguments, void*));
  }
  va_end(arguments);
  return code;
}

CURLcode curl_easy_perform(CURL* easy) {
  auto function = TOOLVFS_CURL(curl_easy_perform);
  return function != nullptr ? function(easy) : CURLE_FAILED_INIT;
}

// Every CURLINFO_* takes a pointer to where the answer goes.
CURLcode curl_easy_getinfo(CURL* easy, CURLINFO info, ...) {
  auto function = TOOLVFS_CURL(curl_easy_getinfo);
  if (function == nullptr) return CURLE_FAILED_INIT;
  va_list arguments;
  va_start(arguments, info);
  CURLcode code = function(easy, info, va_arg(arguments, void*));
  va_end(arguments);
  return code;
}

const char* curl_easy_strerror(CURLcode code) {
  auto function = TOOLVFS_CURL(curl_easy_strerror);
  return function != nullptr ? function(code) : toolvfs::Curl().error_text();
}

void curl_easy_cleanup(CURL* easy) {
  if (auto function = TOOLVFS_CURL(curl_easy_cleanup)) function(easy);
}

curl_slist* curl_slist_append(curl_slist* list, const char* text) {
  auto function = TOOLVFS_CURL(curl_slist_append);
  return function != nullptr ? function(list, text) : nullptr;
}

void curl_slist_free_all(curl_slist* list) {
  if (auto function = TOOLVFS_CURL(curl_slist_free_all)) function(list);
}

}  // extern "C"
#pragma GCC visibility pop
