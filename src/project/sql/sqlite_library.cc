// libsqlite3, opened on first use (core/lazy_library.h; docs/install.md,
// "Libraries loaded on first use").
//
// toolvfs is not linked to libsqlite3: this file defines the sqlite3_*
// functions the SQLite engine calls (sqlite_database.cc), each forwarding to
// the library opened with dlopen the first time one is called, so that a
// process that never opens a sqlite: store (a `toolvfs mcp` serving a
// directory) does not load it. A sqlite3_* function added to the engine
// must be added here (the link fails until it is).
//
// Without the library (or without nettle, which the store's content hashes
// need: nettle_library.h) each function fails as SQLite does when it cannot
// open a database: sqlite3_open_v2 gives no handle and SQLITE_CANTOPEN, and
// sqlite3_errmsg/sqlite3_errstr give the load error (naming the file and
// the reason), which the engine reports as the reason the store cannot be
// opened. Statements cannot exist without a handle, so the others are
// never reached then; they answer as for a missing object.
#include <sqlite3.h>

#include <atomic>
#include <iterator>

#include "core/lazy_library.h"
#include "project/content/nettle_library.h"

namespace toolvfs {
namespace {

#define TOOLVFS_SQLITE_FUNCTIONS(X) \
  X(sqlite3_bind_blob64)            \
  X(sqlite3_bind_int64)             \
  X(sqlite3_bind_null)              \
  X(sqlite3_bind_text64)            \
  X(sqlite3_busy_handler)           \
  X(sqlite3_clear_bindings)         \
  X(sqlite3_close_v2)               \
  X(sqlite3_column_blob)            \
  X(sqlite3_column_bytes)           \
  X(sqlite3_column_int64)           \
  X(sqlite3_column_text)            \
  X(sqlite3_column_type)            \
  X(sqlite3_errmsg)                 \
  X(sqlite3_errstr)                 \
  X(sqlite3_exec)                   \
  X(sqlite3_extended_errcode)       \
  X(sqlite3_extended_result_codes)  \
  X(sqlite3_filename_database)      \
  X(sqlite3_finalize)               \
  X(sqlite3_free)                   \
  X(sqlite3_get_autocommit)         \
  X(sqlite3_malloc64)               \
  X(sqlite3_open_v2)                \
  X(sqlite3_prepare_v3)             \
  X(sqlite3_reset)                  \
  X(sqlite3_step)                   \
  X(sqlite3_vfs_find)               \
  X(sqlite3_vfs_register)

TOOLVFS_LAZY_FUNCTIONS(TOOLVFS_SQLITE_FUNCTIONS);

// Out of line: the construction of the static is code that every
// forwarding function below would otherwise inline, with the stack frame
// it needs (six registers saved and restored on every sqlite3_step).
[[gnu::noinline]] LazyLibrary& Sqlite() {
  static LazyLibrary library(TOOLVFS_SQLITE_FILE, "sqlite: stores", "libsqlite3-0", kLazySymbols);
  return library;
}

// SQLite's functions once the library has loaded (sqlite_loaded true),
// copied out of the LazyLibrary so that a call needs no check of its own.
constinit void* sqlite_addresses[std::size(kLazySymbols)] = {};
constinit std::atomic<bool> sqlite_loaded{false};

[[gnu::noinline, gnu::cold]] void* SqliteAddressFirstTime(size_t index) {
  static const bool loaded = [] {
    LazyLibrary& library = Sqlite();
    if (!library.Load().ok()) return false;
    for (size_t function = 0; function < std::size(kLazySymbols); ++function) {
      sqlite_addresses[function] = library.Address(function);
    }
    sqlite_loaded.store(true, std::memory_order_release);
    return true;
  }();
  return loaded ? sqlite_addresses[index] : nullptr;
}

// The address of function `index`, or nullptr when the library cannot be
// loaded. Every sqlite3_* call below starts here, a few per listed row:
// once loaded, a flag, a load and a jump to SQLite's function.
[[gnu::always_inline]] inline void* SqliteAddress(size_t index) {
  return sqlite_loaded.load(std::memory_order_acquire) ? sqlite_addresses[index] : SqliteAddressFirstTime(index);
}

// Why no database can be opened: SQLite missing, or nettle, which the
// store needs for its content hashes (nettle_library.h); "" when both load.
const char* OpenFailure() {
  if (!Sqlite().Load().ok()) return Sqlite().error_text();
  const Status& nettle = LoadNettle();
  return nettle.ok() ? "" : nettle.message().c_str();
}

}  // namespace
}  // namespace toolvfs

