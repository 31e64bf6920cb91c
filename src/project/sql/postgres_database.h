// A thin RAII layer over libpq, the PostgreSQL twin of sqlite_database.h: a
// connection, a result that clears itself, parameters passed separately
// from the SQL (never spliced into it), and every failure turned into a
// Status in one place (PostgresStatus) with the server named without its
// password.
//
// Why libpq and not libpqxx: the layer is small, it maps SQLSTATE codes
// straight to our status codes, and it keeps exceptions out of the store.
//
// Threading: a connection is used by one thread at a time.
#pragma once

#include <libpq-fe.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "project/sql/postgres_uri.h"

namespace toolvfs {

// Whether SQLSTATE `state` says the transaction lost a race and may simply
// be run again: serialization_failure (40001) or deadlock_detected (40P01).
bool IsRetryableSqlState(std::string_view state);

// Whether SQLSTATE `state` says the server is going away or cannot take
// connections now (class 08, 57P01-57P03): Unavailable, not a fault of
// the request.
bool IsUnavailableSqlState(std::string_view state);

// The Status for a connection that could not be opened, from libpq's
// message: PermissionDenied for a wrong password, NotFound for a missing
// database, Unavailable for the rest (refused, unreachable, timed out,
// starting up). "Cannot connect to <display>: <message>".
Status ConnectionFailure(std::string_view display, std::string_view message);

// The Status for a failed result or connection, "<what>: <server message>".
// Disk full (53100) and out of memory (53200) ResourceExhausted; too many
// connections (53300) ResourceExhausted; insufficient privilege (42501) and
// read-only transactions (25006) PermissionDenied; the server going away
// (IsUnavailableSqlState) Unavailable; query canceled (57014)
// Cancelled; retryable conflicts (IsRetryableSqlState) Changed, so a caller
// can run the transaction again; integrity and syntax errors Internal (they
// are bugs of ours); the rest Io. A connection lost without a SQLSTATE
// (Execute on a dead connection) is Unavailable too.
Status PostgresStatus(std::string_view sql_state, std::string_view what, std::string_view message);

// A parameter of a statement: text, bytes (sent in binary, for bytea), or
// NULL.
class PostgresParameter {
 public:
  static PostgresParameter Text(std::string_view text) { return PostgresParameter(text, false, false); }
  static PostgresParameter Bytes(std::string_view bytes) { return PostgresParameter(bytes, true, false); }
  static PostgresParameter Integer(int64_t value);
  static PostgresParameter Null() { return PostgresParameter({}, false, true); }

  std::string_view value() const { return owned_ ? std::string_view(*owned_) : value_; }
  bool binary() const { return binary_; }
  bool null() const { return null_; }

 private:
  PostgresParameter(std::string_view value, bool binary, bool null) : value_(value), binary_(binary), null_(null) {}
  std::string_view value_;
  std::shared_ptr<std::string> owned_;  // for values made here (integers)
  bool binary_;
  bool null_;
};

// The rows of a statement; owns the PGresult. A result comes in the text
// format, or in the binary one when its statement was prepared with
// binary results (PostgresConnection::Prepare: bytea alongside integers
// and text only); each reader below takes either.
class PostgresResult {
 public:
  explicit PostgresResult(PGresult* result) : result_(result) {}

  int rows() const { return PQntuples(result_.get()); }
  bool IsNull(int row, int column) const { return PQgetisnull(result_.get(), row, column) != 0; }
  // Whether `column` came in the binary format.
  bool IsBinary(int column) const { return PQfformat(result_.get(), column) == 1; }
  // A text column's bytes (the same in both formats).
  std::string_view Text(int row, int column) const;
  // An integer column (smallint, integer, bigint in binary; any integer's
  // text otherwise).
  int64_t Int(int row, int column) const;
  std::optional<int64_t> OptionalInt(int row, int column) const;
  // The bytes of a bytea column: as they came in the binary format, decoded
  // from the text format's hex.
  std::string Bytes(int row, int column) const;
  // For describing a statement's columns (libpq's PQnfields, PQftype).
  PGresult* raw() const { return result_.get(); }

 private:
  struct Clear {
    void operator()(PGresult* result) const { PQclear(result); }
  };
  std::unique_ptr<PGresult, Clear> result_;
};

class PostgresConnection {
 public:
  static constexpr int kDefaultConnectTimeoutSeconds = 5;

