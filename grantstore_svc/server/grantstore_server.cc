#include "grantstore_svc/server/grantstore_server.h"

#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "common/logging/log.h"
#include "common/status/status_macros.h"

namespace sharedos::grantstore::server {
namespace {

core::GrantStoreCore::Options CoreOptions(const GrantStoreServerDeps& deps,
                                          core::RecordAnchor* anchor) {
  core::GrantStoreCore::Options options;
  options.metrics = deps.metrics;
  options.identity_provider_configured = deps.identity_provider_configured;
  options.allow_reviewer_credentials_with_idp = deps.allow_reviewer_credentials_with_idp;
  options.anchor = anchor;
  return options;
}

std::unique_ptr<core::RecordAnchor> NewAnchor(storage::GrantStore& store, core::AuditQuery query) {
  if (query == nullptr) return nullptr;
  auto anchor =
      std::make_unique<core::RecordAnchor>(store, core::ControlPlaneLog(std::move(query)));
  // The first comparison, before anything is served; one line either way.
  const absl::Status serving = anchor->Check();
  if (serving.ok()) {
    std::vector<common::logging::Field> fields = {
        {"state", "serving"}, {"revision", static_cast<long long>(anchor->store_revision())}};
    // Records of a change that did not commit before the process stopped.
    if (std::optional<int64_t> uncommitted = anchor->uncommitted_revision()) {
      fields.push_back({"uncommitted_revision", static_cast<long long>(*uncommitted)});
    }
    common::logging::Log(common::logging::Level::kInfo, "grantstore.anchor", "", fields);
  } else {
    common::logging::Log(
        common::logging::Level::kWarning, "grantstore.anchor", "",
        {{"state", anchor->state() == core::AnchorState::kBehind ? "behind_log" : "unchecked"},
         {"revision", static_cast<long long>(anchor->store_revision())},
         {"reason", std::string(serving.message())}});
  }
  return anchor;
}

}  // namespace

GrantStoreServer::GrantStoreServer(GrantStoreServerDeps deps,
                                   std::unique_ptr<storage::GrantStore> store)
    : audit_(std::move(deps.audit)),
      authenticator_(deps.authenticator),
      store_(std::move(store)),
      anchor_(NewAnchor(*store_, std::move(deps.audit_query))),
      credentials_(
          *store_, anchor_ == nullptr ? std::function<absl::Status()>()
                                      : [anchor = anchor_.get()] { return anchor->Serving(); }),
      core_(*store_, *audit_, deps.clock, CoreOptions(deps, anchor_.get())),
      service_(core_, authenticator_) {
  authenticator_.AttachSource(&credentials_);
}

std::vector<common::server::DependencyCheck> GrantStoreServer::AnchorDependencies() {
  if (anchor_ == nullptr) return {};
  core::RecordAnchor* anchor = anchor_.get();
  return {{"anchor",
           [anchor](absl::Duration) {
             const absl::Status serving = anchor->Serving();
             return serving.ok() ? serving : anchor->Check();
           },
           /*show_detail=*/true}};
}

absl::StatusOr<std::unique_ptr<GrantStoreServer>> BuildGrantStoreServer(
    GrantStoreServerDeps deps, const GrantStoreServerOptions& options) {
  ASSIGN_OR_RETURN(auto store,
                   storage::OpenGrantStore(options.store.path, {options.store, options.postgres}));
  return std::make_unique<GrantStoreServer>(std::move(deps), std::move(store));
}

}  // namespace sharedos::grantstore::server