// SQLite's own function `name`, or nullptr when the library cannot be loaded.
#define TOOLVFS_SQLITE(name) reinterpret_cast<decltype(&::name)>(toolvfs::SqliteAddress(toolvfs::k_##name))

// Hidden: libtoolvfs.so must not offer these to an embedder that links
// libsqlite3 itself.
#pragma GCC visibility push(hidden)
extern "C" {

int sqlite3_open_v2(const char* file_name, sqlite3** database, int flags, const char* vfs) {
  auto function = TOOLVFS_SQLITE(sqlite3_open_v2);
  if (function != nullptr && toolvfs::OpenFailure()[0] == '\0') return function(file_name, database, flags, vfs);
  *database = nullptr;
  return SQLITE_CANTOPEN;
}

const char* sqlite3_errmsg(sqlite3* database) {
  auto function = TOOLVFS_SQLITE(sqlite3_errmsg);
  return function != nullptr && database != nullptr ? function(database) : toolvfs::OpenFailure();
}

const char* sqlite3_errstr(int code) {
  auto function = TOOLVFS_SQLITE(sqlite3_errstr);
  const char* failure = toolvfs::OpenFailure();
  return function != nullptr && failure[0] == '\0' ? function(code) : failure;
}

int sqlite3_bind_blob64(sqlite3_stmt* statement, int index, const void* bytes, sqlite3_uint64 size,
                        void (*destructor)(void*)) {
  auto function = TOOLVFS_SQLITE(sqlite3_bind_blob64);
  return function != nullptr ? function(statement, index, bytes, size, destructor) : SQLITE_MISUSE;
}

int sqlite3_bind_int64(sqlite3_stmt* statement, int index, sqlite3_int64 value) {
  auto function = TOOLVFS_SQLITE(sqlite3_bind_int64);
  return function != nullptr ? function(statement, index, value) : SQLITE_MISUSE;
}

int sqlite3_bind_null(sqlite3_stmt* statement, int index) {
  auto function = TOOLVFS_SQLITE(sqlite3_bind_null);
  return function != nullptr ? function(statement, index) : SQLITE_MISUSE;
}

int sqlite3_bind_text64(sqlite3_stmt* statement, int index, const char* text, sqlite3_uint64 size,
                        void (*destructor)(void*), unsigned char encoding) {
  auto function = TOOLVFS_SQLITE(sqlite3_bind_text64);
  return function != nullptr ? function(statement, index, text, size, destructor, encoding) : SQLITE_MISUSE;
}

int sqlite3_busy_handler(sqlite3* database, int (*handler)(void*, int), void* argument) {
  auto function = TOOLVFS_SQLITE(sqlite3_busy_handler);
  return function != nullptr ? function(database, handler, argument) : SQLITE_MISUSE;
}

int sqlite3_clear_bindings(sqlite3_stmt* statement) {
  auto function = TOOLVFS_SQLITE(sqlite3_clear_bindings);
  return function != nullptr ? function(statement) : SQLITE_MISUSE;
}

int sqlite3_close_v2(sqlite3* database) {
  auto function = TOOLVFS_SQLITE(sqlite3_close_v2);
  return function != nullptr ? function(database) : SQLITE_OK;  // nothing was opened
}

const void* sqlite3_column_blob(sqlite3_stmt* statement, int column) {
  auto function = TOOLVFS_SQLITE(sqlite3_column_blob);
  return function != nullptr ? function(statement, column) : nullptr;
}

int sqlite3_column_bytes(sqlite3_stmt* statement, int column) {
  auto function = TOOLVFS_SQLITE(sqlite3_column_bytes);
  return function != nullptr ? function(statement, column) : 0;
}

sqlite3_int64 sqlite3_column_int64(sqlite3_stmt* statement, int column) {
  auto function = TOOLVFS_SQLITE(sqlite3_column_int64);
  return function != nullptr ? function(statement, column) : 0;
}

const unsigned char* sqlite3_column_text(sqlite3_stmt* statement, int column) {
  auto function = TOOLVFS_SQLITE(sqlite3_column_text);
  return function != nullptr ? function(statement, column) : nullptr;
}

int sqlite3_column_type(sqlite3_stmt* statement, int column) {
  auto function = TOOLVFS_SQLITE(sqlite3_column_type);
  return function != nullptr ? function(statement, column) : SQLITE_NULL;
}

int sqlite3_exec(sqlite3* database, const char* sql, int (*callback)(void*, int, char**, char**), void* argument,
                 char** error_message) {
  auto function = TOOLVFS_SQLITE(sqlite3_exec);
  if (function != nullptr) return function(database, sql, callback, argument, error_message);
  if (error_message != nullptr) *error_message = nullptr;
  return SQLITE_MISUSE;
}

int sqlite3_extended_errcode(sqlite3* database) {
  auto function = TOOLVFS_SQLITE(sqlite3_extended_errcode);
  return function != nullptr ? function(database) : SQLITE_CANTOPEN;
}

int sqlite3_extended_result_codes(sqlite3* database, int on) {
  auto function = TOOLVFS_SQLITE(sqlite3_extended_result_codes);
  return function != nullptr ? function(database, on) : SQLITE_MISUSE;
}

int sqlite3_finalize(sqlite3_stmt* statement) {
  auto function = TOOLVFS_SQLITE(sqlite3_finalize);
  return function != nullptr ? function(statement) : SQLITE_OK;  // no statement exists
}

const char* sqlite3_filename_database(const char* file_name) {
  auto function = TOOLVFS_SQLITE(sqlite3_filename_database);
  return function != nullptr ? function(file_name) : nullptr;
}

sqlite3_vfs* sqlite3_vfs_find(const char* name) {
  auto function = TOOLVFS_SQLITE(sqlite3_vfs_find);
  return function != nullptr && toolvfs::OpenFailure()[0] == '\0' ? function(name) : nullptr;
}

int sqlite3_vfs_register(sqlite3_vfs* vfs, int make_default) {
  auto function = TOOLVFS_SQLITE(sqlite3_vfs_register);
  return function != nullptr ? function(vfs, make_default) : SQLITE_MISUSE;
}

void sqlite3_free(void* memory) {
  if (auto function = TOOLVFS_SQLITE(sqlite3_free)) function(memory);
}

void* sqlite3_malloc64(sqlite3_uint64 size) {
  auto function = TOOLVFS_SQLITE(sqlite3_malloc64);
  return function != nullptr ? function(size) : nullptr;
}

int sqlite3_get_autocommit(sqlite3* database) {
  auto function = TOOLVFS_SQLITE(sqlite3_get_autocommit);
  return function != nullptr ? function(database) : 1;
}

int sqlite3_prepare_v3(sqlite3* database, const char* sql, int size, unsigned int flags, sqlite3_stmt** statement,
                       const char** tail) {
  auto function = TOOLVFS_SQLITE(sqlite3_prepare_v3);
  if (function != nullptr) return function(database, sql, size, flags, statement, tail);
  *statement = nullptr;
  return SQLITE_MISUSE;
}

int sqlite3_reset(sqlite3_stmt* statement) {
  auto function = TOOLVFS_SQLITE(sqlite3_reset);
  return function != nullptr ? function(statement) : SQLITE_OK;
}

int sqlite3_step(sqlite3_stmt* statement) {
  auto function = TOOLVFS_SQLITE(sqlite3_step);
  return function != nullptr ? function(statement) : SQLITE_MISUSE;
}

}  // extern "C"
#pragma GCC visibility pop
