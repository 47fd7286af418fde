#include "common/postgres/migrations.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "common/postgres/connection.h"
#include "common/postgres/transaction.h"
#include "common/status/status_macros.h"
#include "common/time/clock.h"
#include "common/time/rfc3339.h"

namespace sharedos::common::postgres {
namespace {

// The table name is spliced into SQL (identifiers cannot be bound), so only plain lower-case
// identifiers are accepted.
absl::Status ValidateTable(absl::string_view table) {
  bool ok =
      !table.empty() && table.size() <= 63 && (absl::ascii_islower(table[0]) || table[0] == '_');
  for (const char c : table) {
    ok = ok && (absl::ascii_islower(c) || absl::ascii_isdigit(c) || c == '_');
  }
  if (!ok) {
    return absl::InvalidArgumentError(absl::StrCat(
        "migration history table must be a lower-case identifier, got \"", table, "\""));
  }
  return absl::OkStatus();
}

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

absl::StatusOr<std::vector<int64_t>> AppliedVersions(Connection& conn, absl::string_view table) {
  ASSIGN_OR_RETURN(Result result,
                   conn.Exec(absl::StrCat("SELECT version FROM ", table, " ORDER BY version")));
  std::vector<int64_t> versions;
  for (int row = 0; row < result.rows(); ++row) versions.push_back(result.Int64(row, 0));
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
          " was expected; the schema history does not match this binary's "
          "migrations"));
    }
  }
  return absl::OkStatus();
}

// One step under the advisory lock: checks the history and applies the first missing
// migration. Returns whether one was applied (false: the schema is up to date).
absl::StatusOr<bool> ApplyNext(Connection& conn, absl::string_view table,
                               absl::Span<const Migration> migrations, const Clock& clock) {
  ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(conn));
  const Param name[] = {Param::Text(table)};
  RETURN_IF_ERROR(conn.Exec("SELECT pg_advisory_xact_lock(hashtext($1))", name).status());
  RETURN_IF_ERROR(conn.ExecScript(absl::StrCat("CREATE TABLE IF NOT EXISTS ", table,
                                               " (version INTEGER PRIMARY KEY, "
                                               "applied_at TEXT NOT NULL)")));
  ASSIGN_OR_RETURN(const std::vector<int64_t> applied, AppliedVersions(conn, table));
  RETURN_IF_ERROR(CheckApplied(applied, migrations));
  if (applied.size() == migrations.size()) {
    RETURN_IF_ERROR(txn.Commit());  // Keeps a history table created just now.
    return false;
  }
  const Migration& next = migrations[applied.size()];
  const absl::Status status = conn.ExecScript(next.sql);
  if (!status.ok()) {
    return absl::Status(status.code(),
                        absl::StrCat("schema migration ", next.version, ": ", status.message()));
  }
  const Param row[] = {Param::Int64(next.version), Param::Text(FormatRfc3339(clock.Now()))};
  RETURN_IF_ERROR(
      conn.Exec(absl::StrCat("INSERT INTO ", table, " (version, applied_at) VALUES ($1, $2)"), row)
          .status());
  RETURN_IF_ERROR(txn.Commit());
  return true;
}

}  // namespace

absl::Status Migrate(Connection& conn, absl::string_view history_table,
                     absl::Span<const Migration> migrations, const Clock& clock) {
  RETURN_IF_ERROR(ValidateTable(history_table));
  RETURN_IF_ERROR(ValidateMigrations(migrations));
  while (true) {
    ASSIGN_OR_RETURN(const bool applied, ApplyNext(conn, history_table, migrations, clock));
    if (!applied) return absl::OkStatus();
  }
}

absl::StatusOr<int> SchemaVersion(Connection& conn, absl::string_view history_table) {
  RETURN_IF_ERROR(ValidateTable(history_table));
  const Param name[] = {Param::Text(history_table)};
  ASSIGN_OR_RETURN(Result exists, conn.Exec("SELECT to_regclass($1) IS NOT NULL", name));
  if (exists.rows() != 1 || !exists.Bool(0, 0)) return 0;
  ASSIGN_OR_RETURN(
      Result result,
      conn.Exec(absl::StrCat("SELECT COALESCE(MAX(version), 0)::bigint FROM ", history_table)));
  if (result.rows() != 1) return 0;
  return static_cast<int>(result.Int64(0, 0));
}

}  // namespace sharedos::common::postgres