  // Connects with any conninfo string or URI libpq accepts (PG* environment
  // variables honoured). `display` names the server in every message and
  // must not hold a password (RedactPostgresUri). Connecting gives up after
  // kDefaultConnectTimeoutSeconds unless `conninfo` (connect_timeout=) or
  // PGCONNECT_TIMEOUT sets another bound.
  static Result<std::unique_ptr<PostgresConnection>> Open(const std::string& conninfo, std::string display);
  PostgresConnection(const PostgresConnection&) = delete;
  PostgresConnection& operator=(const PostgresConnection&) = delete;
  ~PostgresConnection();

  // Runs `sql` with `parameters` ($1, $2, ...).
  Result<PostgresResult> Execute(const char* sql, const std::vector<PostgresParameter>& parameters = {});

  // Runs one or more statements without parameters (the schema), in the
  // simple query protocol, which takes several at once.
  Status ExecuteScript(const std::string& sql);

  // Prepared statements, kept for the connection's life and named after
  // `key` (a string literal: its address is the key). Prepare once, then
  // ExecutePrepared as often as needed; `values`, `lengths` and `formats`
  // as PQexecPrepared takes them (text parameters NUL-terminated, binary
  // ones with their length). A statement that returns bytea with only
  // integers and text beside it is answered in the binary format (Prepare
  // describes it in the same round trip); RunPipeline asks for text always.
  bool IsPrepared(const char* key) const { return prepared_.contains(key); }
  Status Prepare(const char* key, const std::string& sql);
  Result<PostgresResult> ExecutePrepared(const char* key, int count, const char* const* values, const int* lengths,
                                         const int* formats);

  // One statement of RunPipeline: the prepared statement `key` (Prepare)
  // with its parameters as ExecutePrepared takes them, or, with `key`
  // nullptr, `sql` without parameters (BEGIN, COMMIT).
  struct PipelineStep {
    const char* key = nullptr;
    const char* sql = nullptr;
    std::vector<PostgresParameter> parameters;
  };
  // Sends every step and one sync at once (libpq's pipeline mode: one
  // round trip for all of them), then reads their answers: the rows of
  // each step, or the first failure as Execute reports it (last_sql_state()
  // set). The server skips the steps after a failure up to the sync, so a
  // transaction a step began stays open, failed, for the caller to roll
  // back. Each `key` must be prepared.
  Result<std::vector<PostgresResult>> RunPipeline(const std::vector<PipelineStep>& steps);

  // Whether an idle connection is still there: false when the server
  // closed it (a restart, a terminated backend, an idle timeout) since it
  // was last used, which shows as its goodbye or the end of the stream
  // waiting on the socket (anything waiting counts). Costs one poll(2), no
  // round trip.
  bool StillConnected();

  const std::string& display() const { return display_; }
  // Whether the connection can take the next operation: still connected
  // and not inside a transaction (an operation that ended half-way leaves
  // one open). A pool drops a connection that cannot.
  bool reusable() const {
    return PQstatus(connection_) == CONNECTION_OK && PQtransactionStatus(connection_) == PQTRANS_IDLE &&
           PQpipelineStatus(connection_) == PQ_PIPELINE_OFF;
  }
  // The BEGIN of a store's write transaction: plain BEGIN, so the
  // connection's default_transaction_isolation (URI options, PGOPTIONS,
  // the server's setting), except REPEATABLE READ, which is raised to
  // SERIALIZABLE. At REPEATABLE READ a workspace-wide change (snapshot,
  // restore, recursive delete, rename, gc) takes its snapshot in the
  // statement that waits for the workspace row FOR UPDATE; writers only
  // hold that row FOR SHARE and never update it, so nothing ends the change
  // with 40001 and it acts on a state that misses every write committed
  // while it waited (a file left live in a deleted directory). READ
  // COMMITTED reads afresh after the wait, SERIALIZABLE detects the overlap;
  // raising keeps every guarantee asked for (docs/stores.md, "Isolation").
  const char* begin_write() const { return begin_write_; }
  // The SQLSTATE of the last failed Execute ("" after a success or a
  // failure without one); what RunPostgresTransaction decides retries by.
  const std::string& last_sql_state() const { return last_sql_state_; }

