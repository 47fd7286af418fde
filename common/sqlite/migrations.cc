#include "common/sqlite/migrations.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "common/sqlite/database.h"
#include "common/sqlite/transaction.h"
#include "common/status/status_macros.h"
#include "common/time/clock.h"
#include "common/time/rfc3339.h"

namespace sharedos::common::sqlite {
namespace {

constexpr char kCreateTable[] =
    "CREATE TABLE IF NOT EXISTS schema_migrations ("
    "version INTEGER PRIMARY KEY, applied_at TEXT)";

absl::Status ValidateMigrations(absl::Span<const Migration> migrations) {
  int previous = 0;
  for (const Migration& migration : migrations) {
    if (migration.version <= previous) {
      return absl::InvalidArgumentError(
          absl::StrCat("migration versions must be positive and strictly increasing; got ",
                       migration.version, " after ", previous));
    }
    previous = migration.version;
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> TableExists(Database& db) {
  ASSIGN_OR_RETURN(Statement query, db.Cached("SELECT 1 FROM sqlite_master WHERE type = 'table' "
                                              "AND name = 'schema_migrations'"));
  return query.Step();
}

absl::StatusOr<std::vector<int64_t>> AppliedVersions(Database& db) {
  ASSIGN_OR_RETURN(Statement query, db.Cached("SELECT version FROM schema_migrations "
                                              "ORDER BY version"));
  std::vector<int64_t> versions;
  while (true) {
    ASSIGN_OR_RETURN(const bool has_row, query.Step());
    if (!has_row) break;
    versions.push_back(query.ColumnInt64(0));
  }
  return versions;
}

// The recorded versions must be exactly the first versions of `migrations`.
absl::Status CheckApplied(const std::vector<int64_t>& applied,
                          absl::Span<const Migration> migrations) {
  const int64_t latest_known = migrations.empty() ? 0 : migrations.back().version;
  if (!applied.empty() && applied.back() > latest_known) {
    return absl::FailedPreconditionError(
        absl::StrCat("database schema version ", applied.back(),
                     " is newer than the latest version this binary knows (", latest_known,
                     "); refusing to use it"));
  }
  for (size_t i = 0; i < applied.size(); ++i) {
    if (applied[i] != migrations[i].version) {
      return absl::FailedPreconditionError(absl::StrCat(
          "database schema records version ", applied[i], " where version ", migrations[i].version,
          " was expected; the schema history does not "
          "match this binary's migrations"));
    }
  }
  return absl::OkStatus();
}

bool IsApplied(const std::vector<int64_t>& applied, int version) {
  return std::binary_search(applied.begin(), applied.end(), version);
}

absl::Status ApplyOne(Database& db, const Migration& migration,
                      absl::Span<const Migration> migrations, const Clock& clock) {
  ASSIGN_OR_RETURN(Transaction transaction, Transaction::Begin(db, Transaction::Mode::kImmediate));
  // Another process may have migrated while we waited for the write lock.
  ASSIGN_OR_RETURN(const std::vector<int64_t> applied, AppliedVersions(db));
  RETURN_IF_ERROR(CheckApplied(applied, migrations));
  if (IsApplied(applied, migration.version)) return transaction.Rollback();

  const absl::Status applied_status = db.Exec(migration.sql);
  if (!applied_status.ok()) {
    return absl::Status(applied_status.code(), absl::StrCat("schema migration ", migration.version,
                                                            ": ", applied_status.message()));
  }
  ASSIGN_OR_RETURN(Statement record, db.Cached("INSERT INTO schema_migrations (version, "
                                               "applied_at) VALUES (?, ?)"));
  RETURN_IF_ERROR(record.BindInt64(1, migration.version));
  RETURN_IF_ERROR(record.BindText(2, FormatRfc3339(clock.Now())));
  RETURN_IF_ERROR(record.Step().status());
  return transaction.Commit();
}

}  // namespace

absl::Status Migrate(Database& db, absl::Span<const Migration> migrations, const Clock& clock) {
  RETURN_IF_ERROR(ValidateMigrations(migrations));
  RETURN_IF_ERROR(db.Exec(kCreateTable));
  ASSIGN_OR_RETURN(const std::vector<int64_t> applied, AppliedVersions(db));
  RETURN_IF_ERROR(CheckApplied(applied, migrations));
  for (const Migration& migration : migrations) {
    if (IsApplied(applied, migration.version)) continue;
    RETURN_IF_ERROR(ApplyOne(db, migration, migrations, clock));
  }
  return absl::OkStatus();
}

absl::StatusOr<int> SchemaVersion(Database& db) {
  ASSIGN_OR_RETURN(const bool exists, TableExists(db));
  if (!exists) return 0;
  ASSIGN_OR_RETURN(Statement query, db.Cached("SELECT COALESCE(MAX(version), 0) FROM "
                                              "schema_migrations"));
  ASSIGN_OR_RETURN(const bool has_row, query.Step());
  if (!has_row) return 0;
  return static_cast<int>(query.ColumnInt64(0));
}

}  // namespace sharedos::common::sqlite
