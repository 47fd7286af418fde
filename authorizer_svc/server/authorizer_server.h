// authorizer_svc built from its options: the AuthorizerCore (leases, decisions) and the gRPC
// adapter, owned together with the injected grantstore client and audit writer.
// authorizer_main.cc and sharedosd both call BuildAuthorizerServer; sharedosd's envelope decides
// through the same core without a channel (NewInProcessClient). Thread-safe (its parts are).

#ifndef SHAREDOS_AUTHORIZER_SVC_SERVER_AUTHORIZER_SERVER_H_
#define SHAREDOS_AUTHORIZER_SVC_SERVER_AUTHORIZER_SERVER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "audit_svc/client/audit_writer.h"
#include "authorizer_svc/client/authorizer_client.h"
#include "authorizer_svc/core/authorizer_core.h"
#include "authorizer_svc/server/authorizer_service.h"
#include "common/server/auth.h"
#include "common/server/service_main.h"
#include "common/time/clock.h"
#include "grantstore_svc/client/grant_store_client.h"

namespace sharedos::authorizer::server {

struct AuthorizerServerOptions {
  // The key of the lease id MAC: at least 32 bytes, the same on every replica.
  std::string lease_secret;
  core::AuthorizerCore::Options core;
};

// What the server is given: `grantstore` and `audit` it owns; the others it borrows, and each
// must outlive it.
struct AuthorizerServerDeps {
  std::unique_ptr<grantstore::client::GrantStoreClient> grantstore;
  std::unique_ptr<audit::client::AuditWriter> audit;
  const common::server::Authenticator& authenticator;
  const common::Clock& clock;
};

class AuthorizerServer final : public common::server::Servable {
 public:
  AuthorizerServer(AuthorizerServerDeps deps, AuthorizerServerOptions options);

  std::vector<grpc::Service*> services() override { return {&service_}; }

  // Another adapter over the same core, for a second server (sharedosd's public listener).
  std::unique_ptr<grpc::Service> NewService() {
    return std::make_unique<AuthorizerService>(core_, authenticator_);
  }

  // An AuthorizerClient calling this core in-process (no channel, no credential check): for an
  // envelope in the same process (sharedosd). Borrows this server, which must outlive it.
  std::unique_ptr<client::AuthorizerClient> NewInProcessClient();

 private:
  const std::unique_ptr<grantstore::client::GrantStoreClient> grantstore_;
  const std::unique_ptr<audit::client::AuditWriter> audit_;
  const common::server::Authenticator& authenticator_;
  core::AuthorizerCore core_;
  AuthorizerService service_;
};

// Errors: INVALID_ARGUMENT "--default_lease_timeout: must be positive and at most 630s" (the
// core's max_lease_timeout); "--lease_secret_file: shorter than 32 bytes".
absl::StatusOr<std::unique_ptr<AuthorizerServer>> BuildAuthorizerServer(
    AuthorizerServerDeps deps, AuthorizerServerOptions options);

}  // namespace sharedos::authorizer::server

#endif  // SHAREDOS_AUTHORIZER_SVC_SERVER_AUTHORIZER_SERVER_H_
