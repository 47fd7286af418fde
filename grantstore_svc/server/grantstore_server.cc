#include "grantstore_svc/server/grantstore_server.h"

#include <utility>

#include "common/status/status_macros.h"

namespace sharedos::grantstore::server {
namespace {

core::GrantStoreCore::Options CoreOptions(const GrantStoreServerDeps& deps) {
  core::GrantStoreCore::Options options;
  options.metrics = deps.metrics;
  options.identity_provider_configured = deps.identity_provider_configured;
  options.allow_reviewer_credentials_with_idp = deps.allow_reviewer_credentials_with_idp;
  return options;
}

}  // namespace

GrantStoreServer::GrantStoreServer(GrantStoreServerDeps deps,
                                   std::unique_ptr<storage::GrantStore> store)
    : audit_(std::move(deps.audit)),
      authenticator_(deps.authenticator),
      store_(std::move(store)),
      credentials_(*store_),
      core_(*store_, *audit_, deps.clock, CoreOptions(deps)),
      service_(core_, authenticator_) {
  authenticator_.AttachSource(&credentials_);
}

absl::StatusOr<std::unique_ptr<GrantStoreServer>> BuildGrantStoreServer(
    GrantStoreServerDeps deps, const GrantStoreServerOptions& options) {
  ASSIGN_OR_RETURN(auto store,
                   storage::OpenGrantStore(options.store.path, {options.store, options.postgres}));
  return std::make_unique<GrantStoreServer>(std::move(deps), std::move(store));
}

}  // namespace sharedos::grantstore::server
