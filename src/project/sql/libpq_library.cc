#include "project/sql/libpq_library.h"

#include <libpq-fe.h>

#include "core/lazy_library.h"
#include "project/content/nettle_library.h"

namespace toolvfs {
namespace {

// Every libpq function the engine calls (postgres_database.cc).
#define TOOLVFS_LIBPQ_FUNCTIONS(X)                                                                                  \
  X(PQclear)                                                                                                        \
  X(PQconnectdbParams)                                                                                              \
  X(PQdescribePrepared)                                                                                             \
  X(PQenterPipelineMode)                                                                                            \
  X(PQerrorMessage)                                                                                                 \
  X(PQexec)                                                                                                         \
  X(PQexecParams)                                                                                                   \
  X(PQexecPrepared)                                                                                                 \
  X(PQexitPipelineMode)                                                                                             \
  X(PQfformat)                                                                                                      \
  X(PQfinish)                                                                                                       \
  X(PQfreemem)                                                                                                      \
  X(PQftype)                                                                                                        \
  X(PQgetResult)                                                                                                    \
  X(PQgetisnull)                                                                                                    \
  X(PQgetlength)                                                                                                    \
  X(PQgetvalue)                                                                                                     \
  X(PQnfields)                                                                                                      \
  X(PQntuples)                                                                                                      \
  X(PQpipelineStatus)                                                                                               \
  X(PQpipelineSync)                                                                                                 \
  X(PQprepare)                                                                                                      \
  X(PQresultErrorField)                                                                                             \
  X(PQresultErrorMessage)                                                                                           \
  X(PQresultStatus)                                                                                                 \
  X(PQsendDescribePrepared)                                                                                         \
  X(PQsendPrepare)                                                                                                  \
  X(PQsendQueryParams)                                                                                              \
  X(PQsendQueryPrepared)                                                                                            \
  X(PQsetNoticeProcessor)                                                                                           \
  X(PQsocket)                                                                                                       \
  X(PQstatus)                                                                                                       \
  X(PQtransactionStatus)                                                                                            \
  X(PQunescapeBytea)

TOOLVFS_LAZY_FUNCTIONS(TOOLVFS_LIBPQ_FUNCTIONS);

LazyLibrary& Libpq() {
  static LazyLibrary library(TOOLVFS_LIBPQ_FILE, "PostgreSQL stores", "libpq5", kLazySymbols);
  return library;
}

}  // namespace

Status LoadLibpq() {
  TOOLVFS_RETURN_IF_ERROR(Libpq().Load());
  return LoadNettle();  // the store's content hashes (nettle_library.h)
}

}  // namespace toolvfs

// libpq's own function `name`, or nullptr when the library cannot be loaded.
#define TOOLVFS_LIBPQ(name) TOOLVFS_LAZY_ADDRESS(toolvfs::Libpq(), name)

