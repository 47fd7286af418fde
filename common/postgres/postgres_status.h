// The mapping from PostgreSQL errors (SQLSTATE codes, libpq connection failures) to
// absl::Status, shared by every PostgreSQL user:
//
//   no SQLSTATE (the connection failed or broke) -> UNAVAILABLE
//   class 08 (connection exception),
//   57P01-57P05 (server shutting down, crashed,
//     not accepting connections yet, idle timeouts),
//   class 53 (disk full, out of memory,
//     too many connections),
//   class 58 (I/O error),
//   25006 (read-only transaction: a standby),
//   55P03 (lock_not_available: lock_timeout),
//   57014 (query_canceled: statement_timeout)   -> UNAVAILABLE (retry later or elsewhere)
//   40001 (serialization_failure),
//   40P01 (deadlock_detected)                   -> ABORTED (retry the whole transaction)
//   23505 (unique_violation)                    -> ALREADY_EXISTS
//   any other class 23 (NOT NULL, CHECK,
//     foreign key, exclusion)                   -> FAILED_PRECONDITION
//   class 22 (data exception: bad encoding,
//     NUL in text, out of range)                -> INVALID_ARGUMENT
//   everything else (syntax, undefined table,
//     in_failed_sql_transaction, XX000)         -> INTERNAL
//
// Messages carry the server's primary message and the SQLSTATE, never its DETAIL (which can
// quote key values) and never the connection string (which can hold a password).

#ifndef SHAREDOS_COMMON_POSTGRES_POSTGRES_STATUS_H_
#define SHAREDOS_COMMON_POSTGRES_POSTGRES_STATUS_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace sharedos::common::postgres {

// The canonical code for a five-character SQLSTATE; an empty or malformed one (libpq reports
// none when the connection itself failed) is UNAVAILABLE.
absl::StatusCode SqlStateToStatusCode(absl::string_view sqlstate);

// "<context>: <message> [SQLSTATE <code>]" with the code of SqlStateToStatusCode; without a
// SQLSTATE, "<context>: <message> [connection]". Trailing newlines of libpq's messages are
// dropped.
absl::Status PostgresError(absl::string_view sqlstate, absl::string_view context,
                           absl::string_view message);

}  // namespace sharedos::common::postgres

#endif  // SHAREDOS_COMMON_POSTGRES_POSTGRES_STATUS_H_