 private:
  PostgresConnection(PGconn* connection, std::string display)
      : connection_(connection), display_(std::move(display)) {}
  // libpq's parameter arrays for `parameters`; `texts` holds the
  // NUL-terminated copies of text values and must outlive the arrays' use.
  struct ParameterArrays {
    std::vector<std::string> texts;
    std::vector<const char*> values;
    std::vector<int> lengths;
    std::vector<int> formats;
  };
  static void FillParameters(const std::vector<PostgresParameter>& parameters, ParameterArrays& arrays);
  // The answer of a statement: `raw` itself on success, else the error as
  // PostgresStatus maps it (Unavailable for a lost connection); records
  // last_sql_state().
  Result<PostgresResult> Finish(PGresult* raw);
  // Runs in pipeline mode, one round trip, what `queue` queues (false: a
  // part could not be queued, the connection is gone): `parts` parts, each
  // answering with one result. `answers` gets each part's result, none for
  // a part that failed or that the server skipped after a failure; returns
  // the first failure (RunPipeline, Prepare).
  Status Pipeline(const std::function<bool()>& queue, size_t parts,
                  std::vector<std::optional<PostgresResult>>& answers);
  // Unavailable: the connection is gone, `message` saying how (libpq's).
  Status LostConnection(std::string_view message) const;
  // Whether a prepared statement, by its describe, takes binary results
  // (Prepare).
  static bool BinaryResultsFit(const PostgresResult& described);

  PGconn* connection_;
  std::string display_;
  const char* begin_write_ = "BEGIN";
  std::string last_sql_state_;
  struct PreparedStatement {
    std::string name;
    int result_format = 0;  // 1: binary (Prepare)
  };
  std::map<const char*, PreparedStatement> prepared_;  // key -> statement
};

enum class PostgresIsolation {
  kStoreWrite,  // PostgresConnection::begin_write(): the connection's default level, REPEATABLE READ raised
  kReadCommitted,
  kSerializable,
};

// The pauses between runs of something that lost a race: each a random
// one of up to `first`, the bound doubling per pause up to `max` (random
// so that the losers do not meet again).
class PostgresBackoff {
 public:
  PostgresBackoff(std::chrono::milliseconds first, std::chrono::milliseconds max) : next_(first), max_(max) {}
  void Pause();

 private:
  std::chrono::milliseconds next_;
  std::chrono::milliseconds max_;
};

// How often a transaction that lost a race is run again, and how long to
// wait in between: a random pause of up to first_backoff, doubling per
// attempt up to max_backoff (random so that the losers do not meet again).
struct PostgresRetryPolicy {
  int max_attempts = 10;
  std::chrono::milliseconds first_backoff{2};
  std::chrono::milliseconds max_backoff{250};
  // Whether a unique violation (23505) is a lost race too: for bodies that
  // insert a row only after looking it up in the same transaction, where a
  // duplicate means a concurrent transaction inserted it in between
  // (READ COMMITTED sees it on the next run).
  bool retry_unique_violations = false;
};

// How many transactions RunPostgresTransaction ran again in this process
// since it started (every isolation, every database), by what ended them:
// how tests see that conflicts happened and were retried.
struct PostgresRetryCounts {
  uint64_t serialization_failures = 0;  // 40001
  uint64_t deadlocks = 0;               // 40P01
  uint64_t unique_violations = 0;       // 23505, with retry_unique_violations
};
PostgresRetryCounts PostgresRetriedTransactions();

// Runs `body` in one transaction at `isolation`: commits when it returns OK,
// rolls back otherwise. When the server ends the transaction with a
// serialization failure or a deadlock (IsRetryableSqlState, in `body` or at
// COMMIT; with policy.retry_unique_violations also 23505), rolls back,
// waits, and runs `body` again, up to
// policy.max_attempts runs in all; then returns Changed naming the number
// of attempts and the server's last message. `body` must have no effect
// outside the transaction, since it may run more than once. `attempts`, if
// given, receives the number of runs.
Status RunPostgresTransaction(PostgresConnection& connection, PostgresIsolation isolation,
                              const std::function<Status(PostgresConnection&)>& body,
                              const PostgresRetryPolicy& policy = {}, int* attempts = nullptr);

}  // namespace toolvfs
