#include "grantstore_svc/storage/open_grant_store.h"

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/status/status_macros.h"

namespace sharedos::grantstore::storage {

absl::StatusOr<GrantStoreBackend> GrantStoreBackendFor(absl::string_view db) {
  // libpq accepts exactly these two prefixes, lower case.
  if (absl::StartsWith(db, "postgresql://") || absl::StartsWith(db, "postgres://")) {
    return GrantStoreBackend::kPostgres;
  }
  const size_t scheme_end = db.find("://");
  if (scheme_end != absl::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("--db: unsupported URI scheme \"", db.substr(0, scheme_end),
                     "\"; use a SQLite path or a postgres:// or postgresql:// URI"));
  }
  return GrantStoreBackend::kSqlite;
}

absl::StatusOr<std::unique_ptr<GrantStore>> OpenGrantStore(absl::string_view db,
                                                           const GrantStoreOptions& options,
                                                           const common::Clock& clock) {
  ASSIGN_OR_RETURN(const GrantStoreBackend backend, GrantStoreBackendFor(db));
  if (backend == GrantStoreBackend::kPostgres) {
    PostgresGrantStore::Options postgres = options.postgres;
    postgres.uri = std::string(db);
    ASSIGN_OR_RETURN(std::unique_ptr<PostgresGrantStore> store,
                     PostgresGrantStore::Open(postgres, clock));
    return std::unique_ptr<GrantStore>(std::move(store));
  }
  SqliteGrantStore::Options sqlite = options.sqlite;
  sqlite.path = std::string(db);
  ASSIGN_OR_RETURN(std::unique_ptr<SqliteGrantStore> store, SqliteGrantStore::Open(sqlite, clock));
  return std::unique_ptr<GrantStore>(std::move(store));
}

}  // namespace sharedos::grantstore::storage
