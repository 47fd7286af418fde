// Picks the grant store backend for a `--db` value, so that every main opens its store with
// one call: a postgres:// or postgresql:// URI opens PostgresGrantStore, anything else is a
// SQLite path (or ":memory:") and opens SqliteGrantStore, as before.

#ifndef SHAREDOS_GRANTSTORE_SVC_STORAGE_OPEN_GRANT_STORE_H_
#define SHAREDOS_GRANTSTORE_SVC_STORAGE_OPEN_GRANT_STORE_H_

#include <memory>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/time/clock.h"
#include "grantstore_svc/storage/grant_store.h"
#include "grantstore_svc/storage/postgres_grant_store.h"
#include "grantstore_svc/storage/sqlite_grant_store.h"

namespace sharedos::grantstore::storage {

// Backend settings; each backend reads only its own. The `path` and `uri` fields are ignored:
// the location is OpenGrantStore's `db`.
struct GrantStoreOptions {
  SqliteGrantStore::Options sqlite;
  PostgresGrantStore::Options postgres;
};

enum class GrantStoreBackend { kSqlite, kPostgres };

// Which backend `db` names. Errors: INVALID_ARGUMENT for a URI of another scheme
// ("mysql://...", "Postgres://..."), which would otherwise become an oddly named SQLite file.
absl::StatusOr<GrantStoreBackend> GrantStoreBackendFor(absl::string_view db);

// Opens (creating and migrating) the store `db` names. Errors: INVALID_ARGUMENT (as
// GrantStoreBackendFor); otherwise those of SqliteGrantStore::Open or PostgresGrantStore::Open
// (UNAVAILABLE, FAILED_PRECONDITION for a newer schema, INTERNAL). Messages never repeat a
// PostgreSQL URI (it may hold a password).
absl::StatusOr<std::unique_ptr<GrantStore>> OpenGrantStore(
    absl::string_view db, const GrantStoreOptions& options = {},
    const common::Clock& clock = common::RealClock());

}  // namespace sharedos::grantstore::storage

#endif  // SHAREDOS_GRANTSTORE_SVC_STORAGE_OPEN_GRANT_STORE_H_
