// Picks the audit log's backend for a `--db` value (common/postgres/uri.h), so that every main
// opens its log with one call: a postgres:// or postgresql:// URI opens PostgresAuditStore
// (several audit_svc replicas may share it), anything else is a SQLite file and opens
// SqliteAuditStore, as before (the embedded default).

#ifndef SHAREDOS_AUDIT_SVC_STORAGE_OPEN_AUDIT_STORE_H_
#define SHAREDOS_AUDIT_SVC_STORAGE_OPEN_AUDIT_STORE_H_

#include <memory>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "audit_svc/storage/audit_store.h"
#include "audit_svc/storage/postgres_audit_store.h"
#include "audit_svc/storage/sqlite_audit_store.h"
#include "common/time/clock.h"

namespace sharedos::audit::storage {

// Backend settings. `durability` applies to either backend (kFull: each group commit is
// durable on disk before Append returns -- SQLite synchronous=FULL, PostgreSQL
// synchronous_commit=on; kNormal: SQLite synchronous=NORMAL, PostgreSQL synchronous_commit=off).
// The rest is read by its own backend only; `postgres.uri` and `postgres.durability` are
// ignored (the location is OpenAuditStore's `db`).
struct AuditStoreOptions {
  SqliteAuditStore::Durability durability = SqliteAuditStore::Durability::kFull;
  PostgresAuditStore::Options postgres;
};

enum class AuditStoreBackend { kSqlite, kPostgres };

// Which backend `db` names. Errors: INVALID_ARGUMENT for a URI of another scheme.
absl::StatusOr<AuditStoreBackend> AuditStoreBackendFor(absl::string_view db);

// Opens (creating and migrating) the log `db` names. Errors: INVALID_ARGUMENT (as
// AuditStoreBackendFor); otherwise those of SqliteAuditStore::Open or PostgresAuditStore::Open
// (UNAVAILABLE, FAILED_PRECONDITION for a newer schema, INTERNAL). Messages never repeat a
// PostgreSQL URI (it may hold a password).
absl::StatusOr<std::unique_ptr<AuditStore>> OpenAuditStore(
    absl::string_view db, const AuditStoreOptions& options = {},
    const common::Clock& clock = common::RealClock());

}  // namespace sharedos::audit::storage

#endif  // SHAREDOS_AUDIT_SVC_STORAGE_OPEN_AUDIT_STORE_H_
