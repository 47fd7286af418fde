// Versioned schema migrations for a PostgreSQL database, the twin of common/sqlite/migrations:
// recorded in a history table `<history_table>(version INTEGER PRIMARY KEY, applied_at TEXT)`.
// Each store names its own history table, so that several stores may share one database.

#ifndef SHAREDOS_COMMON_POSTGRES_MIGRATIONS_H_
#define SHAREDOS_COMMON_POSTGRES_MIGRATIONS_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "common/postgres/connection.h"
#include "common/time/clock.h"

namespace sharedos::common::postgres {

// One schema step. `sql` may hold several statements; it runs inside a transaction (DDL is
// transactional in PostgreSQL), so it must not contain BEGIN/COMMIT or statements that cannot
// run in a transaction block (CREATE INDEX CONCURRENTLY, CREATE DATABASE, VACUUM).
struct Migration {
  int version;
  std::string sql;
};

// Brings the database up to the last of `migrations` (versions positive, strictly increasing):
// every migration not yet recorded in `history_table` runs in its own transaction together with
// its history row (applied_at = RFC 3339 of clock.Now()), in order. Each step holds a
// transaction-scoped advisory lock named after `history_table`, so concurrent migrators (replicas
// starting together) apply each step once. Idempotent. A failed step leaves no trace; earlier
// steps stay applied. Errors: INVALID_ARGUMENT for a malformed `migrations` list or a
// `history_table` that is not a lower-case identifier; FAILED_PRECONDITION when the database
// records a version newer than the last one known here (naming both), or one not in
// `migrations`, or has a gap (so an older binary never runs against a newer schema); a failing
// migration's own error, prefixed with "schema migration <version>: "; UNAVAILABLE.
absl::Status Migrate(Connection& conn, absl::string_view history_table,
                     absl::Span<const Migration> migrations, const Clock& clock = RealClock());

// The highest recorded version, or 0 when none (or no history table) exists.
absl::StatusOr<int> SchemaVersion(Connection& conn, absl::string_view history_table);

}  // namespace sharedos::common::postgres

#endif  // SHAREDOS_COMMON_POSTGRES_MIGRATIONS_H_
