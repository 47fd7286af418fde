// RAII wrappers for a libpq connection (Connection) and its results (Result). Every PGconn* and
// PGresult* is owned by a std::unique_ptr whose deleter is the only place that finishes or
// clears it. Statements take typed parameters (Param), sent in binary with explicit lengths, so
// no value is ever spliced into SQL text and text is never cut at a NUL byte; results come back
// in binary too.
//
// Errors follow common/postgres/postgres_status.h (connection loss -> UNAVAILABLE, duplicate
// keys -> ALREADY_EXISTS, serialization failures -> ABORTED, ...); messages never contain bound
// values or the connection string.

#ifndef SHAREDOS_COMMON_POSTGRES_CONNECTION_H_
#define SHAREDOS_COMMON_POSTGRES_CONNECTION_H_

#include <libpq-fe.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"

namespace sharedos::common::postgres {

namespace internal {

struct ConnectionDeleter {
  void operator()(PGconn* conn) const;
};
struct ResultDeleter {
  void operator()(PGresult* result) const;
};
using ConnectionHandle = std::unique_ptr<PGconn, ConnectionDeleter>;
using ResultHandle = std::unique_ptr<PGresult, ResultDeleter>;

}  // namespace internal

// One statement parameter: a typed value or a typed NULL. Copyable; holds its own bytes.
class Param {
 public:
  enum class Type { kInt64, kBool, kText, kBytes, kInt64Array, kTextArray };

  static Param Int64(int64_t value);
  static Param Bool(bool value);
  // UTF-8 text (the server rejects a NUL byte or invalid UTF-8 with INVALID_ARGUMENT).
  static Param Text(absl::string_view value);
  // Arbitrary bytes, for a bytea column.
  static Param Bytes(absl::string_view value);
  static Param Null(Type type);
  // Text, or a text NULL when absent.
  static Param OptionalText(const std::optional<std::string>& value);
  // One-dimensional arrays (bigint[], text[]; an absent element is NULL), for `= ANY($1)` or
  // `unnest($1, $2, ...)`: a statement whose text does not grow with the number of values it
  // carries can be prepared once (Connection::ExecPrepared).
  static Param Int64Array(absl::Span<const std::optional<int64_t>> values);
  static Param TextArray(absl::Span<const absl::string_view> values);

  Type type() const { return type_; }
  bool is_null() const { return is_null_; }
  // The binary wire form (empty for NULL).
  const std::string& wire() const { return wire_; }
  // The PostgreSQL type OID the parameter is declared as.
  Oid oid() const;

 private:
  Param(Type type, bool is_null, std::string wire)
      : type_(type), is_null_(is_null), wire_(std::move(wire)) {}

  Type type_;
  bool is_null_;
  std::string wire_;
};

// The rows of one statement, in binary format. Move-only; not thread-safe. Row and column
// indexes are 0-based; views stay valid while the Result lives.
class Result {
 public:
  Result(Result&&) noexcept = default;
  Result& operator=(Result&&) noexcept = default;

  int rows() const;
  int columns() const;
  bool IsNull(int row, int column) const;
  // A smallint, integer, bigint or boolean column (0 for NULL or any other type).
  int64_t Int64(int row, int column) const;
  // A boolean column (false for NULL).
  bool Bool(int row, int column) const;
  // The raw bytes of a text or bytea column (empty for NULL).
  absl::string_view Bytes(int row, int column) const;
  // Rows inserted, updated or deleted (PQcmdTuples; 0 for other statements).
  int64_t affected_rows() const;

 private:
  friend class Connection;
  explicit Result(internal::ResultHandle result) : result_(std::move(result)) {}

  internal::ResultHandle result_;
};

// One libpq connection. Not thread-safe: one owner at a time (a pool hands connections out).
// A connection that broke (server stopped, network cut) stays broken: every later call fails
// with UNAVAILABLE and healthy() is false; open a new one.
class Connection {
 public:
  struct Options {
    // Bound on establishing the connection (libpq's connect_timeout, whole seconds, >= 2 as
    // libpq requires).
    absl::Duration connect_timeout = absl::Seconds(5);
    // Reported in pg_stat_activity.
    std::string application_name = "sharedos";
  };

  // Connects to `conninfo`: a postgres:// or postgresql:// URI, or key=value pairs. Settings in
  // `conninfo` win over `options`. Errors: UNAVAILABLE (unreachable, refused, authentication
  // failed, timeout) with libpq's message (which names host and port, never the password).
  static absl::StatusOr<std::unique_ptr<Connection>> Open(absl::string_view conninfo,
                                                          const Options& options);
  static absl::StatusOr<std::unique_ptr<Connection>> Open(absl::string_view conninfo);

  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  ~Connection();

  // Runs exactly one statement with `params` bound to $1, $2, ... Errors: as the file comment;
  // INVALID_ARGUMENT for more than 65535 parameters.
  absl::StatusOr<Result> Exec(absl::string_view sql, absl::Span<const Param> params = {});

  // Exec of a statement prepared on this connection under `name`: the first call with `name`
  // prepares `sql` (PQprepare, the parameters' types declared from `params`), every call runs it
  // (PQexecPrepared), so the server parses and plans it once per connection, not once per call.
  // Every call with one name must pass the same `sql` and parameter types. A statement stays
  // prepared across transactions (a rollback does not unprepare it) until the connection closes.
  // Errors: as Exec.
  absl::StatusOr<Result> ExecPrepared(absl::string_view name, absl::string_view sql,
                                      absl::Span<const Param> params = {});

  // Runs one or more `;`-separated statements without parameters (DDL, BEGIN/COMMIT). Outside
  // a transaction block they run as one implicit transaction. Never interpolate values.
  absl::Status ExecScript(absl::string_view sql);

  // Whether the connection is still usable: not broken, and the server has not closed it
  // (checked without blocking, by reading whatever the socket already holds). A connection
  // cut without the server's FIN is only detected by the next statement.
  bool healthy();

  // Whether a transaction block is open (including one aborted by an error).
  bool InTransaction() const;

  // The underlying connection, for libpq APIs not wrapped here. Never finish it.
  PGconn* handle() const { return conn_.get(); }

 private:
  explicit Connection(internal::ConnectionHandle conn) : conn_(std::move(conn)) {}
  absl::Status Error(const PGresult* result, absl::string_view sql) const;

  // The result of a statement just run, or its error.
  absl::StatusOr<Result> Check(internal::ResultHandle result, absl::string_view sql) const;

  internal::ConnectionHandle conn_;
  // The names ExecPrepared has prepared on this connection.
  absl::flat_hash_set<std::string> prepared_;
};

}  // namespace sharedos::common::postgres

#endif  // SHAREDOS_COMMON_POSTGRES_CONNECTION_H_