// The forwarding functions, with libpq-fe.h's declarations (so a signature
// that differs does not compile). Hidden: libtoolvfs.so must not offer them
// to an embedder that links libpq itself. Without the library each answers
// as libpq does for a missing connection or result: nothing to free, no
// rows, a fatal status, the load error as the message.
#pragma GCC visibility push(hidden)
extern "C" {

void PQclear(PGresult* result) {
  if (auto function = TOOLVFS_LIBPQ(PQclear)) function(result);
}

PGconn* PQconnectdbParams(const char* const* keywords, const char* const* values, int expand_dbname) {
  auto function = TOOLVFS_LIBPQ(PQconnectdbParams);
  return function != nullptr ? function(keywords, values, expand_dbname) : nullptr;
}

char* PQerrorMessage(const PGconn* connection) {
  auto function = TOOLVFS_LIBPQ(PQerrorMessage);
  return function != nullptr ? function(connection) : const_cast<char*>(toolvfs::Libpq().error_text());
}

PGresult* PQexec(PGconn* connection, const char* query) {
  auto function = TOOLVFS_LIBPQ(PQexec);
  return function != nullptr ? function(connection, query) : nullptr;
}

PGresult* PQexecParams(PGconn* connection, const char* command, int count, const Oid* types,
                       const char* const* values, const int* lengths, const int* formats, int result_format) {
  auto function = TOOLVFS_LIBPQ(PQexecParams);
  return function != nullptr ? function(connection, command, count, types, values, lengths, formats, result_format)
                             : nullptr;
}

PGresult* PQexecPrepared(PGconn* connection, const char* statement, int count, const char* const* values,
                         const int* lengths, const int* formats, int result_format) {
  auto function = TOOLVFS_LIBPQ(PQexecPrepared);
  return function != nullptr ? function(connection, statement, count, values, lengths, formats, result_format)
                             : nullptr;
}

void PQfinish(PGconn* connection) {
  if (auto function = TOOLVFS_LIBPQ(PQfinish)) function(connection);
}

int PQenterPipelineMode(PGconn* connection) {
  auto function = TOOLVFS_LIBPQ(PQenterPipelineMode);
  return function != nullptr ? function(connection) : 0;
}

int PQexitPipelineMode(PGconn* connection) {
  auto function = TOOLVFS_LIBPQ(PQexitPipelineMode);
  return function != nullptr ? function(connection) : 0;
}

PGresult* PQgetResult(PGconn* connection) {
  auto function = TOOLVFS_LIBPQ(PQgetResult);
  return function != nullptr ? function(connection) : nullptr;
}

PGpipelineStatus PQpipelineStatus(const PGconn* connection) {
  auto function = TOOLVFS_LIBPQ(PQpipelineStatus);
  return function != nullptr ? function(connection) : PQ_PIPELINE_OFF;
}

int PQpipelineSync(PGconn* connection) {
  auto function = TOOLVFS_LIBPQ(PQpipelineSync);
  return function != nullptr ? function(connection) : 0;
}

int PQsendQueryParams(PGconn* connection, const char* command, int count, const Oid* types,
                      const char* const* values, const int* lengths, const int* formats, int result_format) {
  auto function = TOOLVFS_LIBPQ(PQsendQueryParams);
  return function != nullptr ? function(connection, command, count, types, values, lengths, formats, result_format)
                             : 0;
}

int PQsendQueryPrepared(PGconn* connection, const char* statement, int count, const char* const* values,
                        const int* lengths, const int* formats, int result_format) {
  auto function = TOOLVFS_LIBPQ(PQsendQueryPrepared);
  return function != nullptr ? function(connection, statement, count, values, lengths, formats, result_format) : 0;
}

void PQfreemem(void* memory) {
  if (auto function = TOOLVFS_LIBPQ(PQfreemem)) function(memory);
}

int PQgetisnull(const PGresult* result, int row, int column) {
  auto function = TOOLVFS_LIBPQ(PQgetisnull);
  return function != nullptr ? function(result, row, column) : 1;
}

int PQgetlength(const PGresult* result, int row, int column) {
  auto function = TOOLVFS_LIBPQ(PQgetlength);
  return function != nullptr ? function(result, row, column) : 0;
}

char* PQgetvalue(const PGresult* result, int row, int column) {
  auto function = TOOLVFS_LIBPQ(PQgetvalue);
  return function != nullptr ? function(result, row, column) : nullptr;
}

PGresult* PQdescribePrepared(PGconn* connection, const char* statement) {
  auto function = TOOLVFS_LIBPQ(PQdescribePrepared);
  return function != nullptr ? function(connection, statement) : nullptr;
}

int PQfformat(const PGresult* result, int column) {
  auto function = TOOLVFS_LIBPQ(PQfformat);
  return function != nullptr ? function(result, column) : 0;
}

Oid PQftype(const PGresult* result, int column) {
  auto function = TOOLVFS_LIBPQ(PQftype);
  return function != nullptr ? function(result, column) : 0;
}

int PQnfields(const PGresult* result) {
  auto function = TOOLVFS_LIBPQ(PQnfields);
  return function != nullptr ? function(result) : 0;
}

int PQsendDescribePrepared(PGconn* connection, const char* statement) {
  auto function = TOOLVFS_LIBPQ(PQsendDescribePrepared);
  return function != nullptr ? function(connection, statement) : 0;
}

int PQsendPrepare(PGconn* connection, const char* statement, const char* query, int count, const Oid* types) {
  auto function = TOOLVFS_LIBPQ(PQsendPrepare);
  return function != nullptr ? function(connection, statement, query, count, types) : 0;
}

int PQntuples(const PGresult* result) {
  auto function = TOOLVFS_LIBPQ(PQntuples);
  return function != nullptr ? function(result) : 0;
}

PGresult* PQprepare(PGconn* connection, const char* statement, const char* query, int count, const Oid* types) {
  auto function = TOOLVFS_LIBPQ(PQprepare);
  return function != nullptr ? function(connection, statement, query, count, types) : nullptr;
}

char* PQresultErrorField(const PGresult* result, int field) {
  auto function = TOOLVFS_LIBPQ(PQresultErrorField);
  return function != nullptr ? function(result, field) : nullptr;
}

char* PQresultErrorMessage(const PGresult* result) {
  auto function = TOOLVFS_LIBPQ(PQresultErrorMessage);
  return function != nullptr ? function(result) : const_cast<char*>(toolvfs::Libpq().error_text());
}

ExecStatusType PQresultStatus(const PGresult* result) {
  auto function = TOOLVFS_LIBPQ(PQresultStatus);
  return function != nullptr ? function(result) : PGRES_FATAL_ERROR;
}

PQnoticeProcessor PQsetNoticeProcessor(PGconn* connection, PQnoticeProcessor processor, void* argument) {
  auto function = TOOLVFS_LIBPQ(PQsetNoticeProcessor);
  return function != nullptr ? function(connection, processor, argument) : nullptr;
}

int PQsocket(const PGconn* connection) {
  auto function = TOOLVFS_LIBPQ(PQsocket);
  return function != nullptr ? function(connection) : -1;
}

ConnStatusType PQstatus(const PGconn* connection) {
  auto function = TOOLVFS_LIBPQ(PQstatus);
  return function != nullptr ? function(connection) : CONNECTION_BAD;
}

PGTransactionStatusType PQtransactionStatus(const PGconn* connection) {
  auto function = TOOLVFS_LIBPQ(PQtransactionStatus);
  return function != nullptr ? function(connection) : PQTRANS_UNKNOWN;
}

unsigned char* PQunescapeBytea(const unsigned char* text, size_t* length) {
  auto function = TOOLVFS_LIBPQ(PQunescapeBytea);
  return function != nullptr ? function(text, length) : nullptr;
}

}  // extern "C"
#pragma GCC visibility pop
