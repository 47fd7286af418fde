// Versioned schema migrations for a SQLite database, recorded in
// `schema_migrations(version INTEGER PRIMARY KEY, applied_at TEXT)`.

#ifndef SHAREDOS_COMMON_SQLITE_MIGRATIONS_H_
#define SHAREDOS_COMMON_SQLITE_MIGRATIONS_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "common/sqlite/database.h"
#include "common/time/clock.h"

namespace sharedos::common::sqlite {

// One schema step. `sql` may hold several statements; it runs inside a
// transaction, so it must not contain BEGIN/COMMIT, VACUUM or journal_mode
// changes.
struct Migration {
  int version;
  std::string sql;
};

// Brings `db` up to the last of `migrations` (versions positive, strictly
// increasing): every migration not yet recorded runs in its own IMMEDIATE
// transaction together with its `schema_migrations` row (applied_at = RFC 3339
// of clock.Now()), in order. Idempotent, and safe against concurrent migrators
// (each step re-checks under the write lock). A failed step leaves no trace;
// earlier steps stay applied. Errors: INVALID_ARGUMENT for a malformed
// `migrations` list; FAILED_PRECONDITION when the database records a version
// newer than the last one known here, or one not in `migrations`, or has a gap
// (so an older binary never runs against a newer schema); a failing migration's
// own error, prefixed with "schema migration <version>: ".
absl::Status Migrate(Database& db, absl::Span<const Migration> migrations,
                     const Clock& clock = RealClock());

// Returns the highest recorded migration version, or 0 when none (or no
// schema_migrations table) exists.
absl::StatusOr<int> SchemaVersion(Database& db);

}  // namespace sharedos::common::sqlite

#endif  // SHAREDOS_COMMON_SQLITE_MIGRATIONS_H_
