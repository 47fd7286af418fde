#include "authorizer_svc/server/authorizer_server.h"

#include <utility>

#include "absl/status/status.h"
#include "authorizer_svc/client/local_authorizer_client.h"

namespace sharedos::authorizer::server {

AuthorizerServer::AuthorizerServer(AuthorizerServerDeps deps, AuthorizerServerOptions options)
    : grantstore_(std::move(deps.grantstore)),
      audit_(std::move(deps.audit)),
      authenticator_(deps.authenticator),
      core_(*grantstore_, *audit_, deps.clock, std::move(options.lease_secret), options.core),
      service_(core_, authenticator_) {}

std::unique_ptr<client::AuthorizerClient> AuthorizerServer::NewInProcessClient() {
  return std::make_unique<client::LocalAuthorizerClient>(core_);
}

absl::StatusOr<std::unique_ptr<AuthorizerServer>> BuildAuthorizerServer(
    AuthorizerServerDeps deps, AuthorizerServerOptions options) {
  if (options.lease_secret.size() < 32) {
    return absl::InvalidArgumentError("--lease_secret_file: shorter than 32 bytes");
  }
  const absl::Duration timeout = options.core.default_lease_timeout;
  if (timeout <= absl::ZeroDuration() || timeout > options.core.max_lease_timeout) {
    return absl::InvalidArgumentError("--default_lease_timeout: must be positive and at most 630s");
  }
  return std::make_unique<AuthorizerServer>(std::move(deps), std::move(options));
}

}  // namespace sharedos::authorizer::server
