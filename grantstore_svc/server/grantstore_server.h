// grantstore_svc built from its options: the store (SQLite or PostgreSQL, by --db), the
// GrantStoreCore over it and the gRPC adapter, owned together with the injected audit writer.
// grantstore_main.cc and sharedosd both call BuildGrantStoreServer. Thread-safe (its parts are).

#ifndef SHAREDOS_GRANTSTORE_SVC_SERVER_GRANTSTORE_SERVER_H_
#define SHAREDOS_GRANTSTORE_SVC_SERVER_GRANTSTORE_SERVER_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "audit_svc/client/audit_writer.h"
#include "common/metrics/metrics.h"
#include "common/server/auth.h"
#include "common/server/readiness.h"
#include "common/server/service_main.h"
#include "common/time/clock.h"
#include "grantstore_svc/core/credentials.h"
#include "grantstore_svc/core/grant_store_core.h"
#include "grantstore_svc/core/record_anchor.h"
#include "grantstore_svc/server/grantstore_service.h"
#include "grantstore_svc/storage/grant_store.h"
#include "grantstore_svc/storage/open_grant_store.h"
#include "grantstore_svc/storage/sqlite_grant_store.h"

namespace sharedos::grantstore::server {

struct GrantStoreServerOptions {
  // The store: `store.path` is the --db value (storage/open_grant_store.h), a SQLite file or a
  // postgres:// or postgresql:// URI. The rest of `store` tunes SQLite (usage-counter
  // durability, reader mmap), `postgres` tunes PostgreSQL (its `uri` is ignored).
  storage::SqliteGrantStore::Options store;
  storage::PostgresGrantStore::Options postgres;
};

// What the server is given: `audit` it owns (control-plane events are written through it); the
// others it borrows, and each must outlive it. The server attaches its store's credentials to
// `authenticator` (credentials issued through the control plane authenticate in this process).
struct GrantStoreServerDeps {
  std::unique_ptr<audit::client::AuditWriter> audit;
  common::server::Authenticator& authenticator;
  const common::Clock& clock;
  // sharedos_escalations_resolved_total goes here; null without --metrics_port. Borrowed.
  common::metrics::Metrics* metrics = nullptr;
  // An identity provider is configured (--oidc_config), and whether SharedOS reviewer credentials
  // for humans are still issued beside it (--allow_reviewer_credentials_with_idp, break-glass):
  // GrantStoreCore::Options (ADR 0020).
  bool identity_provider_configured = false;
  bool allow_reviewer_credentials_with_idp = false;
  // AuditLog.Query against the log the audit writer writes to: the store is compared with the
  // log's control-plane records at start and serves nothing while it is behind them
  // (core/record_anchor.h, docs/adr/0021). Null: no comparison (--audit=discard, tests).
  core::AuditQuery audit_query = nullptr;
};

class GrantStoreServer final : public common::server::Servable {
 public:
  GrantStoreServer(GrantStoreServerDeps deps, std::unique_ptr<storage::GrantStore> store);
  ~GrantStoreServer() override { authenticator_.AttachSource(nullptr); }

  std::vector<grpc::Service*> services() override { return {&service_}; }

  // Another adapter over the same core, for a second server (sharedosd's public listener).
  std::unique_ptr<grpc::Service> NewService() {
    return std::make_unique<GrantStoreService>(core_, authenticator_);
  }

  // The core itself, for what its own process seeds (sharedosd --demo).
  core::GrantStoreCore& core() { return core_; }

  // The comparison with the audit log; null without GrantStoreServerDeps::audit_query.
  core::RecordAnchor* anchor() { return anchor_.get(); }

  // The readiness check "anchor": down (its message the reason, shown by sharedosctl status)
  // while the store is behind the log or has not been compared with it; each probe compares
  // again until it serves (a replica whose peer accepted the restore serves from then on).
  // Empty without an anchor.
  std::vector<common::server::DependencyCheck> AnchorDependencies();

 private:
  const std::unique_ptr<audit::client::AuditWriter> audit_;
  common::server::Authenticator& authenticator_;
  const std::unique_ptr<storage::GrantStore> store_;
  const std::unique_ptr<core::RecordAnchor> anchor_;
  const core::StoreCredentialSource credentials_;
  core::GrantStoreCore core_;
  GrantStoreService service_;
};

// Errors: those of storage::OpenGrantStore (a URI of another scheme; the file or database cannot
// be opened or migrated, or its schema is newer than this binary's).
absl::StatusOr<std::unique_ptr<GrantStoreServer>> BuildGrantStoreServer(
    GrantStoreServerDeps deps, const GrantStoreServerOptions& options);

}  // namespace sharedos::grantstore::server

#endif  // SHAREDOS_GRANTSTORE_SVC_SERVER_GRANTSTORE_SERVER_H_
