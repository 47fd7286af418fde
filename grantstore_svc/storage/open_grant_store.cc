#include "grantstore_svc/storage/open_grant_store.h"

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "common/postgres/uri.h"
#include "common/status/status_macros.h"

namespace sharedos::grantstore::storage {

absl::StatusOr<GrantStoreBackend> GrantStoreBackendFor(absl::string_view db) {
  ASSIGN_OR_RETURN(const bool postgres, common::postgres::IsPostgresUri(db));
  return postgres ? GrantStoreBackend::kPostgres : GrantStoreBackend::kSqlite;
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
