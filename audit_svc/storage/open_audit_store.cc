#include "audit_svc/storage/open_audit_store.h"

#include <memory>
#include <string>
#include <utility>

#include "common/postgres/uri.h"
#include "common/status/status_macros.h"

namespace sharedos::audit::storage {

absl::StatusOr<AuditStoreBackend> AuditStoreBackendFor(absl::string_view db) {
  ASSIGN_OR_RETURN(const bool postgres, common::postgres::IsPostgresUri(db));
  return postgres ? AuditStoreBackend::kPostgres : AuditStoreBackend::kSqlite;
}

absl::StatusOr<std::unique_ptr<AuditStore>> OpenAuditStore(absl::string_view db,
                                                           const AuditStoreOptions& options,
                                                           const common::Clock& clock) {
  ASSIGN_OR_RETURN(const AuditStoreBackend backend, AuditStoreBackendFor(db));
  if (backend == AuditStoreBackend::kPostgres) {
    PostgresAuditStore::Options postgres = options.postgres;
    postgres.uri = std::string(db);
    postgres.durability = options.durability == SqliteAuditStore::Durability::kFull
                              ? PostgresAuditStore::Durability::kFull
                              : PostgresAuditStore::Durability::kNormal;
    ASSIGN_OR_RETURN(std::unique_ptr<PostgresAuditStore> store,
                     PostgresAuditStore::Open(postgres, clock));
    return std::unique_ptr<AuditStore>(std::move(store));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<SqliteAuditStore> store,
                   SqliteAuditStore::Open(std::string(db), {options.durability}));
  return std::unique_ptr<AuditStore>(std::move(store));
}

}  // namespace sharedos::audit::storage
